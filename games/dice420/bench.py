"""420's speed measurements for ``python -m train.bench`` (``GameSpec.bench``): its
Gymnasium env against the optimal bot next to its batched env against the optimal
policy table, and the training of the ppo-420 preset.  Each maker imports what it
steps only when called: every measurement runs in a fresh process of its own."""

from __future__ import annotations


def single_env():
    """The Gymnasium env, two players, against the optimal bot."""
    from agents import make_agent
    from games.dice420.env import Dice420Env

    return Dice420Env(opponent=make_agent("420", "optimal"))


def batched_env(n_envs: int):
    """The batched env of ``n_envs`` games against the optimal policy table."""
    from games.dice420 import solver
    from games.dice420.vec import Vec420Env

    return Vec420Env(n_envs, solver.solve().policy, seed=0)


# label, (what the single env is, its maker), (what the batched env is, its maker of n games)
ENVS = (("420", ("Dice420-v0", single_env), ("Vec420Env", batched_env)),)
# the preset the bench trains, and the bot a plain MaskablePPO on 8 single envs trains against
TRAINING = ("ppo-420", "optimal")
