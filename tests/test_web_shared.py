"""Shared tables (``play.web.shared``): several people, each with their seat's token, and bots
at one game; spectators; the records as the truth (a restart, a second server, the event
stream); who may move a seat; request ids; rate limits; and one browser test where two
Chromium pages play a table and a third watches."""

from __future__ import annotations

import base64
import json
import os
import random
import threading
import time
import warnings
from contextlib import closing
from pathlib import Path

import pytest

pytest.importorskip("fastapi", reason="the web extra is not installed (pip install -e '.[web]')")
pytest.importorskip("httpx", reason="FastAPI's TestClient needs httpx")

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient

from play.web.app import create_app  # noqa: E402
from play.web.database import open_database  # noqa: E402
from play.web.records import SCHEMA_VERSION  # noqa: E402
from play.web.shared import Limits  # noqa: E402

THREE = {"game": "420", "seats": ["person", "person", "optimal"], "seat": 0, "player": "ada", "seed": 5}


@pytest.fixture
def db(records_db):
    """Each test here runs on a SQLite file and on a PostgreSQL database (tests/conftest.py)."""
    return records_db


def client_for(db, **limits) -> TestClient:
    return TestClient(create_app(db, limits=Limits(**limits)), raise_server_exceptions=False)


def ok(response, status: int = 200) -> dict:
    assert response.status_code == status, (response.status_code, response.text)
    return response.json()


def refused(response, status: int, *words: str) -> str:
    assert response.status_code == status, (response.status_code, response.text)
    assert response.headers["content-type"].startswith("application/json")
    message = response.json()["error"]
    for word in words:
        assert word in message, (word, message)
    return message


def auth(token: str) -> dict:
    return {"Authorization": f"Bearer {token}"}


def make_table(client, **body) -> dict:
    made = ok(client.post("/api/tables", json={**THREE, **body}), 201)
    made["tokens"] = {made["seat"]: made["token"], **{i["seat"]: i["token"] for i in made["invites"]}}
    return made


def query(db, sql: str, *args):
    with closing(open_database(db).connect()) as conn:
        return [tuple(row) for row in conn.execute(sql, args).fetchall()]


def dump(db) -> str:
    """Every value of every table, as text."""
    with closing(open_database(db).connect()) as conn:
        tables = open_database(db).tables(conn)
        return "\n".join(repr(tuple(r)) for t in sorted(tables) for r in conn.execute(f"SELECT * FROM {t}").fetchall())


def state(client, tid: str, token=None) -> dict:
    return ok(client.get(f"/api/tables/{tid}", headers=auth(token) if token else {}))["state"]


def play_one(client, tid: str, tokens: dict, rng: random.Random, seen: list) -> dict:
    """The seat to move plays a random legal move with its own token; returns the new state."""
    public = state(client, tid)
    seat = public["to_move"]
    mine = ok(client.get(f"/api/tables/{tid}", headers=auth(tokens[seat])))
    seen.append(json.dumps(mine))
    assert mine["state"]["waiting"] and mine["state"]["seat"] == seat
    action = rng.choice(mine["state"]["legal"])["action"]
    body = {"action": action, "turn": mine["state"]["turn"]}
    reply = ok(client.post(f"/api/tables/{tid}/moves", json=body, headers=auth(tokens[seat])))
    seen.append(json.dumps(reply))
    return reply["state"]


def public_part(st: dict) -> dict:
    """What every viewer of the table sees alike."""
    keep = ("table", "to_move", "turn", "over", "result", "loser", "seed", "events", "waiting_for")
    return {k: st[k] for k in keep} | {"seats": [{**s, "you": None} for s in st["seats"]]}


# ----------------------------------------------------------------------------- playing


