"""Exact evaluation of a 420 agent with the solver, and export of its policy.

:func:`policy_table` turns any agent into a table ``P[h, o, k]`` over every
decision state with one batched ``action_probs`` call; the solver then gives
its exact win probabilities (:func:`exact_evaluation`).  At a table of N seats
(:func:`evaluate` with ``players`` or ``opponents``) each seat's exact
P(not losing), its best reply's and its regret come from ``games.dice420.reply``
(the solver at two players), or from simulated games of the engine.  No CLI
concerns here: training code imports these too.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

import numpy as np

from games.dice420 import reply as reply420
from games.dice420 import solver as solver420
from agents.base import pp
from games.dice420.solver import decision_batch, policy_table  # noqa: F401 (re-exported)
from games.dice420 import game as g
from core.dice import RandomDice
from core.narrate import wrap
from play import UsageError, progress_printer
from play.match import Rate, format_match, not_lost_by_seat, play_match

CSV_HEADER = ("hand", "opponent", "reroll")


@dataclass(frozen=True)
class ExactResult:
    """Exact win probabilities against the optimal bot, with optimal's own in the same seats."""

    red: float  # P(agent wins as Red vs optimal)
    blue: float  # P(agent wins as Blue vs optimal)
    optimal_red: float  # P(optimal wins as Red vs optimal)
    optimal_blue: float

    @property
    def gap_red_pp(self) -> float:
        """Agent minus optimal as Red, in percentage points (<= 0 up to rounding)."""
        return pp(self.red - self.optimal_red)

    @property
    def gap_blue_pp(self) -> float:
        return pp(self.blue - self.optimal_blue)

    @property
    def mean(self) -> float:
        """Win probability with the seat drawn fairly (half the games as Red)."""
        return (self.red + self.blue) / 2


def exact_evaluation(agent_or_table) -> ExactResult:
    """Exact win probabilities of an agent (or a policy table) against the optimal bot."""
    table = agent_or_table if isinstance(agent_or_table, np.ndarray) else policy_table(agent_or_table)
    solution = solver420.solve()
    red, blue = solver420.win_probabilities(table, solution.policy_table())
    return ExactResult(red, blue, solution.red_win, 1.0 - solution.red_win)


def format_exact(rows: list[tuple[str, ExactResult]]) -> str:
    """Table of exact results, one row per agent; gaps in percentage points, 4 decimals."""
    width = max([len("agent")] + [len(name) for name, _ in rows])
    head = (
        f"{'agent':<{width}}  {'as Red':>8}  {'optimal':>8}  {'gap (pp)':>9}    "
        f"{'as Blue':>8}  {'optimal':>8}  {'gap (pp)':>9}"
    )
    lines = ["Exact win probability against the optimal bot (420, by the solver):", head]
    for name, r in rows:
        lines.append(
            f"{name:<{width}}  {r.red:8.6f}  {r.optimal_red:8.6f}  {r.gap_red_pp:+9.4f}    "
            f"{r.blue:8.6f}  {r.optimal_blue:8.6f}  {r.gap_blue_pp:+9.4f}"
        )
    return "\n".join(lines)


def policy_rows(agent_or_table) -> list[tuple[str, str, str]]:
    """(hand, opponent, reroll) for every decision state, by hand index then opponent index.

    The reroll is the agent's most probable keep (its move, for a deterministic agent).
    """
    table = agent_or_table if isinstance(agent_or_table, np.ndarray) else policy_table(agent_or_table)
    states, _, _ = decision_batch()
    best = table[states[:, 0], states[:, 1]].argmax(axis=1)
    return [
        (g.format_hand(g.HANDS[h]), g.format_hand(g.HANDS[o]), g.format_hand(g.reroll_of(g.HANDS[h], int(k))))
        for (h, o), k in zip(states.tolist(), best.tolist())
    ]


