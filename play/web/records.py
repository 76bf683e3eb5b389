"""The web table's records: every game in one SQLite file, and replays.

The file is the truth, shared by every server process that is given it.  A game's
row (table ``games``) is written when the game starts; each of the person's moves
is a row of its own (table ``moves``, keyed by the game's id and the move's number,
``turn``), written in one transaction that first checks the stored game: its count
of moves must be the move's number, so of two servers playing the same turn of a
game only the first is stored and the other is told (:class:`MoveConflict`).  The
same transaction brings the game's row up to date (every action, die and event so
far; the outcome once over).  A server restart therefore loses nothing: a finished
game stays in the person's record, and a game in progress is rebuilt from its seed,
bots and the person's moves the next time it is asked for (``Store`` in
``play.web.app``), as is a game another server moved on.

A game's record holds everything needed to replay it: the seed, the seats and bots,
the game options, every action of every seat in order, every die rolled and every
seat drawn.  :func:`replay_actions` plays the actions again on a fresh engine with
dice from the seed and returns its events; they equal the recorded ones
(``tests/test_web.py``).

Shared tables (``play.web.shared``: several people and bots at one game) have
rows of their own: ``tables`` (the game, its seed, options and what sits in each
seat as created; its progress as ``games`` has it; a ``version`` bumped by every
change, which the event stream watches), ``seats`` (a person seat's name and the
SHA-256 hash of its token, never the token) and ``table_moves`` (each person's
move, or a seat given to a bot, keyed by the table's id and ``turn``, written in a
transaction that checks the stored count as ``moves`` are).  A request id
(``request_id``) is unique across the games and across the tables: a request
sent twice makes one game or table.

The file has a schema version (``meta``, key ``schema``).  Version 1 (the person's
moves as a JSON column of ``games``) is migrated to version 2, and version 2 to
version 3 (request ids and the shared tables), in one transaction when the file
is opened, keeping every game.  A file that cannot serve as the
records (not SQLite, damaged, another program's, a newer version, not writable) is
refused when it is opened: :class:`RecordsError`, one line naming the file.  A row
that cannot be read makes its own game unavailable (:class:`DamagedGame`), never
the others.

All SQL is parameterised; every write is one transaction.  In one process the writes
take turns on a lock over one writer connection (opened at the first write of the
process, so a forked server opens its own; closed and opened again after an error; kept
open between writes while a server runs: :meth:`Records.hold`), so they never wait in
SQLite's busy handler for each other; the processes sharing the file still take turns on
SQLite's lock.  Each read opens a short connection of its own.
"""

from __future__ import annotations

import json
import math
import os
import threading
import time
from contextlib import closing, contextmanager
from pathlib import Path
from typing import Any, Iterator, Optional

import games
from core.dice import RandomDice
from play.web.database import RecordsError, _text, open_database  # noqa: F401 (RecordsError: raised through here)

SCHEMA_VERSION = 3
READS = (1, 2, 3)  # the versions this module opens (1 and 2 are migrated to 3)

GAMES_TABLE = """
CREATE TABLE games (
    id           TEXT PRIMARY KEY,
    player       TEXT NOT NULL,
    game         TEXT NOT NULL,
    players      INTEGER NOT NULL,
    seat         INTEGER NOT NULL,
    bots         TEXT NOT NULL,     -- JSON: the bots clockwise from the person's seat
    opponents    TEXT NOT NULL,     -- the bots' names sorted, joined by ', ' (the record's rows)
    options      TEXT NOT NULL,     -- JSON: the game options (e.g. a pot or a goal)
    seed         INTEGER NOT NULL,
    status       TEXT NOT NULL,     -- 'playing' or 'over'
    started      REAL NOT NULL,
    finished     REAL,
    actions      TEXT NOT NULL,     -- JSON: every [seat, action], all seats, in order
    dice         TEXT NOT NULL,     -- JSON: every die value rolled, in order
    seats_drawn  TEXT NOT NULL,     -- JSON: every seat drawn by the dice (first players)
    n_events     INTEGER NOT NULL,
    events       TEXT,              -- JSON: the engine's events, once over
    outcome      REAL,              -- +1 the person did not lose, -1 they lost
    loser        INTEGER,
    legacy_moves TEXT               -- a version-1 row's moves the migration could not read, kept as they were
)"""

MOVES_TABLE = """
CREATE TABLE moves (
    game_id  TEXT NOT NULL REFERENCES games (id),
    turn     INTEGER NOT NULL,      -- 0 for the person's first move
    action   INTEGER NOT NULL,
    snapshot TEXT,                  -- JSON: the coach's view of the position (null without a coach)
    played   REAL NOT NULL,
    PRIMARY KEY (game_id, turn)
)"""

