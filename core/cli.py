"""Command-line helpers shared by ``python -m train`` and ``python -m play``."""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable

MAX_SEED = 2**32 - 1  # what every seeded generator here (numpy's legacy one included) takes
MAX_GAMES = 100_000_000  # a match of that many games already takes many hours


def whole_number(text: str, low: int, high: int, why: str = "") -> int:
    """``text`` as a whole number in ``low..high``, else an argparse error saying so."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text[:40]!r}") from None
    if not low <= value <= high:
        shown = str(value) if len(str(value)) <= 24 else f"a number of {len(str(value))} digits"
        raise argparse.ArgumentTypeError(f"must be from {low:,} to {high:,}{why}, got {shown}")
    return value


def run_quietly(main: Callable[[], int]) -> None:
    """Run ``main()`` as the program; when the reader of our output goes away
    (``... | head -1``), exit quietly instead of with a BrokenPipeError traceback
    (the way the Python docs' "Note on SIGPIPE" does it)."""
    try:
        try:
            code = main()
        except SystemExit as e:  # --help, or argparse's usage error: its output is still to be flushed
            code = e.code
        sys.stdout.flush()  # the last output, written while we can still catch its error
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # Python flushes stdout again at exit
        code = 1
    _forget_handled_interrupts()
    sys.exit(code)


def _forget_handled_interrupts() -> None:
    """Let the program's status stand after a Ctrl-C it handled.

    CPython marks a ``KeyboardInterrupt`` that leaves code run by ``exec`` or ``eval`` of a
    string as not handled, even when the program catches it further up (``dataclasses``
    builds its methods that way, so a Ctrl-C during a lazy import can land there).
    ``python -m`` then ends the program with SIGINT at exit instead of its status: a
    caller sees it killed (-2) rather than 130.  The mark is cleared each time ``exec``
    runs a string, which this does (checked on CPython 3.11); ``main`` has returned, so
    any interrupt it saw was handled."""
    exec("None", {})


def seed_number(text: str) -> int:
    """An argparse type for ``--seed``: a whole number in ``0..MAX_SEED``."""
    return whole_number(text, 0, MAX_SEED)


def option_type(option) -> Callable[[str], int]:
    """An argparse type for a game option (``games.Option``): a whole number within its bounds."""

    def parse(text: str) -> int:
        return whole_number(text, option.low, option.high, f" ({option.help})")

    parse.__name__ = option.name  # argparse names the type in some messages
    return parse


def agent_label(name: str) -> str:
    """How an agent is named at a table: a bot by its name, a checkpoint path by its file stem."""
    if os.sep in name or name.endswith((".pt", ".json")):
        return Path(name).stem or name
    return name


# --- SIGINT (Ctrl-C) and SIGTERM ------------------------------------------------------------
#
# A long program (``python -m train`` and its studies) meets both signals the same way, in
# two phases.  While it starts (imports, parsing, checks) there is nothing to save and
# nothing to undo: either signal ends it at once with one line on stderr and the exit
# status 128 + the signal's number (130 for Ctrl-C, 143 for SIGTERM), the status a shell
# reports for a program the signal ended.  From :func:`stop_signals_raise` on (once it holds
# a lock, or has started Ray), either signal raises ``KeyboardInterrupt`` where the program
# is, so that it unwinds, saves and releases what it holds; :class:`SignalsHeld` defers
# them while a file is being written.  Only the program's entry point installs these
# handlers (:func:`run_program`): a caller of ``main()`` in-process keeps its own.

_STOP = {"installed": False, "raise": False, "message": "interrupted", "received": None}


def signal_label(signum: int | None) -> str:
    """How a stop signal is named to the user: ``Ctrl-C`` for SIGINT, else its name."""
    if signum is None or signum == signal.SIGINT:
        return "Ctrl-C"
    try:
        return signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"


def stop_status(signum: int | None = None) -> int:
    """The exit status of a program stopped by ``signum`` (default: the signal it received,
    else SIGINT): 128 + its number."""
    if signum is None:
        signum = _STOP["received"] or signal.SIGINT
    return 128 + int(signum)


def stop_signal() -> int | None:
    """The first SIGINT or SIGTERM this program received (through the handlers here), if any."""
    return _STOP["received"]


def _note_signal(signum: int) -> None:
    if _STOP["received"] is None:
        _STOP["received"] = signum


def stop_signals_installed() -> bool:
    """Whether the program installed its SIGINT and SIGTERM handlers (:func:`stop_signals_exit`)."""
    return bool(_STOP["installed"])


def interrupt(signum: int) -> None:
    """Stop as ``signum`` would have, where a library caught it first: note it, raise
    ``KeyboardInterrupt``."""
    _note_signal(signum)
    raise KeyboardInterrupt


def _write_line(text: str) -> None:
    """One line on stderr, straight to the descriptor (safe inside a signal handler)."""
    try:
        os.write(2, f"\n{text}\n".encode(errors="replace"))
    except OSError:
        pass


def _on_stop_signal(signum, frame) -> None:
    _note_signal(signum)
    if _STOP["raise"]:
        raise KeyboardInterrupt
    for stream in (sys.stdout, sys.stderr):  # what the program printed before is not lost
        try:
            stream.flush()
        except (OSError, ValueError, RuntimeError):
            pass
    _write_line(f"{_STOP['message']} ({signal_label(signum)})")
    os._exit(stop_status(signum))


def stop_signals_exit(message: str) -> None:
    """Install the program's handlers: SIGINT and SIGTERM end it at once, with the one
    line ``message`` (and the signal's name) and status 128 + N.  For the program's
    first lines, before anything is written or held."""
    if threading.current_thread() is not threading.main_thread():
        return
    _STOP.update({"installed": True, "raise": False, "message": message})
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, _on_stop_signal)


