"""Where the records live: a SQLite file, or a PostgreSQL database (``--db postgresql://...``).

``play.web.records`` writes the same SQL to both; this module is what differs:

* connecting (a SQLite file is checked to be a regular file first; a PostgreSQL URL is
  connected to with ``psycopg``, the ``postgres`` extra), and how a connection is shown
  in a message (a URL never with its password: :func:`shown`);
* a write transaction, one writer at a time across every process and machine: SQLite's
  ``BEGIN IMMEDIATE``; on PostgreSQL ``BEGIN`` then a transaction-level advisory lock
  (``pg_advisory_xact_lock``), so the stored count a move checks cannot change until the
  move is committed, exactly as with SQLite;
* a read transaction that sees one state throughout: SQLite's deferred ``BEGIN`` on a
  connection of its own; PostgreSQL's ``REPEATABLE READ READ ONLY`` on a connection from
  a pool of at most ``READERS`` kept open by each process (a new PostgreSQL connection costs
  milliseconds of CPU on both sides: its password check);
* the tables and columns there are (``sqlite_master`` and ``PRAGMA table_info``, or
  ``information_schema`` in the connection's schema);
* on PostgreSQL the SQL's ``?`` parameters become ``%s``, and a ``CREATE TABLE`` or
  ``ALTER TABLE`` takes 64-bit ``BIGINT`` for ``INTEGER`` and ``DOUBLE PRECISION`` for
  ``REAL`` (PostgreSQL's ``REAL`` is 32 bits, too few for a time in seconds).

Rows read back answer both ``row[0]`` and ``row["name"]``, as ``sqlite3.Row`` does.
"""

from __future__ import annotations

import os
import re
import sqlite3
import threading
from contextlib import closing, contextmanager
from pathlib import Path
from typing import Any, Iterator
from urllib.parse import urlsplit

URL_SCHEMES = ("postgresql://", "postgres://")
LOCK_KEY = 4_200_421  # the advisory lock that the writers of one PostgreSQL database take in turn
READERS = 16  # PostgreSQL read connections of a process at most (kept open; a read waits for one)


class RecordsError(ValueError):
    """The records cannot be used; the message is one line naming them and what to do."""


def is_url(db: Any) -> bool:
    """Whether ``--db`` names a PostgreSQL database (a ``postgresql://`` URL) rather than a file."""
    return isinstance(db, str) and db.strip().lower().startswith(URL_SCHEMES)


def shown(db: Any) -> str:
    """``db`` as it may be printed or logged: a URL without its password (or query), a path as it is."""
    if not is_url(db):
        return str(db)
    try:
        parts = urlsplit(db.strip())
        host = parts.hostname or ""
        port = parts.port
    except ValueError:  # e.g. an unclosed '[' or a port that is not a number
        return f"{db.strip().split(':', 1)[0].lower()}://(a URL that cannot be read)"
    if ":" in host:
        host = f"[{host}]"
    where = (f"{parts.username}@" if parts.username else "") + host + (f":{port}" if port else "")
    return f"{parts.scheme.lower()}://{where}{parts.path}"


def _password(url: str) -> str:
    try:
        return urlsplit(url).password or ""
    except ValueError:
        return ""


def open_database(db: os.PathLike | str) -> "SQLiteFile | Postgres":
    """The backend for ``--db``: a PostgreSQL URL, else the path of a SQLite file."""
    return Postgres(db) if is_url(db) else SQLiteFile(db)


def _text(raw: bytes) -> str:
    return raw.decode("utf-8", "replace")  # a damaged text value reads as text, never an exception


# --------------------------------------------------------------------------- SQLite


