"""The coach: the exact win probability of every legal move at a two-player decision.

Both numbers come from the exact solvers, with both players playing optimally
from the position on (the bot at the table may play worse; the figures are
what the move is worth against best play):

* 420 (``games.dice420.solver``): ``solve().q[k, o]`` is the mover's chance to win
  by keeping ``KEEPS[k]`` against the opponent's hand ``o``; the position is
  worth ``solve().value[h, o]``, the best of them.
* 421 (``games.dice421.solver``): the solver's values ``W[t]`` of the leader holding
  ``t`` tokens give the value of every final pair of hands of a round
  (``_round_utility``); the backward expectimax of ``_play_round``, kept step by
  step here instead of only its maximum, gives the value of each action at each
  of the round's decisions: the leader after roll 1 or 2 (STOP or a keep) and the
  follower owing one or two more rolls.  The argmax of these values is the
  solver's own optimal action (``tests/test_web.py`` checks it).

A position is described by plain numbers (what the engine shows at the
decision), so a finished game's review can be computed again from its record.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Optional, Sequence

import numpy as np

from games.dice420 import game as g420
from games.dice421 import game as g421

# The 421 solver's time grows fast with the pot (pot 15: about 1 s, 30: about 5 s,
# 50: about 40 s): the coach (and the optimal 421 bot on the web) stop here.
MAX_COACH_POT = 30


@dataclass(frozen=True)
class MoveValue:
    action: int
    p: float  # the mover's exact chance to win after this move, both playing optimally on


# --------------------------------------------------------------------------- 420


def values420(hand: Sequence[int], opponent: Sequence[int]) -> tuple[float, list[MoveValue]]:
    """(the position's value, each legal keep's value) for the mover holding ``hand``
    against ``opponent`` in two-player 420."""
    from games.dice420 import solver as solver420

    sol = solver420.solve()
    h = g420.HAND_INDEX[g420.canonical(hand)]
    o = g420.HAND_INDEX[g420.canonical(opponent)]
    moves = [MoveValue(a, float(sol.q[a, o])) for a in g420.legal_keeps(g420.HANDS[h])]
    return float(sol.value[h, o]), moves


# --------------------------------------------------------------------------- 421


@dataclass(frozen=True)
class _Tables421:
    s1: np.ndarray  # [t-1, L]: leader stops on L after 1 roll (the follower then makes 1)
    s2: np.ndarray  # [t-1, L]: ... after 2 rolls
    s3: np.ndarray  # [t-1, L]: the leader ends on L after 3 rolls
    v2: np.ndarray  # [t-1, h]: the leader holding h after roll 2, playing best
    u: np.ndarray  # [t-1, L, F]: the round ends on L (leader) and F (follower)
    g_n2: np.ndarray  # [t-1, L, h]: a follower holding h owing one more roll, playing best


@lru_cache(maxsize=8)
def _tables421(pot: int) -> _Tables421:
    from games.dice421 import solver as s

    w = s.solve(pot).value  # W[t], indexed by tokens 0..pot
    u = s._round_utility(pot, w, w, w, w)
    s1 = u @ s.FIRST_ROLL
    g_n2, _ = s._follower_step(u, None, 0)
    s2 = g_n2 @ s.FIRST_ROLL
    g2_n3, _ = s._follower_step(g_n2, None, 1)
    s3 = g2_n3 @ s.FIRST_ROLL
    v2, _ = s._leader_step(s2, s3, None, 2)
    tables = _Tables421(s1, s2, s3, v2, u, g_n2)
    for a in (s1, s2, s3, v2, g_n2):
        a.setflags(write=False)
    return tables


def values421(pot: int, tokens: int, is_leader: bool, rolls_used: int, rolls_allowed: int,
              hand: Sequence[int], leader_hand: Optional[Sequence[int]] = None) -> tuple[float, list[MoveValue]]:
    """(the position's value, each legal action's value) for the mover in a two-player
    discharge round of 421 with ``pot`` tokens in all, holding ``tokens`` of them.

    ``leader_hand`` is the leader's final hand when the mover follows."""
    from games.dice421 import solver as s

    if not 1 <= tokens < pot:
        raise ValueError(f"a player in a discharge round holds 1..{pot - 1} tokens, got {tokens}")
    tab = _tables421(pot)
    h = g421.hand_rank(hand)
    keeps = [a for a in range(1, g421.N_ACTIONS) if _holds(hand, g421.keep_for_action(a))]
    T = s.T
    if is_leader:
        i = tokens - 1
        if rolls_used == 1:
            stop, after = tab.s1[i, h], tab.v2[i]
        elif rolls_used == 2:
            stop, after = tab.s2[i, h], tab.s3[i]
        else:
            raise ValueError(f"a leader decides after roll 1 or 2, not {rolls_used}")
        moves = [MoveValue(g421.STOP, float(stop))]
        moves += [MoveValue(a, float(after @ T[a - 1])) for a in keeps]
    else:
        if leader_hand is None:
            raise ValueError("a follower's position needs the leader's hand")
        i = pot - tokens - 1  # tables are by the leader's tokens
        L = g421.hand_rank(leader_hand)
        owed = rolls_allowed - rolls_used
        if owed == 1:
            after = tab.u[i, L]
        elif owed == 2:
            after = tab.g_n2[i, L]
        else:
            raise ValueError(f"a follower owes 1 or 2 more rolls at a decision, not {owed}")
        moves = [MoveValue(a, float(1.0 - after @ T[a - 1])) for a in keeps]
    return max(m.p for m in moves), moves


def _holds(hand: Sequence[int], keep: Sequence[int]) -> bool:
    rest = list(hand)
    for v in keep:
        if v not in rest:
            return False
        rest.remove(v)
    return True
