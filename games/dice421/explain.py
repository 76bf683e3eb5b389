"""Where a two-player 421 policy loses against the optimum: its exact gap, state by state.

The gap of a policy pi is 1/2 minus its exact chance to beat the optimal bot
sigma* (``solver421.evaluate``).  Against sigma* fixed, pi plays an MDP; sigma*
is optimal in every state (the solver's values W hold in every subgame), so the
best pi could do from any state s is the game value there, and the value of
each move a is Q*(s, a), computed from W.  The performance-difference identity
then splits the gap exactly over pi's decision states:

    gap = sum_s  reach_pi(s) * ( max_a Q*(s, a) - sum_a pi(a | s) Q*(s, a) )

where reach_pi(s) is the expected number of times a game of pi against sigma*
meets s (a state can come back in a later discharge round).  Each term is what
pi's choice at s costs, weighted by how often pi's own games get there: the
terms are non-negative and add up to the gap (the tests check both).

Phases.  Only the discharge has decisions (H4): the charge (H2) and RAMPO (H6)
are dice alone, so their share of the gap is zero by the rules, not by
measurement.  In the discharge, a decision is the leader's after roll 1 or 2
(STOP or a keep), or the follower's keep at (rolls owed, roll) = (2, 1), (3, 1)
or (3, 2) facing the leader's final hand.

This module reads the solver's round model (``solver421._outcome_terms``,
``_round_utility``, ``_round_distribution``, ``_aligned``, ``charge_outcomes``):
the same equations, so the breakdown cannot drift from the figures it explains.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from games.dice421 import solver as s
from games.dice421 import game as g
from games.dice421.policy import FOLLOWER_DECISIONS, FOLLOWER_LEGAL, LEADER_LEGAL, Policy421

N_HANDS = s.N_HANDS
T = s.T
FIRST_ROLL = s.FIRST_ROLL
LEADER = "leader"
FOLLOWER = "follower"


@dataclass(frozen=True)
class Loss:
    """What the policy's choice costs at one decision state (chances in [0, 1])."""

    role: str  # LEADER or FOLLOWER
    tokens: int  # the policy's own tokens
    opponent_tokens: int
    roll: int  # rolls made so far (1 or 2)
    rolls_owed: int  # the leader: 3; a follower: the leader's roll count n
    hand: int  # index into HANDS
    leader_hand: int  # the leader's final hand (followers), else -1
    reach: float  # expected visits per game of the policy against the optimal bot
    loss: float  # reach * (best value - the policy's value) at this state
    played: int  # the policy's most likely action here
    played_share: float  # its probability
    best: int  # the optimal action
    values: tuple[float, float]  # P(win) after the played and after the best action

    def describe(self) -> str:
        """The state and the two moves, in words."""
        hand = g.hand_str(g.HANDS[self.hand])
        if self.role == LEADER:
            where = f"leading, {self.tokens} tokens to {self.opponent_tokens}, roll {self.roll} of 3"
        else:
            where = (
                f"following {g.hand_str(g.HANDS[self.leader_hand])} "
                f"(roll {self.roll} of {self.rolls_owed}), {self.tokens} tokens to {self.opponent_tokens}"
            )
        share = "" if self.played_share > 0.999 else f" ({100 * self.played_share:.0f}%)"
        return (
            f"{where}, hand {hand}: plays {g.describe_action(self.played)}{share}, best {g.describe_action(self.best)}"
        )


@dataclass(frozen=True)
class Breakdown:
    """The exact gap of a policy against the optimal bot, split by decision state."""

    pot: int
    name: str
    win: float  # P(the policy beats the optimal bot), charge and seat draw included
    losses: tuple[Loss, ...]  # every state with a loss > 0, largest first

    @property
    def gap(self) -> float:
        return 0.5 - self.win

    @property
    def total(self) -> float:
        """The sum of the state losses (equal to ``gap`` up to the solver's tolerance)."""
        return float(sum(x.loss for x in self.losses))

    def by(self, key) -> dict:
        """Losses summed by ``key(loss)``, largest first."""
        out: dict = {}
        for x in self.losses:
            out[key(x)] = out.get(key(x), 0.0) + x.loss
        return dict(sorted(out.items(), key=lambda kv: -kv[1]))


def decision_name(x: Loss) -> str:
    if x.role == LEADER:
        return f"leader after roll {x.roll}"
    return f"follower, roll {x.roll} of {x.rolls_owed}"


