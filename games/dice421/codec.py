"""How a 421 decision is shown to an agent: the observation and the action mask.

Shared by the Gymnasium env, the bots and (later) the terminal game and a batched
env, so that every agent sees a decision the same way.  numpy only, no gymnasium.

The observation is a flat vector of ``OBS_SIZE`` (= 25) integers, always sized for
three players so that one policy can play two- and three-player games.  Seats are
*relative*: slot 0 of the other players is the next seat clockwise from the
observer, slot 1 the one after (all zeros in a two-player game).

| index  | field          | meaning                                                        |
|--------|----------------|----------------------------------------------------------------|
| 0-2    | hand           | own dice, high to low (``4 2 1``); 0 0 0 when not rolling now   |
| 3      | rolls_used     | rolls made in this turn (0 when not rolling now)                |
| 4      | rolls_allowed  | 3 for the leader, n for a follower (0 when not rolling now)     |
| 5      | is_leader      | 1 if the observer leads this round                              |
| 6      | leader_rolls   | n, the rolls the leader used; 0 while the leader is still on     |
| 7-13   | other slot 0   | played, hand (3 dice high to low, 0s if not played), tokens,    |
|        |                | in_game, is_leader                                              |
| 14-20  | other slot 1   | the same for the seat after it (all 0 with two players)         |
| 21     | tokens         | own tokens                                                      |
| 22     | pot            | tokens left in the pot (0 once the discharge has begun)         |
| 23     | phase          | 0 charge, 1 discharge, 2 over                                   |
| 24     | n_players      | 2 or 3                                                          |

"played" means the player has finished its turn in the discharge round now being
played; "in_game" is 0 once the player has left with no tokens (a winner).  The
leader's roll count ``n`` binds every follower (H4); it also reads as
``rolls_allowed`` of a follower.  The mask is ``N_ACTIONS`` (= 29) booleans over
the engine's actions (0 = STOP, 1..28 = ``KEEPS``), true where the engine allows it.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from itertools import product
from typing import Iterable, Optional, Sequence

import numpy as np

from games.dice421 import game as g

MAX_PLAYERS = 3
OTHER_SLOT_SIZE = 7
HAND, ROLLS_USED, ROLLS_ALLOWED, IS_LEADER, LEADER_ROLLS = slice(0, 3), 3, 4, 5, 6
OTHERS_START = 7
TOKENS = OTHERS_START + (MAX_PLAYERS - 1) * OTHER_SLOT_SIZE  # 21
POT, PHASE, N_PLAYERS = TOKENS + 1, TOKENS + 2, TOKENS + 3
OBS_SIZE = TOKENS + 4
assert OBS_SIZE == 25

# Offsets inside an other-player slot.
O_PLAYED, O_HAND, O_TOKENS, O_IN_GAME, O_IS_LEADER = 0, slice(1, 4), 4, 5, 6

PHASES = (g.CHARGE, g.DISCHARGE, g.OVER)
PHASE_CODE = {phase: code for code, phase in enumerate(PHASES)}

# MASKS[is_leader, hand_rank]: the legal actions at a decision with that hand.
# (At a decision the leader has made 1 or 2 rolls, so STOP is legal exactly for it.)
MASKS = np.zeros((2, len(g.HANDS), g.N_ACTIONS), dtype=bool)
for _rank, _hand in enumerate(g.HANDS):
    for _keep_index, _keep in enumerate(g.KEEPS):
        if g._is_sub_multiset(_keep, _hand):
            MASKS[:, _rank, 1 + _keep_index] = True
MASKS[1, :, g.STOP] = True

# KEEP_TRANSITIONS[k, h]: P(the new hand is HANDS[h] | keep KEEPS[k], reroll the other dice),
# by enumerating every roll of the rerolled dice.
KEEP_TRANSITIONS = np.zeros((len(g.KEEPS), len(g.HANDS)))
for _k, _keep in enumerate(g.KEEPS):
    _outcomes = list(product(range(1, 7), repeat=3 - len(_keep)))
    for _rolled in _outcomes:
        KEEP_TRANSITIONS[_k, g.hand_rank(_keep + _rolled)] += 1.0 / len(_outcomes)


# --- the chance of a game (no decisions; the exact solver and the batched env share it) ---
FIRST_ROLL = KEEP_TRANSITIONS[g.KEEPS.index(())]  # P(each hand) when all three dice are rolled
HAND_VALUES = np.array([g.hand_value(h) for h in g.HANDS], dtype=np.int64)  # tokens each hand is worth
# RANK_OF_DICE[a, b, c]: g.hand_rank of the dice a, b, c in any order; -1 where a die is not
# in 1..6 (0 is "no hand" in an observation; 7 holds a die clipped from above)
RANK_OF_DICE = np.full((8, 8, 8), -1, dtype=np.int64)
for _dice in product(range(1, 7), repeat=3):
    RANK_OF_DICE[_dice] = g.hand_rank(_dice)


def rampo_first_loses() -> float:
    """P(the player rolling first in a RAMPO ends up losing it), repeats included.

    One RAMPO roll each: the first roller loses with q, ties with s; on a tie the
    order flips (the tie maker, who rolled later, rolls first), so a = q + s (1 - a).
    """
    first_lower = float(FIRST_ROLL @ np.triu(np.ones((len(g.HANDS), len(g.HANDS))), 1) @ FIRST_ROLL)
    tie = float(FIRST_ROLL @ FIRST_ROLL)
    return (first_lower + tie) / (1.0 + tie)


RAMPO_FIRST_LOSES = rampo_first_loses()


@lru_cache(maxsize=64)
def charge_outcomes(pot: int) -> np.ndarray:
    """C[who, x]: P(the charge ends with the last taker holding x tokens), ``who`` = 0
    if the last taker is the game's first player, 1 if the second (H2, H3, H6, H7)."""
    P = pot
    # One charge round: the first player rolls, then the second.
    rank_lt = np.arange(len(g.HANDS))[:, None] < np.arange(len(g.HANDS))[None, :]
    joint = np.outer(FIRST_ROLL, FIRST_ROLL)  # [first's hand, second's hand]
    takes = np.zeros((2, 11))  # takes[who, due]
    for due in range(1, 11):
        takes[0, due] = joint[rank_lt & (HAND_VALUES[None, :] == due)].sum()  # first is lower
        takes[1, due] = joint[rank_lt.T & (HAND_VALUES[:, None] == due)].sum()  # second is lower
    tie = float(np.trace(joint))
    # RAMPO: the second player made the tie and rolls first.
    takes[1, 1] += tie * RAMPO_FIRST_LOSES
    takes[0, 1] += tie * (1.0 - RAMPO_FIRST_LOSES)
    # mass[r, f]: pot left r, first player holds f, (last taker not yet final)
    mass = np.zeros((P + 1, P + 1))
    mass[P, 0] = 1.0
    out = np.zeros((2, P + 1))
    for r in range(P, 0, -1):  # every round takes at least one token
        for f in range(0, P - r + 1):
            m = mass[r, f]
            if m == 0.0:
                continue
            s = P - r - f
            for who in (0, 1):
                for due in range(1, 11):
                    p = m * takes[who, due]
                    if p == 0.0:
                        continue
                    amount = min(due, r)
                    f2 = f + amount if who == 0 else f
                    if r == amount:
                        out[who, (f2 if who == 0 else s + amount)] += p
                    else:
                        mass[r - amount, f2] += p
    return out


