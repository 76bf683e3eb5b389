"""Game events as text: the narrator protocol and the text helpers every game's narrator uses.

An engine records what happens in ``game.events`` (dicts with a ``"type"``);
a narrator turns each event into a line (or ``None`` for an event that needs no
words).  The terminal game, the envs' ``render()``, the PettingZoo envs and the
web page all narrate through these classes; none of them writes game text of
its own.  Narrators keep a little state (round numbers, the hands of the round),
so feed each event once, in order.

Seats are named by the game (Red/Blue or Player 1..N in 420, P1..P3 in 421),
followed by a label in brackets when one is given (``"Red (you)"``,
``"P2 (heuristic)"``).  ``you`` marks the person's seat for the lines that
speak to them ("you win!").
"""

from __future__ import annotations

import re
import textwrap
from typing import Iterable, Optional, Sequence

WIDTH = 80  # columns of a terminal: no line the narrators (or the terminal games) print is wider


def fit(*phrases: str, indent: str = "    ", width: int = WIDTH) -> str:
    """The ``phrases`` joined by spaces on one line if it fits in ``width`` columns,
    else on as many lines as needed, breaking only between phrases; continuation
    lines start with ``indent``.  A phrase is never split (one wider than
    ``width`` stays whole)."""
    lines = [phrases[0]]
    for phrase in phrases[1:]:
        if len(lines[-1]) + 1 + len(phrase) <= width:
            lines[-1] += " " + phrase
        else:
            lines.append(indent + phrase)
    return "\n".join(lines)


def wrap(text: str, indent: str = "  ", width: int = WIDTH) -> str:
    """Free text within ``width`` columns: every line that is too wide is broken
    between words (never inside "6-5-4" or a quoted "6 5", never before a
    bracket or between a word and its number, so "P2 (you)", "6-6-5-1 (18)"
    and "pot 15" stay whole), its continuation lines indented by its own
    leading spaces plus ``indent``."""
    out = []
    for line in text.split("\n"):
        if len(line) <= width:
            out.append(line)
            continue
        lead = line[: len(line) - len(line.lstrip(" "))]
        glued = re.sub(r"(?<=\S) (?=\()|(?<=[a-z]) (?=\d)", "\0", line)  # "P2 (you)", "pot 3" stay whole
        glued = re.sub(r'"[^"]*"', lambda m: m.group(0).replace(" ", "\0"), glued)  # nor inside quotes
        parts = textwrap.wrap(
            glued, width, subsequent_indent=lead + indent, break_long_words=False, break_on_hyphens=False
        )
        out.extend(part.replace("\0", " ") for part in parts)
    return "\n".join(out)


def plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def dice_text(dice: Sequence[int]) -> str:
    """Dice as written everywhere: high to low, joined by '-' ("nothing" for none)."""
    return "-".join(map(str, sorted(dice, reverse=True))) if len(dice) else "nothing"


class Narrator:
    """Turns one game's events into lines; see the module docstring."""

    def __init__(self, n_players: int, labels: Optional[Sequence[str]] = None, you: Optional[int] = None):
        self.n_players = n_players
        self.labels = list(labels) if labels is not None else [""] * n_players
        if len(self.labels) != n_players:
            raise ValueError(f"{n_players} players but {len(self.labels)} labels")
        self.you = you

    def seat_name(self, seat: int) -> str:
        raise NotImplementedError

    def who(self, seat: int) -> str:
        label = "you" if seat == self.you else self.labels[seat]
        return f"{self.seat_name(seat)} ({label})" if label else self.seat_name(seat)

    def line(self, event: dict) -> Optional[str]:
        raise NotImplementedError

    def lines(self, events: Iterable[dict]) -> list[str]:
        return [text for e in events if (text := self.line(e)) is not None]
