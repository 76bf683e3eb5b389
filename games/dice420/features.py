"""420's feature extractors for trained policies (torch).

``Hand420Features`` reads a 420 observation (two sorted hands of four dice) as
the index of each hand among the 126 possible and looks up a learned embedding
for each: the sum is exactly a first dense layer over one-hot hand codes, at
the cost of two table lookups instead of a 252-wide matrix product.  A row per
hand is what lets PPO settle every close call exactly.

``Keep420Features`` with ``agents.features.SplitMlpPolicy`` builds one fact of
420 into the network: the hand after a keep depends only on the dice kept (R2),
so what a keep is worth depends on the kept dice and the other hand, never on
the dice thrown back.  The best keep is the legal keep of highest value, so the
policy's preference among keeps needs the other hand alone; the own hand
decides only which keeps are legal, and the action mask already says that.
The actor reads the other hand only, and every hand that can make a keep
shares what is learnt about it; the critic reads both hands.
"""

from __future__ import annotations

import gymnasium as gym
import torch
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor

from games.dice420 import game as g
from games.dice420.codec import CODE_TO_HAND

N_HANDS = len(g.HANDS)


class Hand420Features(BaseFeaturesExtractor):
    SETTINGS = ("features_dim",)  # what a checkpoint's features_extractor_kwargs may set

    def __init__(self, observation_space: gym.spaces.Box, features_dim: int = 128):
        if tuple(observation_space.shape) != (8,):
            raise ValueError(
                f"Hand420Features reads two-player 420 observations (8 dice), not shape {observation_space.shape}"
            )
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

    def joint(self, own: torch.Tensor, opp: torch.Tensor) -> torch.Tensor:
        """The features of both hands, from their indices."""
        return torch.tanh(self.own(own) + self.opp(opp) + self.bias)

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        return self.joint(self.hand_index(obs[:, :4]), self.hand_index(obs[:, 4:]))


class Keep420Features(Hand420Features):
    """Two halves of ``features_dim`` each: the actor's, from the other hand alone,
    then the critic's, from both hands (``Hand420Features``).  For ``SplitMlpPolicy``."""

    def __init__(self, observation_space: gym.spaces.Box, features_dim: int = 128):
        super().__init__(observation_space, features_dim=features_dim)
        self._features_dim = 2 * features_dim
        self.actor_opp = torch.nn.Embedding(N_HANDS, features_dim)
        self.actor_bias = torch.nn.Parameter(torch.zeros(features_dim))
        torch.nn.init.normal_(self.actor_opp.weight, std=0.5)

    def actor_table(self) -> torch.Tensor:
        """The actor's features of every other hand, row ``i`` for hand index ``i``."""
        return torch.tanh(self.actor_opp.weight + self.actor_bias)

    def halves(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(the other hand's index, the critic's features) of each observation: the
        actor's features of a row are ``actor_table()[index]``."""
        own, opp = self.hand_index(obs[:, :4]), self.hand_index(obs[:, 4:])
        return opp, self.joint(own, opp)

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        opp, critic = self.halves(obs)
        return torch.cat([self.actor_table()[opp], critic], dim=1)
