"""Exact N-player 420 at a table of fixed policies: each seat's P(not losing),
and the best reply of one seat with its value and regret.

With more than two players there is no single optimal bot, but a bot can be
measured exactly: fix every other seat's policy and the best the remaining
seat can do is a Markov decision problem.  Its value minus the seat's actual
P(not losing) is the seat's *regret* at that table.

Why it is small.  The full state of a four-player round is every hand (126 or
none) and whose turn it is, about 1e9 states.  Three facts shrink it:

* Nobody touches another player's dice, and an own-hand opponent (one whose
  keep depends on its own hand alone, ``race420.own_hand_table``) moves its
  hand by a fixed Markov chain.  What an opponent's hand tells about the future
  is only its next-hand distribution (the policy row times the roll table), so
  hands with the same row are the same state for everyone else ("lumping").
  Every 420 bot of the registry has at most 15 such classes (the two-player
  optimum is one: its keep never depends on the opponent's hand).
* The best reply only decides at its own turns, so its value is an array over
  (own hand, class of each opponent, clockwise from the seat).  Each
  opponent's turn is a contraction of that array along the opponent's axis
  (a small matrix product), and one sweep of value iteration is: the seat's
  keep (a max over the roll table), then every opponent's turn in order.  At
  its own turn the seat's hand matters only through the keeps it allows (15
  legal sets), so four players take 15 x 14^3 numbers, not 127^4 x 4.
* Rounds are independent restarts (R7): when a round is won the rest is a
  smaller game with fresh hands led by a known player, so a round's outcomes
  are constants (the smaller game's values) and the game is a recursion over
  (seats remaining, round's Player 1), memoised.

What the best reply may look at.  It is the optimum of the MDP over the game's
full state, which includes who led the round (it decides who leads the next
one).  An agent sees the hands, not the leader; :func:`leader_matters` says
whether the best keeps ever depend on it (if not, the best reply can be played
from the observation alone).

What is exact.  With own-hand seats, per-seat P(not losing) is a finite
computation on the hitting-time laws of ``race420.hitting_distribution`` (tail
below 1e-17).  The best reply (and the value of any policy by the same
recursion, a check) is value iteration until a sweep changes nothing by more
than ``tol`` (1e-15 by default, as ``solver420``); every turn ends the round
with a positive chance, so it converges geometrically.  Nothing is sampled.

Agents that look at other hands (e.g. a network trained for the table) make
the races coupled, so lumping does not apply: they are tabulated at every
state of every round (:func:`joint_table`, 121^m decisions per seat and
round) and the rounds are solved over the full state (:func:`solve_round_joint`,
126^m values).  Three players: 1.8e6 decisions per seat and round and about a
minute per round solved on one shared core.  Four players would be 2.1e8
decisions per seat to tabulate and 2e9 bytes per value array: refused with
one line (``JOINT_MAX_PLAYERS``).
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from games.dice420 import race as race420
from games.dice420 import solver as solver420
from agents.base import agent_name, batch_probs, pp
from core.spec import NoExactFigure
from games.dice420 import codec as codec420
from games.dice420 import game as g

N_HANDS = len(g.HANDS)
NO_HAND = N_HANDS  # index of "no hand yet" (a round's first roll, R1) in a class map
DEFAULT_TOL = solver420.DEFAULT_TOL
MAX_SWEEPS = 100_000
# The largest best-reply array (own hands x opponent classes) this module builds:
# 2.5e7 float64 numbers are 200 MB per array, and a sweep holds a few of them.
MAX_STATES = 25_000_000
_WIN_ROUND = 1.0  # a seat that wins a round drops out and does not lose (R7)


# --- the table ------------------------------------------------------------------
def check_players(n_players: int) -> int:
    if (
        isinstance(n_players, bool)
        or not isinstance(n_players, int)
        or not (g.MIN_PLAYERS <= n_players <= g.MAX_PLAYERS)
    ):
        raise ValueError(f"420 is played by {g.MIN_PLAYERS} to {g.MAX_PLAYERS} players, got {n_players!r}")
    return n_players


def seat_policy(agent, seat: int, n_players: int) -> np.ndarray:
    """The own-hand policy (126 x 14) of the agent at ``seat``, or one clear ``ValueError``.

    ``agent`` is anything ``race420.policy_matrix`` reads: an agent, a bot name,
    or a table of keeps or probabilities over ``game420.HANDS``."""
    try:
        if not isinstance(agent, (str, np.ndarray)) and (hasattr(agent, "act") or hasattr(agent, "action_probs")):
            return race420.policy_matrix(own_hand_table(agent, n_players))
        return race420.policy_matrix(agent)
    except ValueError as e:
        who = agent_name(agent) if hasattr(agent, "act") else "the policy"
        raise ValueError(
            f"{g.seat_name(seat, n_players)} ({who}): exact {n_players}-player figures need agents that play "
            f"from their own hand alone: {str(e).splitlines()[0]}"
        ) from None


def probe_tables(n_players: int) -> list[tuple[g.Hand | None, ...]]:
    """The other seats' hands (clockwise from the mover) shown to an agent to check
    that it plays from its own hand at a table of ``n_players``: every probe hand
    of ``race420.PROBE_OPPONENTS`` in every seat, and seats with no hand (a player
    out, or not rolled yet this round)."""
    probes = race420.PROBE_OPPONENTS
    tables = [tuple(probes[(k + j) % len(probes)] for j in range(n_players - 1)) for k in range(len(probes))]
    if n_players > 2:
        tables += [(probes[k],) + (None,) * (n_players - 2) for k in range(len(probes))]
        tables += [(None,) * (n_players - 2) + (probes[k],) for k in range(len(probes))]
    return tables


FULL_CHECK_MAX_PLAYERS = 3  # every table of three is 1.9e6 decisions to ask; of four, 2.5e8


def _tables(n_players: int, declared: bool):
    """Batches of other seats' hands (clockwise from the mover; ``None``: no hand) to ask an
    agent at: the probe tables one by one (``declared``), or every table, by the first
    other seat's hand (a few seconds for a network at three players)."""
    if declared:
        yield from ([others] for others in probe_tables(n_players))
        return
    options = [*g.HANDS, None]
    for first in options:
        yield [(first, *rest) for rest in itertools.product(options, repeat=n_players - 2)]


