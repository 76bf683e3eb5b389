"""The web table: a FastAPI app serving the page (``static/``) and a JSON API under ``/api/``.

=======================================  ==============================================
``GET  /api/setup``                      the games, their bots by table size, options
``POST /api/games``                      start a game: game, players, bots, seat, seed,
                                         options, player -> id and state (201)
``GET  /api/games/{id}``                 its state: table, whose turn, legal moves,
                                         every choice of dice (with the reason it is
                                         refused), the narration so far, the result
``POST /api/games/{id}/moves``           play a move: ``action`` (an index), or
                                         ``reroll`` / ``keep`` (dice values), or
                                         ``stop``, or ``text`` (the game's words, as
                                         typed in the terminal); optional ``turn``
                                         -> the new steps (one per event, with its
                                         text) and state
``GET  /api/games/{id}/coach``           exact values of the position's moves and a
                                         review of the person's moves (two players)
``GET  /api/records``                    a person's record against each bot line-up
``GET  /api/records/{id}``               one game's record (actions, dice, events; the
                                         seed once the game is over)
``GET  /api/records/{id}/replay``        a finished game again: every step with its text
                                         and the final state, for the page's replay
``GET  /api/games-rules/{game}``         the game's rules (its ``rules.md`` as HTML) and,
                                         where the game ranks hands (421), the ranking
=======================================  ==============================================

Shared tables (several people and bots at one game, ``/api/tables/...``) are
``play.web.shared``'s routes, added by :func:`create_app`.  ``request_id`` (a random id
of the client's) makes a request sent twice start one game.

``/docs`` lists the routes and their schemas from ``/openapi.json`` in a page made here,
with no script and nothing loaded from another host (FastAPI's own Swagger UI would fetch
its scripts from a CDN: a blank page offline).

When the server starts (the app's lifespan; ``create_app(preload=False)`` skips it) a
thread loads what the first games need: the shipped networks and each table's default
bots, and the coach's exact tables, by playing each table's opening once.  ``/api/setup``
says ``"ready"`` once it is done; a game started before waits only for what it uses.

The records file is the truth: any number of servers may share one (``--db``).
Each serves a game as the file has it (catching up on moves another server
stored), and a move counts once the file has stored it; of two moves sent for the
same turn through two servers, the second gets 409 and nothing of it is kept.
The seed of a game in play is never sent (it predicts every roll to come).

Every error is a JSON ``{"error": message}`` with a 4xx status: 400 for a body
that is not valid JSON, 404 for an unknown game, 409 for a move out of turn, after
the end or already played through another server, or a game whose record is
damaged (the message names it; the other games play on), 413 for a body over 64
KB (refused before it is read further), 415 for a body sent as anything but JSON,
422 for a move the rules forbid (the message is the rule, in the terminal's
words) or a field out of range; 503 when the records file cannot be used at all.
Nothing the client sends is used as a path, a shell word or a piece of SQL:
bot names must be the registry's (never a checkpoint path), ids are checked
against their alphabet and looked up in a dict or with a bound SQL parameter.
"""

from __future__ import annotations

import hashlib
import html
import json
import math
import re
import secrets
import threading
from collections import OrderedDict
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator, Optional, Union

from fastapi import FastAPI, Query, Request
from fastapi import Path as FastAPIPath
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, HTMLResponse, JSONResponse
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt, StrictStr, ValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException

import games
from core.cli import MAX_SEED  # as `python -m play --seed` takes, so the terminal can replay a web game
from core.files import load_json
from play import AgentLoadError, default_opponent, load_agent
from play.web.howto import how_to_play
from play.web.records import DamagedGame, DuplicateRequest, MoveConflict, Records, default_db_path
from play.web.table import MoveError, WebGame, rules_for

STATIC = Path(__file__).resolve().parent / "static"
MAX_BODY = 64 * 1024
MAX_LIVE_GAMES = 500  # games kept in memory; older ones are rebuilt from the records when asked for
ID_RE = re.compile(r"[A-Za-z0-9_-]{16,32}")
PLAYER_RE = re.compile(r"[\w .'-]{1,40}")
REQUEST_RE = r"^[A-Za-z0-9_-]{8,64}$"


class ApiError(Exception):
    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status, self.message = status, message


# ----------------------------------------------------------------------- requests


