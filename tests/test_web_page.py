"""The page's faults of issue 26, fixed: the API side through FastAPI's TestClient (the
default bot, one start per request id, the bots loaded at start-up, ``/docs`` with nothing
from another host, the rules and 421's ranking, a refused name's reason, a finished game's
replay and rematch) and the page itself in headless Chromium (the coach cleared on New
game, the neutral prompt, the busy Start, the replay, and the phone layout at 390 x 844).
"""

from __future__ import annotations

import json
import re
import time
import urllib.request
import warnings
from pathlib import Path

import pytest

pytest.importorskip("fastapi", reason="the web extra is not installed (pip install -e '.[web]')")
pytest.importorskip("httpx", reason="FastAPI's TestClient needs httpx")

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient

import games  # noqa: E402
from play import default_opponent  # noqa: E402
from play.web.app import create_app, default_bot, setup  # noqa: E402
from play.web.howto import render  # noqa: E402

STATIC = Path(__file__).resolve().parents[1] / "play" / "web" / "static"


@pytest.fixture
def client(tmp_path):
    return TestClient(create_app(tmp_path / "records.sqlite3", preload=False), raise_server_exceptions=False)


def finish(client, **body) -> str:
    """A game played to its end with the first legal move each time; its id."""
    reply = client.post("/api/games", json=body)
    assert reply.status_code == 201, reply.text
    gid, state = reply.json()["id"], reply.json()["state"]
    while not state["over"]:
        reply = client.post(f"/api/games/{gid}/moves", json={"action": state["legal"][0]["action"]})
        assert reply.status_code == 200, reply.text
        state = reply.json()["state"]
    return gid


# ----------------------------------------------------------------------------- the default bot


def test_the_pages_default_bot_is_the_terminals_for_every_table():
    for game in setup()["games"]:
        spec = games.get(game["name"])
        options = spec.check_options({})
        for n, table in game["tables"].items():
            assert table["default_bot"] == default_bot(spec, int(n), options)
            if default_opponent(spec, int(n), options) in table["bots"]:
                assert table["default_bot"] == default_opponent(spec, int(n), options)
    tables421 = next(g for g in setup()["games"] if g["name"] == "421")["tables"]
    assert tables421["3"]["default_bot"] == "exact3"


def test_a_start_without_bots_seats_the_default_at_every_seat(client):
    reply = client.post("/api/games", json={"game": "421", "players": 3, "seed": 2})
    assert reply.status_code == 201 and reply.json()["state"]["bots"] == ["exact3", "exact3"]
    js = (STATIC / "app.js").read_text()
    assert "choice.picked" in js  # the page sends bots only when the person picked one


# ----------------------------------------------------------------------------- cold start


def test_a_start_sent_twice_with_one_request_id_makes_one_game(client):
    # seed 1: the person moves first (about 1 game in 11 against optimal is over before the person moves)
    body = {"game": "420", "players": 2, "bots": "optimal", "seat": 0, "seed": 1, "request_id": "abcdef0123456789"}
    first, second = client.post("/api/games", json=body), client.post("/api/games", json=body)
    assert first.status_code == 201 and second.status_code == 201 and not first.json()["state"]["over"]
    assert first.json()["id"] == second.json()["id"]
    assert client.get("/api/records").json()["unfinished"] == 1
    js = (STATIC / "app.js").read_text()
    assert "request_id: requestId" in js and "b.disabled = on" in js and '"starting..."' in js


def test_without_preload_the_server_is_ready_and_loads_nothing(tmp_path):
    app = create_app(tmp_path / "r.sqlite3", preload=False)
    with TestClient(app) as c:
        assert c.get("/api/setup").json()["ready"] is True
    assert app.state.store._shared == {}


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_the_server_loads_the_bots_when_it_starts(tmp_path):
    app = create_app(tmp_path / "r.sqlite3")
    with TestClient(app) as c:  # the lifespan starts the preload thread
        assert app.state.ready.wait(240), "the bots were not loaded"
        assert c.get("/api/setup").json()["ready"] is True
        shipped = {(name, games.get(name).shipped) for name in ("420", "421", "pig")}
        assert shipped <= set(app.state.store._shared)
        t = time.monotonic()
        assert c.post("/api/games", json={"game": "421", "players": 2, "seat": 1, "seed": 1}).status_code == 201
        assert time.monotonic() - t < 5  # the network is loaded: no cold start
        assert c.get("/api/records").json()["unfinished"] == 1  # the preload stored no game


# ----------------------------------------------------------------------------- /docs offline


def test_the_api_page_loads_nothing_from_another_host(client):
    page = client.get("/docs")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert re.findall(r"(?:https?:)?//[\w.-]+", page.text) == []
    assert "<script" not in page.text.lower()
    for path in (
        "/api/games",
        "/api/games/{game_id}/moves",
        "/api/records/{game_id}/replay",
        "/api/games-rules/{game}",
    ):
        assert path in page.text
    assert "NewGame" in page.text and "request_id" in page.text
    for href in re.findall(r"href='([^']+)'", page.text):
        assert href.startswith(("/", "#")), href
        if href.startswith("/"):
            assert client.get(href).status_code == 200, href


