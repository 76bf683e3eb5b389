"""The exact two-player Pig solver: Neller and Presser's published figure, pinned
values, and independent cross-checks (exact Fractions recursion, a plain-Python
value iteration of their model, a Monte Carlo of the engine)."""

from fractions import Fraction

import numpy as np
import pytest

from agents.base import RandomAgent
from core.dice import RandomDice
from core.engine import play_out
from games.pig import codec
from games.pig import solver as s
from games.pig.bots import Hold20Agent, OptimalPigAgent
from games.pig.game import PigGame

FIRST_WIN_100 = 0.5305927252737458  # this solver, goal 100, six faces; published: 0.5306


@pytest.fixture(scope="module")
def optimal():
    return s.solve()


@pytest.fixture(scope="module")
def hold20():
    return s.policy_table(Hold20Agent())


# ---------------------------------------------------------------- the published figure


def test_first_player_wins_0_5306_under_optimal_play(optimal):
    assert round(optimal.first_win, 4) == 0.5306
    assert optimal.first_win == pytest.approx(FIRST_WIN_100, abs=1e-9)
    assert optimal.sweeps < 400


@pytest.mark.slow
def test_forbidding_the_pass_changes_no_value():
    """The project decision (rules.md): the engine forces the first roll of a turn."""
    for goal in (20, 100):
        forced, free = s.solve(goal), s.solve(goal, allow_pass=True)
        assert forced.first_win == pytest.approx(free.first_win, abs=1e-12)
        assert np.abs(forced.value - free.value).max() < 1e-12
    assert s.solve(20).first_win == pytest.approx(0.6155585498050397, abs=1e-9)


# ---------------------------------------------------------------- exact Fractions recursion


def exact_values(goal, faces, rolls):
    """V[(i, j, k)] as Fractions when both players roll where ``rolls(i, j, k)`` (a turn
    total of 0 always rolls), solving each pair of score pairs (i, j), (j, i) exactly:
    V(i, j, k) is linear in U(j, i), the one value of the same pair it reaches (a bust)."""
    V = {}

    def turn(i, j):
        """(alpha, beta) per k: V(i, j, k) = alpha + beta * U(j, i)."""
        line = {}
        for k in range(goal - 1 - i, -1, -1):
            a, b = Fraction(1), Fraction(-1)  # the bust: 1 - U(j, i)
            for r in range(2, faces + 1):
                if i + k + r >= goal:
                    a += 1
                else:
                    a, b = a + line[k + r][0], b + line[k + r][1]
            roll = (a / faces, b / faces)
            if k and not rolls(i, j, k):
                line[k] = (1 - V[(j, i + k, 0)], Fraction(0))
            else:
                line[k] = roll
        return line

    for total in range(2 * goal - 2, -1, -1):
        for i in range(max(0, total - goal + 1), min(goal - 1, total) + 1):
            j = total - i
            if j < i:
                continue
            li, lj = turn(i, j), turn(j, i)
            (al, be), (ga, de) = li[0], lj[0]
            ui = (al + be * ga) / (1 - be * de)  # U(i, j) = al + be U(j, i), U(j, i) = ga + de U(i, j)
            uj = ga + de * ui
            for k, (a, b) in li.items():
                V[(i, j, k)] = a + b * uj
            for k, (a, b) in lj.items():
                V[(j, i, k)] = a + b * ui
    return V


@pytest.mark.parametrize("goal, faces", [(2, 6), (9, 6), (12, 4), (7, 3), (6, 2)])
def test_the_solution_is_exactly_optimal_by_fractions(goal, faces):
    """The solver's policy, valued exactly, satisfies the optimality equation exactly at
    every decision state (no move is worth more than the one it plays), and its
    float values agree with the exact ones."""
    sol = s.solve(goal, faces)
    V = exact_values(goal, faces, lambda i, j, k: sol.policy[i, j, k] > 0.5)
    for (i, j, k), v in V.items():
        assert float(v) == pytest.approx(sol.value[i, j, k], abs=1e-12)
        if k:
            hold = 1 - V[(j, i + k, 0)]
            roll = (
                1 - V[(j, i, 0)] + sum(1 if i + k + r >= goal else V[(i, j, k + r)] for r in range(2, faces + 1))
            ) / faces
            assert v == max(hold, roll)


def test_goal_2_closed_form():
    """Any roll but a 1 wins at once: U = ((1 - U) + faces - 1) / faces, so U = faces / (faces + 1)."""
    for faces in (2, 6, 20):
        assert s.solve(2, faces).first_win == pytest.approx(faces / (faces + 1), abs=1e-13)
        V = exact_values(2, faces, lambda i, j, k: True)
        assert V[(0, 0, 0)] == Fraction(faces, faces + 1)


