"""Exact analysis of two-player 421: the optimal policy, and the exact win
probability of any pair of stationary policies (charge phase included).

What is modelled (rules H1-H7 of games/dice421/rules.md, exactly as ``games.dice421.game``
plays two players; every rule comes from the engine: ``HANDS``/``hand_rank`` for
the order, ``hand_value`` for the tokens, ``KEEPS`` and ``codec421.MASKS`` for
the moves):

* **Charge (H2, H3, H6, H7).**  No decisions.  Each charge round the first
  player, then the second, rolls once; the lowest hand takes from the pot the
  value of the highest hand, capped by the pot; equal hands play RAMPO for one
  token.  ``charge_outcomes`` runs this as a forward DP over (pot left, first
  player's tokens) to the distribution of (last taker, last taker's tokens).
  Holding every token at the end loses; otherwise the last taker leads the first
  discharge round.  The first player is drawn uniformly.
* **RAMPO (H6).**  The tie maker (the later in the round's order) rolls first; on
  a new tie the order flips (the engine's repeat rule).  With ``q = P(first
  roller lower)`` and ``s = P(tie)`` of one RAMPO roll each, the first roller
  loses with probability ``a = (q + s) / (1 + s)`` (``a = q + s (1 - a)``), which
  is 1/2 (``q`` equals ``P(first roller higher)``); ``RAMPO_FIRST_LOSES`` is this
  number computed, not assumed.  The loser receives one token from the winner
  (discharge) or from the pot (charge).
* **A discharge round (H4-H7).**  The state is the leader's tokens ``t`` (the
  follower holds ``P - t``).  The leader's first roll is forced; after roll 1 or 2
  it may STOP or keep any legal ``KEEPS`` entry (at least one die rerolled); the
  turn ends after roll 3.  The follower sees the leader's final hand ``L`` and
  roll count ``n`` and makes exactly ``n`` rolls (first forced, then ``n - 1``
  keeps).  The higher hand gives the lower one its value, capped by what the
  giver holds; equal hands go to RAMPO (1 token).  A player with no tokens has
  won; otherwise whoever received tokens leads the next round.
  ``_outcome_terms`` writes the round's result for every (t, L, F) as a
  constant plus at most two signed references to the next round's values:
  "I lead again with t'" (+X_me(t')) or "the other leads with t'"
  (1 - X_other(t')).

Within a round the leader's stop/keep choices and the follower's keeps are an
expectimax over at most three rolls, vectorised over all ``t`` with the
transition table ``T[k, h]`` (keep ``KEEPS[k]``, reroll the rest, get hand
``h``); a follower's choice is a min of the leader's winning chance, the
leader's a max (the game is zero-sum: one player wins, the other loses).

**Solving.**  Write W(t) for the chance that the leader holding ``t`` of ``P``
tokens wins, under optimal play by both.  One round expresses W(t) through
W(t') and 1 - W(t'') of the next round, increasing in the first kind and
decreasing in the second.  Value iteration keeps a lower and an upper bound:
starting from 0 and 1, ``low <- B(low, up)`` and ``up <- B(up, low)`` (the first
argument feeds the increasing references, the second the decreasing ones).
Both stay valid bounds and close in on W; ``solve`` stops when they are within
``tol`` (1e-12) everywhere and plays the policy greedy with respect to their
midpoint.  ``best_reply`` does the same with the opponent's policy fixed.

**Evaluation.**  A stationary policy is a table of action probabilities
(``Policy421``): as leader by (own tokens, roll, hand), as follower by (own
tokens, (n, roll), leader's final hand, hand).  With both policies fixed, the
round is a known distribution over final hands, so the values X_A(t) (A leads,
A's chance to win) and X_B(t) form a linear system of 2(P - 1) unknowns, solved
directly (``discharge_values``).  ``evaluate`` adds the charge and the seat draw.
``policy_table`` turns any agent into a table by asking it (``action_probs`` in
one batch, else ``act``) at the observation ``codec421.observe`` would show at
each decision state (``decision_observations``; nothing of a previous round is
shown there, so the representative is the observation itself).

Two players only: the three-player game is not solved here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from agents.base import DeterministicAgent, agent_name as _name, batch_probs, pp
from core.spec import NoExactFigure
from games.dice421 import codec as codec421
from games.dice421 import game as g
from games.dice421.codec import RAMPO_FIRST_LOSES, charge_outcomes, rampo_first_loses  # noqa: F401 (part of the model)
from games.dice421.policy import FOLLOWER_DECISION_INDEX, FOLLOWER_DECISIONS, FOLLOWER_LEGAL, LEADER_LEGAL, Policy421

N_HANDS = len(g.HANDS)  # 56; a hand's index in HANDS is its rank
N_KEEPS = len(g.KEEPS)  # 28
N_ACTIONS = g.N_ACTIONS  # 29: STOP, then 1 + keep index
VALUE = codec421.HAND_VALUES

T = codec421.KEEP_TRANSITIONS  # [k, h]: P(the new hand is HANDS[h] | keep KEEPS[k], reroll the other dice)
FIRST_ROLL = codec421.FIRST_ROLL  # all three dice
# The legal keep indices of each hand (at most 1 + 3 + 3), padded with "reroll all".
_MAX_KEEPS = int(FOLLOWER_LEGAL.sum(1).max())
KEEPS_OF = np.zeros((N_HANDS, _MAX_KEEPS), dtype=np.int64)
for _h in range(N_HANDS):
    _ks = np.flatnonzero(FOLLOWER_LEGAL[_h, 1:])
    KEEPS_OF[_h] = np.concatenate([_ks, np.full(_MAX_KEEPS - len(_ks), _ks[0])])


DEFAULT_TOL = 1e-12
MAX_SWEEPS = 20_000


# ---------------------------------------------------------------- policies


# ---------------------------------------------------------------- a round


@lru_cache(maxsize=64)
def _outcome_terms(pot: int):
    """The result of a discharge round for every (leader tokens t, L, F), t = 1..pot-1.

    Returns (c, coef, kind, tok), each (pot - 1, 56, 56) (the last three with a
    leading axis of 2 terms): the leader's chance to win is
    ``c + sum_j coef_j * Y_j`` where Y_j is X_leader(tok_j) if kind_j == 0 (the
    leader leads again with tok_j) or X_follower(tok_j) if kind_j == 1 (the
    follower's player leads with tok_j; its ``1 -`` is in ``c`` and the sign).
    Unused terms have coef 0.
    """
    P = pot
    t = np.arange(1, P)[:, None, None]
    L = np.arange(N_HANDS)[None, :, None]
    F = np.arange(N_HANDS)[None, None, :]
    shape = (P - 1, N_HANDS, N_HANDS)
    c = np.zeros(shape)
    coef = np.zeros((2,) + shape)
    kind = np.zeros((2,) + shape, dtype=np.int64)
    tok = np.ones((2,) + shape, dtype=np.int64)
    t_b, L_b, F_b = np.broadcast_arrays(t, L, F)

    # Leader higher: the follower receives min(value(L), t) from the leader (H4).
    given = np.minimum(VALUE[L_b], t_b)
    hi = L_b > F_b
    c[hi] = 1.0
    on = hi & (given < t_b)  # the leader still holds tokens: the follower leads next (H7)
    coef[0][on], kind[0][on], tok[0][on] = -1.0, 1, (P - t_b + given)[on]

    # Follower higher: the leader receives min(value(F), P - t).
    taken = np.minimum(VALUE[F_b], P - t_b)
    lo = F_b > L_b
    on = lo & (taken < P - t_b)  # the follower still holds tokens: the leader leads next
    coef[0][on], kind[0][on], tok[0][on] = 1.0, 0, (t_b + taken)[on]

    # Same hand: RAMPO (H6); the follower made the tie and rolls first.
    a = RAMPO_FIRST_LOSES  # the follower loses the RAMPO: it receives 1 from the leader
    tie = L_b == F_b
    c[tie] = a
    on = tie & (t_b > 1)
    coef[0][on], kind[0][on], tok[0][on] = -a, 1, (P - t_b + 1)[on]
    on = tie & (P - t_b > 1)  # the leader loses the RAMPO: it receives 1 and leads next
    coef[1][on], kind[1][on], tok[1][on] = 1.0 - a, 0, (t_b + 1)[on]
    for x in (c, coef, kind, tok):
        x.setflags(write=False)
    return c, coef, kind, tok


@lru_cache(maxsize=64)
def _gather_index(pot: int) -> np.ndarray:
    """For each term of ``_outcome_terms``: where its reference sits in the vector
    [x_lead_pos, x_lead_neg, x_foll_pos, x_foll_neg] (each indexed by tokens 0..pot)."""
    _, coef, kind, tok = _outcome_terms(pot)
    block = 2 * kind + (coef < 0)
    index = block * (pot + 1) + tok
    index.setflags(write=False)
    return index


def _round_utility(pot: int, x_lead_pos, x_lead_neg, x_foll_pos, x_foll_neg) -> np.ndarray:
    """U[t, L, F]: the leader's chance to win after final hands L, F, given the next
    round's values (arrays indexed by tokens 0..pot).  Positive references read the
    ``_pos`` arrays and negative ones the ``_neg`` arrays (bounds; pass the same for values)."""
    c, coef, _, _ = _outcome_terms(pot)
    z = np.concatenate([x_lead_pos, x_lead_neg, x_foll_pos, x_foll_neg])
    index = _gather_index(pot)
    return c + coef[0] * z[index[0]] + coef[1] * z[index[1]]


def _follower_step(G: np.ndarray, foll: np.ndarray | None, d: int, actions: bool = False):
    """Values (leader's view) of a follower holding each hand with one more roll owed.

    ``G[t, L, h2]`` is the value after the roll; returns ``(V[t, L, h], actions)``:
    the follower minimizes (``foll`` None) or follows ``foll[d][t, L, h, keep]``.
    """
    q = G @ T.T  # (t, L, keep)
    if foll is None:
        value = q[:, :, KEEPS_OF[:, 0]]  # (t, L, h): the best of each hand's legal keeps
        best = np.zeros(value.shape, dtype=np.int64) if actions else None
        for j in range(1, _MAX_KEEPS):
            option = q[:, :, KEEPS_OF[:, j]]
            if actions:
                best = np.where(option < value, j, best)
            value = np.minimum(value, option)
        return value, (1 + KEEPS_OF[np.arange(N_HANDS), best] if actions else None)
    return np.matmul(foll[d], q[..., None])[..., 0], None


def _leader_step(stop: np.ndarray, after: np.ndarray, lead: np.ndarray | None, r: int):
    """Value of the leader holding each hand after roll r: STOP is worth ``stop[t, h]``,
    a keep rolls into ``after[t, h2]``; maximized (``lead`` None) or by ``lead[t, r-1, h, a]``."""
    q = np.empty(stop.shape + (N_ACTIONS,))
    q[..., 0] = stop
    q[..., 1:] = (after @ T.T)[:, None, :]
    if lead is None:
        masked = np.where(LEADER_LEGAL, q, -np.inf)
        best = masked.argmax(-1)
        return np.take_along_axis(q, best[..., None], -1)[..., 0], best
    return np.einsum("tha,tha->th", lead[:, r - 1], q), None


def _play_round(U: np.ndarray, lead: np.ndarray | None, foll: np.ndarray | None, actions: bool = False):
    """The leader's chance to win a round worth U[t, L, F] at the end (backward expectimax).

    ``lead`` (t, 2, 56, 29) and ``foll`` (three (t, 56, 56, 28) keep tables, one
    per follower decision) are aligned on the leader's tokens t = 1..P-1 (see
    ``_aligned``); None means "plays best" (max for the leader, min for the follower).
    With ``actions``, also the chosen actions.
    """
    s1 = U @ FIRST_ROLL  # the follower makes one roll: no choice
    g_n2, a_d0 = _follower_step(U, foll, 0, actions)
    s2 = g_n2 @ FIRST_ROLL
    if foll is None:
        g1_n3, a_d2 = g_n2, a_d0  # best play depends only on the rolls still owed
    else:
        g1_n3, a_d2 = _follower_step(U, foll, 2)
    g2_n3, a_d1 = _follower_step(g1_n3, foll, 1, actions)
    s3 = g2_n3 @ FIRST_ROLL
    v2, a_r2 = _leader_step(s2, s3, lead, 2)
    v1, a_r1 = _leader_step(s1, v2, lead, 1)
    value = v1 @ FIRST_ROLL
    if not actions:
        return value
    lead_actions = None if lead is not None else np.stack([a_r1, a_r2], axis=1)
    foll_actions = None if foll is not None else np.stack([a_d0, a_d1, a_d2], axis=1)
    return value, lead_actions, foll_actions


def _pad(values: np.ndarray) -> np.ndarray:
    """Values for t = 1..P-1 as an array indexed by tokens 0..P (ends unused, 0)."""
    return np.concatenate([[0.0], values, [0.0]])


def _aligned(policy: Policy421) -> tuple[np.ndarray, list[np.ndarray]]:
    """The policy's leader rows for t = 1..P-1, and its follower rows facing a leader
    who holds t (the follower holds P - t), as one contiguous keep table
    (t, L, h, keep) per follower decision."""
    P = policy.pot
    foll = policy.follower[1:P][::-1]
    return policy.leader[1:P], [np.ascontiguousarray(foll[:, d, :, :, 1:]) for d in range(3)]


# ---------------------------------------------------------------- the charge


def _game_value(pot: int, x_a: np.ndarray, x_b: np.ndarray) -> float:
    """P(A wins) from the discharge values (indexed by tokens 0..P): X_A[t] when A leads
    with t, X_B[t] when B leads with t; the first player is drawn uniformly (H7)."""
    C = charge_outcomes(pot)
    total = 0.0
    for a_seat in (0, 1):  # A is the first player, then the second
        for who in (0, 1):
            for x in range(1, pot + 1):
                p = 0.5 * C[who, x]
                if p == 0.0:
                    continue
                a_took_last = who == a_seat
                if x == pot:  # the last taker holds every token and loses (H3)
                    total += p * (0.0 if a_took_last else 1.0)
                else:
                    total += p * (x_a[x] if a_took_last else 1.0 - x_b[x])
    return total


# ---------------------------------------------------------------- solving


def _bounded_iteration(pot, lead_a, foll_a, lead_b, foll_b, symmetric: bool, tol: float):
    """Value iteration on (X_A, X_B) from the bounds 0 and 1 until they meet within ``tol``.

    Round where A leads: A's leader rows, B's follower rows (aligned on A's
    tokens).  ``symmetric``: A and B are the same (self-play), one function.
    Returns (low_a, up_a, low_b, up_b, sweeps), each indexed by tokens 0..P.
    """
    P = pot
    lo_a, up_a = _pad(np.zeros(P - 1)), _pad(np.ones(P - 1))
    lo_b, up_b = lo_a.copy(), up_a.copy()
    for sweep in range(1, MAX_SWEEPS + 1):
        new_lo_a = _pad(_play_round(_round_utility(P, lo_a, up_a, lo_b, up_b), lead_a, foll_b))
        new_up_a = _pad(_play_round(_round_utility(P, up_a, lo_a, up_b, lo_b), lead_a, foll_b))
        if symmetric:
            new_lo_b, new_up_b = new_lo_a, new_up_a
        else:
            new_lo_b = _pad(_play_round(_round_utility(P, lo_b, up_b, lo_a, up_a), lead_b, foll_a))
            new_up_b = _pad(_play_round(_round_utility(P, up_b, lo_b, up_a, lo_a), lead_b, foll_a))
        lo_a, up_a, lo_b, up_b = new_lo_a, new_up_a, new_lo_b, new_up_b
        gap = max(float((up_a - lo_a).max()), float((up_b - lo_b).max()))
        if gap <= tol:
            return lo_a, up_a, lo_b, up_b, sweep
    raise RuntimeError(f"value iteration did not close the bounds to {tol} in {MAX_SWEEPS} sweeps (gap {gap})")


@dataclass(frozen=True)
class Solution421:
    """Two-player 421 with pot ``pot`` solved: values and the optimal policy."""

    pot: int
    value: np.ndarray  # W[t]: the leader's chance to win holding t tokens (t = 1..P-1; 0 at the ends)
    lower: np.ndarray  # the bounds value iteration stopped at
    upper: np.ndarray
    leader_actions: np.ndarray  # (P + 1, 2, 56): [own tokens, roll - 1, hand]
    follower_actions: np.ndarray  # (P + 1, 3, 56, 56): [own tokens, decision, leader's hand, hand]
    sweeps: int

    @property
    def game_value(self) -> float:
        """P(a given player wins) under optimal play by both, charge included (1/2)."""
        return _game_value(self.pot, self.value, self.value)

    def policy(self) -> Policy421:
        return Policy421.from_actions(self.pot, self.leader_actions, self.follower_actions, "optimal")

    def action(
        self,
        tokens: int,
        is_leader: bool,
        rolls_used: int,
        hand_rank: int,
        rolls_allowed: int = 3,
        leader_hand_rank: int = 0,
    ) -> int:
        if is_leader:
            return int(self.leader_actions[tokens, rolls_used - 1, hand_rank])
        d = FOLLOWER_DECISION_INDEX[(rolls_allowed, rolls_used)]
        return int(self.follower_actions[tokens, d, leader_hand_rank, hand_rank])


def _check_pot(pot: int) -> int:
    if int(pot) != pot or pot < 1:
        raise ValueError(f"the pot needs at least one token, got {pot!r}")
    return int(pot)


def _actions_table(pot: int, lead_actions, foll_actions):
    """Action arrays by own tokens 0..P from arrays aligned on the leader's tokens 1..P-1."""
    la = np.zeros((pot + 1, 2, N_HANDS), dtype=np.int64)
    fa = np.ones((pot + 1, 3, N_HANDS, N_HANDS), dtype=np.int64)  # "reroll all" where unused
    la[1:pot] = lead_actions
    fa[1:pot] = foll_actions[::-1]  # row for the leader's t is the follower holding P - t
    return la, fa


def solve(pot: int = 15, tol: float = DEFAULT_TOL) -> Solution421:
    """Optimal play by both players (bounded value iteration to ``tol``); cached per (pot, tol)."""
    return _solve(_check_pot(pot), float(tol))


@lru_cache(maxsize=16)
def _solve(P: int, tol: float) -> Solution421:
    if P == 1:  # the charge hands the only token to someone, who loses: nothing to decide
        empty = np.zeros(2)
        la, fa = _actions_table(P, np.zeros((0, 2, N_HANDS), int), np.zeros((0, 3, N_HANDS, N_HANDS), int))
        return Solution421(P, empty, empty, empty, la, fa, 0)
    lo, up, _, _, sweeps = _bounded_iteration(P, None, None, None, None, True, tol)
    w = (lo + up) / 2
    _, lead_actions, foll_actions = _play_round(_round_utility(P, w, w, w, w), None, None, actions=True)
    la, fa = _actions_table(P, lead_actions, foll_actions)
    return Solution421(P, w, lo, up, la, fa, sweeps)


# ---------------------------------------------------------------- evaluation


def _round_distribution(lead: np.ndarray, foll: list[np.ndarray]) -> np.ndarray:
    """D[t, L, F]: P(the round ends with the leader on L and the follower on F), for
    fixed policies aligned on the leader's tokens (forward in the rolls)."""
    nt = lead.shape[0]
    p = np.broadcast_to(FIRST_ROLL, (nt, N_HANDS))
    stops = []
    for r in (1, 2):
        stops.append(p * lead[:, r - 1, :, 0])
        p = np.einsum("th,thk->tk", p, lead[:, r - 1, :, 1:]) @ T
    stops.append(p)  # the turn ends after roll 3
    first = np.broadcast_to(FIRST_ROLL, (nt, N_HANDS, N_HANDS))  # [t, L, h]

    def keep(dist, d):
        return np.matmul(dist[:, :, None, :], foll[d])[:, :, 0, :] @ T

    f1 = first
    f2 = keep(first, 0)
    f3 = keep(keep(first, 1), 2)
    return sum(s[:, :, None] * f for s, f in zip(stops, (f1, f2, f3)))


def discharge_values(policy_a: Policy421, policy_b: Policy421) -> tuple[np.ndarray, np.ndarray]:
    """(X_A, X_B), indexed by tokens 0..P: X_A[t] = P(A wins | A leads a discharge
    round holding t tokens), X_B[t] the same for B.  Exact: a linear solve."""
    P = policy_a.pot
    if policy_b.pot != P:
        raise ValueError(f"the policies are for different pots ({P} and {policy_b.pot})")
    policy_a.check()
    policy_b.check()
    if P == 1:
        return np.zeros(2), np.zeros(2)
    n = P - 1
    c, coef, kind, tok = _outcome_terms(P)
    lead_a, foll_a = _aligned(policy_a)
    lead_b, foll_b = _aligned(policy_b)
    A = np.eye(2 * n)
    b = np.zeros(2 * n)
    for block, (lead, foll) in enumerate(((lead_a, foll_b), (lead_b, foll_a))):
        D = _round_distribution(lead, foll)
        rows = block * n + np.arange(n)
        b[rows] = (D * c).sum((1, 2))
        other = 1 - block
        for j in range(2):
            col = np.where(kind[j] == 0, block, other) * n + tok[j] - 1
            w = D * coef[j]
            flat = (np.arange(n)[:, None, None] * (2 * n) + col).ravel()
            A[block * n : (block + 1) * n] -= np.bincount(flat, weights=w.ravel(), minlength=n * 2 * n).reshape(
                n, 2 * n
            )
    x = np.linalg.solve(A, b)
    return _pad(x[:n]), _pad(x[n:])


def evaluate(policy_a: Policy421, policy_b: Policy421) -> float:
    """P(A wins) when A and B play a whole two-player game (charge, seat draw included)."""
    x_a, x_b = discharge_values(policy_a, policy_b)
    return _game_value(policy_a.pot, x_a, x_b)


@dataclass(frozen=True)
class BestReply:
    """The best stationary reply to a policy and what it wins."""

    value: float  # P(the reply wins the whole game)
    lead_value: np.ndarray  # [t]: P(the reply wins | it leads holding t)
    opponent_lead_value: np.ndarray  # [t]: P(the policy wins | it leads holding t)
    policy: Policy421
    sweeps: int


def best_reply(policy: Policy421, tol: float = DEFAULT_TOL) -> BestReply:
    """The best reply to ``policy`` (bounded value iteration with the policy fixed)."""
    policy.check()
    P = policy.pot
    if P == 1:
        empty = np.zeros(2)
        return BestReply(0.5, empty, empty, solve(1).policy(), 0)
    lead_b, foll_b = _aligned(policy)
    lo_a, up_a, lo_b, up_b, sweeps = _bounded_iteration(P, None, None, lead_b, foll_b, False, tol)
    x_a, x_b = (lo_a + up_a) / 2, (lo_b + up_b) / 2
    _, lead_actions, _ = _play_round(_round_utility(P, x_a, x_a, x_b, x_b), None, foll_b, actions=True)
    _, _, foll_actions = _play_round(_round_utility(P, x_b, x_b, x_a, x_a), lead_b, None, actions=True)
    la, fa = _actions_table(P, lead_actions, foll_actions)
    reply = Policy421.from_actions(P, la, fa, f"best reply to {policy.name}")
    return BestReply(_game_value(P, x_a, x_b), x_a, x_b, reply, sweeps)


# ---------------------------------------------------------------- agents as tables


def leader_observation(tokens: int, opponent_tokens: int, rolls_used: int, hand) -> np.ndarray:
    """What ``codec421.observe`` shows a two-player leader at its decision."""
    other = codec421.OtherPlayer(played=False, hand=None, tokens=opponent_tokens, in_game=True, is_leader=False)
    return codec421.encode(hand, rolls_used, g.MAX_ROLLS, True, 0, [other], tokens, 0, g.DISCHARGE, 2)


def follower_observation(
    tokens: int, leader_tokens: int, rolls_allowed: int, rolls_used: int, leader_hand, hand
) -> np.ndarray:
    """What ``codec421.observe`` shows a two-player follower at its decision."""
    other = codec421.OtherPlayer(
        played=True, hand=tuple(leader_hand), tokens=leader_tokens, in_game=True, is_leader=True
    )
    return codec421.encode(hand, rolls_used, rolls_allowed, False, rolls_allowed, [other], tokens, 0, g.DISCHARGE, 2)


@lru_cache(maxsize=8)
def decision_observations(pot: int):
    """Every two-player discharge decision with pot ``pot``, as observations.

    Returns (leader_obs (P-1, 2, 56, 25), follower_obs (P-1, 3, 56, 56, 25)),
    indexed like ``Policy421`` rows 1..P-1.  Read-only.
    """
    P = _check_pot(pot)
    hands = np.array(g.HANDS, dtype=np.int64)
    base_l = (
        np.stack([leader_observation(t, P - t, 1, g.HANDS[0]) for t in range(1, P)])
        if P > 1
        else np.zeros((0, codec421.OBS_SIZE), np.int64)
    )
    lead = np.repeat(np.repeat(base_l[:, None, None, :], 2, 1), N_HANDS, 2)
    lead[:, :, :, codec421.HAND] = hands[None, None, :, :]
    lead[:, :, :, codec421.ROLLS_USED] = np.array([1, 2])[None, :, None]
    foll = np.zeros((P - 1, 3, N_HANDS, N_HANDS, codec421.OBS_SIZE), dtype=np.int64)
    for t in range(1, P):
        for d, (n, r) in enumerate(FOLLOWER_DECISIONS):
            foll[t - 1, d] = follower_observation(t, P - t, n, r, g.HANDS[0], g.HANDS[0])
    other_hand = slice(codec421.OTHERS_START + 1, codec421.OTHERS_START + 4)
    foll[..., other_hand] = hands[None, None, :, None, :]
    foll[..., codec421.HAND] = hands[None, None, None, :, :]
    for a in (lead, foll):
        a.setflags(write=False)
    return lead, foll


def _agent_probs(agent, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
    return batch_probs(agent, obs, masks, lambda i: str(codec421.decode(obs[i])))


def policy_table(agent, pot: int = 15) -> Policy421:
    """Any agent (``action_probs`` in batches, else ``act``) as a ``Policy421``, by asking
    it at every two-player discharge decision for pot ``pot``."""
    P = _check_pot(pot)
    if callable(getattr(agent, "exact_table", None)):  # the optimal bot: its table is the solution's
        return agent.exact_table(P)
    lead_obs, foll_obs = decision_observations(P)
    lead_masks = np.broadcast_to(LEADER_LEGAL[None, None], lead_obs.shape[:3] + (N_ACTIONS,))
    foll_masks = np.broadcast_to(FOLLOWER_LEGAL[None, None, None], foll_obs.shape[:4] + (N_ACTIONS,))
    lead = np.zeros((P + 1, 2, N_HANDS, N_ACTIONS))
    foll = np.zeros((P + 1, 3, N_HANDS, N_HANDS, N_ACTIONS))
    lead[1:P] = _agent_probs(agent, lead_obs.reshape(-1, codec421.OBS_SIZE), lead_masks.reshape(-1, N_ACTIONS)).reshape(
        lead[1:P].shape
    )
    foll[1:P] = _agent_probs(agent, foll_obs.reshape(-1, codec421.OBS_SIZE), foll_masks.reshape(-1, N_ACTIONS)).reshape(
        foll[1:P].shape
    )
    return Policy421(P, lead, foll, _name(agent))


def as_policy(agent_or_policy, pot: int = 15) -> Policy421:
    """A Policy421 from a table or an agent (names become agents in ``agents.make_agent``)."""
    if isinstance(agent_or_policy, Policy421):
        if agent_or_policy.pot != pot:
            raise ValueError(f"policy is for pot {agent_or_policy.pot}, not {pot}")
        return agent_or_policy
    if isinstance(agent_or_policy, str):
        raise TypeError(
            f"as_policy takes a table or an agent, got the name {agent_or_policy!r}: "
            "use agents.bot_table('421', name, pot=...) or agents.make_agent('421', name)"
        )
    return policy_table(agent_or_policy, pot)


def win_probability(agent, opponent=None, pot: int = 15) -> float:
    """Exact P(``agent`` wins) against ``opponent`` in a two-player game (charge included)."""
    opponent = solve(pot).policy() if opponent is None else as_policy(opponent, pot)
    return evaluate(as_policy(agent, pot), opponent)


def best_reply_value(agent, pot: int = 15) -> float:
    """Exact P(a best reply wins) against ``agent``: 1/2 for an unexploitable policy."""
    return best_reply(as_policy(agent, pot)).value


def exploitability(agent, pot: int = 15) -> float:
    """How much more than 1/2 a best reply wins against ``agent``."""
    return best_reply_value(agent, pot) - 0.5


# ---------------------------------------------------------------- the agent


class OptimalAgent421(DeterministicAgent):
    """Plays the solved optimal policy of two-player 421, for whatever pot the
    observation shows (own + opponent tokens); the first game of a pot solves it
    (about half a second for pot 15), later ones reuse it."""

    name = "optimal"

    def __init__(self, tol: float = DEFAULT_TOL):
        self.tol = tol

    def solution(self, pot: int) -> Solution421:
        return solve(pot, self.tol)

    def exact_table(self, pot: int) -> Policy421:
        """The policy table at ``pot`` (``policy_table`` reads it from here)."""
        return self.solution(pot).policy()

    def act(self, obs: np.ndarray, action_mask: np.ndarray) -> int:
        o = codec421.decode(obs)
        if o.n_players != 2:
            raise ValueError(f"the optimal 421 bot is solved for two players only, this game has {o.n_players}")
        if o.phase != g.DISCHARGE or o.hand is None or o.rolls_used >= o.rolls_allowed:
            raise ValueError("the optimal 421 bot was asked to act where there is no decision")
        other = o.others[0]
        pot = o.tokens + other.tokens
        h = g.hand_rank(o.hand)
        if o.is_leader:
            action = self.solution(pot).action(o.tokens, True, o.rolls_used, h)
        else:
            action = self.solution(pot).action(
                o.tokens, False, o.rolls_used, h, o.rolls_allowed, g.hand_rank(other.hand)
            )
        if action_mask is not None and not np.asarray(action_mask)[action]:
            raise ValueError(f"optimal 421 bot chose {g.describe_action(action)}, which the mask forbids: {o}")
        return action

    def action_probs(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """One-hot rows for a batch of two-player discharge decisions (vectorised lookup)."""
        obs = np.asarray(obs).reshape(-1, codec421.OBS_SIZE)
        if np.any(obs[:, codec421.N_PLAYERS] != 2):
            raise ValueError("the optimal 421 bot is solved for two players only")
        if np.any(obs[:, codec421.PHASE] != codec421.PHASE_CODE[g.DISCHARGE]) or np.any(obs[:, 0] == 0):
            raise ValueError("the optimal 421 bot was asked to act where there is no decision")
        tokens = obs[:, codec421.TOKENS]
        pots = tokens + obs[:, codec421.OTHERS_START + codec421.O_TOKENS]
        h = codec421.RANK_OF_DICE[obs[:, 0], obs[:, 1], obs[:, 2]]
        leader_hand = obs[:, codec421.OTHERS_START + 1 : codec421.OTHERS_START + 4]
        lh = codec421.RANK_OF_DICE[leader_hand[:, 0], leader_hand[:, 1], leader_hand[:, 2]]
        used, allowed = obs[:, codec421.ROLLS_USED], obs[:, codec421.ROLLS_ALLOWED]
        is_leader = obs[:, codec421.IS_LEADER] == 1
        d = np.where(allowed == 2, 0, np.where(used == 1, 1, 2))
        actions = np.zeros(len(obs), dtype=np.int64)
        for pot in np.unique(pots):
            sol = self.solution(int(pot))
            rows = pots == pot
            lead, foll = rows & is_leader, rows & ~is_leader
            actions[lead] = sol.leader_actions[tokens[lead], used[lead] - 1, h[lead]]
            actions[foll] = sol.follower_actions[tokens[foll], d[foll], np.maximum(lh[foll], 0), h[foll]]
        probs = np.zeros((len(obs), N_ACTIONS))
        probs[np.arange(len(obs)), actions] = 1.0
        return probs


# ---------------------------------------------------------------- command line


# --- the exact figure of a tournament table (GameSpec.exact_tables) ---------------------
def _memo(memo: dict, key, compute):
    if key not in memo:
        memo[key] = compute()
    return memo[key]


def tournament_figure(agents: Sequence, orders, options: dict, memo: dict) -> np.ndarray:
    """Two-player 421 by the solver (charge included), for any two agents it can
    tabulate.  The solver draws the first player fairly, which is what the two seat
    orders played equally often amount to."""
    if sorted(orders) != [(0, 1), (1, 0)]:
        raise NoExactFigure("the 421 solver's figure is for both seat orders equally often")
    key = tuple(sorted(options.items()))
    tables = []
    for agent in agents:
        try:
            tables.append(_memo(memo, ("solver421", id(agent), key), lambda a=agent: policy_table(a, **options)))
        except ValueError as e:
            raise NoExactFigure(f"the solver cannot tabulate {_name(agent)}: {e}") from None
    p0 = float(evaluate(*tables))
    return np.array([p0, 1.0 - p0])


def main(argv: list[str] | None = None) -> None:
    """Solve two-player 421: ``python -m games.dice421.solver --pot 15`` (the bots' exact
    figures: ``python -m play evaluate 421 --agent all --exact``)."""
    import argparse
    import time

    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("--pot", type=int, default=15)
    args = parser.parse_args(argv)
    start = time.perf_counter()
    sol = solve(args.pot)
    print(
        f"pot {args.pot}: solved in {time.perf_counter() - start:.2f} s ({sol.sweeps} sweeps, "
        f"bound gap {float((sol.upper - sol.lower).max()):.1e})"
    )
    print(f"game value {sol.game_value:.12f}")
    print("W[t] (leader holding t wins):")
    for first in range(1, args.pot, 6):  # six to a line: the output fits 80 columns
        print("  " + " ".join(f"{t}:{sol.value[t]:.6f}" for t in range(first, min(first + 6, args.pot))))
    best = best_reply(sol.policy())
    print(f"the optimal policy against its best reply wins {1 - best.value:.12f}")


# ---------------------------------------------------------------- training reports


_REPLY_VALUES: dict[int, tuple[Policy421, float]] = {}  # id(table) -> (table, its best reply's P(win))


def reply_value(table: Policy421) -> float:
    """P(the exact best reply beats ``table``), cached for the tables training evaluates
    against every time (the bots' tables, themselves cached by ``agents.bot_table``)."""
    kept = _REPLY_VALUES.get(id(table))
    if kept is None or kept[0] is not table:
        kept = _REPLY_VALUES[id(table)] = (table, best_reply(table).value)
    return kept[1]


def exact_figures(agent, opponents: dict[str, Policy421], pot: int = 15) -> dict:
    """The exact figures training logs for a two-player agent (charge and seat draw
    included): P(win) against each opponent table (``"optimal"`` among them), the gap
    to 1/2 in pp, its regret at its own table (``exploitability_pp``: what a best reply
    to it gains) and at the table of each other opponent (``regret_vs_NAME_pp``: what
    the best reply to that opponent wins more than the agent does)."""
    table = policy_table(agent, pot)
    figures = {f"vs_{name}": evaluate(table, opponent) for name, opponent in opponents.items()}
    regrets = {
        f"regret_vs_{name}_pp": pp(reply_value(opponent) - figures[f"vs_{name}"])
        for name, opponent in opponents.items()
        if name != "optimal"
    }  # vs optimal: the gap
    return {
        **figures,
        "gap_pp": pp(0.5 - figures["vs_optimal"]),
        **regrets,
        "exploitability_pp": pp(best_reply(table).value - 0.5),
        "optimal": False,
    }


def format_figures(name: str, figures: dict, opponents, pot: int = 15) -> list[str]:
    """The results table of a training run, from ``exact_figures``."""
    return [
        f"exact win probability, two players, pot {pot} (charge and seat draw included)",
        f"  vs optimal     {figures['vs_optimal']:.6f}   (optimal vs optimal: 0.5; gap {figures['gap_pp']:.4f} pp)",
        *(
            f"  vs {o:<11} {figures[f'vs_{o}']:.6f}"
            + (f"   (regret {figures[f'regret_vs_{o}_pp']:.4f} pp)" if f"regret_vs_{o}_pp" in figures else "")
            for o in opponents
            if o != "optimal"
        ),
        *(
            [
                f"  a best reply to it wins {0.5 + figures['exploitability_pp'] / 100:.6f} "
                f"(exploitable by {figures['exploitability_pp']:.4f} pp)"
            ]
            if "exploitability_pp" in figures
            else []
        ),
    ]


if __name__ == "__main__":
    from core.cli import run_interruptible

    run_interruptible(main)