def stop_signals_raise() -> None:
    """From now on, SIGINT and SIGTERM raise ``KeyboardInterrupt`` in the program (which
    saves, releases and exits with :func:`stop_status`).  Nothing unless the program
    installed its handlers (:func:`stop_signals_exit`); it installs them again, for a
    library (Ray) that replaced them."""
    if not _STOP["installed"] or threading.current_thread() is not threading.main_thread():
        return
    _STOP["raise"] = True
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, _on_stop_signal)


def stop_signals_done(message: str) -> None:
    """The program's work is done and saved: from now on SIGINT and SIGTERM end it at once
    again, with the one line ``message`` (and the signal's name) and status 128 + N,
    instead of raising ``KeyboardInterrupt`` into its exit (or into a library's clean-up
    at exit, which prints a traceback).  Nothing unless the program installed its handlers."""
    if _STOP["installed"]:
        _STOP.update({"raise": False, "message": message})


class SignalsHeld:
    """While the block runs, Ctrl-C (SIGINT), and SIGTERM when the program installed its
    handlers, are noted with one line (``message``, after the signal's name) instead of
    interrupting it; on leaving, ``reraise`` turns a noted signal into the
    ``KeyboardInterrupt`` it would have been.  ``caught``: the signal noted, or None.
    Only in the main thread (the only one Python delivers signals to); blocks nest."""

    def __init__(self, reraise: bool, message: str = "finishing the checkpoint first"):
        self.reraise = reraise
        self.message = message
        self.caught: int | None = None
        self.previous: dict[int, Any] = {}

    def _note(self, signum, frame) -> None:
        _note_signal(signum)
        if self.caught is None:
            self.caught = signum
        print(f"\n{signal_label(signum)}: {self.message}", file=sys.stderr, flush=True)

    def __enter__(self) -> SignalsHeld:
        if threading.current_thread() is threading.main_thread():
            signals = [signal.SIGINT]
            if signal.getsignal(signal.SIGTERM) is _on_stop_signal:
                signals.append(signal.SIGTERM)
            for signum in signals:
                self.previous[signum] = signal.signal(signum, self._note)
        return self

    @contextmanager
    def released(self):
        """Inside the held block: a part where the signals act as outside it (the work a
        signal may cut short).  A ``KeyboardInterrupt`` raised as it ends is raised out of it."""
        for signum, previous in self.previous.items():
            signal.signal(signum, previous if previous is not None else signal.SIG_DFL)
        try:
            yield self
        finally:
            for signum in self.previous:
                signal.signal(signum, self._note)

    def __exit__(self, exc_type, exc, tb) -> None:
        for signum, previous in self.previous.items():
            signal.signal(signum, previous if previous is not None else signal.SIG_DFL)
        self.previous = {}
        if self.reraise and self.caught is not None and exc_type is None:
            raise KeyboardInterrupt


def run_program(main: Callable[[], int], starting: str) -> None:
    """Run ``main()`` as a long program: :func:`run_quietly`, with SIGINT and SIGTERM
    ending it in one line (``starting``, until ``main`` calls :func:`stop_signals_raise`)
    and a ``KeyboardInterrupt`` that ``main`` let through ending it in one line too, with
    status 128 + N."""
    stop_signals_exit(starting)

    def guarded() -> int:
        try:
            return main()
        except KeyboardInterrupt:
            _STOP["raise"] = False  # a further signal ends the program at once
            _STOP["message"] = "interrupted"
            print(f"\ninterrupted ({signal_label(stop_signal())})", file=sys.stderr, flush=True)
            return stop_status()

    run_quietly(guarded)


def run_interruptible(main: Callable[[], int]) -> None:
    """Run ``main()`` as a program with nothing of its own to save on a stop (a report, a
    picture, a measure): :func:`run_program`, with Ctrl-C and SIGTERM raising
    ``KeyboardInterrupt`` from ``main``'s first line on, so that its clean-ups run
    (``finally``: servers stopped, a temporary file removed) before it ends in one line
    with status 128 + N.  A signal once ``main`` has returned ends the program at once."""

    def raising() -> int:
        stop_signals_raise()
        try:
            return main()
        finally:
            stop_signals_done("interrupted")

    run_program(raising, "interrupted")
