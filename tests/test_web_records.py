"""The web table's records file is the truth (``play.web.records``, ``play.web.app.Store``):
several servers on one file show every client the same game and store each move once;
the file's schema version and its migration from version 1; files that cannot serve
refused at start in one line; damaged rows that make only their own game unavailable;
the seed kept back while a game is played; ``--port 0`` and bind errors."""

from __future__ import annotations

import argparse
import io
import json
import os
import random
import socket
import sqlite3
import subprocess
import sys
import threading
import time
import urllib.request
import warnings
from contextlib import closing
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("fastapi", reason="the web extra is not installed (pip install -e '.[web]')")
pytest.importorskip("httpx", reason="FastAPI's TestClient needs httpx")

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient

from play.web import cli as web_cli  # noqa: E402
from play.web import records as records_module  # noqa: E402
from play.web.app import create_app  # noqa: E402
from play.web.database import open_database  # noqa: E402
from play.web.records import SCHEMA_VERSION, RecordsError, replay_actions  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


def client_for(db) -> TestClient:
    return TestClient(create_app(db), raise_server_exceptions=False)


def ok(response, status: int = 200) -> dict:
    assert response.status_code == status, (response.status_code, response.text)
    return response.json()


def refused(response, status: int, *words: str) -> str:
    assert response.status_code == status, (response.status_code, response.text)
    assert response.headers["content-type"].startswith("application/json")
    message = response.json()["error"]
    assert message and "\n" not in message
    for word in words:
        assert word in message, (word, message)
    return message


def start(client, **body) -> dict:
    return ok(client.post("/api/games", json=body), 201)


def state_of(client, gid: str) -> dict:
    return ok(client.get(f"/api/games/{gid}"))["state"]


def legal_actions(state: dict) -> list[int]:
    return [m["action"] for m in state["legal"]]


def query(db, sql: str, *args):
    with closing(open_database(db).connect()) as conn:
        return [tuple(row) for row in conn.execute(sql, args).fetchall()]


def write(db, sql: str, *args) -> None:
    conn = sqlite3.connect(db, isolation_level=None)
    try:
        conn.execute(sql, args)
    finally:
        conn.close()


def long_game(client, **body) -> dict:
    """A 421 game (pot 15, heuristic bot) where the person has at least two moves ahead."""
    for seed in range(50):
        reply = start(client, game="421", bots="heuristic", seat=0, seed=seed, options={"pot": 15}, **body)
        if reply["state"]["waiting"] and len(legal_actions(reply["state"])) > 1:
            return reply
    raise AssertionError("no seed gives a game with a choice at the start")


# ----------------------------------------------------------------------------- one truth


def test_servers_opening_one_new_file_at_once_wait_for_each_other(tmp_path, monkeypatch):
    """Some of SQLite's locks say "database is locked" at once, without waiting: opening the
    records tries again for a while (the file is opened as if alone), then says so in one line."""
    from play.web.database import SQLiteFile

    real, failures = SQLiteFile.problems, []

    def locked_twice(self, conn):
        if len(failures) < 2:
            failures.append(1)
            raise sqlite3.OperationalError("database is locked")
        return real(self, conn)

    monkeypatch.setattr(SQLiteFile, "problems", locked_twice)
    records = records_module.Records(tmp_path / "r.sqlite3")
    assert len(failures) == 2 and query(tmp_path / "r.sqlite3", "PRAGMA journal_mode") == [("wal",)]
    del records
    failures.clear()
    monkeypatch.setattr(records_module.Records, "OPEN_PATIENCE", 0.0)
    with pytest.raises(RecordsError, match="database is locked"):
        records_module.Records(tmp_path / "r.sqlite3")


def test_two_servers_on_one_file_show_the_same_game_and_the_late_move_gets_409(records_db):
    db = records_db  # a SQLite file, then a PostgreSQL database
    a, b = client_for(db), client_for(db)
    reply = long_game(a)
    gid = reply["id"]
    assert state_of(b, gid) == state_of(a, gid)  # B rebuilds it from the file
    first, other = legal_actions(reply["state"])[:2]

    ok(a.post(f"/api/games/{gid}/moves", json={"action": first, "turn": 0}))
    assert state_of(b, gid) == state_of(a, gid)  # B catches up with A's move before serving it
    assert ok(b.get(f"/api/games/{gid}/coach"))["turn"] == 1
    # B's page still shows move 0: its move is refused, and the file keeps A's
    refused(b.post(f"/api/games/{gid}/moves", json={"action": other, "turn": 0}), 409, "out of turn")
    assert query(db, "SELECT turn, action FROM moves WHERE game_id = ?", gid) == [(0, first)]
    assert [m["action"] for m in ok(b.get(f"/api/records/{gid}"))["moves"]] == [first]
    assert state_of(a, gid) == state_of(b, gid)


