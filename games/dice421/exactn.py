"""Exact table values and best replies of 421 for 2 or 3 players.

With more than two players there is no single optimal bot, but a table can
still be measured exactly: fix every seat's policy and the game is a Markov
chain; fix all seats but one and that seat faces an MDP.  This module computes

* ``evaluate_table``: the exact probability that each seat does not lose, with
  every seat's policy fixed (charge, discharge and RAMPO included; the first
  player drawn uniformly, as the engine draws it).  With three players a seat
  *does not lose* when it leaves the table with no tokens (it wins); the one
  left holding every token loses, so the three figures sum to 2;
* ``best_reply``: the exact best stationary reply of one seat to the others'
  fixed policies, and its value; ``regret`` = best reply value - actual value
  (NashConv, as OpenSpiel reports it, is the sum of the regrets over the seats).

**What is modelled.**  Every rule comes from the engine (``games.dice421.game``): the
pattern of a round (who is lowest, who is highest, ties) is computed once for
every tuple of final hands with the engine's own ``_lowest``/``_best``, and a
RAMPO (H6) is the engine's ``_rampo`` played as a small absorbing Markov chain
over roll patterns (the tie maker first, repeats, the winner of the first roll
that is not a tie all round).  A discharge round starts in a *state*: the tokens
of every seat and the leader (a seat with no tokens has left as a winner).  The
leader plays up to three rolls (STOP or a keep after roll 1 or 2), the followers
make exactly ``n`` rolls each in round order, and the round's pattern moves
tokens to the next state or ends the game.  The charge (H2, H3) is a forward
pass over (pot left, tokens) to the distribution of the first discharge state.

**Policies.**  An agent becomes a table by being asked (``batch_probs``:
``action_probs`` in batches, else ``act``) at the observation
``codec421.observe`` shows at each decision state it can meet; nothing of a
previous round is shown, so an observation is a decision state.  Per situation
(own tokens, the others' tokens, who leads) only what the round needs is kept:
the leader's action table, and for a follower its final-hand distribution given
the hands played before it and the leader's roll count ``n``.  The last of
three followers sees two hands played: 3 * 56^3 (527k) decisions per situation,
91 situations for pot 15, which dominates the time for an agent that answers a
row at a time.  Every one of them shows its own observation (the tokens and the
hands differ), so nothing is asked twice for being seen twice.

A network is asked on one torch thread (``ASK_THREADS``), and a network of known
parts (MLP of tanh layers over ``OneHotInts`` or ``Rank421Features``) with its
first layer added up by parts (``_SummedFirstLayer``), the decisions it leaves
in doubt asked of the network itself: the same keeps, to the last one.  The
table of a ``ppo-421-3p``-sized network at pot 15 (4.9e7 decisions) takes about
120 to 140 s trained, 200 s untrained (``python -m games.dice421.exactn --time-network``).

**Solving.**  With every policy fixed the values are one linear solve over the
states (``numpy.linalg.solve``).  A best reply is found by policy iteration:
improve the seat's decisions in every round by backward expectimax against
the current values, then evaluate the improved policy exactly by a linear
solve; an action changes only when it is better by more than ``tol``, so the
iteration stops when no decision can gain more than ``tol``
(``solver421.DEFAULT_TOL``).  The reported value is the exact value of that
stationary policy (it is a real reply, so it never exceeds the true best); the
Bellman residual is returned with it.  Charge rounds and RAMPOs can repeat
without end, but each has a chance of ending bounded away from 0 whatever the
players do, so every policy ends the game with probability 1 and the linear
systems are regular.
"""

from __future__ import annotations

import sys
import time
from collections import defaultdict
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache, wraps
from itertools import product
from typing import Any, Sequence

import numpy as np

from agents.base import agent_name, batch_actions, batch_probs, pp
from games.dice421.solver import DEFAULT_TOL, FIRST_ROLL, KEEPS_OF, N_ACTIONS, N_HANDS, T
from games.dice421 import codec as codec421
from games.dice421 import game as g
from games.dice421.policy import FOLLOWER_DECISIONS, FOLLOWER_LEGAL, LEADER_LEGAL

N_KEEPS = len(g.KEEPS)  # 28; a follower's action is 1 + keep index
MAX_ITERATIONS = 100  # policy iteration; it typically stops after a handful
# Follower decisions (rolls allowed n, rolls used r), as in Policy421: d = 0 is (2, 1), 1 is (3, 1), 2 is (3, 2).
_D = {nr: d for d, nr in enumerate(FOLLOWER_DECISIONS)}


# ---------------------------------------------------------------- one BLAS thread


@lru_cache(maxsize=None)
def _blas_threads() -> tuple[Any, Any] | None:
    """(get, set) of the thread count of the OpenBLAS that numpy runs on, or None."""
    import ctypes
    import glob
    import os

    folder = os.path.join(os.path.dirname(np.__file__), os.pardir, "numpy.libs")
    names = [("scipy_openblas_get_num_threads64_", "scipy_openblas_set_num_threads64_")]
    names += [("openblas_get_num_threads64_", "openblas_set_num_threads64_")]
    names += [("openblas_get_num_threads", "openblas_set_num_threads")]
    for path in sorted(glob.glob(os.path.join(folder, "*openblas*"))):
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for get, set_ in names:
            if hasattr(lib, get) and hasattr(lib, set_):
                return getattr(lib, get), getattr(lib, set_)
    return None


@contextmanager
def one_blas_thread():
    """numpy's matrix products on one thread while inside: this module's are small (at
    most 3,136 x 56 by 56 x 28) and a second OpenBLAS thread only waits, which on two
    busy cores made a best reply two to three times slower.  It also makes the figures
    those of one thread wherever they are computed (the tests run numpy on one thread; on
    two, a product may differ in its last bit).  Nothing changes where numpy's BLAS is not
    OpenBLAS."""
    api = _blas_threads()
    if api is None:
        yield
        return
    get, set_ = api
    before = int(get())
    set_(1)
    try:
        yield
    finally:
        set_(before)


def _on_one_blas_thread(function):
    """``function`` run inside ``one_blas_thread()``."""

    @wraps(function)
    def run(*args, **kwargs):
        with one_blas_thread():
            return function(*args, **kwargs)

    return run


# ---------------------------------------------------------------- rounds: patterns and RAMPO


@lru_cache(maxsize=None)
def round_patterns(m: int) -> tuple[np.ndarray, tuple[tuple[tuple[int, ...], int, int], ...]]:
    """Every tuple of m final hands in play order, as a pattern (lowest positions, highest
    position, tokens due): (index array of shape (56,) * m, the patterns).  Built with the
    engine's ``_lowest`` and ``_best``; ``due`` is 1 when the lowest hand is shared (RAMPO)."""
    keys: dict[tuple, int] = {}
    index = np.empty((N_HANDS,) * m, dtype=np.int32)
    for ranks in product(range(N_HANDS), repeat=m):
        hands = [(p, g.HANDS[r]) for p, r in enumerate(ranks)]
        low, best = tuple(g._lowest(hands)), g._best(hands)
        due = g.hand_value(g.HANDS[ranks[best]]) if len(low) == 1 else 1
        index[ranks] = keys.setdefault((low, best, due), len(keys))
    index.setflags(write=False)
    return index, tuple(keys)


def _joint_first_rolls(m: int) -> np.ndarray:
    """P(the m first rolls are these hands), shape (56,) * m."""
    joint = np.ones(())
    for _ in range(m):
        joint = np.multiply.outer(joint, FIRST_ROLL)
    return joint


