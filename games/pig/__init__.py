"""Pig, the dice game of Neller and Presser's "Optimal Play of the Dice Game Pig" and
of OpenSpiel: roll a die to add it to the turn total or hold to bank it; a 1 loses
the turn total; the first to the goal wins (rules P1-P4 in ``rules.md`` here).

Everything about the game is in this folder: the engine (``game``), its codec,
narrator and words for the front-ends (``view``), the Gymnasium, batched and
PettingZoo envs (``env``, ``vec``, ``aec``), the bots, the exact two-player solver
and the training presets.  ``SPEC`` says what the game is and what it offers.
"""

from __future__ import annotations

from core.spec import GameSpec, Option
from games.pig import codec, game, narrate

SPEC = GameSpec(
    name="pig",
    title="roll to add to your turn total or hold to bank it; a 1 loses the turn",
    how_to_move='"roll" (r) or "bank" (b)',
    engine=game.PigGame,
    codec=codec,
    narrator=narrate.NarratorPig,
    min_players=game.MIN_PLAYERS,
    max_players=game.MAX_PLAYERS,
    n_actions=game.N_ACTIONS,
    options=(
        Option("goal", game.DEFAULT_GOAL, game.MIN_GOAL, game.MAX_GOAL, "the score that wins"),
        Option("faces", game.DEFAULT_FACES, game.MIN_FACES, game.MAX_FACES, "faces of the die"),
    ),
    observation_bounds=codec.space_bounds,
    env_id="Pig-v0",
    env="games.pig.env:PigEnv",
    aec_module="games.pig.aec",
    batched_env="games.pig.vec:VecPigEnv",
    bots={
        "random": "agents.base:RandomAgent",
        "hold20": "games.pig.bots:Hold20Agent",
        "optimal": "games.pig.bots:OptimalPigAgent",
    },
    bot_players={"optimal": (2,)},
    shipped="ppo-pig",
    presets="games.pig.presets:PRESETS",
    suggested_bot="optimal",
    finish_ranking="winner",  # one winner; the others lose alike (P2)
    default_bot={2: "optimal", **{n: "hold20" for n in range(3, game.MAX_PLAYERS + 1)}},
    exact="games.pig.solver",
    view="games.pig.view",
    web="games.pig.web:WEB",
    bench="games.pig.bench",
)
