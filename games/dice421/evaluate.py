"""What ``python -m play evaluate 421`` asks of 421 (``GameSpec.evaluate``; the front-end,
``play.evaluate``, is the same for every game and prints the tables).

* :func:`two_player_lines`: each agent's exact P(win) against the optimal bot and
  against its own best reply (the two-player solver).
* :func:`table_figures`: each seat's exact P(not losing) and its best reply's at a table
  of two or three agents (``exactn``).
* :func:`table_note`: what the tables include, for their headings.
* :func:`explain_lines`: where an agent's exact gap to the optimum goes (``explain``).

Each raises ``ValueError`` in one line where it cannot give its figures.
"""

from __future__ import annotations

from typing import Iterator, Sequence

import agents
from agents.base import pp
from games.dice421 import exactn
from games.dice421 import explain as explain421
from games.dice421 import solver as solver421


def two_player_lines(rows: Sequence[tuple[str, object]], pot: int = 15) -> Iterator[str]:
    """Exact P(win) of each agent against the optimal bot and against its own best reply."""
    yield from (
        f"421, exact (solver): two players, pot {pot}, charge phase and first-player draw\n"
        "included. The optimal bot against itself wins exactly 0.5; gap in percentage\n"
        "points. 'vs best reply': how much the agent wins against the strongest policy\n"
        "against it."
    ).splitlines()
    width = max(len("agent"), *(len(n) for n, _ in rows)) if rows else 5
    yield f"{'agent':<{width}}  {'vs optimal':>10}  {'gap (pp)':>9}  {'vs best reply':>13}"
    optimal = agents.bot_table("421", "optimal", pot=pot)
    for name, agent in rows:
        try:
            table = solver421.policy_table(agent, pot)
            p = solver421.evaluate(table, optimal)
            reply = solver421.best_reply(table).value
        except ValueError as e:  # e.g. an agent that puts weight on illegal moves
            raise ValueError(f"exact evaluation of {name} failed: {e}") from None
        yield f"{name:<{width}}  {p:10.6f}  {pp(p - 0.5):+9.4f}  {1 - reply:13.6f}"


def table_note(players: int, pot: int = 15) -> str:
    return "charge and first-player draw included" + (
        "; a seat that runs out of tokens leaves as a winner, so the figures sum to 2" if players == 3 else ""
    )


def table_figures(seats: Sequence[tuple[str, object]], memo: dict, pot: int = 15) -> list[tuple[float, float]]:
    """(P(not losing), best reply's) of every seat of a table of (label, agent), exact
    (``exactn``); ``memo`` keeps one agent table per agent object, asked once for every
    table it sits at."""
    tables = [memo.setdefault(id(agent), exactn.AgentTable(agent, label)) for label, agent in seats]
    figures, _ = exactn.table_figures(tables, [label for label, _ in seats], pot=pot)
    return [(f.not_losing, f.best_reply) for f in figures]


def explain_lines(name: str, agent, top: int = 10, pot: int = 15) -> list[str]:
    """``evaluate 421 --exact --explain``: the agent's exact gap to the optimum by decision,
    by tokens held, and the ``top`` largest losses (``games.dice421.explain``)."""
    return explain421.format_breakdown(explain421.explain(solver421.policy_table(agent, pot)), top)
