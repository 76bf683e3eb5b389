"""The records and the event streams under load (``play.web.records``, ``play.web.shared``):
one writer connection per process that survives a failed write and is not shared with a
forked child, the versions of many tables in one query, and an event stream woken by a move
stored in its own process without waiting for its poll.  No timing is asserted here: the
figures are ``python -m play.web.load``'s (docs/results.md, Web load)."""

from __future__ import annotations

import json
import multiprocessing
import sqlite3
import threading
import time
import warnings
from contextlib import closing

import pytest

pytest.importorskip("fastapi", reason="the web extra is not installed (pip install -e '.[web]')")
pytest.importorskip("httpx", reason="FastAPI's TestClient needs httpx")

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient

from play.web.app import create_app  # noqa: E402
from play.web.records import MoveConflict, Records  # noqa: E402
from play.web.shared import Limits  # noqa: E402

THREE = {"game": "420", "seats": ["person", "person", "optimal"], "seat": 0, "player": "ada", "seed": 5}


@pytest.fixture
def db(tmp_path):
    return tmp_path / "records.sqlite3"


def ok(response, status: int = 200) -> dict:
    assert response.status_code == status, (response.status_code, response.text)
    return response.json()


def auth(token: str) -> dict:
    return {"Authorization": f"Bearer {token}"}


def make_table(client) -> dict:
    made = ok(client.post("/api/tables", json=THREE), 201)
    made["tokens"] = {made["seat"]: made["token"], **{i["seat"]: i["token"] for i in made["invites"]}}
    return made


def move(client, tid: str, tokens: dict) -> dict:
    """The seat to move plays its first legal move; returns the answer."""
    seat = ok(client.get(f"/api/tables/{tid}"))["state"]["to_move"]
    mine = ok(client.get(f"/api/tables/{tid}", headers=auth(tokens[seat])))["state"]
    body = {"action": mine["legal"][0]["action"], "turn": mine["turn"]}
    return ok(client.post(f"/api/tables/{tid}/moves", json=body, headers=auth(tokens[seat])))


def meta(db, key: str):
    with closing(sqlite3.connect(db)) as conn:
        return conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchall()


# ----------------------------------------------------------------------------- the writer connection


def test_the_held_writer_connection_is_reused_and_survives_a_failed_write(db):
    records = Records(db)
    records.hold()
    with records.transaction() as first:
        first.execute("INSERT INTO meta (key, value) VALUES ('a', '1')")
    with pytest.raises(MoveConflict):
        with records.transaction() as conn:
            assert conn is first  # one connection for the process's writes
            conn.execute("INSERT INTO meta (key, value) VALUES ('b', '2')")
            raise MoveConflict("refused inside the transaction")
    assert meta(db, "b") == []  # rolled back
    with records.transaction() as conn:
        assert conn is first  # not poisoned: the same connection writes again
        conn.execute("INSERT INTO meta (key, value) VALUES ('c', '3')")
    assert meta(db, "a") == [("1",)] and meta(db, "c") == [("3",)]

    # a connection that breaks inside a write is replaced by the next write
    with pytest.raises(MoveConflict):
        with records.transaction() as conn:
            conn.execute("INSERT INTO meta (key, value) VALUES ('d', '4')")
            conn.close()
            raise MoveConflict("and the connection is gone")
    with records.transaction() as conn:
        assert conn is not first
        conn.execute("INSERT INTO meta (key, value) VALUES ('e', '5')")
    assert meta(db, "d") == [] and meta(db, "e") == [("5",)]

    # a failing statement: rolled back, and the next write still works
    with pytest.raises(sqlite3.IntegrityError):
        with records.transaction() as conn:
            conn.execute("INSERT INTO meta (key, value) VALUES ('f', '6')")
            conn.execute("INSERT INTO meta (key, value) VALUES ('e', 'again')")
    with records.transaction() as conn:
        conn.execute("INSERT INTO meta (key, value) VALUES ('g', '7')")
    assert meta(db, "f") == [] and meta(db, "g") == [("7",)]
    records.close()
    assert not db.with_name(db.name + "-wal").exists()  # closed: the file is whole again


