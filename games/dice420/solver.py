"""Exact analysis of two-player 420: the optimal policy and the exact win
probability of any pair of stationary policies.

The state at a decision is (mover's hand, opponent's hand): 126 x 126 pairs.
Write V[h, o] for the probability that the player to move, holding ``h``
against ``o``, wins.  Keeping ``k`` rolls a new hand ``h2`` with probability
``T[k, h2]``; the mover wins at once if ``h2`` totals 20 (R5), otherwise the
opponent moves from ``(o, h2)``, so

    V[h, o] = max over legal k of  sum_h2 T[k, h2] * (win(h2) + (1 - win(h2)) * (1 - V[o, h2])).

The right-hand side does not depend on ``h`` except through which keeps are
legal, so it is one (14 x 126) matrix ``Q[k, o]`` per sweep.  Value iteration
converges geometrically (every turn ends the game with a positive chance) and
is iterated until a sweep changes nothing by more than ``tol``.

Policies are tables ``P[h, o, k]`` of probabilities (deterministic ones are
one-hot); rows for states that never occur (either hand already totals 20) are
ignored.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from agents.base import batch_probs, pp
from games.dice420 import codec as codec420
from games.dice420 import game as g
from games.dice420.codec import LEGAL_MASKS

N_HANDS = len(g.HANDS)
WIN = np.array([g.is_win(h) for h in g.HANDS])
TOTAL = np.array([sum(h) for h in g.HANDS])
# T[k, h2]: probability that keeping KEEPS[k] and rolling the rest gives hand h2.
T = np.zeros((g.N_ACTIONS, N_HANDS))
for _k, _keep in enumerate(g.KEEPS):
    for _h2, _p in g.roll_distribution(_keep).items():
        T[_k, g.HAND_INDEX[_h2]] = float(_p)
LEGAL = LEGAL_MASKS
FIRST_ROLL = T[g.REROLL_ALL]
# Decision states: neither hand totals 20.
DECISION = ~WIN[:, None] & ~WIN[None, :]

DEFAULT_TOL = 1e-15
MAX_SWEEPS = 100_000


def _after_roll(v_opp: np.ndarray) -> np.ndarray:
    """M[h2, o]: the mover's chance to win having just rolled ``h2`` against ``o``,
    given ``v_opp[o, h2]``, the opponent's chance to win when it moves next."""
    return np.where(WIN[:, None], 1.0, 1.0 - v_opp.T)


def keep_values(v_opp: np.ndarray) -> np.ndarray:
    """Q[k, o]: the mover's chance to win by keeping ``KEEPS[k]`` against ``o``."""
    return T @ _after_roll(v_opp)


def _best(q: np.ndarray) -> np.ndarray:
    """max over legal keeps of Q[k, o], for every (h, o)."""
    return np.where(LEGAL[:, :, None], q[None, :, :], -np.inf).max(axis=1)


def _follower(policy: np.ndarray):
    """A function q -> X[h, o] = sum_k policy[h, o, k] q[k, o]; a gather when the policy is deterministic."""
    if np.all((policy == 0) | (policy == 1)):
        keeps = policy.argmax(axis=2)
        cols = np.broadcast_to(np.arange(N_HANDS), keeps.shape)
        return lambda q: q[keeps, cols]
    return lambda q: np.einsum("hok,ko->ho", policy, q)


@dataclass(frozen=True)
class Solution:
    """The solved game: values, keep values and the optimal policy."""

    value: np.ndarray  # V[h, o]
    q: np.ndarray  # Q[k, o] under optimal play by the opponent
    policy: np.ndarray  # optimal keep index for every (h, o)
    sweeps: int

    @property
    def red_win(self) -> float:
        """P(Red wins) when both play optimally."""
        return red_win_probability(self.value)

    def policy_table(self) -> np.ndarray:
        return one_hot(self.policy)


def one_hot(actions: np.ndarray) -> np.ndarray:
    table = np.zeros((N_HANDS, N_HANDS, g.N_ACTIONS))
    np.put_along_axis(table, actions[:, :, None], 1.0, axis=2)
    return table


def red_win_probability(x_red: np.ndarray) -> float:
    """P(Red wins) from X[h, o], Red's chance to win when Red moves first with h vs o.

    R1/R6: Red rolls four dice (and wins on 20), then Blue does, then Red moves."""
    after_blue = np.where(WIN[None, :], 0.0, x_red) @ FIRST_ROLL
    return float(FIRST_ROLL @ np.where(WIN, 1.0, after_blue))


