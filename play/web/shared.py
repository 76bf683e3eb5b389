"""Shared tables: several people (each in their own browser) and bots at one game.

=============================================  =========================================
``POST /api/tables``                           make a table: game, players, ``seats``
                                               (per seat ``"person"`` or a bot's name),
                                               ``seat`` (yours), ``player`` (your name),
                                               options, seed, ``request_id`` -> its id,
                                               every person seat's invite link (with its
                                               token), the spectator link (201)
``GET  /api/tables/{id}``                      the table as its viewer sees it (a seat's
                                               token: that seat's hand and moves; none:
                                               a spectator's); ``?since=N``: the steps
                                               after the first N
``POST /api/tables/{id}/join``                 take your seat: ``name`` (seat token)
``POST /api/tables/{id}/moves``                your move, as ``/api/games/{id}/moves``
                                               takes it, with ``turn`` (required) and
                                               the seat's token
``GET  /api/tables/{id}/events``               server-sent events: one (``event:
                                               table``, ``id:`` the table's version) each
                                               time the stored table changes (one watcher
                                               per process looks up every watched table
                                               in one query each ``poll`` s, and at once
                                               after a change made in this process)
``POST /api/tables/{id}/seats/{seat}/bot``     the creator gives an idle seat to a bot
                                               (``bot``, optional): the seat to move
                                               has not moved for ``seat_timeout`` s
=============================================  =========================================

A seat's token is sent as ``Authorization: Bearer TOKEN`` (or a JSON field
``token``).  The records keep only its SHA-256 hash; no response but the creation
(to the creator) carries a token, and the table's state names seats and their kind
(person or bot) only.  The creator's token is the token of the seat they took.

The records file is the truth, as for the one-person games (``play.web.app``): a
table in memory is brought up to the records' count of moves before it is served,
and a move counts once the records have stored it (of two moves for one turn, the
second gets 409).  A seat given to a bot is one more entry in the table's moves,
so a replay gives it to the bot at the same point of the game.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
import secrets
import threading
import time
from collections import OrderedDict
from contextlib import contextmanager
from dataclasses import dataclass, field, fields
from typing import Any, Iterator, Optional, Union

from fastapi import FastAPI, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse, StreamingResponse
from pydantic import BaseModel, ConfigDict, Field, StrictInt, StrictStr

import games
from core.cli import MAX_SEED
from core.dice import RandomDice
from core.engine import play_out
from play import AgentLoadError, check_table, derive_seed
from play.web.app import (
    ID_RE,
    LiveCache,
    PLAYER_RE,
    REQUEST_RE,
    ApiError,
    Move,
    Store,
    check_bots,
    default_bot,
    request_hash,
    web_spec,
)
from play.web.records import DuplicateRequest, Records
from play.web.table import MoveError, RecordingAgent, RecordingDice, choices, jsonable, rules_for

TOKEN_RE = re.compile(r"[A-Za-z0-9_-]{16,64}")
PERSON = "person"
SEAT_TIMEOUT = 120.0  # seconds a person to move may keep the table waiting before the creator may give the seat away
POLL = 0.25  # seconds between two looks at the records by an event stream
STREAM_SECONDS = 300.0  # an event stream ends after this; the page reconnects with Last-Event-ID
MAX_LIVE_TABLES = 500
CREATED_KEPT = 1000  # creation responses kept in memory for a repeated request id
CREATED_SECONDS = 600.0


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


# ----------------------------------------------------------------------- a table


@dataclass
class SharedTable:
    """One game at a shared table: the engine, a bot in each bot seat, None in each person's,
    and everything that happened (every action and die; the entries: each person's move or
    a seat given to a bot, in order)."""

    id: str
    spec: games.GameSpec
    created_kinds: list  # per seat as created: the bot's name, or None for a person
    kinds: list  # per seat now (a seat given to a bot has its name)
    options: dict
    seed: int
    game: Any
    narrator: Any
    agents: list
    dice: RecordingDice
    actions: list
    agent_for: Any
    entries: list = field(default_factory=list)
    steps: list = field(default_factory=list)
    view: Optional[dict] = None
    started: float = field(default_factory=time.time)
    lock: threading.RLock = field(default_factory=threading.RLock)

    @property
    def rules(self):
        return rules_for(self.spec)

    @property
    def n_players(self) -> int:
        return self.game.n_players

    @classmethod
    def start(cls, table_id: str, spec, kinds: list, seed: int, options: dict, agent_for) -> "SharedTable":
        """A new table: ``kinds`` per seat (a bot's name or None); the bot in seat ``s`` is
        ``agent_for(name, derive_seed(seed, 1 + s))`` and the dice ``RandomDice(seed)``."""
        n = len(kinds)
        actions: list = []
        dice = RecordingDice(RandomDice(seed))
        game = spec.new_game(n, dice=dice, **options)
        labels = [k or "" for k in kinds]
        table = cls(
            table_id,
            spec,
            list(kinds),
            list(kinds),
            dict(options),
            seed,
            game,
            spec.narrator(n, labels, you=None),
            [None] * n,
            dice,
            actions,
            agent_for,
        )
        for s, name in enumerate(kinds):
            if name is not None:
                table.agents[s] = table._bot(s, name)
        table._advance()
        return table

    def _bot(self, seat: int, name: str):
        agent = self.agent_for(name, derive_seed(self.seed, 1 + seat))
        check_table(agent, name, "bots", self.n_players, self.options)
        return RecordingAgent(agent, seat, self.actions)

    def _advance(self) -> list[dict]:
        play_out(self.game, self.agents, self.spec.codec, until=lambda g: self.agents[g.current_player] is None)
        return self._collect()

    def _collect(self) -> list[dict]:
        new = []
        fold = getattr(self.rules, "fold", None)
        for event in self.game.events[len(self.steps) :]:
            step = {"text": self.narrator.line(event), "event": jsonable(event)}
            if fold is not None:
                self.view = fold(self.view, step["event"])
                step["view"] = self.view
            new.append(step)
        self.steps.extend(new)
        return new

    def become(self, other: "SharedTable") -> None:
        for f in fields(self):
            if f.name != "lock":
                setattr(self, f.name, getattr(other, f.name))

    @property
    def to_move(self) -> Optional[int]:
        """The person seat the table waits for (None: over)."""
        return None if self.game.is_over else self.game.current_player

    # --- moving ----------------------------------------------------------------------
    def check_turn(self, seat: int, turn: Optional[int]) -> None:
        if self.game.is_over:
            raise MoveError("the game is over: no move is legal", 409)
        if turn is not None and turn != len(self.entries):
            raise MoveError(
                f"out of turn: this move was sent for move {turn}, the table is at move "
                f"{len(self.entries)} (reload the table)",
                409,
            )
        if self.kinds[seat] is not None:
            raise MoveError("this seat was given to a bot: its link no longer moves it", 403)
        if self.game.current_player != seat:
            raise MoveError(f"it is not your turn: {self.narrator.who(self.game.current_player)} is to move", 409)

    def play(self, seat: int, *, action=None, reroll=None, keep=None, stop=False, text=None, turn=None) -> list[dict]:
        """Play ``seat``'s move (named one of the five ways); the bots reply; returns the new steps."""
        self.check_turn(seat, turn)
        game, rules = self.game, self.rules
        try:
            if text is not None:
                parse_text = getattr(rules, "parse_text", None)
                if parse_text is None:
                    raise MoveError(f"{self.spec.name} takes no move in words here: {self.spec.how_to_move}")
                action = parse_text(game, text)
            elif action is None:
                action = rules.parse(game, seat, self.narrator, reroll=reroll, keep=keep, stop=stop)
            else:
                rules.precheck(game, action, self.narrator)
            played = len(game.events)
            self.actions.append([seat, action])
            try:
                game.apply(int(action))
            except BaseException:
                if len(game.events) == played:
                    self.actions.pop()
                raise
        except MoveError:
            raise
        except ValueError as e:  # IllegalAction and the terminal's reading errors
            raise MoveError(str(e)) from None
        self.entries.append({"seat": seat, "action": int(action)})
        return self._advance()

    def give_to_bot(self, seat: int, bot: str) -> list[dict]:
        """The person seat ``seat`` is played by ``bot`` from now on; it moves at once if it is to move."""
        if self.kinds[seat] is not None:
            raise MoveError(f"seat {seat} is already a bot's", 409)
        self.agents[seat] = self._bot(seat, bot)
        self.kinds[seat] = bot
        self.entries.append({"seat": seat, "bot": bot})
        return self._advance()

    # --- reading ---------------------------------------------------------------------
    def state(self, viewer: Optional[int], seat_rows: list[dict], *, log: bool = True) -> dict:
        """The table as ``viewer`` (a seat, or None for a spectator) sees it.  Seats carry
        names and kinds only: never a token or its hash."""
        game, rules, narrator = self.game, self.rules, self.narrator
        names = {r["seat"]: r["name"] for r in seat_rows}
        creator = next((r["seat"] for r in seat_rows if r["creator"]), None)
        to_move = self.to_move
        waiting = viewer is not None and to_move == viewer and self.kinds[viewer] is None
        hand = rules.hand(game, viewer) if waiting else None
        turn_title = getattr(rules, "turn_title", None)
        seats = []
        for s in range(self.n_players):
            person = self.created_kinds[s] is None
            seats.append(
                {
                    "seat": s,
                    "name": narrator.seat_name(s),
                    "who": narrator.who(s),
                    "kind": "bot" if self.kinds[s] is not None else PERSON,
                    "bot": self.kinds[s],
                    "player": names.get(s) if person else None,
                    "joined": bool(names.get(s)) if person else None,
                    "creator": s == creator,
                    "you": s == viewer,
                }
            )
        waiting_for = None
        if to_move is not None and self.kinds[to_move] is None:
            waiting_for = names.get(to_move) or f"{narrator.seat_name(to_move)} (not joined yet)"
        over = game.is_over
        state = {
            "id": self.id,
            "shared": True,
            "game": self.spec.name,
            "title": self.spec.title,
            "players": self.n_players,
            "seat": viewer,
            "creator": viewer is not None and viewer == creator,
            "seats": seats,
            "options": self.options,
            "seed": self.seed if over else None,
            "to_move": to_move,
            "waiting": waiting,
            "waiting_for": waiting_for,
            "turn": len(self.entries),
            "over": over,
            "outcome": game.outcome(viewer) if viewer is not None else None,
            "result": self.result_text(),
            "loser": getattr(game, "loser", None),
            "table": rules.table(game, narrator, viewer if viewer is not None else 0, self.steps),
            "hand": list(hand) if hand is not None else None,
            "legal": [{"action": a, "text": rules.describe(game, a)} for a in game.legal_actions()] if waiting else [],
            "choices": choices(rules, game, viewer) if waiting else {},
            "turn_title": turn_title(game, viewer) if waiting and turn_title is not None else None,
            "stop": rules.stop(game, viewer, narrator) if waiting else None,
            "has_stop": rules.has_stop,
            "coach": False,
            "coach_why_not": "the coach is not offered at a shared table",
            "events": len(self.steps),
        }
        if log:
            state["log"] = [s["text"] for s in self.steps if s["text"] is not None]
        return state

    def result_text(self) -> Optional[str]:
        if not self.game.is_over:
            return None
        return next((s["text"] for s in reversed(self.steps) if s["text"]), None)


# ----------------------------------------------------------------------- the store


class TableStore(LiveCache):
    """The tables in play, in memory, over the records (the truth), as ``Store`` keeps games."""

    kind = "table"

    def __init__(self, records: Records, games_store: Store, max_live: int = MAX_LIVE_TABLES):
        super().__init__(max_live)
        self.records = records
        self.agents = games_store  # its agent_for: the trained bots are loaded once for games and tables
        self.changed = lambda table_id: None  # called once a change to the table is stored (the event streams)

    def new(self, spec, kinds: list, seed: int, options: dict) -> SharedTable:
        return SharedTable.start(secrets.token_urlsafe(12), spec, kinds, seed, options, self.agents.agent_for(spec))

    def get(self, table_id: str) -> SharedTable:
        return self.cached(table_id, self._rebuild)

    def _rebuild(self, table_id: str) -> SharedTable:
        table = self.replay(self.record(table_id))
        self.remember(table)
        return table

    def record(self, table_id: str) -> dict:
        record = self.records.get_table(table_id)
        if record is None:
            raise ApiError(404, f"no such table: {table_id}")
        return record

    @contextmanager
    def serving(self, table_id: str, info: Optional[dict] = None) -> Iterator[SharedTable]:
        """The table, locked and as the records have it now (or as ``info``, its version row
        read by this request, has it)."""
        table = self.get(table_id)
        with table.lock:
            self.catch_up(table, info)
            yield table

    def catch_up(self, table: SharedTable, info: Optional[dict] = None) -> None:
        if info is not None and info["n_moves"] != len(table.entries):
            info = None  # read before this table's lock: a move stored since in this process made it stale
        now = info if info is not None else self.records.table_version(table.id)
        if now is None:
            self.forget(table)
            raise ApiError(404, f"no such table: {table.id}")
        if now["n_moves"] == len(table.entries):
            return
        try:
            table.become(self.replay(self.record(table.id)))
        except BaseException:
            self.forget(table)
            raise

    def replay(self, record: dict) -> SharedTable:
        """The table from its record: its seed, seats and every entry played again, checked
        against the recorded actions."""
        table_id = record["id"]
        try:
            spec = games.get(record["game"])
            players = spec.check_players(record["players"])
            options = spec.check_options(record["options"])
            kinds = record["kinds"]
            if not isinstance(kinds, list) or len(kinds) != players:
                raise ValueError("its seats do not match its players")
            check_bots(spec, players, options, [k for k in kinds if k is not None])
            check_bots(spec, players, options, [e["bot"] for e in record["entries"] if "bot" in e])
            table = SharedTable.start(table_id, spec, kinds, record["seed"], options, self.agents.agent_for(spec))
            table.started = record["started"]
            for entry in record["entries"]:
                if "bot" in entry:
                    table.give_to_bot(entry["seat"], entry["bot"])
                else:
                    table.play(entry["seat"], action=entry["action"])
        except ApiError as e:
            raise ApiError(409, f"table {table_id} cannot be replayed from its record: {e.message}") from None
        except (ValueError, TypeError, KeyError, IndexError, AgentLoadError) as e:
            raise ApiError(409, f"table {table_id} cannot be replayed from its record: {e}") from None
        if table.actions != record["actions"] or len(table.steps) != record["n_events"]:
            raise ApiError(
                409,
                f"table {table_id} cannot be replayed from its record: its moves do not give the recorded "
                "actions (the bots now play differently, or the row is damaged)",
            )
        return table

    def store(self, table: SharedTable, turn: int, change) -> list[dict]:
        """Make ``change`` (a move or a seat given to a bot) on ``table`` (locked, caught up) and
        store it; when the records refuse it nothing of it is kept: 409."""
        steps = self.kept(
            table,
            lambda: len(table.entries),
            change,
            lambda: self.records.save_table_move(table, turn),
            lambda e: f"move {turn} of table {table.id} was not played: {e}; reload the table",
        )
        self.changed(table.id)
        return steps

    def rebuild(self, table: SharedTable) -> None:
        try:
            table.become(self.replay(self.record(table.id)))
        except Exception:  # noqa: BLE001 - the next request tries again
            self.forget(table)


# ----------------------------------------------------------------------- the event streams' watcher


class Watcher:
    """The versions of the tables the event streams of one event loop follow.  One task reads
    them all in one query (:meth:`Records.table_versions`) every ``poll`` seconds, and at once
    for a table given to :meth:`poke` (a change stored in this process), and wakes the table's
    streams when its row changed.  It runs while a stream is open; each query runs on a
    thread of the watcher's own, not in the request threads' pool."""

    def __init__(self, records: Records, poll: float, loop: asyncio.AbstractEventLoop):
        self.records, self.poll, self.loop = records, poll, loop
        self.streams: dict[str, set[asyncio.Event]] = {}
        self.info: dict[str, Optional[dict]] = {}  # the last row read of each watched table (None: gone)
        self.poked: set[str] = set()
        self.kick = asyncio.Event()
        self.task: Optional[asyncio.Task] = None

    def watch(self, table_id: str, info: dict) -> asyncio.Event:
        """A stream of ``table_id`` (whose row was just read: ``info``) follows it: its event is
        set each time the row changes."""
        wake = asyncio.Event()
        if table_id not in self.streams:
            self.streams[table_id] = set()
            self.info[table_id] = info
        self.streams[table_id].add(wake)
        if self.task is None or self.task.done():
            self.task = self.loop.create_task(self._run())
        return wake

    def unwatch(self, table_id: str, wake: asyncio.Event) -> None:
        streams = self.streams.get(table_id)
        if streams is not None:
            streams.discard(wake)
            if not streams:
                del self.streams[table_id]
                self.info.pop(table_id, None)

    def poke(self, table_id: str) -> None:
        """(On the loop.) ``table_id`` changed: read it now, not at the next poll."""
        if table_id in self.streams:
            self.poked.add(table_id)
            self.kick.set()

    async def _run(self) -> None:
        from concurrent.futures import ThreadPoolExecutor

        executor = ThreadPoolExecutor(1, thread_name_prefix="table-watcher")
        try:
            due = self.loop.time() + self.poll
            while self.streams:
                try:
                    await asyncio.wait_for(self.kick.wait(), max(0.0, due - self.loop.time()))
                except asyncio.TimeoutError:
                    pass
                self.kick.clear()
                if self.loop.time() >= due:
                    ids = list(self.streams)
                    due = self.loop.time() + self.poll
                else:
                    ids = [t for t in self.poked if t in self.streams]
                self.poked.clear()
                if not ids:
                    continue
                try:
                    rows = await self.loop.run_in_executor(executor, self.records.table_versions, ids)
                except Exception:  # noqa: BLE001 - the records are busy or failing: the next poll tries again
                    continue
                for table_id in ids:
                    if table_id not in self.streams:
                        continue
                    info = rows.get(table_id)
                    if info != self.info.get(table_id):
                        self.info[table_id] = info
                        for wake in self.streams[table_id]:
                            wake.set()
        finally:
            executor.shutdown(wait=False)


class Watchers:
    """A :class:`Watcher` per event loop (a server has one; a test's client may run several),
    and :meth:`changed`, called by any thread when a change to a table was stored."""

    def __init__(self, records: Records, poll: float):
        self.records, self.poll = records, poll
        self.by_loop: dict[asyncio.AbstractEventLoop, Watcher] = {}
        self.lock = threading.Lock()

    def here(self) -> Watcher:
        loop = asyncio.get_running_loop()
        with self.lock:
            for old in [k for k in self.by_loop if k.is_closed()]:
                del self.by_loop[old]
            watcher = self.by_loop.get(loop)
            if watcher is None:
                watcher = self.by_loop[loop] = Watcher(self.records, self.poll, loop)
            return watcher

    def changed(self, table_id: str) -> None:
        with self.lock:
            watchers = list(self.by_loop.values())
        for watcher in watchers:
            if watcher.streams and not watcher.loop.is_closed():
                try:
                    watcher.loop.call_soon_threadsafe(watcher.poke, table_id)
                except RuntimeError:  # the loop closed meanwhile
                    pass


# ----------------------------------------------------------------------- rate limits


class RateLimit:
    """A token bucket per client address: ``burst`` requests at once, then ``per_minute``."""

    def __init__(self, burst: float, per_minute: float, what: str, max_clients: int = 10_000):
        self.burst, self.rate, self.what = float(burst), float(per_minute) / 60.0, what
        self.buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()
        self.max_clients = max_clients
        self.lock = threading.Lock()

    def take(self, client: str) -> None:
        now = time.monotonic()
        with self.lock:
            tokens, last = self.buckets.pop(client, (self.burst, now))
            tokens = min(self.burst, tokens + (now - last) * self.rate)
            if tokens < 1:
                self.buckets[client] = (tokens, now)
                wait = (1 - tokens) / self.rate if self.rate > 0 else 60.0
                raise RateLimited(
                    f"too many {self.what} from your address: at most {self.burst:g} at once and "
                    f"{self.rate * 60:g} a minute; try again in {wait:.0f} s",
                    wait,
                )
            self.buckets[client] = (tokens - 1, now)
            while len(self.buckets) > self.max_clients:
                self.buckets.popitem(last=False)


class RateLimited(ApiError):
    def __init__(self, message: str, wait: float):
        super().__init__(429, message)
        self.wait = wait


@dataclass
class Limits:
    """The rate limits (per client address) and timings of shared tables; tests lower them."""

    create_burst: float = 10
    create_per_minute: float = 10
    move_burst: float = 120
    move_per_minute: float = 600
    seat_timeout: float = SEAT_TIMEOUT
    poll: float = POLL
    stream_seconds: float = STREAM_SECONDS


# ----------------------------------------------------------------------- requests


class NewTable(BaseModel):
    """Make a shared table.  ``seats``: one per seat, ``"person"`` or a bot's name (a bot of
    ``GET /api/setup`` for this table size); ``seat``: yours (a person's); ``player``: your
    name; ``request_id``: a random id of the client's, the same for a request sent again
    (a double click makes one table)."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [
                {
                    "game": games.names()[0],
                    "seats": ["person", "person", "optimal"],
                    "seat": 0,
                    "player": "ada",
                    "request_id": "a1b2c3d4e5f6",
                }
            ]
        },
    )

    game: StrictStr = Field(max_length=10)
    players: Optional[StrictInt] = Field(None, ge=1, le=64)
    seats: list[StrictStr] = Field(min_length=1, max_length=64)
    seat: StrictInt = Field(0, ge=0, le=63)
    seed: Optional[StrictInt] = Field(None, ge=0, le=MAX_SEED)
    options: dict[StrictStr, StrictInt] = Field(default_factory=dict, max_length=8)
    player: Optional[StrictStr] = Field(None, max_length=40)
    request_id: Optional[StrictStr] = Field(None, pattern=REQUEST_RE)


class Join(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: StrictStr = Field(max_length=40)
    token: Optional[StrictStr] = Field(None, max_length=100)


class TableMove(Move):
    """A move at a shared table: as ``/api/games/{id}/moves`` takes it, ``turn`` required
    (the state's ``turn``: an old move sent again is refused), the seat's token in the
    ``Authorization`` header or here."""

    token: Optional[StrictStr] = Field(None, max_length=100)


class GiveToBot(BaseModel):
    model_config = ConfigDict(extra="forbid")
    bot: Optional[StrictStr] = Field(None, max_length=40)
    token: Optional[StrictStr] = Field(None, max_length=100)


def _name(text: Optional[str], default: str) -> str:
    name = (text or default).strip()
    if not PLAYER_RE.fullmatch(name):
        raise ApiError(422, "name: 1 to 40 letters, digits, spaces, '.', \"'\", '_' or '-'")
    return name


def check_new_table(body: NewTable) -> tuple[games.GameSpec, list, int, int, dict, str]:
    """(spec, kinds per seat, the creator's seat, seed, options, the creator's name), checked
    as a new game is: the registry's bots for this table only."""
    spec = web_spec(body.game)
    players = body.players if body.players is not None else len(body.seats)
    try:
        players = spec.check_players(players)
        options = spec.check_options(body.options)
    except ValueError as e:
        raise ApiError(422, str(e)) from None
    if len(body.seats) != players:
        raise ApiError(422, f"{len(body.seats)} seats for {players} players: give one per seat")
    kinds = [None if s == PERSON else s for s in body.seats]
    check_bots(spec, players, options, [k for k in kinds if k is not None])
    if not 0 <= body.seat < players:
        raise ApiError(422, f"seat must be in 0..{players - 1}, got {body.seat}")
    if kinds[body.seat] is not None:
        raise ApiError(422, f"your seat ({body.seat}) must be a person's, not a bot's")
    seed = body.seed if body.seed is not None else secrets.randbelow(2**31)
    return spec, kinds, body.seat, seed, options, _name(body.player, "guest")


def bearer(request: Request, body_token: Optional[str]) -> Optional[str]:
    header = request.headers.get("authorization", "")
    if header[:7].lower() == "bearer ":
        return header[7:].strip()
    return body_token


def client_of(request: Request) -> str:
    return request.client.host if request.client else "unknown"


# ----------------------------------------------------------------------- the routes


def install(app: FastAPI, records: Records, games_store: Store, limits: Limits) -> TableStore:
    """Add the shared tables' routes to ``app``; returns their store."""
    tables = TableStore(records, games_store)
    watchers = Watchers(records, limits.poll)
    tables.changed = watchers.changed
    creating = RateLimit(limits.create_burst, limits.create_per_minute, "tables made")
    moving = RateLimit(limits.move_burst, limits.move_per_minute, "moves")
    created: OrderedDict[str, tuple[float, str, dict]] = OrderedDict()  # request id -> (when, hash, response)
    create_lock = threading.Lock()

    def look(table_id: str, token: Optional[str], *, need: bool = True) -> dict:
        """One read of what a request needs first: the table's version row (``info``), its
        ``seats`` and the ``seat`` the token opens (None for no token when not ``need``);
        401 without a token, 403 for a token that opens no seat here, 404 for no table."""
        if token is None and need:
            raise ApiError(401, "this needs your seat's token (Authorization: Bearer TOKEN, from your invite link)")
        if token is not None and not TOKEN_RE.fullmatch(token):
            raise ApiError(403, "this token opens no seat at this table")
        view = records.table_view(table_id, None if token is None else token_hash(token))
        if token is not None and view["seat"] is None:
            raise ApiError(403, "this token opens no seat at this table")
        if view["info"] is None:
            raise ApiError(404, f"no such table: {table_id}")
        return view

    def links(table_id: str, token: Optional[str] = None) -> str:
        return f"/#table={table_id}" + (f"&seat={token}" if token else "")

    def creation(body: NewTable, digest: str) -> dict:
        spec, kinds, mine, seed, options, player = check_new_table(body)
        try:
            table = tables.new(spec, kinds, seed, options)
        except AgentLoadError as e:
            raise ApiError(422, str(e)) from None
        tokens = {s: secrets.token_urlsafe(24) for s, k in enumerate(kinds) if k is None}
        seat_rows = [
            {
                "seat": s,
                "token_hash": token_hash(tokens[s]) if s in tokens else None,
                "creator": s == mine,
                "name": player if s == mine else None,
            }
            for s in range(len(kinds))
        ]
        records.create_table(table, seat_rows, body.request_id, digest if body.request_id else None)
        tables.remember(table)
        with table.lock:
            state = table.state(mine, [{**r, "creator": int(r["creator"])} for r in seat_rows])
            steps = list(table.steps)
        return {
            "id": table.id,
            "seat": mine,
            "token": tokens[mine],
            "invites": [
                {"seat": s, "name": table.narrator.seat_name(s), "token": t, "link": links(table.id, t)}
                for s, t in tokens.items()
                if s != mine
            ],
            "link": links(table.id, tokens[mine]),
            "spectator": links(table.id),
            "state": state,
            "steps": steps,
        }

    @app.post("/api/tables", status_code=201, summary="Make a shared table: its invite links (with their tokens)")
    def new_table(body: NewTable, request: Request):
        digest = request_hash(body)
        with create_lock:  # one table per request id in this process; the records' unique key across processes
            now = time.monotonic()
            while created and next(iter(created.values()))[0] < now - CREATED_SECONDS:
                created.popitem(last=False)
            if body.request_id is not None and body.request_id in created:
                _, same, response = created[body.request_id]
                if same != digest:
                    raise ApiError(409, "this request_id was used for another table: send a new one")
                return response
            creating.take(client_of(request))
            try:
                response = creation(body, digest)
            except DuplicateRequest as e:
                if not e.same:
                    raise ApiError(409, "this request_id was used for another table: send a new one") from None
                raise ApiError(
                    409,
                    f"this request already made table {e.existing}; its links were in the answer to the "
                    "first request (tokens are not kept: make a new table if they are lost)",
                ) from None
            if body.request_id is not None:
                created[body.request_id] = (now, digest, response)
                while len(created) > CREATED_KEPT:
                    created.popitem(last=False)
            return response

    def view(table_id: str, token: Optional[str], since: Optional[int]) -> dict:
        seen = look(table_id, token, need=False)
        with tables.serving(table_id, seen["info"]) as table:
            viewer = seen["seat"]["seat"] if seen["seat"] else None
            state = table.state(viewer, seen["seats"], log=since is None)
            out = {"id": table.id, "state": state}
            if since is not None:
                out["steps"] = table.steps[max(0, since) :]
        info = seen["info"]
        out["version"] = info["version"]
        out["idle"] = max(0.0, time.time() - info["moved"])
        out["seat_timeout"] = limits.seat_timeout
        return out

    @app.get("/api/tables/{table_id}", summary="The table as your seat (or a spectator) sees it")
    def get_table(table_id: str, request: Request, since: Optional[int] = None):
        # JSONResponse: the state is plain JSON already (FastAPI's encoder would walk it again)
        return JSONResponse(view(table_id, bearer(request, None), since))

    @app.post("/api/tables/{table_id}/join", summary="Take your seat (its token) under your name")
    def join(table_id: str, body: Join, request: Request):
        moving.take(client_of(request))
        seen = look(table_id, bearer(request, body.token))
        seat = seen["seat"]
        name = _name(body.name, "guest")
        with tables.serving(table_id, seen["info"]) as table:
            if table.kinds[seat["seat"]] is not None:
                raise ApiError(403, "this seat was given to a bot: its link no longer takes it")
            records.take_seat(table_id, seat["seat"], name)
        watchers.changed(table_id)
        return view(table_id, bearer(request, body.token), None)

    @app.post("/api/tables/{table_id}/moves", summary="Play your seat's move")
    def table_move(table_id: str, body: TableMove, request: Request):
        moving.take(client_of(request))
        seen = look(table_id, bearer(request, body.token))
        seat = seen["seat"]["seat"]
        given = [k for k in ("action", "reroll", "keep", "text") if getattr(body, k) is not None] + (
            ["stop"] if body.stop else []
        )
        if len(given) != 1:
            raise ApiError(422, "give exactly one of action, reroll, keep, text or stop: true")
        if body.turn is None:
            raise ApiError(422, "turn: the table's turn this move is for (the state's turn) is required")
        for values in (body.reroll, body.keep):
            if values is not None and any(not 1 <= v <= 6 for v in values):
                raise ApiError(422, "dice show 1 to 6")
        with tables.serving(table_id, seen["info"]) as table:
            table.check_turn(seat, body.turn)
            move = dict(action=body.action, reroll=body.reroll, keep=body.keep, stop=bool(body.stop), text=body.text)
            steps = tables.store(table, body.turn, lambda: table.play(seat, turn=body.turn, **move))
            # the seats as read before the move (a name taken since shows in the next state)
            return JSONResponse({"id": table.id, "steps": steps, "state": table.state(seat, seen["seats"], log=False)})

    @app.post("/api/tables/{table_id}/seats/{seat}/bot", summary="The creator gives an idle seat to a bot")
    def give_to_bot(table_id: str, seat: int, request: Request, body: Optional[GiveToBot] = None):
        body = body or GiveToBot()
        moving.take(client_of(request))
        seen = look(table_id, bearer(request, body.token))
        me = seen["seat"]
        if not me["creator"]:
            raise ApiError(403, "only the table's creator may give a seat to a bot")
        with tables.serving(table_id, seen["info"]) as table:
            if not 0 <= seat < table.n_players:
                raise ApiError(404, f"no seat {seat} at this table")
            if table.kinds[seat] is not None:
                raise ApiError(409, f"seat {seat} is already a bot's")
            if table.game.is_over:
                raise ApiError(409, "the game is over")
            if table.to_move != seat:
                raise ApiError(409, "only the seat to move can be given to a bot (the others keep no one waiting)")
            idle = time.time() - seen["info"]["moved"]
            if idle < limits.seat_timeout:
                raise ApiError(
                    409,
                    f"{table.narrator.seat_name(seat)} has been to move for {idle:.0f} s: a bot may take the seat "
                    f"after {limits.seat_timeout:g} s",
                )
            bot = body.bot or default_bot(table.spec, table.n_players, table.options)
            check_bots(table.spec, table.n_players, table.options, [bot])
            turn = len(table.entries)
            steps = tables.store(table, turn, lambda: table.give_to_bot(seat, bot))
            return {"id": table.id, "steps": steps, "state": table.state(me["seat"], seen["seats"], log=False)}

    @app.get("/api/tables/{table_id}/events", summary="Server-sent events: one each time the table changes")
    async def events(table_id: str, request: Request, after: Optional[int] = None):
        if not ID_RE.fullmatch(table_id):
            raise ApiError(404, "no such table: a table id is 16 letters, digits, '-' or '_'")
        first = await run_in_threadpool(records.table_version, table_id)
        if first is None:
            raise ApiError(404, f"no such table: {table_id}")
        last_id = request.headers.get("last-event-id")
        last: Optional[int] = after
        if last_id is not None and last_id.strip().isdigit():
            last = int(last_id.strip())

        async def stream():
            nonlocal last
            yield "retry: 1000\n\n"
            watcher = watchers.here()
            wake = watcher.watch(table_id, first)
            try:
                end = time.monotonic() + limits.stream_seconds
                quiet = time.monotonic()
                info: Union[dict, None] = first
                newest = first["version"]  # the newest version read: a row read before it is not sent
                while True:
                    if info is None:
                        yield "event: gone\ndata: {}\n\n"
                        return
                    over = info["status"] == "over"
                    if info["version"] != last and info["version"] >= newest:
                        last = newest = info["version"]
                        data = {
                            "version": info["version"],
                            "turn": info["n_moves"],
                            "events": info["n_events"],
                            "over": over,
                        }
                        yield f"id: {last}\nevent: table\ndata: {json.dumps(data)}\n\n"
                        quiet = time.monotonic()
                    if over or time.monotonic() > end:
                        return
                    if time.monotonic() - quiet > 15:
                        yield ": still here\n\n"
                        quiet = time.monotonic()
                    wait = min(end, quiet + 15) - time.monotonic()
                    try:
                        await asyncio.wait_for(wake.wait(), max(0.0, wait) + 0.01)
                    except asyncio.TimeoutError:
                        continue
                    wake.clear()
                    info = watcher.info.get(table_id, info)
            finally:
                watcher.unwatch(table_id, wake)

        return StreamingResponse(
            stream(),
            media_type="text/event-stream",
            headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
        )

    app.state.tables = tables
    return tables
