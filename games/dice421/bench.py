"""421's speed measurements for ``python -m train.bench`` (``GameSpec.bench``): its
Gymnasium env next to its batched envs, two players (against the optimal bot, and its
policy table at pot 15) and three (against two greedy421 bots, asked live).  Each maker
imports what it steps only when called: every measurement runs in a fresh process."""

from __future__ import annotations


def single_env(n_players: int = 2, opponent: str = "optimal"):
    from agents import make_agent
    from games.dice421.env import Dice421Env

    return Dice421Env(opponent=make_agent("421", opponent), n_players=n_players)


def batched_env(n_envs: int):
    """``n_envs`` two-player games against the optimal bot's policy table at pot 15."""
    from agents import bot_table
    from games.dice421.vec import Vec421Env

    return Vec421Env(n_envs, bot_table("421", "optimal", pot=15), seed=0)


def three_single_env():
    return single_env(3, "greedy421")


def three_batched_env(n_envs: int):
    """``n_envs`` three-player games against greedy421 bots, asked live (a batch policy)."""
    from agents import batch_policy
    from games.dice421.vecn import Vec421NEnv

    return Vec421NEnv(n_envs, batch_policy("421", "greedy421"), n_players=3, seed=0)


# label, (what the single env is, its maker), (what the batched env is, its maker of n games)
ENVS = (
    ("421", ("Dice421-v0, vs optimal", single_env), ("Vec421Env", batched_env)),
    ("421 3p", ("Dice421-v0, vs greedy421", three_single_env), ("Vec421NEnv", three_batched_env)),
)
# the preset the bench trains, and the bot a plain MaskablePPO on 8 single envs trains against
TRAINING = ("ppo-421", "optimal")