class SQLiteFile:
    """A SQLite file: WAL, one connection per read, ``BEGIN IMMEDIATE`` per write."""

    kind = "file"
    Error: tuple = (sqlite3.Error,)
    IntegrityError: tuple = (sqlite3.IntegrityError,)

    def __init__(self, path: os.PathLike | str):
        self.path = Path(path)
        self.label = f"the records file {self.path}"

    def refuse(self, why: str, todo: str = "give another --db") -> RecordsError:
        return RecordsError(f"{self.label} {why}; {todo}")

    def reach(self) -> None:
        """Refuse a path that cannot be a records file before SQLite touches it."""
        path = self.path
        try:
            if path.is_dir():
                raise self.refuse("is a folder, not a file", "give the path of a file with --db")
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
            except FileExistsError:
                raise self.refuse(
                    f"cannot be created: {path.parent} (or a folder above it) is a file, not a folder"
                ) from None
            if path.exists() and not path.is_file():
                raise self.refuse("is not a regular file")
        except OSError as e:  # a folder on the way that may not be read or made
            raise self.refuse(f"cannot be reached or created ({e.strerror or type(e).__name__})") from None

    def explain(self, e: Exception) -> RecordsError:
        why = str(e)
        if "not a database" in why or "malformed" in why:
            return self.refuse(
                f"is not a SQLite database, or is damaged (SQLite says: {why})", "move it away or give another --db"
            )
        if "readonly" in why or "read-only" in why:
            return self.refuse(f"cannot be written (SQLite says: {why})", "give a file you can write with --db")
        return self.refuse(f"cannot be opened (SQLite says: {why})")

    def connect(self, writer: bool = False) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path, timeout=30, isolation_level=None, check_same_thread=not writer)
        conn.row_factory = sqlite3.Row
        conn.text_factory = _text
        if writer:
            try:
                conn.execute("PRAGMA synchronous=NORMAL")  # durable at each checkpoint; safe with WAL
            except BaseException:
                conn.close()
                raise
        return conn

    def problems(self, conn) -> list[str]:
        """What an integrity check finds wrong (empty: nothing)."""
        found = [str(row[0]) for row in conn.execute("PRAGMA quick_check")]
        return [] if found == ["ok"] else found

    def prepared(self, conn) -> None:
        """Once the file is ours: readers and the writer do not block each other."""
        conn.execute("PRAGMA journal_mode=WAL")

    @contextmanager
    def write(self, conn) -> Iterator[Any]:
        """``BEGIN IMMEDIATE`` on ``conn``: committed when the block ends, rolled back when it raises."""
        conn.execute("BEGIN IMMEDIATE")
        with _ending(conn, self.Error):
            yield conn

    @contextmanager
    def read(self) -> Iterator[Any]:
        conn = self.connect()
        try:
            conn.execute("BEGIN")
            try:
                yield conn
            finally:
                conn.execute("ROLLBACK")
        finally:
            conn.close()

    def read_one(self, sql: str, params=()) -> list:
        with closing(self.connect()) as conn:
            return conn.execute(sql, params).fetchall()

    def tables(self, conn) -> set[str]:
        return {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}

    def columns(self, conn, table: str) -> set[str]:
        return {r[1] for r in conn.execute(f"PRAGMA table_info({table})")}  # table: one of ours, never a client's

    def in_transaction(self, conn) -> bool:
        """Whether ``conn`` is still in a transaction (True for a connection that cannot say: closed)."""
        try:
            return conn.in_transaction
        except sqlite3.Error:
            return True

    def close_readers(self) -> None:
        pass  # each read closes its own connection


@contextmanager
def _ending(conn, errors: tuple) -> Iterator[None]:
    """COMMIT when the block ends, ROLLBACK when it raises (the first error is the one seen)."""
    try:
        yield
    except BaseException:
        try:
            conn.execute("ROLLBACK")
        except errors:
            pass  # the caller sees the first error; the connection is dropped (still in a transaction)
        raise
    conn.execute("COMMIT")


# --------------------------------------------------------------------------- PostgreSQL

_DDL = re.compile(r"^\s*(CREATE\s+TABLE|ALTER\s+TABLE)", re.IGNORECASE)


def _postgres_sql(sql: str) -> str:
    """SQLite's SQL as PostgreSQL takes it (see the module's docstring)."""
    if _DDL.match(sql):
        sql = re.sub(r"\bINTEGER\b", "BIGINT", re.sub(r"\bREAL\b", "DOUBLE PRECISION", sql))
    return sql.replace("%", "%%").replace("?", "%s")  # our SQL has no '?' or '%' in a literal


class _Row(tuple):
    """A row answering ``row[0]`` and ``row["column"]``, with ``keys()`` (so ``dict(row)`` works)."""

    def __new__(cls, values, names: tuple[str, ...], index: dict[str, int]):
        row = super().__new__(cls, values)
        row._names, row._index = names, index
        return row

    def __getitem__(self, key):
        if isinstance(key, str):
            return tuple.__getitem__(self, self._index[key])
        return tuple.__getitem__(self, key)

    def keys(self) -> list[str]:
        return list(self._names)


def _rows(cursor):
    names = tuple(d.name for d in cursor.description or ())
    index = {n: i for i, n in enumerate(names)}
    return lambda values: _Row(values, names, index)


class _PgConnection:
    """A psycopg connection that takes the SQL as ``play.web.records`` writes it."""

    def __init__(self, conn):
        self.raw = conn

    def execute(self, sql: str, params=()):
        return self.raw.execute(_postgres_sql(sql), tuple(params))

    def executemany(self, sql: str, rows):
        with self.raw.cursor() as cur:
            cur.executemany(_postgres_sql(sql), [tuple(r) for r in rows])

    def close(self) -> None:
        self.raw.close()


