"""``python -m play web`` (and ``python -m play.web``): serve the web table on this machine.

``add_arguments`` and ``run`` are what ``play/__main__.py`` wires in; ``main`` is
the stand-alone entry point of ``python -m play.web``.
"""

from __future__ import annotations

import argparse
import ipaddress
import sys
from typing import Optional, Sequence, TextIO

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8420

DESCRIPTION = (
    "Serve a page where you play the project's games against the bots, with a coach that knows the exact win "
    "probability of every move (two-player games), and your record against each bot. "
    "The API is documented at /docs."
)


def _port(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a port number, got {text!r}") from None
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"a port is 0..65535, got {value}")
    return value


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--host", default=DEFAULT_HOST,
                        help=f"the address to listen on (default: {DEFAULT_HOST}, this machine only)")
    parser.add_argument("--port", type=_port, default=DEFAULT_PORT, help=f"the port (default: {DEFAULT_PORT})")
    parser.add_argument("--db", default=None, metavar="PATH",
                        help="the SQLite file of game records (default: $XDG_DATA_HOME/dice-arena/records.sqlite3, "
                        "else ~/.local/share/dice-arena/records.sqlite3)")


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def run(args: argparse.Namespace, out: TextIO = sys.stdout, err: Optional[TextIO] = None) -> int:
    """Start the server (blocks until Ctrl-C); returns the exit code (2 without the web extra)."""
    err = err if err is not None else sys.stderr
    try:
        import uvicorn

        from play.web.app import create_app
        from play.web.records import default_db_path
    except ImportError as e:
        print(f"python -m play web needs the web extra: pip install -e '.[web]' ({e})", file=err)
        return 2
    db = args.db or str(default_db_path())
    app = create_app(db)
    host = f"[{args.host}]" if ":" in args.host else args.host
    print(f"Dice Arena on http://{host}:{args.port}/ (API: /docs; records: {db}); Ctrl-C stops it.", file=out)
    if not _is_loopback(args.host):
        print(f"warning: listening on {args.host}, not only this machine: anyone who can reach it can play "
              "and read the records", file=err)
    out.flush()
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning")
    return 0


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m play web", description=DESCRIPTION)
    add_arguments(parser)
    args = parser.parse_args(argv)
    try:
        return run(args)
    except KeyboardInterrupt:
        return 0
