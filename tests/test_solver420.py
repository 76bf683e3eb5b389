"""The exact 420 solver: consistency checks that would catch a wrong solver."""

from fractions import Fraction

import numpy as np
import pytest

import agents
from games.dice420 import solver as s
from games.dice420.bots import FoundationAgent, GreedyAgent, OptimalAgent
from agents.base import RandomAgent
from games.dice420 import codec as codec420
from games.dice420 import game as g
from core.dice import RandomDice

# The figure this solver converges to (value iteration to 1e-15); the rules say "about 0.527".
RED_WINS_UNDER_OPTIMAL_PLAY = 0.5270148583818


def test_transition_table_matches_exact_enumeration():
    for k, kept in enumerate(g.KEEPS):
        exact = g.roll_distribution(kept)
        assert sum(exact.values()) == 1
        for hand, p in exact.items():
            assert s.T[k, g.HAND_INDEX[hand]] == pytest.approx(float(p), abs=1e-15)
    assert s.FIRST_ROLL @ s.WIN == pytest.approx(35 / 1296, abs=1e-15)
    assert float(Fraction(35, 1296)) == pytest.approx(s.FIRST_ROLL[s.WIN].sum(), abs=1e-15)


def test_optimal_red_win_probability_is_pinned():
    sol = s.solve()
    assert sol.red_win == pytest.approx(RED_WINS_UNDER_OPTIMAL_PLAY, abs=1e-12)
    assert 0.52 < sol.red_win < 0.53


def test_bellman_equation_holds_at_the_solution():
    sol = s.solve()
    backed_up = s._best(s.keep_values(sol.value))
    assert np.abs(backed_up - sol.value)[s.DECISION].max() < 1e-13


def test_policy_evaluation_of_the_optimal_policy_equals_the_solved_value():
    sol = s.solve()
    table = sol.policy_table()
    x, y = s.evaluate(table, table)
    assert np.abs(x - sol.value)[s.DECISION].max() < 1e-12
    assert np.abs(y - sol.value)[s.DECISION].max() < 1e-12
    red, blue = s.win_probabilities(table, table)
    assert red + blue == pytest.approx(1.0, abs=1e-12)
    assert red == pytest.approx(sol.red_win, abs=1e-12)


def test_best_reply_to_optimal_is_optimal():
    sol = s.solve()
    reply, value = s.best_reply(sol.policy_table())
    assert np.all(reply[s.DECISION] == sol.policy[s.DECISION])
    assert np.abs(value - sol.value)[s.DECISION].max() < 1e-12


@pytest.mark.parametrize("bot", [GreedyAgent(), FoundationAgent(), RandomAgent(0)], ids=lambda b: b.name)
def test_no_policy_beats_optimal_and_best_replies_exploit(bot):
    table = s.policy_table(bot)
    opt = s.solve().policy_table()
    red, blue = s.win_probabilities(table, opt)
    assert red < s.solve().red_win and blue < 1 - s.solve().red_win
    # the optimal bot wins at least as much against a weaker bot as against itself
    opt_red, opt_blue = s.win_probabilities(opt, table)
    assert opt_red > s.solve().red_win and opt_blue > 1 - s.solve().red_win
    # a best reply to the bot does at least as well as the optimal bot does against it
    reply, _ = s.best_reply(table)
    br_red, _ = s.win_probabilities(s.one_hot(reply), table)
    assert br_red >= opt_red - 1e-12


def test_close_call_keep_6_6_from_1_5_6_6():
    """RULES/issue: from 1-5-6-6 the one-roll-greedy keep 5-6-6 is worse than 6-6."""
    sol = s.solve()
    for hand in ((6, 6, 5, 1), (6, 6, 5, 2)):
        h = g.HAND_INDEX[hand]
        keeps = {g.KEEPS[a] for a in sol.policy[h][~s.WIN]}
        assert keeps == {(6, 6)}
    obs, mask = codec420.encode((6, 6, 5, 1), (3, 2, 1, 1)), codec420.action_mask((6, 6, 5, 1))
    assert g.KEEPS[GreedyAgent().act(obs, mask)] == (6, 6, 5)
    assert g.KEEPS[OptimalAgent().act(obs, mask)] == (6, 6)