def own_hand_table(agent, n_players: int) -> np.ndarray:
    """The agent's policy (126 x 14) as it plays at a table of ``n_players``, asked with
    that table's observations; ``ValueError`` if its answer changes with the other hands,
    or if it cannot play at such a table.

    An agent that declares ``own_hand = True`` (the 420 bots, random) is asked at the
    probe tables of :func:`probe_tables`, a check against mistakes.  Any other agent (a
    trained network) could play differently at tables no probe shows, so it is asked at
    every table, up to ``FULL_CHECK_MAX_PLAYERS`` players; beyond, ``ValueError``: it
    cannot be shown to play from its own hand."""
    declared = bool(getattr(agent, "own_hand", False))
    if not declared and n_players > FULL_CHECK_MAX_PLAYERS:
        raise ValueError(
            f"{agent_name(agent)} is not known to play from its own hand alone, and asking it at "
            f"every table of {n_players} ({127 ** (n_players - 1) * 121:,} decisions) is out of reach"
        )
    live = np.flatnonzero(~solver420.WIN)
    no_hand = codec420.encode(g.HANDS[0], *[None] * (n_players - 1))[4:8]  # what the codec shows for none
    dice = np.vstack([codec420.HAND_DICE, no_hand])  # by hand index; 126: no hand
    first = None
    for tables in _tables(n_players, declared):
        index = np.array(
            [[N_HANDS if h is None else g.HAND_INDEX[g.canonical(h)] for h in others] for others in tables]
        )
        obs = np.concatenate(
            [
                np.tile(dice[live], (len(tables), 1)),
                *[np.repeat(dice[index[:, k]], len(live), axis=0) for k in range(n_players - 1)],
            ],
            axis=1,
        )
        masks = np.tile(codec420.LEGAL_MASKS[live], (len(tables), 1))

        def where(i, tables=tables):
            return (
                f"hand {g.format_hand(g.HANDS[live[i % len(live)]])} against "
                f"{', '.join(map(g.format_hand, tables[i // len(live)]))}"
            )

        table = batch_probs(agent, obs, masks, where).reshape(len(tables), len(live), -1)
        if first is None:
            first, first_others = table[0], tables[0]
        diff = np.abs(table - first).max(axis=2)
        if np.any(diff > 1e-12):
            t, i = np.unravel_index(int(np.argmax(diff)), diff.shape)
            raise ValueError(
                f"{agent_name(agent)} does not play from its own hand alone: with hand "
                f"{g.format_hand(g.HANDS[live[i]])} it answers differently against "
                f"{', '.join(map(g.format_hand, first_others))} and against {', '.join(map(g.format_hand, tables[t]))}"
            )
    probs = np.zeros((N_HANDS, g.N_ACTIONS))
    probs[live] = first
    probs[solver420.WIN, g.REROLL_ALL] = 1.0
    return probs


def prepared(agent, n_players: int) -> np.ndarray:
    """``agent`` as tables of ``n_players`` ask it again and again: its own-hand policy
    (126 x 14), checked once (``own_hand_table``; ``ValueError`` for an agent that looks
    at other hands, whose tables take the full state: ``seat_figures`` with the agent)."""
    return agent if isinstance(agent, np.ndarray) else own_hand_table(agent, n_players)


def live_table(agent, n_players: int) -> np.ndarray:
    """An own-hand agent as the table ``games.dice420.vec.Vec420Env`` plays at ``n_players``:
    keep indices (126,) if it is deterministic, else probabilities (126, 14);
    ``ValueError`` for an agent that looks at other hands (ask it live instead)."""
    probs = own_hand_table(agent, n_players)
    return probs.argmax(axis=1) if np.all((probs == 0) | (probs == 1)) else probs


