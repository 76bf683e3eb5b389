"""Writing files so that a crash never leaves half of one (no torch, no numpy).

A file is written to a new temporary name in the same folder, flushed to disk,
then renamed over its final name (``os.replace`` is atomic, and replaces a link
at that name instead of writing through it); the folder is then flushed too.  A
reader sees the old file or the new one, never a mix.  Used by the checkpoints
(``agents.ppo_agent``, ``train.checkpoint``), the training studies and the
tournament's records.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path


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