class ActOnly:
    """An agent seen only through ``act`` (no ``action_probs``, no ``exact_table``)."""

    def __init__(self, agent):
        self.agent, self.name = agent, agent.name

    def act(self, obs, action_mask):
        return self.agent.act(obs, action_mask)


def test_optimal_agent_matches_the_solver_policy_everywhere():
    # its table is the solution's, read from exact_table...
    table = s.policy_table(OptimalAgent())
    assert np.array_equal(table, s.solve().policy_table())
    # ...and what it plays, asked at every decision through act, is the solver's policy.
    played = s.policy_table(ActOnly(OptimalAgent()))
    assert np.all(played.argmax(axis=2)[s.DECISION] == s.solve().policy[s.DECISION])
    assert np.array_equal(played[s.DECISION], table[s.DECISION])


@pytest.mark.parametrize("name", ["random", "greedy", "foundation", "optimal"])
def test_bot_table_is_the_cached_table_of_the_named_bot(name):
    table = agents.bot_table("420", name)
    assert table is agents.bot_table("420", name)  # cached
    assert table.shape == (126, 126, g.N_ACTIONS)
    assert np.array_equal(table, s.policy_table(agents.make_agent("420", name, seed=0)))
    s.check_policy(table)  # a valid policy: rows sum to 1 on legal keeps
    assert not hasattr(s, "bot_table")


def test_exact_strength_against_opponent_tables_by_name():
    opponents = {"optimal": agents.bot_table("420", "optimal"), "greedy": agents.bot_table("420", "greedy")}
    strength = s.exact_strength(FoundationAgent(), opponents)
    assert list(strength) == ["optimal", "greedy"]
    foundation = s.policy_table(FoundationAgent())
    assert strength == s.exact_strength(foundation, opponents)
    for name, table in opponents.items():
        assert strength[name] == s.win_probabilities(foundation, table)
    red, blue = s.exact_strength(OptimalAgent(), {"optimal": opponents["optimal"]})["optimal"]
    assert red == pytest.approx(RED_WINS_UNDER_OPTIMAL_PLAY, abs=1e-12)
    assert blue == pytest.approx(1 - RED_WINS_UNDER_OPTIMAL_PLAY, abs=1e-12)
    assert s.exact_strength(OptimalAgent(), {}) == {}


@pytest.mark.slow
def test_exact_figures_agree_with_monte_carlo_through_the_engine():
    """Greedy (Red) vs foundation (Blue): exact value vs 20,000 engine games."""
    greedy, foundation = s.policy_table(GreedyAgent()), s.policy_table(FoundationAgent())
    exact_red, _ = s.win_probabilities(greedy, foundation)
    keeps = {g.RED: greedy.argmax(axis=2), g.BLUE: foundation.argmax(axis=2)}
    dice = RandomDice(123)
    wins, n = 0, 20_000
    for _ in range(n):
        game = g.Game420(dice=dice)  # the engine plays the turns without a choice itself
        while not game.is_over:
            seat = game.current_player
            own, opp = game.hands[seat], game.hands[1 - seat]
            game.apply(int(keeps[seat][g.HAND_INDEX[own], g.HAND_INDEX[opp]]))
        wins += game.winner == g.RED
    stderr = (exact_red * (1 - exact_red) / n) ** 0.5
    assert abs(wins / n - exact_red) < 4 * stderr


def test_policy_tables_are_checked():
    bad = np.zeros((126, 126, 14))
    with pytest.raises(ValueError, match="sum to 1"):
        s.evaluate(bad, s.solve().policy_table())
    illegal = s.solve().policy_table().copy()
    h = g.HAND_INDEX[(2, 1, 1, 1)]
    o = g.HAND_INDEX[(3, 1, 1, 1)]
    illegal[h, o] = 0
    illegal[h, o, g.KEEP_INDEX[(6,)]] = 1
    with pytest.raises(ValueError, match="illegal"):
        s.evaluate(illegal, illegal)


# --- exact figures, not just inequalities (found by mutation testing) ---------------


