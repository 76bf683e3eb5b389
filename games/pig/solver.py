"""Exact analysis of two-player Pig: the optimal policy (Neller and Presser) and the
exact win probability of any pair of stationary policies.

A state is (i, j, k): the mover's score i, the opponent's score j and the
mover's turn total k, with i, j < goal and i + k < goal (once i + k reaches the
goal the mover has won, P2).  Write V[i, j, k] for the mover's chance to win,
and U[a, b] = V[a, b, 0] for a player's chance at the start of its turn.  With
``f`` faces, rolling is worth

    R[i, j, k] = ( (1 - U[j, i])  +  sum over r = 2..f of W(i, j, k + r) ) / f,

where W is 1 once i + k + r reaches the goal and V[i, j, k + r] before (a 1
ends the turn: the opponent starts its turn at (j, i)).  Holding is worth
H[i, j, k] = 1 - U[j, i + k].  V[i, j, 0] = R (the project's decision: the first
roll of a turn is forced), and V = max(R, H) above 0 under optimal play.

For a guess of U, one backward pass over k (from goal - 1 down to 0, every
(i, j) at once) gives all of V, hence a new U; repeating converges (every
turn's chain of rolls is finite and a game ends with probability 1), to a
change of at most ``tol`` per pass.  Policies are tables ``P[i, j, k]`` of the
probability of rolling (deterministic ones are 0/1); only decision states
(k >= 1, i + k < goal) are read.  Internally arrays are laid out [k, i, j].
Tables hold goal**3 states, so the solver takes goals up to ``MAX_SOLVED_GOAL``
(200), not the engine's 1000.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import lru_cache
from typing import Optional

import numpy as np

from agents.base import batch_probs, pp
from games.pig import game as g

DEFAULT_TOL = 1e-14
MAX_SWEEPS = 100_000
MAX_SOLVED_GOAL = 200  # tables hold goal**3 states: 8 MB at goal 100, 64 MB at 200 (per array)


def _check(goal: int, faces: int) -> tuple[int, int]:
    _, goal, faces = g.check_options(2, goal, faces)
    if goal > MAX_SOLVED_GOAL:
        raise ValueError(
            f"the exact Pig solver handles goals up to {MAX_SOLVED_GOAL} (its tables grow as goal**3), got {goal}"
        )
    return goal, faces


@lru_cache(maxsize=4)
def decision_mask(goal: int = g.DEFAULT_GOAL) -> np.ndarray:
    """D[i, j, k]: true at every decision state (turn total k >= 1, i + k < goal)."""
    goal, _ = _check(goal, g.DEFAULT_FACES)
    i, k = np.arange(goal)[:, None, None], np.arange(goal)[None, None, :]
    mask = np.broadcast_to((k >= 1) & (i + k < goal), (goal, goal, goal)).copy()
    mask.setflags(write=False)
    return mask


def _turn(
    u_opp: np.ndarray, faces: int, roll: Optional[np.ndarray] = None, allow_pass: bool = False, choose: bool = True
):
    """One backward pass over k: every V[k, i, j] of a mover whose opponent's turn-start
    values are ``u_opp[a, b]``, playing ``roll[k, i, j]`` (P(roll)) or, if None, the best
    move (then also returning its choices, 1 = roll, unless ``choose`` is False: None in
    their place).  ``allow_pass`` lets the best move hold a turn total of 0 (Neller and
    Presser's game, for comparison).  ``roll`` may also be a ``_Roll`` (the same table,
    prepared once for many passes).

    Every value is computed with the same float operations in the same order as the plain
    ``(z + sum of v over the faces) / faces`` and ``p * r + (1 - p) * h`` (a deterministic
    table picks r or h, which is what that sum gives when p is 0 or 1), into buffers
    allocated once per pass."""
    goal = len(u_opp)
    z = 1.0 - u_opp.T  # z[a, j]: the mover's chance once the opponent starts its turn at (j, a)
    v = np.ones((goal + faces + 1, goal, goal))  # rows i + k >= goal stay 1: won
    if roll is not None and not isinstance(roll, _Roll):
        roll = _Roll(roll)
    choice = np.zeros((goal, goal, goal), dtype=bool) if roll is None and choose else None
    r_buf, h_buf = np.empty((goal, goal)), np.empty((goal, goal))
    for k in range(goal - 1, -1, -1):
        n = goal - k  # rows i < goal - k are states
        r = r_buf[:n]
        if faces >= 3:  # sum over axis 0 adds the rows one by one, in order: so does this
            np.add(v[k + 2, :n], v[k + 3, :n], out=r)
            for row in range(k + 4, k + faces + 1):
                np.add(r, v[row, :n], out=r)
            np.add(z[:n], r, out=r)
        else:
            np.add(z[:n], v[k + 2 : k + faces + 1, :n].sum(axis=0), out=r)
        np.divide(r, faces, out=r)
        if k == 0 and not allow_pass:
            v[0] = r
            if choice is not None:
                choice[0] = True
            continue
        h = z[k:goal]
        out = v[k, :n]
        if roll is None:
            if choice is not None:
                better = np.greater(r, h, out=choice[k, :n])  # ties hold
                np.copyto(out, h)
                np.copyto(out, r, where=better)
            else:
                np.maximum(r, h, out=out)  # r > h ? r : h (no NaN; equal values are equal bits)
        elif roll.binary:
            np.copyto(out, h)
            np.copyto(out, r, where=roll.picks[k, :n])
        else:
            np.multiply(roll.p[k, :n], r, out=r)
            np.multiply(roll.q[k, :n], h, out=h_buf[:n])
            np.add(r, h_buf[:n], out=out)
    v = v[:goal]  # entries with i + k >= goal are not states; they hold 1 (the mover has won)
    return (v, choice) if roll is None else v


class _Roll:
    """An internal [k, i, j] table of P(roll), prepared for many passes of ``_turn``: whether
    it is deterministic (0 or 1 everywhere: then ``picks``, where it rolls), else ``p`` and
    ``q = 1 - p``."""

    def __init__(self, p: np.ndarray):
        self.p = p
        self.binary = bool(np.all((p == 0.0) | (p == 1.0)))
        self.picks = p == 1.0 if self.binary else None
        self.q = None if self.binary else 1.0 - p


def _iterate(step, goal: int, tol: float, max_sweeps: int = MAX_SWEEPS):
    """Repeat ``step(u) -> (u_new, extra)`` from u = 0 until a pass changes u by at most ``tol``."""
    u = np.zeros((goal, goal))
    for sweep in range(1, max_sweeps + 1):
        u_new, extra = step(u)
        delta = float(np.abs(u_new - u).max())
        u = u_new
        if delta <= tol:
            return u, extra, sweep
    raise RuntimeError(f"value iteration did not converge to {tol} in {max_sweeps} sweeps (last change {delta})")


def _table(v_kij: np.ndarray) -> np.ndarray:
    """An internal [k, i, j] array as a table [i, j, k]."""
    return np.ascontiguousarray(np.moveaxis(v_kij, 0, 2))


def _internal(table: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(np.moveaxis(table, 2, 0))


@dataclass(frozen=True)
class Solution:
    """The solved game: the mover's values V[i, j, k], the optimal policy as P(roll)
    (0/1 on decision states) and how many passes value iteration took."""

    goal: int
    faces: int
    value: np.ndarray  # V[i, j, k]
    policy: np.ndarray  # P(roll)[i, j, k], 0/1
    sweeps: int

    @property
    def first_win(self) -> float:
        """P(the first player wins) when both play optimally (P3: it starts at 0-0)."""
        return float(self.value[0, 0, 0])

    def policy_table(self) -> np.ndarray:
        return self.policy


@lru_cache(maxsize=4)
def solve(
    goal: int = g.DEFAULT_GOAL, faces: int = g.DEFAULT_FACES, tol: float = DEFAULT_TOL, allow_pass: bool = False
) -> Solution:
    """Optimal play by both players.  ``allow_pass=True`` solves the game in which a
    player may also hold a turn total of 0 (only to compare; the engine forbids it)."""
    goal, faces = _check(goal, faces)

    def step(u):
        v, choice = _turn(u, faces, allow_pass=allow_pass)
        return v[0], (v, choice)

    _, (v, choice), sweeps = _iterate(step, goal, tol)
    policy = _table(choice.astype(np.float64)) * decision_mask(goal)
    value = _table(v)
    for a in (policy, value):  # shared by every caller of the cache
        a.setflags(write=False)
    return Solution(goal, faces, value, policy, sweeps)


def check_policy(table: np.ndarray, goal: Optional[int] = None) -> int:
    """A policy table is [i, j, k] of shape (goal, goal, goal), with a probability of
    rolling in 0..1 at every decision state; returns its goal, or ValueError."""
    table = np.asarray(table)
    if table.ndim != 3 or len(set(table.shape)) != 1 or (goal is not None and table.shape[0] != goal):
        want = f"({goal}, {goal}, {goal})" if goal is not None else "(goal, goal, goal)"
        raise ValueError(f"a Pig policy table has shape {want}, got {table.shape}")
    rows = table[decision_mask(table.shape[0])]
    if not np.all(np.isfinite(rows)) or np.any(rows < 0) or np.any(rows > 1):
        raise ValueError("a Pig policy table holds probabilities of rolling in 0..1 at every decision state")
    return table.shape[0]


def evaluate_tables(
    table_a: np.ndarray, table_b: np.ndarray, faces: int = g.DEFAULT_FACES, tol: float = DEFAULT_TOL
) -> tuple[np.ndarray, np.ndarray]:
    """Exact values of two stationary policies playing each other: (X, Y), X[i, j, k] A's
    chance to win when A is to move, Y[i, j, k] B's when B is to move (i the mover's score)."""
    goal = check_policy(table_a)
    goal, faces = _check(check_policy(table_b, goal), faces)
    roll_a, roll_b = _Roll(_internal(table_a)), _Roll(_internal(table_b))

    def step(y0):
        x = _turn(y0, faces, roll_a)
        y = _turn(x[0], faces, roll_b)
        return y[0], (x, y)

    _, (x, y), _ = _iterate(step, goal, tol)
    return _table(x), _table(y)


def evaluate(table_a: np.ndarray, table_b: np.ndarray, faces: int = g.DEFAULT_FACES, tol: float = DEFAULT_TOL) -> float:
    """P(seat 0 wins) when seat 0 plays ``table_a``, moves first (P3), and seat 1 plays ``table_b``."""
    x, _ = evaluate_tables(table_a, table_b, faces, tol)
    return float(x[0, 0, 0])


def win_probabilities(
    table: np.ndarray, opponent: np.ndarray, faces: int = g.DEFAULT_FACES, tol: float = DEFAULT_TOL
) -> tuple[float, float]:
    """(P(win moving first), P(win moving second)) of ``table`` against ``opponent``; one
    evaluation gives both (the opponent's value at 0-0 is its chance moving first)."""
    x, y = evaluate_tables(table, opponent, faces, tol)
    return float(x[0, 0, 0]), 1.0 - float(y[0, 0, 0])


@dataclass(frozen=True)
class BestReply:
    """The best stationary reply to a policy (one table serves both seats: it is best
    at every state) and what it wins moving first and second."""

    policy: np.ndarray  # P(roll)[i, j, k], 0/1
    first: float
    second: float
    value: np.ndarray  # the reply's V[i, j, k] when it is to move

    @property
    def mean(self) -> float:
        return (self.first + self.second) / 2


def best_reply(table: np.ndarray, faces: int = g.DEFAULT_FACES, tol: float = DEFAULT_TOL) -> BestReply:
    """The best reply to ``table``, by value iteration with the opponent's policy fixed
    (the reply's choices are read off the last pass, from the turn-start values it began with)."""
    goal, faces = _check(check_policy(table), faces)
    roll_b = _Roll(_internal(table))
    previous = []

    def step(y0):
        previous[:] = [y0]
        x, _ = _turn(y0, faces, choose=False)
        y = _turn(x[0], faces, roll_b)
        return y[0], (x, y)

    _, (x, y), _ = _iterate(step, goal, tol)
    _, choice = _turn(previous[0], faces)
    policy = _table(choice.astype(np.float64)) * decision_mask(goal)
    return BestReply(policy, float(x[0, 0, 0]), 1.0 - float(y[0, 0, 0]), _table(x))


_FIXED_REPLIES: dict = {}  # best replies to the opponents' tables, which stay the same over a run


def _fixed_best_reply(table: np.ndarray, faces: int) -> BestReply:
    """``best_reply(table, faces)``, kept for the few tables seen last (by their bytes)."""
    key = (table.shape, faces, hashlib.sha256(np.ascontiguousarray(table, dtype=np.float64).tobytes()).digest())
    if key not in _FIXED_REPLIES:
        while len(_FIXED_REPLIES) >= 8:
            _FIXED_REPLIES.pop(next(iter(_FIXED_REPLIES)))
        _FIXED_REPLIES[key] = best_reply(table, faces)
    return _FIXED_REPLIES[key]


# ---------------------------------------------------------------- agents as tables


@lru_cache(maxsize=4)
def decision_batch(goal: int = g.DEFAULT_GOAL) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(states, obs, masks) of every decision state: ``states[n] = (i, j, k)``,
    ``obs[n] = [i, k, j]`` as ``codec.observe`` shows it, both actions legal.  Read-only."""
    states = np.argwhere(decision_mask(goal)).astype(np.int64)
    obs = states[:, [0, 2, 1]].copy()
    masks = np.ones((len(states), g.N_ACTIONS), dtype=bool)
    for a in (states, obs, masks):
        a.setflags(write=False)
    return states, obs, masks


def policy_table(agent, goal: int = g.DEFAULT_GOAL, faces: int = g.DEFAULT_FACES) -> np.ndarray:
    """Any agent's policy as P(roll)[i, j, k], by asking it (``batch_probs``: its
    ``action_probs`` in one call, else ``act`` per state) at every decision state;
    0 outside them.  An agent with ``exact_table(goal, faces)`` gives its own."""
    goal, faces = _check(goal, faces)
    if callable(getattr(agent, "exact_table", None)):
        return agent.exact_table(goal, faces)
    states, obs, masks = decision_batch(goal)

    def where(n):
        i, j, k = states[n]
        return f"score {i} against {j} with a turn total of {k}"

    probs = batch_probs(agent, obs, masks, where)
    table = np.zeros((goal, goal, goal))
    table[states[:, 0], states[:, 1], states[:, 2]] = probs[:, g.ROLL]
    return table


def suboptimal_choices(table: np.ndarray, faces: int = g.DEFAULT_FACES, tol: float = 1e-12) -> int:
    """How many decision states in which ``table`` puts probability on a move worth less
    than the best one against the optimal opponent (0: exactly optimal)."""
    goal = check_policy(table)
    i, j, k, best, hold, roll = _optimal_moves(goal, faces)
    p = table[i, j, k]
    bad = ((p > 0) & (roll < best - tol)) | ((p < 1) & (hold < best - tol))
    return int(bad.sum())


@lru_cache(maxsize=4)
def _optimal_moves(goal: int, faces: int) -> tuple[np.ndarray, ...]:
    """(i, j, k, best, hold, roll) over every decision state: its indices, its value under
    optimal play and what holding and rolling are worth there (the same for every table)."""
    v = solve(goal, faces).value
    u = v[:, :, 0]
    i, j, k = np.nonzero(decision_mask(goal))
    return i, j, k, v[i, j, k], 1.0 - u[j, i + k], _roll_values(v, u, faces)[i, j, k]


def _roll_values(v: np.ndarray, u: np.ndarray, faces: int) -> np.ndarray:
    """R[i, j, k] from the values V (table layout, 1 where i + k >= goal): what rolling is worth."""
    goal = len(u)
    padded = np.ones((goal, goal, goal + faces + 1))
    padded[:, :, :goal] = v
    total = sum(padded[:, :, r : r + goal] for r in range(2, faces + 1))
    return (1.0 - u.T[:, :, None] + total) / faces


def exact_strength(
    agent_or_table, opponents: dict[str, np.ndarray], goal: int = g.DEFAULT_GOAL, faces: int = g.DEFAULT_FACES
) -> dict[str, tuple[float, float]]:
    """Exact (P(win moving first), P(win moving second)) against each opponent table, by name."""
    table = agent_or_table if isinstance(agent_or_table, np.ndarray) else policy_table(agent_or_table, goal, faces)
    return {name: win_probabilities(table, opponent, faces) for name, opponent in opponents.items()}


# ---------------------------------------------------------------- training reports


def exact_figures(
    agent, opponents: dict[str, np.ndarray], goal: int = g.DEFAULT_GOAL, faces: int = g.DEFAULT_FACES
) -> dict:
    """The exact figures of a two-player agent: P(win) against the optimal bot
    (``opponents["optimal"]``) moving first and second and the gaps to the optimal
    bot's own figures in pp (and both for the mean of the two seats, ``vs_optimal``
    and ``gap_pp``, whose reference is 1/2); against each other opponent, P(win) (mean of both seats)
    and the regret (what the best reply to that opponent wins more, in pp); the
    agent's exploitability (what a best reply to it wins over 1/2, in pp); the count
    of suboptimal choices and whether it is exactly optimal."""
    goal, faces = _check(goal, faces)
    table = policy_table(agent, goal, faces)
    figures = exact_strength(table, opponents, goal, faces)
    best = solve(goal, faces).first_win
    first, second = figures["optimal"]
    others = [name for name in opponents if name != "optimal"]
    return {
        "vs_optimal_first": first,
        "vs_optimal_second": second,
        "gap_pp_first": pp(best - first),
        "gap_pp_second": pp((1.0 - best) - second),
        "vs_optimal": (first + second) / 2,  # the whole game, seats drawn evenly (as 421's figures)
        "gap_pp": pp(0.5 - (first + second) / 2),
        **{f"vs_{name}": sum(figures[name]) / 2 for name in others},
        **{
            f"regret_vs_{name}_pp": pp(_fixed_best_reply(opponents[name], faces).mean - sum(figures[name]) / 2)
            for name in others
        },
        "exploitability_pp": pp(best_reply(table, faces).mean - 0.5),
        "suboptimal_choices": suboptimal_choices(table, faces),
        "optimal": bool(best - first < 5e-7 and (1.0 - best) - second < 5e-7),
    }


def format_figures(
    name: str, figures: dict, opponents, goal: int = g.DEFAULT_GOAL, faces: int = g.DEFAULT_FACES
) -> list[str]:
    """The results table of ``exact_figures``, within 80 columns."""
    best = solve(goal, faces).first_win
    w = max(10, len(name))
    lines = [
        f"exact win probability vs the optimal bot, two players, goal {goal}, {faces} faces",
        f"  {'':<{w}} {'first':>9} {'second':>9} {'gap 1st (pp)':>13} {'gap 2nd (pp)':>13}",
        f"  {'optimal':<{w}} {best:>9.6f} {1 - best:>9.6f} {0:>13.4f} {0:>13.4f}",
        f"  {name:<{w}} {figures['vs_optimal_first']:>9.6f} {figures['vs_optimal_second']:>9.6f} "
        f"{figures['gap_pp_first']:>13.4f} {figures['gap_pp_second']:>13.4f}",
    ]
    others = [o for o in opponents if o != "optimal"]
    if others:
        lines += ["", "exact win probability (mean of both seats) vs each other bot"]
        lines += [
            f"  vs {o:<11} {figures[f'vs_{o}']:.6f}   (regret {figures[f'regret_vs_{o}_pp']:.4f} pp)" for o in others
        ]
    lines.append(
        f"a best reply to it wins {0.5 + figures['exploitability_pp'] / 100:.6f} "
        f"(exploitable by {figures['exploitability_pp']:.4f} pp)"
    )
    lines.append(
        "exactly optimal in both seats"
        if figures["optimal"]
        else f"not exactly optimal: {figures['suboptimal_choices']} decision states with a worse choice"
    )
    return lines
