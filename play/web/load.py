"""``python -m play.web.load``: play many shared tables at once against the web server and
report moves per second, the move latency and the errors, then check the records.

It starts the server itself (or targets one with ``--url``), makes ``--tables`` shared
tables of two people and one bot (``--game``, ``--bot``), and plays them all at once
with one asyncio httpx client: each person is a task with its own seat token that
learns it is to move from the table's event stream (``--watch events``, as the page
does) or by reading the table (``--watch poll``), and plays a random legal move from
the state's ``legal`` list (a ``random.Random`` per seat from ``--seed``: the games are
the same from run to run, only their timing differs).  Once per table, when a person is
to move, it first sends the same move five wrong ways (no token: a spectator; a token
of no seat; another table's seat token; the other person's token; its own token with a
stale turn): each must be refused with a 4xx.

At the end every table must be over; with the records file (``--db``, which the
started server uses) each table's record must hold exactly the moves the people were
told were played (none lost, none more) and :func:`play.web.records.replay_actions`
must give the recorded events.  The exit code is 1 when any of that fails (or a
request failed), else 0; the latency aim (``--aim``, p99 in ms) is reported, not
enforced.

With ``--workers N`` this command starts N server processes on N ports over one
records file or database (``--db``: a SQLite file, by default a new one, or a
``postgresql://`` URL) and gives each table to one of them (``--mix``: every request to any of them, as
a balancer without sticky sessions would, so the servers catch up on each other's
moves).  Its own servers raise the shared tables' rate limits (``Limits``: every
request comes from 127.0.0.1); a server given with ``--url`` keeps its own limits.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import secrets
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional, Sequence, TextIO


import games
from play.web.database import is_url

WIDTH = 80
ROOT = Path(__file__).resolve().parents[2]
BAD_KINDS = ("no token", "wrong token", "other table", "other seat", "stale turn")
BAD_STATUS = {"no token": 401, "wrong token": 403, "other table": 403, "other seat": 409, "stale turn": 409}

# The server this command starts: the app of ``python -m play web`` with the rate limits
# raised (the CLI has no flag for them), on a port the system picks, printed on stdout.
SERVER = """
import socket, sys
import uvicorn
from play.web.app import create_app
from play.web.shared import Limits
db, host = sys.argv[1], sys.argv[2]
big = 1e9
app = create_app(db, limits=Limits(create_burst=big, create_per_minute=big, move_burst=big, move_per_minute=big))
sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
sock.bind((host, 0))
sock.listen(2048)
print(sock.getsockname()[1], flush=True)
uvicorn.Server(uvicorn.Config(app, log_level="warning")).run(sockets=[sock])
"""


# ----------------------------------------------------------------------- figures


def percentile(values: Sequence[float], q: float) -> float:
    """The nearest-rank ``q`` percentile (0..100) of ``values``; 0 for none."""
    if not values:
        return 0.0
    ordered = sorted(values)
    rank = max(1, -(-len(ordered) * q // 100))
    return ordered[int(min(rank, len(ordered))) - 1]


@dataclass
class Table:
    index: int
    base: str
    id: str = ""
    tokens: dict = field(default_factory=dict)
    first: Optional[dict] = None  # the creator's state from the creation
    accepted: int = 0  # moves the people were told were played
    over: bool = False
    probed: bool = False
    result: Optional[str] = None


@dataclass
class Run:
    """One load run's settings and figures."""

    game: str = field(default_factory=lambda: games.names()[0])  # the first registered game
    tables: int = 100
    bot: str = "optimal"
    seed: int = 1
    watch: str = "events"
    poll: float = 0.1
    think: float = 0.0
    mix: bool = False
    timeout: float = 600.0
    bases: list = field(default_factory=list)
    items: list = field(default_factory=list)
    move_ms: list = field(default_factory=list)
    read_ms: list = field(default_factory=list)
    make_ms: list = field(default_factory=list)
    errors: dict = field(default_factory=dict)  # kind -> [count, first message]
    bad: dict = field(default_factory=lambda: {k: [0, 0, 0] for k in BAD_KINDS})  # refused, accepted, other
    made_s: float = 0.0
    played_s: float = 0.0

    def error(self, kind: str, message: str) -> None:
        entry = self.errors.setdefault(kind, [0, message])
        entry[0] += 1

    def base_of(self, table: Table) -> str:
        return random.choice(self.bases) if self.mix else table.base


