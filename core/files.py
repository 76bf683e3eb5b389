"""Files written so that a crash never leaves half of one, and read with limits
(no torch, no numpy).

Writing: a file is written to a new temporary name in the same folder, flushed to
disk, then renamed over its final name (``os.replace`` is atomic, and replaces a
link at that name instead of writing through it); the folder is then flushed
too.  A reader sees the old file or the new one, never a mix.  A command's
output goes through :func:`write_output` (or :func:`output_file`, to stream it):
an existing file is replaced only when the user said ``--force`` (without it the
new file is linked into place only if the name is still free, so a file that
appears meanwhile is not replaced either), and a link, a device, a FIFO, a
socket or a folder at that name is never written, not even with ``--force``.

Reading: :func:`read_regular` takes a regular file only (a device, a FIFO, a
folder or a link to one is refused without opening it, or, if it was swapped
in meanwhile, without blocking on it) and at most ``limit`` bytes;
:func:`load_json` adds a depth limit.  Every refusal is a :class:`FileRefused`
(a ``ValueError``) whose message is one line: the path, what is wrong, what to do.
"""

from __future__ import annotations

import errno
import json
import os
import re
import secrets
import stat
from contextlib import contextmanager
from pathlib import Path
from typing import Any, BinaryIO, Iterator

MAX_JSON_BYTES = 16 * 1024 * 1024
MAX_JSON_DEPTH = 64
MAX_SHOWN = 120  # characters of a path shown in a message


class FileRefused(ValueError):
    """A file that cannot or must not be read or written; the message is one line."""


def _kind(mode: int) -> str:
    return {
        stat.S_IFIFO: "a FIFO",
        stat.S_IFCHR: "a character device",
        stat.S_IFBLK: "a block device",
        stat.S_IFDIR: "a folder",
        stat.S_IFSOCK: "a socket",
        stat.S_IFLNK: "a symbolic link",
    }.get(stat.S_IFMT(mode), "not a regular file")


def shown(path: os.PathLike | str) -> str:
    """``path`` as a message shows it: on one line, at most about ``MAX_SHOWN`` characters."""
    text = os.fspath(path)
    text = text if isinstance(text, str) else os.fsdecode(text)
    text = "".join(c if c.isprintable() else "?" for c in text)
    return text if len(text) <= MAX_SHOWN else text[: MAX_SHOWN - 3] + "..."


def _why(e: OSError) -> str:
    return e.strerror or type(e).__name__


# --- reading --------------------------------------------------------------------------


def read_regular(path: os.PathLike | str, limit: int, what: str = "file") -> bytes:
    """The bytes of ``path`` if it is a regular file of at most ``limit`` bytes.

    What the path names (following links) is looked at first: anything but a
    regular file is refused without being opened.  The file is then opened
    without blocking and checked again on the open descriptor (``fstat``), so a
    FIFO or a device swapped in meanwhile is refused too and does not hang; at
    most ``limit + 1`` bytes are read."""
    name = shown(path)
    try:
        mode = os.stat(path).st_mode
        if not stat.S_ISREG(mode):
            raise FileRefused(f"{name}: the {what} is {_kind(mode)}, not a regular file; refusing to read it")
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise FileRefused(f"{name}: no such file") from None
    except OSError as e:
        raise FileRefused(f"{name}: cannot open the {what} ({_why(e)})") from None
    with os.fdopen(fd, "rb") as f:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise FileRefused(f"{name}: the {what} is {_kind(mode)}, not a regular file; refusing to read it")
        try:
            data = f.read(limit + 1)
        except OSError as e:
            raise FileRefused(f"{name}: cannot read the {what} ({_why(e)})") from None
    if len(data) > limit:
        raise FileRefused(f"{name}: the {what} is larger than {limit:,} bytes; refusing to read it")
    return data


# One token: a string (to its closing quote, or to the end of a text cut short: the
# match never fails, so the scan is linear) or a bracket.
_TOKENS = re.compile(rb'"(?:[^"\\]++|\\.)*+"?|[\[\]{}]', re.DOTALL)


def json_depth(data: bytes, stop: int | None = None) -> int:
    """How deeply the arrays and objects of the JSON text ``data`` nest (0 for a scalar).
    With ``stop``, only the side of ``stop`` it is on is sure: the answer is then some
    number up to ``stop`` when the text nests no deeper, else ``stop + 1`` (the scan
    stops there)."""
    opened = data.count(b"[") + data.count(b"{")
    if stop is not None and opened <= stop:
        return opened  # too few brackets to nest deeper than stop: no need to scan
    depth = deepest = 0
    for m in _TOKENS.finditer(data):
        b = m.group()
        if b in (b"[", b"{"):
            depth += 1
            if depth > deepest:
                deepest = depth
                if stop is not None and deepest > stop:
                    return deepest
        elif b in (b"]", b"}"):
            depth -= 1
    return deepest


def parse_json(data: bytes | str, where: str, max_depth: int = MAX_JSON_DEPTH) -> Any:
    """``data`` parsed as JSON, or :class:`FileRefused` (``where`` names it) when it is not
    JSON, not UTF-8, or nests deeper than ``max_depth``."""
    if isinstance(data, str):
        data = data.encode("utf-8", "surrogatepass")
    if json_depth(data, max_depth) > max_depth:
        raise FileRefused(f"{where}: the JSON nests deeper than {max_depth} levels; refusing to read it")
    try:
        return json.loads(data)
    except (ValueError, RecursionError) as e:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
        raise FileRefused(f"{where}: not valid JSON ({' '.join(str(e).split())[:100]})") from None


