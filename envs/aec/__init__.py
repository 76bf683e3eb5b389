"""PettingZoo AEC environments of the dice games, one module per game, as in
``pettingzoo.classic``::

    from envs.aec import dice420_v0, dice421_v0
    env = dice420_v0.env(n_players=4)
    env = dice421_v0.env(n_players=3, pot=15)

Both are :class:`envs.aec.base.DiceAECEnv` over the game's engine and codec.
"""

from envs.aec import dice420_v0, dice421_v0

__all__ = ["dice420_v0", "dice421_v0"]
