"""The exact gap breakdown of a two-player 420 policy (games/dice420/explain.py)."""

import io

import numpy as np
import pytest

from agents import make_agent
from games.dice420 import explain as explain420
from games.dice420 import solver as solver420
from games.dice420 import game as g
from play.__main__ import main


def exact_gaps(table):
    red, blue = solver420.win_probabilities(table, solver420.solve().policy_table())
    best = solver420.solve().red_win
    return best - red, (1 - best) - blue


@pytest.mark.parametrize("bot", ["greedy", "foundation", "random"])
def test_the_losses_are_non_negative_and_add_up_to_each_seats_exact_gap(bot):
    table = solver420.policy_table(make_agent("420", bot))
    b = explain420.explain(table)
    red, blue = exact_gaps(table)
    assert b.gap_red == pytest.approx(red, abs=1e-12) and b.gap_blue == pytest.approx(blue, abs=1e-12)
    assert sum(loss.loss for loss in b.losses) == pytest.approx(red + blue, abs=1e-12)
    assert all(loss.loss > 0 and loss.reach > 0 for loss in b.losses)
    assert [loss.loss for loss in b.losses] == sorted((loss.loss for loss in b.losses), reverse=True)
    assert all(loss.value_played < loss.value_best for loss in b.losses)


def test_the_optimal_policy_loses_nowhere():
    b = explain420.explain(solver420.solve().policy_table())
    assert b.losses == () and abs(b.gap_red) < 1e-12 and abs(b.gap_blue) < 1e-12
    assert "exactly optimal" in "\n".join(explain420.format_breakdown(b))


def test_reach_counts_the_decisions_of_real_games():
    """Red's first decision happens unless Red's or Blue's first roll makes 20 (R1, R5):
    the reach of Red's decisions over the first-roll states sums to that chance."""
    optimal = solver420.solve().policy_table()
    first = np.where(solver420.WIN, 0.0, solver420.FIRST_ROLL)
    visits = explain420.reach(optimal, g.RED)
    assert visits.sum() > first.sum() ** 2  # later decisions come on top of the first
    no_win = 1 - 35 / 1296
    assert first.sum() == pytest.approx(no_win)
    assert (visits >= np.outer(first, first) - 1e-15).all()


def test_one_mistake_costs_its_reach_times_its_price():
    """Change the optimal policy at one state: the breakdown finds that state alone, with
    the solver's price of the worse keep."""
    best = solver420.solve()
    table = best.policy_table()
    h, o = g.HAND_INDEX[g.canonical((6, 6, 5, 1))], g.HAND_INDEX[g.canonical((6, 5, 4, 3))]
    worse = g.KEEPS.index((6, 6, 5))
    table[h, o] = 0.0
    table[h, o, worse] = 1.0
    b = explain420.explain(table)
    assert len(b.losses) == 1
    (loss,) = b.losses
    assert (loss.hand, loss.other, loss.played, loss.best) == (h, o, worse, g.KEEPS.index((6, 6)))
    assert loss.value_best - loss.value_played == pytest.approx(best.q[g.KEEPS.index((6, 6)), o] - best.q[worse, o])
    assert loss.loss == pytest.approx(loss.reach * (loss.value_best - loss.value_played))


@pytest.mark.slow
def test_evaluate_explain_prints_the_breakdown_in_80_columns():
    out = io.StringIO()
    assert main(["evaluate", "420", "--agent", "greedy", "--exact", "--explain", "3"], out=out) == 0
    text = out.getvalue()
    b = explain420.explain(solver420.policy_table(make_agent("420", "greedy")))
    assert "\n".join(explain420.format_breakdown(b, 3, "greedy")) in text
    assert text.count(" pp  reach ") == 3 and "6-6-5" in text
    assert all(len(line) <= 80 for line in text.splitlines())
