"""``python -m play evaluate GAME`` for any game that declares no evaluation of its own.

Exact, at two players: the game's exact module (``GameSpec.exact``: ``policy_table``,
``exact_figures``, ``format_figures``) measures each agent against every two-player
bot of the game, as training does.  Simulated: each agent against each bot over
engine games, with each seat held equally often.  What a game does not offer (no
solver, no exact evaluator for bigger tables) is said in one line.
"""

from __future__ import annotations

from typing import Optional, Sequence, TextIO

import agents
import games
from core.narrate import wrap
from core.spec import GameSpec
from play import UsageError, derive_seed, progress_printer
from play.match import format_against, play_match_n


def _option_text(options: dict) -> str:
    return ", ".join(f"{k} {v}" for k, v in options.items())


def evaluate(spec: GameSpec, rows: Sequence[tuple[str, object]], exact: bool, n_games: int, seed: int,
             out: TextIO, err: Optional[TextIO], players: int = 2, opponents=None, **options) -> None:
    """Each (name, agent) of ``rows``: exact figures against the game's bots (``exact``), or
    simulated matches against each of them."""
    if players != 2 or opponents is not None:
        raise UsageError(f"{spec.name} offers no evaluation at a table of {players} players or against chosen "
                         "opponents yet: evaluate at two players against its bots")
    bots = list(spec.bots_for(2))
    setting = _option_text(options)
    if exact:
        if not spec.exact:
            raise UsageError(f"{spec.name} has no exact solver: evaluate it without --exact (simulated games)")
        solver = games.load(spec.exact)
        tables = {bot: agents.bot_table(spec.name, bot, **options) for bot in bots}
        print(wrap(f"{spec.name}, exact: each agent against each two-player bot ({', '.join(bots)})"
                   + (f", {setting}" if setting else "") + ", by the game's solver.", indent=""), file=out)
        for name, agent in rows:
            figures = solver.exact_figures(agent, tables, **options)
            print(file=out)
            for line in solver.format_figures(name, figures, bots, **options):
                print(line, file=out)
        return
    progress = progress_printer(err) if err is not None else None
    print(wrap(f"{spec.name}, simulated: each agent against each bot ({', '.join(bots)}), {n_games} "
               f"two-player games each" + (f" ({setting}, seed {seed})" if setting else f" (seed {seed})")
               + ", each seat held in half of them.", indent=""), file=out)
    for name, agent in rows:
        results = []
        for k, bot in enumerate(bots):
            opponent = agents.make_agent(spec.name, bot, derive_seed(seed, 100 + k))
            results.append(play_match_n(spec.name, [agent, opponent], n_games, seed=seed, names=(name, bot),
                                        progress=progress, **options))
        print(file=out)
        print(format_against(name, results), file=out)
