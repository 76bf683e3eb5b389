"""A stationary two-player 421 policy as a table of action probabilities.

The form in which a 421 policy is evaluated exactly (``games.dice421.solver``) and
played at speed by the batched env (``games.dice421.vec``): numpy only, so the env
takes a ready table and never needs the agents layer.  ``games.dice421.solver``
turns any agent into one (``policy_table``, ``as_policy``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from games.dice421 import codec as codec421
from games.dice421 import game as g

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
        """Raise ``ValueError`` (one line, naming the first bad decision state) unless the
        pot is a whole number >= 1, both tables are real-valued numpy arrays of the right
        shape, and in every decision state (``t`` in 1..pot-1) the row is finite,
        non-negative, puts no probability on an illegal action and sums to 1."""
        p = self.pot
        if isinstance(p, (bool, np.bool_)) or not isinstance(p, (int, np.integer)) or p < 1:
            raise ValueError(f"a policy's pot is a whole number of tokens >= 1, got {p!r}")
        p = int(p)
        tables = (
            ("leader", self.leader, (p + 1, 2, N_HANDS, N_ACTIONS), LEADER_LEGAL),
            ("follower", self.follower, (p + 1, 3, N_HANDS, N_HANDS, N_ACTIONS), FOLLOWER_LEGAL),
        )
        for name, table, shape, _legal in tables:
            if not isinstance(table, np.ndarray):
                raise ValueError(f"the {name} table must be a numpy array of shape {shape}, got {type(table).__name__}")
            if table.shape != shape:
                raise ValueError(f"{name} table must be {shape}, got {table.shape}")
            if table.dtype.kind not in "biuf":
                raise ValueError(f"the {name} table holds probabilities (real numbers), got dtype {table.dtype}")
        for name, table, _shape, legal in tables:
            rows = table[1:p].astype(np.float64, copy=False)
            finite = np.isfinite(rows).all(-1)
            problems = (
                ("has a non-finite entry (NaN or infinite)", ~finite),
                ("has a negative entry (policy tables hold probabilities)", (rows < 0).any(-1)),
                ("puts probability on an illegal action", ((rows != 0) & ~legal).any(-1)),
                ("does not sum to 1", finite & ~np.isclose(rows.sum(-1), 1.0)),
            )
            for why, bad in problems:
                where = np.argwhere(bad)
                if len(where):
                    raise ValueError(
                        f"policy table {self.name!r}: the {name} row for {_state(name, where[0])} {why} "
                        f"({len(where)} such states): {_row_text(rows[tuple(where[0])])}"
                    )

    @staticmethod
    def from_actions(
        pot: int, leader_actions: np.ndarray, follower_actions: np.ndarray, name: str = "policy"
    ) -> "Policy421":
        """One-hot tables from action arrays (pot + 1, 2, 56) and (pot + 1, 3, 56, 56)."""
        lead = np.zeros(leader_actions.shape + (N_ACTIONS,))
        np.put_along_axis(lead, leader_actions[..., None], 1.0, axis=-1)
        foll = np.zeros(follower_actions.shape + (N_ACTIONS,))
        np.put_along_axis(foll, follower_actions[..., None], 1.0, axis=-1)
        lead[[0, pot]] = foll[[0, pot]] = 0.0
        return Policy421(pot, lead, foll, name)


def _state(table: str, index) -> str:
    """A decision state of a ``Policy421`` table in words (``index`` into its rows 1..pot-1)."""
    t, *rest = (int(i) for i in index)
    if table == "leader":
        r, h = rest
        return f"tokens {t + 1}, after roll {r + 1}, hand {g.hand_str(g.HANDS[h])}"
    d, L, h = rest
    n, r = FOLLOWER_DECISIONS[d]
    return (
        f"tokens {t + 1}, following a leader who stopped on {g.hand_str(g.HANDS[L])} (roll {r} of {n}), "
        f"hand {g.hand_str(g.HANDS[h])}"
    )


def _row_text(row: np.ndarray) -> str:
    """The non-zero entries of a row, as ``action=probability``."""
    entries = [f"{a}={row[a]:.6g}" for a in np.flatnonzero(row != 0)]
    return "{" + ", ".join(entries) + "}" if entries else "all zeros"