class Failed(Exception):
    """A request that failed (status or transport); already counted."""


def auth(token: Optional[str]) -> dict:
    return {"Authorization": f"Bearer {token}"} if token else {}


async def call(run: Run, client, method: str, url: str, kind: str, *, token=None, body=None, times=None):
    """The JSON answer of one request that must succeed (2xx); counts and raises :class:`Failed` if not."""
    start = time.perf_counter()
    try:
        response = await client.request(method, url, json=body, headers=auth(token))
    except Exception as e:  # noqa: BLE001 - a transport error is one of the figures
        run.error(f"{kind}: {type(e).__name__}", str(e)[:60])
        raise Failed from None
    if times is not None:
        times.append((time.perf_counter() - start) * 1000)
    if not 200 <= response.status_code < 300:
        try:
            message = str(response.json().get("error"))
        except ValueError:
            message = response.text
        run.error(f"{kind}: {response.status_code}", message[:60])
        raise Failed
    return response.json()


# ----------------------------------------------------------------------- a table's people


async def make_table(run: Run, client, table: Table) -> None:
    body = {
        "game": run.game,
        "seats": ["person", "person", run.bot],
        "seat": 0,
        "player": f"p{table.index}a",
        "seed": random.Random(f"{run.seed}/{table.index}").randrange(2**31),
        "request_id": f"load-{secrets.token_hex(8)}",
    }
    made = await call(run, client, "POST", f"{table.base}/api/tables", "make", body=body, times=run.make_ms)
    table.id = made["id"]
    table.tokens = {made["seat"]: made["token"], **{i["seat"]: i["token"] for i in made["invites"]}}
    table.first = made["state"]


async def probe(run: Run, client, table: Table, seat: int, state: dict) -> None:
    """The move ``seat`` is to play, sent five wrong ways: each must be refused (4xx)."""
    table.probed = True
    others = [t for t in run.items if t.id and t is not table]
    other_seat = next(s for s in table.tokens if s != seat)
    action = state["legal"][0]["action"]
    turn = state["turn"]
    tries = [
        ("no token", None, turn),
        ("wrong token", secrets.token_urlsafe(24), turn),
        ("other table", others[0].tokens[0] if others else secrets.token_urlsafe(24), turn),
        ("other seat", table.tokens[other_seat], turn),
        ("stale turn", table.tokens[seat], turn - 1 if turn > 0 else turn + 1),
    ]
    for kind, token, at in tries:
        url = f"{run.base_of(table)}/api/tables/{table.id}/moves"
        try:
            response = await client.post(url, json={"action": action, "turn": at}, headers=auth(token))
            status = response.status_code
        except Exception:  # noqa: BLE001
            status = 0
        counts = run.bad[kind]
        counts[0 if 400 <= status < 500 else 1 if 200 <= status < 300 else 2] += 1
        if status != BAD_STATUS[kind] and 400 <= status < 500:
            run.error(f"bad move '{kind}': {status}", f"expected {BAD_STATUS[kind]}")


async def act(run: Run, client, table: Table, seat: int, state: dict, rng: random.Random) -> dict:
    """While ``seat`` is to move: play a random legal move (the bot replies within the request)."""
    while state["waiting"] and not state["over"]:
        if not table.probed:
            await probe(run, client, table, seat, state)
        action = rng.choice(state["legal"])["action"]
        if run.think:
            await asyncio.sleep(run.think)
        url = f"{run.base_of(table)}/api/tables/{table.id}/moves"
        body = {"action": action, "turn": state["turn"]}
        reply = await call(run, client, "POST", url, "move", token=table.tokens[seat], body=body, times=run.move_ms)
        table.accepted += 1
        state = reply["state"]
    if state["over"]:
        table.over = True
        table.result = state.get("result")
    return state