def table_policies(n_players: int, seats: Sequence) -> list[np.ndarray]:
    """Every seat's own-hand policy, checked (one agent or table per seat, seat 0 first)."""
    check_players(n_players)
    if len(seats) != n_players:
        raise ValueError(f"a table of {n_players} needs {n_players} policies, got {len(seats)}")
    return [seat_policy(a, s, n_players) for s, a in enumerate(seats)]


def first_players(n_players: int) -> list[int]:
    """The equally likely Player 1s of the first round: seat 0 (Red) with two
    players (R6, as ``Game420(2)``), every seat with more (R7)."""
    return [g.RED] if n_players == 2 else list(range(n_players))


# --- every seat's P(not losing) under the fixed policies --------------------------
def round_wins(laws: Sequence[np.ndarray]) -> np.ndarray:
    """w[j] = P(the player at position j of the round's turn order wins the round),
    when the players' hitting times (``race420.hitting_distribution``) are
    independent with laws ``laws[j]``:

        w[j] = sum_t P(T_j = t) prod_{i<j} P(T_i > t) prod_{i>j} P(T_i >= t).

    With one law for everyone this is ``race420.round_win_probabilities``."""
    length = max(len(d) for d in laws)
    dist = np.zeros((len(laws), length))
    for j, d in enumerate(laws):
        dist[j, : len(d)] = d
    at_least = np.cumsum(dist[:, ::-1], axis=1)[:, ::-1]  # P(T >= t), summed from the tail
    more = np.clip(at_least - dist, 0.0, None)  # P(T > t)
    out = np.zeros(len(laws))
    for j in range(len(laws)):
        term = dist[j].copy()
        for i in range(len(laws)):
            if i != j:
                term *= more[i] if i < j else at_least[i]
        out[j] = term.sum()
    return out


def loser_probabilities(
    n_players: int, policies: Sequence[np.ndarray], leaders: Sequence[int] | None = None
) -> np.ndarray:
    """P(seat s is the last one left, i.e. loses), for every seat, when seat s plays
    ``policies[s]`` (own-hand, 126 x 14), averaged over the first round's Player 1
    (``leaders``, default :func:`first_players`)."""
    laws = [race420.hitting_distribution(p) for p in policies]
    memo: dict[tuple[frozenset, int], np.ndarray] = {}

    def loser(remaining: frozenset, leader: int) -> np.ndarray:
        key = (remaining, leader)
        if key not in memo:
            out = np.zeros(n_players)
            order = race420.turn_order(remaining, leader, n_players)
            for seat, w in zip(order, round_wins([laws[s] for s in order])):
                rest = remaining - {seat}
                if len(rest) == 1:
                    out[next(iter(rest))] += w
                else:
                    out += w * loser(rest, race420.next_player_one(rest, leader, n_players))
            memo[key] = out
        return memo[key]

    leaders = first_players(n_players) if leaders is None else list(leaders)
    everyone = frozenset(range(n_players))
    return sum(loser(everyone, p) for p in leaders) / len(leaders)


def not_losing(n_players: int, policies: Sequence[np.ndarray], leaders: Sequence[int] | None = None) -> np.ndarray:
    """P(seat s does not lose), for every seat (see :func:`loser_probabilities`)."""
    return 1.0 - loser_probabilities(n_players, policies, leaders)


# --- an opponent, lumped ----------------------------------------------------------
@dataclass(frozen=True)
class Opponent:
    """An own-hand opponent as a Markov chain over classes of hands.

    ``classes[h]`` is the class of hand h (``classes[NO_HAND]``: no hand yet;
    -1 for hands totalling 20, which end the round); two hands share a class
    when the policy plays the same keep distribution from them, so their next
    hands have the same law.  At its turn an opponent of class c makes 20 with
    probability ``win[c]``, else moves to class c2 with probability ``move[c, c2]``."""

    seat: int
    classes: np.ndarray
    move: np.ndarray
    win: np.ndarray

    @property
    def size(self) -> int:
        return len(self.win)


def lump(policy: np.ndarray, seat: int = 0) -> Opponent:
    """The opponent playing own-hand ``policy`` (126 x 14), lumped by policy row."""
    rows = np.vstack([policy, np.eye(g.N_ACTIONS)[g.REROLL_ALL]])  # NO_HAND: roll all four (R1)
    live = np.append(~solver420.WIN, True)
    classes = np.full(N_HANDS + 1, -1)
    firsts: dict[bytes, int] = {}
    reps = []
    for h in np.flatnonzero(live):
        key = rows[h].tobytes()
        if key not in firsts:
            firsts[key] = len(reps)
            reps.append(h)
        classes[h] = firsts[key]
    step = rows[reps] @ solver420.T  # (K, 126): next-hand law of each class
    member = np.zeros((N_HANDS, len(reps)))
    member[np.flatnonzero(~solver420.WIN), classes[:N_HANDS][~solver420.WIN]] = 1.0
    classes.setflags(write=False)
    return Opponent(seat, classes, step @ member, step @ solver420.WIN.astype(float))


