"""Feature extractors for trained policies (torch).

``Hand420Features`` reads a 420 observation (two sorted hands of four dice) as
the index of each hand among the 126 possible and looks up a learned embedding
for each: the sum is exactly a first dense layer over one-hot hand codes, at
the cost of two table lookups instead of a 252-wide matrix product.  A row per
hand is what lets PPO settle every close call exactly.
"""

from __future__ import annotations

import gymnasium as gym
import torch
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor

from envs import game420 as g
from envs.vec420 import CODE_TO_HAND

N_HANDS = len(g.HANDS)


class Hand420Features(BaseFeaturesExtractor):
    def __init__(self, observation_space: gym.spaces.Box, features_dim: int = 128):
        super().__init__(observation_space, features_dim=features_dim)
        self.register_buffer("code_to_hand", torch.as_tensor(CODE_TO_HAND.clip(min=0)), persistent=False)
        self.register_buffer("powers", torch.tensor([216, 36, 6, 1]), persistent=False)
        self.own = torch.nn.Embedding(N_HANDS, features_dim)
        self.opp = torch.nn.Embedding(N_HANDS, features_dim)
        self.bias = torch.nn.Parameter(torch.zeros(features_dim))
        for table in (self.own, self.opp):
            torch.nn.init.normal_(table.weight, std=0.5)

    def hand_index(self, dice: torch.Tensor) -> torch.Tensor:
        return self.code_to_hand[((dice.long().clamp(1, 6) - 1) * self.powers).sum(dim=1)]

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        own, opp = self.hand_index(obs[:, :4]), self.hand_index(obs[:, 4:])
        return torch.tanh(self.own(own) + self.opp(opp) + self.bias)




class OneHotInts(BaseFeaturesExtractor):
    """One-hot code of every component of an integer ``Box`` observation (each
    component ``i`` takes ``high[i] - low[i] + 1`` values), concatenated.  Suits
    observations of small counts and dice, like 421's."""

    def __init__(self, observation_space: gym.spaces.Box):
        low = torch.as_tensor(observation_space.low, dtype=torch.long).reshape(-1)
        sizes = torch.as_tensor(observation_space.high, dtype=torch.long).reshape(-1) - low + 1
        super().__init__(observation_space, features_dim=int(sizes.sum()))
        self.register_buffer("low", low, persistent=False)
        self.register_buffer("top", sizes - 1, persistent=False)
        self.register_buffer("offsets", torch.cumsum(sizes, 0) - sizes, persistent=False)

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        idx = torch.minimum((obs.long() - self.low).clamp(min=0), self.top) + self.offsets
        out = torch.zeros(obs.shape[0], self.features_dim, device=obs.device)
        return out.scatter_(1, idx, 1.0)


# Names a checkpoint may use for its network parts; loading looks them up here
# and nowhere else, so a checkpoint cannot name arbitrary code.
FEATURE_EXTRACTORS = {"Hand420Features": Hand420Features, "OneHotInts": OneHotInts}
POLICY_CLASSES = {"MlpPolicy": MaskableActorCriticPolicy}