class NewGame(BaseModel):
    """Start a game.  ``bots``: one name (every other seat) or one per other seat, clockwise
    from yours; ``seat``: 0-based, random when left out; ``seed``: the dice (and random bots),
    drawn when left out; ``options``: the game's (421: ``{"pot": 15}``); ``player``: your
    name, for your record; ``request_id``: a random id of the client's (8 to 64 letters,
    digits, '-' or '_'), the same when the request is sent again: one game is made, and
    the request sent again gets that game as it is now."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [
                {"game": games.names()[0], "players": 2, "bots": ["optimal"], "seat": 0, "seed": 7, "player": "ada"}
            ]
        },
    )

    game: StrictStr = Field(max_length=10)
    players: Optional[StrictInt] = Field(None, ge=1, le=64)
    bots: Optional[Union[StrictStr, list[StrictStr]]] = Field(None, max_length=64)
    seat: Optional[StrictInt] = Field(None, ge=0, le=63)
    seed: Optional[StrictInt] = Field(None, ge=0, le=MAX_SEED)
    options: dict[StrictStr, StrictInt] = Field(default_factory=dict, max_length=8)
    player: Optional[StrictStr] = Field(None, max_length=40)
    request_id: Optional[StrictStr] = Field(None, pattern=REQUEST_RE)


def request_hash(body: BaseModel) -> str:
    """A request's fingerprint but its ``request_id``: the same id sent with another request is refused."""
    return hashlib.sha256(json.dumps(body.model_dump(exclude={"request_id"}), sort_keys=True).encode()).hexdigest()