def _opponent_turn(values: np.ndarray, opp: Opponent, payoff: float, axis: int) -> np.ndarray:
    """The value before ``opp`` moves, from ``values`` after it (along ``axis``):
    it wins the round (``payoff`` for the seat) or moves to a new class."""
    before, after = int(np.prod(values.shape[:axis])), int(np.prod(values.shape[axis + 1 :]))
    if after == 1:  # the last axis: one matrix product
        moved = (values.reshape(before, opp.size) @ opp.move.T).reshape(values.shape)
    else:  # a batch of products, each (K x K) @ (K x after), with no transposed copies
        moved = np.matmul(opp.move, values.reshape(before, opp.size, after)).reshape(values.shape)
    shape = [1] * values.ndim
    shape[axis] = opp.size
    return moved + payoff * opp.win.reshape(shape)


# --- one round ----------------------------------------------------------------------
@dataclass(frozen=True)
class RoundReply:
    """The seat's round led by ``leader`` among ``remaining``, solved.

    ``q[k, c1, ..., c_{m-1}]``: the seat's P(not losing) when it keeps ``KEEPS[k]``
    with the opponents (clockwise from it, ``opponents``) in those classes (over
    the full state, :func:`solve_seat_joint`: their hands, and ``opponents`` is
    empty); ``value``: from the start of the round (every hand empty)."""

    remaining: tuple[int, ...]
    leader: int
    opponents: tuple[Opponent, ...]
    payoffs: tuple[float, ...]  # the seat's P(not losing) when each opponent wins the round
    q: np.ndarray
    value: float
    sweeps: int

    def keeps(self) -> np.ndarray:
        """The best keep index for every hand and opponent classes (the first of ties)."""
        return np.where(_legal(self.q.ndim), self.q[None], -np.inf).argmax(axis=1)


def _legal(ndim: int) -> np.ndarray:
    return solver420.LEGAL.reshape(solver420.LEGAL.shape + (1,) * (ndim - 1))


def _best(q: np.ndarray) -> np.ndarray:
    return np.where(_legal(q.ndim), q[None], -np.inf).max(axis=1)


def _groups(rows: np.ndarray) -> tuple[np.ndarray, list[int]]:
    """Hands (not totalling 20) grouped by identical ``rows[h]``: (group of each hand,
    -1 for hands totalling 20; a representative hand of each group)."""
    group = np.full(N_HANDS, -1)
    firsts: dict[bytes, int] = {}
    reps: list[int] = []
    for h in np.flatnonzero(~solver420.WIN):
        key = np.ascontiguousarray(rows[h]).tobytes()
        if key not in firsts:
            firsts[key] = len(reps)
            reps.append(int(h))
        group[h] = firsts[key]
    return group, reps


def check_size(groups: int, ks: Sequence[int]) -> None:
    """``ValueError`` (one line) if a round of ``groups`` own-hand groups against opponents of
    ``ks`` classes needs more than ``MAX_STATES`` states."""
    states = groups * int(np.prod(ks))
    if states > MAX_STATES:
        raise ValueError(
            f"the best reply at this table needs {states:,} states "
            f"({' x '.join(map(str, (groups, *ks)))}), more than this module builds ({MAX_STATES:,})"
        )


def solve_round(
    opponents: Sequence[Opponent],
    payoffs: Sequence[float],
    position: int,
    policy: np.ndarray | None = None,
    keeps: np.ndarray | None = None,
    tol: float = DEFAULT_TOL,
) -> tuple[np.ndarray, float, int]:
    """(q, value from the round's start, sweeps) for the seat at ``position`` of the
    round's turn order, with ``opponents`` clockwise from it.

    With neither ``policy`` nor ``keeps`` the seat plays its best reply (value
    iteration on the max); with an own-hand ``policy`` (126 x 14) it follows it;
    with ``keeps``, keep indices of shape (126, K1, ..., K_{m-1}), it plays that
    keep in that state.

    The seat's own hand is lumped too: what it is worth at the seat's turn
    depends only on the keeps it allows (15 legal sets) or, for a fixed own-hand
    policy, on the policy's row, so the value array is (groups, K1, ..., K_{m-1})."""
    ks = tuple(o.size for o in opponents)
    if keeps is not None:
        keeps = np.asarray(keeps)
        if keeps.shape != (N_HANDS, *ks) or not np.issubdtype(keeps.dtype, np.integer):
            raise ValueError(f"a keep table by state must be integers of shape {(N_HANDS, *ks)}, got {keeps.shape}")
        legal_keeps = np.take_along_axis(_legal(keeps.ndim) & np.ones((1, 1, *ks), bool), keeps[:, None], axis=1)
        if np.any(~legal_keeps[:, 0] & ~solver420.WIN.reshape((N_HANDS,) + (1,) * len(ks))):
            raise ValueError("a keep table by state must hold legal keep indices")
        group, reps = _groups(np.concatenate([keeps.reshape(N_HANDS, -1), solver420.LEGAL], axis=1))
    else:
        group, reps = _groups(solver420.LEGAL if policy is None else policy)
    check_size(len(reps), ks)
    live = np.flatnonzero(~solver420.WIN)
    member = np.zeros((N_HANDS, len(reps)))
    member[live, group[live]] = 1.0
    to_group = solver420.T @ member  # (14, G): P(the new hand is in group g and not 20 | keep)
    to_win = (solver420.T @ solver420.WIN.astype(float)).reshape((-1,) + (1,) * len(ks))
    legal = [np.flatnonzero(solver420.LEGAL[h]) for h in reps]
    values = np.zeros((len(reps), *ks))  # the seat to move, by group of its hand
    for sweep in range(1, MAX_SWEEPS + 1):  # noqa: B007 (returned after the loop)
        after = values
        for i in reversed(range(len(opponents))):  # the last to move before the seat first
            after = _opponent_turn(after, opponents[i], payoffs[i], axis=i + 1)
        q = _WIN_ROUND * to_win + np.tensordot(to_group, after, axes=(1, 0))
        if keeps is not None:
            new = np.take_along_axis(q, keeps[reps], axis=0)
        elif policy is None:
            new = np.stack([q[allowed].max(axis=0) for allowed in legal])
        else:
            new = np.tensordot(policy[reps], q, axes=(1, 0))
        delta = float(np.abs(new - values).max())
        values = new
        if delta <= tol:
            break
    else:
        raise RuntimeError(f"value iteration did not converge to {tol} in {MAX_SWEEPS} sweeps (last change {delta})")
    start = q[g.REROLL_ALL]  # the seat's first roll (R1), opponents' axes from axis 0
    before = len(opponents) - position  # opponents[before:] move before the seat in the first lap
    for i in reversed(range(before, len(opponents))):
        start = _opponent_turn(start, opponents[i], payoffs[i], axis=i)
    value = float(start[tuple(o.classes[NO_HAND] for o in opponents)])
    return q, value, sweep