def test_a_stale_table_move_is_refused_and_the_next_move_is_stored(db):
    client = TestClient(create_app(db, limits=Limits()), raise_server_exceptions=False)
    with client:  # the lifespan: the server holds its writer connection
        made = make_table(client)
        tid, tokens = made["id"], made["tokens"]
        move(client, tid, tokens)
        store = client.app.state.tables
        table = store.get(tid)
        with pytest.raises(MoveConflict):
            store.records.save_table_move(table, 0)  # move 0 again: the records hold it already
        after = move(client, tid, tokens)
        assert after["state"]["turn"] == 2
        assert store.records.table_version(tid)["n_moves"] == 2


def _child_writes(records: Records, out) -> None:
    with records.transaction() as conn:
        conn.execute("INSERT INTO meta (key, value) VALUES ('child', '1')")
    out.put("written")


@pytest.mark.skipif("fork" not in multiprocessing.get_all_start_methods(), reason="no fork here")
def test_a_forked_process_opens_its_own_writer_connection(db):
    records = Records(db)
    records.hold()
    with records.transaction() as parent:
        parent.execute("INSERT INTO meta (key, value) VALUES ('parent', '1')")
    context = multiprocessing.get_context("fork")
    out = context.Queue()
    child = context.Process(target=_child_writes, args=(records, out))
    child.start()
    assert out.get(timeout=60) == "written"
    child.join(60)
    assert child.exitcode == 0
    with records.transaction() as conn:  # the parent's connection still serves it
        assert conn is parent
        conn.execute("INSERT INTO meta (key, value) VALUES ('parent again', '1')")
    assert meta(db, "child") == [("1",)] and meta(db, "parent again") == [("1",)]
    records.close()


# ----------------------------------------------------------------------------- the versions of many tables


def test_table_versions_reads_several_tables_in_one_query(db, monkeypatch):
    client = TestClient(create_app(db, limits=Limits()), raise_server_exceptions=False)
    made = [make_table(client) for _ in range(3)]
    move(client, made[1]["id"], made[1]["tokens"])
    records = client.app.state.tables.records
    ids = [m["id"] for m in made]

    statements: list = []
    connect = records._db.connect

    def traced(writer=False):
        conn = connect(writer)
        conn.set_trace_callback(statements.append)
        return conn

    monkeypatch.setattr(records._db, "connect", traced)
    versions = records.table_versions(ids + ["A" * 16])
    selects = [s for s in statements if s.lstrip().upper().startswith("SELECT")]
    assert len(selects) == 1, statements
    monkeypatch.undo()
    assert set(versions) == set(ids)  # an id of no table is left out
    for tid in ids:
        assert versions[tid] == records.table_version(tid)
    assert versions[ids[1]]["n_moves"] == 1 and versions[ids[0]]["n_moves"] == 0
    assert versions[ids[1]]["version"] > versions[ids[0]]["version"]
    assert records.table_versions([]) == {}


# ----------------------------------------------------------------------------- the event stream


