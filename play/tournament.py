"""Bot-vs-bot matches and their statistics.

Game-neutral on purpose: a match plays games of any registered game through
the one game loop (:func:`play_game`, ``core.engine.play_out``); a player wins a
game when it does not lose.  The statistics (:func:`wilson_interval`,
:class:`Rate`) know nothing about dice.
"""

from __future__ import annotations

import inspect
import math
from dataclasses import dataclass, field
from functools import partial
from itertools import combinations, permutations
from statistics import NormalDist
from typing import Callable, Sequence

import numpy as np

import games as registry
from agents.base import Agent
from core.dice import DiceSource, RandomDice
from core.engine import play_out
from core.narrate import wrap
from play import derive_seed

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
    names = tuple(names) if names is not None else tuple(getattr(p, "name", None) or chr(ord("A") + i) for i, p in enumerate(players))
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
        rotation = (f"seats rotate through all {orders} orders" if len(names) <= ALL_ORDERS_UP_TO
                    else f"seats rotate through the {orders} cyclic shifts")
    lines = [
        wrap(f"{result.game} match: {' vs '.join(result.names)}, {result.n_games} games"
             + (f", {result.settings}" if result.settings else "")
             + (f", seed {result.seed}" if result.seed is not None else "")),
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
def not_lost_by_seat(game: str, agents: Sequence[Agent], n_games: int, dice: DiceSource,
                     progress: Callable[[int, int], None] | None = None, **options) -> np.ndarray:
    """Games not lost by each seat in ``n_games`` games with the seats fixed (the first
    player as the rules have it), every die from ``dice``."""
    spec = registry.get(game)
    kept = np.zeros(len(agents), dtype=int)
    for i in range(n_games):
        table = play_out(spec.new_game(len(agents), dice=dice, **options), list(agents), spec.codec)
        kept += np.arange(len(agents)) != table.loser
        if progress is not None:
            progress(i + 1, n_games)
    return kept


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


# --- tournaments -------------------------------------------------------------------
# Every table of n out of the listed agents, seats rotated through every order, one
# rating per agent.  A table's players are *entries*: the agents as listed, so the
# same bot listed twice is two entries (and sits twice at a table only then).

ELO_PER_NATURAL = 400.0 / math.log(10.0)  # Bradley-Terry log-odds -> Elo points
FINISH_NOTES = {
    "left": "the winners ranked by the order they left the table, then the loser",
    "tied": "the winners tied, above the loser",
    "winner": "the winner above the others, who tie",
}


def finish_ranking(game: str) -> str:
    """"left" or "tied": how ``game``'s finishing orders rank the players (the
    registry's ``finish_ranking``)."""
    return registry.get(game).finish_ranking


def finish_ranks(order: Sequence[int], ranking: str) -> list[int]:
    """openskill's ranks (0 best) of the players of a finishing ``order`` (first to last)."""
    n = len(order)
    if ranking == "winner":
        return [0] + [1] * (n - 1)
    return list(range(n)) if ranking == "left" else [0] * (n - 1) + [1]


class NoExactFigure(Exception):
    """A table whose exact figure cannot be computed; the message says why."""


@dataclass
class Table:
    """One table of a tournament: who sits at it and what happened."""

    index: int  # 1, 2, ...: tables in the order of itertools.combinations
    players: tuple[int, ...]  # the entry of each player
    seed: int  # the table's seed; its dice and agents' seeds derive from it
    match: MatchResult
    places: np.ndarray  # places[p, k]: games player p finished (k+1)-th
    exact: np.ndarray | None = None  # exact P(player p does not lose), for the same seat orders
    exact_note: str = ""  # why there is no exact figure


@dataclass
class Tournament:
    """A played tournament: its settings, its tables, every game's finishing order
    and the ratings (:func:`run_tournament`)."""

    game: str
    n_players: int
    labels: tuple[str, ...]  # each entry's name in tables (unique)
    games_per_order: int
    seed: int
    options: dict
    orders: list[tuple[int, ...]]  # the seat orders every table cycles through (seatings)
    tables: list[Table]
    log: list[tuple[int, ...]]  # every game's finishing order by entry, tables interleaved
    openskill: list[dict]  # per entry: mu, sigma, ordinal
    bradley_terry: list[dict] | None  # heads-up only: elo, low, high

    @property
    def n_games(self) -> int:
        return len(self.log)

    def overall(self, entry: int) -> Rate:
        """The entry's rate of not losing over every table it sat at."""
        wins = games = 0
        for t in self.tables:
            if entry in t.players:
                p = t.players.index(entry)
                wins, games = wins + int(t.match.wins[p].sum()), games + int(t.match.games[p].sum())
        return Rate(wins, games)

    def exact_overall(self, entry: int) -> float | None:
        """The exact counterpart of :meth:`overall`, when every table it sat at has one
        (every table plays the same number of games, so it is their mean)."""
        sat = [t for t in self.tables if entry in t.players]
        if not sat or any(t.exact is None for t in sat):
            return None
        return float(np.mean([t.exact[t.players.index(entry)] for t in sat]))

    def mean_place(self, entry: int) -> float:
        counts = sum((t.places[t.players.index(entry)] for t in self.tables if entry in t.players),
                     np.zeros(self.n_players))
        return float(counts @ np.arange(1, self.n_players + 1) / counts.sum())

    def ranking(self) -> list[int]:
        """Entries best first: by Bradley-Terry heads-up, else by openskill's ordinal."""
        key = ((lambda e: self.bradley_terry[e]["elo"]) if self.bradley_terry is not None
               else (lambda e: self.openskill[e]["ordinal"]))
        return sorted(range(len(self.labels)), key=lambda e: (-key(e), e))


def tournament_tables(n_entries: int, n_players: int) -> list[tuple[int, ...]]:
    """Every table: each combination of ``n_players`` of the entries."""
    return list(combinations(range(n_entries), n_players))


def run_tournament(
    game: str,
    entries: Sequence[tuple[str, Agent]],
    n_players: int,
    games_per_order: int,
    seed: int,
    progress: Progress | None = None,
    exact: bool = True,
    **options,
) -> Tournament:
    """Play every table of ``n_players`` of ``entries`` ((label, agent), labels unique):
    ``games_per_order`` games in each seat order of :func:`seatings` (every order up to
    four players, the cyclic shifts beyond), and rate the entries.

    Table t (counted from 0) has seed ``derive_seed(seed, 1 + t)``; its dice come
    from stream 0 of that seed and its k-th player is reseeded (if it draws random
    numbers) from stream 1 + k, so a table's games do not depend on the tables
    played before it.  Exact figures come from :func:`exact_evaluator` when there
    is one for the game and table size (``exact=False`` skips them).
    """
    if games_per_order < 1:
        raise ValueError(f"a tournament needs at least one game per seat order, got {games_per_order}")
    labels = tuple(label for label, _ in entries)
    if len(set(labels)) != len(labels):
        raise ValueError(f"entry labels must be unique, got {labels}")
    if len(entries) < n_players:
        raise ValueError(f"{len(entries)} agents cannot fill a table of {n_players}")
    orders = seatings(n_players)
    per_table = games_per_order * len(orders)
    combos = tournament_tables(len(entries), n_players)
    total = per_table * len(combos)
    evaluator = exact_evaluator(game, n_players) if exact else None
    memo: dict = {}
    tables, logs = [], []
    for t, players in enumerate(combos):
        table_seed = derive_seed(seed, 1 + t)
        agents = [entries[e][1] for e in players]
        for k, agent in enumerate(agents):
            if callable(getattr(agent, "reseed", None)):
                agent.reseed(derive_seed(table_seed, 1 + k))
        places = np.zeros((n_players, n_players), dtype=int)
        log: list[tuple[int, ...]] = []

        def on_game(_seating, finish, places=places, log=log, players=players):
            for place, p in enumerate(finish):
                places[p, place] += 1
            log.append(tuple(players[p] for p in finish))

        done = t * per_table
        match = play_match_n(
            game, agents, per_table, seed=derive_seed(table_seed, 0), names=[labels[e] for e in players],
            progress=(lambda d, _n, done=done: progress(done + d, total)) if progress is not None else None,
            on_game=on_game, **options,
        )
        table = Table(t + 1, tuple(players), table_seed, match, places)
        if evaluator is None:
            table.exact_note = "no exact evaluator for this game and number of players"
        else:
            try:
                table.exact = np.asarray(evaluator(agents, orders, options, memo), dtype=np.float64)
            except NoExactFigure as e:
                table.exact_note = str(e)
        tables.append(table)
        logs.append(log)
    log = [game_log[i] for i in range(per_table) for game_log in logs]  # interleaved: game i of every table
    skill = openskill_ratings(log, len(entries), finish_ranking(game))
    bt = None
    if n_players == 2:
        wins = np.zeros((len(entries), len(entries)))
        for winner, loser in log:
            wins[winner, loser] += 1
        elo, low, high = bradley_terry(wins)
        bt = [{"elo": float(e), "low": float(lo), "high": float(hi)} for e, lo, hi in zip(elo, low, high)]
    return Tournament(game, n_players, labels, games_per_order, seed, dict(options), orders, tables, log, skill, bt)


# --- ratings ----------------------------------------------------------------------------
def openskill_ratings(log: Sequence[Sequence[int]], n_entries: int, ranking: str = "left") -> list[dict]:
    """openskill's Plackett-Luce model (mu 25, sigma 25/3 to start) updated with every
    game's finishing order in ``log`` (entries, first to last; ranked as ``ranking``
    says, see the registry's finish_ranking), in order: per entry mu, sigma and the ordinal
    mu - 3 sigma (a rating it is very likely above).

    tau (the drift of skill between games, 25/300 by default) is 0: a bot's skill
    does not change during a tournament, and with drift the last few hundred games
    would set the rating, which then wanders by about sigma with the luck of the
    dice.  The updates still depend a little on the order of the games; a
    tournament interleaves its tables so that no table comes last as a block."""
    from openskill.models import PlackettLuce

    model = PlackettLuce(tau=0.0)
    ratings = [model.rating() for _ in range(n_entries)]
    for order in log:
        teams = model.rate([[ratings[e]] for e in order], ranks=finish_ranks(order, ranking))
        for e, team in zip(order, teams):
            ratings[e] = team[0]
    return [{"mu": float(r.mu), "sigma": float(r.sigma), "ordinal": float(r.ordinal())} for r in ratings]


def bradley_terry(wins: np.ndarray, confidence: float = 0.95, tol: float = 1e-10,
                  max_steps: int = 200) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Bradley-Terry ratings from head-to-head results, ``wins[i, j]`` = games i won
    against j: (rating, low, high) on the Elo scale (400 / ln 10 per unit of
    log-odds), centred on mean 0, with a ``confidence`` interval from the standard
    errors of the maximum-likelihood fit (the inverse of the Hessian).

    Each rating also carries one virtual win and one virtual loss against a
    player rated 0 (a weak prior), so that a player who won every game gets a
    finite rating with a wide interval instead of infinity; against a few hundred
    real games it moves the ratings by little.  Newton's method on a concave
    log-likelihood: a few steps.
    """
    wins = np.asarray(wins, dtype=np.float64)
    n = len(wins)
    games = wins + wins.T
    r = np.zeros(n)
    for _ in range(max_steps):
        p = 1.0 / (1.0 + np.exp(-(r[:, None] - r[None, :])))  # P(i beats j)
        own = 1.0 / (1.0 + np.exp(-r))  # P(i beats the virtual player)
        grad = (wins - games * p).sum(axis=1) + (1.0 - 2.0 * own)
        w = games * p * (1.0 - p)
        hess = w - np.diag(w.sum(axis=1) + 2.0 * own * (1.0 - own))
        step = np.linalg.solve(hess, grad)
        r = r - step
        if np.abs(step).max() < tol:
            break
    else:
        raise RuntimeError(f"Bradley-Terry fit did not converge in {max_steps} steps")
    p = 1.0 / (1.0 + np.exp(-(r[:, None] - r[None, :])))
    own = 1.0 / (1.0 + np.exp(-r))
    w = games * p * (1.0 - p)
    cov = np.linalg.inv(np.diag(w.sum(axis=1) + 2.0 * own * (1.0 - own)) - w)
    centre = np.eye(n) - 1.0 / n
    rating = centre @ r
    se = np.sqrt(np.clip(np.diag(centre @ cov @ centre.T), 0.0, None))
    z = z_value(confidence)
    return ELO_PER_NATURAL * rating, ELO_PER_NATURAL * (rating - z * se), ELO_PER_NATURAL * (rating + z * se)


# --- exact figures of a table ---------------------------------------------------------
# A table's exact figure: the registry's ``exact_tables`` name, per number of players
# (None: any other number), the "module:function" that computes it.
# A function takes (agents, orders, options, memo): the table's agents by player,
# the seat orders its games cycle through (``orders[k][s]`` = the player in seat s,
# every order played equally often), the game options, and a dict it may use to
# keep work between tables (keyed by what it computed for which agent object);
# it returns P(each player does not lose) over those orders, or raises
# NoExactFigure saying why it cannot.


def exact_evaluator(game: str, n_players: int) -> Callable | None:
    """The exact evaluator of a table of ``n_players`` of ``game``: the one the game names
    (the registry's ``exact_tables``), else at two players :func:`exact_heads_up` over
    the game's solver where it gives ``win_probabilities``; or None."""
    spec = registry.get(game)
    if n_players in spec.exact_tables:
        return registry.load(spec.exact_tables[n_players])
    if n_players == 2 and spec.exact and hasattr(registry.load(spec.exact), "win_probabilities"):
        return partial(exact_heads_up, game)
    target = spec.exact_tables.get(None)
    return registry.load(target) if target else None


def _memo(memo: dict, key, compute: Callable):
    if key not in memo:
        memo[key] = compute()
    return memo[key]


def _agent_label(agent: Agent) -> str:
    return str(getattr(agent, "name", None) or type(agent).__name__)


def _accepted(function: Callable, options: dict) -> dict:
    """The ``options`` that ``function`` takes by keyword."""
    parameters = inspect.signature(function).parameters
    return {k: v for k, v in options.items() if k in parameters}


def exact_heads_up(game: str, agents: Sequence[Agent], orders, options: dict, memo: dict) -> np.ndarray:
    """A two-player game by its solver, for any two agents it can tabulate (every agent
    that answers at every decision state): player 0's P(win) moving first (seat 0) and
    moving second, averaged over the seat orders."""
    solver = registry.load(registry.get(game).exact)
    key = tuple(sorted(options.items()))
    tables = []
    for agent in agents:
        try:
            tables.append(_memo(memo, (game, id(agent), key),
                                lambda a=agent: solver.policy_table(a, **_accepted(solver.policy_table, options))))
        except ValueError as e:
            raise NoExactFigure(f"the solver cannot tabulate {_agent_label(agent)}: {e}") from None
    first, second = solver.win_probabilities(*tables, **_accepted(solver.win_probabilities, options))
    p0 = float(np.mean([first if order[0] == 0 else second for order in orders]))
    return np.array([p0, 1.0 - p0])


def exact_heads_up_421(agents: Sequence[Agent], orders, options: dict, memo: dict) -> np.ndarray:
    """Two-player 421 by the solver (charge included), for any two agents it can
    tabulate.  The solver draws the first player fairly, which is what the two seat
    orders played equally often amount to."""
    from games.dice421 import solver as solver421

    if sorted(orders) != [(0, 1), (1, 0)]:
        raise NoExactFigure("the 421 solver's figure is for both seat orders equally often")
    key = tuple(sorted(options.items()))
    tables = []
    for agent in agents:
        try:
            tables.append(_memo(memo, ("solver421", id(agent), key),
                                lambda a=agent: solver421.policy_table(a, **options)))
        except ValueError as e:
            raise NoExactFigure(f"the solver cannot tabulate {_agent_label(agent)}: {e}") from None
    p0 = float(solver421.evaluate(*tables))
    return np.array([p0, 1.0 - p0])


def exact_race_420(agents: Sequence[Agent], orders, options: dict, memo: dict) -> np.ndarray:
    """N-player 420 when every player keeps dice by its own hand alone: the players'
    races are then independent, each with its own hitting-time law, and the game is
    a recursion over (players left, round's Player 1) (``games.dice420.reply``, which
    also says why an agent is refused)."""
    from games.dice420 import reply as reply420

    n = len(agents)
    policies = []
    for seat, agent in enumerate(agents):
        try:
            policies.append(_memo(memo, ("own-hand 420", id(agent), n),
                                  lambda a=agent, s=seat: reply420.seat_policy(a, s, n)))
        except ValueError as e:
            raise NoExactFigure(str(e)) from None
    out = np.zeros(n)
    for order in orders:  # the player in each seat; the seat-0 player leads the first round
        loser = reply420.loser_probabilities(n, [policies[p] for p in order], leaders=[0])
        for seat, p in enumerate(order):
            out[p] += 1.0 - loser[seat]
    return out / len(orders)


# --- reports --------------------------------------------------------------------------------
NAME_WIDTH = 20  # longer names are cut in the tables for people (not in the JSON or CSV)


def _cut(name: str, width: int = NAME_WIDTH) -> str:
    return name if len(name) <= width else name[: width - 1] + "~"


def _describe(rate: Rate, confidence: float, count_width: int) -> str:
    """``Rate.describe`` with the (wins/games) part padded, so a column can follow it."""
    lo, hi = rate.interval(confidence)
    count = f"({rate.wins}/{rate.games})"
    return f"{100 * rate.rate:6.2f}% [{100 * lo:6.2f}%, {100 * hi:6.2f}%]  {count:<{count_width}}"


def _count_width(rates: Sequence[Rate]) -> int:
    return max(len(f"({r.wins}/{r.games})") for r in rates)


def _exact_text(exact: float | None, rate: Rate, confidence: float) -> str:
    """The exact figure as a percentage; '*' when it lies outside the sampled interval."""
    if exact is None:
        return ""
    lo, hi = rate.interval(confidence)
    return f"{100 * exact:8.4f}%" + ("*" if not lo <= exact <= hi else "")


def order_description(n_players: int) -> str:
    """How a table's games go round the seats, for the header of a report."""
    orders = seatings(n_players)
    if n_players <= ALL_ORDERS_UP_TO:
        return f"each of the {len(orders)} seat orders"
    return (f"each of the {len(orders)} cyclic shifts of the seats ({n_players}! = {math.factorial(n_players):,} "
            "orders would be too many; each player still holds each seat equally often)")


def format_tournament(t: Tournament, confidence: float = 0.95) -> str:
    """The tournament for people, within 80 columns: a block per table, every agent
    over all its tables, then the ratings."""
    pct = f"{100 * confidence:g}%"
    n_agents = len(t.labels)
    per_table = t.games_per_order * len(t.orders)
    width = max(len("agent"), *(len(_cut(label)) for label in t.labels))
    settings = ", ".join(f"{k} {v}" for k, v in t.options.items())
    any_exact = any(tb.exact is not None for tb in t.tables)
    lines = [
        wrap(f"{t.game} tournament, {t.n_players} players" + (f", {settings}" if settings else "")
             + f": {', '.join(t.labels)}; seed {t.seed}"),
        wrap(f"{len(t.tables)} table{'s' if len(t.tables) != 1 else ''} (every {t.n_players} of the {n_agents} "
             f"agents), each {t.games_per_order:,} games in {order_description(t.n_players)}: "
             f"{per_table:,} games a table, {t.n_games:,} in all."),
        wrap("A win is not losing; seat 1 moves first."
             + (" exact: the exact chance of not losing over the same seat orders (* outside the CI)."
                if any_exact else "")),
    ]
    head = f"{'agent':<{width}}  not losing [{pct} Wilson CI]  (wins/games)" + ("     exact" if any_exact else "")
    for tb in t.tables:
        lines += ["", wrap(f"Table {tb.index}: {' vs '.join(t.labels[e] for e in tb.players)}"), head]
        cw = _count_width([tb.match.overall(p) for p in range(t.n_players)])
        for p, e in enumerate(tb.players):
            rate = tb.match.overall(p)
            exact = None if tb.exact is None else float(tb.exact[p])
            lines.append(f"{_cut(t.labels[e]):<{width}}  {_describe(rate, confidence, cw)}  "
                         f"{_exact_text(exact, rate, confidence)}".rstrip())
        if tb.exact is None and any_exact:
            lines.append(wrap(f"(no exact figure: {tb.exact_note})"))
    notes = {tb.exact_note for tb in t.tables}
    if not any_exact and len(notes) == 1:
        lines.insert(3, wrap(f"(No exact figures: {notes.pop()}.)"))
    if len(t.tables) > 1:
        lines += ["", f"Every agent over all its tables ({math.comb(n_agents - 1, t.n_players - 1)} each)", head]
        cw = _count_width([t.overall(e) for e in range(n_agents)])
        for e, label in enumerate(t.labels):
            rate = t.overall(e)
            lines.append(f"{_cut(label):<{width}}  {_describe(rate, confidence, cw)}  "
                         f"{_exact_text(t.exact_overall(e), rate, confidence)}".rstrip())
    lines += ["", *format_ratings(t, confidence, width)]
    return "\n".join(lines)


def format_ratings(t: Tournament, confidence: float = 0.95, width: int | None = None) -> list[str]:
    pct = f"{100 * confidence:g}%"
    width = width or max(len("agent"), *(len(_cut(label)) for label in t.labels))
    if t.bradley_terry is not None:
        lines = [
            wrap(f"Ratings, best first: Bradley-Terry on the Elo scale (mean 0) with its {pct} CI, "
                 f"and openskill's Plackett-Luce (ordinal = mu - 3 sigma), over {t.n_games:,} games"),
            f"{'agent':<{width}}  {'Elo':>6}  {f'[{pct} CI]':<15}  {'mu':>7}  {'sigma':>6}  {'ordinal':>7}",
        ]
        for e in t.ranking():
            bt, os_ = t.bradley_terry[e], t.openskill[e]
            ci = f"[{bt['low']:+.0f}, {bt['high']:+.0f}]"
            lines.append(f"{_cut(t.labels[e]):<{width}}  {bt['elo']:+6.0f}  {ci:<15}  {os_['mu']:7.2f}  "
                         f"{os_['sigma']:6.2f}  {os_['ordinal']:7.2f}")
        return lines
    ranked = finish_ranking(t.game) == "left"
    lines = [
        wrap(f"Ratings, best first: openskill's Plackett-Luce over every game's finishing order "
             f"({FINISH_NOTES[finish_ranking(t.game)]}; {t.n_games:,} games); ordinal = mu - 3 sigma"),
        f"{'agent':<{width}}  {'mu':>7}  {'sigma':>6}  {'ordinal':>7}" + ("  mean place" if ranked else ""),
    ]
    for e in t.ranking():
        os_ = t.openskill[e]
        lines.append(f"{_cut(t.labels[e]):<{width}}  {os_['mu']:7.2f}  {os_['sigma']:6.2f}  {os_['ordinal']:7.2f}"
                     + (f"  {t.mean_place(e):10.3f}" if ranked else ""))
    return lines


def _interval(rate: Rate, confidence: float) -> list[float]:
    return list(rate.interval(confidence))


def tournament_json(t: Tournament, command: str = "", confidence: float = 0.95) -> dict:
    """Everything about a tournament, as JSON-ready data."""
    seat_names = t.tables[0].match.seat_names if t.tables else ()
    return {
        "command": command,
        "settings": {
            "game": t.game, "players": t.n_players, "agents": list(t.labels), "games_per_seat_order": t.games_per_order,
            "seed": t.seed, "options": t.options, "seat_orders": [list(o) for o in t.orders],
            "games_per_table": t.games_per_order * len(t.orders), "tables": len(t.tables), "games": t.n_games,
            "confidence": confidence,
        },
        "definitions": {
            "not_losing": "a player wins a game when it does not lose; seat 1 moves first",
            "seat_orders": "seat_orders[k][s] is the table's player in seat s; every order is played equally often",
            "interval": "Wilson score interval",
            "exact": "the exact chance of not losing over the same seat orders, where an exact evaluator exists",
            "finishing_order": f"for the ratings: {FINISH_NOTES[finish_ranking(t.game)]}",
            "places": "places[k]: games the agent finished (k+1)-th, in the order players left the table as "
                      "winners (the engine's order when two leave at once), the loser last",
            "openskill": "Plackett-Luce (mu 25, sigma 25/3 to start, tau 0), updated game by game with the "
                         "tables interleaved; ordinal = mu - 3 sigma",
            "bradley_terry": "heads-up only: Elo scale (400/ln 10 per unit of log-odds), mean 0, interval from "
                             "the fit's standard errors; one virtual win and loss against a 0-rated player each",
        },
        "tables": [
            {
                "table": tb.index,
                "agents": [t.labels[e] for e in tb.players],
                "seed": tb.seed,
                "exact_note": tb.exact_note,
                "results": [
                    {
                        "agent": t.labels[e],
                        "games": int(tb.match.games[p].sum()),
                        "not_lost": int(tb.match.wins[p].sum()),
                        "rate": tb.match.overall(p).rate,
                        "interval": _interval(tb.match.overall(p), confidence),
                        "exact": None if tb.exact is None else float(tb.exact[p]),
                        "places": [int(c) for c in tb.places[p]],
                        "by_seat": [
                            {"seat": name, "games": int(tb.match.games[p, s]), "not_lost": int(tb.match.wins[p, s])}
                            for s, name in enumerate(seat_names)
                        ],
                    }
                    for p, e in enumerate(tb.players)
                ],
            }
            for tb in t.tables
        ],
        "agents": [
            {
                "agent": label,
                "games": t.overall(e).games,
                "not_lost": t.overall(e).wins,
                "rate": t.overall(e).rate,
                "interval": _interval(t.overall(e), confidence),
                "exact": t.exact_overall(e),
                "mean_place": t.mean_place(e),
                "openskill": t.openskill[e],
                "bradley_terry": None if t.bradley_terry is None else t.bradley_terry[e],
            }
            for e, label in enumerate(t.labels)
        ],
        "ranking": [t.labels[e] for e in t.ranking()],
    }


def tournament_rows(t: Tournament, confidence: float = 0.95) -> tuple[list[str], list[list]]:
    """(header, rows) of the CSV: one row per (table, agent), the agent's ratings repeated."""
    header = ["table", "table_agents", "agent", "games", "not_lost", "rate", "ci_low", "ci_high", "exact",
              *(f"place_{k + 1}" for k in range(t.n_players)), "mu", "sigma", "ordinal", "elo", "elo_low", "elo_high"]
    rows = []
    for tb in t.tables:
        for p, e in enumerate(tb.players):
            rate = tb.match.overall(p)
            bt = t.bradley_terry[e] if t.bradley_terry is not None else {"elo": "", "low": "", "high": ""}
            os_ = t.openskill[e]
            rows.append([tb.index, " vs ".join(t.labels[x] for x in tb.players), t.labels[e], rate.games, rate.wins,
                         rate.rate, *rate.interval(confidence), "" if tb.exact is None else float(tb.exact[p]),
                         *(int(c) for c in tb.places[p]), os_["mu"], os_["sigma"], os_["ordinal"],
                         bt["elo"], bt["low"], bt["high"]])
    return header, rows