# --- the game: rounds and their recursion ---------------------------------------------
@dataclass
class Reply:
    """The best reply of ``seat`` (or the evaluation of its ``policy``) at a table.

    ``value`` is its P(not losing) with the first Player 1 as the rules draw it
    (:func:`first_players`); ``rounds`` every round it solved, by (remaining, leader)."""

    n_players: int
    seat: int
    value: float = 0.0
    rounds: dict[tuple[tuple[int, ...], int], RoundReply] = field(default_factory=dict)
    seconds: float = 0.0


def _solve_game(n_players: int, seat: int, leaders: Sequence[int] | None, solve) -> Reply:
    """The recursion over rounds (R7) for ``seat``: ``solve(remaining, leader, position,
    clockwise, payoffs)`` solves one round (the seat at ``position`` of its turn
    order, the other seats ``clockwise`` from it, ``payoffs[i]`` the seat's value
    when ``clockwise[i]`` wins it) and returns its :class:`RoundReply`."""
    check_players(n_players)
    if not 0 <= seat < n_players:
        raise ValueError(f"seat must be in 0..{n_players - 1}, got {seat}")
    t0 = time.perf_counter()
    reply = Reply(n_players, seat)

    def round_value(remaining: frozenset, leader: int) -> float:
        if seat not in remaining:
            return 1.0
        if len(remaining) == 1:
            return 0.0
        key = (tuple(sorted(remaining)), leader)
        if key not in reply.rounds:
            order = race420.turn_order(remaining, leader, n_players)
            position = order.index(seat)
            clockwise = order[position + 1 :] + order[:position]
            payoffs = []
            for s in clockwise:
                rest = remaining - {s}
                payoffs.append(
                    round_value(rest, race420.next_player_one(rest, leader, n_players)) if len(rest) > 1 else 0.0
                )  # the seat is the one left: it loses
            reply.rounds[key] = solve(key[0], leader, position, clockwise, tuple(payoffs))
        return reply.rounds[key].value

    leaders = first_players(n_players) if leaders is None else list(leaders)
    everyone = frozenset(range(n_players))
    reply.value = sum(round_value(everyone, p) for p in leaders) / len(leaders)
    reply.seconds = time.perf_counter() - t0
    return reply


def solve_seat(
    n_players: int,
    policies: Sequence[np.ndarray | None],
    seat: int,
    policy: np.ndarray | None = None,
    tol: float = DEFAULT_TOL,
    leaders: Sequence[int] | None = None,
    keeps=None,
) -> Reply:
    """The best reply of ``seat`` to the other seats' own-hand ``policies``
    (``policies[seat]`` is not read), or with ``policy`` the exact value of that
    policy at the seat, computed by the same recursion (a check of
    :func:`not_losing`).  ``keeps(remaining, leader)``, if given, is a keep table
    by state for each round (see :func:`solve_round`) that the seat follows."""
    lumped = {s: lump(policies[s], s) for s in range(n_players) if s != seat}
    if keeps is None:  # the round of the whole table is the largest, and solved last: refuse it first
        check_size(len(_groups(solver420.LEGAL if policy is None else policy)[1]), [o.size for o in lumped.values()])

    def solve(remaining, leader, position, clockwise, payoffs):
        opponents = tuple(lumped[s] for s in clockwise)
        table = None if keeps is None else keeps(remaining, leader)
        q, value, sweeps = solve_round(opponents, payoffs, position, policy, table, tol)
        return RoundReply(remaining, leader, opponents, payoffs, q, value, sweeps)

    return _solve_game(n_players, seat, leaders, solve)


