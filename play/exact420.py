"""Exact evaluation of a 420 agent with the solver, and export of its policy.

:func:`policy_table` turns any agent into a table ``P[h, o, k]`` over every
decision state with one batched ``action_probs`` call; the solver then gives
its exact win probabilities (:func:`exact_evaluation`).  No CLI concerns here:
training code imports these too.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

import numpy as np

from agents import solver420
from agents.solver420 import decision_batch, policy_table  # noqa: F401 (re-exported)
from envs import game420 as g

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
        return _pp(self.red - self.optimal_red)

    @property
    def gap_blue_pp(self) -> float:
        return _pp(self.blue - self.optimal_blue)

    @property
    def mean(self) -> float:
        """Win probability with the seat drawn fairly (half the games as Red)."""
        return (self.red + self.blue) / 2


def _pp(diff: float) -> float:
    # Differences below the solver's precision are zero (and never print as -0.0000).
    return 0.0 if abs(diff) < 1e-12 else 100.0 * diff


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


def evaluate(rows: list[tuple[str, object]], exact: bool, n_games: int, seed: int, out: TextIO,
             err: TextIO | None = None) -> None:
    """``python -m play evaluate 420``: exact figures against the optimal bot, or simulated games."""
    if exact:
        print(format_exact([(name, exact_evaluation(agent)) for name, agent in rows]), file=out)
        return
    from agents.bots420 import OptimalAgent
    from play.tournament import format_match, play_match

    from envs.narrate import wrap

    optimal = OptimalAgent()
    print(wrap(f"Simulated against the optimal bot ({n_games} games each; --exact gives exact figures):",
               indent=""), file=out)
    for name, agent in rows:
        result = play_match("420", agent, optimal, n_games, seed=seed, names=(name, "optimal"))
        print(file=out)
        print(format_match(result), file=out)