@lru_cache(maxsize=None)
def _roll_patterns(m: int) -> dict[tuple[tuple[int, ...], int], float]:
    """P((lowest positions, highest position)) of one roll of m players in order (a RAMPO roll)."""
    index, keys = round_patterns(m)
    weights = np.bincount(index.ravel(), _joint_first_rolls(m).ravel(), minlength=len(keys))
    out: dict[tuple[tuple[int, ...], int], float] = defaultdict(float)
    for (low, best, _), p in zip(keys, weights):
        out[(low, best)] += float(p)
    return dict(out)


@lru_cache(maxsize=None)
def rampo_outcomes(k: int) -> dict[tuple[int, int], float]:
    """P((loser, winner)) of a RAMPO among k tied players, by their positions 0..k-1 in play
    order (H6 as ``Game421._rampo`` plays it; repeats included), by an absorbing chain."""
    start = (tuple(g._tie_maker_first(list(range(k)))), None)
    states, index, rows = [start], {start: 0}, []
    while len(rows) < len(states):
        order, winner = states[len(rows)]
        row: dict[tuple[str, Any], float] = defaultdict(float)
        for (low, best), p in _roll_patterns(len(order)).items():
            won = winner if winner is not None or len(low) == len(order) else order[best]
            if len(low) == 1:
                row[("end", (order[low[0]], won))] += p
                continue
            nxt = (tuple(g._tie_maker_first([order[j] for j in low])), won)
            if nxt not in index:
                index[nxt] = len(states)
                states.append(nxt)
            row[("state", index[nxt])] += p
        rows.append(row)
    ends = sorted({key for row in rows for kind, key in row if kind == "end"}, key=str)
    q = np.zeros((len(states), len(states)))
    r = np.zeros((len(states), len(ends)))
    for i, row in enumerate(rows):
        for (kind, key), p in row.items():
            if kind == "state":
                q[i, key] += p
            else:
                r[i, ends.index(key)] += p
    x = np.linalg.solve(np.eye(len(states)) - q, r)
    return {end: float(x[0, j]) for j, end in enumerate(ends) if x[0, j] > 0}


@lru_cache(maxsize=None)
def pattern_transfers(m: int) -> tuple[tuple[tuple[float, int, int, int], ...], ...]:
    """For each pattern of ``round_patterns(m)``: the token moves it leads to, as
    (probability, receiver, giver, due) by position in play order (H4, H6: a shared
    lowest hand plays RAMPO for 1 token, given by the highest player, or by the RAMPO
    winner when every hand is tied).  In the charge the pot gives, so ``giver`` is unused."""
    out = []
    for low, best, due in round_patterns(m)[1]:
        if len(low) == 1:
            out.append(((1.0, low[0], best, due),))
            continue
        moves = []
        for (loser, winner), p in rampo_outcomes(len(low)).items():
            giver = low[winner] if best in low else best
            moves.append((p, low[loser], giver, 1))
        out.append(tuple(moves))
    return tuple(out)


# ---------------------------------------------------------------- states


def clockwise(leader: int, tokens: Sequence[int]) -> list[int]:
    """H7: the seats in play, clockwise from ``leader`` (a seat with no tokens has left)."""
    n = len(tokens)
    return [s for s in ((leader + i) % n for i in range(n)) if tokens[s] > 0]


@dataclass(frozen=True)
class _Round:
    """A discharge state and where each of its round's patterns leads."""

    tokens: tuple[int, ...]
    leader: int
    order: tuple[int, ...]  # seats in play order
    cls: np.ndarray  # (E,) pattern of each move
    nxt: np.ndarray  # (E,) next state index, or S + seat for "seat loses"
    prob: np.ndarray  # (E,) probability of the move given the pattern


@lru_cache(maxsize=8)
def discharge_states(n_players: int, pot: int) -> tuple[tuple[tuple[int, ...], int], ...]:
    """The discharge states of a table, in ``Layout``'s order: (tokens of every seat, at
    least two seats holding some; the leader, a seat that holds some)."""
    if n_players not in (2, 3):
        raise ValueError(f"421 is played by 2 or 3 players, got {n_players!r}")
    states = []
    for tokens in product(range(pot), repeat=n_players):
        if sum(tokens) == pot and sum(t > 0 for t in tokens) >= 2:
            states += [(tokens, leader) for leader in range(n_players) if tokens[leader] > 0]
    return tuple(states)


class Layout:
    """The discharge states of a table of ``n_players`` with pot ``pot``: the tokens of
    every seat (at least two seats holding some) and the leader (a seat that holds some).
    Index ``S + seat`` (S = number of states) stands for "the game is over, ``seat`` lost"."""

    def __init__(self, n_players: int, pot: int):
        self.n, self.pot = n_players, int(g.check_options(pot=pot)["pot"])
        self.states = discharge_states(n_players, self.pot)
        self.index = {state: i for i, state in enumerate(self.states)}
        self.S = len(self.states)
        self.rounds = [self._round(tokens, leader) for tokens, leader in self.states]

    def after(self, tokens: Sequence[int], receiver: int) -> int:
        """Where the game goes once tokens have moved (H3, H5): ``S + seat`` if a seat holds
        every token (it loses), else the state in which ``receiver`` leads (H7)."""
        for seat, t in enumerate(tokens):
            if t == self.pot:
                return self.S + seat
        return self.index[(tuple(tokens), receiver)]

    def _round(self, tokens: tuple[int, ...], leader: int) -> _Round:
        order = clockwise(leader, tokens)
        cls, nxt, prob = [], [], []
        for c, moves in enumerate(pattern_transfers(len(order))):
            for p, receiver, giver, due in moves:
                after = list(tokens)
                amount = min(due, after[order[giver]])  # H4: capped by what the giver holds
                after[order[giver]] -= amount
                after[order[receiver]] += amount
                cls.append(c)
                nxt.append(self.after(after, order[receiver]))
                prob.append(p)
        return _Round(tokens, leader, tuple(order), np.array(cls), np.array(nxt), np.array(prob))

    def start(self, first_player: int | None = None) -> np.ndarray:
        """P(the discharge starts in each state, or the game ends at the charge), shape (S + n,):
        the charge (H2) from ``first_player``, or averaged over a uniform draw (H7)."""
        if first_player is None:
            return sum(self.start(f) for f in range(self.n)) / self.n
        n, P = self.n, self.pot
        order = [(first_player + i) % n for i in range(n)]  # nobody has left during the charge
        index, _ = round_patterns(n)
        weights = np.bincount(index.ravel(), _joint_first_rolls(n).ravel(), minlength=len(pattern_transfers(n)))
        takes: dict[tuple[int, int], float] = defaultdict(float)  # (receiver seat, due) -> P
        for w, moves in zip(weights, pattern_transfers(n)):
            for p, receiver, _, due in moves:
                takes[(order[receiver], due)] += float(w) * p
        mass: dict[tuple[int, ...], float] = {(0,) * n: 1.0}  # tokens held -> P, for the pot left
        by_pot = {P: mass}
        out = np.zeros(self.S + n)
        for pot in range(P, 0, -1):  # every charge round takes at least one token
            for held, m in by_pot.pop(pot, {}).items():
                for (taker, due), p in takes.items():
                    amount = min(due, pot)
                    after = list(held)
                    after[taker] += amount
                    if amount == pot:  # the pot is empty: the charge ends (H3)
                        out[self.after(after, taker)] += m * p
                    else:
                        level = by_pot.setdefault(pot - amount, {})
                        level[tuple(after)] = level.get(tuple(after), 0.0) + m * p
        return out


# ---------------------------------------------------------------- a seat's situation and observations


