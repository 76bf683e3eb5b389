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




class HandIndex420(BaseFeaturesExtractor):
    """The two hand indices (own, opponent) of a 420 observation, as floats."""

    def __init__(self, observation_space: gym.spaces.Box):
        super().__init__(observation_space, features_dim=2)
        self.register_buffer("code_to_hand", torch.as_tensor(CODE_TO_HAND.clip(min=0)), persistent=False)
        self.register_buffer("powers", torch.tensor([216, 36, 6, 1]), persistent=False)

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        dice = obs.long().clamp(1, 6) - 1
        own = self.code_to_hand[(dice[:, :4] * self.powers).sum(dim=1)]
        opp = self.code_to_hand[(dice[:, 4:] * self.powers).sum(dim=1)]
        return torch.stack([own, opp], dim=1).float()


class KeepScorer420(torch.nn.Module):
    """Actor: one score per keep for each opponent hand (a 126 x 14 table, via a
    one-hot latent and SB3's linear action head).  The value of keeping some dice
    does not depend on the dice thrown away, so with the legal-action mask this
    class holds the optimal policy against any opponent, and what is learnt from
    one hand is learnt for every hand that holds the same keep.
    Critic: a hidden layer over both hands (embedding sum), then ``critic_hidden``."""

    def __init__(self, critic_dim: int = 256, critic_hidden: int = 64):
        super().__init__()
        self.latent_dim_pi = N_HANDS
        self.latent_dim_vf = critic_hidden
        self.register_buffer("eye", torch.eye(N_HANDS), persistent=False)
        self.own = torch.nn.Embedding(N_HANDS, critic_dim)
        self.opp = torch.nn.Embedding(N_HANDS, critic_dim)
        self.bias = torch.nn.Parameter(torch.zeros(critic_dim))
        for table in (self.own, self.opp):
            torch.nn.init.normal_(table.weight, std=0.5)
        self.critic = torch.nn.Sequential(torch.nn.Linear(critic_dim, critic_hidden), torch.nn.Tanh())

    def forward(self, features: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return self.forward_actor(features), self.forward_critic(features)

    def forward_actor(self, features: torch.Tensor) -> torch.Tensor:
        return self.eye[features[:, 1].long()]

    def forward_critic(self, features: torch.Tensor) -> torch.Tensor:
        idx = features.long()
        return self.critic(torch.tanh(self.own(idx[:, 0]) + self.opp(idx[:, 1]) + self.bias))


class Keep420Policy(MaskableActorCriticPolicy):
    """MaskablePPO policy with the ``KeepScorer420`` actor-critic (see there)."""

    def __init__(self, *args, critic_dim: int = 256, critic_hidden: int = 64, **kwargs):
        self.critic_dim, self.critic_hidden = critic_dim, critic_hidden
        kwargs["features_extractor_class"] = HandIndex420
        super().__init__(*args, **kwargs)

    def _build_mlp_extractor(self) -> None:
        self.mlp_extractor = KeepScorer420(self.critic_dim, self.critic_hidden)


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
FEATURE_EXTRACTORS = {"Hand420Features": Hand420Features, "HandIndex420": HandIndex420, "OneHotInts": OneHotInts}
POLICY_CLASSES = {"MlpPolicy": MaskableActorCriticPolicy, "Keep420Policy": Keep420Policy}