class Move(BaseModel):
    """One of: ``action`` (an index from ``legal``), ``reroll`` (the dice values to reroll),
    ``keep`` (the dice values to keep, the rest rerolled), ``stop: true`` (421's leader),
    ``text`` (a move in the game's words as the terminal reads them, Pig's "roll" or "bank").
    ``turn`` (the state's ``turn``) refuses a move sent twice or from a stale page."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [
                {"reroll": [5, 1], "turn": 0},
                {"keep": [6, 6]},
                {"stop": True},
                {"action": 3},
                {"text": "roll"},
            ]
        },
    )

    action: Optional[StrictInt] = Field(None, ge=0, le=1000)
    reroll: Optional[list[StrictInt]] = Field(None, max_length=8)
    keep: Optional[list[StrictInt]] = Field(None, max_length=8)
    stop: Optional[StrictBool] = None
    text: Optional[StrictStr] = Field(None, max_length=40)
    turn: Optional[StrictInt] = Field(None, ge=0, le=1_000_000)


# ----------------------------------------------------------------------- the store


class LiveCache:
    """What is in play, in memory, most recently used last (at most ``max_live``), over the
    records: :meth:`cached` gives the one in memory or, once at a time, rebuilds it."""

    kind = "game"  # the word in a 404

    def __init__(self, max_live: int):
        self.max_live = max_live
        self.live: OrderedDict[str, Any] = OrderedDict()
        self.lock = threading.Lock()
        self._restoring = threading.Lock()

    def remember(self, item) -> None:
        with self.lock:
            self.live[item.id] = item
            self.live.move_to_end(item.id)
            while len(self.live) > self.max_live:
                self.live.popitem(last=False)

    def forget(self, item) -> None:
        with self.lock:
            if self.live.get(item.id) is item:
                del self.live[item.id]

    def rebuild(self, item) -> None:  # pragma: no cover - each store makes its own again
        raise NotImplementedError

    def kept(
        self,
        item,
        size: Callable[[], Any],
        change: Callable[[], Any],
        save: Callable[[], None],
        refused: Callable[[Exception], str],
    ):
        """``change()`` on ``item`` in memory (locked, caught up), then ``save()`` to the records,
        which are the truth: when either fails nothing of it is kept in memory (rebuilt from
        the records, if ``size()`` says it changed), and a ``MoveConflict`` of the records is
        409 with ``refused(conflict)``."""
        before = size()
        try:
            result = change()
        except BaseException:
            if size() != before:
                self.rebuild(item)
            raise
        try:
            save()
        except MoveConflict as e:
            self.rebuild(item)
            raise ApiError(409, refused(e)) from None
        except BaseException:
            self.rebuild(item)
            raise
        return result

    def cached(self, key: str, rebuild: Callable[[str], Any]):
        """The one of id ``key`` in memory, else ``rebuild(key)`` (which remembers it)."""
        if not isinstance(key, str) or not ID_RE.fullmatch(key):
            raise ApiError(404, f"no such {self.kind}: a {self.kind} id is 16 letters, digits, '-' or '_'")
        with self.lock:
            item = self.live.get(key)
            if item is not None:
                self.live.move_to_end(key)
                return item
        with self._restoring:  # one rebuild per id, even when asked for twice at once
            with self.lock:
                item = self.live.get(key)
            return item if item is not None else rebuild(key)


class Store(LiveCache):
    """The games in play, in memory (most recently used last), over the records file, which
    is the truth: before a game is served it is brought up to the records' count of moves
    (another server on the same file may have moved it on), and a move is kept only once the
    records have stored it (:meth:`play`)."""

    def __init__(self, records: Records, max_live: int = MAX_LIVE_GAMES):
        super().__init__(max_live)
        self.records = records
        self._shared: dict[tuple[str, str], Any] = {}
        self._loading = threading.Lock()

    # bots ----------------------------------------------------------------------------
    def agent_for(self, spec: games.GameSpec):
        def make(name: str, seed: Optional[int]):
            if name in spec.shipped_bots:  # a trained network: deterministic, loaded once, shared under a lock
                with self._loading:
                    key = (spec.name, name)
                    if key not in self._shared:
                        self._shared[key] = _Locked(load_agent(spec.name, name, seed, option="bots"))
                    return self._shared[key]
            return load_agent(spec.name, name, seed, option="bots")

        return make

    # games ---------------------------------------------------------------------------
    def new(
        self,
        spec: games.GameSpec,
        player: str,
        bots: list[str],
        seat: int,
        seed: int,
        options: dict,
        request_id: Optional[str] = None,
        request_hash: Optional[str] = None,
    ) -> WebGame:
        """A new game, stored; :class:`DuplicateRequest` (nothing stored) when ``request_id`` made one already."""
        game_id = secrets.token_urlsafe(12)
        web = WebGame.start(game_id, player, spec, bots, seat, seed, options, self.agent_for(spec))
        self.records.create(web, request_id, request_hash)
        self.remember(web)
        return web

    def get(self, game_id: str) -> WebGame:
        """The game in memory, or rebuilt from the records (not yet brought up to date: see :meth:`serving`)."""
        return self.cached(game_id, self.restore)

    @contextmanager
    def serving(self, game_id: str) -> Iterator[WebGame]:
        """The game, locked and as the records have it now."""
        web = self.get(game_id)
        with web.lock:
            self.catch_up(web)
            yield web

    def catch_up(self, web: WebGame) -> None:
        """Bring the game in memory to the records' count of the person's moves: the moves
        another server stored are played here too (or the game is rebuilt from its record)."""
        stored = self.records.move_count(web.id)
        if stored is None:
            self.forget(web)
            raise ApiError(404, f"no such game: {web.id}")
        if stored == len(web.moves):
            return
        record = self.record(web.id)
        mine = [m["action"] for m in web.moves]
        theirs = [m["action"] for m in record["moves"]]
        try:
            if theirs[: len(mine)] != mine:
                web.become(self._replay(record))
                return
            for action in theirs[len(mine) :]:
                web.play(action=action)
            self._check_replay(web, record)
        except (ValueError, AgentLoadError) as e:  # a recorded move the game refuses (MoveError is one)
            self.forget(web)
            raise ApiError(409, f"game {web.id} cannot be replayed from its record: {e}") from None
        except BaseException:
            self.forget(web)  # half caught up: the next request rebuilds it from the records
            raise

    def rebuild(self, web: WebGame) -> None:
        """The game in memory made again from its record (after a move the records refused)."""
        try:
            record = self.record(web.id)
            web.become(self._replay(record))
        except Exception:  # noqa: BLE001 - it cannot be rebuilt now: the next request tries again
            self.forget(web)

    def play(self, web: WebGame, **move) -> list[dict]:
        """Play the person's move on ``web`` (locked, caught up) and store it; when the records
        refuse it (another server stored this turn first) nothing of it is kept: 409."""
        turn = len(web.moves)
        return self.kept(
            web,
            lambda: (len(web.moves), len(web.actions)),
            lambda: web.play(**move),
            lambda: self.records.save_move(web, turn),
            lambda e: f"your move {turn} of game {web.id} was not played: {e}; reload the game",
        )

    def record(self, game_id: str) -> dict:
        """The game's record, checked as a new game's request is: 404 when there is none,
        409 when its row is damaged."""
        record = self.records.get(game_id)
        if record is None:
            raise ApiError(404, f"no such game: {game_id}")
        check_record(record)
        return record

    def restore(self, game_id: str) -> WebGame:
        """A game from the records (after a restart, or evicted from memory): replayed from
        its seed, bots and the person's moves, and checked against what was recorded."""
        web = self._replay(self.record(game_id))
        self.remember(web)
        return web

    def _replay(self, record: dict) -> WebGame:
        game_id = record["id"]
        spec, player, bots, seat, seed, options = check_record(record)
        try:
            web = WebGame.start(game_id, player, spec, bots, seat, seed, options, self.agent_for(spec))
            web.started = record["started"]
            for move in record["moves"]:
                web.play(action=move["action"])
        except (ValueError, AgentLoadError, MoveError) as e:
            raise ApiError(409, f"game {game_id} cannot be replayed from its record: {e}") from None
        self._check_replay(web, record)
        return web

    @staticmethod
    def _check_replay(web: WebGame, record: dict) -> None:
        if web.actions != record["actions"] or len(web.steps) != record["n_events"]:
            raise ApiError(
                409,
                f"game {web.id} cannot be replayed from its record: its moves do not give the "
                "recorded actions (the bots now play differently, or the row is damaged)",
            )