def test_two_people_and_a_bot_play_420_to_the_end_and_a_spectator_sees_the_same_table(db):
    client = client_for(db)
    made = make_table(client)
    tid, tokens = made["id"], made["tokens"]
    assert made["seat"] == 0 and set(tokens) == {0, 1}
    assert made["spectator"] == f"/#table={tid}" and made["link"].endswith(tokens[0])
    assert [i["link"] for i in made["invites"]] == [f"/#table={tid}&seat={tokens[1]}"]
    assert [s["kind"] for s in made["state"]["seats"]] == ["person", "person", "bot"]
    seen: list[str] = []  # every response but the creation: no token in any of them

    joined = ok(client.post(f"/api/tables/{tid}/join", json={"name": "bob"}, headers=auth(tokens[1])))
    seen.append(json.dumps(joined))
    assert joined["state"]["seat"] == 1 and joined["state"]["seats"][1]["player"] == "bob"
    watcher = ok(client.get(f"/api/tables/{tid}"))
    seen.append(json.dumps(watcher))
    assert watcher["state"]["seat"] is None and not watcher["state"]["waiting"] and watcher["state"]["legal"] == []
    assert [s["player"] for s in watcher["state"]["seats"]] == ["ada", "bob", None]

    rng = random.Random(1)
    moved_by = set()
    for _ in range(300):
        public = state(client, tid)
        if public["over"]:
            break
        assert public["waiting_for"] in ("ada", "bob")
        moved_by.add(public["to_move"])
        play_one(client, tid, tokens, rng, seen)
    final = ok(client.get(f"/api/tables/{tid}"))
    seen.append(json.dumps(final))
    assert final["state"]["over"] and final["state"]["result"]
    assert moved_by == {0, 1}
    assert query(db, "SELECT status FROM tables WHERE id = ?", tid) == [("over",)]
    n = query(db, "SELECT n_moves FROM tables")[0][0]
    assert query(db, "SELECT COUNT(*), MIN(turn), MAX(turn) FROM table_moves") == [(n, 0, n - 1)]
    for token in tokens.values():  # each player sees the spectator's final table
        mine = ok(client.get(f"/api/tables/{tid}", headers=auth(token)))
        seen.append(json.dumps(mine))
        assert public_part(mine["state"]) == public_part(final["state"])
        assert mine["state"]["log"] == final["state"]["log"]
    events = ok(client.get(f"/api/tables/{tid}", params={"since": 0}))
    seen.append(json.dumps(events))
    assert len(events["steps"]) == final["state"]["events"]

    text = "\n".join(seen)
    for token in tokens.values():
        assert token not in text
    # the records hold only the tokens' hashes
    hashes = [h for (h,) in query(db, "SELECT token_hash FROM seats WHERE token_hash IS NOT NULL")]
    assert len(hashes) == 2 and all(len(h) == 64 for h in hashes)
    everything = dump(db)
    assert not any(token in everything for token in tokens.values())


def test_only_the_seats_owner_moves_it(db):
    client = client_for(db)
    made = make_table(client)
    other = make_table(client, seed=6)
    tid, tokens = made["id"], made["tokens"]
    assert state(client, tid)["to_move"] == 0
    mine = state(client, tid, tokens[0])
    move = {"action": mine["legal"][0]["action"], "turn": mine["turn"]}

    def unchanged():
        assert query(db, "SELECT COUNT(*) FROM table_moves WHERE table_id = ?", tid) == [(0,)]
        assert state(client, tid, tokens[0]) == mine

    url = f"/api/tables/{tid}/moves"
    refused(client.post(url, json=move, headers=auth(tokens[1])), 409, "not your turn")  # another seat's
    unchanged()
    refused(client.post(url, json=move), 401, "token")  # a spectator
    unchanged()
    refused(client.post(url, json=move, headers=auth("A" * 32)), 403)  # made up
    refused(client.post(url, json=move, headers=auth("<script>")), 403)
    refused(client.post(url, json=move, headers=auth(other["tokens"][0])), 403)  # another table's
    refused(client.post(url, json={**move, "token": "B" * 32}), 403)
    refused(client.post(url, json={"action": move["action"]}, headers=auth(tokens[0])), 422, "turn")
    unchanged()

    ok(client.post(url, json=move, headers=auth(tokens[0])))
    after = state(client, tid)
    count = query(db, "SELECT COUNT(*) FROM table_moves")[0][0]
    assert count == 1
    again = client.post(url, json=move, headers=auth(tokens[0]))  # the old move sent again
    assert again.status_code in (409, 422) and "error" in again.json()
    assert query(db, "SELECT COUNT(*) FROM table_moves")[0][0] == count and state(client, tid) == after
    # the token in a JSON field works as the header does
    seat = after["to_move"]
    if seat in tokens:
        st = state(client, tid, tokens[seat])
        ok(client.post(url, json={"action": st["legal"][0]["action"], "turn": st["turn"], "token": tokens[seat]}))