class Postgres:
    """A PostgreSQL database: the records of every server process, on any machine, that is given it."""

    kind = "database"

    def __init__(self, url: str):
        scheme, rest = url.strip().split("://", 1)
        self.url = scheme.lower() + "://" + rest  # libpq takes the scheme in lower case only
        self.label = f"the records database {shown(self.url)}"
        try:
            import psycopg
        except ImportError:
            raise RecordsError(
                f"{self.label} needs psycopg: pip install -e '.[postgres]' (or give the path of a SQLite file)"
            ) from None
        self._psycopg = psycopg
        self.Error = (psycopg.Error,)
        self.IntegrityError = (psycopg.IntegrityError,)
        self._idle: list[_PgConnection] = []
        self._lock = threading.Lock()
        self._pid = os.getpid()
        self._slots: threading.BoundedSemaphore | None = None  # one per connection a read may hold

    def refuse(self, why: str, todo: str = "give another --db") -> RecordsError:
        return RecordsError(f"{self.label} {why}; {todo}")

    def reach(self) -> None:
        pass  # connecting says it all

    def explain(self, e: Exception) -> RecordsError:
        why = " ".join(str(e).split())
        secret = _password(self.url)
        if secret:
            why = why.replace(secret, "***")  # never echoed by libpq as far as we know; never shown here
        why = why[:200] or type(e).__name__
        if isinstance(e, self._psycopg.OperationalError):
            return self.refuse(
                f"cannot be reached (PostgreSQL says: {why})", "start the server, or check the URL given with --db"
            )
        if isinstance(e, self._psycopg.errors.InsufficientPrivilege):
            return self.refuse(f"cannot be written (PostgreSQL says: {why})", "give a role that may create tables")
        return self.refuse(f"cannot be used (PostgreSQL says: {why})")

    def connect(self, writer: bool = False) -> _PgConnection:
        try:
            raw = self._psycopg.connect(self.url, autocommit=True, connect_timeout=10, row_factory=_rows)
        except self._psycopg.ProgrammingError as e:  # a URL libpq cannot parse: say so without the URL itself
            raise self._psycopg.OperationalError(f"the URL is not one PostgreSQL takes ({type(e).__name__})") from None
        return _PgConnection(raw)

    def problems(self, conn) -> list[str]:
        return []  # PostgreSQL checks its own pages

    def prepared(self, conn) -> None:
        pass

    @contextmanager
    def write(self, conn) -> Iterator[Any]:
        conn.raw.execute(f"BEGIN; SELECT pg_advisory_xact_lock({LOCK_KEY:d})")  # one round trip
        with _ending(conn, self.Error):
            yield conn

    @contextmanager
    def read(self) -> Iterator[Any]:
        conn = self._take()
        try:
            conn.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
            try:
                yield conn
            finally:
                conn.execute("ROLLBACK")
        except BaseException:
            self._give(conn, broken=True)  # never pooled again: it may be broken or still in a transaction
            raise
        self._give(conn)

    def read_one(self, sql: str, params=()) -> list:
        conn = self._take()
        try:
            rows = conn.execute(sql, params).fetchall()  # autocommit: the statement is its own snapshot
        except BaseException:
            self._give(conn, broken=True)
            raise
        self._give(conn)
        return rows

    def _mine(self) -> None:
        """(Under the lock.)  A forked child starts a pool of its own: its parent's connections are not its."""
        if self._pid != os.getpid() or self._slots is None:
            self._idle, self._pid, self._slots = [], os.getpid(), threading.BoundedSemaphore(READERS)

    def _take(self) -> _PgConnection:
        with self._lock:
            self._mine()
            slots = self._slots
        slots.acquire()
        with self._lock:
            if self._idle:
                return self._idle.pop()
        try:
            return self.connect()
        except BaseException:
            slots.release()
            raise

    def _give(self, conn: _PgConnection, broken: bool = False) -> None:
        with self._lock:
            mine = self._pid == os.getpid()
            if mine and not broken:
                self._idle.append(conn)
                self._slots.release()
                return
        if mine:
            self._slots.release()
        try:
            conn.close()
        except self.Error:
            pass

    def close_readers(self) -> None:
        with self._lock:
            idle, self._idle = (self._idle, []) if self._pid == os.getpid() else ([], [])
        for conn in idle:
            try:
                conn.close()
            except self.Error:
                pass

    def tables(self, conn) -> set[str]:
        rows = conn.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()"
        ).fetchall()
        return {r[0] for r in rows}

    def columns(self, conn, table: str) -> set[str]:
        rows = conn.execute(
            "SELECT column_name FROM information_schema.columns "
            "WHERE table_schema = current_schema() AND table_name = ?",
            (table,),
        ).fetchall()
        return {r[0] for r in rows}

    def in_transaction(self, conn) -> bool:
        try:
            return conn.raw.info.transaction_status != self._psycopg.pq.TransactionStatus.IDLE
        except Exception:  # noqa: BLE001 (a closed or broken connection cannot say)
            return True


def optional_errors() -> tuple:
    """The exceptions either backend raises for a database that fails (for the web app's 503)."""
    errors: tuple = (sqlite3.Error,)
    try:
        import psycopg
    except ImportError:
        return errors
    return errors + (psycopg.Error,)
