"""The exact 420 solver: consistency checks that would catch a wrong solver."""

from fractions import Fraction

import numpy as np
import pytest

import agents
from agents import solver420 as s
from agents.bots420 import FoundationAgent, GreedyAgent, OptimalAgent
from agents.base import RandomAgent
from envs import codec420
from envs import game420 as g
from envs.dice import RandomDice

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