def test_a_restart_mid_game_loses_nothing_and_the_game_plays_on(db):
    client = client_for(db)
    made = make_table(client)
    tid, tokens = made["id"], made["tokens"]
    rng, seen = random.Random(3), []
    for _ in range(4):
        play_one(client, tid, tokens, rng, seen)
    before = {s: state(client, tid, t) for s, t in tokens.items()} | {None: state(client, tid)}

    restarted = client_for(db)  # a new server on the same file: nothing in memory
    for s, t in tokens.items():
        assert state(restarted, tid, t) == before[s]
    assert state(restarted, tid) == before[None]
    for _ in range(300):
        if state(restarted, tid)["over"]:
            break
        play_one(restarted, tid, tokens, rng, seen)
    assert state(restarted, tid)["over"]
    assert state(client, tid) == state(restarted, tid)  # the first server catches up from the records


def test_the_creator_may_give_an_idle_seat_to_a_bot_after_the_timeout(db, monkeypatch):
    from play.web import shared

    client = client_for(db, seat_timeout=60)
    made = make_table(client, seats=["person", "person", "person"], seat=0)
    tid, tokens = made["id"], made["tokens"]
    idle = state(client, tid)["to_move"]
    assert idle != 0  # the dice drew another seat to start (seed 5)
    other = 3 - idle  # the third person: neither the creator nor the one to move
    url = f"/api/tables/{tid}/seats/{idle}/bot"
    refused(client.post(url, json={}, headers=auth(tokens[0])), 409, "after 60 s")  # too soon
    refused(client.post(url, json={}, headers=auth(tokens[other])), 403, "creator")
    refused(client.post(url, json={}), 401)
    refused(client.post(f"/api/tables/{tid}/seats/{other}/bot", json={}, headers=auth(tokens[0])), 409, "to move")

    class Later:  # the server's clock, a minute on (a wait timed on a busy machine could be too short or long)
        def __getattr__(self, name):
            return getattr(time, name)

        def time(self):
            return time.time() + 61

    monkeypatch.setattr(shared, "time", Later())
    refused(client.post(url, json={"bot": "../../etc/passwd"}, headers=auth(tokens[0])), 422, "unknown bot")
    reply = ok(client.post(url, json={"bot": "greedy"}, headers=auth(tokens[0])))
    seats = reply["state"]["seats"]
    assert seats[idle]["kind"] == "bot" and seats[idle]["bot"] == "greedy" and reply["state"]["to_move"] != idle
    assert query(db, "SELECT seat, action, bot FROM table_moves") == [(idle, None, "greedy")]
    # the seat's link no longer moves it or takes it; a restart gives the seat to the bot at the same point
    refused(client.post(f"/api/tables/{tid}/join", json={"name": "zed"}, headers=auth(tokens[idle])), 403, "bot")
    assert state(client_for(db), tid, tokens[0]) == state(client, tid, tokens[0])


# ----------------------------------------------------------------------------- requests


def test_a_request_sent_twice_makes_one_table_and_one_game(db):
    client = client_for(db)
    first = make_table(client, request_id="click-0001")
    second = make_table(client, request_id="click-0001")
    assert second["id"] == first["id"] and second["tokens"] == first["tokens"]
    assert query(db, "SELECT COUNT(*) FROM tables") == [(1,)]
    refused(client.post("/api/tables", json={**THREE, "seed": 9, "request_id": "click-0001"}), 409, "another")
    # another server (or after a restart): the same table, but its tokens were only in the first answer
    message = refused(client_for(db).post("/api/tables", json={**THREE, "request_id": "click-0001"}), 409)
    assert first["id"] in message and first["token"] not in message
    assert query(db, "SELECT COUNT(*) FROM tables") == [(1,)]
    refused(client.post("/api/tables", json={**THREE, "request_id": "x"}), 422)

    body = {"game": "420", "players": 2, "bots": "optimal", "seat": 0, "seed": 4, "request_id": "start-0001"}
    a = ok(client.post("/api/games", json=body), 201)
    b = ok(client.post("/api/games", json=body), 201)
    c = ok(client_for(db).post("/api/games", json=body), 201)
    assert a["id"] == b["id"] == c["id"] and a["state"] == b["state"]
    assert query(db, "SELECT COUNT(*) FROM games") == [(1,)]
    refused(client.post("/api/games", json={**body, "seed": 5}), 409, "another game")


