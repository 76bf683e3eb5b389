"""420: Mark Steere's race to make four dice total exactly 20, for 2 to 8 players.

Everything about the game is in this folder: the rules engine (``game``), how a
decision is shown to an agent (``codec``), the narration (``narrate``), the
Gymnasium, batched and PettingZoo envs (``env``, ``vec``, ``aec``), the bots and
the exact modules.  ``SPEC`` says what the game is and what it offers; the
registry (``games``) finds it.  The rules in full: ``games/dice420/rules.md``.
"""

from __future__ import annotations

from core.spec import GameSpec
from games.dice420 import codec, game, narrate

SPEC = GameSpec(
    name="420",
    title="Mark Steere's race to make four dice total exactly 20",
    how_to_move='the values of the dice to reroll ("1 5", "15", "all") or "keep 6 6"',
    engine=game.Game420,
    codec=codec,
    narrator=narrate.Narrator420,
    min_players=game.MIN_PLAYERS,
    max_players=game.MAX_PLAYERS,
    n_actions=game.N_ACTIONS,
    env_id="Dice420-v0",
    aec_module="games.dice420.aec",
    env="games.dice420.env:Dice420Env",
    batched_env="games.dice420.vec:Vec420Env",
    live_env="games.dice420.vec:Vec420Env",  # opponents may be tables or batch policies
    live_players=tuple(range(3, game.MAX_PLAYERS + 1)),
    live_table="games.dice420.reply:live_table",  # own-hand bots: a lookup, not a call per row
    observation_bounds=codec.space_bounds,
    bots={
        "random": "agents.base:RandomAgent",
        "greedy": "games.dice420.bots:GreedyAgent",
        "foundation": "games.dice420.bots:FoundationAgent",
        "optimal": "games.dice420.bots:OptimalAgent",
    },
    shipped="ppo-420",
    presets="games.dice420.presets:PRESETS",
    features={
        "Hand420Features": "games.dice420.features:Hand420Features",
        "Keep420Features": "games.dice420.features:Keep420Features",
    },
    suggested_bot="optimal",
    exact="games.dice420.solver",
    exact_n="games.dice420.reply",
    default_bot={2: "ppo-420", **{n: "optimal" for n in range(3, game.MAX_PLAYERS + 1)}},
    finish_ranking="left",  # the order players made 20 and dropped out (R7)
    exact_tables={
        None: "games.dice420.reply:tournament_figure"
    },  # two players: the solver (play.tournament.exact_heads_up)
    view="games.dice420.view",
    web="games.dice420.web:WEB",
    bench="games.dice420.bench",
    evaluate="games.dice420.evaluate",
    explain="games.dice420.evaluate:explain_lines",
    export="games.dice420.export",
)