def _iterate(step, shape_count: int, tol: float, max_sweeps: int):
    values = tuple(np.zeros((N_HANDS, N_HANDS)) for _ in range(shape_count))
    for sweep in range(1, max_sweeps + 1):
        new = step(*values)
        delta = max(float(np.abs(a - b).max()) for a, b in zip(new, values))
        values = new
        if delta <= tol:
            return values, sweep
    raise RuntimeError(f"value iteration did not converge to {tol} in {max_sweeps} sweeps (last change {delta})")


@lru_cache(maxsize=None)
def solve(tol: float = DEFAULT_TOL) -> Solution:
    """Optimal play by both players (value iteration to ``tol``)."""

    def step(v):
        return (_best(keep_values(v)),)

    (v,), sweeps = _iterate(step, 1, tol, MAX_SWEEPS)
    q = keep_values(v)
    policy = np.where(LEGAL[:, :, None], q[None, :, :], -np.inf).argmax(axis=1)
    return Solution(v, q, policy, sweeps)


def evaluate(policy_a: np.ndarray, policy_b: np.ndarray, tol: float = DEFAULT_TOL) -> tuple[np.ndarray, np.ndarray]:
    """Exact values of two stationary policies playing each other.

    Returns (X, Y): X[h, o] is A's chance to win when A is to move holding h
    against B's o; Y[o, h] is B's chance to win when B is to move.
    """
    check_policy(policy_a)
    check_policy(policy_b)

    follow_a, follow_b = _follower(policy_a), _follower(policy_b)

    def step(x, y):
        x_new = follow_a(keep_values(y))
        return x_new, follow_b(keep_values(x_new))

    (x, y), _ = _iterate(step, 2, tol, MAX_SWEEPS)
    return x, y


def win_probabilities(policy: np.ndarray, opponent: np.ndarray, tol: float = DEFAULT_TOL) -> tuple[float, float]:
    """(P(win as Red), P(win as Blue)) of ``policy`` against ``opponent``.

    One evaluation gives both: Y, the opponent's chance when it is to move, is
    its table as the player moving first when it holds Red."""
    x, y = evaluate(policy, opponent, tol)
    return red_win_probability(x), 1.0 - red_win_probability(y)


def best_reply(opponent: np.ndarray, tol: float = DEFAULT_TOL) -> tuple[np.ndarray, np.ndarray]:
    """The best stationary reply to ``opponent`` and its value table X[h, o]."""
    check_policy(opponent)

    follow = _follower(opponent)

    def step(x, y):
        x_new = _best(keep_values(y))
        return x_new, follow(keep_values(x_new))

    (x, y), _ = _iterate(step, 2, tol, MAX_SWEEPS)
    q = keep_values(y)
    return np.where(LEGAL[:, :, None], q[None, :, :], -np.inf).argmax(axis=1), x


def check_policy(policy: np.ndarray) -> None:
    """A policy table must be (126, 126, 14), put probability only on legal keeps
    and sum to 1 in every decision state."""
    if policy.shape != (N_HANDS, N_HANDS, g.N_ACTIONS):
        raise ValueError(f"policy table must have shape {(N_HANDS, N_HANDS, g.N_ACTIONS)}, got {policy.shape}")
    rows = policy[DECISION]
    if not np.allclose(rows.sum(axis=1), 1.0):
        raise ValueError("policy table rows must sum to 1 in every decision state")
    illegal = (policy * ~LEGAL[:, None, :])[DECISION]
    if np.any(illegal > 0):
        raise ValueError("policy table puts probability on an illegal keep")