async def read(run: Run, client, table: Table, seat: int) -> dict:
    url = f"{run.base_of(table)}/api/tables/{table.id}?since=1000000"  # the state, without the log or steps
    return (await call(run, client, "GET", url, "read", token=table.tokens[seat], times=run.read_ms))["state"]


async def events(run: Run, client, table: Table):
    """The table's versions from its event stream, reconnecting after the last one seen (a
    failed connection is counted and tried again, at most 5 times in a row: then :class:`Failed`)."""
    last, failures = None, 0
    while True:
        url = f"{run.base_of(table)}/api/tables/{table.id}/events" + (f"?after={last}" if last is not None else "")
        name, ended = None, False
        try:
            async with client.stream("GET", url) as response:
                if response.status_code != 200:
                    run.error(f"events: {response.status_code}", (await response.aread()).decode()[:60])
                    raise Failed
                async for line in response.aiter_lines():
                    if line.startswith("event:"):
                        name = line[6:].strip()
                    elif line.startswith("data:") and name == "table":
                        data = json.loads(line[5:])
                        last, failures = data["version"], 0
                        ended = data["over"]
                        yield data
                    elif line.startswith("data:") and name == "gone":
                        run.error("events: gone", "the table is no longer in the records")
                        return
        except Exception as e:  # noqa: BLE001 - counted, then tried again
            if not isinstance(e, Failed):
                run.error(f"events: {type(e).__name__}", str(e)[:60])
            failures += 1
            if failures > 5:
                raise Failed from None
            await asyncio.sleep(0.1 * failures)
        if ended:
            return


async def person(run: Run, client, table: Table, seat: int) -> None:
    """One person at the table: join, then play each time it is to move, until the game is over
    (a failed request is counted and the table read again, at most 5 times in a row)."""
    rng = random.Random(f"{run.seed}/{table.index}/{seat}")
    joined = seat == 0
    state = table.first if joined else None
    stream = None
    failures = 0
    try:
        while failures <= 5:
            try:
                if not joined:
                    url = f"{run.base_of(table)}/api/tables/{table.id}/join"
                    body = {"name": f"p{table.index}b"}
                    state = (await call(run, client, "POST", url, "join", token=table.tokens[seat], body=body))["state"]
                    joined = True
                if state is None:
                    state = await read(run, client, table, seat)
                state = await act(run, client, table, seat, state, rng)
                if state["over"]:
                    return
                if run.watch == "events":
                    stream = stream or events(run, client, table)
                    try:  # a change of the table's turn (or its end): not a join, not this person's own move
                        while True:
                            news = await stream.__anext__()
                            if news["turn"] != state["turn"] or news["over"]:
                                break
                    except StopAsyncIteration:
                        stream = None
                else:
                    await asyncio.sleep(run.poll)
                state = None
                failures = 0
            except Failed:
                failures += 1
                state = None
                if stream is not None:
                    await stream.aclose()
                    stream = None
                await asyncio.sleep(0.1 * failures)
    finally:
        if stream is not None:
            await stream.aclose()


