"""Files written so that a crash never leaves half of one, and read with limits
(no torch, no numpy).

Writing: a file is written to a new temporary name in the same folder, flushed to
disk, then renamed over its final name (``os.replace`` is atomic, and replaces a
link at that name instead of writing through it); the folder is then flushed
too.  A reader sees the old file or the new one, never a mix.  A command's
output goes through :func:`write_output`: an existing file is replaced only when
the user said ``--force``, and a link, a device, a FIFO or a folder at that name
is never written.

Reading: :func:`read_regular` takes a regular file only (a device, a FIFO, a
folder or a link to one is refused without blocking) and at most ``limit``
bytes; :func:`load_json` adds a depth limit.  Every refusal is a
:class:`FileRefused` (a ``ValueError``) whose message is one line: the path,
what is wrong, what to do.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import stat
from pathlib import Path
from typing import Any

MAX_JSON_BYTES = 16 * 1024 * 1024
MAX_JSON_DEPTH = 64


class FileRefused(ValueError):
    """A file that cannot or must not be read or written; the message is one line."""


def _kind(mode: int) -> str:
    return {stat.S_IFIFO: "a FIFO", stat.S_IFCHR: "a character device", stat.S_IFBLK: "a block device",
            stat.S_IFDIR: "a directory", stat.S_IFSOCK: "a socket", stat.S_IFLNK: "a symbolic link"}.get(
        stat.S_IFMT(mode), "not a regular file")


# --- reading --------------------------------------------------------------------------


def read_regular(path: os.PathLike | str, limit: int, what: str = "file") -> bytes:
    """The bytes of ``path`` if it is a regular file of at most ``limit`` bytes.

    The file is opened without blocking (a FIFO does not hang) and checked on the
    open descriptor (``fstat``), so a device, a FIFO, a directory or a link to one
    is refused, and so is anything larger than ``limit``."""
    path = Path(path)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise FileRefused(f"{path}: no such file") from None
    except OSError as e:
        raise FileRefused(f"{path}: cannot open the {what} ({e.strerror})") from None
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise FileRefused(f"{path}: the {what} is {_kind(mode)}, not a regular file; refusing to read it")
    with os.fdopen(fd, "rb") as f:
        try:
            data = f.read(limit + 1)
        except OSError as e:
            raise FileRefused(f"{path}: cannot read the {what} ({e.strerror})") from None
    if len(data) > limit:
        raise FileRefused(f"{path}: the {what} is larger than {limit:,} bytes; refusing to read it")
    return data


_STRINGS = re.compile(rb'"(?:[^"\\]|\\.)*"')
_BRACKETS = re.compile(rb"[\[\]{}]")


def json_depth(data: bytes) -> int:
    """How deeply the arrays and objects of the JSON text ``data`` nest (0 for a scalar)."""
    depth = deepest = 0
    for b in _BRACKETS.findall(_STRINGS.sub(b"", data)):
        if b in (b"[", b"{"):
            depth += 1
            deepest = max(deepest, depth)
        else:
            depth -= 1
    return deepest


def parse_json(data: bytes | str, where: str, max_depth: int = MAX_JSON_DEPTH) -> Any:
    """``data`` parsed as JSON, or :class:`FileRefused` (``where`` names it) when it is not
    JSON, not UTF-8, or nests deeper than ``max_depth``."""
    if isinstance(data, str):
        data = data.encode("utf-8", "surrogatepass")
    if json_depth(data) > max_depth:
        raise FileRefused(f"{where}: the JSON nests deeper than {max_depth} levels; refusing to read it")
    try:
        return json.loads(data)
    except (ValueError, RecursionError) as e:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
        raise FileRefused(f"{where}: not valid JSON ({str(e).splitlines()[0][:100]})") from None


def load_json(path: os.PathLike | str, what: str = "JSON file", limit: int = MAX_JSON_BYTES,
              max_depth: int = MAX_JSON_DEPTH) -> Any:
    """The JSON value in ``path``: a regular file of at most ``limit`` bytes, nested at most
    ``max_depth`` deep; anything else is one :class:`FileRefused` line."""
    return parse_json(read_regular(path, limit, what), str(path), max_depth)


# --- writing --------------------------------------------------------------------------


def fsync_dir(folder: Path) -> None:
    """Flush a folder's entries (a rename in it) to disk, where the system allows it."""
    try:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def write_temporary(path: Path, data: bytes) -> Path:
    """``data`` in a new temporary file next to ``path`` (``.NAME.tmp-HEX.EXT``, made
    with mode 0o666 less the umask, as ``open`` would), flushed to disk;
    :func:`commit` renames it to ``path``."""
    path = Path(path)
    folder = path.parent
    for _ in range(100):
        temp = folder / f".{path.stem}.tmp-{secrets.token_hex(8)}{path.suffix}"
        try:
            fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
                         | getattr(os, "O_CLOEXEC", 0), 0o666)
            break
        except FileExistsError:
            continue
    else:  # pragma: no cover - 100 collisions of 64 random bits
        raise OSError(f"cannot create a temporary file next to {path}")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
    except BaseException:
        temp.unlink(missing_ok=True)
        raise
    return temp


def commit(temp: Path, path: Path) -> None:
    """Rename ``temp`` over ``path`` (atomic; a link at ``path`` is replaced, not followed)."""
    os.replace(temp, path)
    fsync_dir(Path(path).parent)


def write_atomic(path: Path, data: bytes | str) -> None:
    """Write ``path`` so that a crash leaves either its old content or ``data``
    (text is written as UTF-8)."""
    if isinstance(data, str):
        data = data.encode()
    commit(write_temporary(path, data), path)


def check_output(path: os.PathLike | str, force: bool = False, what: str = "file", flag: str = "--force") -> Path:
    """``path`` if a command may write its output there: nothing is there yet, or a regular
    file and ``force``.  A symbolic link, a device, a FIFO, a socket or a folder at that name
    is refused even with ``force``, and so is a folder that does not exist."""
    path = Path(path)
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        mode = None
    except OSError as e:
        raise FileRefused(f"{path}: cannot write the {what} there ({e.strerror})") from None
    if mode is not None:
        if not stat.S_ISREG(mode):
            raise FileRefused(f"{path} is {_kind(mode)}; refusing to write the {what} there (give a new file name)")
        if not force:
            raise FileRefused(f"{path} already exists; give {flag} to replace it, or another name")
    folder = path.parent
    if not folder.is_dir():
        raise FileRefused(f"{path}: the folder {folder} does not exist; create it first or pick another path")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise FileRefused(f"{path}: the folder {folder} cannot be written")
    return path


def write_output(path: os.PathLike | str, data: bytes | str, force: bool = False, what: str = "file",
                 flag: str = "--force") -> Path:
    """Write a command's output file: :func:`check_output`, then :func:`write_atomic`."""
    path = check_output(path, force, what, flag)
    try:
        write_atomic(path, data)
    except OSError as e:
        raise FileRefused(f"{path}: cannot write the {what} ({e.strerror})") from None
    return path
