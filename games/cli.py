"""Command-line helpers shared by ``python -m train`` and ``python -m play``."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Callable


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
