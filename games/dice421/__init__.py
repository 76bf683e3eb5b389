"""421: the three-dice token game with charge, discharge and RAMPO, for 2 or 3 players.

Everything about the game is in this folder: the rules engine (``game``), how a
decision is shown to an agent (``codec``), the narration (``narrate``), the
Gymnasium, batched and PettingZoo envs (``env``, ``vec``, ``aec``), the bots and
the exact modules.  ``SPEC`` says what the game is and what it offers; the
registry (``games``) finds it.  The rules in full: ``games/dice421/rules.md``.
"""

from __future__ import annotations

from core.spec import GameSpec, Option
from games.dice421 import codec, game, narrate

SPEC = GameSpec(
    name="421",
    title="the three-dice token game with charge, discharge and RAMPO",
    how_to_move='"stop", the values of the dice to reroll ("6 5", "65", "all") or "keep 4 2"',
    engine=game.Game421,
    codec=codec,
    narrator=narrate.Narrator421,
    min_players=game.MIN_PLAYERS,
    max_players=game.MAX_PLAYERS,
    n_actions=game.N_ACTIONS,
    options=(Option("pot", 15, 1, game.MAX_POT, "tokens in the pot at the start"),),
    env_id="Dice421-v0",
    aec_module="games.dice421.aec",
    env="games.dice421.env:Dice421Env",
    batched_env="games.dice421.vec:Vec421Env",
    live_env="games.dice421.vecn:Vec421NEnv",
    live_players=(3,),
    observation_bounds=codec.space_bounds,
    bots={
        "random": "agents.base:RandomAgent",
        "heuristic": "games.dice421.bots:HeuristicAgent",
        "greedy421": "games.dice421.bots:Greedy421Agent",
        "cautious": "games.dice421.bots:CautiousAgent",
        "optimal": "games.dice421.solver:OptimalAgent421",
        "exact3": "games.dice421.reply:ReplyAgent421",
    },
    bot_players={"optimal": (2,), "exact3": (3,)},
    bot_files={".npz": "games.dice421.reply:ReplyAgent421"},  # python -m games.dice421.reply --out FILE.npz
    shipped="ppo-421",
    more_shipped=("ppo-421-3p",),  # learned at a table of three (exact3 stays its default)
    presets="games.dice421.presets:PRESETS",
    features={"Rank421Features": "games.dice421.features:Rank421Features"},
    default_bot={2: "ppo-421", 3: "exact3"},
    finish_ranking="tied",  # leaving first gains nothing, and two may leave at once (H3)
    exact_tables={2: "games.dice421.solver:tournament_figure"},
    suggested_bot="heuristic",
    exact="games.dice421.solver",
    exact_n="games.dice421.exactn",
    view="games.dice421.view",
    web="games.dice421.web:WEB",
    bench="games.dice421.bench",
    evaluate="games.dice421.evaluate",
    explain="games.dice421.evaluate:explain_lines",
)