def write_policy_csv(agent_or_table, out: str | Path | TextIO) -> int:
    """Write the policy as CSV (header ``hand,opponent,reroll``); returns the number of rows."""
    rows = policy_rows(agent_or_table)
    if isinstance(out, (str, Path)):
        with open(out, "w", newline="") as f:
            return _write_rows(rows, f)
    return _write_rows(rows, out)


def _write_rows(rows, f) -> int:
    writer = csv.writer(f, lineterminator="\n")
    writer.writerow(CSV_HEADER)
    writer.writerows(rows)
    return len(rows)


def is_deterministic(table: np.ndarray) -> bool:
    """Whether the table puts all probability on one keep in every decision state."""
    states, _, _ = decision_batch()
    return bool(np.all(table[states[:, 0], states[:, 1]].max(axis=1) > 1 - 1e-9))


def explain(rows: list[tuple[str, object]], out: TextIO, top: int = 10) -> None:
    """``evaluate 420 --exact --explain``: where each agent's exact gap to the optimum goes
    (``games.dice420.explain``): how thin it is spread and the ``top`` largest losses."""
    from games.dice420 import explain as explain420

    for name, agent in rows:
        try:
            table = policy_table(agent)
            breakdown = explain420.explain(table)
        except ValueError as e:
            raise UsageError(f"exact evaluation of {name} failed: {e}") from None
        print(file=out)
        print("\n".join(explain420.format_breakdown(breakdown, top, name)), file=out, flush=True)


def evaluate(rows: list[tuple[str, object]], exact: bool, n_games: int, seed: int, out: TextIO,
             err: TextIO | None = None, players: int = 2, opponents: list[tuple[str, object]] | None = None,
             **options) -> None:
    """``python -m play evaluate 420``.

    Two players and no ``opponents``: exact figures against the optimal bot, or
    simulated games against it.  Otherwise a table of ``players`` seats: each
    agent of ``rows`` at seat 0, ``opponents`` (label, agent) at seats 1.. (by
    default the agent itself in every seat); for each seat its P(not losing),
    exactly with its best reply and regret (``games.dice420.reply``), or simulated.
    """
    if options:
        raise UsageError(f"420 has no option {', '.join(sorted(options))}")
    if players == 2 and opponents is None:
        _evaluate_two(rows, exact, n_games, seed, out)
        return
    if not g.MIN_PLAYERS <= players <= g.MAX_PLAYERS:
        raise UsageError(f"420 is played by {g.MIN_PLAYERS} to {g.MAX_PLAYERS} players, got {players}")
    if opponents is not None and len(opponents) != players - 1:
        raise UsageError(f"{len(opponents)} opponents given for a table of {players}: give {players - 1}, "
                         "one per other seat")
    tables = [[(name, agent), *(opponents if opponents is not None else [(name, agent)] * (players - 1))]
              for name, agent in rows]
    if exact:
        _print_exact_tables(tables, players, out)
    else:
        _print_simulated_tables(tables, players, n_games, seed, out, err)


def _evaluate_two(rows: list[tuple[str, object]], exact: bool, n_games: int, seed: int, out: TextIO) -> None:
    """Two players, no opponents given: each agent against the optimal bot."""
    if exact:
        print(format_exact([(name, exact_evaluation(agent)) for name, agent in rows]), file=out)
        return
    from games.dice420.bots import OptimalAgent

    optimal = OptimalAgent()
    print(wrap(f"Simulated against the optimal bot ({n_games} games each; --exact gives exact figures):",
               indent=""), file=out)
    for name, agent in rows:
        result = play_match("420", agent, optimal, n_games, seed=seed, names=(name, "optimal"))
        print(file=out)
        print(format_match(result), file=out)


# --- a table of N seats ------------------------------------------------------------
SEAT_W = 8  # "Player 8"
LABEL_W = 20  # longer agent labels are cut (from the left: a path keeps its file name)


def _label(name: str) -> str:
    return name if len(name) <= LABEL_W else "..." + name[-(LABEL_W - 3):]