def test_random_and_greedy_against_optimal_are_pinned():
    """A stochastic policy (random) must go through the probability path of the evaluation:
    read as its argmax it would score about (0.2207, 0.1991) instead."""
    opt, rnd = agents.bot_table("420", "optimal"), agents.bot_table("420", "random")
    red, blue = s.win_probabilities(rnd, opt)
    assert red == pytest.approx(0.3738104650424276, abs=1e-12)
    assert blue == pytest.approx(0.33588258318675834, abs=1e-12)
    red, blue = s.win_probabilities(opt, rnd)
    assert red == pytest.approx(0.6641174168132452, abs=1e-12)
    assert blue == pytest.approx(0.6261895349575763, abs=1e-12)
    red, blue = s.win_probabilities(agents.bot_table("420", "greedy"), opt)
    assert red == pytest.approx(0.5257658498947986, abs=1e-12)
    assert blue == pytest.approx(0.4718967310679162, abs=1e-12)


def test_suboptimal_choices_counts_decision_states_with_a_worse_keep():
    sol = s.solve()
    assert s.suboptimal_choices(sol.policy) == 0
    assert s.suboptimal_choices(sol.policy, tol=0.0) == 0  # the best keep is not worse than itself
    assert s.suboptimal_choices(agents.bot_table("420", "greedy").argmax(axis=2)) == 363
    assert s.suboptimal_choices(agents.bot_table("420", "random").argmax(axis=2)) == 9559
    # one decision state with a worse keep counts once...
    h, o = g.HAND_INDEX[(6, 6, 5, 1)], g.HAND_INDEX[(3, 2, 1, 1)]
    keeps = sol.policy.copy()
    keeps[h, o] = g.KEEP_INDEX[(6, 6, 5)]
    assert s.suboptimal_choices(keeps) == 1
    # ...unless the loss is within the tolerance
    loss = s._best(sol.q)[h, o] - sol.q[g.KEEP_INDEX[(6, 6, 5)], o]
    assert 0 < loss < 0.1
    assert s.suboptimal_choices(keeps, tol=loss * 1.01) == 0 and s.suboptimal_choices(keeps, tol=loss * 0.99) == 1
    # a state where a hand already totals 20 is not a decision: it never counts
    win = g.HAND_INDEX[(6, 5, 5, 4)]
    keeps = sol.policy.copy()
    keeps[win, o] = keeps[h, win] = g.REROLL_ALL
    assert s.suboptimal_choices(keeps) == 0


def test_value_iteration_that_does_not_converge_raises(monkeypatch):
    opt = s.solve().policy_table()
    monkeypatch.setattr(s, "MAX_SWEEPS", 3)
    with pytest.raises(RuntimeError) as err:
        s.evaluate(opt, opt)
    assert str(err.value).startswith("value iteration did not converge to 1e-15 in 3 sweeps (last change 0.1035")
    with pytest.raises(RuntimeError, match="in 3 sweeps"):
        s.best_reply(opt)


def test_solving_to_a_coarser_tolerance_takes_fewer_sweeps():
    coarse = s.solve(1e-9)
    assert coarse.sweeps == 175 and s.solve().sweeps == 291
    assert coarse.red_win == pytest.approx(0.5270148587253848, abs=1e-13)
    assert abs(coarse.red_win - RED_WINS_UNDER_OPTIMAL_PLAY) < 1e-9