SCHEMA_V2 = [
    "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    GAMES_TABLE,
    MOVES_TABLE,
    "CREATE INDEX games_by_player ON games (player, status, finished)",
]

TABLES_TABLE = """
CREATE TABLE tables (
    id           TEXT PRIMARY KEY,
    game         TEXT NOT NULL,
    players      INTEGER NOT NULL,
    kinds        TEXT NOT NULL,     -- JSON: per seat as created, the bot's name or null for a person
    options      TEXT NOT NULL,     -- JSON: the game options
    seed         INTEGER NOT NULL,
    status       TEXT NOT NULL,     -- 'playing' or 'over'
    started      REAL NOT NULL,
    finished     REAL,
    actions      TEXT NOT NULL,     -- JSON: every [seat, action], all seats, in order
    dice         TEXT NOT NULL,     -- JSON: every die value rolled, in order
    seats_drawn  TEXT NOT NULL,     -- JSON: every seat drawn by the dice
    n_events     INTEGER NOT NULL,
    events       TEXT,              -- JSON: the engine's events, once over
    loser        INTEGER,
    n_moves      INTEGER NOT NULL,  -- rows of table_moves (kept with them in each transaction)
    version      INTEGER NOT NULL,  -- bumped by every change: a move, a seat taken or given to a bot
    moved        REAL NOT NULL,     -- when the last move was stored (or the table made): idle seats
    request_id   TEXT UNIQUE,
    request_hash TEXT
)"""

SEATS_TABLE = """
CREATE TABLE seats (
    table_id   TEXT NOT NULL REFERENCES tables (id),
    seat       INTEGER NOT NULL,
    token_hash TEXT UNIQUE,         -- SHA-256 (hex) of a person seat's token; never the token
    creator    INTEGER NOT NULL,    -- 1 for the seat of the person who made the table
    name       TEXT,                -- the person's name once they took the seat
    joined     REAL,
    PRIMARY KEY (table_id, seat)
)"""

TABLE_MOVES_TABLE = """
CREATE TABLE table_moves (
    table_id TEXT NOT NULL REFERENCES tables (id),
    turn     INTEGER NOT NULL,      -- 0 for the first person's first move, counting every seat
    seat     INTEGER NOT NULL,
    action   INTEGER,               -- the person's move; null when the seat was given to a bot
    bot      TEXT,                  -- the bot given the seat (action null)
    played   REAL NOT NULL,
    PRIMARY KEY (table_id, turn)
)"""

V3_STATEMENTS = [
    "ALTER TABLE games ADD COLUMN request_id TEXT",
    "ALTER TABLE games ADD COLUMN request_hash TEXT",
    "CREATE UNIQUE INDEX games_by_request ON games (request_id) WHERE request_id IS NOT NULL",
    TABLES_TABLE,
    SEATS_TABLE,
    TABLE_MOVES_TABLE,
]

V1_GAMES_COLUMNS = (
    "id",
    "player",
    "game",
    "players",
    "seat",
    "bots",
    "opponents",
    "options",
    "seed",
    "status",
    "started",
    "finished",
    "moves",
    "actions",
    "dice",
    "seats_drawn",
    "n_events",
    "events",
    "outcome",
    "loser",
)
GAMES_COLUMNS = tuple(c for c in V1_GAMES_COLUMNS if c != "moves") + ("legacy_moves",)
MOVES_COLUMNS = ("game_id", "turn", "action", "snapshot", "played")
V3_COLUMNS = {
    "games": {"request_id", "request_hash"},
    "tables": {"id", "game", "players", "kinds", "options", "seed", "status", "actions", "n_moves", "version"},
    "seats": {"table_id", "seat", "token_hash", "creator", "name", "joined"},
    "table_moves": {"table_id", "turn", "seat", "action", "bot", "played"},
}
MAX_JSON = 4_000_000  # characters of one JSON value read back


class DamagedGame(ValueError):
    """One game's row cannot be read; the message names the game.  The other games are unaffected."""

    def __init__(self, game_id: str, why: str):
        super().__init__(
            f"game {game_id} cannot be read from the records: {why} (its row is damaged; "
            "the other games are not affected)"
        )
        self.game_id = game_id


class MoveConflict(Exception):
    """The stored game is not where the move was played: another server stored this turn first."""


class DuplicateRequest(Exception):
    """A request id already used: ``existing`` is the id of the game or table it made,
    ``same`` whether the request was the same (its hash)."""

    def __init__(self, existing: str, same: bool):
        super().__init__(existing)
        self.existing, self.same = existing, same


