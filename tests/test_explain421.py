"""The exact gap breakdown of a two-player 421 policy (games/dice421/explain.py)."""

import numpy as np
import pytest

from agents import make_agent
from games.dice421 import solver as s
from games.dice421.explain import FOLLOWER, LEADER, explain, format_breakdown
from games.dice421 import game as g
from games.dice421.policy import FOLLOWER_LEGAL, LEADER_LEGAL, Policy421


def random_policy(pot: int, seed: int) -> Policy421:
    """Random legal action probabilities in every decision state."""
    rng = np.random.default_rng(seed)
    lead = rng.random((pot + 1, 2, s.N_HANDS, g.N_ACTIONS)) * LEADER_LEGAL
    foll = rng.random((pot + 1, 3, s.N_HANDS, s.N_HANDS, g.N_ACTIONS)) * FOLLOWER_LEGAL
    return Policy421(pot, lead / lead.sum(-1, keepdims=True), foll / foll.sum(-1, keepdims=True), "random")


@pytest.mark.parametrize("pot, seed", [(3, 0), (6, 1), (15, 2)])
@pytest.mark.slow
def test_the_state_losses_add_up_to_the_exact_gap(pot, seed):
    policy = random_policy(pot, seed)
    b = explain(policy)
    assert b.win == s.evaluate(policy, s.solve(pot).policy())
    assert b.gap > 0.01  # a random policy is far from optimal
    assert b.total == pytest.approx(b.gap, abs=1e-10)
    assert all(x.loss > 0 for x in b.losses)
    assert [x.loss for x in b.losses] == sorted((x.loss for x in b.losses), reverse=True)
    assert {x.role for x in b.losses} == {LEADER, FOLLOWER}
    assert sum(b.by(lambda x: x.role).values()) == pytest.approx(b.total, abs=1e-12)


def test_the_optimal_policy_loses_nowhere():
    b = explain(s.solve(15).policy())
    assert abs(b.gap) < 1e-11 and b.total < 1e-11


@pytest.mark.parametrize("role", [LEADER, FOLLOWER])
def test_one_wrong_move_is_found_where_it_was_made_and_costs_the_whole_gap(role):
    pot = 7
    opt = s.solve(pot)
    lead, foll = opt.policy().leader.copy(), opt.policy().follower.copy()
    hand = g.hand_rank((5, 4, 3))
    if role == LEADER:  # leading with 3 tokens, after roll 1: keep 5 instead of the best move
        row = lead[3, 0, hand]
        state = dict(tokens=3, roll=1, leader_hand=-1)
    else:  # following 6-6-1 with 4 tokens, at roll 1 of 3
        leader_hand = g.hand_rank((6, 6, 1))
        row = foll[4, 1, leader_hand, hand]
        state = dict(tokens=4, roll=1, leader_hand=leader_hand)
    worse = g.action_for_keep((5,))
    assert row.argmax() != worse
    row[:] = 0.0
    row[worse] = 1.0
    b = explain(Policy421(pot, lead, foll, "one slip"))
    assert b.gap > 1e-7
    top = b.losses[0]
    assert (top.role, top.tokens, top.roll, top.hand, top.leader_hand) == (
        role,
        state["tokens"],
        state["roll"],
        hand,
        state["leader_hand"],
    )
    assert top.played == worse and top.best == opt.action(
        top.tokens, role == LEADER, top.roll, hand, top.rolls_owed, max(top.leader_hand, 0)
    )
    assert top.loss == pytest.approx(b.gap, abs=1e-12)
    assert top.loss == pytest.approx(top.reach * (top.values[1] - top.values[0]), rel=1e-12)
    assert b.total - top.loss < 1e-12


@pytest.mark.slow
def test_the_report_fits_80_columns_and_names_the_largest_loss():
    b = explain(s.as_policy(make_agent("421", "heuristic")))
    lines = format_breakdown(b, top=5)
    assert all(len(line) <= 80 for line in lines)
    text = "\n".join(lines)
    assert f"gap {100 * b.gap:.4f} pp" in text
    assert g.describe_action(b.losses[0].played) in text
