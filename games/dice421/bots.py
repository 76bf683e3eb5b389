"""Heuristic bots for 421.  Each reads its observation (``games.dice421.codec``) and
answers one of the engine's 29 actions (0 = STOP, 1..28 = keep ``KEEPS[a-1]``).

The ``heuristic`` bot plans one discharge round by exact enumeration: rerolled
dice have at most 6^3 = 216 outcomes, which ``KEEP_TRANSITIONS`` folds into a
distribution over the 56 hands once, so a whole round's plan is a few small
matrix products.  Its score for a round is the tokens it gets rid of (capped by
what the giver holds, as H4 caps them), with a bonus for leaving the game.

Every bot also answers a whole batch at once (``action_probs``, one-hot rows of
exactly what ``act`` plays): exact evaluation asks it at every two-player
discharge decision (``games.dice421.solver.policy_table``, ~131k for pot 15), and
batched three-player games at thousands of rows a step.  The discharge decisions
of two- and three-player rounds are vectorised (the heuristic looks its plan up
once per round view, then indexes by hand); any other row goes through ``act``.
"""

from __future__ import annotations

from functools import lru_cache
from itertools import product

import numpy as np

from agents.base import BatchedAgent
from games.dice421 import codec as codec421
from games.dice421 import game as g

N_HANDS = len(g.HANDS)  # 56; a hand's index in HANDS is its rank
N_KEEPS = len(g.KEEPS)  # 28
VALUE = codec421.HAND_VALUES.astype(float)

KEEP_TRANSITIONS = codec421.KEEP_TRANSITIONS  # [k, h]: P(hand h | keep KEEPS[k])
FIRST_ROLL = codec421.FIRST_ROLL  # all three dice
# KEEP_LEGAL[h, k]: the hand holds the kept values.
KEEP_LEGAL = codec421.MASKS[0][:, 1:]
# P(a first roll ranks at most h): how good a hand is, as a percentile of one roll.
ROLL_CDF = np.cumsum(FIRST_ROLL)

TOKEN_CAP = 11  # values are at most 10, so more tokens than 11 never change a cap
LEAVE_BONUS = 2.0


