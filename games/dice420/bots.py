"""Heuristic and exact bots for 420.  Each reads the two hands from its
observation (see ``games.dice420.codec``) and answers a keep index."""

from __future__ import annotations

import numpy as np

from games.dice420 import solver as solver420
from agents.base import DeterministicAgent
from games.dice420 import codec as codec420
from games.dice420 import game as g

# P(the new hand totals 20 | keep k): the chance a keep makes 20 on this roll.
P_TWENTY_NOW = solver420.T @ solver420.WIN
# P(the new hand goes over 20 | keep k).
P_OVER_NOW = solver420.T @ (solver420.TOTAL > g.TARGET)


class GreedyAgent(DeterministicAgent):
    """Maximises the chance of making 20 on this roll (ties: the keep less likely
    to go over 20, then the one that keeps more dice)."""

    name = "greedy"
    own_hand = True  # keeps by its own hand alone (reply420 checks it at probe tables only)

    def act(self, obs: np.ndarray, action_mask: np.ndarray) -> int:
        legal = np.flatnonzero(action_mask)
        return int(max(legal, key=lambda a: (P_TWENTY_NOW[a], -P_OVER_NOW[a], len(g.KEEPS[a]))))


class FoundationAgent(DeterministicAgent):
    """The strategy Mark Steere's rules of 420 suggest: keep a foundation of three
    dice totalling 15-19 and reroll the fourth; with no foundation, keep the best
    start toward one.

    Our reading of the rules' advice: the "ideal hand" has a foundation of 15 or more and one
    die to reroll; a foundation of 20 or more could never make 20 with one die,
    so it is 15-19.  Of several foundations the highest is kept.  Without one, the
    bot keeps the highest legal pair (two dice totalling 10 or more), else a 5
    or 6, else rerolls all four.  It ignores the opponent's hand.
    """

    name = "foundation"
    own_hand = True  # keeps by its own hand alone (reply420 checks it at probe tables only)

    def act(self, obs: np.ndarray, action_mask: np.ndarray) -> int:
        legal = [a for a in np.flatnonzero(action_mask)]
        for size, fits in ((3, lambda s: 15 <= s <= 19), (2, lambda s: s >= 10), (1, lambda s: s >= 5)):
            options = [a for a in legal if len(g.KEEPS[a]) == size and fits(sum(g.KEEPS[a]))]
            if options:
                return int(max(options, key=lambda a: (sum(g.KEEPS[a]), g.KEEPS[a])))
        return g.REROLL_ALL


class OptimalAgent(DeterministicAgent):
    """Exactly optimal play: the keep with the highest exact chance to win,
    from the solved game (``games.dice420.solver``)."""

    name = "optimal"
    own_hand = True  # keeps by its own hand alone (reply420 checks it at probe tables only)

    def __init__(self):
        self.solution = solver420.solve()

    def act(self, obs: np.ndarray, action_mask: np.ndarray) -> int:
        own, *others = codec420.decode(obs)
        # With more than two players: play the two-player optimum against the
        # opponent most likely to make 20 first (a heuristic, not an exact reply).
        rivals = [g.HAND_INDEX[o] for o in others if o is not None]
        if not rivals:
            return g.REROLL_ALL if action_mask[g.REROLL_ALL] else int(np.flatnonzero(action_mask)[0])
        me = g.HAND_INDEX[own]
        rival = max(rivals, key=lambda o: self.solution.value[o, me])
        q = np.where(action_mask, self.solution.q[:, rival], -np.inf)
        return int(np.argmax(q))

    def exact_table(self) -> np.ndarray:
        """The two-player policy table (``solver420.policy_table`` reads it from here)."""
        return self.solution.policy_table()
