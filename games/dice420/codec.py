"""How a 420 decision is shown to an agent: the observation and the action mask.

Shared by the Gymnasium env, the batched env, the PettingZoo env, the bots and
the terminal game, so that every agent sees a decision the same way.  numpy
only, no gymnasium.

Observation: four integers per player, the mover's hand first, then every other
seat's clockwise from the mover; each hand's dice *ascending*, 1..6 (the engine
writes hands high to low; observations keep the ascending layout the shipped
policies were trained on).  Two players: ``[1 5 6 6 2 3 3 4]`` (8 integers,
every die 1..6).  More players: ``4 * n_players`` integers, a player without a
hand (out of the game, or not rolled yet this round) shows 0 0 0 0.  With two
players a hand not rolled yet (Blue's, when Red's first roll won) shows 1 1 1 1,
so the two-player space stays ``Box(1, 6, (8,))``.

Mask: 14 booleans over ``KEEPS``, true where the keep is legal (R2-R4).
"""

from __future__ import annotations

from typing import Optional, Sequence

import numpy as np

from games.dice420 import game as g

OBS_SIZE = 2 * g.N_DICE  # two players
N = g.N_DICE

# LEGAL_MASKS[i]: the action mask of HANDS[i]; computed from the rules once.
LEGAL_MASKS = np.zeros((len(g.HANDS), g.N_ACTIONS), dtype=bool)
for _i, _hand in enumerate(g.HANDS):
    LEGAL_MASKS[_i, g.legal_keeps(_hand)] = True

# HAND_DICE[i]: the dice of HANDS[i] ascending, as an observation shows them.
HAND_DICE = np.sort(np.array(g.HANDS, dtype=np.int64), axis=1)
# Base-6 code of a hand's ascending dice (``(dice - 1) @ POWERS``) -> hand index; -1 elsewhere.
POWERS = 6 ** np.arange(N - 1, -1, -1)
CODE_TO_HAND = np.full(6**N, -1, dtype=np.int64)
CODE_TO_HAND[(HAND_DICE - 1) @ POWERS] = np.arange(len(g.HANDS))


def obs_size(n_players: int = 2) -> int:
    return N * n_players


def observation_bounds(n_players: int = 2) -> tuple[int, int]:
    """(low, high) of every entry: 1..6 with two players, 0..6 with more (0 = no hand)."""
    return (1 if n_players == 2 else 0), 6


def space_bounds(n_players: int = 2) -> tuple[int, int, tuple[int, ...]]:
    """(low, high, shape) of the observation ``Box`` at a table of ``n_players``."""
    low, high = observation_bounds(n_players)
    return low, high, (obs_size(n_players),)


def _dice(hand: Optional[Sequence[int]], fill: int) -> list[int]:
    return sorted(hand) if hand is not None else [fill] * N


def encode(own: Sequence[int], *others: Optional[Sequence[int]]) -> np.ndarray:
    """The observation of a mover holding ``own`` with the ``others``' hands clockwise."""
    fill = 1 if len(others) == 1 else 0
    return np.array([d for hand in (own, *others) for d in _dice(hand, fill)], dtype=np.int64)


def decode(obs: np.ndarray) -> tuple[g.Hand, ...]:
    """The hands in an observation (mover first; None where a player has no hand)."""
    values = [int(v) for v in np.asarray(obs).reshape(-1)]
    hands = [values[i : i + N] for i in range(0, len(values), N)]
    return tuple(g.canonical(h) if 0 not in h else None for h in hands)  # type: ignore[return-value]


def action_mask(hand: Sequence[int]) -> np.ndarray:
    return LEGAL_MASKS[g.HAND_INDEX[g.canonical(hand)]].copy()


def legal_mask(actions: Sequence[int]) -> np.ndarray:
    """The mask of a list of legal actions (e.g. ``game.legal_actions()``)."""
    mask = np.zeros(g.N_ACTIONS, dtype=bool)
    mask[list(actions)] = True
    return mask


def mask(game: g.Game420) -> np.ndarray:
    """The legal actions of the player to move now (all False once the game is over)."""
    if game.is_over:
        return np.zeros(g.N_ACTIONS, dtype=bool)
    hand = game.hands[game.current_player]
    return LEGAL_MASKS[g.HAND_INDEX[hand]].copy() if hand is not None else legal_mask([g.REROLL_ALL])


def seats_from(seat: int, n_players: int) -> list[int]:
    """The seats in observation order: ``seat``, then the others clockwise."""
    return [(seat + i) % n_players for i in range(n_players)]


def observe(game: g.Game420, seat: int) -> np.ndarray:
    """What ``seat`` sees of ``game``: its hand, then the others' clockwise.

    Hands are emptied when a round ends (R7), so players out of the game show no hand.
    """
    return encode(*(game.hands[s] for s in seats_from(seat, game.n_players)))


def decision_states() -> list[tuple[int, int]]:
    """Every (own, opponent) pair of hand indices at which a player can be asked to move."""
    return [
        (h, o)
        for h, own in enumerate(g.HANDS)
        for o, opp in enumerate(g.HANDS)
        if not g.is_win(own) and not g.is_win(opp)
    ]
