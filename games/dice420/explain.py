"""Where a two-player 420 policy loses against the optimum: its exact gap, state by state.

Against the optimal bot held fixed, a policy in either seat plays an MDP, and the
optimal bot is optimal in every state (the solver's values hold in every
subgame).  So the best the policy can do from its decision state (h, o) is
V*(h, o), and keeping k there is worth Q*(k, o) (``solver420.solve``).  The
performance-difference identity splits each seat's gap exactly:

    gap(seat) = sum over (h, o) of  reach(seat; h, o) * (V*(h, o) - sum_k pi(k | h, o) Q*(k, o))

where reach(seat; h, o) is the expected number of times a game of the policy in
that seat against the optimal bot comes to the policy's decision at (h, o) (a
state can come back: a turn may leave the hand as it was).  The terms are
non-negative and add up to the gap (the tests check both).  Reach is summed
over the games of the four first rolls R1/R6 start with: Red rolls, then Blue,
then Red decides.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from games.dice420 import solver as s
from games.dice420 import game as g

MAX_TURNS = 10_000  # the mass of games still running falls geometrically; far below this


@dataclass(frozen=True)
class Loss:
    """What the policy's choice costs at one decision state, over both seats."""

    hand: int  # index into HANDS: the policy's hand
    other: int  # the other player's hand
    reach: float  # expected visits per game, as Red plus as Blue
    loss: float  # reach * (best value - the policy's value); chances in [0, 1]
    played: int  # the policy's most likely keep here
    best: int  # the optimal keep
    value_played: float  # P(win) from here after the policy's choice (expected over its mix)
    value_best: float  # P(win) from here after the best keep


@dataclass(frozen=True)
class Breakdown:
    gap_red: float  # exact gaps (chances) to the optimal bot's figures
    gap_blue: float
    losses: tuple[Loss, ...]  # states that lose something, largest first


def reach(policy: np.ndarray, seat: int) -> np.ndarray:
    """R[h, o]: expected visits per game to the policy's decision at (h, o), playing
    ``seat`` (``g.RED`` or ``g.BLUE``) against the optimal bot."""
    optimal = s.solve().policy_table()
    tables = {seat: policy, 1 - seat: optimal}
    first = np.where(s.WIN, 0.0, s.FIRST_ROLL)
    mass = np.outer(first, first)  # Red to move with hand h against Blue's o
    mover, visits = g.RED, np.zeros((s.N_HANDS, s.N_HANDS))
    for _ in range(MAX_TURNS):
        mass = mass * s.DECISION
        if mover == seat:
            visits += mass
        # the mover keeps k (its table), rolls h2; unless h2 wins, the other moves at (o, h2)
        mass = np.einsum("ho,hok->ok", mass, tables[mover]) @ s.T
        mass[:, s.WIN] = 0.0
        mover = 1 - mover
        if mass.sum() < 1e-18:
            return visits
    raise RuntimeError(f"games still running after {MAX_TURNS} turns")


def explain(policy: np.ndarray) -> Breakdown:
    """The gap of the policy table ``P[h, o, k]`` (``solver420.policy_table``) in each seat,
    state by state."""
    s.check_policy(policy)
    best = s.solve()
    q = best.q  # Q*[k, o]
    played_value = np.einsum("hok,ko->ho", policy, q)
    cost = np.where(s.DECISION, best.value - played_value, 0.0)
    visits_by_seat = {seat: reach(policy, seat) for seat in (g.RED, g.BLUE)}
    per_seat = {seat: visits * cost for seat, visits in visits_by_seat.items()}
    total = per_seat[g.RED] + per_seat[g.BLUE]
    visits = visits_by_seat[g.RED] + visits_by_seat[g.BLUE]
    order = np.argsort(total, axis=None)[::-1]
    losses = []
    for flat in order:
        h, o = divmod(int(flat), s.N_HANDS)
        if total[h, o] <= 1e-15:
            break
        losses.append(
            Loss(
                h,
                o,
                float(visits[h, o]),
                float(total[h, o]),
                int(policy[h, o].argmax()),
                int(best.policy[h, o]),
                float(played_value[h, o]),
                float(best.value[h, o]),
            )
        )
    return Breakdown(float(per_seat[g.RED].sum()), float(per_seat[g.BLUE].sum()), tuple(losses))


def _keep(k: int) -> str:
    kept = g.KEEPS[k]
    return f"keep {g.format_hand(kept)}" if kept else "reroll all"


def format_breakdown(b: Breakdown, top: int = 10, name: str = "policy") -> list[str]:
    """The breakdown for people: the gaps, how thin they are spread, the ``top`` largest losses."""
    total = b.gap_red + b.gap_blue
    lines = [
        f"{name}: where the gap to the optimum goes (exact)",
        f"  gap as Red {100 * b.gap_red:.4f} pp, as Blue {100 * b.gap_blue:.4f} pp; the states' losses add up to both",
    ]
    if not b.losses:
        return [*lines, "  no decision state loses anything: exactly optimal"]
    half = int(np.searchsorted(np.cumsum([loss.loss for loss in b.losses]), total / 2)) + 1
    lines.append(f"  {len(b.losses):,} states lose something; the largest {half} hold half the gap")
    lines.append(f"  the {min(top, len(b.losses))} largest losses (reach = visits per game, both seats):")
    for loss in b.losses[:top]:
        lines.append(
            f"    {100 * loss.loss:.4f} pp  reach {loss.reach:.4f}  P(win) "
            f"{loss.value_played:.4f} -> {loss.value_best:.4f}"
        )
        lines.append(
            f"      hand {g.format_hand(g.HANDS[loss.hand])} against "
            f"{g.format_hand(g.HANDS[loss.other])}: plays {_keep(loss.played)}, best {_keep(loss.best)}"
        )
    return lines