def observation_bounds(pot: int = 15) -> tuple[np.ndarray, np.ndarray]:
    """(low, high) of every entry, for a ``Box``; tokens and the pot go up to ``pot``."""
    low = np.zeros(OBS_SIZE, dtype=np.int64)
    high = np.zeros(OBS_SIZE, dtype=np.int64)
    high[HAND] = 6
    high[[ROLLS_USED, ROLLS_ALLOWED, LEADER_ROLLS]] = g.MAX_ROLLS
    high[IS_LEADER] = 1
    for slot in range(MAX_PLAYERS - 1):
        base = OTHERS_START + slot * OTHER_SLOT_SIZE
        high[base + O_PLAYED] = high[base + O_IN_GAME] = high[base + O_IS_LEADER] = 1
        high[base + 1 : base + 4] = 6
        high[base + O_TOKENS] = pot
    high[[TOKENS, POT]] = pot
    high[PHASE] = len(PHASES) - 1
    high[N_PLAYERS] = MAX_PLAYERS
    return low, high


def space_bounds(n_players: int = 2, pot: int = 15) -> tuple[np.ndarray, np.ndarray, tuple[int, ...]]:
    """(low, high, shape) of the observation ``Box``: the same layout for 2 and 3 players."""
    low, high = observation_bounds(pot)
    return low, high, (OBS_SIZE,)


@dataclass(frozen=True)
class OtherPlayer:
    """What the observer sees of another seat."""

    played: bool
    hand: Optional[tuple[int, int, int]]  # the hand played this round, if played
    tokens: int
    in_game: bool
    is_leader: bool


@dataclass(frozen=True)
class Obs421:
    """A decoded observation (see the module docstring for the layout)."""

    hand: Optional[tuple[int, int, int]]
    rolls_used: int
    rolls_allowed: int
    is_leader: bool
    leader_rolls: int
    others: tuple[OtherPlayer, ...]  # clockwise from the observer; one per other seat
    tokens: int
    pot: int
    phase: str
    n_players: int

    def tokens_by_position(self) -> list[int]:
        """Tokens by relative position: 0 = the observer, 1 = next clockwise, ..."""
        return [self.tokens] + [o.tokens for o in self.others]

    def round_order(self) -> list[int]:
        """Relative positions of the players in this round, clockwise from the leader."""
        in_game = [True] + [o.in_game for o in self.others]
        leaders = [self.is_leader] + [o.is_leader for o in self.others]
        start = leaders.index(True) if any(leaders) else 0
        n = self.n_players
        return [p for p in ((start + i) % n for i in range(n)) if in_game[p]]

    def played_hands(self) -> list[tuple[int, tuple[int, int, int]]]:
        """(relative position, hand) of the players who have played this round, in order of play."""
        return [(p, self.others[p - 1].hand) for p in self.round_order() if p != 0 and self.others[p - 1].played]

    def rolls_left(self) -> int:
        return self.rolls_allowed - self.rolls_used


