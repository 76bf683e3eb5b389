"""How a Pig decision is shown to an agent: the observation and the action mask.

numpy only.  Observation: ``n_players + 1`` integers, the mover's own score,
the turn total, then every other seat's score clockwise from the mover
(two players: ``[own, turn total, opponent]``).  Mask: two booleans over
``ROLL = 0, HOLD = 1`` (OpenSpiel's order); both are true at every decision,
all false once the game is over.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from games.pig import game as g

OWN, TURN, OPP = 0, 1, 2  # entries of a two-player observation


def obs_size(n_players: int = 2) -> int:
    return n_players + 1


def space_bounds(
    n_players: int = 2, goal: int = g.DEFAULT_GOAL, faces: int = g.DEFAULT_FACES
) -> tuple[int, int, tuple[int, ...]]:
    """(low, high, shape) of the observation ``Box``.  The highest value is the
    winner's final score: at most goal - 1 before the winning roll, plus ``faces``."""
    n_players, goal, faces = g.check_options(n_players, goal, faces)
    return 0, goal - 1 + faces, (obs_size(n_players),)


def seats_from(seat: int, n_players: int) -> list[int]:
    """The seats in observation order: ``seat``, then the others clockwise."""
    return [(seat + i) % n_players for i in range(n_players)]


def encode(own: int, turn_total: int, *others: int) -> np.ndarray:
    return np.array([own, turn_total, *others], dtype=np.int64)


def observe(game: g.PigGame, seat: int) -> np.ndarray:
    """What ``seat`` sees: its score, the turn total if it is the mover's (else 0),
    then the others' scores clockwise."""
    own, *others = (game.scores[s] for s in seats_from(seat, game.n_players))
    turn = game.turn_total if seat == game.current_player else 0
    return encode(own, turn, *others)


def legal_mask(actions: Sequence[int]) -> np.ndarray:
    """The mask of a list of legal actions (e.g. ``game.legal_actions()``)."""
    mask = np.zeros(g.N_ACTIONS, dtype=bool)
    mask[list(actions)] = True
    return mask


def mask(game: g.PigGame) -> np.ndarray:
    """The legal actions of the player to move now (all False once the game is over)."""
    return legal_mask(game.legal_actions())
