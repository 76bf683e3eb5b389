"""Bot-vs-bot matches and their statistics.

Game-neutral on purpose: a match takes a *game runner*, a function that plays
one game with the given agents in seats 0..n-1 and a dice source and returns
the winning seat.  ``RUNNERS`` maps a game name to its runner; 420's is
:func:`play_game_420`, and a 421 runner only needs the same signature.  The
statistics (:func:`wilson_interval`, :class:`Rate`) know nothing about dice.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from statistics import NormalDist
from typing import Callable, Sequence

import numpy as np

from agents.base import Agent
from envs import codec420
from envs import game420 as g
from envs.dice import DiceSource, RandomDice

# (agents by seat, dice) -> winning seat
GameRunner = Callable[[Sequence[Agent], DiceSource], int]


# --- statistics ---------------------------------------------------------------
def z_value(confidence: float = 0.95) -> float:
    """The two-sided standard-normal quantile for ``confidence`` (1.959964 for 0.95)."""
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    return NormalDist().inv_cdf(0.5 + confidence / 2.0)


def wilson_interval(successes: int, trials: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion: (low, high), within [0, 1].

    Unlike the normal ("Wald") interval it stays inside [0, 1] and keeps its
    coverage near 0 and 1, which matters for lopsided bot matches.  With no
    trials nothing is known: (0, 1).
    """
    if trials < 0 or not 0 <= successes <= trials:
        raise ValueError(f"need 0 <= successes <= trials, got {successes} of {trials}")
    if trials == 0:
        return 0.0, 1.0
    z = z_value(confidence)
    n = trials
    p = successes / n
    denom = 1.0 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1.0 - p) / n + z * z / (4 * n * n)) / denom
    # The bounds always hold p (rounding would otherwise put 0 just outside [0+, ...] for 0 successes).
    return min(p, max(0.0, centre - half)), max(p, min(1.0, centre + half))


@dataclass(frozen=True)
class Rate:
    """Wins out of games, with its Wilson interval."""

    wins: int
    games: int

    @property
    def rate(self) -> float:
        return self.wins / self.games if self.games else float("nan")

    def interval(self, confidence: float = 0.95) -> tuple[float, float]:
        return wilson_interval(self.wins, self.games, confidence)

    def describe(self, confidence: float = 0.95) -> str:
        """e.g. '61.50% [57.43%, 65.42%]  (123/200)'."""
        if not self.games:
            return "no games"
        lo, hi = self.interval(confidence)
        return f"{100 * self.rate:6.2f}% [{100 * lo:6.2f}%, {100 * hi:6.2f}%]  ({self.wins}/{self.games})"


# --- matches --------------------------------------------------------------------
@dataclass
class MatchResult:
    """Who won each game of a two-player match, by player and by seat."""

    game: str
    names: tuple[str, str]  # player A, player B
    seat_names: tuple[str, ...]
    # wins[p, s], games[p, s]: games player p won / played in seat s.
    wins: np.ndarray = field(default_factory=lambda: np.zeros((2, 2), dtype=int))
    games: np.ndarray = field(default_factory=lambda: np.zeros((2, 2), dtype=int))
    seed: int | None = None

    @property
    def n_games(self) -> int:
        return int(self.games[0].sum())

    def overall(self, player: int) -> Rate:
        return Rate(int(self.wins[player].sum()), int(self.games[player].sum()))

    def in_seat(self, player: int, seat: int) -> Rate:
        return Rate(int(self.wins[player, seat]), int(self.games[player, seat]))


def play_match(
    game: str,
    agent_a: Agent,
    agent_b: Agent,
    games: int,
    seed: int | None = None,
    names: tuple[str, str] | None = None,
    runner: GameRunner | None = None,
) -> MatchResult:
    """Play ``games`` games of ``game`` between A and B, alternating seats:
    A takes seat 0 (who moves first) in games 1, 3, 5, ... and B in the others.

    All dice come from one ``RandomDice(seed)``, so a seed replays the match
    (given agents seeded the same way).
    """
    if games < 1:
        raise ValueError(f"a match needs at least one game, got {games}")
    runner = runner or RUNNERS[game]
    names = names or (getattr(agent_a, "name", "A"), getattr(agent_b, "name", "B"))
    result = MatchResult(game, names, SEAT_NAMES[game] if game in SEAT_NAMES else ("seat 0", "seat 1"), seed=seed)
    dice = RandomDice(seed)
    for i in range(games):
        by_seat = (agent_a, agent_b) if i % 2 == 0 else (agent_b, agent_a)
        player_of_seat = (0, 1) if i % 2 == 0 else (1, 0)
        winner = runner(by_seat, dice)
        for seat, player in enumerate(player_of_seat):
            result.games[player, seat] += 1
            result.wins[player, seat] += int(seat == winner)
    return result


def display_names(names: Sequence[str]) -> tuple[str, str]:
    """Tell the two players apart when they are the same bot."""
    a, b = names
    return (f"{a} (A)", f"{b} (B)") if a == b else (a, b)


def format_match(result: MatchResult, confidence: float = 0.95) -> str:
    """A plain table: each player's win rate with its interval, overall and by seat."""
    names = display_names(result.names)
    width = max(len(n) for n in names)
    seat_w = max(len(s) for s in result.seat_names) + 3
    pct = f"{100 * confidence:g}%"
    lines = [
        f"{result.game} match: {result.names[0]} vs {result.names[1]}, {result.n_games} games"
        + (f", seed {result.seed}" if result.seed is not None else "")
        + f"; seats alternate ({names[0]} is {result.seat_names[0]} in odd-numbered games)",
        f"{'':<{width}}  {'':<{seat_w}}  win rate [{pct} Wilson CI]  (wins/games)",
    ]
    for p, name in enumerate(names):
        lines.append(f"{name:<{width}}  {'overall':<{seat_w}}  {result.overall(p).describe(confidence)}")
        for s, seat in enumerate(result.seat_names):
            lines.append(f"{'':<{width}}  {'as ' + seat:<{seat_w}}  {result.in_seat(p, s).describe(confidence)}")
    return "\n".join(lines)


# --- game runners ---------------------------------------------------------------
def play_game_420(agents: Sequence[Agent], dice: DiceSource) -> int:
    """One two-player game of 420: ``agents[0]`` is Red.  Returns the winning seat.

    Agents are asked only when they have a choice; first rolls (R1), resets
    (R4) and hands with nothing to keep are played for them, as in the env.
    """
    game = g.Game420(2, dice=dice)
    while not game.is_over:
        legal = game.legal_actions()
        if len(legal) == 1:
            game.play(legal[0])
            continue
        seat = game.current
        obs = codec420.observe(game, seat)
        game.play(int(agents[seat].act(obs, codec420.action_mask(game.hands[seat]))))
    return game.winner


RUNNERS: dict[str, GameRunner] = {"420": play_game_420}
SEAT_NAMES: dict[str, tuple[str, ...]] = {"420": g.SEAT_NAMES}