def test_exact_figures_and_their_table_for_the_greedy_bot():
    opponents = {"optimal": agents.bot_table("420", "optimal"), "random": agents.bot_table("420", "random")}
    figures = s.exact_figures(GreedyAgent(), opponents)
    assert list(figures) == [
        "vs_optimal_red",
        "vs_optimal_blue",
        "gap_pp_red",
        "gap_pp_blue",
        "suboptimal_choices",
        "optimal",
        "vs_random",
    ]
    assert figures["vs_optimal_red"] == pytest.approx(0.5257658498947986, abs=1e-12)
    assert figures["vs_optimal_blue"] == pytest.approx(0.4718967310679162, abs=1e-12)
    assert figures["gap_pp_red"] == pytest.approx(0.12490084870065976, abs=1e-9)
    assert figures["gap_pp_blue"] == pytest.approx(0.10884105502786401, abs=1e-9)
    assert figures["suboptimal_choices"] == 363 and figures["optimal"] is False
    assert figures["vs_random"] == pytest.approx(0.6439497690175584, abs=1e-12)
    assert s.count_suboptimal(GreedyAgent()) == 363
    assert s.format_figures("greedy", figures, opponents) == [
        "exact win probability vs the optimal bot",
        "                as Red   as Blue  gap Red (pp)  gap Blue (pp)",
        "  optimal     0.527015  0.472985        0.0000         0.0000",
        "  greedy      0.525766  0.471897        0.1249         0.1088",
        "",
        "exact win probability (mean of both seats) vs each heuristic",
        "  vs random      0.643950",
        "not yet exactly optimal: 363 decision states with a worse than best choice",
    ]
    best = s.exact_figures(OptimalAgent(), {"optimal": opponents["optimal"]})
    assert best == {
        "vs_optimal_red": pytest.approx(RED_WINS_UNDER_OPTIMAL_PLAY, abs=1e-12),
        "vs_optimal_blue": pytest.approx(1 - RED_WINS_UNDER_OPTIMAL_PLAY, abs=1e-12),
        "gap_pp_red": 0.0,
        "gap_pp_blue": 0.0,
        "suboptimal_choices": 0,
        "optimal": True,
    }
    assert s.format_figures("optimal", best, ["optimal"])[-1] == "exactly optimal in both seats"
    assert s._pp(0.5e-12) == 0.0 and s._pp(-0.5e-12) == 0.0 and s._pp(0.25) == 25.0
    assert s._pp(1e-12) == pytest.approx(1e-10, rel=1e-9)  # only a difference below 1e-12 reads as 0


def test_exactly_optimal_means_in_both_seats():
    """One greedy keep, 6-6-5 from 6-6-5-1 against 2-1-1-1, costs Red 6.4e-7 and Blue 3.4e-7:
    within the 5e-7 precision as Blue only, so the policy is not exactly optimal."""
    sol = s.solve()
    keeps = sol.policy.copy()
    h, o = g.HAND_INDEX[(6, 6, 5, 1)], g.HAND_INDEX[(2, 1, 1, 1)]
    keeps[h, o] = g.KEEP_INDEX[(6, 6, 5)]

    class OneSlip:
        name = "one slip"

        def exact_table(self):
            return s.one_hot(keeps)

    figures = s.exact_figures(OneSlip(), {"optimal": sol.policy_table()})
    assert figures["gap_pp_red"] == pytest.approx(6.37576621942415e-05, abs=1e-9)
    assert figures["gap_pp_blue"] == pytest.approx(3.3830790691080637e-05, abs=1e-9)
    assert figures["suboptimal_choices"] == 1 and figures["optimal"] is False


def test_tolerance_is_passed_on_and_zero_means_an_exact_fixed_point():
    rnd, opt = agents.bot_table("420", "random"), agents.bot_table("420", "optimal")
    loose, tight = s.win_probabilities(rnd, opt, tol=1e-3), s.win_probabilities(rnd, opt)
    assert 1e-4 < loose[0] - tight[0] < 1e-2 and 1e-4 < loose[1] - tight[1] < 1e-2
    # a change of exactly tol counts as converged: with tol 0, a step that changes nothing
    # stops after one sweep
    (v,), sweeps = s._iterate(lambda v: (v,), 1, 0.0, 5)
    assert sweeps == 1 and not v.any()


def test_policy_table_and_check_policy_messages_word_for_word():
    class Stubborn:
        name = "stubborn"

        def act(self, obs, action_mask):
            return g.KEEP_INDEX[(6, 6, 6)]

    with pytest.raises(ValueError) as err:
        s.policy_table(Stubborn())
    assert str(err.value) == "stubborn puts probability 1 on illegal actions at hand 1-1-1-1 against 1-1-1-1"
    with pytest.raises(ValueError) as err:
        s.check_policy(np.zeros((126, 126, 13)))
    assert str(err.value) == "policy table must have shape (126, 126, 14), got (126, 126, 13)"
    with pytest.raises(ValueError) as err:
        s.check_policy(np.zeros((126, 126, 14)))
    assert str(err.value) == "policy table rows must sum to 1 in every decision state"
    illegal = s.solve().policy_table().copy()
    h, o = g.HAND_INDEX[(2, 1, 1, 1)], g.HAND_INDEX[(3, 1, 1, 1)]
    illegal[h, o] = 0
    illegal[h, o, g.KEEP_INDEX[(6,)]] = 1
    with pytest.raises(ValueError) as err:
        s.check_policy(illegal)
    assert str(err.value) == "policy table puts probability on an illegal keep"