def default_db_path() -> Path:
    """``$XDG_DATA_HOME/dice-arena/records.sqlite3`` (``~/.local/share`` when unset)."""
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "dice-arena" / "records.sqlite3"


class Records:
    """The games' records, shared safely by threads and processes: a SQLite file or a
    PostgreSQL database (``db``: a path, or a ``postgresql://`` URL; ``play.web.database``).
    The writes of one process take turns on a lock over one writer connection; each read
    has a connection of its own.  Opening it checks (and if need be migrates) the records:
    :class:`RecordsError` when they cannot be used."""

    def __init__(self, db: os.PathLike | str):
        self._db = open_database(db)
        self.path = getattr(self._db, "path", None)  # the SQLite file (None on PostgreSQL)
        self.label = self._db.label
        self.Error = self._db.Error  # what a database that fails raises (a tuple of classes)
        self._write_lock = threading.Lock()
        self._writer = None
        self._hold = False
        self._pid = os.getpid()  # the process the writer connection was opened in
        self._inherited: list = []  # a parent's connection after a fork: never used, never closed here
        self._open()

    # --- opening -----------------------------------------------------------------------
    OPEN_PATIENCE = 30.0  # seconds opening waits for another process opening the same file

    def _open(self) -> None:
        db = self._db
        db.reach()
        deadline, attempt = time.monotonic() + self.OPEN_PATIENCE, 0
        while True:
            try:
                with closing(db.connect()) as conn:
                    problems = db.problems(conn)
                if problems:
                    raise db.refuse(
                        f"is damaged (SQLite says: {problems[0][:120]})", "move it away or give another --db"
                    )
                with closing(db.connect()) as conn, db.write(conn):  # records that are refused are left as they were
                    self._prepare(conn)
                with closing(db.connect()) as conn:
                    db.prepared(conn)
                return
            except db.Error as e:
                # servers started together open one SQLite file at once: some of SQLite's
                # locks (the switch to WAL, its first reader) say "locked" without waiting
                if "database is locked" in str(e) and time.monotonic() < deadline:
                    attempt += 1
                    time.sleep(min(0.05 * attempt, 0.5))
                    continue
                raise db.explain(e) from None

    def _prepare(self, conn) -> None:
        """Create the tables in empty records, migrate version 1 and 2, refuse anything else."""
        db = self._db
        tables = db.tables(conn)
        if not tables:
            for statement in SCHEMA_V2:
                conn.execute(statement)
            conn.execute("INSERT INTO meta (key, value) VALUES ('schema', '2')")
            _migrate_v2(conn)
            return
        foreign = f"is not a dice-arena records {db.kind} (its tables: {', '.join(sorted(tables)[:6])})"
        if not {"meta", "games"} <= tables or not {"key", "value"} <= db.columns(conn, "meta"):
            raise db.refuse(foreign)
        row = conn.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
        if row is None:
            raise db.refuse(foreign)
        version = str(row[0]).strip()
        if version not in {str(v) for v in READS}:
            raise db.refuse(
                f"has schema version {version[:20]!r}, which this dice-arena does not read "
                f"(it reads {' and '.join(map(str, READS))}; a newer dice-arena wrote it?)",
                "upgrade dice-arena or give another --db",
            )
        if version == "1":
            missing = set(V1_GAMES_COLUMNS) - db.columns(conn, "games")
            if missing:
                raise db.refuse(f"{foreign[:-1]}; its games table lacks {', '.join(sorted(missing))})")
            _migrate_v1(conn)
            _migrate_v2(conn)
            return
        missing = (set(GAMES_COLUMNS) - db.columns(conn, "games")) | {
            f"moves.{c}" for c in set(MOVES_COLUMNS) - db.columns(conn, "moves")
        }
        if version == "3":
            for table, columns in V3_COLUMNS.items():
                missing |= {f"{table}.{c}" for c in columns - db.columns(conn, table)}
        if missing:
            raise db.refuse(
                f"is not a dice-arena records {db.kind} of version {version} (it lacks {', '.join(sorted(missing))})"
            )
        if version == "2":
            _migrate_v2(conn)
        else:
            # a write, so that records this process may read but not write are refused now, not at the first move
            conn.execute("UPDATE meta SET value = value WHERE key = 'schema'")

    def hold(self) -> None:
        """Keep this process's writer connection open between writes, until :meth:`close` (a
        running server: its lifespan).  Otherwise each write closes it, so that a file no
        longer used is left whole (no ``-wal`` file beside it)."""
        self._hold = True

    def close(self) -> None:
        """Close this process's connections and stop holding the writer.  The records may still
        be used: a write or a read opens a connection again."""
        with self._write_lock:
            self._hold = False
            if self._pid == os.getpid():
                self._drop_writer()
        self._db.close_readers()

    def _drop_writer(self) -> None:
        conn, self._writer = self._writer, None
        if conn is not None:
            try:
                conn.close()
            except self.Error:
                pass

    @contextmanager
    def transaction(self) -> Iterator[Any]:
        """A write transaction (one writer at a time, across processes: ``play.web.database``), on
        this process's writer connection, under its lock: the threads of a process take turns
        here instead of in the database's lock, which (SQLite's busy handler) sleeps.  An
        exception inside rolls it back; a connection that fails (or cannot roll back) is
        closed, and the next write opens another."""
        with self._write_lock:
            if self._pid != os.getpid():  # a forked child: the parent's connection is left alone
                self._inherited.append(self._writer)
                self._writer, self._pid = None, os.getpid()
            if self._writer is None:
                self._writer = self._db.connect(writer=True)
            conn = self._writer
            try:
                with self._db.write(conn):
                    yield conn
            except self.Error:
                self._drop_writer()
                raise
            except BaseException:
                if self._db.in_transaction(conn):  # the rollback failed: never reuse it
                    self._drop_writer()
                raise
            finally:
                if not self._hold:
                    self._drop_writer()

    def reading(self):
        """A read transaction: every query inside sees the same state of the records."""
        return self._db.read()

    def read_one(self, sql: str, params=()) -> list:
        """The rows of one query (a statement sees one state of the records by itself)."""
        return self._db.read_one(sql, params)

    # --- writing -----------------------------------------------------------------------
    def create(self, web, request_id: Optional[str] = None, request_hash: Optional[str] = None) -> None:
        """The row of a new ``play.web.table.WebGame`` (one transaction); :class:`DuplicateRequest`
        (and nothing stored) when ``request_id`` already made a game."""
        row = {
            "id": web.id,
            "player": web.player,
            "game": web.spec.name,
            "players": web.n_players,
            "seat": web.seat,
            "bots": json.dumps(web.bot_names),
            "opponents": ", ".join(sorted(web.bot_names)),
            "options": json.dumps(web.options, sort_keys=True),
            "seed": web.seed,
            "started": web.started,
            "request_id": request_id,
            "request_hash": request_hash,
            **_progress(web),
        }
        with self.transaction() as conn:
            _insert_requested(conn, "games", row)

    def game_for_request(self, request_id: str) -> Optional[tuple[str, bool]]:
        """(the game's id, its request's hash) of the game ``request_id`` made, or None."""
        with self.reading() as conn:
            row = conn.execute("SELECT id, request_hash FROM games WHERE request_id = ?", (request_id,)).fetchone()
        return None if row is None else (row["id"], row["request_hash"])

    def save_move(self, web, turn: int) -> None:
        """Store the person's move number ``turn`` (the last of ``web.moves``) and the game's
        progress, in one transaction that checks the stored game has exactly ``turn`` moves
        and is still being played; :class:`MoveConflict` (and nothing stored) when not."""
        move = web.moves[turn]
        progress = _progress(web)
        with self.transaction() as conn:
            stored = _stored_moves(conn, "games", "moves", "game_id", web.id, "game")
            if stored > turn:
                raise MoveConflict(f"another page or server played move {turn} first")
            if stored < turn:
                raise MoveConflict(
                    f"the records hold only its moves 0 to {stored - 1}"
                    if stored
                    else "the records hold none of its moves"
                )
            try:
                conn.execute(
                    "INSERT INTO moves (game_id, turn, action, snapshot, played) VALUES (?, ?, ?, ?, ?)",
                    (
                        web.id,
                        turn,
                        int(move["action"]),
                        None if move["snapshot"] is None else json.dumps(move["snapshot"]),
                        time.time(),
                    ),
                )
            except self._db.IntegrityError:  # the key (game, turn) is unique: cannot happen after the count
                raise MoveConflict(f"another page or server played move {turn} first") from None
            sets = ", ".join(f"{c} = ?" for c in progress)
            conn.execute(f"UPDATE games SET {sets} WHERE id = ?", (*progress.values(), web.id))

    # --- reading -----------------------------------------------------------------------
    def move_count(self, game_id: str) -> Optional[int]:
        """How many of the person's moves the records hold (None: no such game)."""
        with self.reading() as conn:
            if conn.execute("SELECT 1 FROM games WHERE id = ?", (game_id,)).fetchone() is None:
                return None
            return conn.execute("SELECT COUNT(*) FROM moves WHERE game_id = ?", (game_id,)).fetchone()[0]

    def get(self, game_id: str) -> Optional[dict]:
        """One game's record (None: no such game), its moves as ``[{"action", "snapshot"}]``
        in order; :class:`DamagedGame` when a value cannot be read back as written."""
        with self.reading() as conn:
            row = conn.execute("SELECT * FROM games WHERE id = ?", (game_id,)).fetchone()
            if row is None:
                return None
            moves = conn.execute(
                "SELECT turn, action, snapshot FROM moves WHERE game_id = ? ORDER BY turn", (game_id,)
            ).fetchall()
        return _decode(game_id, row, moves)

    def summary(self, player: Optional[str] = None, recent: int = 10) -> dict:
        """The person's record (everyone's if ``player`` is None): per game, table size and
        bots, games won (not lost) and lost; and the most recent finished games."""
        where, args = ("status = 'over' AND player = ?", (player,)) if player is not None else ("status = 'over'", ())
        with self.reading() as conn:
            rows = conn.execute(
                "SELECT game, players, opponents, COUNT(*) AS games, "
                "SUM(CASE WHEN outcome > 0 THEN 1 ELSE 0 END) AS wins, "
                "SUM(CASE WHEN outcome < 0 THEN 1 ELSE 0 END) AS losses "
                f"FROM games WHERE {where} GROUP BY game, players, opponents ORDER BY game, players, opponents",
                args,
            ).fetchall()
            last = conn.execute(
                "SELECT id, player, game, players, opponents, seed, seat, outcome, finished "
                f"FROM games WHERE {where} ORDER BY finished DESC LIMIT ?",
                (*args, recent),
            ).fetchall()
            playing = conn.execute(
                "SELECT COUNT(*) FROM games WHERE status = 'playing'"
                + (" AND player = ?" if player is not None else ""),
                args,
            ).fetchone()[0]
        return {
            "player": player,
            "records": [_plain(r) for r in rows],
            "recent": [_plain(r) for r in last],
            "unfinished": playing,
        }

    # --- shared tables -----------------------------------------------------------------
    def create_table(self, table, seats: list[dict], request_id: Optional[str], request_hash: Optional[str]) -> None:
        """The rows of a new ``play.web.shared.SharedTable`` and its seats (``{"seat", "token_hash",
        "creator", "name"}``), in one transaction; :class:`DuplicateRequest` (nothing stored)
        when ``request_id`` already made a table."""
        now = time.time()
        row = {
            "id": table.id,
            "game": table.spec.name,
            "players": table.n_players,
            "kinds": json.dumps(table.created_kinds),
            "options": json.dumps(table.options, sort_keys=True),
            "seed": table.seed,
            "started": table.started,
            "n_moves": 0,
            "version": 1,
            "moved": now,
            "request_id": request_id,
            "request_hash": request_hash,
            **_table_progress(table),
        }
        with self.transaction() as conn:
            _insert_requested(conn, "tables", row)
            conn.executemany(
                "INSERT INTO seats (table_id, seat, token_hash, creator, name, joined) VALUES (?, ?, ?, ?, ?, ?)",
                [
                    (table.id, s["seat"], s["token_hash"], int(s["creator"]), s["name"], now if s["name"] else None)
                    for s in seats
                ],
            )

    def table_for_request(self, request_id: str) -> Optional[tuple[str, Optional[str]]]:
        """(the table's id, its request's hash) of the table ``request_id`` made, or None."""
        with self.reading() as conn:
            row = conn.execute("SELECT id, request_hash FROM tables WHERE request_id = ?", (request_id,)).fetchone()
        return None if row is None else (row["id"], row["request_hash"])

    def save_table_move(self, table, turn: int) -> None:
        """Store entry ``turn`` of the table (a person's move, or a seat given to a bot) and the
        table's progress, in one transaction that checks the stored table has exactly ``turn``
        entries and is still being played; :class:`MoveConflict` (nothing stored) when not."""
        entry = table.entries[turn]
        progress = _table_progress(table)
        now = time.time()
        with self.transaction() as conn:
            stored = _stored_moves(conn, "tables", "table_moves", "table_id", table.id, "table")
            if stored != turn:
                raise MoveConflict(
                    f"another page or server played move {turn} first"
                    if stored > turn
                    else f"the records hold only {stored} of its moves"
                )
            try:
                conn.execute(
                    "INSERT INTO table_moves (table_id, turn, seat, action, bot, played) VALUES (?, ?, ?, ?, ?, ?)",
                    (table.id, turn, entry["seat"], entry.get("action"), entry.get("bot"), now),
                )
            except self._db.IntegrityError:
                raise MoveConflict(f"another page or server played move {turn} first") from None
            sets = ", ".join(f"{c} = ?" for c in progress)
            conn.execute(
                f"UPDATE tables SET {sets}, n_moves = ?, version = version + 1, moved = ? WHERE id = ?",
                (*progress.values(), turn + 1, now, table.id),
            )

    def take_seat(self, table_id: str, seat: int, name: str) -> None:
        """A person takes (or takes again) their seat under ``name``; the table's version moves on."""
        with self.transaction() as conn:
            conn.execute(
                "UPDATE seats SET name = ?, joined = COALESCE(joined, ?) WHERE table_id = ? AND seat = ?",
                (name, time.time(), table_id, seat),
            )
            conn.execute("UPDATE tables SET version = version + 1 WHERE id = ?", (table_id,))

    def table_view(self, table_id: str, token_hash: Optional[str]) -> Optional[dict]:
        """In one read, what a request to a table needs first: ``info`` (:meth:`table_version`;
        None: no such table), ``seats`` (``seat``, ``creator``, ``name``; never a token's hash)
        and ``seat``, the row of the seat whose token has this hash (None for no hash or no
        such seat)."""
        found = self.read_one(  # one statement: one state of the records, one round trip
            "SELECT t.version, t.n_moves, t.n_events, t.status, t.moved, s.seat, s.creator, s.name, s.token_hash "
            "FROM tables t LEFT JOIN seats s ON s.table_id = t.id WHERE t.id = ? ORDER BY s.seat",
            (table_id,),
        )
        if not found:
            return {"info": None, "seats": [], "seat": None}
        info = {k: found[0][k] for k in ("version", "n_moves", "n_events", "status", "moved")}
        rows = [{"seat": r["seat"], "creator": r["creator"], "name": r["name"]} for r in found if r["seat"] is not None]
        mine = next(
            (rows[i] for i, r in enumerate(found) if token_hash is not None and r["token_hash"] == token_hash), None
        )
        return {"info": info, "seats": rows, "seat": mine}

    def table_version(self, table_id: str) -> Optional[dict]:
        """The table's ``version``, ``n_moves``, ``n_events``, ``status`` and ``moved`` (one row), or None."""
        with self.reading() as conn:
            row = conn.execute(
                "SELECT version, n_moves, n_events, status, moved FROM tables WHERE id = ?", (table_id,)
            ).fetchone()
        return None if row is None else dict(row)

    def table_versions(self, table_ids) -> dict[str, dict]:
        """:meth:`table_version` of each of ``table_ids`` in one query: id -> its row (an id of no
        table is left out)."""
        ids = list(dict.fromkeys(table_ids))
        out: dict[str, dict] = {}
        with self.reading() as conn:
            for start in range(0, len(ids), 500):  # SQLite's limit of parameters is 999 in old builds
                chunk = ids[start : start + 500]
                rows = conn.execute(
                    "SELECT id, version, n_moves, n_events, status, moved FROM tables "
                    f"WHERE id IN ({', '.join('?' for _ in chunk)})",
                    chunk,
                ).fetchall()
                for row in rows:
                    info = dict(row)
                    out[info.pop("id")] = info
        return out

    def get_table(self, table_id: str) -> Optional[dict]:
        """A table's record (None: no such table): its row, its seats (names, never a token's
        hash) and its entries in order; :class:`DamagedGame` when a value cannot be read."""
        with self.reading() as conn:
            row = conn.execute("SELECT * FROM tables WHERE id = ?", (table_id,)).fetchone()
            if row is None:
                return None
            seats = conn.execute(
                "SELECT seat, creator, name FROM seats WHERE table_id = ? ORDER BY seat", (table_id,)
            ).fetchall()
            entries = conn.execute(
                "SELECT turn, seat, action, bot FROM table_moves WHERE table_id = ? ORDER BY turn", (table_id,)
            ).fetchall()
        record = dict(row)
        record.pop("request_id", None)
        record.pop("request_hash", None)
        for key in ("kinds", "options", "actions", "dice", "seats_drawn"):
            record[key] = _json(table_id, key, record[key])
        if record["events"] is not None:
            record["events"] = _json(table_id, "events", record["events"])
        record["seats"] = [dict(s) for s in seats]
        out = []
        for number, e in enumerate(entries):
            if e["turn"] != number or not _is_int(e["seat"]):
                raise DamagedGame(table_id, f"its moves skip move {number}")
            if e["action"] is not None and not _is_int(e["action"]):
                raise DamagedGame(table_id, f"its move {number} is not a whole number")
            if e["action"] is None and not isinstance(e["bot"], str):
                raise DamagedGame(table_id, f"its move {number} is neither a move nor a bot")
            out.append(
                {"seat": e["seat"], "action": e["action"]}
                if e["action"] is not None
                else {"seat": e["seat"], "bot": e["bot"]}
            )
        record["entries"] = out
        return record