class _Locked:
    """An agent shared by several games, asked one at a time."""

    def __init__(self, agent):
        self.agent, self.name, self._lock = agent, getattr(agent, "name", "bot"), threading.Lock()

    def act(self, obs, action_mask) -> int:
        with self._lock:
            return self.agent.act(obs, action_mask)


# ----------------------------------------------------------------------- setup


def _shipped_fits(spec: games.GameSpec, name: str, players: int) -> bool:
    """Whether the shipped trained bot ``name`` exists and sees a table of ``players`` as it was trained."""
    import agents

    path = agents.CHECKPOINT_DIR / f"{name}.pt"
    if not path.exists():
        return False
    try:
        meta = load_json(path.with_suffix(".json"), "checkpoint metadata", limit=1 << 20, max_depth=32)
        trained = int((meta.get("env") or {}).get("n_players", 2))
    except (ValueError, TypeError, AttributeError):  # FileRefused is a ValueError
        trained = 2
    defaults = spec.check_options({})
    return spec.observation_bounds(players, **defaults)[2] == spec.observation_bounds(trained, **defaults)[2]


def bots_for(spec: games.GameSpec, players: int) -> list[str]:
    names = list(spec.bots_for(players))
    return names + [name for name in spec.shipped_bots if _shipped_fits(spec, name, players)]


def web_games() -> list[str]:
    """The games that declare an adapter for the page (``GameSpec.web``)."""
    return [name for name in games.names() if games.get(name).web]


def setup() -> dict:
    out = []
    for name in web_games():
        spec = games.get(name)
        narrator = spec.narrator
        tables = {}
        defaults = spec.check_options({})
        for n in spec.players:
            bots = bots_for(spec, n)
            tables[str(n)] = {
                "bots": bots,
                "default_bot": default_bot(spec, n, defaults),  # the terminal's (play.default_opponent)
                "seats": [narrator(n).seat_name(s) for s in range(n)],
                "coach": n == 2,  # at default options; a game's state says whether its table has one
            }
        out.append(
            {
                "name": name,
                "title": spec.title,
                "min_players": spec.min_players,
                "max_players": spec.max_players,
                "how_to_move": spec.how_to_move,
                "tables": tables,
                "options": [
                    {"name": o.name, "default": o.default, "low": o.low, "high": o.high, "help": o.help}
                    for o in spec.options
                ],
            }
        )
    return {"games": out}


def _refuser(spec: games.GameSpec, players: int, options: dict):
    refuse = getattr(rules_for(spec), "refuse_bot", None)
    return lambda name: refuse(spec, name, players, options) if refuse is not None else None


def default_bot(spec: games.GameSpec, players: int, options: dict) -> str:
    """The bot a seat gets when none is named: the game's default for the table, or the first that may sit."""
    allowed = bots_for(spec, players)
    refused = _refuser(spec, players, options)
    default = default_opponent(spec, players, options)
    bot = default if default in allowed else spec.suggested_bot
    if refused(bot):  # the default cannot sit at this table: the first bot that can
        bot = next((b for b in allowed if not refused(b)), bot)
    return bot


def check_bots(spec: games.GameSpec, players: int, options: dict, bots: list[str]) -> None:
    """422 naming the first of ``bots`` that may not sit at this table: not the registry's
    bot for this table size (never a checkpoint path) or refused by the game's adapter."""
    allowed = bots_for(spec, players)
    refused = _refuser(spec, players, options)
    for name in bots:
        if name not in allowed:
            if name in spec.bots and not spec.plays(name, players):
                why = spec.why_not(name, players)
            elif name in spec.shipped_bots:
                why = f"the trained bot {name} cannot play a table of {players} (or is not installed)"
            else:
                why = f"unknown bot {name[:40]!r}"
            raise ApiError(422, f"{why}; bots for {players} players: {', '.join(allowed)}")
        why = refused(name)
        if why:
            raise ApiError(422, why)


