"""Feature extractors for trained policies (torch).

``Hand420Features`` turns a 420 observation (two sorted hands of four dice) into
a one-hot code of each hand among the 126 possible: the network then holds, in
effect, a learned row per hand, which is what lets PPO settle every close call
exactly.  Pure table lookups, so it is fast and has no parameters.
"""

from __future__ import annotations

import gymnasium as gym
import torch
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor

from envs import game420 as g
from envs.vec420 import CODE_TO_HAND

N_HANDS = len(g.HANDS)


class Hand420Features(BaseFeaturesExtractor):
    def __init__(self, observation_space: gym.spaces.Box):
        super().__init__(observation_space, features_dim=2 * N_HANDS)
        self.register_buffer("code_to_hand", torch.as_tensor(CODE_TO_HAND.clip(min=0)), persistent=False)
        self.register_buffer("powers", torch.tensor([216, 36, 6, 1]), persistent=False)

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        dice = obs.long().clamp(1, 6) - 1
        own = self.code_to_hand[(dice[:, :4] * self.powers).sum(dim=1)]
        opp = self.code_to_hand[(dice[:, 4:] * self.powers).sum(dim=1)]
        eye = torch.eye(N_HANDS, device=obs.device)
        return torch.cat([eye[own], eye[opp]], dim=1)


# Names a checkpoint may use for its feature extractor; loading looks them up here
# and nowhere else, so a checkpoint cannot name arbitrary code.
FEATURE_EXTRACTORS = {"Hand420Features": Hand420Features}