def load_json(
    path: os.PathLike | str, what: str = "JSON file", limit: int = MAX_JSON_BYTES, max_depth: int = MAX_JSON_DEPTH
) -> Any:
    """The JSON value in ``path``: a regular file of at most ``limit`` bytes, nested at most
    ``max_depth`` deep; anything else is one :class:`FileRefused` line."""
    return parse_json(read_regular(path, limit, what), shown(path), max_depth)


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


def _create_temporary(path: Path) -> tuple[int, Path]:
    """A new, empty temporary file next to ``path`` (``.NAME.tmp-HEX.EXT``, mode 0o666
    less the umask, as ``open`` would make it): its descriptor (open for writing) and name."""
    folder = path.parent
    stem = path.stem[:100]  # the name stays within the file system's limit
    for _ in range(100):
        temp = folder / f".{stem}.tmp-{secrets.token_hex(8)}{path.suffix[:20]}"
        try:
            fd = os.open(
                temp,
                os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0),
                0o666,
            )
            return fd, temp
        except FileExistsError:
            continue
    raise OSError(errno.EEXIST, f"cannot create a temporary file next to {path}")  # pragma: no cover


def write_temporary(path: Path, data: bytes) -> Path:
    """``data`` in a new temporary file next to ``path`` (see :func:`_create_temporary`),
    flushed to disk; :func:`commit` renames it to ``path``."""
    fd, temp = _create_temporary(Path(path))
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
    if isinstance(path, str) and not path.strip():
        raise FileRefused(f"{path!r}: give the name of the {what} to write")
    if isinstance(path, str) and path.endswith(("/", os.sep)):
        raise FileRefused(f"{path}: ends with '/', a folder's name; give the name of the {what} to write")
    path = Path(path)
    if not path.name.strip():
        raise FileRefused(f"{str(path)!r}: a blank name; give the name of the {what} to write")
    name = shown(path)
    folder = path.parent
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        mode = None
    except NotADirectoryError:
        raise FileRefused(f"{name}: {shown(folder)} is not a folder; there is no folder to write it in") from None
    except OSError as e:
        raise FileRefused(f"{name}: cannot write the {what} there ({_why(e)})") from None
    if mode is not None:
        if not stat.S_ISREG(mode):
            raise FileRefused(f"{name} is {_kind(mode)}; refusing to write the {what} there (give a new file name)")
        if not force:
            raise FileRefused(f"{name} already exists; give {flag} to replace it, or another name")
    try:
        folder_mode = os.stat(folder).st_mode
    except OSError:
        folder_mode = None
    if folder_mode is None or not stat.S_ISDIR(folder_mode):
        raise FileRefused(f"{name}: there is no folder {shown(folder)} to write it in")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise FileRefused(f"{name}: cannot write the {what} there (the folder {shown(folder)} is not writable)")
    return path


def _commit_output(temp: Path, path: Path, force: bool, what: str, flag: str) -> None:
    """Put the finished ``temp`` at ``path``, as :func:`check_output` allows, looking again
    right before: without ``force`` only if the name is still free (a hard link fails
    rather than replace anything), with it only over a regular file."""
    if not force:
        try:
            os.link(temp, path, follow_symlinks=False)
        except FileExistsError:
            raise FileRefused(f"{shown(path)} already exists; give {flag} to replace it, or another name") from None
        except OSError as e:
            if e.errno not in (errno.EPERM, errno.EOPNOTSUPP, errno.ENOTSUP, errno.EMLINK, errno.EXDEV, errno.ENOSYS):
                raise
            check_output(path, force, what, flag)  # no hard links here: look again, then rename
            os.replace(temp, path)
        else:
            os.unlink(temp)
        fsync_dir(path.parent)
        return
    check_output(path, force, what, flag)
    commit(temp, path)


@contextmanager
def output_file(
    path: os.PathLike | str, force: bool = False, what: str = "file", flag: str = "--force"
) -> Iterator[BinaryIO]:
    """A binary file to stream a command's output into, put at ``path`` atomically when
    the ``with`` block ends without an exception (:func:`check_output` first; see
    :func:`_commit_output`).  On an exception nothing is left behind; an ``OSError``
    (a full disk, ...) becomes one :class:`FileRefused` line."""
    path = check_output(path, force, what, flag)
    temp = None
    try:
        fd, temp = _create_temporary(path)
        with os.fdopen(fd, "wb") as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        _commit_output(temp, path, force, what, flag)
    except OSError as e:
        raise FileRefused(f"{shown(path)}: cannot write the {what} ({_why(e)})") from None
    finally:
        if temp is not None:
            try:
                os.unlink(temp)
            except FileNotFoundError:
                pass
            except OSError:  # pragma: no cover
                pass


def write_output(
    path: os.PathLike | str, data: bytes | str, force: bool = False, what: str = "file", flag: str = "--force"
) -> Path:
    """Write a command's output file: :func:`check_output`, then ``data`` (text as UTF-8)
    atomically, as :func:`output_file` does."""
    if isinstance(data, str):
        data = data.encode()
    with output_file(path, force, what, flag) as f:
        f.write(data)
    return Path(path)
