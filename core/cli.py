"""Command-line helpers shared by ``python -m train`` and ``python -m play``."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Callable

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
    sys.exit(code)


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