def test_exact_values_of_hold20_at_goal_30_agree_with_evaluate():
    table = s.policy_table(Hold20Agent(), goal=30)
    V = exact_values(30, 6, lambda i, j, k: table[i, j, k] > 0.5)
    assert s.evaluate(table, table) == pytest.approx(float(V[(0, 0, 0)]), abs=1e-12)


def test_plain_value_iteration_of_neller_and_pressers_model():
    """Their model (a pass allowed at a turn total of 0), by in-place value iteration in
    plain Python: the same values as the vectorised solver, with and without the pass."""
    goal, faces = 12, 6
    P = {(i, j, k): 0.0 for i in range(goal) for j in range(goal) for k in range(goal - i)}

    def p(i, j, k):
        return 1.0 if i + k >= goal else P[(i, j, k)]

    while True:
        change = 0.0
        for i, j, k in P:
            roll = ((1 - p(j, i, 0)) + sum(p(i, j, k + r) for r in range(2, faces + 1))) / faces
            new = max(roll, 1 - p(j, i + k, 0))
            change, P[(i, j, k)] = max(change, abs(new - P[(i, j, k)])), new
        if change < 1e-15:
            break
    for sol in (s.solve(goal, faces, allow_pass=True), s.solve(goal, faces)):
        for (i, j, k), v in P.items():
            assert sol.value[i, j, k] == pytest.approx(v, abs=1e-12)


# ---------------------------------------------------------------- Monte Carlo of the engine


@pytest.mark.slow
def test_monte_carlo_of_the_engine_with_the_optimal_bot(optimal):
    """Optimal against optimal, 1500 games through the engine's game loop: the first
    player's share of wins is within 4 standard errors of the exact figure."""
    bot, rng, n = OptimalPigAgent(), np.random.default_rng(2024), 1500
    wins = sum(play_out(PigGame(dice=RandomDice(rng)), [bot, bot], codec).winner == 0 for _ in range(n))
    p = optimal.first_win
    assert abs(wins / n - p) < 4 * np.sqrt(p * (1 - p) / n)


# ---------------------------------------------------------------- evaluate and best_reply


def test_evaluate_optimal_against_itself_is_the_solved_value(optimal):
    assert s.evaluate(optimal.policy, optimal.policy) == pytest.approx(optimal.first_win, abs=1e-12)


@pytest.mark.slow
def test_best_reply_to_the_optimal_policy_gains_nothing(optimal):
    reply = s.best_reply(optimal.policy)
    assert reply.first == pytest.approx(optimal.first_win, abs=1e-12)
    assert reply.second == pytest.approx(1 - optimal.first_win, abs=1e-12)
    assert s.suboptimal_choices(reply.policy) == 0


@pytest.mark.slow
def test_hold20_figures(optimal, hold20):
    first, second = s.win_probabilities(hold20, optimal.policy)
    assert (first, second) == pytest.approx((0.4916579354532699, 0.428501569722896), abs=1e-9)
    opt_first, opt_second = 1 - second, 1 - first  # the optimal bot against hold20
    reply = s.best_reply(hold20)
    assert (reply.first, reply.second) == pytest.approx((0.5873676212372018, 0.5223819723911862), abs=1e-9)
    # the best reply wins about 5.5 pp more than half against hold20 (mean of both seats)
    assert 100 * (reply.mean - 0.5) == pytest.approx(5.4875, abs=1e-4)
    # it beats the optimal bot's score against hold20 in both seats, and evaluate agrees with it
    assert reply.first > opt_first + 0.01 and reply.second > opt_second + 0.01
    assert s.win_probabilities(reply.policy, hold20) == pytest.approx((reply.first, reply.second), abs=1e-12)


def test_seats_are_symmetric():
    goal = 40
    tables = [s.policy_table(agent, goal=goal) for agent in (Hold20Agent(), RandomAgent(), OptimalPigAgent(goal))]
    for a, b in [(0, 1), (2, 1), (1, 0), (0, 2)]:
        first_ab, second_ab = s.win_probabilities(tables[a], tables[b])
        first_ba, second_ba = s.win_probabilities(tables[b], tables[a])
        assert first_ab + second_ba == pytest.approx(1.0, abs=1e-12)
        assert second_ab + first_ba == pytest.approx(1.0, abs=1e-12)
        assert first_ab == pytest.approx(s.evaluate(tables[a], tables[b]), abs=1e-15)
    # the optimal policy wins at least its solved value against anything, from each seat
    best = s.solve(goal).first_win
    for other in tables[:2]:
        first, second = s.win_probabilities(tables[2], other)
        assert first >= best - 1e-12 and second >= 1 - best - 1e-12


def test_moving_first_is_an_advantage_and_being_ahead_helps(optimal):
    u = optimal.value[:, :, 0]
    assert optimal.first_win > 0.5
    assert np.all(np.diff(u, axis=0) >= -1e-12) and np.all(np.diff(u, axis=1) <= 1e-12)