def _dice(hand: Optional[Iterable[int]]) -> list[int]:
    return list(g.canonical(hand)) if hand else [0, 0, 0]


def encode(
    hand: Optional[Sequence[int]],
    rolls_used: int,
    rolls_allowed: int,
    is_leader: bool,
    leader_rolls: int,
    others: Sequence[OtherPlayer],
    tokens: int,
    pot: int,
    phase: str,
    n_players: int,
) -> np.ndarray:
    obs = np.zeros(OBS_SIZE, dtype=np.int64)
    obs[HAND] = _dice(hand)
    obs[ROLLS_USED], obs[ROLLS_ALLOWED] = rolls_used, rolls_allowed
    obs[IS_LEADER], obs[LEADER_ROLLS] = int(is_leader), leader_rolls
    for slot, other in enumerate(others):
        base = OTHERS_START + slot * OTHER_SLOT_SIZE
        obs[base : base + OTHER_SLOT_SIZE] = [
            int(other.played),
            *_dice(other.hand),
            other.tokens,
            int(other.in_game),
            int(other.is_leader),
        ]
    obs[TOKENS], obs[POT], obs[PHASE], obs[N_PLAYERS] = tokens, pot, PHASE_CODE[phase], n_players
    return obs


def decode(obs: np.ndarray) -> Obs421:
    v = [int(x) for x in np.asarray(obs).reshape(-1)]
    n_players = v[N_PLAYERS]
    others = []
    for slot in range(n_players - 1):
        base = OTHERS_START + slot * OTHER_SLOT_SIZE
        played = bool(v[base + O_PLAYED])
        others.append(
            OtherPlayer(
                played=played,
                hand=tuple(v[base + 1 : base + 4]) if played else None,  # type: ignore[arg-type]
                tokens=v[base + O_TOKENS],
                in_game=bool(v[base + O_IN_GAME]),
                is_leader=bool(v[base + O_IS_LEADER]),
            )
        )
    hand = tuple(v[HAND])
    return Obs421(
        hand=hand if hand[0] else None,  # type: ignore[arg-type]
        rolls_used=v[ROLLS_USED],
        rolls_allowed=v[ROLLS_ALLOWED],
        is_leader=bool(v[IS_LEADER]),
        leader_rolls=v[LEADER_ROLLS],
        others=tuple(others),
        tokens=v[TOKENS],
        pot=v[POT],
        phase=PHASES[v[PHASE]],
        n_players=n_players,
    )


def observe(game: g.Game421, seat: int) -> np.ndarray:
    """What ``seat`` sees of ``game`` now (at its decision, or at any other moment)."""
    n = game.n_players
    rolling = game.current_player == seat
    played = {s: hand for s, hand, _ in game.hands_played}
    others = [
        OtherPlayer(
            played=s in played,
            hand=played.get(s),
            tokens=game.tokens[s],
            in_game=s not in game.winners,
            is_leader=game.leader == s,
        )
        for s in ((seat + i) % n for i in range(1, n))
    ]
    is_leader = game.leader == seat
    return encode(
        hand=game.dice_in_hand if rolling else None,
        rolls_used=game.rolls_used if rolling else 0,
        rolls_allowed=game.rolls_allowed if rolling else 0,
        is_leader=is_leader,
        leader_rolls=0 if is_leader or game.leader_rolls is None else game.leader_rolls,
        others=others,
        tokens=game.tokens[seat],
        pot=game.pot,
        phase=game.phase,
        n_players=n,
    )


def legal_mask(actions: Iterable[int]) -> np.ndarray:
    """The mask of a list of legal actions (e.g. ``game.legal_actions()``)."""
    mask = np.zeros(g.N_ACTIONS, dtype=bool)
    mask[list(actions)] = True
    return mask


def mask(game: g.Game421) -> np.ndarray:
    """The legal actions of the player to move now (all False once the game is over)."""
    return legal_mask(game.legal_actions())


def action_mask(hand: Sequence[int], is_leader: bool) -> np.ndarray:
    """The legal actions at a decision holding ``hand`` (a decision is always before roll 3)."""
    return MASKS[int(bool(is_leader)), g.hand_rank(hand)].copy()


def mask_of(obs: np.ndarray) -> np.ndarray:
    """The legal actions read from an observation at a decision (all False if there is none)."""
    o = np.asarray(obs).reshape(-1)
    if o[0] == 0 or o[ROLLS_USED] >= o[ROLLS_ALLOWED]:
        return np.zeros(g.N_ACTIONS, dtype=bool)
    return action_mask(o[HAND], bool(o[IS_LEADER]))
