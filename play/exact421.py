"""Exact and simulated evaluation of a 421 agent, for ``python -m play evaluate 421``.

Two players without ``--opponent``: the agent against the optimal bot and its own
best reply (exact), or against each built-in bot (simulated).  Otherwise a table:
the agent at seat 1 and the opponents at the other seats (by default the agent
itself), and for each seat its P(not losing), the best reply's and the regret
(``games.dice421.exactn``), or P(not losing) from simulated games.
"""

from __future__ import annotations

from typing import Optional, Sequence, TextIO

import agents
import games
from games.dice421 import solver as solver421
from play import UsageError, derive_seed, progress_printer
from core.narrate import wrap
from play.match import Rate, format_against, not_lost_by_seat, play_match_n


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


def explain(rows: list[tuple[str, object]], out: TextIO, top: int = 10, pot: int = 15) -> None:
    """``evaluate 421 --exact --explain``: where each agent's exact gap to the optimum goes
    (``games.dice421.explain``): by decision, by tokens held, and the ``top`` largest losses."""
    from games.dice421 import explain as explain421

    for name, agent in rows:
        try:
            table = solver421.policy_table(agent, pot)
        except ValueError as e:
            raise UsageError(f"exact evaluation of {name} failed: {e}") from None
        print(file=out)
        print("\n".join(explain421.format_breakdown(explain421.explain(table), top)), file=out, flush=True)


def evaluate(rows: list[tuple[str, object]], exact: bool, n_games: int, seed: int, out: TextIO,
             err: Optional[TextIO] = None, players: int = 2,
             opponents: Optional[Sequence[tuple[str, object]]] = None, pot: int = 15) -> None:
    """``python -m play evaluate 421``: exact figures, or each agent against each built-in bot;
    with ``players`` 3 or ``opponents`` (label, agent) for seats 2.., each seat of the table."""
    if players != 2 or opponents is not None:
        evaluate_table(rows, exact, n_games, seed, out, err, players, opponents, pot)
        return
    if exact:
        print_exact(rows, out, pot)
        return
    progress = progress_printer(err) if err is not None else None
    bots = list(games.get("421").bots_for(2))
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


SEAT_LABEL_WIDTH = 20  # agent labels are cut to this, so a table row fits in 80 columns


def _seats(name: str, agent, players: int, opponents) -> list[tuple[str, object]]:
    """(label, agent) by seat: the evaluated agent at seat 1, the opponents after it."""
    others = list(opponents) if opponents is not None else [(name, agent)] * (players - 1)
    if len(others) != players - 1:
        raise UsageError(f"{players} players need {players - 1} opponents, got {len(others)}")
    return [(name, agent), *others]


def _cut(label: str) -> str:
    return label if len(label) <= SEAT_LABEL_WIDTH else label[: SEAT_LABEL_WIDTH - 3] + "..."


def evaluate_table(rows: list[tuple[str, object]], exact: bool, n_games: int, seed: int, out: TextIO,
                   err: Optional[TextIO], players: int, opponents, pot: int = 15) -> None:
    """Each seat of a table with each evaluated agent at seat 1: exact (P(not losing), best
    reply, regret) or simulated (P(not losing) with its 95% Wilson interval)."""
    from games.dice421 import exactn as exact421n

    if exact:
        print(wrap(f"421, exact: {players} players, pot {pot}, charge and first-player draw included. "
                   "P(not losing): the chance the seat is not the one left holding every token (with 3 "
                   "players a seat that runs out of tokens leaves as a winner, so the figures sum to 2). "
                   "Best reply: the same for the best policy at that seat against the others as they "
                   "play. Regret: best reply - P(not losing), in percentage points.", indent=""), file=out)
    else:
        print(wrap(f"421, simulated: {players} players, pot {pot}, {n_games} games per table (seed {seed}), "
                   "the first player drawn at random each game as the rules do. P(not losing) with its "
                   "95% Wilson interval; --exact gives exact figures and best replies.", indent=""), file=out)
    tables: dict[int, exact421n.AgentTable] = {}  # one table per agent object, shared by its seats
    for name, agent in rows:
        seats = _seats(name, agent, players, opponents)
        print(file=out)
        print(wrap("table: " + ", ".join(f"{k + 1} {label}" for k, (label, _) in enumerate(seats)), indent=""),
              file=out)
        if not exact:
            _print_simulated(seats, n_games, seed, out, err, pot)
            continue
        asked = [tables.setdefault(id(a), exact421n.AgentTable(a, label)) for label, a in seats]
        try:
            figures, seconds = exact421n.table_figures(asked, [label for label, _ in seats], pot=pot)
        except ValueError as e:  # e.g. a bot that cannot play this table, or weight on illegal moves
            raise UsageError(f"exact evaluation of the table of {name} failed: {e}") from None
        print(f"{'seat':<4}  {'agent':<{SEAT_LABEL_WIDTH}}  {'P(not losing)':>13}  {'best reply':>10}  "
              f"{'regret (pp)':>11}", file=out)
        for f in figures:
            print(f"{f.seat + 1:<4}  {_cut(f.name):<{SEAT_LABEL_WIDTH}}  {f.not_losing:13.6f}  "
                  f"{f.best_reply:10.6f}  {f.regret_pp:+11.4f}", file=out)
        print(f"({seconds:.1f} s)", file=out, flush=True)


def _print_simulated(seats: list[tuple[str, object]], n_games: int, seed: int, out: TextIO,
                     err: Optional[TextIO], pot: int) -> None:
    """P(not losing) of each seat over ``n_games`` engine games (first player drawn each game)."""
    from core.dice import RandomDice

    progress = progress_printer(err) if err is not None else None
    wins = not_lost_by_seat("421", [a for _, a in seats], n_games, RandomDice(derive_seed(seed, 0)), progress,
                            pot=pot)
    print(f"{'seat':<4}  {'agent':<{SEAT_LABEL_WIDTH}}  P(not losing) [95% CI]  (wins/games)", file=out)
    for seat, (label, _) in enumerate(seats):
        print(f"{seat + 1:<4}  {_cut(label):<{SEAT_LABEL_WIDTH}}  {Rate(wins[seat], n_games).describe()}",
              file=out, flush=True)