def table_figures(seats: list[object], players: int) -> list[reply420.SeatFigures]:
    """Every seat's exact P(not losing), best reply and regret at a table of agents.

    Two players: any agents, by ``solver420`` on their full policy tables (the
    two-player figures).  Three or more: agents that play from their own hand
    (``games.dice420.reply``); others raise ``ValueError`` with one line."""
    if players != 2:
        return reply420.table_figures(players, seats)
    tables = [policy_table(a) for a in seats]
    red, _ = solver420.win_probabilities(tables[0], tables[1])
    best_red = solver420.red_win_probability(solver420.best_reply(tables[1])[1])
    reply_blue = solver420.one_hot(solver420.best_reply(tables[0])[0])
    best_blue = 1.0 - solver420.win_probabilities(tables[0], reply_blue)[0]
    return [reply420.SeatFigures(0, red, best_red), reply420.SeatFigures(1, 1.0 - red, best_blue)]


def format_table(labels: list[str], figures: list[reply420.SeatFigures], players: int) -> list[str]:
    """The per-seat exact table: seat, agent, P(not losing), best reply's, regret in pp."""
    width = max(len("agent"), *(len(_label(n)) for n in labels))
    lines = [f"{'seat':<{SEAT_W}}  {'agent':<{width}}  {'P(not losing)':>13}  {'best reply':>10}  {'regret (pp)':>11}"]
    for f, name in zip(figures, labels):
        lines.append(f"{g.seat_name(f.seat, players):<{SEAT_W}}  {_label(name):<{width}}  {f.not_losing:>13.6f}  "
                     f"{f.best:>10.6f}  {f.regret_pp:>11.4f}")
    return lines


def _who_starts(players: int) -> str:
    return "Red moves first (R6)" if players == 2 else "Player 1 drawn (R7)"


def _print_exact_tables(tables: list[list[tuple[str, object]]], players: int, out: TextIO) -> None:
    print(wrap(f"Exact P(not losing) at a table of {players} (420, {_who_starts(players)}), each seat's best "
               "reply to the others and its regret (best reply minus the seat, in percentage points):",
               indent=""), file=out)
    for table in tables:
        labels = [name for name, _ in table]
        try:
            figures = table_figures([agent for _, agent in table], players)
        except ValueError as e:
            message = str(e).splitlines()[0]
            if len(tables) == 1:
                raise UsageError(message) from None
            print(file=out)
            print(wrap(f"(skipping {labels[0]}: {message})", indent=""), file=out)
            continue
        print(file=out)
        print("\n".join(format_table(labels, figures, players)), file=out)


def simulate_table(agents: list[object], n_games: int, seed: int | None, progress=None) -> np.ndarray:
    """Games not lost by each seat in ``n_games`` games of the engine (first
    player as the rules have it: Red with two, drawn with more), all dice from
    one ``RandomDice(seed)``."""
    return not_lost_by_seat("420", agents, n_games, RandomDice(seed), progress)


def _print_simulated_tables(tables: list[list[tuple[str, object]]], players: int, n_games: int, seed: int | None,
                            out: TextIO, err: TextIO | None) -> None:
    if n_games < 1:
        raise UsageError(f"--games {n_games}: a simulation needs at least one game")
    progress = progress_printer(err) if err is not None else None
    print(wrap(f"Simulated P(not losing) at a table of {players} (420, {_who_starts(players)}, {n_games} games"
               + (f", seed {seed}" if seed is not None else "") + "; --exact gives exact figures):", indent=""),
          file=out)
    for table in tables:
        labels = [_label(name) for name, _ in table]
        width = max(len("agent"), *(len(n) for n in labels))
        kept = simulate_table([agent for _, agent in table], n_games, seed, progress)
        print(file=out)
        print(f"{'seat':<{SEAT_W}}  {'agent':<{width}}  P(not losing) [95% Wilson CI]  (not lost/games)", file=out)
        for s, (name, wins) in enumerate(zip(labels, kept)):
            print(f"{g.seat_name(s, players):<{SEAT_W}}  {name:<{width}}  {Rate(int(wins), n_games).describe()}",
                  file=out)