def _visits(P: int, lead_a, foll_a, lead_b, foll_b) -> tuple[np.ndarray, np.ndarray]:
    """Expected discharge rounds led by A (the policy) and by B (the optimal bot) with
    each number of tokens t = 1..P-1, over one game (charge and seat draw included)."""
    n = P - 1
    start = np.zeros(2 * n)
    C = s.charge_outcomes(P)
    for a_seat in (0, 1):
        for who in (0, 1):
            for x in range(1, P):
                start[(0 if who == a_seat else 1) * n + x - 1] += 0.5 * C[who, x]
    _, coef, kind, tok = s._outcome_terms(P)
    M = np.zeros((2 * n, 2 * n))  # M[i, j]: P(round i is followed by round j)
    for block, (lead, foll) in enumerate(((lead_a, foll_b), (lead_b, foll_a))):
        D = s._round_distribution(lead, foll)
        for j in range(2):
            nxt = np.where(kind[j] == 0, block, 1 - block) * n + tok[j] - 1
            flat = (np.arange(n)[:, None, None] * (2 * n) + nxt).ravel()
            M[block * n : (block + 1) * n] += np.bincount(
                flat, weights=(D * np.abs(coef[j])).ravel(), minlength=n * 2 * n
            ).reshape(n, 2 * n)
    visits = np.linalg.solve(np.eye(2 * n) - M.T, start)
    return visits[:n], visits[n:]


def _follower_q(G: np.ndarray) -> np.ndarray:
    """[t, L, h, a]: the leader's chance after the follower's action a (0 = STOP, never
    legal for a follower) with hand h, given the value ``G[t, L, h2]`` after its roll."""
    q = G @ T.T
    out = np.empty(q.shape[:2] + (N_HANDS, g.N_ACTIONS))
    out[..., 0] = np.nan
    out[..., 1:] = q[:, :, None, :]
    return out


def explain(policy: Policy421, tol: float = s.DEFAULT_TOL) -> Breakdown:
    """The exact gap of ``policy`` against the optimal bot, state by state."""
    policy.check()
    P = policy.pot
    win = s.evaluate(policy, s.solve(P, tol).policy())
    if P == 1:
        return Breakdown(P, policy.name, win, ())
    sol = s.solve(P, tol)
    w = sol.value
    U = s._round_utility(P, w, w, w, w)  # [t, L, F]: the leader's chance after the final hands
    opt = sol.policy()
    lead_a, foll_a = s._aligned(policy)
    lead_b, foll_b = s._aligned(opt)
    visits_a, visits_b = _visits(P, lead_a, foll_a, lead_b, foll_b)
    t_lead = np.arange(1, P)

    # Optimal continuation values (leader's chance), as in solver421._play_round.
    g_one, _ = s._follower_step(U, None, 0)  # [t, L, h]: a follower owing one more roll
    g_two, _ = s._follower_step(g_one, None, 1)  # owing two more rolls
    stop = {1: U @ FIRST_ROLL, 2: g_one @ FIRST_ROLL}  # [t, L]: the leader stops after roll r
    final = g_two @ FIRST_ROLL  # the turn ends after roll 3

    def leader_values(stop_value, keep_into):
        """[t, h, a]: the leader's chance after STOP or a keep that rolls into ``keep_into``."""
        q = np.empty((P - 1, N_HANDS, g.N_ACTIONS))
        q[..., 0] = stop_value
        q[..., 1:] = (keep_into @ T.T)[:, None, :]
        return q

    leader_q = {2: leader_values(stop[2], final)}
    after_roll_two = np.where(LEADER_LEGAL[None], leader_q[2], -np.inf).max(-1)  # best play from roll 2
    leader_q[1] = leader_values(stop[1], after_roll_two)

    losses: list[Loss] = []

    def add(role, t_own, r, owed, q_own, probs, reach, legal, leader_hand):
        """Record every state of one decision: q_own[..., h, a] is the policy's chance."""
        masked = np.where(legal, q_own, -np.inf)
        best = masked.argmax(-1)
        best_value = np.take_along_axis(q_own, best[..., None], -1)[..., 0]
        mine = (probs * np.where(legal, q_own, 0.0)).sum(-1)
        loss = reach * (best_value - mine)
        played = probs.argmax(-1)
        for idx in zip(*np.nonzero(loss > 0)):
            h = idx[-1]
            losses.append(
                Loss(
                    role,
                    int(t_own[idx[0]]),
                    P - int(t_own[idx[0]]),
                    r,
                    owed,
                    int(h),
                    int(leader_hand(idx)),
                    float(reach[idx]),
                    float(loss[idx]),
                    int(played[idx]),
                    float(probs[idx][played[idx]]),
                    int(best[idx]),
                    (float(q_own[idx][played[idx]]), float(best_value[idx])),
                )
            )

    # The policy leads (its rows lead_a), the optimal bot follows.
    p = np.broadcast_to(FIRST_ROLL, (P - 1, N_HANDS))
    for r in (1, 2):
        reach = visits_a[:, None] * p
        add(LEADER, t_lead, r, 3, leader_q[r], lead_a[:, r - 1], reach, LEADER_LEGAL[None], lambda idx: -1)
        p = np.einsum("th,thk->tk", p, lead_a[:, r - 1, :, 1:]) @ T

    # The optimal bot leads with t, the policy follows holding P - t.
    stops = []
    p = np.broadcast_to(FIRST_ROLL, (P - 1, N_HANDS))
    for r in (1, 2):
        stops.append(p * lead_b[:, r - 1, :, 0])
        p = np.einsum("th,thk->tk", p, lead_b[:, r - 1, :, 1:]) @ T
    stops.append(p)
    first = np.broadcast_to(FIRST_ROLL, (P - 1, N_HANDS, N_HANDS))
    after_first = np.matmul(first[:, :, None, :], foll_a[1])[:, :, 0, :] @ T  # [t, L, h] at (3, 2)
    hands_seen = {0: (stops[1], first), 1: (stops[2], first), 2: (stops[2], after_first)}
    values_after = {0: U, 1: g_one, 2: U}  # what the follower's roll leads to, per decision
    for d, (n, r) in enumerate(FOLLOWER_DECISIONS):
        leader_final, hands = hands_seen[d]
        reach = visits_b[:, None, None] * leader_final[:, :, None] * hands
        q_own = 1.0 - _follower_q(values_after[d])
        probs = np.concatenate([np.zeros(foll_a[d].shape[:3] + (1,)), foll_a[d]], -1)
        add(FOLLOWER, P - t_lead, r, n, q_own, probs, reach, FOLLOWER_LEGAL[None, None], lambda idx: idx[1])
    losses.sort(key=lambda x: -x.loss)
    return Breakdown(P, policy.name, win, tuple(losses))


