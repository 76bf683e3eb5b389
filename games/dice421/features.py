"""421's feature extractor for trained policies (torch): the one-hot code plus each hand's rank."""

from __future__ import annotations

import gymnasium as gym
import torch

from agents.features import OneHotInts
from games.dice421 import codec as codec421
from games.dice421 import game as game421


class Rank421Features(OneHotInts):
    """``OneHotInts`` of a 421 observation, followed by the *rank* of each hand in
    it (the observer's and each other seat's) as a thermometer code: bit ``k`` is 1
    when the hand's rank is ``k`` or more (ranks 0 to 55, lowest first; all bits 0
    for no hand, so bit 0 says there is a hand).

    Who wins a round is decided by comparing ranks (R6), which the dice one by one
    show only through a long chain of interactions; a thermometer shows it
    directly.  Each rank's one-hot is the difference of two neighbouring bits, so a
    first layer sees every hand as its own row too."""

    def __init__(self, observation_space: gym.spaces.Box):
        c = codec421
        if tuple(observation_space.shape) != (c.OBS_SIZE,):
            raise ValueError(
                f"Rank421Features reads 421 observations ({c.OBS_SIZE} integers), not shape {observation_space.shape}"
            )
        super().__init__(observation_space)
        n_hands = len(game421.HANDS)
        starts = [c.HAND.start] + [
            c.OTHERS_START + slot * c.OTHER_SLOT_SIZE + c.O_HAND.start for slot in range(c.MAX_PLAYERS - 1)
        ]
        # rank_of[d1 * 64 + d2 * 8 + d3]: 1 + the rank of the dice d1 d2 d3, 0 for no hand
        self.register_buffer("rank_of", torch.as_tensor(codec421.RANK_OF_DICE.reshape(-1) + 1), persistent=False)
        self.register_buffer("hand_dice", torch.tensor([[s, s + 1, s + 2] for s in starts]), persistent=False)
        self.register_buffer("powers", torch.tensor([64, 8, 1]), persistent=False)
        # thermometer[r]: the code of rank r - 1 (r = 0: no hand)
        self.register_buffer(
            "thermometer",
            (torch.arange(n_hands)[None, :] < torch.arange(n_hands + 1)[:, None]).float(),
            persistent=False,
        )
        self._features_dim = self.features_dim + len(starts) * n_hands

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        dice = obs.long()[:, self.hand_dice].clamp(0, 7)  # (rows, hands, 3); out of 1..6: no hand
        ranks = self.rank_of[(dice * self.powers).sum(dim=-1)]  # (rows, hands)
        return torch.cat([super().forward(obs), self.thermometer[ranks].reshape(len(obs), -1)], dim=1)