# --------------------------------------------------------------------------- rows


def _insert_requested(conn, table: str, row: dict) -> None:
    """Insert ``row`` (with its ``request_id`` and ``request_hash``) into ``table`` ("games" or
    "tables", ours, never a client's), after checking that its request made none already."""
    if row["request_id"] is not None:
        _check_request(conn, table, row["request_id"], row["request_hash"])
    conn.execute(f"INSERT INTO {table} ({', '.join(row)}) VALUES ({', '.join('?' for _ in row)})", tuple(row.values()))


def _table_progress(table) -> dict:
    """The columns of a game's or a shared table's row that change as it is played."""
    game = table.game
    over = game.is_over
    return {
        "status": "over" if over else "playing",
        "finished": time.time() if over else None,
        "actions": json.dumps(table.actions),
        "dice": json.dumps(table.dice.dice),
        "seats_drawn": json.dumps(table.dice.seats),
        "n_events": len(table.steps),
        "events": json.dumps([s["event"] for s in table.steps]) if over else None,
        "loser": getattr(game, "loser", None),
    }


def _progress(web) -> dict:
    """The columns of a person's game's row that change as it is played: a table's, and the outcome."""
    return {**_table_progress(web), "outcome": web.session.outcome() if web.game.is_over else None}


def _plain(row) -> dict:
    """A summary row as JSON can carry it (a damaged value is shown as text, not refused)."""
    out = {}
    for key in row.keys():
        value = row[key]
        if isinstance(value, bytes):
            value = _text(value)
        elif isinstance(value, float) and not math.isfinite(value):
            value = None
        out[key] = value
    return out