def web_spec(name: str) -> games.GameSpec:
    """The spec of a game played on this page; 422 for an unknown game or one without a web adapter."""
    try:
        spec = games.get(name)
    except ValueError as e:
        raise ApiError(422, str(e)) from None
    if not spec.web:
        raise ApiError(422, f"{spec.name} is not played on this page yet; games here: {', '.join(web_games())}")
    return spec


def _check_new_game(body: NewGame) -> tuple[games.GameSpec, str, list[str], int, int, dict]:
    spec = web_spec(body.game)
    bots = [body.bots] if isinstance(body.bots, str) else body.bots
    players = body.players
    if players is None:
        players = len(bots) + 1 if bots and len(bots) > 1 else spec.min_players
    try:
        players = spec.check_players(players)
        options = spec.check_options(body.options)
    except ValueError as e:
        raise ApiError(422, str(e)) from None
    if not bots:
        bots = [default_bot(spec, players, options)]
    if len(bots) == 1:
        bots = bots * (players - 1)
    if len(bots) != players - 1:
        raise ApiError(
            422,
            f"{len(bots)} bots for {players} players: give one name (every other seat) "
            f"or {players - 1} (one per other seat)",
        )
    check_bots(spec, players, options, bots)
    seat = body.seat if body.seat is not None else secrets.randbelow(players)
    if not 0 <= seat < players:
        raise ApiError(422, f"seat must be in 0..{players - 1}, got {seat}")
    seed = body.seed if body.seed is not None else secrets.randbelow(2**31)
    player = (body.player or "guest").strip()
    if not PLAYER_RE.fullmatch(player):
        raise ApiError(422, "player: a name of 1 to 40 letters, digits, spaces, '.', \"'\", '_' or '-'")
    return spec, player, bots, seat, seed, options


def check_record(record: dict) -> tuple[games.GameSpec, str, list[str], int, int, dict]:
    """A recorded game's table checked as a new game's request is (``_check_new_game``): a
    registered game, its bots the registry's for that table (never a checkpoint path), seat,
    seed, options and player in range; 409 naming the game when its row is not."""
    game_id = record["id"]
    try:
        body = NewGame(
            game=record["game"],
            players=record["players"],
            bots=record["bots"],
            seat=record["seat"],
            seed=record["seed"],
            options=record["options"],
            player=record["player"],
        )
    except ValidationError as e:
        first = e.errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ())) or "row"
        raise ApiError(
            409,
            f"game {game_id} cannot be read from the records: its {where} is refused "
            f"({first.get('msg', 'invalid')}); the other games are not affected",
        ) from None
    if len(record["bots"]) != record["players"] - 1:
        raise ApiError(
            409,
            f"game {game_id} cannot be read from the records: {len(record['bots'])} bots for "
            f"{record['players']} players; the other games are not affected",
        )
    try:
        return _check_new_game(body)
    except ApiError as e:
        raise ApiError(
            409, f"game {game_id} cannot be read from the records: {e.message}; the other games are not affected"
        ) from None


def public_record(record: dict) -> dict:
    """A record as a client may see it: the seed of a game in play is kept back (it predicts
    every roll to come); it is shown once the game is over, for its replay."""
    return record if record["status"] == "over" else {**record, "seed": None}


# ----------------------------------------------------------------------- the app


