"""Potential-based reward shaping for two-player 421 training (Ng, Harada and
Russell, 1999): the agent is also paid the change in the exact value of its
token position between decisions, so a round's result is credited at once
instead of only when the game ends.

The potential of a position is 2 W - 1, where W is the agent's chance to win
from the split of tokens and who leads (``agents.solver421``: ``W[t]`` for the
leader holding ``t`` tokens), and 0 once the game is over.  With no
discounting the shaped return of an episode is the true return minus the
potential of its first position, which does not depend on the policy: the
shaping changes how fast PPO learns, not what is best.  Evaluation always uses
the true (unshaped) game.
"""

from __future__ import annotations

import gymnasium as gym

from envs import codec421
from envs import game421 as g


class TokenValueShaping(gym.Wrapper):
    def __init__(self, env: gym.Env, pot: int):
        super().__init__(env)
        from agents import solver421

        self.leader_wins = solver421.solve(pot).value
        self._phi = 0.0

    def potential(self, obs) -> float:
        o = codec421.decode(obs)
        if o.phase != g.DISCHARGE or o.n_players != 2:
            return 0.0
        opponent = o.others[0]
        win = self.leader_wins[o.tokens] if o.is_leader else 1.0 - self.leader_wins[opponent.tokens]
        return 2.0 * float(win) - 1.0

    def reset(self, **kwargs):
        obs, info = self.env.reset(**kwargs)
        self._phi = 0.0 if info.get("decided") else self.potential(obs)
        return obs, info

    def step(self, action):
        obs, reward, terminated, truncated, info = self.env.step(action)
        phi = 0.0 if (terminated or truncated) else self.potential(obs)
        shaped = reward + phi - self._phi
        self._phi = phi
        return obs, shaped, terminated, truncated, info
