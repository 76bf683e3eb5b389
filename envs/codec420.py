"""How a 420 decision is shown to an agent: the observation and the action mask.

Shared by the Gymnasium env, the batched env, the bots and the terminal game, so
that every agent sees a decision the same way.  numpy only, no gymnasium.

Observation: eight integers, the mover's hand sorted ascending then the
opponent's hand sorted ascending, each die 1..6 (e.g. ``[1 5 6 6 2 3 3 4]``).
Mask: 14 booleans over ``KEEPS``, true where the keep is legal (R2-R4).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from envs import game420 as g

OBS_SIZE = 2 * g.N_DICE

# LEGAL_MASKS[i]: the action mask of HANDS[i]; computed from the rules once.
LEGAL_MASKS = np.zeros((len(g.HANDS), g.N_ACTIONS), dtype=bool)
for _i, _hand in enumerate(g.HANDS):
    LEGAL_MASKS[_i, g.legal_keeps(_hand)] = True


def encode(own: Sequence[int], opponent: Sequence[int]) -> np.ndarray:
    return np.array([*sorted(own), *sorted(opponent)], dtype=np.int64)


def decode(obs: np.ndarray) -> tuple[g.Hand, g.Hand]:
    """(own hand, opponent hand) from an observation."""
    values = [int(v) for v in np.asarray(obs).reshape(-1)]
    return g.canonical(values[: g.N_DICE]), g.canonical(values[g.N_DICE :])  # type: ignore[return-value]


def action_mask(hand: Sequence[int]) -> np.ndarray:
    return LEGAL_MASKS[g.HAND_INDEX[g.canonical(hand)]].copy()


def observe(game: g.Game420, seat: int) -> np.ndarray:
    """The observation of ``seat`` in a two-player game (both hands must be rolled)."""
    own, opp = game.hands[seat], game.hands[1 - seat]
    if own is None or opp is None:
        raise ValueError("both hands must have been rolled before a decision")
    return encode(own, opp)


def decision_states() -> list[tuple[int, int]]:
    """Every (own, opponent) pair of hand indices at which a player can be asked to move."""
    return [
        (h, o)
        for h, own in enumerate(g.HANDS)
        for o, opp in enumerate(g.HANDS)
        if not g.is_win(own) and not g.is_win(opp)
    ]