def best_reply(n_players: int, policies: Sequence[np.ndarray | None], seat: int, tol: float = DEFAULT_TOL) -> Reply:
    """The best reply of ``seat`` to the others' own-hand ``policies``, with its value."""
    return solve_seat(n_players, policies, seat, None, tol)


def worse_choices(reply: Reply, policy: np.ndarray, tol: float = 1e-12) -> int:
    """How many (round, hand, opponent classes) states in which ``policy`` puts
    probability on a keep worth less than the best by more than ``tol``.  0 means
    the policy is a best reply at that table."""
    count = 0
    for r in reply.rounds.values():
        best = _best(r.q)
        chosen = np.where(policy.reshape(policy.shape + (1,) * (r.q.ndim - 1)) > 0, r.q[None], np.inf).min(axis=1)
        count += int(((chosen < best - tol) & ~solver420.WIN.reshape((N_HANDS,) + (1,) * (r.q.ndim - 1))).sum())
    return count


def leader_matters(reply: Reply, tol: float = 1e-12) -> int:
    """How many (remaining, hand, opponent classes) states at which no single keep
    is best (within ``tol``) for every round leader.  0 means the best reply can
    be played without knowing who led the round (which the observation does not show)."""
    by_remaining: dict[tuple[int, ...], list[RoundReply]] = {}
    for r in reply.rounds.values():
        by_remaining.setdefault(r.remaining, []).append(r)
    count = 0
    for rounds in by_remaining.values():
        common = None
        for r in rounds:
            legal = _legal(r.q.ndim)
            q = np.where(legal, r.q[None], -np.inf)
            near = q >= q.max(axis=1, keepdims=True) - tol
            common = near if common is None else common & near
        count += int((~common.any(axis=1) & ~solver420.WIN.reshape((N_HANDS,) + (1,) * (common.ndim - 2))).sum())
    return count


# --- agents that look at other hands: the full state, three players at most ---------
JOINT_MAX_PLAYERS = 3  # four would be 1.2e8 decisions per seat to tabulate (below)
_CHUNK = 200_000  # observations per call when tabulating an agent
_LIVE = np.flatnonzero(~solver420.WIN)


def joint_table(agent, seat: int, n_players: int, remaining: Sequence[int]) -> np.ndarray:
    """How the agent at ``seat`` plays in a round among ``remaining`` (sorted seats),
    at every state: keep indices (or probabilities over ``KEEPS``, last axis) over
    the hands of the seats of ``remaining``, one axis each, in that order.

    The agent is asked once per state (121^m of them, in chunks) with the
    observation its seat sees there: its hand, then every other seat clockwise,
    no hand for those out of the game.  States where a hand totals 20 never
    occur and hold ``REROLL_ALL``."""
    remaining = tuple(remaining)
    m = len(remaining)
    grids = np.meshgrid(*([_LIVE] * m), indexing="ij")
    states = np.stack([x.ravel() for x in grids], axis=1)  # hand index of each seat of remaining
    columns = []
    for step in range(n_players):
        other = (seat + step) % n_players
        columns.append(
            codec420.HAND_DICE[states[:, remaining.index(other)]]
            if other in remaining
            else np.zeros((len(states), g.N_DICE), dtype=np.int64)
        )
    obs = np.concatenate(columns, axis=1)
    masks = codec420.LEGAL_MASKS[states[:, remaining.index(seat)]]

    def where(i: int) -> str:
        return f"{g.seat_name(seat, n_players)} with " + ", ".join(
            f"{g.seat_name(s, n_players)} {g.format_hand(g.HANDS[states[i, a]])}" for a, s in enumerate(remaining)
        )

    probs = np.concatenate(
        [
            batch_probs(agent, obs[i : i + _CHUNK], masks[i : i + _CHUNK], lambda j, i=i: where(i + j))
            for i in range(0, len(obs), _CHUNK)
        ]
    )
    if np.all((probs == 0) | (probs == 1)):
        table = np.full((N_HANDS,) * m, g.REROLL_ALL, dtype=np.int64)
        table[tuple(states.T)] = probs.argmax(axis=1)
        return table
    table = np.zeros((N_HANDS,) * m + (g.N_ACTIONS,))
    table[..., g.REROLL_ALL] = 1.0
    table[tuple(states.T)] = probs
    return table


def _joint_turn(values: np.ndarray, table: np.ndarray, payoff: float, axis: int) -> np.ndarray:
    """The value before the player of hand axis ``axis`` moves, from ``values`` after
    its move: it keeps by ``table`` (keep indices, or probabilities on a last axis,
    over the same hand axes), rolls, and wins the round (``payoff``) or moves on."""
    win = solver420.WIN.reshape([N_HANDS if a == axis else 1 for a in range(values.ndim)])
    q = np.expand_dims(np.tensordot(solver420.T, np.where(win, payoff, values), axes=(1, axis)), axis + 1)
    if table.ndim == values.ndim:
        return np.take_along_axis(q, table[None], axis=0)[0]
    return np.einsum("k...,...k->...", np.broadcast_to(q, (g.N_ACTIONS,) + values.shape), table)