async def play(run: Run, transport=None) -> None:
    """Make the tables and play them all at once (``transport``: an httpx transport, e.g. an app
    in this process).  Each table has a client of its own: one pool of thousands of connections
    costs httpcore time in proportion to their number at every request."""
    import ssl
    from contextlib import AsyncExitStack

    import httpx

    run.items = [Table(i, run.bases[i % len(run.bases)]) for i in range(run.tables)]
    limits = httpx.Limits(max_connections=None, max_keepalive_connections=None)
    timeout = httpx.Timeout(60.0, connect=30.0)
    verify = ssl.create_default_context()
    async with AsyncExitStack() as stack:
        clients = [
            await stack.enter_async_context(
                httpx.AsyncClient(transport=transport, limits=limits, timeout=timeout, verify=verify)
            )
            for _ in run.items
        ]
        start = time.perf_counter()
        made = await asyncio.gather(
            *(make_table(run, c, t) for c, t in zip(clients, run.items)), return_exceptions=True
        )
        run.made_s = time.perf_counter() - start
        start = time.perf_counter()
        tasks = [
            asyncio.ensure_future(person(run, c, t, s))
            for c, t, m in zip(clients, run.items, made)
            if m is None and t.id
            for s in (0, 1)
        ]
        if tasks:
            _, pending = await asyncio.wait(tasks, timeout=run.timeout)
            for task in pending:
                task.cancel()
            if pending:
                run.error("timeout", f"{len(pending)} people still playing after {run.timeout:g} s")
                await asyncio.gather(*pending, return_exceptions=True)
        run.played_s = time.perf_counter() - start


# ----------------------------------------------------------------------- checking


def check_records(run: Run, db: Optional[str]) -> dict:
    """Per table: over, and (with the records file) its stored person moves against the people's
    count, and its replay against its recorded events."""
    out = {"over": sum(t.over for t in run.items), "checked": 0, "replayed": 0, "lost": 0, "extra": 0, "bad": []}
    if db is None:
        return out
    from play.web.records import Records, replay_actions

    records = Records(db)
    for t in run.items:
        if not t.id:
            continue
        record = records.get_table(t.id)
        if record is None:
            out["bad"].append(f"{t.id}: not in the records")
            continue
        out["checked"] += 1
        stored = sum(1 for e in record["entries"] if "action" in e)
        out["lost"] += max(0, t.accepted - stored)
        out["extra"] += max(0, stored - t.accepted)
        if record["status"] != "over":
            out["bad"].append(f"{t.id}: {record['status']} in the records")
            continue
        try:
            same = replay_actions(record) == record["events"]
        except Exception as e:  # noqa: BLE001
            out["bad"].append(f"{t.id}: replay fails ({e})")
            continue
        if same:
            out["replayed"] += 1
        else:
            out["bad"].append(f"{t.id}: its replay ends elsewhere")
    return out


# ----------------------------------------------------------------------- servers


