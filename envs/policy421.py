"""A stationary two-player 421 policy as a table of action probabilities.

The form in which a 421 policy is evaluated exactly (``agents.solver421``) and
played at speed by the batched env (``envs.vec421``): numpy only, so the env
takes a ready table and never needs the agents layer.  ``agents.solver421``
turns any agent into one (``policy_table``, ``as_policy``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from envs import codec421
from envs import game421 as g

N_HANDS = len(g.HANDS)
N_ACTIONS = g.N_ACTIONS
LEADER_LEGAL = codec421.MASKS[1]  # (hand, action): STOP and the keeps the hand holds
FOLLOWER_LEGAL = codec421.MASKS[0]  # (hand, action): the keeps only
# Follower decisions: (rolls allowed n, rolls used r) with r < n.
FOLLOWER_DECISIONS = ((2, 1), (3, 1), (3, 2))
FOLLOWER_DECISION_INDEX = {nr: d for d, nr in enumerate(FOLLOWER_DECISIONS)}


@dataclass(frozen=True)
class Policy421:
    """A stationary two-player policy for pot ``pot``, as action probabilities.

    ``leader[t, r - 1, h, a]``: holding ``t`` tokens, leading, after roll ``r``
    (1 or 2) with hand ``HANDS[h]``.  ``follower[t, d, L, h, a]``: holding ``t``
    tokens, following a leader who stopped on ``HANDS[L]``, at decision
    ``FOLLOWER_DECISIONS[d]`` = (n, r) with hand ``HANDS[h]``.  Rows for ``t`` = 0
    or ``pot`` (no discharge round) are ignored.
    """

    pot: int
    leader: np.ndarray  # (pot + 1, 2, 56, 29)
    follower: np.ndarray  # (pot + 1, 3, 56, 56, 29)
    name: str = "policy"

    def check(self) -> None:
        """Shapes right, probability only on legal actions, rows summing to 1."""
        p = self.pot
        if self.leader.shape != (p + 1, 2, N_HANDS, N_ACTIONS):
            raise ValueError(f"leader table must be {(p + 1, 2, N_HANDS, N_ACTIONS)}, got {self.leader.shape}")
        if self.follower.shape != (p + 1, 3, N_HANDS, N_HANDS, N_ACTIONS):
            raise ValueError(
                f"follower table must be {(p + 1, 3, N_HANDS, N_HANDS, N_ACTIONS)}, got {self.follower.shape}"
            )
        lead, foll = self.leader[1:p], self.follower[1:p]
        if np.any(lead < 0) or np.any(foll < 0):
            raise ValueError("policy tables hold probabilities, found a negative entry")
        if not (np.allclose(lead.sum(-1), 1.0) and np.allclose(foll.sum(-1), 1.0)):
            raise ValueError("policy rows must sum to 1 in every decision state")
        if np.any(lead * ~LEADER_LEGAL > 0) or np.any(foll * ~FOLLOWER_LEGAL > 0):
            raise ValueError("policy table puts probability on an illegal action")

    @staticmethod
    def from_actions(pot: int, leader_actions: np.ndarray, follower_actions: np.ndarray,
                     name: str = "policy") -> "Policy421":
        """One-hot tables from action arrays (pot + 1, 2, 56) and (pot + 1, 3, 56, 56)."""
        lead = np.zeros(leader_actions.shape + (N_ACTIONS,))
        np.put_along_axis(lead, leader_actions[..., None], 1.0, axis=-1)
        foll = np.zeros(follower_actions.shape + (N_ACTIONS,))
        np.put_along_axis(foll, follower_actions[..., None], 1.0, axis=-1)
        lead[[0, pot]] = foll[[0, pot]] = 0.0
        return Policy421(pot, lead, foll, name)