def test_the_loser_of_two_moves_on_one_turn_gets_409_nothing_of_it_is_kept_and_it_is_rebuilt(records_db):
    db = records_db  # a SQLite file, then a PostgreSQL database
    a, b = client_for(db), client_for(db)
    reply = long_game(a)
    gid = reply["id"]
    first, other = legal_actions(reply["state"])[:2]
    assert state_of(b, gid)["turn"] == 0  # both servers hold the game at move 0 in memory

    store_b = b.app.state.store
    save = store_b.records.save_move

    def a_gets_in_first(web, turn):  # A stores move 0 after B played it in memory, before B stores it
        ok(a.post(f"/api/games/{gid}/moves", json={"action": first, "turn": 0}))
        return save(web, turn)

    store_b.records.save_move = a_gets_in_first
    message = refused(
        b.post(f"/api/games/{gid}/moves", json={"action": other, "turn": 0}),
        409,
        "played move 0 first",
        gid,
        "not played",
        "reload",
    )
    store_b.records.save_move = save
    assert "Traceback" not in message
    assert query(db, "SELECT turn, action FROM moves WHERE game_id = ?", gid) == [(0, first)]
    record = ok(a.get(f"/api/records/{gid}"))
    assert [a for s, a in record["actions"] if s == 0] == [first]
    # B's copy in memory is A's game now, without looking at the file again
    live = store_b.live[gid]
    assert [m["action"] for m in live.moves] == [first] and live.state() == state_of(a, gid)
    assert state_of(b, gid) == state_of(a, gid)