def test_table_creation_and_moves_are_rate_limited_per_address(db):
    client = client_for(db, create_burst=2, create_per_minute=0.01, move_burst=3, move_per_minute=0.01)
    made = make_table(client)
    make_table(client)
    response = client.post("/api/tables", json=THREE)
    refused(response, 429, "too many tables")
    assert int(response.headers["Retry-After"]) >= 1
    assert query(db, "SELECT COUNT(*) FROM tables") == [(2,)]
    tid, tokens = made["id"], made["tokens"]
    for _ in range(3):
        client.post(f"/api/tables/{tid}/join", json={"name": "bob"}, headers=auth(tokens[1]))
    st = state(client, tid, tokens[0])
    body = {"action": st["legal"][0]["action"], "turn": st["turn"]}
    response = client.post(f"/api/tables/{tid}/moves", json=body, headers=auth(tokens[0]))
    refused(response, 429, "too many moves")
    assert query(db, "SELECT COUNT(*) FROM table_moves") == [(0,)]


def test_a_bad_table_is_refused(db):
    client = client_for(db)
    refused(client.post("/api/tables", json={**THREE, "seats": ["person", "person", "/tmp/x.pt"]}), 422, "unknown bot")
    refused(client.post("/api/tables", json={**THREE, "seat": 2}), 422, "person")
    refused(client.post("/api/tables", json={**THREE, "players": 2}), 422, "seats")
    refused(client.post("/api/tables", json={**THREE, "player": "<b>x</b>"}), 422, "name")
    refused(client.get("/api/tables/nope"), 404)
    refused(client.get("/api/tables/" + "A" * 16), 404)
    refused(client.get("/api/tables/" + "A" * 16 + "/events"), 404)
    assert query(db, "SELECT COUNT(*) FROM tables") == [(0,)]


def test_a_version_2_file_is_migrated_to_3_keeping_its_games(db):
    client = client_for(db)
    game = ok(client.post("/api/games", json={"game": "420", "players": 2, "bots": "optimal", "seed": 8}), 201)
    before = ok(client.get(f"/api/games/{game['id']}"))
    with closing(open_database(db).connect()) as conn:  # back to version 2
        for name in ("table_moves", "seats", "tables"):
            conn.execute(f"DROP TABLE {name}")
        conn.execute("DROP INDEX games_by_request")
        conn.execute("ALTER TABLE games DROP COLUMN request_id")
        conn.execute("ALTER TABLE games DROP COLUMN request_hash")
        conn.execute("UPDATE meta SET value = '2' WHERE key = 'schema'")
    migrated = client_for(db)
    assert query(db, "SELECT value FROM meta WHERE key = 'schema'") == [(str(SCHEMA_VERSION),)] == [("3",)]
    assert ok(migrated.get(f"/api/games/{game['id']}")) == before
    make_table(migrated)


# ----------------------------------------------------------------------------- the event stream


@pytest.fixture
def served(db):
    """A real server (uvicorn in a thread) on the records file: (its URL, its app)."""
    import socket

    import uvicorn

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    app = create_app(db, limits=Limits(poll=0.05, stream_seconds=20))
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="off"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        assert time.monotonic() < deadline
        time.sleep(0.02)
    yield f"http://127.0.0.1:{port}"
    server.should_exit = server.force_exit = True  # the event streams still open are cut, not waited for
    thread.join(5)


def read_events(url: str, headers: dict, out: list, stop: threading.Event) -> None:
    import httpx

    try:
        with httpx.stream("GET", url, headers=headers, timeout=10) as response:
            out.append(("status", response.status_code, response.headers.get("content-type")))
            event: dict = {}
            for line in response.iter_lines():
                if line.startswith("id: "):
                    event["id"] = int(line[4:])
                elif line.startswith("data: "):
                    event["data"] = json.loads(line[6:])
                elif line == "" and "data" in event:
                    out.append(event)
                    event = {}
                if stop.is_set():
                    return
    except httpx.HTTPError:  # the server stopped at the end of the test
        return


