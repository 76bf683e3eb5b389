"""Tournaments: every table of n of the listed agents, seats rotated through every
order, exact figures where the game offers them, ratings and reports."""

from __future__ import annotations

import inspect
import math
from dataclasses import dataclass
from functools import partial
from itertools import combinations
from typing import Callable, Sequence

import numpy as np

import games as registry
from agents import exact_table
from agents.base import Agent
from core.spec import NoExactFigure
from play import derive_seed
from core.narrate import wrap
from play.match import ALL_ORDERS_UP_TO, MatchResult, Progress, Rate, play_match_n, seatings
from play.ratings import FINISH_NOTES, bradley_terry, finish_ranking, openskill_ratings

# Every table of n out of the listed agents, seats rotated through every order, one
# rating per agent.  A table's players are *entries*: the agents as listed, so the
# same bot listed twice is two entries (and sits twice at a table only then).


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
        counts = sum(
            (t.places[t.players.index(entry)] for t in self.tables if entry in t.players), np.zeros(self.n_players)
        )
        return float(counts @ np.arange(1, self.n_players + 1) / counts.sum())

    def ranking(self) -> list[int]:
        """Entries best first: by Bradley-Terry heads-up, else by openskill's ordinal."""
        key = (
            (lambda e: self.bradley_terry[e]["elo"])
            if self.bradley_terry is not None
            else (lambda e: self.openskill[e]["ordinal"])
        )
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
            game,
            agents,
            per_table,
            seed=derive_seed(table_seed, 0),
            names=[labels[e] for e in players],
            progress=(lambda d, _n, done=done: progress(done + d, total)) if progress is not None else None,
            on_game=on_game,
            **options,
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
            tables.append(
                _memo(
                    memo,
                    (game, id(agent), key),
                    lambda a=agent: exact_table(game, a, **_accepted(solver.policy_table, options)),
                )
            )
        except ValueError as e:
            raise NoExactFigure(f"the solver cannot tabulate {_agent_label(agent)}: {e}") from None
    first, second = solver.win_probabilities(*tables, **_accepted(solver.win_probabilities, options))
    p0 = float(np.mean([first if order[0] == 0 else second for order in orders]))
    return np.array([p0, 1.0 - p0])


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
    return (
        f"each of the {len(orders)} cyclic shifts of the seats ({n_players}! = {math.factorial(n_players):,} "
        "orders would be too many; each player still holds each seat equally often)"
    )


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
        wrap(
            f"{t.game} tournament, {t.n_players} players"
            + (f", {settings}" if settings else "")
            + f": {', '.join(t.labels)}; seed {t.seed}"
        ),
        wrap(
            f"{len(t.tables)} table{'s' if len(t.tables) != 1 else ''} (every {t.n_players} of the {n_agents} "
            f"agents), each {t.games_per_order:,} games in {order_description(t.n_players)}: "
            f"{per_table:,} games a table, {t.n_games:,} in all."
        ),
        wrap(
            "A win is not losing; seat 1 moves first."
            + (
                " exact: the exact chance of not losing over the same seat orders (* outside the CI)."
                if any_exact
                else ""
            )
        ),
    ]
    head = f"{'agent':<{width}}  not losing [{pct} Wilson CI]  (wins/games)" + ("     exact" if any_exact else "")
    for tb in t.tables:
        lines += ["", wrap(f"Table {tb.index}: {' vs '.join(t.labels[e] for e in tb.players)}"), head]
        cw = _count_width([tb.match.overall(p) for p in range(t.n_players)])
        for p, e in enumerate(tb.players):
            rate = tb.match.overall(p)
            exact = None if tb.exact is None else float(tb.exact[p])
            lines.append(
                f"{_cut(t.labels[e]):<{width}}  {_describe(rate, confidence, cw)}  "
                f"{_exact_text(exact, rate, confidence)}".rstrip()
            )
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
            lines.append(
                f"{_cut(label):<{width}}  {_describe(rate, confidence, cw)}  "
                f"{_exact_text(t.exact_overall(e), rate, confidence)}".rstrip()
            )
    lines += ["", *format_ratings(t, confidence, width)]
    return "\n".join(lines)


