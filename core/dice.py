"""Dice sources: the only place the rules engines get chance from.

A rules engine never calls a random number generator itself; it asks a *dice
source* for dice (and, where a rule says "drawn at random", for a seat).  Two
sources are provided:

* :class:`RandomDice` wraps a seeded ``numpy.random.Generator`` (Gymnasium envs
  pass their ``self.np_random``), so the same seed gives the same game;
* :class:`ScriptedDice` replays a fixed sequence of die values, so a worked
  example from the rules, a bug report or a recorded game replays exactly.
"""

from __future__ import annotations

from collections import deque
from typing import Iterable, Protocol, Sequence

import numpy as np


class DiceSource(Protocol):
    """What a rules engine needs from chance."""

    def roll(self, n: int, faces: int = 6) -> tuple[int, ...]:
        """Roll ``n`` dice of ``faces`` sides (six by default); values in 1..faces, in the order rolled."""

    def draw_seat(self, n_players: int) -> int:
        """Draw a seat uniformly from ``0..n_players-1`` (e.g. the first player)."""


class RandomDice:
    """Fair dice from a numpy ``Generator`` (or a seed for a new one)."""

    def __init__(self, rng: np.random.Generator | int | None = None):
        self.rng = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)

    def roll(self, n: int, faces: int = 6) -> tuple[int, ...]:
        return tuple(self.rng.integers(1, faces + 1, size=n).tolist())

    def draw_seat(self, n_players: int) -> int:
        return int(self.rng.integers(n_players))


class DiceScriptExhausted(RuntimeError):
    """A scripted dice source was asked for more dice (or seats) than it holds."""


class ScriptedDice:
    """Dice that come from a fixed script, for tests and replays.

    ``dice`` is the sequence of die values in the order they are rolled (a roll
    of ``n`` dice takes the next ``n`` values).  ``seats`` is the sequence of
    seats returned by :meth:`draw_seat`.  Asking for more than the script holds
    raises :class:`DiceScriptExhausted` with a message saying how far it got.
    """

    def __init__(self, dice: Iterable[int] = (), seats: Iterable[int] = (), faces: int = 6):
        # ``faces``: the largest value the script may hold (a game of bigger dice scripts more)
        values = [int(v) for v in dice]
        bad = [v for v in values if not 1 <= v <= faces]
        if bad:
            raise ValueError(f"scripted dice must be in 1..{faces}, got {bad}")
        self._dice = deque(values)
        self._seats = deque(int(s) for s in seats)
        self.rolled = 0

    def roll(self, n: int, faces: int = 6) -> tuple[int, ...]:
        if len(self._dice) < n:
            raise DiceScriptExhausted(
                f"dice script exhausted: asked for {n} dice after {self.rolled} were rolled, {len(self._dice)} left"
            )
        values = tuple(self._dice[i] for i in range(n))
        if any(v > faces for v in values):
            raise ValueError(f"scripted dice {values} do not fit a die of {faces} faces")
        for _ in range(n):
            self._dice.popleft()
        self.rolled += n
        return values

    def draw_seat(self, n_players: int) -> int:
        if not self._seats:
            raise DiceScriptExhausted("seat script exhausted: no scripted seat left to draw")
        seat = self._seats.popleft()
        if not 0 <= seat < n_players:
            raise ValueError(f"scripted seat {seat} is not in 0..{n_players - 1}")
        return seat

    @property
    def remaining(self) -> Sequence[int]:
        """Die values not yet rolled."""
        return tuple(self._dice)


TINY = np.finfo(np.float64).smallest_subnormal  # the least positive float


def sample_rows(probs: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One index drawn per row of ``probs`` (rows of probabilities): for x in (0, total],
    the first index whose cumulative sum reaches x, so never one without probability."""
    cdf = np.cumsum(probs, axis=1)
    x = np.maximum(rng.random(len(probs)) * cdf[:, -1], TINY)
    return np.minimum((cdf < x[:, None]).sum(axis=1), probs.shape[1] - 1)