# ----------------------------------------------------------------------------- how to play


def test_the_rules_of_each_game_are_served_as_safe_html(client):
    for name in ("420", "421", "pig"):
        data = client.get(f"/api/games-rules/{name}").json()
        assert data["game"] == name and "<h3>" in data["html"] and "<script" not in data["html"]
    assert "<table>" in client.get("/api/games-rules/420").json()["html"]  # R1..R7
    assert client.get("/api/games-rules/pig").json()["ranking"] is None
    assert client.get("/api/games-rules/nope").status_code == 404


def test_the_markdown_subset_escapes_everything_else():
    html = render("# Title <script>x</script>\n\npara **bold** *it* `a<b>` & [link](http://x)\n\n- one\n- two <img>")
    assert "<script>" not in html and "&lt;script&gt;" in html
    assert "<strong>bold</strong>" in html and "<em>it</em>" in html and "<code>a&lt;b&gt;</code>" in html
    assert "<ul><li>one</li><li>two &lt;img&gt;</li></ul>" in html and "<a " not in html


def test_421s_ranking_tells_why_2_1_1_beats_6_6_5(client):
    ranking = client.get("/api/games-rules/421").json()["ranking"]
    place = {r["hand"]: r for r in ranking}
    assert len(ranking) == 56 and ranking[0] == {"hand": "4-2-1", "place": 1, "value": 10}
    assert place["2-1-1"]["place"] < place["2-2-1"]["place"] < place["6-6-5"]["place"]
    assert place["2-1-1"]["value"] == 2 and place["6-6-5"]["value"] == 1


# ----------------------------------------------------------------------------- names and words


def test_a_refused_name_gets_the_apis_reason(client):
    for reply in (
        client.get("/api/records", params={"player": "<bob>"}),
        client.post("/api/games", json={"game": "420", "player": "<bob>"}),
    ):
        assert reply.status_code == 422 and "player: a name of 1 to 40" in reply.json()["error"]
    js = (STATIC / "app.js").read_text()
    assert '$("player-error").textContent = bad ? res.data.error' in js


def test_the_pages_words():
    js = (STATIC / "app.js").read_text()
    assert "a win is not losing" not in js and "games won / lost" in js
    assert 'st.players === 2 ? "won"' in js and '"out (made 20)"' in js


# ----------------------------------------------------------------------------- replay


def test_a_finished_game_replays_step_by_step_and_rematches(client):
    gid = finish(client, game="420", players=3, bots=["optimal", "random"], seat=1, seed=5)
    replay = client.get(f"/api/records/{gid}/replay")
    assert replay.status_code == 200
    data = replay.json()
    assert data["state"]["over"] and data["record"]["seed"] == 5
    assert [s["event"] for s in data["steps"]] == data["record"]["events"]
    assert [s["text"] for s in data["steps"] if s["text"]] == data["state"]["log"]
    r = data["record"]
    again = client.post(
        "/api/games", json={"game": r["game"], "players": r["players"], "bots": r["bots"], "seat": r["seat"]}
    )
    assert again.status_code == 201
    assert again.json()["state"]["bots"] == ["optimal", "random"] and again.json()["state"]["seat"] == 1

    playing = client.post("/api/games", json={"game": "420", "players": 2, "bots": "optimal", "seed": 1, "seat": 0})
    assert client.get(f"/api/records/{playing.json()['id']}/replay").status_code == 409
    assert client.get("/api/records/nosuchgame0000000/replay").status_code == 404


# ----------------------------------------------------------------------------- in the browser


@pytest.fixture
def page_server(tmp_path):
    """The app on a free port, as tests/test_web_browser.py serves it (no preload)."""
    import threading

    uvicorn = pytest.importorskip("uvicorn", reason="the web extra is not installed")
    browser_test = pytest.importorskip("test_web_browser", reason="tests/test_web_browser.py drives Chromium")
    if browser_test.CHROMIUM is None:
        pytest.skip("no chromium binary (Debian: apt-get install chromium)")
    db = tmp_path / "records.sqlite3"
    port = browser_test.free_port()
    app = create_app(db, preload=False)
    srv = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="off"))
    thread = threading.Thread(target=srv.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not srv.started:
        assert time.monotonic() < deadline, "the server did not start"
        time.sleep(0.02)
    yield f"http://127.0.0.1:{port}", browser_test
    srv.should_exit = True
    thread.join(5)


def post(url: str, body: dict) -> dict:
    request = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}, method="POST"
    )
    with urllib.request.urlopen(request, timeout=30) as r:
        return json.load(r)