def cpu_seconds(pid: int) -> Optional[float]:
    try:
        parts = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(parts[11]) + int(parts[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


class Servers:
    """``n`` server processes on one records file, each on its own port."""

    def __init__(self, n: int, db: str, folder: str, host: str = "127.0.0.1"):
        self.procs: list[subprocess.Popen] = []
        self.bases: list[str] = []
        self.logs: list[Path] = []
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
        for i in range(n):
            log = Path(folder) / f"server-{i}.log"
            self.logs.append(log)
            with open(log, "wb") as err:
                self.procs.append(
                    subprocess.Popen(
                        [sys.executable, "-c", SERVER, db, host],
                        stdout=subprocess.PIPE,
                        stderr=err,
                        stdin=subprocess.DEVNULL,
                        cwd=ROOT,
                        env=env,
                    )
                )
        for proc, log in zip(self.procs, self.logs):
            line = proc.stdout.readline().decode().strip()
            if not line.isdigit():
                self.stop()
                tail = log.read_text(errors="replace").strip().splitlines()[-3:]
                raise RuntimeError("a server did not start: " + (" | ".join(tail) or f"exit {proc.poll()}"))
            self.bases.append(f"http://{host}:{line}")

    def settle(self, most: float = 60.0) -> float:
        """Wait (at most ``most`` s) until the servers are idle: at start each loads its trained bots
        in the background, which would slow the first tables down; returns the seconds waited."""
        start = time.perf_counter()
        before = self.cpu()
        while time.perf_counter() - start < most:
            time.sleep(0.5)
            now = self.cpu()
            if all(a is None or b is None or b - a < 0.05 for a, b in zip(before, now)):
                break
            before = now
        return time.perf_counter() - start

    def cpu(self) -> list[Optional[float]]:
        return [cpu_seconds(p.pid) for p in self.procs]

    def stop(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                proc.send_signal(signal.SIGINT)
        for proc in self.procs:
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            if proc.stdout:
                proc.stdout.close()


# ----------------------------------------------------------------------- the report


def ms(value: float) -> str:
    return f"{value:.0f}" if value >= 100 else f"{value:.1f}"


def report(run: Run, checks: dict, out: TextIO, aim: float, db: Optional[str], cpu: str = "") -> bool:
    """Print the figures (80 columns); True when nothing failed."""
    moves = len(run.move_ms)
    p = {q: percentile(run.move_ms, q) for q in (50, 90, 99, 100)}
    made = sum(1 for t in run.items if t.id)
    lines = [
        f"made    {made}/{run.tables} tables in {run.made_s:.1f} s (p50 {ms(percentile(run.make_ms, 50))} ms, "
        f"p99 {ms(percentile(run.make_ms, 99))} ms)",
        f"played  {moves} moves in {run.played_s:.1f} s: {moves / run.played_s if run.played_s else 0:.1f} moves/s"
        f" ({checks['over']}/{made} tables over)",
        f"move    p50 {ms(p[50])}  p90 {ms(p[90])}  p99 {ms(p[99])}  max {ms(p[100])} ms",
        f"read    p50 {ms(percentile(run.read_ms, 50))}  p99 {ms(percentile(run.read_ms, 99))} ms "
        f"({len(run.read_ms)} GETs of a table, --watch {run.watch})",
    ]
    if cpu:
        lines.append(cpu)
    refused = sum(c[0] for c in run.bad.values())
    accepted = sum(c[1] for c in run.bad.values())
    other = sum(c[2] for c in run.bad.values())
    sent = refused + accepted + other
    lines.append(f"wrong   {refused}/{sent} refused (4xx), {accepted} accepted, {other} other")
    short = [f"{k} {run.bad[k][0]}/{sum(run.bad[k])}" for k in BAD_KINDS if run.bad[k][0] != sum(run.bad[k])]
    lines.append("        " + (", ".join(short) if short else "each: " + ", ".join(BAD_KINDS)))
    errors = sum(n for n, _ in run.errors.values())
    lines.append(f"errors  {errors}")
    for kind, (n, message) in sorted(run.errors.items(), key=lambda kv: -kv[1][0])[:6]:
        lines.append(f"        {n} x {kind}: {message}"[:WIDTH])
    if db is not None:
        lines.append(
            f"records {checks['replayed']}/{checks['checked']} replay to their recorded end; "
            f"{checks['lost']} lost moves, {checks['extra']} unasked"
        )
        for bad in checks["bad"][:5]:
            lines.append(f"        {bad}"[:WIDTH])
    else:
        lines.append("records not read (no --db): lost moves and replays unchecked")
    ok = (
        made == run.tables
        and checks["over"] == made
        and errors == 0
        and accepted == 0
        and other == 0
        and (db is None or (checks["replayed"] == made and not checks["lost"] and not checks["extra"]))
    )
    aim_met = p[99] < aim
    lines.append(
        f"result  {'OK' if ok else 'FAILED'}; p99 {ms(p[99])} ms {'<' if aim_met else '>='} {aim:g} ms: "
        f"aim {'met' if aim_met and ok else 'NOT met'}"
    )
    for line in lines:
        print(line[:WIDTH], file=out)
    return ok


# ----------------------------------------------------------------------- the command


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m play.web.load",
        description="Play many shared tables (2 people and a bot each) at once against the web server; "
        "print moves per second, the move latency and the errors; check every table's record.",
    )
    p.add_argument("--url", help="a running server to load (default: start one; its rate limits stay its own)")
    p.add_argument(
        "--db",
        help="the records: a SQLite file or a postgresql:// URL (default: a new file in a temporary folder; "
        "with --url: the server's, to check it)",
    )
    p.add_argument("--workers", type=int, default=1, help="server processes to start on the one --db (default 1)")
    p.add_argument("--mix", action="store_true", help="send each request to any server, not the table's own")
    p.add_argument("--game", default=games.names()[0], help=f"the game (default {games.names()[0]})")
    p.add_argument("--tables", type=int, default=100, help="tables played at once (default 100)")
    p.add_argument("--bot", default="optimal", help="the bot in the third seat (default optimal)")
    p.add_argument("--seed", type=int, default=1, help="the tables' seeds and the people's moves (default 1)")
    p.add_argument(
        "--watch",
        choices=("events", "poll"),
        default="events",
        help="how a person learns it is to move: the event stream (default) or reading the table",
    )
    p.add_argument("--poll", type=float, default=0.1, help="seconds between two reads with --watch poll")
    p.add_argument("--think", type=float, default=0.0, help="seconds a person takes before each move (default 0)")
    p.add_argument("--timeout", type=float, default=600.0, help="give up on the tables after this (s)")
    p.add_argument("--aim", type=float, default=250.0, help="the p99 move latency aimed at, in ms (default 250)")
    return p


def main(argv: Optional[Sequence[str]] = None, out: TextIO = sys.stdout) -> int:
    args = parser().parse_args(argv)
    if args.tables < 1 or args.workers < 1:
        print("python -m play.web.load: error: --tables and --workers must be at least 1", file=sys.stderr)
        return 2
    run = Run(
        game=args.game,
        tables=args.tables,
        bot=args.bot,
        seed=args.seed,
        watch=args.watch,
        poll=args.poll,
        think=args.think,
        mix=args.mix,
        timeout=args.timeout,
    )
    print(
        f"load    {args.tables} tables of {args.game}: person, person, {args.bot}; seed {args.seed}; "
        f"--watch {args.watch}" + (f"; --think {args.think:g}" if args.think else ""),
        file=out,
    )
    with tempfile.TemporaryDirectory(prefix="dice-arena-load-") as folder:
        servers = None
        db = args.db
        if args.url:
            run.bases = [u.rstrip("/") for u in args.url.split(",")]
            print(f"server  {', '.join(run.bases)} (its own rate limits)"[:WIDTH], file=out)
        else:
            db = db or str(Path(folder) / "records.sqlite3")
            try:
                servers = Servers(args.workers, db, folder)
            except RuntimeError as e:
                print(f"python -m play.web.load: error: {e}", file=sys.stderr)
                return 2
            run.bases = servers.bases
            waited = servers.settle()
            ports = ", ".join(b.rsplit(":", 1)[1] for b in run.bases)
            kind = "PostgreSQL database" if is_url(db) else "SQLite file"
            print(f"server  {args.workers} x play.web.app on one {kind}, rate limits raised", file=out)
            if args.workers > 1:
                how = "each request to any of them (--mix)" if args.mix else "each table on one of them"
                print(f"        ports {ports}"[:WIDTH], file=out)
                print(f"        {how}", file=out)
            else:
                print(f"        port {ports}", file=out)
            print(f"        idle after {waited:.1f} s (each server loads its bots at start)", file=out)
        try:
            cpu0 = time.process_time(), servers.cpu() if servers else []
            asyncio.run(play(run))
            cpu_line = ""
            if servers:
                used = [(b or 0) - (a or 0) for a, b in zip(cpu0[1], servers.cpu())]
                cpu_line = (
                    f"cpu     client {time.process_time() - cpu0[0]:.1f} s, server "
                    + " + ".join(f"{u:.1f}" for u in used)
                    + f" s over {run.made_s + run.played_s:.1f} s"
                )
        finally:
            if servers:
                servers.stop()
        checks = check_records(run, db)
        ok = report(run, checks, out, args.aim, db, cpu_line)
    return 0 if ok else 1


if __name__ == "__main__":
    from core.cli import run_interruptible

    run_interruptible(main)