@lru_cache(maxsize=1)
def decision_batch() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(states, obs, masks) for every decision state, in ``codec420.decision_states()`` order.

    ``states[i] = (h, o)`` hand indices; ``obs[i] = codec420.encode(HANDS[h], HANDS[o])``;
    ``masks[i] = codec420.LEGAL_MASKS[h]``.  Read-only, computed once.
    """
    states = np.array(codec420.decision_states(), dtype=np.int64)
    hands = codec420.HAND_DICE  # ascending, as observed
    obs = np.concatenate([hands[states[:, 0]], hands[states[:, 1]]], axis=1)
    masks = codec420.LEGAL_MASKS[states[:, 0]]
    for a in (states, obs, masks):
        a.setflags(write=False)
    return states, obs, masks


def policy_table(agent) -> np.ndarray:
    """The agent's policy as ``P[h, o, k]`` (126 x 126 x 14), as ``solver420`` reads it.

    Uses ``agent.action_probs(obs_batch, mask_batch)`` in one call when the agent
    has it, else ``agent.act`` once per state (one-hot).  Rows outside the
    decision states (a hand already totals 20) are all zero; the solver ignores
    them.  Raises ``ValueError`` if the agent's answer has the wrong shape or
    puts more than a rounding error of probability on an illegal keep; tiny
    illegal mass is dropped and the rows renormalized.
    """
    if callable(getattr(agent, "exact_table", None)):  # the optimal bot: its table is the solution's
        return agent.exact_table()
    states, obs, masks = decision_batch()

    def where(i):
        h, o = states[i]
        return f"hand {g.format_hand(g.HANDS[h])} against {g.format_hand(g.HANDS[o])}"

    probs = batch_probs(agent, obs, masks, where)
    table = np.zeros((len(g.HANDS), len(g.HANDS), g.N_ACTIONS))
    table[states[:, 0], states[:, 1]] = probs
    return table


def suboptimal_choices(keeps: np.ndarray, tol: float = 1e-12) -> int:
    """How many decision states in which the keep table ``keeps[h, o]`` (keep indices)
    chooses a keep worth less than the best one against the optimal opponent.

    0 means the policy is exactly optimal: it wins exactly as often as the
    optimal bot in both seats.  It takes a table lookup, not a policy evaluation,
    so training can ask it after every update.
    """
    q = solve().q  # Q[k, o]
    cols = np.broadcast_to(np.arange(N_HANDS), keeps.shape)
    chosen = q[keeps, cols]
    best = _best(q)
    return int((DECISION & (chosen < best - tol)).sum())


def exact_strength(agent_or_table, opponents: dict[str, np.ndarray]) -> dict[str, tuple[float, float]]:
    """Exact (P(win as Red), P(win as Blue)) of an agent against each opponent table, by name."""
    table = agent_or_table if isinstance(agent_or_table, np.ndarray) else policy_table(agent_or_table)
    return {name: win_probabilities(table, opponent) for name, opponent in opponents.items()}


# ---------------------------------------------------------------- training reports


_pp = pp  # a probability difference in percentage points (agents.base.pp)


def exact_figures(agent, opponents: dict[str, np.ndarray]) -> dict:
    """The exact figures training logs for an agent: P(win) against the optimal bot in
    each seat (``opponents["optimal"]``), the gaps in pp, the count of suboptimal
    choices, whether it is exactly optimal, and P(win) (mean of both seats) against
    each other opponent table."""
    table = policy_table(agent)
    figures = exact_strength(table, opponents)
    best = solve()
    opt_red, opt_blue = best.red_win, 1.0 - best.red_win
    red, blue = figures["optimal"]
    return {
        "vs_optimal_red": red,
        "vs_optimal_blue": blue,
        "gap_pp_red": _pp(opt_red - red),
        "gap_pp_blue": _pp(opt_blue - blue),
        "suboptimal_choices": suboptimal_choices(table.argmax(axis=2)),
        "optimal": bool(opt_red - red < 5e-7 and opt_blue - blue < 5e-7),
        **{f"vs_{name}": sum(figures[name]) / 2 for name in opponents if name != "optimal"},
    }


def count_suboptimal(agent) -> int:
    """``suboptimal_choices`` of an agent's greedy choices (cheap enough for every update)."""
    return suboptimal_choices(policy_table(agent).argmax(axis=2))


def format_figures(name: str, figures: dict, opponents) -> list[str]:
    """The results table of a training run, from ``exact_figures``."""
    best = solve()
    w = max(10, len(name))
    lines = [
        "exact win probability vs the optimal bot",
        f"  {'':<{w}} {'as Red':>9} {'as Blue':>9} {'gap Red (pp)':>13} {'gap Blue (pp)':>14}",
        f"  {'optimal':<{w}} {best.red_win:>9.6f} {1 - best.red_win:>9.6f} {0:>13.4f} {0:>14.4f}",
        f"  {name:<{w}} {figures['vs_optimal_red']:>9.6f} {figures['vs_optimal_blue']:>9.6f} "
        f"{figures['gap_pp_red']:>13.4f} {figures['gap_pp_blue']:>14.4f}",
        "",
        "exact win probability (mean of both seats) vs each heuristic",
        *(f"  vs {o:<11} {figures[f'vs_{o}']:.6f}" for o in opponents if o != "optimal"),
    ]
    lines.append(
        "exactly optimal in both seats"
        if figures["optimal"]
        else f"not yet exactly optimal: {figures['suboptimal_choices']} decision states with a worse than best choice"
    )
    return lines
