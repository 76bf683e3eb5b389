"""The one small protocol every player follows: bots, the solver, trained policies.

An agent is asked to move with the observation its seat sees and the legal-action
mask, and answers with an action index: ``act(obs, action_mask) -> int``.  It sees
only what a player at the table sees.  An agent that draws random numbers also
has ``reseed(seed)``, which envs call at ``reset(seed=...)`` so that the same seed
gives the same game.  ``action_probs`` gives the whole
distribution over actions for a batch of decisions; exact evaluation uses it to
turn any agent into a policy table.  A deterministic agent may also have
``actions(obs, masks)``, its one action at each row of a batch, which exact
evaluation prefers at millions of decisions (no table of probabilities).
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np

from core.dice import sample_rows


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


class BatchedAgent(DeterministicAgent):
    """A deterministic agent that answers a whole batch at once, ``actions(obs, masks)``;
    its ``action_probs`` are their one-hot rows."""

    def actions(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def action_probs(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        probs = np.zeros(np.shape(masks))
        probs[np.arange(len(probs)), self.actions(obs, masks)] = 1.0
        return probs


class RandomAgent:
    """Plays a uniformly random legal action (from its own seeded generator)."""

    name = "random"
    own_hand = True  # its moves depend on the legal ones only

    def __init__(self, seed: int | None = None):
        self.rng = np.random.default_rng(seed)

    def reseed(self, seed: int | None) -> None:
        """Start the agent's own random stream anew (envs call it at ``reset(seed=...)``)."""
        self.rng = np.random.default_rng(seed)

    def act(self, obs: np.ndarray, action_mask: np.ndarray) -> int:
        return int(self.rng.choice(np.flatnonzero(action_mask)))

    def action_probs(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        masks = masks.astype(float)
        return masks / masks.sum(axis=1, keepdims=True)

    def __repr__(self) -> str:
        return "<RandomAgent 'random'>"


def pp(diff: float) -> float:
    """A difference of probabilities in percentage points; below the solvers' precision
    (1e-12) it is 0, and never prints as -0.0000."""
    return 0.0 if abs(diff) < 1e-12 else 100.0 * diff


# Probability an agent may put on illegal actions and still be read (float32 softmax noise).
ILLEGAL_TOL = 1e-6


def agent_name(agent) -> str:
    return str(getattr(agent, "name", type(agent).__name__))


def batch_probs(agent, obs: np.ndarray, masks: np.ndarray, where=lambda i: f"decision {i}") -> np.ndarray:
    """The agent's action distribution at each of a batch of decisions, checked.

    Uses ``agent.action_probs`` in one call when the agent has it, else ``agent.act``
    per decision (one-hot).  Raises ``ValueError`` on a wrong shape, on
    probabilities that are negative or not finite, or on more than a rounding
    error on an illegal action (``where(i)`` words the decision for the
    message); rounding-level illegal mass is dropped and the rows renormalised.
    """
    n, n_actions = masks.shape
    if hasattr(agent, "action_probs"):
        probs = np.array(agent.action_probs(obs.copy(), masks.copy()), dtype=np.float64)
        if probs.shape != (n, n_actions):
            raise ValueError(
                f"{agent_name(agent)}.action_probs returned shape {probs.shape}, expected {(n, n_actions)}"
            )
    elif hasattr(agent, "act"):
        probs = np.zeros((n, n_actions))
        for i in range(n):
            probs[i, int(agent.act(obs[i].copy(), masks[i].copy()))] = 1.0
    else:
        raise TypeError(f"{agent!r} is not an agent: it has neither action_probs nor act")
    if not np.all(np.isfinite(probs)) or np.any(probs < -ILLEGAL_TOL):
        raise ValueError(f"{agent_name(agent)} gave probabilities that are negative or not finite")
    probs = np.clip(probs, 0.0, None)
    illegal = np.where(masks, 0.0, probs).sum(axis=1)
    worst = int(np.argmax(illegal)) if n else 0
    if n and illegal[worst] > ILLEGAL_TOL:
        raise ValueError(
            f"{agent_name(agent)} puts probability {illegal[worst]:.3g} on illegal actions at {where(worst)}"
        )
    probs = np.where(masks, probs, 0.0)
    totals = probs.sum(axis=1, keepdims=True)
    if np.any(totals <= 0):
        raise ValueError(f"{agent_name(agent)} gave a row with no probability on any legal action")
    return probs / totals


def batch_actions(agent, obs: np.ndarray, masks: np.ndarray, where=lambda i: f"decision {i}") -> np.ndarray | None:
    """The one action a deterministic agent plays at each of a batch of decisions, from its
    batched ``actions(obs, masks)`` (no probability table: what exact evaluation of a
    network at millions of decisions asks), checked for shape and legality; ``None`` for
    an agent without ``actions`` (ask ``batch_probs`` instead)."""
    if not hasattr(agent, "actions"):
        return None
    n = len(masks)
    acts = np.asarray(agent.actions(obs.copy(), masks.copy()))
    if acts.shape != (n,) or not np.issubdtype(acts.dtype, np.integer):
        raise ValueError(f"{agent_name(agent)}.actions returned {acts.dtype} shape {acts.shape}, expected {n} integers")
    bad = np.flatnonzero((acts < 0) | (acts >= masks.shape[1]))
    if not len(bad):
        bad = np.flatnonzero(~masks[np.arange(n), acts])
    if len(bad):
        raise ValueError(f"{agent_name(agent)} plays the illegal action {int(acts[bad[0]])} at {where(int(bad[0]))}")
    return acts.astype(np.int64)


class BatchPolicy:
    """An agent as a *batch policy* for the batched envs that ask other seats live
    (``games.dice421.vecn``): ``policy(obs, masks, rng) -> actions``, one action per row.

    Rows are answered through ``batch_probs`` (checked as exact evaluation checks them);
    a ``DeterministicAgent`` plays its one action, any other agent an action drawn from
    its probabilities with the env's ``rng``, so the same seed plays the same games."""

    def __init__(self, agent):
        self.agent = agent
        self.name = agent_name(agent)
        self.deterministic = isinstance(agent, DeterministicAgent)

    def __call__(self, obs: np.ndarray, masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        probs = batch_probs(self.agent, obs, masks)
        if self.deterministic:
            return probs.argmax(axis=1)
        return sample_rows(probs, rng)

    def __repr__(self) -> str:
        return f"<BatchPolicy {self.name!r}>"