def solve_round_joint(
    tables: Sequence[np.ndarray],
    payoffs: Sequence[float],
    position: int,
    policy: np.ndarray | None = None,
    tol: float = DEFAULT_TOL,
) -> tuple[np.ndarray, float, int]:
    """:func:`solve_round` over the full state, for opponents that may look at every
    hand: axis 0 is the seat's hand, axis i the hand of the i-th opponent clockwise,
    and ``tables[i]`` is that opponent's play over those axes (:func:`joint_table`,
    transposed).  ``policy``: the seat's own play as such a table, or None for its
    best reply.  Returns (q[k, opponents' hands], value from the round's start, sweeps)."""
    m = len(tables) + 1
    shape = (N_HANDS,) * m
    group, reps = _groups(solver420.LEGAL)
    group = np.where(group < 0, 0, group)  # hands totalling 20: never the seat's hand at its turn
    legal = [np.flatnonzero(solver420.LEGAL[h]) for h in reps]
    win = solver420.WIN.reshape((N_HANDS,) + (1,) * (m - 1))
    values = np.zeros(shape)

    def chain(values: np.ndarray) -> list[np.ndarray]:
        """[value before opponent i moves for i = m-1, ..., 1 (seat-view axes)], last first."""
        out, after = [], values
        for i in reversed(range(m - 1)):
            after = _joint_turn(after, tables[i], payoffs[i], axis=i + 1)
            out.append(after)
        return out

    for sweep in range(1, MAX_SWEEPS + 1):  # noqa: B007 (returned after the loop)
        after = chain(values)[-1]
        q = np.tensordot(solver420.T, np.where(win, _WIN_ROUND, after), axes=(1, 0))
        if policy is None:
            new = np.stack([q[allowed].max(axis=0) for allowed in legal])[group]
        else:
            new = _joint_turn(after, policy, _WIN_ROUND, axis=0)
        delta = float(np.abs(new - values)[~solver420.WIN].max())
        values = new
        if delta <= tol:
            break
    else:
        raise RuntimeError(f"value iteration did not converge to {tol} in {MAX_SWEEPS} sweeps (last change {delta})")
    # The first lap (R1): everyone rolls all four in turn from the leader, and a 20
    # ends the round; then the leader moves with every hand drawn.
    p20 = float(solver420.FIRST_ROLL @ solver420.WIN)
    view = [(j - position) % m for j in range(m)]  # seat-view index of the round's j-th player
    value = sum((1 - p20) ** j * p20 * (_WIN_ROUND if view[j] == 0 else payoffs[view[j] - 1]) for j in range(m))
    start = values if view[0] == 0 else chain(values)[m - 1 - view[0]]
    drawn = np.where(solver420.WIN, 0.0, solver420.FIRST_ROLL)
    for _ in range(m):
        start = np.tensordot(drawn, start, axes=(0, 0))
    return q, float(value + start), sweep


def solve_seat_joint(
    n_players: int,
    agents: Sequence,
    seat: int,
    own: bool = False,
    tol: float = DEFAULT_TOL,
    leaders: Sequence[int] | None = None,
    cache: dict | None = None,
) -> Reply:
    """:func:`solve_seat` for agents that may look at every hand (``n_players`` at most
    ``JOINT_MAX_PLAYERS``): the best reply of ``seat`` to the other seats' agents, or
    with ``own`` the exact value of ``agents[seat]`` there.  Each agent that does
    not play from its own hand alone is tabulated at every state of every round
    it can play (:func:`joint_table`), once per ``cache`` (a dict to share between
    calls at the same table)."""
    check_players(n_players)
    if n_players > JOINT_MAX_PLAYERS:
        raise ValueError(
            f"exact figures for agents that look at other hands stop at {JOINT_MAX_PLAYERS} players "
            f"(at {n_players} every seat has {121**n_players:,} decisions to tabulate)"
        )
    cache = {} if cache is None else cache

    def table(s: int, remaining: tuple[int, ...], view: list[int]) -> np.ndarray:
        if s not in cache:  # an own-hand agent needs no tabulation over the other hands
            try:
                cache[s] = seat_policy(agents[s], s, n_players)
            except ValueError:
                cache[s] = None
        if (s, remaining) not in cache:
            own = cache[s]
            if own is None:
                cache[(s, remaining)] = joint_table(agents[s], s, n_players, remaining)
            else:
                axis = [1] * len(remaining)
                axis[remaining.index(s)] = N_HANDS
                deterministic = np.all((own == 0) | (own == 1))
                cache[(s, remaining)] = (
                    np.broadcast_to(own.argmax(axis=1).reshape(axis), (N_HANDS,) * len(remaining))
                    if deterministic
                    else np.broadcast_to(
                        own.reshape(axis + [g.N_ACTIONS]), (N_HANDS,) * len(remaining) + (g.N_ACTIONS,)
                    )
                )
        t = cache[(s, remaining)]
        axes = [remaining.index(v) for v in view]
        return np.transpose(t, axes + list(range(len(axes), t.ndim)))

    def solve(remaining, leader, position, clockwise, payoffs):
        view = [seat, *clockwise]
        tables = [table(s, remaining, view) for s in clockwise]
        policy = table(seat, remaining, view) if own else None
        q, value, sweeps = solve_round_joint(tables, payoffs, position, policy, tol)
        return RoundReply(remaining, leader, (), payoffs, q, value, sweeps)

    return _solve_game(n_players, seat, leaders, solve)


