"""What ``python -m play evaluate 420`` asks of 420 (``GameSpec.evaluate``; the front-end,
``play.evaluate``, is the same for every game and prints the tables).

* :func:`two_player_lines`: each agent's exact win probability against the optimal bot,
  as Red and as Blue, with the optimal bot's own in the same seats (the solver).
* :func:`table_figures`: each seat's exact P(not losing) and its best reply's at a table
  of agents (two players: the solver on whole policy tables; more: ``reply``).
* :func:`table_note`: who starts, for the tables' headings.
* :func:`explain_lines`: where an agent's exact gap to the optimum goes (``explain``).

Each raises ``ValueError`` in one line where it cannot give its figures.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator, Sequence

import numpy as np

from agents.base import pp
from games.dice420 import explain as explain420
from games.dice420 import reply as reply420
from games.dice420 import solver as solver420
from games.dice420.solver import policy_table


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


def two_player_lines(rows: Sequence[tuple[str, object]]) -> Iterator[str]:
    """``evaluate 420 --exact`` at two players: the table of :func:`format_exact`."""
    yield from format_exact([(name, exact_evaluation(agent)) for name, agent in rows]).splitlines()


def table_note(players: int) -> str:
    return "Red moves first (R6)" if players == 2 else "Player 1 drawn (R7)"


def table_figures(seats: Sequence[tuple[str, object]], memo: dict) -> list[tuple[float, float]]:
    """(P(not losing), best reply's) of every seat of a table of (label, agent), exact.

    Two players: any agents, by the solver on their full policy tables.  Three or more:
    agents that play from their own hand (``reply``); others raise ``ValueError`` (one line)."""
    agents = [agent for _, agent in seats]
    players = len(agents)
    if players != 2:
        return [(f.not_losing, f.best) for f in reply420.table_figures(players, agents)]
    for a in agents:  # one policy table per agent object, shared by the seats and tables it holds
        if id(a) not in memo:
            memo[id(a)] = policy_table(a)
    tables = [memo[id(a)] for a in agents]
    red, _ = solver420.win_probabilities(tables[0], tables[1])
    best_red = solver420.red_win_probability(solver420.best_reply(tables[1])[1])
    reply_blue = solver420.one_hot(solver420.best_reply(tables[0])[0])
    best_blue = 1.0 - solver420.win_probabilities(tables[0], reply_blue)[0]
    return [(red, best_red), (1.0 - red, best_blue)]


def explain_lines(name: str, agent, top: int = 10) -> list[str]:
    """``evaluate 420 --exact --explain``: how thin the agent's exact gap is spread and the
    ``top`` largest losses (``games.dice420.explain``)."""
    return explain420.format_breakdown(explain420.explain(policy_table(agent)), top, name)
