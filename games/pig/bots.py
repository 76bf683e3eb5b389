"""Pig's bots: hold at 20 (the classic rule of thumb) and the exactly optimal player.

``random`` is ``agents.base.RandomAgent``.  Both bots here are ``BatchedAgent``s:
they answer a whole batch of observations at once, which is how exact
evaluation (``solver.policy_table``) and the batched env ask them.
"""

from __future__ import annotations

import numpy as np

from agents.base import BatchedAgent
from games.pig import codec
from games.pig import game as g
from games.pig import solver


class Hold20Agent(BatchedAgent):
    """Roll until the turn total is at least ``threshold`` (20), then hold.  Reaching the
    goal needs no hold (P2), so the bot does not look at the scores at all."""

    name = "hold20"

    def __init__(self, threshold: int = 20):
        self.threshold = threshold

    def actions(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        obs, masks = np.asarray(obs), np.asarray(masks, dtype=bool)
        hold = (obs[:, codec.TURN] >= self.threshold) & masks[:, g.HOLD]
        return np.where(hold, g.HOLD, g.ROLL).astype(np.int64)

    def act(self, obs: np.ndarray, action_mask: np.ndarray) -> int:
        return g.HOLD if obs[codec.TURN] >= self.threshold and action_mask[g.HOLD] else g.ROLL


class OptimalPigAgent(BatchedAgent):
    """Exactly optimal two-player play: the solver's policy for the goal and faces it is
    built with (100 and 6 by name), looked up at (own score, opponent's score, turn total).
    It refuses other tables in one line (:meth:`check_table`)."""

    name = "optimal"

    def __init__(self, goal: int = g.DEFAULT_GOAL, faces: int = g.DEFAULT_FACES):
        self.solution = solver.solve(goal, faces)
        self.goal = goal

    def actions(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        obs, masks = np.asarray(obs, dtype=np.int64), np.asarray(masks, dtype=bool)
        own, turn = obs[:, codec.OWN], obs[:, codec.TURN]
        rival = obs[:, codec.OPP :].max(axis=1)
        live = (own + turn < self.goal) & (rival < self.goal) & (turn > 0)
        roll = np.ones(len(obs), dtype=bool)  # a turn total of 0 (or a finished game): roll
        roll[live] = self.solution.policy[own[live], rival[live], turn[live]] > 0.5
        roll &= masks[:, g.ROLL]
        return np.where(roll | ~masks[:, g.HOLD], g.ROLL, g.HOLD).astype(np.int64)

    def act(self, obs: np.ndarray, action_mask: np.ndarray) -> int:
        """One decision, without building a batch (the engine's game loop asks this)."""
        own, turn, rival = int(obs[codec.OWN]), int(obs[codec.TURN]), int(max(obs[codec.OPP :]))
        live = own + turn < self.goal and rival < self.goal and turn > 0
        roll = not live or self.solution.policy[own, rival, turn] > 0.5
        return g.ROLL if (roll and action_mask[g.ROLL]) or not action_mask[g.HOLD] else g.HOLD

    def check_table(self, n_players: int, goal: int = g.DEFAULT_GOAL, faces: int = g.DEFAULT_FACES, **_) -> None:
        """Raise ``ValueError`` (one line) unless this bot plays such a table: two players, and
        the goal and faces its policy was solved for."""
        if n_players != 2:
            raise ValueError(f"the optimal pig bot is made for two players only, not {n_players}")
        if (goal, faces) != (self.solution.goal, self.solution.faces):
            raise ValueError(
                f"the optimal pig bot is solved for goal {self.solution.goal} with "
                f"{self.solution.faces} faces, not goal {goal} with {faces} "
                "(evaluate --exact solves any goal up to 200)"
            )

    def exact_table(self, goal: int = g.DEFAULT_GOAL, faces: int = g.DEFAULT_FACES) -> np.ndarray:
        """The two-player policy table (``solver.policy_table`` reads it from here)."""
        if (goal, faces) != (self.solution.goal, self.solution.faces):
            return solver.solve(goal, faces).policy_table()
        return self.solution.policy_table()