# --- a whole table ------------------------------------------------------------------
@dataclass(frozen=True)
class SeatFigures:
    """One seat of a table: its P(not losing), its best reply's, and the regret."""

    seat: int
    not_losing: float
    best: float

    @property
    def regret_pp(self) -> float:
        """Best reply minus the seat, in percentage points; 0 below the solver's precision."""
        return pp(self.best - self.not_losing)


def _own_hand_policies(n_players: int, seats: Sequence) -> list[np.ndarray] | None:
    """Every seat's own-hand policy (the lumped computation applies), or None where an agent
    looks at other hands (the full state is needed: up to ``JOINT_MAX_PLAYERS``; beyond,
    ``ValueError``).  A bad table is refused with its own message."""
    try:
        return table_policies(n_players, seats)
    except ValueError as e:
        if not all(hasattr(a, "act") for a in seats):
            raise
        if n_players > JOINT_MAX_PLAYERS:
            raise ValueError(
                f"{e} (agents that look at other hands are supported up to {JOINT_MAX_PLAYERS} players)"
            ) from None
        return None


def seat_figures(agents: Sequence, seat: int = 0, tol: float = DEFAULT_TOL) -> tuple[float, float]:
    """(P(not losing) of ``agents[seat]`` at this table, its best reply's), both exact: by the
    lumped computation when every seat plays from its own hand, else (up to
    ``JOINT_MAX_PLAYERS``) over the full state; beyond, ``ValueError`` (one line)."""
    n = check_players(len(agents))
    policies = _own_hand_policies(n, agents)
    if policies is None:
        cache: dict = {}
        return (
            solve_seat_joint(n, agents, seat, own=True, tol=tol, cache=cache).value,
            solve_seat_joint(n, agents, seat, tol=tol, cache=cache).value,
        )
    return float(not_losing(n, policies)[seat]), best_reply(n, policies, seat, tol).value


def table_figures(n_players: int, seats: Sequence, tol: float = DEFAULT_TOL) -> list[SeatFigures]:
    """Every seat's exact P(not losing), its best reply's, and its regret, at a table
    of agents or own-hand tables (``seats[s]`` at seat s).

    Own-hand seats everywhere: the lumped computation (fast, any table size this
    module builds).  Otherwise, up to ``JOINT_MAX_PLAYERS``, the full state with
    every agent tabulated (minutes at three players); beyond, ``ValueError``."""
    policies = _own_hand_policies(n_players, seats)
    if policies is None:
        cache: dict = {}
        return [
            SeatFigures(
                s,
                solve_seat_joint(n_players, seats, s, own=True, tol=tol, cache=cache).value,
                solve_seat_joint(n_players, seats, s, tol=tol, cache=cache).value,
            )
            for s in range(n_players)
        ]
    for seat in range(n_players):  # the largest round of each seat's best reply, before any work
        check_size(len(_groups(solver420.LEGAL)[1]), [lump(p, s).size for s, p in enumerate(policies) if s != seat])
    values = not_losing(n_players, policies)
    return [SeatFigures(s, float(values[s]), best_reply(n_players, policies, s, tol).value) for s in range(n_players)]


# --- the exact figure of a tournament table (GameSpec.exact_tables) ---------------------
def _memo(memo: dict, key, compute):
    if key not in memo:
        memo[key] = compute()
    return memo[key]


def tournament_figure(agents: Sequence, orders, options: dict, memo: dict) -> np.ndarray:
    """N-player 420 when every player keeps dice by its own hand alone: the players'
    races are then independent, each with its own hitting-time law, and the game is
    a recursion over (players left, round's Player 1) (``games.dice420.reply``, which
    also says why an agent is refused)."""
    n = len(agents)
    policies = []
    for seat, agent in enumerate(agents):
        try:
            policies.append(_memo(memo, ("own-hand 420", id(agent), n), lambda a=agent, s=seat: seat_policy(a, s, n)))
        except ValueError as e:
            raise NoExactFigure(str(e)) from None
    out = np.zeros(n)
    for order in orders:  # the player in each seat; the seat-0 player leads the first round
        loser = loser_probabilities(n, [policies[p] for p in order], leaders=[0])
        for seat, p in enumerate(order):
            out[p] += 1.0 - loser[seat]
    return out / len(orders)