def test_the_event_stream_delivers_a_move_made_through_another_server(db, served):
    other = client_for(db)  # another server process on the same file
    made = make_table(other)
    tid, tokens = made["id"], made["tokens"]
    url = f"{served}/api/tables/{tid}/events"
    got: list = []
    stop = threading.Event()
    reader = threading.Thread(target=read_events, args=(url, {}, got, stop), daemon=True)
    reader.start()
    deadline = time.monotonic() + 5
    while len(got) < 2:
        assert time.monotonic() < deadline, got
        time.sleep(0.02)
    assert got[0] == ("status", 200, "text/event-stream; charset=utf-8")
    first = got[1]
    assert first["data"]["turn"] == 0 and not first["data"]["over"]

    st = state(other, tid, tokens[0])
    moved = time.monotonic()
    ok(
        other.post(
            f"/api/tables/{tid}/moves", json={"action": st["legal"][0]["action"], "turn": 0}, headers=auth(tokens[0])
        )
    )
    while len(got) < 3:
        assert time.monotonic() - moved < 1.5, "the move did not reach the stream within a second"
        time.sleep(0.01)
    assert got[2]["data"]["turn"] == 1 and got[2]["id"] > first["id"]
    stop.set()

    # a client that reconnects with Last-Event-ID hears only what is new to it
    resumed: list = []
    stop2 = threading.Event()
    again = threading.Thread(
        target=read_events, args=(url, {"Last-Event-ID": str(got[2]["id"])}, resumed, stop2), daemon=True
    )
    again.start()
    time.sleep(0.4)
    assert resumed == [("status", 200, "text/event-stream; charset=utf-8")]
    seat = state(other, tid)["to_move"]
    st = state(other, tid, tokens[seat])
    ok(
        other.post(
            f"/api/tables/{tid}/moves",
            json={"action": st["legal"][0]["action"], "turn": st["turn"]},
            headers=auth(tokens[seat]),
        )
    )
    deadline = time.monotonic() + 1.5
    while len(resumed) < 2:
        assert time.monotonic() < deadline
        time.sleep(0.01)
    assert resumed[1]["data"]["turn"] == 2
    stop2.set()


# ----------------------------------------------------------------------------- several processes