def format_ratings(t: Tournament, confidence: float = 0.95, width: int | None = None) -> list[str]:
    pct = f"{100 * confidence:g}%"
    width = width or max(len("agent"), *(len(_cut(label)) for label in t.labels))
    if t.bradley_terry is not None:
        lines = [
            wrap(
                f"Ratings, best first: Bradley-Terry on the Elo scale (mean 0) with its {pct} CI, "
                f"and openskill's Plackett-Luce (ordinal = mu - 3 sigma), over {t.n_games:,} games"
            ),
            f"{'agent':<{width}}  {'Elo':>6}  {f'[{pct} CI]':<15}  {'mu':>7}  {'sigma':>6}  {'ordinal':>7}",
        ]
        for e in t.ranking():
            bt, os_ = t.bradley_terry[e], t.openskill[e]
            ci = f"[{bt['low']:+.0f}, {bt['high']:+.0f}]"
            lines.append(
                f"{_cut(t.labels[e]):<{width}}  {bt['elo']:+6.0f}  {ci:<15}  {os_['mu']:7.2f}  "
                f"{os_['sigma']:6.2f}  {os_['ordinal']:7.2f}"
            )
        return lines
    ranked = finish_ranking(t.game) == "left"
    lines = [
        wrap(
            f"Ratings, best first: openskill's Plackett-Luce over every game's finishing order "
            f"({FINISH_NOTES[finish_ranking(t.game)]}; {t.n_games:,} games); ordinal = mu - 3 sigma"
        ),
        f"{'agent':<{width}}  {'mu':>7}  {'sigma':>6}  {'ordinal':>7}" + ("  mean place" if ranked else ""),
    ]
    for e in t.ranking():
        os_ = t.openskill[e]
        lines.append(
            f"{_cut(t.labels[e]):<{width}}  {os_['mu']:7.2f}  {os_['sigma']:6.2f}  {os_['ordinal']:7.2f}"
            + (f"  {t.mean_place(e):10.3f}" if ranked else "")
        )
    return lines


def _interval(rate: Rate, confidence: float) -> list[float]:
    return list(rate.interval(confidence))


def tournament_json(t: Tournament, command: str = "", confidence: float = 0.95) -> dict:
    """Everything about a tournament, as JSON-ready data."""
    seat_names = t.tables[0].match.seat_names if t.tables else ()
    return {
        "command": command,
        "settings": {
            "game": t.game,
            "players": t.n_players,
            "agents": list(t.labels),
            "games_per_seat_order": t.games_per_order,
            "seed": t.seed,
            "options": t.options,
            "seat_orders": [list(o) for o in t.orders],
            "games_per_table": t.games_per_order * len(t.orders),
            "tables": len(t.tables),
            "games": t.n_games,
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
    header = [
        "table",
        "table_agents",
        "agent",
        "games",
        "not_lost",
        "rate",
        "ci_low",
        "ci_high",
        "exact",
        *(f"place_{k + 1}" for k in range(t.n_players)),
        "mu",
        "sigma",
        "ordinal",
        "elo",
        "elo_low",
        "elo_high",
    ]
    rows = []
    for tb in t.tables:
        for p, e in enumerate(tb.players):
            rate = tb.match.overall(p)
            bt = t.bradley_terry[e] if t.bradley_terry is not None else {"elo": "", "low": "", "high": ""}
            os_ = t.openskill[e]
            rows.append(
                [
                    tb.index,
                    " vs ".join(t.labels[x] for x in tb.players),
                    t.labels[e],
                    rate.games,
                    rate.wins,
                    rate.rate,
                    *rate.interval(confidence),
                    "" if tb.exact is None else float(tb.exact[p]),
                    *(int(c) for c in tb.places[p]),
                    os_["mu"],
                    os_["sigma"],
                    os_["ordinal"],
                    bt["elo"],
                    bt["low"],
                    bt["high"],
                ]
            )
    return header, rows