def _json(game_id: str, column: str, text: Any) -> Any:
    if not isinstance(text, str):
        raise DamagedGame(game_id, f"its {column} is not JSON text")
    if len(text) > MAX_JSON:
        raise DamagedGame(game_id, f"its {column} is too long")
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        raise DamagedGame(game_id, f"its {column} is not JSON") from None


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _ints(value: Any, depth: int = 1) -> bool:
    """A list of ints (``depth`` 1) or of lists of ints (2)."""
    if not isinstance(value, list):
        return False
    if depth == 1:
        return all(_is_int(v) for v in value)
    return all(_ints(v) for v in value)


def _decode(game_id: str, row, move_rows: list) -> dict:
    """The row as a record, every value checked for the type it was written with."""
    record = dict(row)

    def need(ok: bool, why: str) -> None:
        if not ok:
            raise DamagedGame(game_id, why)

    if record.get("legacy_moves") is not None:
        raise DamagedGame(game_id, "its moves (from a version-1 file) could not be read when the file was migrated")
    record.pop("legacy_moves", None)
    record.pop("request_id", None)
    record.pop("request_hash", None)
    for key in ("player", "game", "status"):
        need(isinstance(record[key], str), f"its {key} is not text")
    record["opponents"] = _plain(row)["opponents"]  # shown only: derived from the bots when written
    for key in ("players", "seat", "seed", "n_events"):
        need(_is_int(record[key]), f"its {key} is not a whole number")
    need(record["status"] in ("playing", "over"), f"its status {record['status'][:20]!r} is neither playing nor over")
    need(isinstance(record["started"], (int, float)), "its start time is not a number")
    for key in ("bots", "options", "actions", "dice", "seats_drawn"):
        record[key] = _json(game_id, key, record[key])
    need(
        isinstance(record["bots"], list) and all(isinstance(b, str) for b in record["bots"]),
        "its bots are not a list of names",
    )
    need(
        isinstance(record["options"], dict) and all(_is_int(v) for v in record["options"].values()),
        "its options are not names with whole numbers",
    )
    need(
        _ints(record["actions"], 2) and all(len(a) == 2 for a in record["actions"]),
        "its actions are not [seat, action] pairs",
    )
    need(_ints(record["dice"]) and _ints(record["seats_drawn"]), "its dice are not whole numbers")
    if record["status"] == "over" or record["events"] is not None:
        record["events"] = _json(game_id, "events", record["events"])
        need(isinstance(record["events"], list), "its events are not a list")
    moves = []
    for number, move in enumerate(move_rows):
        need(move["turn"] == number, f"its moves skip move {number}")
        need(_is_int(move["action"]), f"its move {number} is not a whole number")
        snapshot = None if move["snapshot"] is None else _json(game_id, f"move {number}'s position", move["snapshot"])
        need(snapshot is None or isinstance(snapshot, dict), f"its move {number}'s position is not an object")
        moves.append({"action": move["action"], "snapshot": snapshot})
    record["moves"] = moves
    need(
        [a for s, a in record["actions"] if s == record["seat"]] == [m["action"] for m in moves],
        f"its {len(moves)} moves are not the person's actions it records",
    )
    return record


