"""Exact and simulated evaluation of a 421 agent (two players), for ``python -m play evaluate 421``."""

from __future__ import annotations

from typing import Optional, TextIO

import agents
import games
from agents import solver421
from play import UsageError, derive_seed, progress_printer
from envs.narrate import wrap
from play.tournament import format_against, play_match_n


def print_exact(rows: list[tuple[str, object]], out: TextIO, pot: int = 15) -> None:
    """Exact P(win) of each agent against the optimal bot and against its own best reply."""
    print(f"421, exact (solver): two players, pot {pot}, charge phase and first-player draw\n"
          "included. The optimal bot against itself wins exactly 0.5; gap in percentage\n"
          "points. 'vs best reply': how much the agent wins against the strongest policy\n"
          "against it.", file=out)
    width = max(len("agent"), *(len(n) for n, _ in rows)) if rows else 5
    print(f"{'agent':<{width}}  {'vs optimal':>10}  {'gap (pp)':>9}  {'vs best reply':>13}", file=out)
    optimal = agents.bot_table("421", "optimal", pot=pot)
    for name, agent in rows:
        try:
            table = solver421.policy_table(agent, pot)
            p = solver421.evaluate(table, optimal)
            reply = solver421.best_reply(table).value
        except ValueError as e:  # e.g. an agent that puts weight on illegal moves
            raise UsageError(f"exact evaluation of {name} failed: {e}") from None
        gap = 0.0 if abs(p - 0.5) < 1e-12 else 100 * (p - 0.5)
        print(f"{name:<{width}}  {p:10.6f}  {gap:+9.4f}  {1 - reply:13.6f}", file=out, flush=True)


def evaluate(rows: list[tuple[str, object]], exact: bool, n_games: int, seed: int, out: TextIO,
             err: Optional[TextIO] = None, pot: int = 15) -> None:
    """``python -m play evaluate 421``: exact figures, or each agent against each built-in bot."""
    if exact:
        print_exact(rows, out, pot)
        return
    progress = progress_printer(err) if err is not None else None
    bots = list(games.get("421").bots)
    print(wrap(f"421, simulated: each agent against each built-in bot ({', '.join(bots)}), "
               f"{n_games} two-player games each (pot {pot}, seed {seed}), moving first in half of them. "
               "A win is not losing.", indent=""), file=out)
    for name, agent in rows:
        results = []
        for k, bot in enumerate(bots):
            opponent = agents.make_agent("421", bot, derive_seed(seed, 100 + k))
            results.append(play_match_n("421", [agent, opponent], n_games, seed=seed, names=(name, bot),
                                        progress=progress, pot=pot))
        print(file=out)
        print(format_against(name, results), file=out)
