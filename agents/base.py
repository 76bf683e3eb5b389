"""The one small protocol every player follows: bots, the solver, trained policies.

An agent is asked to move with the observation its seat sees and the legal-action
mask, and answers with an action index: ``act(obs, action_mask) -> int``.  It sees
only what a player at the table sees.  ``action_probs`` gives the whole
distribution over actions for a batch of decisions; exact evaluation uses it to
turn any agent into a policy table.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np


@runtime_checkable
class Agent(Protocol):
    name: str

    def act(self, obs: np.ndarray, action_mask: np.ndarray) -> int: ...


class DeterministicAgent:
    """Base for agents that pick one action per decision."""

    name = "agent"

    def act(self, obs: np.ndarray, action_mask: np.ndarray) -> int:
        raise NotImplementedError

    def action_probs(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """One-hot rows, one per observation in the batch."""
        probs = np.zeros(masks.shape)
        for i, (o, m) in enumerate(zip(obs, masks)):
            probs[i, self.act(o, m)] = 1.0
        return probs

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r}>"


class RandomAgent:
    """Plays a uniformly random legal action (from its own seeded generator)."""

    name = "random"

    def __init__(self, seed: int | None = None):
        self.rng = np.random.default_rng(seed)

    def act(self, obs: np.ndarray, action_mask: np.ndarray) -> int:
        return int(self.rng.choice(np.flatnonzero(action_mask)))

    def action_probs(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        masks = masks.astype(float)
        return masks / masks.sum(axis=1, keepdims=True)

    def __repr__(self) -> str:
        return "<RandomAgent 'random'>"