def children_of(pid: int) -> list[int]:
    try:
        return [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


@pytest.mark.slow
@pytest.mark.timeout(180)
def test_workers_serve_one_table_from_every_process_and_stop_together(db):
    """``play web --workers 2``: two server processes on one port and one records; a table
    played with a new connection for every request (each may reach either process) ends as
    one game, and SIGTERM stops both."""
    import signal
    import subprocess
    import sys

    from urllib.parse import urlsplit

    import httpx

    root = Path(__file__).resolve().parent.parent
    server = subprocess.Popen(
        [sys.executable, "-m", "play", "web", "--port", "0", "--workers", "2", "--db", str(db)],
        cwd=root,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = server.stdout.readline()
        assert "2 processes" in line and "Ctrl-C" in line, (line, server.poll())
        if isinstance(db, str):
            assert f":{urlsplit(db).password}@" not in line  # the URL's password is never shown
        url = line.split(" on ", 1)[1].split("/ ", 1)[0]
        deadline = time.monotonic() + 10
        while len(children_of(server.pid)) < 2:  # started right after the line
            assert time.monotonic() < deadline and server.poll() is None
            time.sleep(0.05)
        workers = children_of(server.pid)
        assert len(workers) == 2
        fresh = httpx.Client(base_url=url, timeout=30, limits=httpx.Limits(max_keepalive_connections=0))
        deadline = time.monotonic() + 60
        while True:  # the workers start (and load their bots) in the background
            try:
                if fresh.get("/").status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline and server.poll() is None
            time.sleep(0.2)
        made = make_table(fresh)
        tid, tokens = made["id"], made["tokens"]
        rng, seen = random.Random(3), []
        for _ in range(300):
            if state(fresh, tid)["over"]:
                break
            play_one(fresh, tid, tokens, rng, seen)
        final = state(fresh, tid)
        assert final["over"]
        n = query(db, "SELECT n_moves FROM tables WHERE id = ?", tid)[0][0]
        assert query(db, "SELECT COUNT(*), MIN(turn), MAX(turn) FROM table_moves") == [(n, 0, n - 1)]
        server.send_signal(signal.SIGTERM)
        assert server.wait(30) == 0
        assert all(
            not Path(f"/proc/{w}").exists() or "zombie" in Path(f"/proc/{w}/status").read_text() for w in workers
        )
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
        server.stdout.close()
        server.stderr.close()


# ----------------------------------------------------------------------------- in the browser


@pytest.mark.browser
@pytest.mark.slow
@pytest.mark.timeout(240)
def test_two_people_play_a_shared_420_table_in_two_browsers_and_a_third_watches(db, served, tmp_path):
    """Three Chromium processes (separate profiles, so separate storage): the creator makes a
    table of two people and a bot, the friend opens the invite link and takes the seat, a
    spectator opens the watch link; each page follows the moves through the event stream.
    ``DICE_ARENA_SHARED_SCREENSHOTS=folder`` keeps desktop and phone screenshots of the
    creator's page in the middle of the game (``web-shared.png``, ``web-shared-phone.png``)."""
    browser_test = pytest.importorskip("test_web_browser", reason="tests/test_web_browser.py drives Chromium")
    if browser_test.CHROMIUM is None:
        pytest.skip("no chromium binary (Debian: apt-get install chromium)")
    pages = []
    try:
        for name in ("ada", "bob", "eve"):
            profile = tmp_path / f"chromium-{name}"
            profile.mkdir()
            pages.append(browser_test.Browser(profile))
        ada, bob, eve = pages
        ready = "document.body && document.body.dataset.ready === '1'"
        ada.send("Page.navigate", url=f"{served}/?delay=0")
        ada.wait(ready)
        ada.js("document.getElementById('player').value = 'Ada'")
        ada.click('#play-mode button[data-play="friends"]')
        ada.click('#game-choice button[data-game="420"]')
        ada.select("#players", "3")
        ada.select("#seat", "0")
        ada.select('#seat-kinds select[data-seat="2"]', "optimal")
        ada.js("document.getElementById('seed').value = '11'")
        assert ada.js("document.getElementById('start').textContent") == "Create the table"
        ada.click("#start")
        ada.click("#start")  # a double click makes one table
        ada.wait("!document.getElementById('invites-card').classList.contains('hidden') && state && !busy")
        invite = ada.js("document.querySelector('#invites li[data-seat=\"1\"] input').value")
        watch = ada.js("document.querySelector('#spectator-link input').value")
        assert "#table=" in invite and "&seat=" in invite and "&seat=" not in watch
        assert query(db, "SELECT COUNT(*) FROM tables") == [(1,)]

        bob.send("Page.navigate", url=invite)
        bob.wait(ready)
        bob.wait("!document.getElementById('join').classList.contains('hidden')")
        assert "Ada invites you" in bob.js("document.getElementById('join-text').textContent")
        bob.js("document.getElementById('join-name').value = 'Bob'")
        bob.click("#join-button")
        bob.wait("!document.getElementById('game').classList.contains('hidden') && state && state.seat === 1")
        eve.send("Page.navigate", url=watch)
        eve.wait(ready)
        eve.wait("!document.getElementById('game').classList.contains('hidden') && state && state.seat === null")
        assert "watching" in eve.js("document.getElementById('game-name').textContent")
        ada.wait("state.seats[1].player === 'Bob'")  # Bob's taking his seat reached Ada's page live

        players = {0: ada, 1: bob}
        shots = os.environ.get("DICE_ARENA_SHARED_SCREENSHOTS")
        moves = 0
        while not ada.js("state.over"):
            ada.wait("state && !busy && !refreshing")
            seat = ada.js("state.over ? null : state.to_move")
            if seat is None:
                break
            page, other = players[seat], players[1 - seat]
            page.wait(
                "state && !busy && (state.over || (state.waiting && "
                "!document.getElementById('turn').classList.contains('hidden')))",
                timeout=10,
            )
            turn = page.js("state.turn")
            other.wait(f"state.turn === {turn} && !busy")
            waiting = other.js("document.getElementById('table-status-text').textContent")
            assert waiting == f"Waiting for {'Ada' if seat == 0 else 'Bob'}…", waiting
            assert page.js("document.getElementById('table-status-text').textContent") == "Your turn."
            if shots and moves >= 3 and seat == 1:
                _screenshots(ada, Path(shots))
                shots = None
            page.click("#legal .chip-move")
            page.click("#roll")
            for each in pages:  # every page hears of the move through its event stream
                each.wait(f"!busy && (state.turn > {turn} || state.over)", timeout=10)
            moves += 1
            assert moves < 200

        final = "!busy && state && state.over && !document.getElementById('result').classList.contains('hidden')"
        table = "[...document.querySelectorAll('#table svg.die')].map((d) => d.dataset.value).join()"
        for page in pages:
            page.wait(final, timeout=10)
        assert moves > 2
        results = [page.js("state.result") for page in pages]
        assert results[0] and results[0] == results[1] == results[2]
        assert ada.js(table) == bob.js(table) == eve.js(table)
        logs = [page.js("[...document.querySelectorAll('#log li')].map((e) => e.textContent)") for page in pages]
        assert logs[0] == logs[1] == logs[2] and len(logs[0]) > 5
        assert "Game over." in eve.js("document.getElementById('result').textContent")
        assert any(w in ada.js("document.getElementById('result').textContent") for w in ("You win!", "You lose."))
        for page in pages:
            assert not page.errors, page.errors
    finally:
        for page in pages:
            page.close()


@pytest.mark.browser
@pytest.mark.timeout(120)
def test_a_refresh_answered_after_the_pages_own_move_does_not_show_the_move_twice(db, served, tmp_path):
    """The page asks for the table's news (an event reached it) and, before the answer is
    back, its person moves: the answer then holds the steps of that move, which the page
    shows already. The page asks again from where it is instead: its log is the table's
    narration, each line once, as a page opened afterwards shows it."""
    import httpx

    browser_test = pytest.importorskip("test_web_browser", reason="tests/test_web_browser.py drives Chromium")
    if browser_test.CHROMIUM is None:
        pytest.skip("no chromium binary (Debian: apt-get install chromium)")
    made = httpx.post(f"{served}/api/tables", json={**THREE, "seats": ["person", "optimal"], "seed": 3}).json()
    (tmp_path / "chromium").mkdir()
    page = browser_test.Browser(tmp_path / "chromium")
    try:
        page.send("Page.navigate", url=f"{served}/?delay=0{made['link'][1:]}")
        page.wait("document.body && document.body.dataset.ready === '1'")
        # the event stream's first message (it brings the table's version) has been handled,
        # with the refresh it asks for: no request for news is on its way before the test
        # sends its own
        page.wait('state && typeof shared.version === "number" && !busy && !refreshing && state.waiting', timeout=10)
        before = page.js("state.events")
        # hold every request for news until the move is made and shown
        page.js(
            "window.held = []; window.hold = true; const plain = window.fetch;"
            "window.fetch = (url, opts) => window.hold && String(url).includes('since=')"
            " ? new Promise((done) => window.held.push(() => done(plain(url, opts)))) : plain(url, opts); true"
        )
        page.js("refreshTable(); true")  # as an event from the stream does
        assert page.js("refreshing && window.held.length === 1")
        page.click("#legal .chip-move")
        page.click("#roll")
        page.wait(f"!busy && state.events > {before}", timeout=10)
        page.js("window.hold = false; window.held.forEach((send) => send()); true")
        page.wait("!busy && !refreshing && !again", timeout=10)
        time.sleep(0.3)  # an answer still on its way would show its steps now
        page.wait("!busy && !refreshing", timeout=10)
        shown = page.js("[...document.querySelectorAll('#log li')].map((e) => e.textContent)")
        told = httpx.get(f"{served}/api/tables/{made['id']}").json()["state"]["log"]
        assert len(told) > 1 and shown == told
        assert not page.errors, page.errors
    finally:
        page.close()


def _screenshots(page, folder: Path) -> None:
    """The page at desktop (1280x800) and phone (390x844) widths."""
    folder.mkdir(parents=True, exist_ok=True)
    page.send("Emulation.setDeviceMetricsOverride", width=1280, height=800, deviceScaleFactor=1, mobile=False)
    time.sleep(0.3)
    data = page.send("Page.captureScreenshot", format="png")["data"]
    (folder / "web-shared.png").write_bytes(base64.b64decode(data))
    page.send("Emulation.setDeviceMetricsOverride", width=390, height=844, deviceScaleFactor=2, mobile=True)
    time.sleep(0.3)
    data = page.send("Page.captureScreenshot", format="png", captureBeyondViewport=True)["data"]
    (folder / "web-shared-phone.png").write_bytes(base64.b64decode(data))
    page.send("Emulation.setDeviceMetricsOverride", width=1280, height=1000, deviceScaleFactor=1, mobile=False)