@dataclass(frozen=True)
class Situation:
    """A discharge state seen from one seat: ``tokens[0]`` its own, ``tokens[i]`` the seat
    i places clockwise; ``leader`` the leader's place.  What the seat's observation shows
    apart from the dice, so one table serves every seat an agent sits in."""

    n_players: int
    tokens: tuple[int, ...]
    leader: int

    @staticmethod
    def of(tokens: Sequence[int], leader: int, seat: int) -> "Situation":
        n = len(tokens)
        return Situation(n, tuple(tokens[(seat + i) % n] for i in range(n)), (leader - seat) % n)

    @property
    def order(self) -> list[int]:
        return clockwise(self.leader, self.tokens)

    @property
    def position(self) -> int:
        """0 if the seat leads, 1 for the first follower, 2 for the second."""
        return self.order.index(0)

    def observation(self, hand, rolls_used: int, rolls_allowed: int, played: Sequence = ()) -> np.ndarray:
        """What ``codec421.observe`` shows this seat at its decision (``played``: the final hands
        of the players before it, in play order)."""
        order = self.order
        before = dict(zip(order, played))
        others = [
            codec421.OtherPlayer(
                played=p in before,
                hand=before.get(p),
                tokens=self.tokens[p],
                in_game=self.tokens[p] > 0,
                is_leader=p == self.leader,
            )
            for p in range(1, self.n_players)
        ]
        is_leader = self.leader == 0
        return codec421.encode(
            hand,
            rolls_used,
            rolls_allowed,
            is_leader,
            0 if is_leader else rolls_allowed,
            others,
            self.tokens[0],
            0,
            g.DISCHARGE,
            self.n_players,
        )

    @property
    def decision_shape(self) -> tuple[int, ...]:
        """The shape of ``decision_observations`` less its last axis: (2, 56) for the leader,
        (3, 56 [, 56], 56) for a follower."""
        pos = self.position
        return (2, N_HANDS) if pos == 0 else (3,) + (N_HANDS,) * (pos + 1)

    def decision_rows(self, start: int, stop: int) -> np.ndarray:
        """Rows ``start:stop`` of ``decision_observations()`` flattened to (rows, 25), built
        for those rows only: one observation per decision kind (the leader's roll, or the
        follower's decision d), the hands set by column (``tests/test_exact421n.py``
        checks them against ``decision_observations``)."""
        return self.rows_at(np.arange(start, stop))

    def rows_at(self, flat: np.ndarray) -> np.ndarray:
        """``decision_rows`` at the flat indices ``flat``."""
        base, slots = _decision_base(self)
        rest, own = np.divmod(flat, N_HANDS)
        played = []
        for _ in slots:
            rest, hand = np.divmod(rest, N_HANDS)
            played.append(hand)
        obs = base[rest]  # rest is now the decision kind
        obs[:, codec421.HAND] = _HAND_DICE[own]
        for slot, hand in zip(slots, reversed(played)):
            obs[:, slot : slot + 3] = _HAND_DICE[hand]
        return obs

    def decision_observations(self) -> np.ndarray:
        """Every decision of this seat in the round: leader (2, 56, 25) by roll and hand;
        a follower (3, 56 [, 56], 56, 25) by decision d (``FOLLOWER_DECISIONS``), the hands
        played before it and its hand."""
        hands = np.array(g.HANDS, dtype=np.int64)
        pos = self.position
        if pos == 0:
            obs = np.repeat(np.repeat(self.observation(g.HANDS[0], 1, g.MAX_ROLLS)[None, None], 2, 0), N_HANDS, 1)
            obs[:, :, codec421.ROLLS_USED] = np.array([1, 2])[:, None]
            obs[:, :, codec421.HAND] = hands[None, :]
            return obs
        base = np.stack([self.observation(g.HANDS[0], r, n, [g.HANDS[0]] * pos) for n, r in FOLLOWER_DECISIONS])
        obs = np.broadcast_to(
            base.reshape((3,) + (1,) * (pos + 1) + (codec421.OBS_SIZE,)),
            (3,) + (N_HANDS,) * (pos + 1) + (codec421.OBS_SIZE,),
        ).copy()
        for j, p in enumerate(self.order[:pos]):
            slot = codec421.OTHERS_START + (p - 1) * codec421.OTHER_SLOT_SIZE + 1
            shape = [1] * (pos + 1) + [3]
            shape[j] = N_HANDS
            obs[(slice(None),) * (pos + 2) + (slice(slot, slot + 3),)] = hands.reshape(shape)
        obs[..., codec421.HAND] = hands.reshape((1,) * pos + (N_HANDS, 3))
        return obs


_HAND_DICE = np.array(g.HANDS, dtype=np.int64)  # (56, 3): the dice of each hand, as observations show them


@lru_cache(maxsize=4096)
def _decision_base(situation: Situation) -> tuple[np.ndarray, tuple[int, ...]]:
    """One observation of ``situation`` for each decision kind (the leader's roll 1 and 2,
    or a follower's decisions d), its hands to be set; and the first column of each played
    hand, in play order (``Situation.decision_rows``)."""
    pos = situation.position
    if pos == 0:
        base = np.repeat(situation.observation(g.HANDS[0], 1, g.MAX_ROLLS)[None], 2, 0)
        base[:, codec421.ROLLS_USED] = [1, 2]
        slots: tuple[int, ...] = ()
    else:
        base = np.stack([situation.observation(g.HANDS[0], r, n, [g.HANDS[0]] * pos) for n, r in FOLLOWER_DECISIONS])
        slots = tuple(codec421.OTHERS_START + (p - 1) * codec421.OTHER_SLOT_SIZE + 1 for p in situation.order[:pos])
    base.setflags(write=False)
    return base, slots


# ---------------------------------------------------------------- rounds played forward


def leader_stops(lead: np.ndarray) -> np.ndarray:
    """P(the leader ends its turn after roll n on hand L), (3, 56), from its action table
    (2, 56, 29) by roll and hand."""
    p = FIRST_ROLL.copy()
    stops = []
    for r in (0, 1):
        stops.append(p * lead[r, :, 0])
        p = (p[:, None] * lead[r, :, 1:]).sum(0) @ T
    stops.append(p)
    return np.stack(stops)


def follower_finals(keep_probs: np.ndarray) -> np.ndarray:
    """P(a follower's final hand), (3, *context, 56) by n - 1, from its keep probabilities
    (3, *context, 56, 28) by decision d, context (the hands played before it) and hand."""
    ctx = keep_probs.shape[1:-2]
    first = np.broadcast_to(FIRST_ROLL, ctx + (N_HANDS,))

    def step(dist, d):
        return np.einsum("...h,...hk->...k", dist, keep_probs[d]) @ T

    return np.stack([first, step(first, 0), step(step(first, 1), 2)])


def _keep_step(dist: np.ndarray, keeps: np.ndarray) -> np.ndarray:
    """``dist`` (C, 56) after each hand keeps ``keeps`` (C, 56) (keep indices) and rerolls."""
    c = dist.shape[0]
    flat = (np.arange(c)[:, None] * N_KEEPS + keeps).ravel()
    return np.bincount(flat, dist.ravel(), minlength=c * N_KEEPS).reshape(c, N_KEEPS) @ T


def follower_finals_det(slots: np.ndarray) -> np.ndarray:
    """``follower_finals`` of a deterministic follower: ``slots`` (3, *context, 56) index its
    keep among the hand's legal ones (``KEEPS_OF``)."""
    return follower_finals_keeps(KEEPS_OF[np.arange(N_HANDS), slots])


def follower_finals_keeps(keeps: np.ndarray) -> np.ndarray:
    """``follower_finals`` of a deterministic follower: ``keeps`` (3, *context, 56) its keep
    (index in ``KEEPS``) at each decision, context and hand."""
    ctx = keeps.shape[1:-1]
    keeps = keeps.reshape(3, -1, N_HANDS)
    first = np.broadcast_to(FIRST_ROLL, (keeps.shape[1], N_HANDS))
    two = _keep_step(first, keeps[0])
    three = _keep_step(_keep_step(first, keeps[1]), keeps[2])
    return np.stack([first, two, three]).reshape((3,) + ctx + (N_HANDS,))


