"""``python -m play web`` (and ``python -m play.web``): serve the web table on this machine.

``add_arguments`` and ``run`` are what ``play/__main__.py`` wires in; ``main`` is
the stand-alone entry point of ``python -m play.web``.
"""

from __future__ import annotations

import argparse
import ipaddress
import os
import signal
import socket
import subprocess
import sys
import time
from typing import Optional, Sequence, TextIO

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8420
MAX_WORKERS = 64

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
        raise argparse.ArgumentTypeError(f"a port is 0..65535 (0: any free port), got {value}")
    return value


def _workers(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of processes, got {text!r}") from None
    if not 1 <= value <= MAX_WORKERS:
        raise argparse.ArgumentTypeError(f"--workers is 1..{MAX_WORKERS}, got {value}")
    return value


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--host", default=DEFAULT_HOST, help=f"the address to listen on (default: {DEFAULT_HOST}, this machine only)"
    )
    parser.add_argument(
        "--port",
        type=_port,
        default=DEFAULT_PORT,
        help=f"the port (default: {DEFAULT_PORT}; 0: any free port, printed at start)",
    )
    parser.add_argument(
        "--db",
        default=None,
        metavar="PATH|URL",
        help="the records: a SQLite file (default: $XDG_DATA_HOME/dice-arena/records.sqlite3, "
        "else ~/.local/share/dice-arena/records.sqlite3), or a PostgreSQL database, "
        "postgresql://user:password@host/name (needs: pip install -e '.[postgres]'), which servers "
        "on several machines may share",
    )
    parser.add_argument(
        "--workers",
        type=_workers,
        default=1,
        metavar="N",
        help="server processes on the one port, sharing the records (default 1); each loads its own bots",
    )
    parser.add_argument("--serve-socket", type=int, default=None, help=argparse.SUPPRESS)  # a worker's listening socket


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _listen(host: str, port: int) -> socket.socket:
    """A TCP socket bound to ``host``:``port`` (0: a free port the system picks); ``OSError`` when it cannot be."""
    family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)[
        0
    ]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if family == socket.AF_INET6:
            sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
        sock.bind(address)
        sock.listen(2048)  # connections wait in the queue until the server takes them: the printed URL works at once
        sock.set_inheritable(True)
    except BaseException:
        sock.close()
        raise
    return sock


def run(args: argparse.Namespace, out: TextIO = sys.stdout, err: Optional[TextIO] = None) -> int:
    """Start the server (blocks until Ctrl-C); returns the exit code: 2, after one line,
    without the web extra, for records that cannot serve (``--db``) or an address it
    cannot listen on.  The address is printed once the socket is bound (with the port the
    system picked for ``--port 0``).  With ``--workers N`` this process binds the socket
    and checks the records, then starts N server processes that take the connections of
    that one socket in turn (:func:`serve_workers`)."""
    err = err if err is not None else sys.stderr
    try:
        import uvicorn

        from play.web.app import create_app
        from play.web.database import shown
        from play.web.records import Records, RecordsError, default_db_path
    except ImportError as e:
        print(f"python -m play web needs the web extra: pip install -e '.[web]' ({e})", file=err)
        return 2
    if args.db is not None and not args.db.strip():
        print("python -m play web: error: --db '': give the path of the records file (or leave --db out)", file=err)
        return 2
    db = args.db if args.db is not None else str(default_db_path())
    workers = getattr(args, "workers", 1)
    given = getattr(args, "serve_socket", None)
    if given is not None:  # a worker that serve_workers started: its records were checked
        try:
            app = create_app(db)
        except RecordsError as e:
            print(f"python -m play web: error: {e}", file=err)
            return 2
        with socket.socket(fileno=given) as sock:
            uvicorn.Server(uvicorn.Config(app, log_level="warning")).run(sockets=[sock])
        return 0
    try:
        if workers > 1:
            Records(db).close()  # checked (and migrated) once, before any worker starts
            app = None
        else:
            app = create_app(db)
    except RecordsError as e:
        print(f"python -m play web: error: {e}", file=err)
        return 2
    try:
        sock = _listen(args.host, args.port)
    except OSError as e:  # the port is taken, the address is not this machine's, the name is unknown
        why = e.strerror or str(e) or type(e).__name__
        print(
            f"python -m play web: error: cannot listen on {args.host} port {args.port}: {why}; "
            "give another --port (or --host)",
            file=err,
        )
        return 2
    with sock:
        port = sock.getsockname()[1]
        host = f"[{args.host}]" if ":" in args.host else args.host
        many = f"; {workers} processes" if workers > 1 else ""
        print(
            f"Dice Arena on http://{host}:{port}/ (API: /docs; records: {shown(db)}{many}); Ctrl-C stops it.",
            file=out,
        )
        if not _is_loopback(args.host):
            print(
                f"warning: listening on {args.host}, not only this machine: anyone who can reach it can play "
                "and read the records",
                file=err,
            )
        out.flush()
        if app is None:
            return serve_workers(sock, db, workers, err)
        server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
        server.run(sockets=[sock])
    return 0


def serve_workers(sock: socket.socket, db: str, n: int, err: TextIO) -> int:
    """Run ``n`` server processes (``python -m play.web --serve-socket FD``: new interpreters,
    each with its own app, bots and connections to the records) on the listening ``sock``,
    until SIGINT or SIGTERM, which each worker is given in turn to stop as one server
    stops.  A worker that ends by itself ends the others: exit code 1, after one line."""
    env = dict(os.environ)
    command = [sys.executable, "-m", "play.web", "--db", db, "--serve-socket", str(sock.fileno())]
    procs = [
        # a session of their own: a Ctrl-C at the terminal reaches this process, which passes it on once
        subprocess.Popen(command, pass_fds=(sock.fileno(),), stdin=subprocess.DEVNULL, env=env, start_new_session=True)
        for _ in range(n)
    ]
    stopping: list[int] = []

    def stop(signum, frame) -> None:
        stopping.append(signum)

    previous = {s: signal.signal(s, stop) for s in (signal.SIGINT, signal.SIGTERM)}
    code = 0
    try:
        while not stopping:
            ended = [p for p in procs if p.poll() is not None]
            if ended:
                print(
                    f"python -m play web: error: a server process ended (exit {ended[0].returncode}); "
                    "stopping the others",
                    file=err,
                )
                code = 1
                break
            time.sleep(0.2)
    finally:
        signum = stopping[0] if stopping else signal.SIGTERM
        for p in procs:
            if p.poll() is None:
                p.send_signal(signum)
        deadline = time.monotonic() + 15
        for p in procs:
            try:
                p.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        for s, handler in previous.items():
            signal.signal(s, handler)
    return code


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m play web", description=DESCRIPTION)
    add_arguments(parser)
    args = parser.parse_args(argv)
    try:
        return run(args)
    except KeyboardInterrupt:
        return 0