# --------------------------------------------------------------------------- version 1


def _v1_moves(text: Any) -> Optional[list]:
    """A version-1 ``moves`` value as rows to store, or None when it cannot be read."""
    try:
        moves = json.loads(text) if isinstance(text, str) else None
    except (ValueError, RecursionError):
        return None
    if not isinstance(moves, list):
        return None
    rows = []
    for move in moves:
        if not isinstance(move, dict) or not _is_int(move.get("action")):
            return None
        snapshot = move.get("snapshot")
        if snapshot is not None and not isinstance(snapshot, dict):
            return None
        rows.append((move["action"], None if snapshot is None else json.dumps(snapshot)))
    return rows


def _migrate_v1(conn) -> None:
    """Version 1 to 2 inside the caller's transaction: the person's moves move from the JSON
    column ``games.moves`` to rows of ``moves``; every game is kept (a row whose moves cannot
    be read keeps them as they were in ``legacy_moves``, and its game is unavailable)."""
    conn.execute("ALTER TABLE games RENAME TO games_v1")
    conn.execute("DROP INDEX IF EXISTS games_by_player")
    conn.execute(GAMES_TABLE)
    conn.execute(MOVES_TABLE)
    conn.execute("CREATE INDEX games_by_player ON games (player, status, finished)")
    kept = [c for c in GAMES_COLUMNS if c != "legacy_moves"]
    conn.execute(f"INSERT INTO games ({', '.join(kept)}) SELECT {', '.join(kept)} FROM games_v1")
    for row in conn.execute("SELECT id, moves, started FROM games_v1").fetchall():
        rows = _v1_moves(row["moves"])
        if rows is None:
            conn.execute("UPDATE games SET legacy_moves = ? WHERE id = ?", (str(row["moves"]), row["id"]))
            continue
        played = row["started"] if isinstance(row["started"], (int, float)) else 0.0
        conn.executemany(
            "INSERT INTO moves (game_id, turn, action, snapshot, played) VALUES (?, ?, ?, ?, ?)",
            [(row["id"], turn, action, snapshot, played) for turn, (action, snapshot) in enumerate(rows)],
        )
    conn.execute("DROP TABLE games_v1")
    conn.execute("UPDATE meta SET value = '2' WHERE key = 'schema'")