class RequestGuard:
    """ASGI middleware in front of the app: a request body over ``limit`` bytes gets 413
    before the app sees it, by its Content-Length or, without one, as soon as the bytes
    read pass the limit; a body sent to the API as anything but JSON gets 415."""

    def __init__(self, app, limit: int = MAX_BODY):
        self.app, self.limit = app, limit

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        headers = dict(scope.get("headers") or ())
        posting = scope.get("method") in ("POST", "PUT", "PATCH")
        if posting and scope.get("path", "").startswith("/api/"):
            kind = headers.get(b"content-type", b"").split(b";")[0].strip().lower()
            if not kind.endswith(b"json"):
                return await self._refuse(send, 415, "send the body as JSON (Content-Type: application/json)")
        length = headers.get(b"content-length")
        if length is not None:
            if not length.isdigit() or int(length) > self.limit:
                return await self._refuse(send)
            return await self.app(scope, receive, send)
        if not posting:
            return await self.app(scope, receive, send)
        chunks, size = [], 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.limit:
                return await self._refuse(send)
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        sent = False

        async def replay():
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        return await self.app(scope, replay, send)

    async def _refuse(self, send, status: int = 413, message: str = ""):
        message = message or f"request body too large: at most {self.limit // 1024} KB"
        body = json.dumps({"error": message}).encode()
        await send(
            {
                "type": "http.response.start",
                "status": status,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                    (b"connection", b"close"),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


def _validation_message(exc: RequestValidationError, request: Request) -> tuple[int, str]:
    errors = exc.errors()
    if any("json" in str(e.get("type", "")) for e in errors):  # "json_invalid" (older: "value_error.jsondecode")
        return 400, "the request body is not valid JSON"
    whole_body = [e for e in errors if tuple(e.get("loc", ())) == ("body",)]
    if whole_body:
        kind = request.headers.get("content-type", "")
        if not kind.split(";")[0].strip().lower().endswith("json"):
            return 415, "send the body as JSON (Content-Type: application/json)"
        if any(e.get("type") == "missing" for e in whole_body):
            return 422, "the request needs a JSON object as its body"
        return 422, "the body must be a JSON object"
    parts = []
    for e in errors[:5]:
        where = ".".join(str(p) for p in e.get("loc", ()) if p != "body") or "body"
        parts.append(f"{where}: {e.get('msg', 'invalid')}")
    return 422, "; ".join(parts)


def preload_bots(store: Store, done: Optional[threading.Event] = None) -> list[str]:
    """Load what the first games need, so the first Start does not wait on it: for every
    table of every game, its default bots (the shipped network where it is one, kept in
    ``store``) and the coach's exact tables, by playing the table's opening once (nothing is
    stored).  Returns what could not be loaded, one line each (the game then loads it when
    asked, as before); sets ``done`` at the end."""
    problems = []
    try:
        for name in web_games():
            spec = games.get(name)
            options = spec.check_options({})
            make = store.agent_for(spec)
            for n in spec.players:
                try:
                    for trained in spec.shipped_bots:
                        if trained in bots_for(spec, n):
                            make(trained, None)
                    bots = [default_bot(spec, n, options)] * (n - 1)
                    web = WebGame.start("preload", "guest", spec, bots, 0, 0, options, make)
                    if web.coach_unavailable() is None:
                        web.coach()
                except Exception as e:  # noqa: BLE001 - loaded on first use instead
                    problems.append(f"{name} for {n}: {type(e).__name__}: {e}")
    finally:
        if done is not None:
            done.set()
    return problems


def docs_page(schema: dict) -> str:
    """``/docs``: the routes and schemas of ``schema`` (the app's OpenAPI) as plain HTML, no script."""
    e = html.escape

    def kind(s: dict) -> str:
        if not isinstance(s, dict):
            return ""
        if "$ref" in s:
            name = s["$ref"].rsplit("/", 1)[-1]
            return f'<a href="#schema-{e(name)}">{e(name)}</a>'
        for key in ("anyOf", "oneOf"):
            if key in s:
                return " | ".join(kind(x) for x in s[key])
        if s.get("type") == "array":
            return "list of " + (kind(s.get("items", {})) or "any")
        return e(str(s.get("type", "any")))

    out = [
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>",
        "<meta name='viewport' content='width=device-width, initial-scale=1'>",
        f"<title>{e(schema['info']['title'])}: API</title>",
        "<link rel='stylesheet' href='/static/docs.css'></head><body>",
        f"<h1>{e(schema['info']['title'])}: API</h1>",
        f"<p>{e(schema['info'].get('description', ''))}</p>",
        "<p>The machine-readable description: <a href='/openapi.json'>/openapi.json</a> (OpenAPI "
        f"{e(str(schema.get('openapi', '')))}). Back to <a href='/'>the page</a>.</p>",
        "<h2>Routes</h2><ul class='toc'>",
    ]
    routes = [(path, method, op) for path, ops in schema.get("paths", {}).items() for method, op in ops.items()]
    for i, (path, method, op) in enumerate(routes):
        out.append(
            f"<li><a href='#r{i}'><code>{e(method.upper())} {e(path)}</code></a> {e(op.get('summary', ''))}</li>"
        )
    out.append("</ul>")
    for i, (path, method, op) in enumerate(routes):
        out.append(f"<section id='r{i}'><h3><code>{e(method.upper())} {e(path)}</code></h3>")
        out.append(f"<p>{e(op.get('summary', ''))}</p>")
        if op.get("description"):
            out.append(f"<pre class='text'>{e(op['description'])}</pre>")
        params = op.get("parameters", [])
        if params:
            out.append("<table><tr><th>parameter</th><th>in</th><th>type</th><th>required</th></tr>")
            for prm in params:
                out.append(
                    f"<tr><td><code>{e(prm['name'])}</code></td><td>{e(prm.get('in', ''))}</td>"
                    f"<td>{kind(prm.get('schema', {}))}</td><td>{'yes' if prm.get('required') else 'no'}</td></tr>"
                )
            out.append("</table>")
        body = op.get("requestBody", {}).get("content", {}).get("application/json", {}).get("schema")
        if body:
            out.append(f"<p>Body (JSON): {kind(body)}</p>")
        codes = ", ".join(f"{e(code)} {e(r.get('description', ''))}" for code, r in op.get("responses", {}).items())
        out.append(f"<p class='muted'>Responses: {codes}; errors are <code>{{\"error\": message}}</code>.</p>")
        out.append("</section>")
    out.append("<h2>Schemas</h2>")
    for name, s in schema.get("components", {}).get("schemas", {}).items():
        out.append(f"<section id='schema-{e(name)}'><h3>{e(name)}</h3>")
        if s.get("description"):
            out.append(f"<pre class='text'>{e(s['description'])}</pre>")
        props = s.get("properties", {})
        if props:
            required = set(s.get("required", []))
            out.append("<table><tr><th>field</th><th>type</th><th>required</th><th>limits</th></tr>")
            for field, f in props.items():
                limits = ", ".join(
                    f"{k} {e(json.dumps(f[k]))}"
                    for k in ("minimum", "maximum", "maxLength", "maxItems", "pattern", "default")
                    if k in f
                )
                out.append(
                    f"<tr><td><code>{e(field)}</code></td><td>{kind(f)}</td>"
                    f"<td>{'yes' if field in required else 'no'}</td><td>{limits}</td></tr>"
                )
            out.append("</table>")
        examples = s.get("examples")
        if examples:
            out.append("<p>Examples:</p>")
            out.extend(f"<pre>{e(json.dumps(x))}</pre>" for x in examples)
        out.append("</section>")
    out.append("</body></html>")
    return "\n".join(out)


def create_app(
    db_path: Optional[str | Path] = None, *, max_live: int = MAX_LIVE_GAMES, limits=None, preload: bool = True
) -> FastAPI:
    """The app, with its records in ``db_path`` (default: ``records.default_db_path()``);
    :class:`play.web.records.RecordsError` (one line) when that file cannot serve.
    ``limits``: the shared tables' rate limits and timings (``play.web.shared.Limits``).
    ``preload``: load the bots and the coach's tables in a thread when the server starts
    (its lifespan: a TestClient used without ``with`` never starts it)."""
    from play.web import shared

    records = Records(db_path if db_path is not None else default_db_path())
    store = Store(records, max_live=max_live)
    ready = threading.Event()
    if not preload:
        ready.set()

    @asynccontextmanager
    async def lifespan(app: FastAPI):
        if preload and not ready.is_set():
            threading.Thread(target=preload_bots, args=(store, ready), name="preload", daemon=True).start()
        records.hold()  # the writer connection stays open while the server runs (each process its own)
        try:
            yield
        finally:
            records.close()

    app = FastAPI(
        title="Dice Arena: " + ", ".join(web_games()),
        description=f"Play {', '.join(web_games())} against the project's bots, with an exact coach where "
        "a game offers one (two-player games). "
        'Every error is `{"error": message}` with a 4xx status.',
        version="1",
        docs_url=None,
        redoc_url=None,
        lifespan=lifespan,
    )
    app.state.store = store
    app.state.ready = ready
    app.add_middleware(RequestGuard)
    shared.install(app, records, store, limits if limits is not None else shared.Limits())

    @app.exception_handler(ApiError)
    async def api_error(request: Request, exc: ApiError):
        response = _error(exc.status, exc.message)
        wait = getattr(exc, "wait", None)  # a rate limit: when to try again
        if wait is not None:
            response.headers["Retry-After"] = str(max(1, math.ceil(wait)))
        return response

    @app.exception_handler(DamagedGame)
    async def damaged(request: Request, exc: DamagedGame):
        return _error(409, str(exc))

    async def records_unavailable(request: Request, exc: Exception):
        why = " ".join(str(exc).split())[:200] or type(exc).__name__
        return _error(503, f"the records cannot be used now ({why}); try again")

    for error in records.Error:  # sqlite3.Error, or psycopg.Error on PostgreSQL
        app.add_exception_handler(error, records_unavailable)

    @app.exception_handler(MoveError)
    async def move_error(request: Request, exc: MoveError):
        return _error(exc.status, str(exc))

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError):
        return _error(*_validation_message(exc, request))

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException):
        return _error(exc.status_code, str(exc.detail))

    @app.exception_handler(Exception)
    async def crash(request: Request, exc: Exception):  # a bug: say so without a traceback
        return _error(500, f"internal error ({type(exc).__name__})")

    @app.get("/", include_in_schema=False)
    def index():
        return FileResponse(STATIC / "index.html", headers={"Cache-Control": "no-cache"})

    app.mount("/static", StaticFiles(directory=STATIC), name="static")

    @app.get("/docs", include_in_schema=False)
    def docs():
        return HTMLResponse(docs_page(app.openapi()), headers={"Cache-Control": "no-cache"})

    @app.get("/api/setup", summary="The games, their bots by table size, and options")
    def get_setup():
        return {**setup(), "ready": ready.is_set()}

    @app.get("/api/games-rules/{game}", summary="A game's rules as HTML, and its hand ranking where it has one")
    def get_rules(game: str = FastAPIPath(max_length=10)):
        if game not in web_games():
            raise ApiError(404, f"no such game here: {game[:10]!r}; games here: {', '.join(web_games())}")
        return how_to_play(game)

    @app.post("/api/games", status_code=201, summary="Start a game")
    def new_game(body: NewGame):
        digest = request_hash(body) if body.request_id is not None else None
        made = records.game_for_request(body.request_id) if body.request_id is not None else None
        if made is None:
            spec, player, bots, seat, seed, options = _check_new_game(body)
            try:
                web = store.new(spec, player, bots, seat, seed, options, body.request_id, digest)
            except AgentLoadError as e:
                raise ApiError(422, str(e)) from None
            except DuplicateRequest as e:  # sent twice at once: the first made it
                made = (e.existing, digest if e.same else None)
            else:
                with web.lock:
                    return {"id": web.id, "state": web.state(), "steps": web.steps}
        if made[1] != digest:
            raise ApiError(409, "this request_id was used for another game: send a new one")
        with store.serving(made[0]) as web:  # the request sent again: the game it made, as it is now
            return {"id": web.id, "state": web.state(), "steps": web.steps}

    @app.get("/api/games/{game_id}", summary="A game's state, with the narration so far")
    def get_game(game_id: str):
        with store.serving(game_id) as web:
            return {"id": web.id, "state": web.state()}

    @app.post("/api/games/{game_id}/moves", summary="Play your move; returns what happened, step by step")
    def play_move(game_id: str, body: Move):
        given = [k for k in ("action", "reroll", "keep", "text") if getattr(body, k) is not None] + (
            ["stop"] if body.stop else []
        )
        if len(given) != 1:
            raise ApiError(422, "give exactly one of action, reroll, keep, text or stop: true")
        for values in (body.reroll, body.keep):
            if values is not None and any(not 1 <= v <= 6 for v in values):
                raise ApiError(422, "dice show 1 to 6")
        with store.serving(game_id) as web:
            steps = store.play(
                web,
                action=body.action,
                reroll=body.reroll,
                keep=body.keep,
                stop=bool(body.stop),
                text=body.text,
                turn=body.turn,
            )
            return {"id": web.id, "steps": steps, "state": web.state(log=False)}

    @app.get("/api/games/{game_id}/coach", summary="Exact win probability of each move (two-player games)")
    def get_coach(game_id: str):
        with store.serving(game_id) as web:
            return web.coach()

    @app.get("/api/records", summary="A person's record against each line-up of bots")
    def get_records(player: Optional[str] = Query(None, max_length=40)):
        if player is not None and not PLAYER_RE.fullmatch(player):
            raise ApiError(422, "player: a name of 1 to 40 letters, digits, spaces, '.', \"'\", '_' or '-'")
        return store.records.summary(player)

    @app.get("/api/records/{game_id}", summary="One game's full record: seed, seats, every action and die")
    def get_record(game_id: str):
        if not ID_RE.fullmatch(game_id):
            raise ApiError(404, "no such game: a game id is 16 letters, digits, '-' or '_'")
        return public_record(store.record(game_id))

    @app.get("/api/records/{game_id}/replay", summary="A finished game step by step: every event with its text")
    def get_replay(game_id: str):
        if not ID_RE.fullmatch(game_id):
            raise ApiError(404, "no such game: a game id is 16 letters, digits, '-' or '_'")
        record = store.record(game_id)
        if record["status"] != "over":
            raise ApiError(409, f"game {game_id} is still being played: its replay is shown once it is over")
        web = store._replay(record)  # a copy made from the record: the game in memory is not touched
        return {"id": game_id, "record": public_record(record), "state": web.state(), "steps": web.steps}

    return app