@pytest.mark.browser
@pytest.mark.timeout(240)
def test_the_page_clears_the_coach_prompts_gently_and_replays_a_game(page_server, tmp_path):
    url, browser_test = page_server
    # a finished game in the records, for the replay
    reply = post(f"{url}/api/games", {"game": "420", "players": 2, "bots": "optimal", "seat": 0, "seed": 3})
    while not reply["state"]["over"]:
        reply = post(f"{url}/api/games/{reply['id']}/moves", {"action": reply["state"]["legal"][0]["action"]})
    profile = tmp_path / "profile"
    profile.mkdir()
    b = browser_test.Browser(profile)
    try:
        b.send("Page.navigate", url=f"{url}/?delay=0")
        b.wait("document.body && document.body.dataset.ready === '1'")
        # the replay of the finished game, step by step, and its rematch
        b.wait("document.querySelector('#records .replay-open') !== null")
        b.click("#records .replay-open")
        b.wait("replay && !document.getElementById('replay-card').classList.contains('hidden')")
        steps = b.js("Number(document.getElementById('replay-slider').max)")
        assert steps >= 3
        assert b.js("document.getElementById('replay-log').children.length") == 0
        b.click("#replay-next")
        b.click("#replay-next")
        assert b.js("replay.at") == 2 and b.js("document.getElementById('replay-log').children.length") == 2
        assert b.js("document.querySelectorAll('#replay-table .seat').length") == 2
        b.click("#replay-rematch")
        b.wait("state && !busy && (state.over || state.waiting)", timeout=30)
        assert b.js("state.bots") == ["optimal"] and b.js("state.seat") == 0 and b.js("state.id") != reply["id"]

        # a turn opens with a prompt, not an error; the error comes after a try
        b.wait("state.over || !document.getElementById('turn').classList.contains('hidden')")
        if not b.js("state.over"):
            assert b.js("document.getElementById('choice').className") == "choice hint"
            assert "✗" not in b.js("document.getElementById('choice').textContent")
            b.click("#roll")
            assert "✗" in b.js("document.getElementById('choice').textContent")

        # the coach's review of a 420 game is gone after New game, in a game of 421
        b.click("#ask-coach")
        b.wait("coachData !== null")
        b.js("document.getElementById('coach-review').append(document.createElement('table'))")  # a stale review
        b.click("#new-game")
        assert b.js("document.getElementById('coach-review').children.length") == 0
        assert b.js("coachData") is None
        b.click('#game-choice button[data-game="421"]')
        b.select("#players", "3")
        assert b.js("[...document.querySelectorAll('#bots select')].map((s) => s.value)") == ["exact3", "exact3"]
        b.click("#start")
        assert b.js("document.getElementById('start').disabled") is True  # busy until the game is there
        b.wait("state && state.game === '421' && !busy", timeout=60)
        assert b.js("document.getElementById('start').disabled") is False
        assert b.js("document.getElementById('coach-review').children.length") == 0
        assert "No coach" in b.js("document.getElementById('coach-none').textContent")
        assert b.js("state.bots") == ["exact3", "exact3"]
        # How to play: 421's ranking, and the place of the hands on the table
        b.wait("document.querySelectorAll('#howto-ranking li').length > 0")
        assert b.js("document.getElementById('howto-title').textContent") == "How to play 421"
        b.wait("document.querySelector('#table .seat-line.rank') !== null || state.over")
        assert not b.errors, b.errors
    finally:
        b.close()


@pytest.mark.browser
@pytest.mark.timeout(120)
def test_on_a_phone_your_dice_and_buttons_are_on_the_first_screen(page_server, tmp_path):
    url, browser_test = page_server
    profile = tmp_path / "profile"
    profile.mkdir()
    b = browser_test.Browser(profile)
    try:
        b.send("Emulation.setDeviceMetricsOverride", width=390, height=844, deviceScaleFactor=1, mobile=True)
        b.send("Page.navigate", url=f"{url}/?delay=0")
        b.wait("document.body && document.body.dataset.ready === '1'")
        header = b.js(
            "(() => { const h = document.querySelector('header.top'); const t = document.querySelector('header h1');"
            " return [h.getBoundingClientRect().height, parseFloat(getComputedStyle(t).lineHeight) ||"
            " t.getBoundingClientRect().height]; })()"
        )
        height, line = header
        assert height <= 2 * line + 24, f"the header is {height}px tall, a line is {line}px"
        b.click('#game-choice button[data-game="420"]')
        b.select("#players", "2")
        b.select("#seat", "0")
        b.select("#bots select", "optimal")
        b.js("document.getElementById('seed').value = '11'")
        b.click("#start")
        b.wait("state && state.waiting && !busy && !document.getElementById('turn').classList.contains('hidden')")
        b.js("window.scrollTo(0, 0)")
        boxes = b.js(
            "[...document.querySelectorAll('#my-dice .my-die'), document.getElementById('roll')]"
            ".map((e) => e.getBoundingClientRect().bottom)"
        )
        assert len(boxes) == 5 and max(boxes) <= 844, boxes
        assert b.js("document.documentElement.scrollWidth") <= 390  # nothing wider than the phone
        assert not b.errors, b.errors
    finally:
        b.close()