def _best_keeps(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each hand (last axis of the result): the best legal keep given the values
    of the next hands (last axis of ``values``), and its expected value."""
    q = values @ KEEP_TRANSITIONS.T  # (..., keep)
    masked = np.where(KEEP_LEGAL, q[..., None, :], -np.inf)  # (..., hand, keep)
    choice = masked.argmax(-1)
    return choice, np.take_along_axis(q, choice, -1)


def _keep_q(values: np.ndarray) -> np.ndarray:
    """Q[h, action] of every keep action from each hand, given next-hand values; STOP and illegal -inf."""
    q = np.full((N_HANDS, g.N_ACTIONS), -np.inf)
    q[:, 1:] = np.where(KEEP_LEGAL, values @ KEEP_TRANSITIONS.T, -np.inf)
    return q


def round_utility(ranks: list, tokens: tuple[int, ...], me: int, bonus: float = LEAVE_BONUS) -> np.ndarray:
    """What a discharge round is worth to the player at round position ``me``.

    ``ranks`` are the final hands' ranks in order of play (arrays that broadcast
    together), ``tokens`` what each position holds.  The highest hand (earlier wins
    ties) gives the lowest its value, capped by what it holds: +tokens given, -tokens
    received, plus ``bonus`` for leaving (or minus it for the opponent leaving, in a
    two-player round, which loses the game).  A shared lowest hand means RAMPO:
    1 token, each tied player losing it equally often; a tie all round is even.
    """
    r = np.stack(np.broadcast_arrays(*[np.asarray(x) for x in ranks]))
    n = len(ranks)
    tok = np.asarray(tokens)
    low, high = r.min(0), r.max(0)
    is_low = r == low
    n_low = is_low.sum(0)
    hi = (r == high).argmax(0)  # first of the highest: earlier ranks higher
    amount = np.minimum(VALUE[high], tok[hi])
    single = n_low == 1
    me_hi, me_low = hi == me, is_low[me]
    u = np.zeros(r.shape[1:])
    u = np.where(single & me_hi, amount + bonus * (amount >= tok[me]), u)
    opponent_leaves = bonus * (amount >= tok[hi]) if n == 2 else 0.0
    u = np.where(single & me_low, -amount - opponent_leaves, u)
    partial = ~single & (n_low < n)
    u = np.where(partial & me_hi, 1 + bonus * (tok[me] <= 1), u)
    u = np.where(partial & me_low, -1.0 / np.maximum(n_low, 1), u)
    return u


@lru_cache(maxsize=None)
def rank_maximizer_distribution(n_rolls: int) -> np.ndarray:
    """The final-hand distribution of a player who makes ``n_rolls`` rolls maximizing
    its expected rank: the model of a player whose response is not worked out."""
    choices, values = [], np.arange(N_HANDS, dtype=float)
    for _ in range(n_rolls - 1):
        choice, values = _best_keeps(values)
        choices.append(choice)
    dist = FIRST_ROLL.copy()
    for choice in reversed(choices):
        dist = dist @ KEEP_TRANSITIONS[choice]
    return dist


def final_hand_values(
    played: tuple[int, ...], tokens: tuple[int, ...], n_rolls: int, bonus: float = LEAVE_BONUS
) -> np.ndarray:
    """Expected round utility of each final hand of the player at position
    ``len(played)``, once the players after it have played ``n_rolls`` rolls each.

    One player after: it is the last, and it best-responds exactly (its own
    utility, its rolls worked out by enumeration).  Two after (the leader of
    three): both are modeled by ``rank_maximizer_distribution``.
    """
    me, n_after = len(played), len(tokens) - len(played) - 1
    mine = np.arange(N_HANDS)
    if n_after == 0 and me == 1:
        return _follower_of_two_values(tokens, bonus)[played[0]].copy()
    if n_after == 0:
        return round_utility([*played, mine], tokens, me, bonus)
    if n_after == 1:
        ranks = [*played, mine[:, None], mine[None, :]]
        u_me, u_last = round_utility(ranks, tokens, me, bonus), round_utility(ranks, tokens, me + 1, bonus)
        for _ in range(n_rolls - 1):
            choice, u_last = _best_keeps(u_last)
            u_me = np.take_along_axis(u_me @ KEEP_TRANSITIONS.T, choice, -1)
        return u_me @ FIRST_ROLL
    dist = rank_maximizer_distribution(n_rolls)
    return np.einsum("hab,a,b->h", _utility_of_three(played, tokens, bonus), dist, dist)


@lru_cache(maxsize=256)  # 25 kB each, a key per tokens held
def _follower_of_two_values(tokens: tuple[int, ...], bonus: float) -> np.ndarray:
    """final_hand_values of the follower of two, [leader's hand, own hand]: every leader's
    hand at once (round_utility is elementwise, so each row is what a call for one hand gives)."""
    mine = np.arange(N_HANDS)
    return round_utility([mine[:, None], mine[None, :]], tokens, 1, bonus)


@lru_cache(maxsize=4)  # 1.4 MB each; leader_plan asks for one key three times
def _utility_of_three(played: tuple[int, ...], tokens: tuple[int, ...], bonus: float) -> np.ndarray:
    """round_utility for every (own hand, next hand, last hand), shared by all roll counts."""
    mine = np.arange(N_HANDS)
    ranks = [*played, mine[:, None, None], mine[None, :, None], mine[None, None, :]]
    return round_utility(ranks, tokens, len(played), bonus)


@lru_cache(maxsize=1 << 17)  # a key per (hands played, tokens, n): bounded (about 50 MB) for long runs
def follower_values(
    played: tuple[int, ...], tokens: tuple[int, ...], n_rolls: int, bonus: float = LEAVE_BONUS
) -> tuple[np.ndarray, ...]:
    """values[k][h]: what holding HANDS[h] with k rolls still owed is worth to a follower."""
    values = [final_hand_values(played, tokens, n_rolls, bonus)]
    for _ in range(n_rolls - 2):
        values.append(_keep_q(values[-1]).max(1))
    return tuple(values)


def _keep_q_row(h: int, values: np.ndarray) -> np.ndarray:
    """Q[action] of every keep from HANDS[h], given next-hand values; STOP and illegal -inf."""
    q = np.full(g.N_ACTIONS, -np.inf)
    q[1:] = np.where(KEEP_LEGAL[h], KEEP_TRANSITIONS @ values, -np.inf)
    return q


@lru_cache(maxsize=4096)  # a key per tokens held
def leader_plan(tokens: tuple[int, ...], bonus: float = LEAVE_BONUS) -> tuple[np.ndarray, np.ndarray]:
    """Q[r-1][h, action] for the leader holding HANDS[h] after roll r (1 or 2).

    Stopping after roll r is worth the round with every follower owing r rolls;
    going on is worth the best keep, valued by the same plan one roll later.
    """
    stop = [final_hand_values((), tokens, r, bonus) for r in (1, 2, 3)]
    q2 = _keep_q(stop[2])
    q2[:, g.STOP] = stop[1]
    q1 = _keep_q(q2.max(1))
    q1[:, g.STOP] = stop[0]
    return q1, q2


def _round_view(o: codec421.Obs421) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """(ranks played before the observer, tokens by position in this round's order)."""
    order = o.round_order()
    tokens = o.tokens_by_position()
    played = tuple(g.hand_rank(o.others[p - 1].hand) for p in order[: order.index(0)])
    return played, tuple(min(tokens[p], TOKEN_CAP) for p in order)


def _argmax_legal(q: np.ndarray, action_mask: np.ndarray) -> int:
    return int(np.argmax(np.where(np.asarray(action_mask, dtype=bool), q, -np.inf)))


# ---------------------------------------------------------------- batches of decisions

_S = codec421.OTHERS_START  # other slot 0: relative position 1 (the opponent in a two-player game)
_SLOTS = (_S, _S + codec421.OTHER_SLOT_SIZE)  # the other slots: relative positions 1 and 2


def _ranks(dice: np.ndarray) -> np.ndarray:
    """g.hand_rank of each row of (N, 3) dice; -1 where it would raise (a die not in 1..6)."""
    d = np.minimum(np.maximum(dice, 0), 7)  # a die out of 1..6 reads as 0 or 7: -1
    return codec421.RANK_OF_DICE.reshape(-1)[(d[:, 0] * 8 + d[:, 1]) * 8 + d[:, 2]]


def _as_int_rows(obs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(obs as int64, the rows ``codec421.decode`` reads without an error).

    decode takes ``int(x)`` of every entry (so float observations truncate) and then
    reads the other slots up to ``n_players`` and ``PHASES[phase]``."""
    if np.issubdtype(obs.dtype, np.integer) or obs.dtype == bool:
        big = np.iinfo(np.int64).max
        ok = np.all(obs <= big, axis=1) if obs.dtype.kind == "u" else np.ones(len(obs), dtype=bool)
        o = obs.astype(np.int64)
    else:
        finite = np.isfinite(obs)
        ok = np.all(finite & (np.abs(np.where(finite, obs, 0)) < 2.0**62), axis=1)
        o = np.where(ok[:, None], np.trunc(np.where(finite, obs, 0)), 0).astype(np.int64)
    n_phases = len(codec421.PHASES)
    ok &= o[:, codec421.N_PLAYERS] <= codec421.MAX_PLAYERS
    ok &= (o[:, codec421.PHASE] >= -n_phases) & (o[:, codec421.PHASE] < n_phases)
    return o, ok


class _BatchedBot(BatchedAgent):
    """A bot whose ``actions`` plays the rows ``_batch_actions`` vectorises in one go
    and every other row through ``act`` (so the batch answers exactly what ``act`` does)."""

    def _batch_actions(self, o: np.ndarray, legal: np.ndarray, ok: np.ndarray) -> np.ndarray:
        """The action of each row, -1 where the row is left to ``act``.  ``o`` holds the
        observations as int64, ``legal`` the masks as bool, ``ok`` the rows decode reads."""
        raise NotImplementedError

    def actions(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """What ``act`` plays at each row of a batch."""
        obs, masks = np.asarray(obs), np.asarray(masks)
        if obs.ndim != 2 or obs.shape[1] != codec421.OBS_SIZE or masks.shape != (len(obs), g.N_ACTIONS):
            return np.array([self.act(o, m) for o, m in zip(obs, masks)], dtype=np.int64)
        o, ok = _as_int_rows(obs)
        actions = self._batch_actions(o, masks.astype(bool), ok)
        for i in np.flatnonzero(actions < 0):
            actions[i] = self.act(obs[i], masks[i])
        return actions


def _round_orders() -> np.ndarray:
    """ORDER[n_players - 2, start, in game at relative position 1, at 2]: the round's order
    (relative positions clockwise from ``start``, the first player flagged as leader, or 0 if
    none; those not in game skipped), padded with -1: ``Obs421.round_order`` in every case."""
    table = np.full((2, codec421.MAX_PLAYERS, 2, 2, codec421.MAX_PLAYERS), -1, dtype=np.int64)
    for n, start, in_1, in_2 in product((2, 3), range(3), (0, 1), (0, 1)):
        if start < n:
            others = tuple(
                codec421.OtherPlayer(False, None, 0, bool(in_game), p == start)
                for p, in_game in zip((1, 2), (in_1, in_2)[: n - 1])
            )
            order = codec421.Obs421(None, 0, 0, start == 0, 0, others, 0, 0, g.DISCHARGE, n).round_order()
            table[n - 2, start, in_1, in_2, : len(order)] = order
    return table.reshape(-1, codec421.MAX_PLAYERS)


# By the round's configuration ((n_players - 2) * 3 + start) * 4 + in_1 * 2 + in_2: its order
# (relative position at each place), how many play, and the observer's place.
_ROUND_ORDER = _round_orders()
_ROUND_SIZE = np.count_nonzero(_ROUND_ORDER >= 0, axis=1)
_ROUND_PLACE = np.argmax(_ROUND_ORDER == 0, axis=1)
# Columns by relative position (0 = the observer, 1 and 2 the other slots).
_DICE = np.r_[codec421.HAND, [s + d for s in _SLOTS for d in range(1, 4)]]
_TOKEN_COLUMNS = np.array([codec421.TOKENS] + [s + codec421.O_TOKENS for s in _SLOTS])
_PLAYED_COLUMNS = np.array([s + codec421.O_PLAYED for s in _SLOTS])  # positions 1 and 2 only


def _groups(parts: list[tuple[np.ndarray, int]], rows: np.ndarray) -> tuple[list[list[int]], np.ndarray]:
    """``rows`` grouped by a key of small integers (``parts``: each part's value at every row, in
    0..size-1 at ``rows``, and its size): (each group's key as a list of ints, each row's group).
    The values at other rows may be anything (the code is read at ``rows`` only)."""
    code = parts[0][0]
    for part, size in parts[1:]:
        code = code * size + part
    codes, group = np.unique(code[rows], return_inverse=True)
    sizes, strides = [size for _, size in parts], [1]
    for size in sizes[:0:-1]:
        strides.insert(0, strides[0] * size)
    return (codes[:, None] // strides % sizes).tolist(), group.reshape(-1)


def _heuristic_actions(bonus: float, o: np.ndarray, legal: np.ndarray, ok: np.ndarray) -> np.ndarray:
    """``HeuristicAgent(bonus).act`` at the discharge decisions among the rows, in rounds of two
    or three players (-1 elsewhere, left to ``act``).  As in ``_round_view``, the round's order
    is clockwise from the leader, skipping players not in game, and the plan depends on the
    tokens by place in that order (capped at TOKEN_CAP), the hands played before the observer
    and the rolls owed.  Rows are grouped by that key; each group's plan is looked up once in
    the caches (``leader_plan``, ``follower_values``), then indexed by hand."""
    actions = np.full(len(o), -1, dtype=np.int64)
    n_players = o[:, codec421.N_PLAYERS]
    three = n_players == 3  # decode reads the second other slot only then
    ranks = _ranks(o[:, _DICE].reshape(-1, 3)).reshape(-1, 3)  # by relative position
    h = ranks[:, 0]
    used, allowed = o[:, codec421.ROLLS_USED], o[:, codec421.ROLLS_ALLOWED]
    left = allowed - used
    i_lead = o[:, codec421.IS_LEADER] != 0
    # The round (Obs421.round_order): from the first player flagged as leader (0 if none), in game.
    flag_1, flag_2 = o[:, _S + codec421.O_IS_LEADER] != 0, three & (o[:, _SLOTS[1] + codec421.O_IS_LEADER] != 0)
    start = np.where(i_lead, 0, np.where(flag_1, 1, np.where(flag_2, 2, 0)))
    in_1, in_2 = o[:, _S + codec421.O_IN_GAME] != 0, three & (o[:, _SLOTS[1] + codec421.O_IN_GAME] != 0)
    config = ((three * 3 + start) * 2 + in_1) * 2 + in_2
    order, m, pos = _ROUND_ORDER[config], _ROUND_SIZE[config], _ROUND_PLACE[config]
    # By place: tokens (capped; 0 past the last), and the ranks of the hands shown as played at
    # places 0 and 1 when before the observer's (-1 elsewhere, and where decode shows none).
    at = codec421.MAX_PLAYERS * np.arange(len(o))[:, None] + np.maximum(order, 0)
    tokens = np.minimum(o[:, _TOKEN_COLUMNS].reshape(-1)[at], TOKEN_CAP) * (order >= 0)
    shown = np.where(o[:, _PLAYED_COLUMNS] != 0, ranks[:, 1:], -1).reshape(-1)  # [2 * row + position - 1]
    played = [np.where(pos > j, shown[2 * np.arange(len(o)) + np.maximum(order[:, j] - 1, 0)], -1) for j in (0, 1)]
    seen = ((pos <= 0) | (played[0] >= 0)) & ((pos <= 1) | (played[1] >= 0))  # hand_rank reads them all
    base = ok & ((n_players == 2) | three) & (m >= 2) & (h >= 0) & np.all(tokens >= 0, axis=1)
    is_lead = base & i_lead & ((used == 1) | (used == 2))
    is_foll = (
        base
        & ~i_lead
        & (pos >= 1)
        & seen
        & (allowed >= 1)
        & (allowed <= g.MAX_ROLLS)
        & (left >= 1)
        & (left <= np.maximum(allowed - 1, 1))
    )  # follower_values has max(1, n - 1) tables
    rows = np.flatnonzero(is_lead | is_foll)
    if not len(rows):
        return actions
    # A group's key: leader (0) or follower (1), players - 2, the follower's place - 1, tokens by
    # place, the hands played before the follower (rank + 1, 0 for none), the follower's rolls
    # (0 for the leader), and which of the plan's tables (rolls used - 1, or rolls left - 1).
    keys, group = _groups(
        [
            (is_foll, 2),
            (m - 2, 2),
            (np.maximum(pos - 1, 0), 2),
            *[(tokens[:, j], TOKEN_CAP + 1) for j in range(codec421.MAX_PLAYERS)],
            (played[0] + 1, N_HANDS + 1),
            (played[1] + 1, N_HANDS + 1),
            (np.where(is_foll, allowed, 0), g.MAX_ROLLS + 1),
            (np.where(is_foll, left, used) - 1, 2),
        ],
        rows,
    )
    n_lead = len(keys) - sum(key[0] for key in keys)  # the leaders' keys sort first
    hand = h[rows]
    if n_lead:  # the plan's Q[hand, action] of each group (13 kB), indexed by hand
        plans = np.stack(
            [
                leader_plan((t0, t1, t2)[: players + 2], bonus)[k]
                for _, players, _, t0, t1, t2, _, _, _, k in keys[:n_lead]
            ]
        )
        lead = np.flatnonzero(group < n_lead)
        q = plans.reshape(-1, g.N_ACTIONS)[group[lead] * N_HANDS + hand[lead]]
        actions[rows[lead]] = np.argmax(np.where(legal[rows[lead]], q, -np.inf), axis=1)
    if n_lead < len(keys):  # Q[keep] of each group, then the keeps legal for the hand
        keep_q = np.empty((len(keys) - n_lead, N_KEEPS))
        for j, (_, players, place, t0, t1, t2, l0, l1, n_rolls, k) in enumerate(keys[n_lead:]):
            values = follower_values((l0 - 1, l1 - 1)[: place + 1], (t0, t1, t2)[: players + 2], n_rolls, bonus)[k]
            keep_q[j] = KEEP_TRANSITIONS @ values  # as _keep_q_row, to the bit
        foll = np.flatnonzero(group >= n_lead)
        # act's Q has STOP at -inf and every keep finite: its argmax is the first best allowed keep,
        # or STOP (index 0) when no keep is allowed.
        allowed_keeps = legal[rows[foll], 1:] & KEEP_LEGAL[hand[foll]]
        best = np.argmax(np.where(allowed_keeps, keep_q[group[foll] - n_lead], -np.inf), axis=1)
        actions[rows[foll]] = np.where(allowed_keeps[np.arange(len(foll)), best], 1 + best, g.STOP)
    return actions


class HeuristicAgent(_BatchedBot):
    """Plans the round by exact enumeration: stops as leader when the hand is worth
    more than rolling on, and as a follower keeps the dice most likely to beat the
    best hand played and stay off the bottom, given the rolls it still owes."""

    name = "heuristic"

    def __init__(self, bonus: float = LEAVE_BONUS):
        self.bonus = bonus

    def q_values(self, o: codec421.Obs421) -> np.ndarray:
        played, tokens = _round_view(o)
        h = g.hand_rank(o.hand)
        if o.is_leader:
            return leader_plan(tokens, self.bonus)[o.rolls_used - 1][h].copy()
        values = follower_values(played, tokens, o.rolls_allowed, self.bonus)
        return _keep_q_row(h, values[o.rolls_left() - 1])

    def act(self, obs: np.ndarray, action_mask: np.ndarray) -> int:
        return _argmax_legal(self.q_values(codec421.decode(obs)), action_mask)

    def _batch_actions(self, o: np.ndarray, legal: np.ndarray, ok: np.ndarray) -> np.ndarray:
        return _heuristic_actions(self.bonus, o, legal, ok)


# _GREEDY_KEEP[has a 1, has a 4, has a 2]: greedy421's keep (the first two of 1, 4, 2 it holds).
_GREEDY_KEEP = np.zeros((2, 2, 2), dtype=np.int64)
for _has in product((0, 1), repeat=3):
    _GREEDY_KEEP[_has] = g.action_for_keep(tuple(v for v, held in zip((1, 4, 2), _has) if held)[:2])


class Greedy421Agent(_BatchedBot):
    """Always goes for 4-2-1: as leader stops only on 4-2-1, and otherwise keeps
    the 1, 4 and 2 it holds (a 1 first, then a 4, then a 2; two at most)."""

    name = "greedy421"

    def act(self, obs: np.ndarray, action_mask: np.ndarray) -> int:
        o = codec421.decode(obs)
        if o.hand == (4, 2, 1) and action_mask[g.STOP]:
            return g.STOP
        keep = tuple(v for v in (1, 4, 2) if v in o.hand)[:2]
        action = g.action_for_keep(keep)
        return action if action_mask[action] else _argmax_legal(np.zeros(g.N_ACTIONS), action_mask)

    def _batch_actions(self, o: np.ndarray, legal: np.ndarray, ok: np.ndarray) -> np.ndarray:
        hand = o[:, codec421.HAND]
        has = [np.any(hand == v, axis=1) for v in (1, 4, 2)]
        action = _GREEDY_KEEP[has[0].astype(int), has[1].astype(int), has[2].astype(int)]
        first_legal = np.argmax(np.where(legal, 0.0, -np.inf), axis=1)
        action = np.where(legal[np.arange(len(o)), action], action, first_legal)
        action = np.where(np.all(hand == (4, 2, 1), axis=1) & legal[:, g.STOP], g.STOP, action)
        return np.where(ok & (hand[:, 0] != 0), action, -1)  # decode reads a 0 die first as no hand


class CautiousAgent(_BatchedBot):
    """A leader that stops as soon as its hand is at least as good as the median
    first roll (else keeps the dice that maximize its expected rank); as a follower
    it plays like ``heuristic``."""

    name = "cautious"

    def __init__(self):
        self.follower = HeuristicAgent()
        q2 = _keep_q(np.arange(N_HANDS, dtype=float))
        self.keep_q = (_keep_q(q2.max(1)), q2)  # rank maximizer, by rolls used

    def act(self, obs: np.ndarray, action_mask: np.ndarray) -> int:
        o = codec421.decode(obs)
        if not o.is_leader:
            return self.follower.act(obs, action_mask)
        h = g.hand_rank(o.hand)
        if ROLL_CDF[h] >= 0.5 and action_mask[g.STOP]:
            return g.STOP
        return _argmax_legal(self.keep_q[o.rolls_used - 1][h], action_mask)

    def _batch_actions(self, o: np.ndarray, legal: np.ndarray, ok: np.ndarray) -> np.ndarray:
        i_lead = o[:, codec421.IS_LEADER] != 0
        actions = np.full(len(o), -1, dtype=np.int64)
        follow = np.flatnonzero(ok & ~i_lead)
        actions[follow] = _heuristic_actions(self.follower.bonus, o[follow], legal[follow], ok[follow])
        h, used = _ranks(o[:, codec421.HAND]), o[:, codec421.ROLLS_USED]
        lead = np.flatnonzero(ok & i_lead & (h >= 0) & ((used == 1) | (used == 2)))
        h, used = h[lead], used[lead]
        keep = np.argmax(np.where(legal[lead], np.stack(self.keep_q)[used - 1, h], -np.inf), axis=1)
        actions[lead] = np.where((ROLL_CDF[h] >= 0.5) & legal[lead, g.STOP], g.STOP, keep)
        return actions