def _pp(x: float) -> str:
    return f"{100 * x:.4f} pp"


def format_breakdown(b: Breakdown, top: int = 10) -> list[str]:
    """The breakdown for people: the gap by role, decision and tokens, then the
    ``top`` largest losses with their states and the two moves (80 columns)."""
    lines = [
        f"{b.name}: where the gap to the optimum goes (pot {b.pot}, exact)",
        f"  P(win) vs optimal {b.win:.6f}, gap {_pp(b.gap)}",
        f"  the losses of its decision states add up to {_pp(b.total)}",
        "  charge and RAMPO are dice only (no decisions): the gap is all in the discharge",
    ]
    if not b.losses:
        return lines + ["  no decision state loses anything: the policy is optimal"]
    lines.append("  by decision:")
    lines += [f"    {k:<28} {_pp(v):>12}  {100 * v / b.total:5.1f}%" for k, v in b.by(decision_name).items()]
    lines.append("  by the policy's tokens (opponent has the rest):")
    by_tokens = b.by(lambda x: x.tokens)
    lines += [f"    {k:>2} tokens  {_pp(v):>12}  {100 * v / b.total:5.1f}%" for k, v in sorted(by_tokens.items())]
    half = int(np.searchsorted(np.cumsum([x.loss for x in b.losses]), b.total / 2)) + 1
    lines.append(f"  {len(b.losses):,} states lose something; the largest {half:,} hold half the gap")
    lines.append(f"  the {min(top, len(b.losses))} largest losses (reach = visits per game):")
    for x in b.losses[:top]:
        lines.append(f"    {_pp(x.loss)}  reach {x.reach:.4f}  P(win) {x.values[0]:.4f} -> {x.values[1]:.4f}")
        lines += _wrap("      " + x.describe())
    return lines


def _wrap(text: str, width: int = 80) -> list[str]:
    import textwrap

    return textwrap.wrap(text, width, subsequent_indent="        ")
