"""The web table in a real browser: headless Chromium drives the page over the Chrome
DevTools protocol (``websocket-client``), clicks dice with real mouse events and plays
a two-player game of 420 to the end, then takes a screenshot.

Needs Debian's ``chromium`` (``apt-get install chromium``); skipped without it.  Set
``DICE_ARENA_SCREENSHOT=path.png`` to keep a copy of the screenshot.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import socket
import subprocess
import tempfile
import threading
import time
import urllib.request
import warnings
from pathlib import Path

import pytest

pytest.importorskip("fastapi", reason="the web extra is not installed (pip install -e '.[web]')")
pytest.importorskip("uvicorn", reason="the web extra is not installed (pip install -e '.[web]')")
websocket = pytest.importorskip("websocket", reason="websocket-client is not installed (pip install websocket-client)")

CHROMIUM = next(
    (
        p
        for p in (
            os.environ.get("CHROMIUM"),
            shutil.which("chromium"),
            shutil.which("chromium-browser"),
            shutil.which("google-chrome"),
        )
        if p
    ),
    None,
)
pytestmark = [
    pytest.mark.browser,  # left out of make check
    pytest.mark.skipif(CHROMIUM is None, reason="no chromium binary (Debian: apt-get install chromium)"),
]

FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
    "--window-size=1280,1000",
]


# ----------------------------------------------------------------------------- the server


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def server(tmp_path):
    import uvicorn

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from play.web.app import create_app

    port = free_port()
    config = uvicorn.Config(
        create_app(tmp_path / "records.sqlite3"), host="127.0.0.1", port=port, log_level="warning", lifespan="off"
    )
    srv = uvicorn.Server(config)
    thread = threading.Thread(target=srv.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not srv.started:
        assert time.monotonic() < deadline, "the server did not start"
        time.sleep(0.02)
    yield f"http://127.0.0.1:{port}"
    srv.should_exit = True
    thread.join(5)


# ----------------------------------------------------------------------------- the browser


class Browser:
    """Just enough of the DevTools protocol: evaluate, click, wait, screenshot."""

    def __init__(self, profile: Path):
        # Chromium keeps a folder of its own in TMPDIR (its singleton socket), left there when
        # it is stopped: a short one of the test's, removed on close (a socket path has at
        # most 107 characters, more than a test's tmp_path may leave)
        self.tmp = tempfile.TemporaryDirectory(prefix="chromium-")
        self.proc = subprocess.Popen(
            [CHROMIUM, *FLAGS, f"--user-data-dir={profile}", "--remote-debugging-port=0", "about:blank"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env={**os.environ, "TMPDIR": self.tmp.name},
        )
        port_file = profile / "DevToolsActivePort"
        deadline = time.monotonic() + 15
        while not (port_file.exists() and port_file.read_text().strip()):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.close()
                pytest.skip("chromium did not start its DevTools endpoint")
            time.sleep(0.05)
        port = int(port_file.read_text().split()[0])
        deadline = time.monotonic() + 10
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=2) as r:
                    pages = [t for t in json.load(r) if t["type"] == "page"]
                if pages:
                    break
            except OSError:
                pass
            assert time.monotonic() < deadline, "no page target in chromium"
            time.sleep(0.05)
        self.ws = websocket.create_connection(pages[0]["webSocketDebuggerUrl"], timeout=20, suppress_origin=True)
        self.next_id = 0
        self.errors: list[str] = []
        self.send("Runtime.enable")
        self.send("Page.enable")
        self.send("Emulation.setDeviceMetricsOverride", width=1280, height=1000, deviceScaleFactor=1, mobile=False)

    def send(self, method: str, **params):
        self.next_id += 1
        mine = self.next_id
        self.ws.send(json.dumps({"id": mine, "method": method, "params": params}))
        while True:
            message = json.loads(self.ws.recv())
            if message.get("method") == "Runtime.exceptionThrown":
                details = message["params"]["exceptionDetails"]
                self.errors.append(details.get("exception", {}).get("description") or details.get("text"))
            if message.get("id") == mine:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message.get("result", {})

    def js(self, expression: str):
        result = self.send("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in result:
            raise AssertionError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def wait(self, expression: str, timeout: float = 10.0):
        deadline = time.monotonic() + timeout
        while True:
            value = self.js(expression)
            if value:
                return value
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out waiting for {expression}; JS errors: {self.errors}")
            time.sleep(0.03)

    def click(self, selector: str) -> None:
        """A real mouse click at the middle of the element."""
        box = self.js(
            f"(() => {{ const e = document.querySelector({json.dumps(selector)}); if (!e) return null;"
            "e.scrollIntoView({block: 'center'}); const r = e.getBoundingClientRect();"
            "return [r.left + r.width / 2, r.top + r.height / 2]; })()"
        )
        assert box is not None, f"nothing matches {selector}"
        x, y = box
        for kind in ("mousePressed", "mouseReleased"):
            self.send("Input.dispatchMouseEvent", type=kind, x=x, y=y, button="left", clickCount=1)

    def select(self, selector: str, value: str) -> None:
        self.js(
            f"(() => {{ const e = document.querySelector({json.dumps(selector)}); e.value = {json.dumps(value)};"
            "e.dispatchEvent(new Event('change')); })()"
        )

    def screenshot(self, path: Path) -> None:
        data = self.send("Page.captureScreenshot", format="png", captureBeyondViewport=True)["data"]
        path.write_bytes(base64.b64decode(data))

    def close(self) -> None:
        try:
            self.ws.close()
        except Exception:  # noqa: BLE001 - closing anyway
            pass
        self.proc.terminate()
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(5)
        self.tmp.cleanup()


@pytest.fixture
def browser(tmp_path):
    profile = tmp_path / "chromium-profile"
    profile.mkdir()
    b = Browser(profile)
    yield b
    b.close()


# ----------------------------------------------------------------------------- the test


def test_a_person_plays_420_in_the_browser_with_the_coach(server, browser, tmp_path):
    b = browser
    b.send("Page.navigate", url=f"{server}/?delay=20")
    b.wait("document.body && document.body.dataset.ready === '1'")
    b.click('#game-choice button[data-game="420"]')
    b.select("#players", "2")
    b.select("#seat", "0")
    b.select("#bots select", "optimal")
    b.js("document.getElementById('seed').value = '11'")
    b.click("#start")

    # at the first decision: the dice are drawn, nothing is selected, and the page says why it cannot roll
    b.wait("state && state.waiting && !busy && !document.getElementById('turn').classList.contains('hidden')")
    assert b.js("document.querySelectorAll('#my-dice svg.die').length") == 4
    assert b.js("document.querySelectorAll('#table svg.die').length") == 8  # both hands, always visible
    assert "R2" in b.js("document.getElementById('choice').textContent")
    assert "seed" not in b.js("document.getElementById('game-meta').textContent")  # kept back while played
    turn = b.js("state.turn")
    b.click("#roll")  # illegal: not sent
    time.sleep(0.2)
    assert (
        b.js("state.turn") == turn and b.js("document.getElementById('roll').getAttribute('aria-disabled')") == "true"
    )

    # the coach, on request
    b.click("#ask-coach")
    b.wait("document.querySelectorAll('#coach-position tr.best').length > 0")
    assert "%" in b.js("document.querySelector('.coach-value').textContent")

    moves = 0
    while not b.js("state.over"):
        b.wait(
            "!busy && state && (state.over || (state.waiting && "
            "!document.getElementById('turn').classList.contains('hidden')))"
        )
        if b.js("state.over"):
            break
        # the coach's best move for this position: click exactly the dice it rerolls
        b.wait("document.getElementById('coach-position').dataset.turn === String(state.turn)")
        best = b.js("Number(document.querySelector('#coach-position tr.best').dataset.action)")
        reroll = b.js(f"Object.entries(state.choices).find(([k, c]) => c.ok && c.action === {best})[0]")
        values = [int(v) for v in reroll.split("-")] if reroll else []
        hand = b.js("state.hand")
        used = set()
        for v in values:
            i = next(j for j, h in enumerate(hand) if h == v and j not in used)
            used.add(i)
            b.click(f'#my-dice .my-die[data-i="{i}"]')
        assert b.js("document.getElementById('choice').className").endswith("ok")
        assert b.js("document.querySelector('#coach-position tr.chosen') !== null")
        before = b.js("state.turn")
        b.click("#roll")
        b.wait(f"state.turn > {before} || state.over", timeout=15)
        moves += 1
        assert moves < 200

    b.wait("!busy && !document.getElementById('result').classList.contains('hidden')")
    result = b.js("document.getElementById('result').textContent")
    assert ("You win!" in result) or ("You lose." in result)
    assert "seed 11" in b.js("document.getElementById('game-meta').textContent")  # shown once over
    b.wait(f"document.getElementById('coach-review').dataset.turn === '{moves}'")
    assert b.js("document.querySelectorAll('#coach-review tbody tr').length") == moves
    assert "0 of" in b.js("document.getElementById('coach-review').textContent")  # every move was the best
    b.wait("document.querySelectorAll('#records table.records tbody tr').length > 0")
    assert "optimal" in b.js("document.getElementById('records').textContent")
    assert b.js("document.getElementById('log').children.length") > 3
    assert not b.errors, b.errors

    shot = tmp_path / "web-420.png"
    b.screenshot(shot)
    assert shot.stat().st_size > 10_000
    if os.environ.get("DICE_ARENA_SCREENSHOT"):
        shutil.copy(shot, os.environ["DICE_ARENA_SCREENSHOT"])


def test_a_person_plays_pig_in_the_browser_from_the_generic_view(server, browser, tmp_path):
    """Pig has no drawing of its own: the page draws the seats, scores, die and turn total
    the server sends, and the legal moves as buttons in the game's words."""
    b = browser
    b.send("Page.navigate", url=f"{server}/?delay=0")
    b.wait("document.body && document.body.dataset.ready === '1'")
    b.click('#game-choice button[data-game="pig"]')
    b.select("#players", "2")
    b.select("#seat", "0")
    b.select("#bots select", "hold20")
    b.js("document.getElementById('opt-goal').value = '30'")
    b.js("document.getElementById('seed').value = '4'")
    b.click("#start")
    b.wait(
        "state && !busy && (state.over || (state.waiting && "
        "!document.getElementById('turn').classList.contains('hidden')))"
    )
    assert b.js("document.querySelectorAll('#table .seat').length") == 2
    assert b.js("document.querySelector('#table .centre .pot-count') !== null")
    assert b.js("document.getElementById('my-dice').classList.contains('hidden')")
    moves = 0
    while not b.js("state.over"):
        b.wait(
            "!busy && state && (state.over || (state.waiting && "
            "!document.getElementById('turn').classList.contains('hidden')))"
        )
        if b.js("state.over"):
            break
        texts = b.js("[...document.querySelectorAll('#legal button.move')].map((e) => e.textContent)")
        assert texts[0] == "roll" and texts[1].startswith("bank ")
        if moves == 0:  # the coach, once: its best move is one of the buttons
            b.click("#ask-coach")
            b.wait("document.querySelectorAll('#coach-position tr.best').length > 0")
        bank = b.js("state.table.centre.value >= 10")
        before = b.js("state.turn")
        b.click(f'#legal button.move[data-action="{1 if bank else 0}"]')
        b.wait(f"state.turn > {before} || state.over", timeout=15)
        moves += 1
        assert moves < 200
    b.wait("!busy && !document.getElementById('result').classList.contains('hidden')")
    result = b.js("document.getElementById('result').textContent")
    assert ("You win!" in result) or ("You lose." in result)
    assert b.js("document.querySelectorAll('#table .seat.won').length") == 1
    assert b.js("document.getElementById('log').children.length") > 3
    assert not b.errors, b.errors
    shot = tmp_path / "web-pig.png"
    b.screenshot(shot)
    assert shot.stat().st_size > 10_000
    if os.environ.get("DICE_ARENA_SCREENSHOT_PIG"):
        shutil.copy(shot, os.environ["DICE_ARENA_SCREENSHOT_PIG"])