# --------------------------------------------------------------------------- version 2


def _migrate_v2(conn) -> None:
    """Version 2 to 3 inside the caller's transaction: request ids on the games, and the
    shared tables' rows (``tables``, ``seats``, ``table_moves``); every game is kept as it is."""
    for statement in V3_STATEMENTS:
        conn.execute(statement)
    conn.execute("UPDATE meta SET value = ? WHERE key = 'schema'", (str(SCHEMA_VERSION),))


def _stored_moves(conn, parent: str, child: str, key: str, row_id: str, what: str) -> int:
    """How many moves the records hold for the game or table ``row_id`` (one query, inside the
    caller's write transaction); :class:`MoveConflict` when it is gone or over.  ``parent``,
    ``child``, ``key``: ours ("games", "moves", "game_id" or the tables'), never a client's."""
    row = conn.execute(
        f"SELECT status, (SELECT COUNT(*) FROM {child} WHERE {key} = ?) AS stored FROM {parent} WHERE id = ?",
        (row_id, row_id),
    ).fetchone()
    if row is None:
        raise MoveConflict(f"the {what} is no longer in the records")
    if row["status"] != "playing":
        raise MoveConflict("another page or server played it to the end first")
    return row["stored"]


def _check_request(conn, table: str, request_id: str, request_hash: Optional[str]) -> None:
    """:class:`DuplicateRequest` when ``request_id`` already made a row of ``table`` (games or tables)."""
    row = conn.execute(f"SELECT id, request_hash FROM {table} WHERE request_id = ?", (request_id,)).fetchone()
    if row is not None:  # table: "games" or "tables", never a client's
        raise DuplicateRequest(row["id"], row["request_hash"] == request_hash)


def replay_actions(record: dict) -> list[dict[str, Any]]:
    """The events of the recorded game played again: a fresh engine with dice from the
    seed, every recorded action applied in order (JSON-shaped, like the record's)."""
    from play.web.table import jsonable

    spec = games.get(record["game"])
    game = spec.new_game(record["players"], dice=RandomDice(record["seed"]), **record["options"])
    for seat, action in record["actions"]:
        if game.current_player != seat:
            raise ValueError(f"the record has seat {seat} moving where the engine has seat {game.current_player}")
        game.apply(action)
    return jsonable(game.events)