def test_a_move_wakes_the_streams_of_its_own_process_without_their_poll(db):
    """The streams' poll is an hour here: only the wake-up of a move stored by this server can
    bring its event."""
    import socket

    import httpx
    import uvicorn

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    app = create_app(db, limits=Limits(poll=3600, stream_seconds=60))
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="off"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert time.monotonic() < deadline
        time.sleep(0.02)
    base = f"http://127.0.0.1:{port}"
    readers: list = []
    got: list = []
    stop = threading.Event()
    open_streams: list = []

    def read(url: str) -> None:
        try:
            with httpx.stream("GET", url, timeout=60) as response:
                open_streams.append(response)
                event: dict = {}
                for line in response.iter_lines():
                    if line.startswith("data: "):
                        event["data"] = json.loads(line[6:])
                    elif line == "" and "data" in event:
                        got.append(event)
                        event = {}
                    if stop.is_set():
                        return
        except httpx.HTTPError:
            return

    try:
        with httpx.Client(base_url=base, timeout=30) as client:
            made = make_table(client)
            tid, tokens = made["id"], made["tokens"]
            for _ in range(2):
                readers.append(threading.Thread(target=read, args=(f"{base}/api/tables/{tid}/events",), daemon=True))
            for reader in readers:
                reader.start()
            deadline = time.monotonic() + 30
            while len(got) < 2:  # each stream's first event: the table as it is
                assert time.monotonic() < deadline, got
                time.sleep(0.02)
            assert all(e["data"]["turn"] == 0 for e in got)
            move(client, tid, tokens)
            deadline = time.monotonic() + 30  # a bound for a slow machine, far below the poll
            while len(got) < 4:
                assert time.monotonic() < deadline, "the move did not wake the streams"
                time.sleep(0.02)
            assert [e["data"]["turn"] for e in got[2:]] == [1, 1]
    finally:
        stop.set()
        for response in open_streams:  # the streams end as a page's would: the server sees them go
            response.close()
        server.should_exit = server.force_exit = True  # it closes the streams it still serves
        thread.join(10)
        for reader in readers:  # daemon threads: their stream is gone with the server
            reader.join(1)


def test_a_move_and_a_look_at_the_table_each_read_the_records_once(db, monkeypatch):
    """The seat of the token, the table's version and its seats come from one read; a move is
    that read and one write (the event streams' watcher is not started by a TestClient)."""
    client = TestClient(create_app(db, limits=Limits()), raise_server_exceptions=False)
    made = make_table(client)
    tid, tokens = made["id"], made["tokens"]
    records = client.app.state.tables.records
    counted = {"reads": 0, "writes": 0}
    reading, read_one, transaction = records.reading, records.read_one, records.transaction

    def counting(kind, inner):
        def wrapper(*args, **kwargs):
            counted[kind] += 1
            return inner(*args, **kwargs)

        return wrapper

    monkeypatch.setattr(records, "reading", counting("reads", reading))
    monkeypatch.setattr(records, "read_one", counting("reads", read_one))
    monkeypatch.setattr(records, "transaction", counting("writes", transaction))
    seat = ok(client.get(f"/api/tables/{tid}", headers=auth(tokens[0])))["state"]["to_move"]
    assert counted == {"reads": 1, "writes": 0}
    mine = ok(client.get(f"/api/tables/{tid}", headers=auth(tokens[seat])))["state"]
    counted.update(reads=0, writes=0)
    body = {"action": mine["legal"][0]["action"], "turn": mine["turn"]}
    reply = ok(client.post(f"/api/tables/{tid}/moves", json=body, headers=auth(tokens[seat])))
    assert counted == {"reads": 1, "writes": 1}
    assert reply["state"]["turn"] > mine["turn"]
    assert [s["player"] for s in reply["state"]["seats"]][0] == "ada"


def test_a_version_read_before_a_move_of_this_process_does_not_rebuild_the_table(db, monkeypatch):
    """A request reads the table's version before it waits for the table's lock; a move stored
    meanwhile by this process makes that read stale.  The table in memory is then checked
    against the records again, not replayed from them (under load every such request replayed
    the whole table)."""
    client = TestClient(create_app(db, limits=Limits()), raise_server_exceptions=False)
    made = make_table(client)
    tid, tokens = made["id"], made["tokens"]
    tables = client.app.state.tables
    stale = tables.records.table_version(tid)
    move(client, tid, tokens)  # stored by this process after the read above
    replays: list = []
    replay = tables.replay
    monkeypatch.setattr(tables, "replay", lambda record: replays.append(record["id"]) or replay(record))
    with tables.serving(tid, stale) as table:
        assert len(table.entries) == tables.records.table_version(tid)["n_moves"] == stale["n_moves"] + 1
    assert replays == []
    # a table another process moved on is still caught up from the records
    other = TestClient(create_app(db, limits=Limits()), raise_server_exceptions=False)
    move(other, tid, tokens)
    with tables.serving(tid, tables.records.table_version(tid)) as table:
        assert len(table.entries) == stale["n_moves"] + 2
    assert replays == [tid]
