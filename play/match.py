"""Bot-vs-bot matches and their statistics.

Game-neutral on purpose: a match plays games of any registered game through
the one game loop (:func:`play_game`, ``core.engine.play_out``); a player wins a
game when it does not lose.  The statistics (:func:`wilson_interval`,
:class:`Rate`) know nothing about dice.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from itertools import permutations
from statistics import NormalDist
from typing import Callable, Sequence

import numpy as np

import games as registry
from agents.base import Agent
from core.dice import DiceSource, RandomDice
from core.engine import play_out
from core.narrate import wrap

# (games done, games in all) -> None; called after every game of a match
Progress = Callable[[int, int], None]
# (player in each seat, players from first to last) -> None; called after every game of a match
GameHook = Callable[[tuple[int, ...], tuple[int, ...]], None]


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
    """Who won each game of a match, by player and by seat (one seat per player)."""

    game: str
    names: tuple[str, ...]  # player A, player B (, player C)
    seat_names: tuple[str, ...]
    # wins[p, s], games[p, s]: games player p won / played in seat s.
    wins: np.ndarray = field(default=None)  # type: ignore[assignment]
    games: np.ndarray = field(default=None)  # type: ignore[assignment]
    seed: int | None = None
    settings: str = ""  # e.g. "pot 15", shown in the title
    note: str = ""  # a line under the title, e.g. what counts as a win

    def __post_init__(self):
        shape = (len(self.names), len(self.seat_names))
        if self.wins is None:
            self.wins = np.zeros(shape, dtype=int)
        if self.games is None:
            self.games = np.zeros(shape, dtype=int)

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
    progress: Progress | None = None,
    **options,
) -> MatchResult:
    """Play ``games`` games of ``game`` between A and B, alternating seats:
    A takes seat 0 (who moves first) in games 1, 3, 5, ... and B in the others.

    All dice come from one ``RandomDice(seed)``, so a seed replays the match
    (given agents seeded the same way).
    """
    return play_match_n(game, (agent_a, agent_b), games, seed=seed, names=names, progress=progress, **options)


ALL_ORDERS_UP_TO = 4  # 4! = 24 orders; beyond, the cyclic rotations (n of them)


def seatings(n_players: int) -> list[tuple[int, ...]]:
    """The seat orders a match cycles through: ``seatings(n)[k][s]`` is the player in seat s.

    Up to four players every order of the players, so that each player holds each
    seat equally often and each plays before and after each other one equally
    often; with two players (0, 1), (1, 0), i.e. alternating.  With more players
    (n! is 120 and up) the n cyclic rotations, so that a match of a multiple of n
    games still gives each player each seat equally often.
    """
    if n_players <= ALL_ORDERS_UP_TO:
        return list(permutations(range(n_players)))
    return [tuple((s - k) % n_players for s in range(n_players)) for k in range(n_players)]


def play_match_n(
    game: str,
    players: Sequence[Agent],
    games: int,
    seed: int | None = None,
    names: Sequence[str] | None = None,
    progress: Progress | None = None,
    seat_names: Sequence[str] | None = None,
    settings: str = "",
    note: str = "",
    on_game: GameHook | None = None,
    **options,
) -> MatchResult:
    """Play ``games`` games between ``players`` (one per seat), cycling through
    :func:`seatings`: game i seats them in order ``seatings(n)[i % n!]``, so each
    player holds each seat equally often when ``games`` is a multiple of n!.

    A player wins a game when its seat does not lose (``options``: the game's, e.g. the pot).
    All dice come from one ``RandomDice(seed)``, so a seed replays the match
    (given agents seeded the same way).  ``on_game(player_of_seat, finish)``, if
    given, sees each game's seating and its finishing order by player
    (:func:`finishing_order`), which ratings need.
    """
    if games < 1:
        raise ValueError(f"a match needs at least one game, got {games}")
    n = len(players)
    names = (
        tuple(names)
        if names is not None
        else tuple(getattr(p, "name", None) or chr(ord("A") + i) for i, p in enumerate(players))
    )
    if len(names) != n:
        raise ValueError(f"{n} players but {len(names)} names")
    if seat_names is None:
        seat_names = seat_labels(game, n)
    result = MatchResult(game, names, tuple(seat_names), seed=seed, settings=settings, note=note)
    orders = seatings(n)
    dice = RandomDice(seed)
    for i in range(games):
        player_of_seat = orders[i % len(orders)]
        table = _play_table(game, [players[p] for p in player_of_seat], dice, **options)
        winners = _not_losing(table)
        for seat, player in enumerate(player_of_seat):
            result.games[player, seat] += 1
            result.wins[player, seat] += int(seat in winners)
        if on_game is not None:
            on_game(player_of_seat, tuple(player_of_seat[s] for s in finishing_order(table)))
        if progress is not None:
            progress(i + 1, games)
    return result


def display_names(names: Sequence[str]) -> tuple[str, ...]:
    """Tell the players apart when some are the same bot: "greedy (A)", "greedy (B)"."""
    names = tuple(names)
    if len(set(names)) == len(names):
        return names
    return tuple(f"{name} ({'ABCDEFGH'[i]})" if names.count(name) > 1 else name for i, name in enumerate(names))


def format_match(result: MatchResult, confidence: float = 0.95) -> str:
    """A plain table: each player's win rate with its interval, overall and by seat."""
    names = display_names(result.names)
    width = max(len(n) for n in names)
    seat_w = max(len(s) for s in result.seat_names) + 3
    pct = f"{100 * confidence:g}%"
    if len(names) == 2:
        rotation = f"seats alternate ({names[0]} is {result.seat_names[0]} in odd-numbered games)"
    else:
        orders = len(seatings(len(names)))
        rotation = (
            f"seats rotate through all {orders} orders"
            if len(names) <= ALL_ORDERS_UP_TO
            else f"seats rotate through the {orders} cyclic shifts"
        )
    lines = [
        wrap(
            f"{result.game} match: {' vs '.join(result.names)}, {result.n_games} games"
            + (f", {result.settings}" if result.settings else "")
            + (f", seed {result.seed}" if result.seed is not None else "")
        ),
        wrap(f"({rotation})"),
        *([result.note] if result.note else []),
        f"{'':<{width}}  {'':<{seat_w}}  win rate [{pct} Wilson CI]  (wins/games)",
    ]
    for p, name in enumerate(names):
        lines.append(f"{name:<{width}}  {'overall':<{seat_w}}  {result.overall(p).describe(confidence)}")
        for s, seat in enumerate(result.seat_names):
            lines.append(f"{'':<{width}}  {'as ' + seat:<{seat_w}}  {result.in_seat(p, s).describe(confidence)}")
    return "\n".join(lines)


def format_against(name: str, results: Sequence[MatchResult], confidence: float = 0.95) -> str:
    """One agent (player 0 of every result) against several opponents: for each
    opponent a row with its win rate overall, then one row per seat it held, each
    with its interval (rows, not columns, so the table fits in 80 columns)."""
    if not results:
        return f"{name}: no opponents"
    seat_names = results[0].seat_names
    opp_w = max(len("opponent"), *(len(r.names[1]) for r in results))
    seat_w = max(len("overall"), *(len(f"as {s}") for s in seat_names))
    pct = f"{100 * confidence:g}%"
    lines = [
        wrap(f"{name}: win rate [{pct} Wilson CI] (wins/games) against each opponent"),
        f"{'opponent':<{opp_w}}  {'seat':<{seat_w}}  win rate",
    ]
    for r in results:
        rates = [("overall", r.overall(0)), *((f"as {s}", r.in_seat(0, i)) for i, s in enumerate(seat_names))]
        for k, (where, rate) in enumerate(rates):
            lines.append(f"{r.names[1] if k == 0 else '':<{opp_w}}  {where:<{seat_w}}  {rate.describe(confidence)}")
    return "\n".join(lines)


# --- one game ---------------------------------------------------------------------
def play_game(game: str, agents: Sequence[Agent], dice: DiceSource, **options) -> frozenset[int]:
    """One game of ``game`` with ``agents[seat]`` in each seat, seat 0 playing first;
    returns the seats that did not lose (420 with two players: the winner)."""
    return _not_losing(_play_table(game, agents, dice, **options))


def _play_table(game: str, agents: Sequence[Agent], dice: DiceSource, **options):
    """One game played out; the finished engine state."""
    spec = registry.get(game)
    table = spec.new_game(len(agents), dice=dice, first_player=0, **options)
    play_out(table, agents, spec.codec)
    return table


def _not_losing(table) -> frozenset[int]:
    return frozenset(seat for seat, r in enumerate(table.returns()) if r > 0)


def finishing_order(table) -> tuple[int, ...]:
    """The seats of a finished game from first to last: those who left the table as
    winners, in the order they left (420: made 20 and dropped out; 421: ran out of
    tokens; the engine orders two who leave at once), then the loser, for an engine that
    keeps ``winners`` and ``loser`` (``core.engine.TableGame``); for any other, the seats
    that did not lose, then those that lost, each in seat order (``returns()``)."""
    if not hasattr(table, "winners"):
        returns = table.returns()
        if not table.is_over:
            raise ValueError("not a finished game")
        return tuple(sorted(range(table.n_players), key=lambda seat: returns[seat] < 0))
    order = (*table.winners, table.loser)
    if table.loser is None or sorted(order) != list(range(table.n_players)):
        raise ValueError(f"not a finished game with one place per seat: winners {table.winners}, loser {table.loser}")
    return order


def seat_labels(game: str, n_players: int) -> tuple[str, ...]:
    """How the game names its seats (Red/Blue, Player 1.., P1..), as the narration does."""
    narrator = registry.get(game).narrator(n_players)
    return tuple(narrator.seat_name(s) for s in range(n_players))