def test_suboptimal_choices_counts_a_single_bad_move(optimal):
    assert s.suboptimal_choices(optimal.policy) == 0
    worse = optimal.policy.copy()
    worse[0, 0, 2] = 0.0  # hold 2 at 0-0: clearly worse than rolling
    assert s.suboptimal_choices(worse) == 1


# ---------------------------------------------------------------- policy tables of agents


class ActOnly:
    """An agent with nothing but ``act``: policy_table must ask it state by state."""

    name = "act-only"

    def __init__(self, agent):
        self.agent = agent

    def act(self, obs, mask):
        return self.agent.act(obs, mask)


@pytest.mark.slow
def test_policy_tables_of_the_bots(optimal):
    goal = 30
    decision = s.decision_mask(goal)
    hold20 = s.policy_table(Hold20Agent(), goal=goal)
    k = np.arange(goal)[None, None, :]
    assert np.array_equal(hold20, np.where(decision, (k < 20).astype(float), 0.0))
    assert np.array_equal(s.policy_table(ActOnly(Hold20Agent()), goal=goal), hold20)
    assert np.array_equal(s.policy_table(ActOnly(OptimalPigAgent(goal)), goal=goal), s.solve(goal).policy)
    assert np.array_equal(s.policy_table(OptimalPigAgent()), optimal.policy)
    assert np.array_equal(s.policy_table(RandomAgent(), goal=goal), np.where(decision, 0.5, 0.0))


def test_the_optimal_bot_plays_the_table_batched_and_one_by_one(optimal):
    bot = OptimalPigAgent()
    states, obs, masks = s.decision_batch()
    picks = np.random.default_rng(0).choice(len(obs), 500, replace=False)
    batched = bot.actions(obs[picks], masks[picks])
    single = [bot.act(o, m) for o, m in zip(obs[picks], masks[picks])]
    assert batched.tolist() == single
    i, j, k = states[picks].T
    assert np.array_equal(batched == 0, optimal.policy[i, j, k] == 1)
    assert 0 < (batched == 0).sum() < 500


def test_policy_tables_are_checked():
    with pytest.raises(ValueError, match="shape"):
        s.evaluate(np.zeros((5, 5, 4)), np.zeros((5, 5, 5)))
    bad = np.full((5, 5, 5), 0.5)
    bad[0, 0, 1] = 1.5
    with pytest.raises(ValueError, match="0..1"):
        s.evaluate(bad, np.full((5, 5, 5), 0.5))
    with pytest.raises(ValueError, match="shape"):
        s.evaluate(np.zeros((5, 5, 5)), np.zeros((6, 6, 6)))
    with pytest.raises(ValueError, match="goals up to 200"):
        s.solve(201)
    with pytest.raises(ValueError, match="faces must be"):
        s.solve(10, faces=1)


# ---------------------------------------------------------------- reports


def test_exact_figures_and_their_table():
    goal = 40
    opt, h20, rand = (
        s.policy_table(agent, goal=goal) for agent in (OptimalPigAgent(goal), Hold20Agent(), RandomAgent())
    )
    figures = s.exact_figures(Hold20Agent(), {"optimal": opt, "random": rand}, goal=goal)
    first, second = s.win_probabilities(h20, opt)
    best = s.solve(goal).first_win
    assert (figures["vs_optimal_first"], figures["vs_optimal_second"]) == (first, second)
    assert figures["gap_pp_first"] == pytest.approx(100 * (best - first), abs=1e-9)
    assert figures["gap_pp_second"] == pytest.approx(100 * (1 - best - second), abs=1e-9)
    assert figures["gap_pp"] == pytest.approx(100 * (0.5 - (first + second) / 2), abs=1e-9)
    assert figures["vs_random"] == pytest.approx(sum(s.win_probabilities(h20, rand)) / 2, abs=1e-12)
    assert figures["regret_vs_random_pp"] == pytest.approx(
        100 * (s.best_reply(rand).mean - figures["vs_random"]), abs=1e-9
    )
    assert figures["exploitability_pp"] == pytest.approx(100 * (s.best_reply(h20).mean - 0.5), abs=1e-9)
    assert figures["exploitability_pp"] > 1 and figures["gap_pp_first"] > 1
    assert figures["suboptimal_choices"] > 0 and figures["optimal"] is False
    top = s.exact_figures(OptimalPigAgent(goal), {"optimal": opt, "hold20": h20}, goal=goal)
    assert top["optimal"] is True and top["suboptimal_choices"] == 0
    assert abs(top["gap_pp_first"]) < 1e-9 and abs(top["exploitability_pp"]) < 1e-9
    assert top["regret_vs_hold20_pp"] > 0
    lines = s.format_figures("hold20", figures, ["optimal", "random"], goal=goal)
    assert any(f"{first:.6f}" in line for line in lines)
    assert any(f"{figures['exploitability_pp']:.4f}" in line for line in lines)
    assert all(len(line) <= 80 for line in lines)