def _keep_or(q: np.ndarray, current: np.ndarray | None, tol: float) -> tuple[np.ndarray, np.ndarray]:
    """The choices to play (index on the last axis of ``q``) and their values: the current
    ones unless the best is better by more than ``tol`` (so ties never flip back and forth)."""
    best = q.argmax(-1)
    best_value = np.take_along_axis(q, best[..., None], -1)[..., 0]
    if current is None:
        return best, best_value
    current_value = np.take_along_axis(q, current[..., None], -1)[..., 0]
    switch = best_value > current_value + tol
    return np.where(switch, best, current), np.where(switch, best_value, current_value)


def _best_slots(
    q: np.ndarray, current: np.ndarray | None, tol: float, first: tuple[np.ndarray, np.ndarray] | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """``_keep_or`` for a follower: ``q`` (..., 28) values each keep, for every hand (a new
    last axis) its legal keeps' slots in ``KEEPS_OF``; returns (values, slots), (..., 56) each.
    A loop over the 7 slots: numpy's argmax over a last axis of 7 is several times slower.
    ``first``: what ``_best_slots(q, None, tol)`` returned, when it is known."""
    if first is not None:
        best_value, best = first
    else:
        best_value = q[..., KEEPS_OF[:, 0]]
        best = np.zeros(best_value.shape, dtype=np.int64)
        for j in range(1, KEEPS_OF.shape[1]):
            option = q[..., KEEPS_OF[:, j]]
            better = option > best_value  # strictly: the first best slot, as argmax
            best = np.where(better, j, best)
            best_value = np.where(better, option, best_value)
    if current is None:
        return best_value, best
    current_value = np.take_along_axis(q, KEEPS_OF[np.arange(N_HANDS), current], -1)
    switch = best_value > current_value + tol
    return np.where(switch, best_value, current_value), np.where(switch, best, current)


# ---------------------------------------------------------------- agents as tables


# Rows per call of an agent's ``actions`` (a multiple of ``ppo_agent.EVAL_CHUNK``, the rows of
# one forward pass of a network): large enough that a call costs nothing beside the network,
# small enough that a batch's observations and masks stay in the CPU's cache.
ROWS_PER_ASK = 65_536
# torch threads a network is asked on (None: the process's).  A forward pass of 4,096 rows
# on two threads is twice as fast as on one when both cores are free, but ten times slower
# when another process keeps one busy (measured: a last-follower situation in 11 s instead
# of 1.1 s; each of the pass's layers waits for the thread the other process holds), which
# made a network's table take half an hour.  A network's answers are the same on any
# number of threads (its layers split rows, not sums: checked to the bit).
ASK_THREADS: int | None = 1
# A network of known parts is asked with its first layer added up by parts (``_SummedFirstLayer``).
SUM_FIRST_LAYER = True


@contextmanager
def _inference():
    """``torch.inference_mode()`` on ``ASK_THREADS`` threads when torch is loaded (a network
    may be asked), the process's thread count restored after; else nothing."""
    torch = sys.modules.get("torch")
    if torch is None:
        yield
        return
    before = torch.get_num_threads()
    torch.set_num_threads(ASK_THREADS or before)
    try:
        with torch.inference_mode():
            yield
    finally:
        torch.set_num_threads(before)


U32 = 2.0**-24  # float32's unit roundoff
TANH_ERROR = 8 * U32  # how far numpy's and torch's float32 tanh may be from the exact tanh


def _gamma(n: int) -> float:
    """The bound of n float32 roundings in a row, relative to the sum of the magnitudes."""
    return n * U32 / (1 - n * U32)


class _SummedFirstLayer:
    """A network asked at a situation's decisions with its first layer added up by parts.

    Its features (``OneHotInts`` or ``Rank421Features``) code each part of an observation
    on its own: the decision kind's entries, the observer's hand, each played hand.  So the
    first layer's sum at a decision is, in exact arithmetic, the sum at the decision kind's
    observation plus one vector for each hand, each tabulated once per situation (in
    float64 from the network's weights); a block of decisions with the same kind and hands
    played adds the 56 own hands' vectors to one row.  The layers after the first are the
    network's own modules, on the same rows as ``PPOAgent.actions`` asks them.

    The sum differs from the network's one-hot product by rounding only, so the logits by
    less than ``bound`` (float32 rounding of every sum and of tanh, carried through the
    layers by their largest row sums).  A decision whose best legal logit leads the next by
    more than twice that plays the network's action.  The others are settled by tighter
    bounds of their own from the last tanh on (``_unsettled``: a saturated tanh passes on
    almost none of its input's error); the few left are asked of the network itself
    (``agent.actions``).  So the keeps are the network's to the last one
    (``tests/test_exact421n.py`` checks them against it).

    The layers after the first are the network's own Linear modules; its tanh is numpy's,
    ten times faster than torch's here.  Each is within ``TANH_ERROR`` of the exact tanh:
    at every float32 from 2^-30 to 10, numpy's is within 1.01 units of float32's roundoff
    and torch's within 0.51 (the tests check a sample), so the two differ by at most
    ``2 * TANH_ERROR``."""

    def __init__(self, agent):
        import torch

        policy = agent.policy
        self.torch, self.agent = torch, agent
        self.features = policy.pi_features_extractor
        net = list(policy.mlp_extractor.policy_net) + [policy.action_net]
        self.first, self.rest = net[0], net[1:]
        self._abs_of: dict = {}
        self.screened = 0  # decisions a situation's one bound left open (then settled row by row, or asked)
        self.last_tanh = max(i for i, m in enumerate(self.rest) if isinstance(m, torch.nn.Tanh))
        w = self.first.weight.detach().double()
        self.w, self.w_abs, self.b = w.T, w.abs().T, self.first.bias.detach().double()
        # how far the network's logits may be from ours, given the first layer's sums are
        # at most `first` apart: each Linear (k inputs) adds its own rounding, tanh its own
        self.carry = []  # (row sum bound, rounding) of each later layer, in order
        for layer in self.rest:
            if isinstance(layer, torch.nn.Linear):
                rows = float(layer.weight.detach().double().abs().sum(1).max())
                bias = float(layer.bias.detach().double().abs().max())
                self.carry.append((rows, 2 * _gamma(layer.in_features + 1) * (rows + bias)))
            else:  # Tanh: its outputs are within 1 in size and a few ulps of 1
                self.carry.append((1.0, 2 * TANH_ERROR))

    @staticmethod
    def of(agent) -> "_SummedFirstLayer | None":
        """The plan for ``agent`` if it is a network of exactly the known parts, else None."""
        try:
            import torch
            from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
            from stable_baselines3.common.torch_layers import MlpExtractor

            from agents.features import OneHotInts
            from agents.ppo_agent import PPOAgent
            from games.dice421.features import Rank421Features
        except ImportError:
            return None
        if type(agent) is not PPOAgent:
            return None
        policy = agent.policy
        net = list(getattr(getattr(policy, "mlp_extractor", None), "policy_net", []))
        known = (
            torch.get_float32_matmul_precision() == "highest"  # the bound is float32's
            and type(policy).extract_features is MaskableActorCriticPolicy.extract_features
            and policy.share_features_extractor
            and type(policy.mlp_extractor) is MlpExtractor
            and type(policy.pi_features_extractor) in (OneHotInts, Rank421Features)
            and tuple(policy.observation_space.shape) == (codec421.OBS_SIZE,)
            and len(net) >= 2
            and len(net) % 2 == 0
            and all(type(m) is torch.nn.Linear for m in net[::2])
            and all(type(m) is torch.nn.Tanh for m in net[1::2])
            and type(policy.action_net) is torch.nn.Linear
        )
        return _SummedFirstLayer(agent) if known else None

    def _parts(self, situation: Situation):
        """The first layer's sum at each decision kind (kinds, H) and each hand's vector for
        each hand in play order, the observer's last (56, H) each, as float32; the bound on
        the logits; and each first-layer unit's bound (H,)."""
        torch = self.torch
        base, slots = _decision_base(situation)
        columns = [*slots, codec421.HAND.start]
        probes = [base]
        for column in columns:
            rows = np.repeat(base[:1], N_HANDS, 0)
            rows[:, column : column + 3] = _HAND_DICE
            probes.append(rows)
        f = self.features(torch.as_tensor(np.concatenate(probes), dtype=torch.float32)).double()
        kinds, f = f[: len(base)], f[len(base) :].reshape(len(columns), N_HANDS, -1) - f[0]
        z_kind, z_hands = kinds @ self.w + self.b, f @ self.w  # (kinds, H), (groups, 56, H)
        # the largest sum of magnitudes in the network's product, and in ours
        s_net = (kinds @ self.w_abs).max(0).values + (f @ self.w_abs).max(1).values.sum(0) + self.b.abs()
        s_ours = z_kind.abs().max(0).values + z_hands.abs().max(1).values.sum(0)
        # each unit's bound, and the largest (what the whole situation is screened with)
        units = _gamma(self.first.in_features + 1) * s_net + _gamma(2 * len(probes)) * s_ours
        first = _gamma(self.first.in_features + 1) * float(s_net.max()) + _gamma(2 * len(probes)) * float(s_ours.max())
        bound = first
        for rows, rounding in self.carry:
            bound = rows * bound + rounding
        return z_kind.float(), z_hands.float(), bound, units.float()

    def keeps(self, situation: Situation, ask) -> np.ndarray:
        """The network's action at every decision of ``situation`` (flat, in
        ``decision_rows``' order), ``BLOCK`` blocks of 56 own hands per pass; ``ask(rows)``
        asks the network itself at those rows.  Returns (actions, rows asked again)."""
        torch = self.torch
        z_kind, z_hands, bound, units = self._parts(situation)
        units_late = self._carried(units)
        legal = np.tile(LEADER_LEGAL if situation.position == 0 else FOLLOWER_LEGAL, (self.BLOCK, 1))
        blocks = int(np.prod(situation.decision_shape)) // N_HANDS
        acts = np.empty(blocks * N_HANDS, dtype=np.int64)
        close_rows = []
        for first in range(0, blocks, self.BLOCK):
            rest = np.arange(first, min(first + self.BLOCK, blocks))
            n = len(rest) * N_HANDS
            played = []
            for _ in range(len(z_hands) - 1):
                rest, hand = np.divmod(rest, N_HANDS)
                played.append(hand)
            z = z_kind[torch.as_tensor(rest)]  # rest is now the decision kind
            for group, hand in enumerate(reversed(played)):
                z = z + z_hands[group][torch.as_tensor(hand)]
            h = (z[:, None, :] + z_hands[-1][None, :, :]).reshape(n, -1)
            late = []  # the inputs of the last tanh and the layers after it, to settle the close rows
            for i, layer in enumerate(self.rest):
                if i >= self.last_tanh:
                    late.append(h)
                h = torch.from_numpy(np.tanh(h.numpy())) if isinstance(layer, torch.nn.Tanh) else layer(h)
            masked = np.where(legal[:n], h.numpy(), -np.inf)
            top = np.partition(masked, -2, axis=1)
            acts[first * N_HANDS : first * N_HANDS + n] = masked.argmax(axis=1)
            open_ = np.flatnonzero(top[:, -1] - top[:, -2] <= 2 * bound)
            if len(open_):
                self.screened += len(open_)
                # each row's own bound from the last tanh on (the bound at its input carried
                # there for the whole situation); a row's own bound from the first layer on
                # cost more than asking the rows it settled (docs/training.md)
                at = torch.as_tensor(open_)
                rows = [x.index_select(0, at) for x in late]
                open_ = open_[self._unsettled(masked[open_], rows, units_late)]
                close_rows.append(first * N_HANDS + open_)
        close = np.concatenate(close_rows) if close_rows else np.empty(0, dtype=np.int64)
        if len(close):
            acts[close] = ask(close)
        return acts, len(close)

    def _carried(self, units):
        """The bound at the last tanh's input, from each first-layer unit's ``units``: carried
        through the layers before it as if every tanh had slope 1 (its largest) and every
        Linear's input were 1 in size (a tanh's output is within 1), the same for every row."""
        torch = self.torch
        e = units.double()
        for layer in self.rest[: self.last_tanh]:
            if isinstance(layer, torch.nn.Linear):
                w_abs, b_abs = (t.double() for t in self._abs(layer))
                g = _gamma(layer.in_features + 1)
                e = w_abs @ ((1 + g) * e + 2 * g) + 2 * g * b_abs
            else:
                e = e + 2 * TANH_ERROR
        return (e * self.SLACK).float()

    def _unsettled(self, masked: np.ndarray, inputs: list, e) -> np.ndarray:
        """Which of these rows (their masked logits, ours) the network might play otherwise,
        by a bound of each row's own: ``e`` the error at the input of the last tanh (a
        vector for every row), carried through it and the layers after it at the row's own
        values (``inputs``: each of those layers' input).  A tanh at ``a`` (ours) with error
        ``e`` moves by at most ``sech²(max(|a| - e, 0)) e`` (tanh's slope falls away from 0)
        plus its rounding;
        a Linear's error is ``|W| e`` plus both sides' rounding of their sums
        (``γ (|W| (2|x| + e) + 2|b|)``, ``x`` ours), one product: ``|W| ((1 + γ) e + 2γ|x|)``.
        The bounds are worked out in float32, non-negative sums each within ``γ`` of its
        exact value: ``SLACK`` covers them."""
        torch = self.torch
        e = e.expand(len(masked), -1)
        for layer, x in zip(self.rest[self.last_tanh :], inputs):
            if isinstance(layer, torch.nn.Linear):
                w_abs, b_abs = self._abs(layer)
                g = _gamma(layer.in_features + 1)
                e = ((1 + g) * e + (2 * g) * x.abs()) @ w_abs.T + (2 * g) * b_abs
            else:  # Tanh: sech²(t) = 4 exp(-2t) / (1 + exp(-2t))², no cancellation for large t
                q = torch.exp(-2 * (x.abs() - e).clamp(min=0))
                e = 4 * q / (1 + q) ** 2 * e + 2 * TANH_ERROR
        e = e.numpy().astype(np.float64) * self.SLACK
        best = masked.argmax(axis=1)
        rows = np.arange(len(masked))
        low = masked[rows, best] - e[rows, best]
        high = masked + e
        high[rows, best] = -np.inf
        return np.flatnonzero(~(low > high.max(axis=1)))

    def _abs(self, layer):
        """A Linear's |weights| and |bias| (float32), kept."""
        if layer not in self._abs_of:
            self._abs_of[layer] = (layer.weight.detach().abs(), layer.bias.detach().abs())
        return self._abs_of[layer]

    SLACK = 1.01  # float32 rounding of the bounds' own sums (a few layers of γ(257) ≈ 1.5e-5 each)

    BLOCK = 73  # blocks of 56 decisions per pass: 4,088 rows, as ppo_agent.EVAL_CHUNK


class AgentTable:
    """An agent asked at every decision it can meet, lazily by situation and cached:
    ``lead(s)`` its action table as leader (2, 56, 29), ``finals(s)`` its final-hand
    distribution as a follower (3, *played hands, 56) by n - 1."""

    def __init__(self, agent, name: str | None = None):
        self.agent = agent
        self.name = name or agent_name(agent)
        self._cache: dict[tuple[Situation, str], np.ndarray] = {}
        self.seconds = 0.0  # time spent asking the agent
        self.asked = 0  # decisions the agent was asked at
        self.asked_again = 0  # of them, those a network was asked again (``_SummedFirstLayer``)
        self._summed = None  # the network's _SummedFirstLayer, False if it has none, None: not yet looked

    def probs(self, situation: Situation) -> np.ndarray:
        """The agent's action probabilities at every decision of ``situation`` (obs shape[:-1] + (29,))."""
        with self._asking(), _inference():
            heuristic = _heuristic_follower(self.agent)
            if heuristic is not None and situation.position > 0 and situation.n_players == 3:
                return _heuristic_follower_probs(heuristic, situation)
            shape, flat, masks = self._decisions(situation)
            self.asked += len(flat)
            probs = batch_probs(self.agent, flat, masks, lambda i: str(codec421.decode(flat[i])))
        return probs.reshape(shape + (N_ACTIONS,))

    @contextmanager
    def _asking(self):
        """Counts the time spent asking the agent into ``seconds``."""
        start = time.perf_counter()
        try:
            yield
        finally:
            self.seconds += time.perf_counter() - start

    @staticmethod
    def _decisions(
        situation: Situation, start: int = 0, stop: int | None = None
    ) -> tuple[tuple[int, ...], np.ndarray, np.ndarray]:
        """The decisions of ``situation`` (rows ``start:stop`` of them, else all): their
        shape (all of them), observations and masks (one row each)."""
        shape = situation.decision_shape
        stop = int(np.prod(shape)) if stop is None else stop
        legal = LEADER_LEGAL if situation.position == 0 else FOLLOWER_LEGAL
        return shape, situation.decision_rows(start, stop), legal[np.arange(start, stop) % N_HANDS]

    def _keeps(self, situation: Situation) -> np.ndarray | None:
        """A deterministic agent's keep at every follower decision of ``situation`` (keep
        indices, shape (3, *played hands, 56)), asked through ``actions`` without a
        probability table: a network of known parts by ``_SummedFirstLayer``, any other
        agent ``ROWS_PER_ASK`` rows at a time (each batch's observations built for it
        alone); ``None`` for an agent without it."""
        if not hasattr(self.agent, "actions") or _heuristic_follower(self.agent) is not None:
            return None
        with self._asking(), _inference():
            shape = situation.decision_shape
            if self._summed is None:
                self._summed = (SUM_FIRST_LAYER and _SummedFirstLayer.of(self.agent)) or False
            if self._summed:
                legal = LEADER_LEGAL if situation.position == 0 else FOLLOWER_LEGAL

                def ask(rows: np.ndarray) -> np.ndarray:
                    obs = situation.rows_at(rows)
                    where = lambda i: str(codec421.decode(obs[i]))  # noqa: E731
                    return batch_actions(self.agent, obs, legal[rows % N_HANDS], where)

                acts, again = self._summed.keeps(situation, ask)
                self.asked += len(acts)
                self.asked_again += again
                return acts.reshape(shape) - 1
            acts = np.empty(int(np.prod(shape)), dtype=np.int64)
            for start in range(0, len(acts), ROWS_PER_ASK):
                stop = min(start + ROWS_PER_ASK, len(acts))
                _, flat, masks = self._decisions(situation, start, stop)
                where = lambda i, rows=flat: str(codec421.decode(rows[i]))  # noqa: E731
                acts[start:stop] = batch_actions(self.agent, flat, masks, where)
            self.asked += len(acts)
        return acts.reshape(shape) - 1  # action 1 + k keeps KEEPS[k]

    def fill(self, lay: "Layout") -> None:
        """Ask the agent at every situation of ``lay`` (what a table with it in every seat needs)."""
        for rnd in lay.rounds:
            for pos, seat in enumerate(rnd.order):
                situation = Situation.of(rnd.tokens, rnd.leader, seat)
                self.lead(situation) if pos == 0 else self.finals(situation)

    @_on_one_blas_thread
    def lead(self, situation: Situation) -> np.ndarray:
        key = (situation, "lead")
        if key not in self._cache:
            self._cache[key] = self.probs(situation)
        return self._cache[key]

    @_on_one_blas_thread
    def finals(self, situation: Situation) -> np.ndarray:
        key = (situation, "finals")
        if key not in self._cache:
            keeps = self._keeps(situation)
            self._cache[key] = (
                follower_finals(self.probs(situation)[..., 1:]) if keeps is None else follower_finals_keeps(keeps)
            )
        return self._cache[key]


def _heuristic_follower(agent):
    """The ``bots421.HeuristicAgent`` that makes this agent's follower moves, if any."""
    from games.dice421 import bots as bots421

    if type(agent) is bots421.HeuristicAgent:
        return agent
    if type(agent) is bots421.CautiousAgent and type(agent.follower) is bots421.HeuristicAgent:
        return agent.follower
    return None


def _heuristic_follower_probs(bot, situation: Situation) -> np.ndarray:
    """``bot.act`` at every follower decision of a three-player situation, one plan per
    (decision, hands played) instead of one ``act`` per row: what ``HeuristicAgent.q_values``
    computes (``follower_values`` of the hands played, the tokens by round position capped at
    ``TOKEN_CAP``, the rolls owed; ``KEEP_TRANSITIONS @ values``; the first best legal keep).

    For the last of three followers ``follower_values`` is the round's utility of its final
    hand with one roll owed, and its best keep's value with two (``_keep_q(...).max(1)``);
    ``round_utility`` is elementwise, so one call for every pair of hands played gives each
    pair's values to the bit, and only the small products stay per pair.

    ``bots421``'s batched path answers these rows too, but a whole last-follower situation
    (527k rows) takes it about 0.9 s and this under 0.2 s, over 91 situations for pot 15;
    ``tests/test_exact421n.py`` checks this against ``act`` row by row."""
    from games.dice421 import bots as bots421

    order = situation.order
    pos = situation.position
    tokens = tuple(min(situation.tokens[p], bots421.TOKEN_CAP) for p in order)
    q = np.empty((3,) + (N_HANDS,) * pos + (N_KEEPS,))  # by decision, hands played, keep
    if pos == 2:
        hands = np.arange(N_HANDS)
        ranks = [hands[:, None, None], hands[None, :, None], hands[None, None, :]]
        final = bots421.round_utility(ranks, tokens, 2, bot.bonus)  # (L, F1, own hand)
    for played in product(range(N_HANDS), repeat=pos):
        if pos == 2:
            owed = (final[played], bots421._keep_q(final[played]).max(1))  # follower_values(played, tokens, n)
        for d, (n, r) in enumerate(FOLLOWER_DECISIONS):
            values = owed[n - r - 1] if pos == 2 else bots421.follower_values(played, tokens, n, bot.bonus)[n - r - 1]
            q[(d, *played)] = bots421.KEEP_TRANSITIONS @ values
    _, slots = _best_slots(q, None, 0.0)  # the first best legal keep of each hand, as act's argmax
    probs = np.zeros(slots.shape + (N_ACTIONS,))
    np.put_along_axis(probs, 1 + KEEPS_OF[np.arange(N_HANDS), slots][..., None], 1.0, -1)
    return probs


def as_table(agent_or_table) -> AgentTable:
    return agent_or_table if isinstance(agent_or_table, AgentTable) else AgentTable(agent_or_table)


def prepared(agent, n_players: int) -> AgentTable:
    """``agent`` as tables of ``n_players`` ask it again and again: one ``AgentTable``,
    asked lazily and kept, to pass to every table (``reply420.prepared``'s counterpart)."""
    return as_table(agent)


# ---------------------------------------------------------------- evaluation


@lru_cache(maxsize=8)
def layout(n_players: int, pot: int) -> Layout:
    return Layout(n_players, pot)


def _class_probs(m: int, stops: np.ndarray, finals: list[np.ndarray]) -> np.ndarray:
    """P(each pattern of a round of m players), from the leader's stops (3, 56) and the
    followers' final-hand distributions (finals[0] (3, 56, 56), finals[1] (3, 56, 56, 56))."""
    index, keys = round_patterns(m)
    joint = stops[:, :, None] * finals[0]
    if m == 3:
        joint = joint[..., None] * finals[1]
    return np.bincount(index.ravel(), joint.sum(0).ravel(), minlength=len(keys))


def _row(lay: Layout, rnd: _Round, class_probs: np.ndarray) -> np.ndarray:
    """P(the next state, or the game's end with each loser), from a round's pattern probabilities."""
    return np.bincount(rnd.nxt, rnd.prob * class_probs[rnd.cls], minlength=lay.S + lay.n)


def _solve(lay: Layout, rows: np.ndarray) -> np.ndarray:
    """X[state, seat] = P(seat loses | state), from the one-round transition rows (S, S + n)."""
    a = np.eye(lay.S) - rows[:, : lay.S]
    return np.linalg.solve(a, rows[:, lay.S :]) if lay.S else np.zeros((0, lay.n))


def _fixed_parts(lay: Layout, tables: Sequence[AgentTable], rnd: _Round, skip: int | None = None):
    """The leader's stops and the followers' finals at a state, for every seat but ``skip``."""
    stops, finals = None, [None, None]
    for pos, seat in enumerate(rnd.order):
        if seat == skip:
            continue
        situation = Situation.of(rnd.tokens, rnd.leader, seat)
        if pos == 0:
            stops = leader_stops(tables[seat].lead(situation))
        else:
            finals[pos - 1] = tables[seat].finals(situation)
    return stops, finals


@dataclass(frozen=True)
class TableValues:
    """The exact result of a table: P(each seat does not lose), and by state."""

    not_losing: np.ndarray  # (n,)
    lose_by_state: np.ndarray  # (S, n): P(seat loses | discharge state)
    seconds: float


@_on_one_blas_thread
def evaluate_table(agents: Sequence, pot: int = 15) -> TableValues:
    """P(each seat does not lose) with ``agents[seat]`` (agents or ``AgentTable``s) at
    each seat of a 2- or 3-player table, the first player drawn uniformly (exact)."""
    start = time.perf_counter()
    tables = [as_table(a) for a in agents]
    lay = layout(len(tables), pot)
    rows = np.zeros((lay.S, lay.S + lay.n))
    for i, rnd in enumerate(lay.rounds):
        stops, finals = _fixed_parts(lay, tables, rnd)
        rows[i] = _row(lay, rnd, _class_probs(len(rnd.order), stops, finals))
    x = _solve(lay, rows)
    init = lay.start()
    lose = init[: lay.S] @ x + init[lay.S :]
    return TableValues(1.0 - lose, x, time.perf_counter() - start)


# ---------------------------------------------------------------- best reply


def _improve(rnd: _Round, pos: int, utility: np.ndarray, stops, finals, current, tol: float):
    """The best play of the seat at place ``pos`` in this round against the others' fixed
    play, given the value U of each tuple of final hands: (value, actions)."""
    m = len(rnd.order)
    if pos == 0:  # W[n-1, L]: the round's value when the leader ends on L after n rolls
        w = utility
        if m == 3:
            w = (finals[1] * w[None]).sum(-1)  # (3, L, F1)
        w = (finals[0] * (w if w.ndim == 3 else w[None])).sum(-1)  # (3, L)
        cur = (None, None) if current is None else current

        def decide(stop: np.ndarray, roll_on: np.ndarray, now):
            q = np.where(
                LEADER_LEGAL, np.concatenate([stop[:, None], np.repeat((T @ roll_on)[None], N_HANDS, 0)], 1), -np.inf
            )
            a, value = _keep_or(q, now, tol)
            return value, a

        v2, a2 = decide(w[1], w[2], cur[1])
        v1, a1 = decide(w[0], v2, cur[0])
        return float(FIRST_ROLL @ v1), np.stack([a1, a2])

    # A follower: its value before its rolls, for each context (hands before it) and n.
    def play(values, d, first=None):
        return _best_slots(values @ T.T, None if current is None else current[d], tol, first)

    if pos == 1 and m == 3:
        w = (finals[1] * utility[None]).sum(-1)  # (3, L, F1)
        v_n2, s0 = play(w[1], 0)
        v_n3_last, s2 = play(w[2], 2)
    else:  # the last roll's values are the round's whatever n is: one best keep for n = 2 and 3
        w = np.broadcast_to(utility, (3,) + utility.shape)  # (3, ..., own hand)
        q = utility @ T.T
        first = _best_slots(q, None, tol)
        v_n2, s0 = _best_slots(q, None if current is None else current[0], tol, first)
        v_n3_last, s2 = _best_slots(q, None if current is None else current[2], tol, first)
    v_n3, s1 = play(v_n3_last, 1)
    before = np.stack([w[0] @ FIRST_ROLL, v_n2 @ FIRST_ROLL, v_n3 @ FIRST_ROLL])  # (3, ...context)
    slots = np.stack([s0, s1, s2])
    if pos == 1:  # context (L,)
        return float((stops * before).sum()), slots
    return float((stops * (finals[0] * before).sum(-1)).sum()), slots  # context (L, F1)


@dataclass(frozen=True)
class BestReply:
    """The best stationary reply of ``seat`` to the other seats' fixed play."""

    seat: int
    value: float  # P(the reply does not lose), charge and first-player draw included
    value_by_state: np.ndarray  # (S,)
    iterations: int
    residual: float  # the most one more improvement step would gain at any state
    seconds: float
    pot: int = 15
    n_players: int = 3
    actions: dict = None  # state index -> the reply's leader actions (2, 56) or follower slots (3, ..., 56)

    def table(self) -> "AgentTable":
        """The reply as a table of one-hot decisions, to be evaluated like any agent's (at ``seat``)."""
        lay = layout(self.n_players, self.pot)
        table = AgentTable(None, "best reply")
        for i, acts in self.actions.items():
            rnd = lay.rounds[i]
            situation = Situation.of(rnd.tokens, rnd.leader, self.seat)
            if rnd.order.index(self.seat) == 0:
                lead = np.zeros((2, N_HANDS, N_ACTIONS))
                np.put_along_axis(lead, acts[..., None], 1.0, -1)
                table._cache[(situation, "lead")] = lead
            else:
                keeps = np.zeros(acts.shape + (N_KEEPS,))
                np.put_along_axis(keeps, KEEPS_OF[np.arange(N_HANDS), acts][..., None], 1.0, -1)
                table._cache[(situation, "finals")] = follower_finals(keeps)
        return table


@_on_one_blas_thread
def best_reply(
    agents: Sequence, seat: int, pot: int = 15, tol: float = DEFAULT_TOL, start_values: np.ndarray | None = None
) -> BestReply:
    """The exact best reply of ``seat`` when every other seat plays ``agents[other]`` (the
    agent at ``seat`` itself is not asked); policy iteration, see the module docstring.
    ``start_values``: P(seat does not lose | state) to improve on first (e.g. the seat's
    actual values, which saves an iteration), else 1."""
    start = time.perf_counter()
    tables = [as_table(a) if i != seat else None for i, a in enumerate(agents)]
    lay = layout(len(tables), pot)
    if not 0 <= seat < lay.n:
        raise ValueError(f"seat must be 0..{lay.n - 1}, got {seat!r}")
    terminal = np.array([0.0 if k == seat else 1.0 for k in range(lay.n)])
    mine = [i for i, rnd in enumerate(lay.rounds) if seat in rnd.order]
    parts = {i: _fixed_parts(lay, tables, lay.rounds[i], skip=seat) for i in mine}
    actions: dict[int, np.ndarray] = {}
    # P(seat does not lose | state); a seat that has left has won
    value = np.ones(lay.S) if start_values is None else np.array(start_values, dtype=float)
    rows = np.zeros((lay.S, lay.S + lay.n))
    for i, rnd in enumerate(lay.rounds):
        if seat not in rnd.order:
            rows[i] = _row(lay, rnd, _class_probs(len(rnd.order), *_fixed_parts(lay, tables, rnd)))
    residual = np.inf
    for iteration in range(1, MAX_ITERATIONS + 1):
        full = np.concatenate([value, terminal])
        changed, residual = False, 0.0
        for i in mine:
            rnd = lay.rounds[i]
            m, pos = len(rnd.order), rnd.order.index(seat)
            index, keys = round_patterns(m)
            per_class = np.bincount(rnd.cls, rnd.prob * full[rnd.nxt], minlength=len(keys))
            stops, finals = parts[i]
            q, acts = _improve(rnd, pos, per_class[index], stops, finals, actions.get(i), tol)
            residual = max(residual, q - value[i])
            if i not in actions or not np.array_equal(acts, actions[i]):
                changed = True
                actions[i] = acts
                rows[i] = _row(lay, rnd, _class_probs(m, *_played(pos, acts, stops, finals)))
        if not changed and iteration > 1:
            break
        lose = _solve(lay, rows)[:, seat]
        value = 1.0 - lose
    else:
        raise RuntimeError(f"policy iteration did not settle in {MAX_ITERATIONS} iterations (residual {residual})")
    init = lay.start()
    total = float(init[: lay.S] @ value + init[lay.S :] @ terminal)
    return BestReply(
        seat, total, value, iteration, float(residual), time.perf_counter() - start, lay.pot, lay.n, actions
    )


def _played(pos: int, acts: np.ndarray, stops, finals):
    """The round's leader stops and follower finals once the replying seat plays ``acts``."""
    finals = list(finals)
    if pos == 0:
        lead = np.zeros((2, N_HANDS, N_ACTIONS))
        np.put_along_axis(lead, acts[..., None], 1.0, -1)
        return leader_stops(lead), finals
    finals[pos - 1] = follower_finals_det(acts)
    return stops, finals


# ---------------------------------------------------------------- the whole table


def seat_figures(agents: Sequence, seat: int = 0, pot: int = 15, tol: float = DEFAULT_TOL) -> tuple[float, float]:
    """(P(not losing) of ``agents[seat]`` at this table, its best reply's), both exact."""
    tables = [as_table(a) for a in agents]
    result = evaluate_table(tables, pot)
    best = best_reply(tables, seat, pot, tol, 1.0 - result.lose_by_state[:, seat]).value
    return float(result.not_losing[seat]), float(best)


@dataclass(frozen=True)
class SeatFigures:
    seat: int
    name: str
    not_losing: float
    best_reply: float
    regret_pp: float


def table_figures(
    agents: Sequence, names: Sequence[str] | None = None, pot: int = 15, tol: float = DEFAULT_TOL
) -> tuple[list[SeatFigures], float]:
    """Each seat's P(not losing), its best reply's and its regret in pp; and the seconds taken."""
    start = time.perf_counter()
    tables = [as_table(a) for a in agents]
    names = list(names) if names is not None else [t.name for t in tables]
    result = evaluate_table(tables, pot)
    values = result.not_losing
    # One agent at every seat: the rules turn with the seats (H7, a uniform first player),
    # so every seat's best reply is the first seat's.
    same = all(t is tables[0] for t in tables)
    out = []
    for seat in range(len(tables)):
        if seat == 0 or not same:
            reply = best_reply(tables, seat, pot, tol, 1.0 - result.lose_by_state[:, seat]).value
        out.append(SeatFigures(seat, names[seat], float(values[seat]), reply, pp(reply - values[seat])))
    return out, time.perf_counter() - start


# ---------------------------------------------------------------- command line


def time_network(checkpoint: str | None = None, pot: int = 15, threads: int | None = None, out=print) -> float:
    """Print how long the exact three-player table of a network takes to make (every
    decision of every situation at ``pot``), then its own table's figures (``seat_figures``
    of the network in every seat); returns the table's seconds.  ``checkpoint``: a saved
    network, else an untrained one of the ``ppo-421-3p`` preset's size."""
    import torch

    from agents.ppo_agent import PPOAgent, build_policy
    from games.dice421.presets import PRESETS

    global ASK_THREADS
    if threads is not None:
        torch.set_num_threads(threads)
        ASK_THREADS = threads  # the command's own process: not restored
    if checkpoint:
        net = PPOAgent.load(checkpoint, expected_game="421")
    else:
        preset = next(p for p in PRESETS if p.name == "ppo-421-3p")
        torch.manual_seed(0)
        net = PPOAgent(build_policy("421", preset.policy, preset.env), "421", "untrained ppo-421-3p")
    lay = layout(3, pot)
    table = AgentTable(net)
    out(f"{table.name}, pot {pot}, asked on {ASK_THREADS or torch.get_num_threads()} torch thread(s)")
    start = time.perf_counter()
    table.fill(lay)
    seconds = time.perf_counter() - start
    out(
        f"table: {seconds:.1f} s ({table.asked:,} decisions asked, {table.asked_again:,} twice; "
        f"{table.asked / seconds:,.0f} a second)"
    )
    start = time.perf_counter()
    value, best = seat_figures([table] * 3, 0, pot)
    out(f"own table: {time.perf_counter() - start:.1f} s (P(not losing) {value:.6f}, best reply {best:.6f})")
    return seconds


# ---------------------------------------------------------------- command line: a check against the engine


def main(argv: Sequence[str] | None = None) -> None:
    """Exact figures of one 421 table against engine games: ``python -m games.dice421.exactn
    --agents heuristic,greedy421,random --pot 15 --games 20000 --seed 0`` prints each seat's
    exact P(not losing), the games' estimate and how many standard errors apart they are."""
    import argparse

    from agents import make_agent
    from core.dice import RandomDice
    from core.engine import play_out

    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("--agents", default="heuristic,greedy421,random", help="2 or 3 bot names, by seat")
    parser.add_argument("--pot", type=int, default=15)
    parser.add_argument("--games", type=int, default=20_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--time-network",
        nargs="?",
        const="",
        metavar="CHECKPOINT",
        help="time the exact three-player table of a network (a checkpoint, else an untrained "
        "network of ppo-421-3p's size, whose near-tied moves are slower: more are asked again), "
        "then its own table",
    )
    parser.add_argument("--threads", type=int, help=f"torch threads for --time-network (default: {ASK_THREADS})")
    args = parser.parse_args(argv)
    if args.time_network is not None:
        time_network(args.time_network or None, args.pot, args.threads)
        return
    names = args.agents.split(",")
    bots = [make_agent("421", name, seed=args.seed + 1 + i) for i, name in enumerate(names)]
    start = time.perf_counter()
    exact = evaluate_table(bots, args.pot).not_losing
    print(f"exact: {time.perf_counter() - start:.1f} s")
    dice, wins = RandomDice(args.seed), np.zeros(len(bots))
    start = time.perf_counter()
    for _ in range(args.games):
        game = play_out(g.Game421(len(bots), args.pot, dice=dice), bots, codec421)
        wins += np.array(game.returns()) > 0
    print(f"{args.games} engine games: {time.perf_counter() - start:.1f} s")
    for seat, name in enumerate(names):
        p, f = exact[seat], wins[seat] / args.games
        z = (f - p) / np.sqrt(p * (1 - p) / args.games)
        print(f"seat {seat + 1} {name:<12} exact {p:.6f}  games {f:.6f}  ({z:+.2f} standard errors)")


if __name__ == "__main__":
    from core.cli import run_interruptible

    run_interruptible(main)
