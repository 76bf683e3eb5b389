"""PettingZoo AEC environments: :class:`envs.aec.base.DiceAECEnv` over any game's
engine and codec.  Each game's module is in its folder, as in ``pettingzoo.classic``::

    from games.dice420 import aec as dice420_v0
    env = dice420_v0.env(n_players=4)

or by the game's name through the registry: ``games.aec_env("421", n_players=3, pot=15)``.
"""