def test_of_many_servers_sending_one_turn_at_once_exactly_one_move_is_stored(records_db):
    db = records_db  # a SQLite file, then a PostgreSQL database
    servers = [client_for(db) for _ in range(4)]
    reply = long_game(servers[0])
    gid = reply["id"]
    choices = legal_actions(reply["state"])
    for s in servers:
        assert state_of(s, gid)["turn"] == 0
    barrier = threading.Barrier(len(servers))
    statuses: list[int] = []

    def send(n: int) -> None:
        barrier.wait()
        statuses.append(
            servers[n]
            .post(f"/api/games/{gid}/moves", json={"action": choices[n % len(choices)], "turn": 0})
            .status_code
        )

    threads = [threading.Thread(target=send, args=(n,)) for n in range(len(servers))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(statuses) == [200] + [409] * (len(servers) - 1)
    assert query(db, "SELECT COUNT(*) FROM moves WHERE game_id = ?", gid) == [(1,)]
    states = [state_of(s, gid) for s in servers]
    assert all(s == states[0] for s in states) and states[0]["turn"] == 1


def test_three_servers_taking_turns_play_one_game_every_client_sees_alike(records_db):
    db = records_db  # a SQLite file, then a PostgreSQL database
    servers = [client_for(db) for _ in range(3)]
    reply = start(servers[0], game="420", bots="greedy", seat=0, seed=21, player="ada")
    gid, state = reply["id"], reply["state"]
    rng = random.Random(0)
    n = 0
    while not state["over"]:
        server = servers[n % 3]
        action = rng.choice(legal_actions(state))
        state = ok(server.post(f"/api/games/{gid}/moves", json={"action": action, "turn": state["turn"]}))["state"]
        n += 1
        views = [state_of(s, gid) for s in servers]
        assert all(v == views[0] for v in views)
        assert {k: v for k, v in views[0].items() if k != "log"} == state
    assert n >= 2
    record = ok(servers[1].get(f"/api/records/{gid}"))
    assert record["status"] == "over" and len(record["moves"]) == n and replay_actions(record) == record["events"]
    assert query(db, "SELECT COUNT(*), MIN(turn), MAX(turn) FROM moves WHERE game_id = ?", gid) == [(n, 0, n - 1)]
    for s in servers:
        assert ok(s.get("/api/records", params={"player": "ada"}))["records"][0]["games"] == 1


def test_a_move_is_a_row_of_its_own_under_a_unique_game_and_turn(tmp_path):
    db = tmp_path / "records.sqlite3"
    client = client_for(db)
    reply = long_game(client)
    gid = reply["id"]
    action = legal_actions(reply["state"])[0]
    ok(client.post(f"/api/games/{gid}/moves", json={"action": action}))
    assert query(db, "SELECT value FROM meta WHERE key = 'schema'") == [(str(SCHEMA_VERSION),)] == [("3",)]
    assert query(db, "SELECT game_id, turn, action FROM moves") == [(gid, 0, action)]
    with pytest.raises(sqlite3.IntegrityError):
        write(db, "INSERT INTO moves (game_id, turn, action, played) VALUES (?, 0, ?, 0)", gid, action)
    assert "moves" not in {r[1] for r in query(db, "PRAGMA table_info(games)")}


# ----------------------------------------------------------------------------- version 1

V1_SCHEMA = [  # the file as the first version wrote it (the person's moves as a JSON column)
    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    """CREATE TABLE IF NOT EXISTS games (
        id TEXT PRIMARY KEY, player TEXT NOT NULL, game TEXT NOT NULL, players INTEGER NOT NULL,
        seat INTEGER NOT NULL, bots TEXT NOT NULL, opponents TEXT NOT NULL, options TEXT NOT NULL,
        seed INTEGER NOT NULL, status TEXT NOT NULL, started REAL NOT NULL, finished REAL, moves TEXT NOT NULL,
        actions TEXT NOT NULL, dice TEXT NOT NULL, seats_drawn TEXT NOT NULL, n_events INTEGER NOT NULL,
        events TEXT, outcome REAL, loser INTEGER)""",
    "CREATE INDEX IF NOT EXISTS games_by_player ON games (player, status, finished)",
]


def write_v1(path: Path, records: list[dict], damaged: dict | None = None) -> None:
    conn = sqlite3.connect(path, isolation_level=None)
    for statement in V1_SCHEMA:
        conn.execute(statement)
    conn.execute("INSERT INTO meta VALUES ('schema', '1')")
    for r in records:
        row = {
            k: r[k]
            for k in (
                "id",
                "player",
                "game",
                "players",
                "seat",
                "opponents",
                "seed",
                "status",
                "started",
                "finished",
                "n_events",
                "outcome",
                "loser",
            )
        }
        row.update(
            bots=json.dumps(r["bots"]),
            options=json.dumps(r["options"], sort_keys=True),
            moves=json.dumps(r["moves"]),
            actions=json.dumps(r["actions"]),
            dice=json.dumps(r["dice"]),
            seats_drawn=json.dumps(r["seats_drawn"]),
            events=None if r["events"] is None else json.dumps(r["events"]),
        )
        if damaged and r["id"] in damaged:
            row["moves"] = damaged[r["id"]]
        conn.execute(
            f"INSERT INTO games ({', '.join(row)}) VALUES ({', '.join('?' for _ in row)})", tuple(row.values())
        )
    conn.close()


def played_games(client) -> list[str]:
    """A finished game, one in progress after a move, one at its first move, one more (to damage)."""
    over = start(client, game="420", bots="greedy", seat=1, seed=8, player="ada")
    state, rng = over["state"], random.Random(1)
    while not state["over"]:
        state = ok(client.post(f"/api/games/{over['id']}/moves", json={"action": rng.choice(legal_actions(state))}))[
            "state"
        ]
    going = long_game(client, player="ada")
    ok(client.post(f"/api/games/{going['id']}/moves", json={"action": legal_actions(going["state"])[-1]}))
    fresh = start(client, game="pig", bots="hold20", seat=0, seed=3, player="bo")
    spoilt = start(client, game="420", bots="random", seat=0, seed=4, player="bo")
    return [over["id"], going["id"], fresh["id"], spoilt["id"]]


def test_a_version_1_file_is_migrated_keeping_every_game(tmp_path):
    source = client_for(tmp_path / "now.sqlite3")
    ids = played_games(source)
    store = source.app.state.store
    records = [store.records.get(gid) for gid in ids]
    before = {gid: state_of(source, gid) for gid in ids}
    old = tmp_path / "v1.sqlite3"
    write_v1(old, records, damaged={ids[3]: "[{'action': oops"})

    migrated = client_for(old)
    assert query(old, "SELECT value FROM meta WHERE key = 'schema'") == [("3",)]
    assert sorted(r[0] for r in query(old, "SELECT id FROM games")) == sorted(ids)  # every game kept
    assert query(old, "SELECT COUNT(*) FROM moves") == [(sum(len(r["moves"]) for r in records[:3]),)]
    for gid in ids[:3]:
        assert state_of(migrated, gid) == before[gid]
        assert ok(migrated.get(f"/api/records/{gid}")) == ok(source.get(f"/api/records/{gid}"))
    assert ok(migrated.get(f"/api/games/{ids[1]}/coach")) == ok(source.get(f"/api/games/{ids[1]}/coach"))
    for who in ("ada", "bo"):
        assert ok(migrated.get("/api/records", params={"player": who})) == ok(
            source.get("/api/records", params={"player": who})
        )
    # the row whose moves could not be read keeps them as they were; only its game is unavailable
    assert query(old, "SELECT legacy_moves FROM games WHERE id = ?", ids[3]) == [("[{'action': oops",)]
    refused(migrated.get(f"/api/games/{ids[3]}"), 409, ids[3], "version-1")
    # and the migrated games play on
    going = before[ids[1]]
    ok(migrated.post(f"/api/games/{ids[1]}/moves", json={"action": legal_actions(going)[0], "turn": going["turn"]}))
    client_for(old)  # opened again: already version 2, nothing to do


def test_a_migration_that_fails_half_way_leaves_the_version_1_file_as_it_was(tmp_path, monkeypatch):
    source = client_for(tmp_path / "now.sqlite3")
    ids = played_games(source)
    records = [source.app.state.store.records.get(gid) for gid in ids]
    old = tmp_path / "v1.sqlite3"
    write_v1(old, records)
    rows = query(old, "SELECT * FROM games ORDER BY id")
    calls = []

    def breaks_on_the_third(text):
        calls.append(text)
        if len(calls) == 3:
            raise RuntimeError("the power went out")
        return real(text)

    real = records_module._v1_moves
    monkeypatch.setattr(records_module, "_v1_moves", breaks_on_the_third)
    with pytest.raises(RuntimeError):
        create_app(old)
    assert len(calls) == 3
    assert query(old, "SELECT value FROM meta WHERE key = 'schema'") == [("1",)]
    assert query(old, "SELECT * FROM games ORDER BY id") == rows
    assert {r[0] for r in query(old, "SELECT name FROM sqlite_master WHERE type = 'table'")} == {"meta", "games"}
    monkeypatch.undo()
    assert state_of(client_for(old), ids[1])["turn"] == 1


# ----------------------------------------------------------------------------- files that cannot serve


def _records_with_games(path: Path) -> None:
    client = client_for(path)
    for seed in range(6):
        start(client, game="420", bots="greedy", seat=0, seed=seed, player="x" * 30)


def _bad_file(kind: str, tmp_path: Path) -> Path:
    path = tmp_path / "records.sqlite3"
    if kind == "truncated":
        _records_with_games(path)
        data = path.read_bytes()
        assert not Path(str(path) + "-wal").exists() and len(data) > 4 * 4096
        path.write_bytes(data[: len(data) // 2])
    elif kind == "header only":
        _records_with_games(path)
        path.write_bytes(path.read_bytes()[:60])
    elif kind == "garbage":
        path.write_bytes(bytes(random.Random(0).randrange(256) for _ in range(10000)))
    elif kind == "text":
        path.write_text("name,wins\nada,3\n")
    elif kind == "folder":
        path.mkdir()
    elif kind == "another app's":
        with sqlite3.connect(path) as conn:
            conn.execute("CREATE TABLE contacts (name TEXT, phone TEXT)")
    elif kind == "another app's meta":
        with sqlite3.connect(path) as conn:
            conn.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT)")
            conn.execute("CREATE TABLE games (id TEXT)")
            conn.execute("INSERT INTO meta VALUES ('owner', 'someone else')")
    elif kind == "unknown version":
        _records_with_games(path)
        write(path, "UPDATE meta SET value = '4' WHERE key = 'schema'")
    elif kind == "version 2 without moves":
        _records_with_games(path)
        write(path, "DROP TABLE moves")
    elif kind == "under a file":
        (tmp_path / "afile").write_text("x")
        path = tmp_path / "afile" / "records.sqlite3"
    elif kind == "unreachable":
        path = Path("/proc/dice-arena-records.sqlite3")
    return path


BAD = [
    "truncated",
    "header only",
    "garbage",
    "text",
    "folder",
    "another app's",
    "another app's meta",
    "unknown version",
    "version 2 without moves",
    "under a file",
    "unreachable",
]


@pytest.mark.parametrize("kind", BAD)
def test_a_records_file_that_cannot_serve_is_refused_at_start_in_one_line(kind, tmp_path):
    path = _bad_file(kind, tmp_path)
    before = path.read_bytes() if path.is_file() else None
    with pytest.raises(RecordsError) as caught:
        create_app(path)
    assert str(path) in str(caught.value) and "\n" not in str(caught.value)
    assert (path.read_bytes() if path.is_file() else None) == before  # a file refused is left as it was
    out, err = io.StringIO(), io.StringIO()
    code = web_cli.run(argparse.Namespace(host="127.0.0.1", port=0, db=str(path)), out, err)
    assert code == 2 and out.getvalue() == ""  # refused before any address is printed
    lines = err.getvalue().splitlines()
    assert len(lines) == 1 and str(path) in lines[0] and "--db" in lines[0], lines
    assert "Traceback" not in err.getvalue()


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write any file")
def test_a_records_file_that_cannot_be_written_is_refused_at_start(tmp_path):
    path = tmp_path / "records.sqlite3"
    _records_with_games(path)
    path.chmod(0o444)
    with pytest.raises(RecordsError, match="cannot be written"):
        create_app(path)


def test_the_command_refuses_a_damaged_file_with_exit_status_2_and_no_traceback(tmp_path):
    path = _bad_file("truncated", tmp_path)
    done = subprocess.run(
        [sys.executable, "-m", "play", "web", "--port", "0", "--db", str(path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2 and done.stdout == ""
    assert len(done.stderr.splitlines()) == 1 and "Traceback" not in done.stderr
    assert str(path) in done.stderr and "damaged" in done.stderr and "--db" in done.stderr


# ----------------------------------------------------------------------------- PostgreSQL


def test_a_postgresql_database_that_cannot_be_reached_is_one_line_without_its_password():
    pytest.importorskip("psycopg", reason="PostgreSQL records need psycopg (the postgres extra)")
    with socket.socket() as s:  # a port where nothing listens
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"postgresql://ada:s3cret-word@127.0.0.1:{port}/records"
    with pytest.raises(RecordsError) as caught:
        create_app(url)
    message = str(caught.value)
    assert "\n" not in message and "s3cret-word" not in message
    assert f"postgresql://ada@127.0.0.1:{port}/records" in message and "cannot be reached" in message
    out, err = io.StringIO(), io.StringIO()
    assert web_cli.run(argparse.Namespace(host="127.0.0.1", port=0, db=url, workers=1), out, err) == 2
    assert out.getvalue() == "" and len(err.getvalue().splitlines()) == 1
    assert "s3cret-word" not in err.getvalue() and "--db" in err.getvalue()


@pytest.mark.parametrize(
    "url",
    [
        "postgresql://ada:s3cret-word@[127.0.0.1/records",  # an unclosed '['
        "postgresql://ada:s3cret-word@127.0.0.1:port/records",
        "postgresql://ada:s3cret-word@127.0.0.1:99999/records",
        "POSTGRESQL://ada:s3cret-word@127.0.0.1:1/records",
        "postgresql://ada:s3cret-word@127.0.0.1:1/records?sslmode=bogus",
    ],
)
def test_a_postgresql_url_that_cannot_serve_is_one_line_without_its_password(url):
    pytest.importorskip("psycopg", reason="PostgreSQL records need psycopg (the postgres extra)")
    out, err = io.StringIO(), io.StringIO()
    assert web_cli.run(argparse.Namespace(host="127.0.0.1", port=0, db=url, workers=1), out, err) == 2
    lines = err.getvalue().splitlines()
    assert out.getvalue() == "" and len(lines) == 1, lines
    assert "s3cret-word" not in lines[0] and "--db" in lines[0] and "records database postgresql://" in lines[0]


def test_records_that_fail_while_serving_give_a_503_in_one_line(records_db, monkeypatch):
    """SQLite's or PostgreSQL's own error (a locked file, a server gone) is a 503, not a 500."""
    client = client_for(records_db)
    records = client.app.state.store.records
    failure = records.Error[0]

    def gone(*args, **kwargs):
        raise failure("the server closed the connection\nunexpectedly")

    monkeypatch.setattr(records, "summary", gone)
    message = refused(client.get("/api/records"), 503, "records cannot be used now", "try again")
    assert "closed the connection unexpectedly" in message


def test_a_postgresql_database_of_another_program_is_refused_and_left_as_it_was():
    from conftest import postgres_database

    for url in postgres_database():
        with closing(open_database(url).connect()) as conn:
            conn.execute("CREATE TABLE accounts (id INTEGER PRIMARY KEY, owner TEXT)")
            conn.execute("INSERT INTO accounts VALUES (1, 'ada')")
        with pytest.raises(RecordsError, match="is not a dice-arena records database") as caught:
            create_app(url)
        assert "accounts" in str(caught.value) and "\n" not in str(caught.value)
        assert query(url, "SELECT * FROM accounts") == [(1, "ada")]
        with closing(open_database(url).connect()) as conn:
            assert open_database(url).tables(conn) == {"accounts"}  # nothing created beside it


def test_postgresql_keeps_times_and_seeds_whole():
    """INTEGER is 64 bits and REAL a double there, as in SQLite: a seed up to 2**32 - 1 and a
    time in seconds come back as they were written."""
    from conftest import postgres_database

    for url in postgres_database():
        client = client_for(url)
        game = start(client, game="420", bots="greedy", seed=2**32 - 1, player="ada")
        row = query(url, "SELECT seed, started FROM games WHERE id = ?", game["id"])[0]
        assert row[0] == 2**32 - 1
        assert abs(row[1] - time.time()) < 60 and row[1] != float(np.float32(row[1]))  # more than 32 bits


# ----------------------------------------------------------------------------- damaged rows


DAMAGE = {  # column = value, by what it breaks
    "bots not JSON": ("bots", "['greedy'"),
    "bots a path": ("bots", json.dumps(["/etc/passwd"])),
    "bots a checkpoint": ("bots", json.dumps(["checkpoints/ppo-420.pt"])),
    "bots another game's": ("bots", json.dumps(["heuristic"])),
    "bots not names": ("bots", json.dumps([7])),
    "too many bots": ("bots", json.dumps(["greedy", "greedy"])),
    "options not JSON": ("options", "{pot: 15"),
    "options of the wrong type": ("options", json.dumps({"pot": "many"})),
    "options unknown": ("options", json.dumps({"colour": 3})),
    "unknown game": ("game", "chess"),
    "game a blob": ("game", b"\xff\x00"),
    "players as text": ("players", "two"),
    "seat out of range": ("seat", 5),
    "seed negative": ("seed", -5),
    "actions not JSON": ("actions", "[[0, 1"),
    "status unknown": ("status", "paused"),
}


def test_a_damaged_row_makes_only_its_game_unavailable(tmp_path):
    db = tmp_path / "records.sqlite3"
    first = client_for(db)
    good = long_game(first, player="ada")
    finished = start(first, game="420", bots="greedy", seat=0, seed=8, player="ada")
    state, rng = finished["state"], random.Random(2)
    while not state["over"]:
        state = ok(first.post(f"/api/games/{finished['id']}/moves", json={"action": rng.choice(legal_actions(state))}))[
            "state"
        ]
    spoilt = {}
    for name, (column, value) in DAMAGE.items():
        reply = start(first, game="420", bots="greedy", seat=0, seed=len(spoilt), player="ada")
        write(db, f"UPDATE games SET {column} = ? WHERE id = ?", value, reply["id"])
        spoilt[name] = reply["id"]
    for name, sql in {
        "a move not a number": "UPDATE moves SET action = 'x' WHERE game_id = ?",
        "a move's position not JSON": "UPDATE moves SET snapshot = '{' WHERE game_id = ?",
        "a move lost": "DELETE FROM moves WHERE game_id = ?",
    }.items():
        reply = long_game(first, player="ada")
        ok(first.post(f"/api/games/{reply['id']}/moves", json={"action": legal_actions(reply["state"])[0]}))
        write(db, sql, reply["id"])
        spoilt[name] = reply["id"]
    write(db, "UPDATE games SET opponents = ? WHERE id = ?", b"\xfe\xff", finished["id"])  # a damaged summary value

    second = client_for(db)  # a server that reads them from the file
    for name, gid in spoilt.items():
        for response in (
            second.get(f"/api/games/{gid}"),
            second.get(f"/api/records/{gid}"),
            second.get(f"/api/games/{gid}/coach"),
            second.post(f"/api/games/{gid}/moves", json={"action": 0}),
        ):
            message = refused(response, 409, gid)
            assert "internal" not in message, (name, message)
    # the bot names read back are checked as a new game's are
    assert "unknown bot '/etc/passwd'" in refused(second.get(f"/api/games/{spoilt['bots a path']}"), 409)
    assert "not JSON" in refused(second.get(f"/api/records/{spoilt['options not JSON']}"), 409)
    # the other games serve and play on; the summary still works
    state = state_of(second, good["id"])
    ok(second.post(f"/api/games/{good['id']}/moves", json={"action": legal_actions(state)[0], "turn": 0}))
    assert state_of(second, finished["id"])["over"]
    summary = ok(second.get("/api/records", params={"player": "ada"}))
    assert summary["unfinished"] >= 1 and sum(r["games"] for r in summary["records"]) == 1


# ----------------------------------------------------------------------------- the seed


def test_the_seed_of_a_game_in_play_is_never_sent_and_is_shown_once_over(tmp_path):
    client = client_for(tmp_path / "records.sqlite3")
    reply = start(client, game="420", bots="greedy", seat=0, seed=1234)
    gid, state = reply["id"], reply["state"]
    rng = random.Random(3)
    while not state["over"]:
        assert state["seed"] is None and state_of(client, gid)["seed"] is None
        record = ok(client.get(f"/api/records/{gid}"))
        assert record["seed"] is None and "1234" not in json.dumps({k: v for k, v in record.items() if k != "id"})
        state = ok(client.post(f"/api/games/{gid}/moves", json={"action": rng.choice(legal_actions(state))}))["state"]
    assert state["seed"] == 1234 and state_of(client, gid)["seed"] == 1234
    record = ok(client.get(f"/api/records/{gid}"))
    assert record["seed"] == 1234 and replay_actions(record) == record["events"]
    assert ok(client.get("/api/records"))["recent"][0]["seed"] == 1234


# ----------------------------------------------------------------------------- the command's address


@pytest.mark.slow
def test_port_0_prints_the_port_the_server_listens_on(tmp_path):
    proc = subprocess.Popen(
        [sys.executable, "-m", "play.web", "--port", "0", "--db", str(tmp_path / "r.sqlite3")],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = proc.stdout.readline()
        assert line.startswith("Dice Arena on http://127.0.0.1:"), (line, proc.stderr.read() if proc.poll() else "")
        port = int(line.split("http://127.0.0.1:")[1].split("/")[0])
        assert port != 0
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/setup", timeout=10) as response:
            assert response.status == 200 and json.load(response)["games"]
    finally:
        proc.terminate()
        proc.wait(10)
        proc.stdout.close()
        proc.stderr.close()


@pytest.mark.parametrize("host", ["127.0.0.1", "192.0.2.1"])  # a port in use; an address not this machine's
def test_an_address_the_server_cannot_listen_on_is_one_line_and_no_url(host, tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        out, err = io.StringIO(), io.StringIO()
        code = web_cli.run(argparse.Namespace(host=host, port=port, db=str(tmp_path / "r.sqlite3")), out, err)
    assert code == 2 and out.getvalue() == ""
    lines = err.getvalue().splitlines()
    assert len(lines) == 1 and f"cannot listen on {host} port {port}" in lines[0] and "--port" in lines[0]
