"""The web table's records: every game in one SQLite file, and replays.

A row is written when a game starts and updated after each of the person's
moves (status ``playing``), then completed when the game ends (status
``over``, with the outcome and every event).  So a server restart loses
nothing: a finished game stays in the person's record, and a game in progress
is rebuilt from its seed and the person's moves the next time it is asked for
(``Store.restore`` in ``play.web.app``).

A row holds everything needed to replay the game: the seed, the seats and bots,
the game options, every action of every seat in order, every die rolled and
every seat drawn.  :func:`replay_actions` plays the actions again on a fresh
engine with dice from the seed and returns its events; they equal the recorded
ones (``tests/test_web.py``).

All SQL is parameterised; every write is one transaction.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from contextlib import closing, contextmanager
from pathlib import Path
from typing import Any, Iterator, Optional

import games
from core.dice import RandomDice

SCHEMA_VERSION = 1

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS games (
    id          TEXT PRIMARY KEY,
    player      TEXT NOT NULL,
    game        TEXT NOT NULL,
    players     INTEGER NOT NULL,
    seat        INTEGER NOT NULL,
    bots        TEXT NOT NULL,     -- JSON: the bots clockwise from the person's seat
    opponents   TEXT NOT NULL,     -- the bots' names sorted, joined by ', ' (the record's rows)
    options     TEXT NOT NULL,     -- JSON: the game options (e.g. a pot or a goal)
    seed        INTEGER NOT NULL,
    status      TEXT NOT NULL,     -- 'playing' or 'over'
    started     REAL NOT NULL,
    finished    REAL,
    moves       TEXT NOT NULL,     -- JSON: the person's moves: action and the coach's view of the position
    actions     TEXT NOT NULL,     -- JSON: every [seat, action], all seats, in order
    dice        TEXT NOT NULL,     -- JSON: every die value rolled, in order
    seats_drawn TEXT NOT NULL,     -- JSON: every seat drawn by the dice (first players)
    n_events    INTEGER NOT NULL,
    events      TEXT,              -- JSON: the engine's events, once over
    outcome     REAL,              -- +1 the person did not lose, -1 they lost
    loser       INTEGER
);
CREATE INDEX IF NOT EXISTS games_by_player ON games (player, status, finished);
"""


def default_db_path() -> Path:
    """``$XDG_DATA_HOME/dice-arena/records.sqlite3`` (``~/.local/share`` when unset)."""
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "dice-arena" / "records.sqlite3"


class Records:
    """The SQLite file of games; one short connection per operation, so threads share it safely."""

    def __init__(self, path: os.PathLike | str):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with closing(self._connect()) as conn:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.executescript(SCHEMA)
        with self.transaction() as conn:
            conn.execute("INSERT OR IGNORE INTO meta (key, value) VALUES (?, ?)", ("schema", str(SCHEMA_VERSION)))

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path, timeout=30, isolation_level=None)
        conn.row_factory = sqlite3.Row
        return conn

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        conn = self._connect()
        try:
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")
        finally:
            conn.close()

    @contextmanager
    def reading(self) -> Iterator[sqlite3.Connection]:
        conn = self._connect()
        try:
            yield conn
        finally:
            conn.close()

    # --- writing -----------------------------------------------------------------------
    def save(self, web) -> None:
        """Insert or update the row of a ``play.web.table.WebGame`` (one transaction)."""
        game = web.game
        over = game.is_over
        row = {
            "id": web.id, "player": web.player, "game": web.spec.name, "players": web.n_players,
            "seat": web.seat, "bots": json.dumps(web.bot_names), "opponents": ", ".join(sorted(web.bot_names)),
            "options": json.dumps(web.options, sort_keys=True), "seed": web.seed,
            "status": "over" if over else "playing", "started": web.started,
            "finished": time.time() if over else None, "moves": json.dumps(web.moves),
            "actions": json.dumps(web.actions), "dice": json.dumps(web.dice.dice),
            "seats_drawn": json.dumps(web.dice.seats), "n_events": len(web.steps),
            "events": json.dumps([s["event"] for s in web.steps]) if over else None,
            "outcome": web.session.outcome() if over else None, "loser": getattr(game, "loser", None),
        }
        columns = ", ".join(row)
        marks = ", ".join("?" for _ in row)
        updates = ", ".join(f"{c} = excluded.{c}" for c in row if c != "id")
        with self.transaction() as conn:
            conn.execute(f"INSERT INTO games ({columns}) VALUES ({marks}) ON CONFLICT (id) DO UPDATE SET {updates}",
                         tuple(row.values()))

    # --- reading -----------------------------------------------------------------------
    def get(self, game_id: str) -> Optional[dict]:
        with self.reading() as conn:
            row = conn.execute("SELECT * FROM games WHERE id = ?", (game_id,)).fetchone()
        return None if row is None else _decode(row)

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
                f"FROM games WHERE {where} ORDER BY finished DESC LIMIT ?", (*args, recent),
            ).fetchall()
            playing = conn.execute(
                "SELECT COUNT(*) FROM games WHERE status = 'playing'" + (" AND player = ?" if player is not None else ""),
                args,
            ).fetchone()[0]
        return {
            "player": player,
            "records": [dict(r) for r in rows],
            "recent": [dict(r) for r in last],
            "unfinished": playing,
        }


def _decode(row: sqlite3.Row) -> dict:
    record = dict(row)
    for key in ("bots", "options", "moves", "actions", "dice", "seats_drawn", "events"):
        if record.get(key) is not None:
            record[key] = json.loads(record[key])
    return record


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
