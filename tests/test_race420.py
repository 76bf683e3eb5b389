"""games.dice420.race: exact N-player 420 under own-hand policies, checked against
exact enumeration, the two-player solver, the engine's own R7 rotation and
Monte Carlo games of the engine."""

import itertools
from fractions import Fraction

import numpy as np
import pytest

from games.dice420 import race as r
from games.dice420 import solver as solver420
from games.dice420.bots import FoundationAgent, GreedyAgent
from games.dice420 import codec as codec420
from games.dice420 import game as g
from core.dice import RandomDice, ScriptedDice

BOTS = ("greedy", "foundation")


@pytest.fixture(scope="module")
def greedy_keeps():
    return r.policy_matrix("greedy").argmax(axis=1)


# --- one player's race --------------------------------------------------------
@pytest.mark.parametrize("name", (*BOTS, "random"))
def test_hitting_distribution_sums_to_one_and_first_roll_wins_35_in_1296(name):
    dist = r.hitting_distribution(name)
    assert abs(dist.sum() - 1.0) < 1e-12
    assert abs(dist[0] - 35 / 1296) < 1e-15
    assert np.all(dist >= 0) and 50 < len(dist) < 5000


def test_always_rerolling_all_four_gives_a_geometric_hitting_time():
    dist = r.hitting_distribution(np.full(len(g.HANDS), g.REROLL_ALL))
    p = 35 / 1296
    t = np.arange(1, len(dist) + 1)
    assert np.abs(dist - p * (1 - p) ** (t - 1)).max() < 1e-15
    assert abs(r.mean_hitting_time(dist) - 1 / p) < 1e-9


def test_second_turn_win_probability_by_exact_enumeration(greedy_keeps):
    """P(T = 2) from the engine's roll distributions in exact fractions, not from solver420.T."""
    exact = Fraction(0)
    for hand, p in g.roll_distribution(()).items():
        if g.is_win(hand):
            continue
        keep = g.KEEPS[int(greedy_keeps[g.HAND_INDEX[g.canonical(hand)]])]
        exact += p * sum((q for h2, q in g.roll_distribution(keep).items() if g.is_win(h2)), Fraction(0))
    assert abs(r.hitting_distribution("greedy")[1] - float(exact)) < 1e-15


# --- rounds -------------------------------------------------------------------
@pytest.mark.parametrize("n", [2, 3, 4])
def test_round_win_probabilities_match_brute_force_over_hitting_times(n):
    dist = np.array([0.5, 0.2, 0.3])
    brute = np.zeros(n)
    for times in itertools.product(range(len(dist)), repeat=n):
        p = np.prod(dist[list(times)])
        # the first to reach 20 in turn order: lowest turn, then earliest position
        brute[min(range(n), key=lambda j: (times[j], j))] += p
    assert np.abs(r.round_win_probabilities(dist, n) - brute).max() < 1e-15


@pytest.mark.parametrize("n", range(1, 9))
def test_round_win_probabilities_sum_to_one(n):
    w = r.round_win_probabilities(r.hitting_distribution("greedy"), n)
    assert abs(w.sum() - 1.0) < 1e-12 and np.all(w > 0)


# --- two players: the exact two-player solver --------------------------------
@pytest.mark.parametrize("name", BOTS)
def test_two_players_agree_with_the_two_player_solver(name):
    table = r.two_player_table(name)
    red, blue = solver420.win_probabilities(table, table)
    w = r.round_win_probabilities(r.hitting_distribution(name), 2)
    assert abs(w[0] - red) < 1e-12 and abs(w[1] - blue) < 1e-12
    assert np.abs(r.loser_probabilities(2, name, first_player=0) - [blue, red]).max() < 1e-12
    assert np.abs(r.loser_probabilities(2, name, first_player=1) - [red, blue]).max() < 1e-12
    assert np.abs(r.loser_probabilities(2, name) - [blue, red]).max() < 1e-12  # Red first (R6)
    assert abs(r.first_player_survival(2, name) - red) < 1e-12
    assert abs(r.first_player_first_round_win(2, name) - red) < 1e-12


# --- R7 rotation, exactly, from the engine itself -----------------------------
def _finish_order_from_engine(n, first_player, positions):
    """Play a game in which, in every round, the player at ``positions[i]`` of the
    round's turn order makes 20 on their first roll; every other roll is 1-1-1-1
    (only the reroll-all keep is legal, so the engine plays every turn itself)."""
    script = []
    for j in positions:
        script += [1, 1, 1, 1] * j + [5, 5, 5, 5]
    dice = ScriptedDice(script)
    game = g.Game420(n, dice=dice, first_player=first_player)
    assert game.is_over and not dice.remaining
    return game.finish_order, game.loser


@pytest.mark.parametrize("n", [3, 4, 5])
def test_loser_recursion_matches_the_engines_round_rotation(n):
    """Sum over every sequence of winning positions: P = prod of round-win
    probabilities, seats from the engine's own R7 rotation."""
    w = {m: r.round_win_probabilities(r.hitting_distribution("greedy"), m) for m in range(2, n + 1)}
    for first in range(n):
        loser = np.zeros(n)
        first_round = np.zeros(n)
        for positions in itertools.product(*(range(m) for m in range(n, 1, -1))):
            p = np.prod([w[m][j] for m, j in zip(range(n, 1, -1), positions)])
            order, lost = _finish_order_from_engine(n, first, positions)
            loser[lost] += p
            first_round[order[0]] += p
        assert np.abs(r.loser_probabilities(n, "greedy", first_player=first) - loser).max() < 1e-14
        assert np.abs(r.first_round_win_probabilities(n, "greedy", first_player=first) - first_round).max() < 1e-14


@pytest.mark.parametrize("n", [3, 4, 8])
def test_seats_rotate_with_the_first_player_and_a_random_first_player_is_fair(n):
    base = r.loser_probabilities(n, "greedy", first_player=0)
    assert abs(base.sum() - 1.0) < 1e-12
    assert base.max() - base.min() > 1e-3  # where you sit matters
    for first in range(n):
        assert np.abs(r.loser_probabilities(n, "greedy", first_player=first) - np.roll(base, first)).max() < 1e-15
    assert np.abs(r.loser_probabilities(n, "greedy") - 1 / n).max() < 1e-12
    assert abs(r.first_player_survival(n, "greedy") - (1 - base[0])) < 1e-15


# --- policies -----------------------------------------------------------------
@pytest.mark.parametrize("agent", [GreedyAgent(), FoundationAgent()], ids=lambda a: a.name)
def test_own_hand_table_reads_the_agent(agent):
    table = r.own_hand_table(agent)
    for h, hand in enumerate(g.HANDS):
        if g.is_win(hand):
            continue
        chosen = agent.act(codec420.encode(hand, (2, 2, 3, 3)), codec420.action_mask(hand))
        assert table[h, chosen] == 1.0 and table[h].sum() == 1.0


class _PeeksAtOpponent:
    name = "peeker"

    def act(self, obs, mask):
        legal = np.flatnonzero(mask)
        return int(legal[-1] if obs[4] == 1 else legal[0])


def test_own_hand_table_refuses_an_agent_that_looks_at_the_opponent():
    with pytest.raises(ValueError, match="own hand"):
        r.own_hand_table(_PeeksAtOpponent())


def test_bad_policies_are_refused():
    keeps = r.policy_matrix("greedy").argmax(axis=1)
    low = g.HAND_INDEX[g.canonical((1, 1, 1, 2))]
    bad = keeps.copy()
    bad[low] = g.KEEP_INDEX[(6,)]  # the hand holds no 6
    with pytest.raises(ValueError, match="illegal keep"):
        r.hitting_distribution(bad)
    over = g.HAND_INDEX[g.canonical((6, 6, 6, 5))]
    bad = keeps.copy()
    bad[over] = g.KEEP_INDEX[(6, 6)]  # R4: must reroll all four
    with pytest.raises(ValueError, match="illegal keep"):
        r.hitting_distribution(bad)
    probs = r.policy_matrix(keeps)
    probs[low] *= 0.5
    with pytest.raises(ValueError, match="sums to"):
        r.hitting_distribution(probs)
    with pytest.raises(ValueError, match="shape"):
        r.hitting_distribution(np.zeros((126, 126, 14)))
    with pytest.raises(ValueError, match="integer"):
        r.hitting_distribution(keeps.astype(float))
    with pytest.raises(ValueError, match="n_players"):
        r.loser_probabilities(9, keeps)
    with pytest.raises(ValueError, match="first_player"):
        r.loser_probabilities(3, keeps, first_player=3)
    # a hand that totals 20 never moves: its row is not checked
    ok = keeps.copy()
    ok[g.HAND_INDEX[g.canonical((5, 5, 5, 5))]] = -1
    assert np.array_equal(r.hitting_distribution(ok), r.hitting_distribution(keeps))


# --- Monte Carlo games of the engine -------------------------------------------
@pytest.mark.parametrize("n, first, games, seed", [(3, 0, 20_000, 3), (4, 1, 15_000, 4)])
@pytest.mark.slow
def test_engine_games_agree_with_the_exact_probabilities(n, first, games, seed, greedy_keeps):
    dice = RandomDice(seed)
    lost = np.zeros(n)
    first_won_round_1 = 0
    for _ in range(games):
        game = g.Game420(n, dice=dice, first_player=first)
        while not game.is_over:
            hand = game.hands[game.current_player]
            game.apply(int(greedy_keeps[g.HAND_INDEX[g.canonical(hand)]]))  # apply refuses illegal keeps
        lost[game.loser] += 1
        first_won_round_1 += game.finish_order[0] == first
    exact = r.loser_probabilities(n, "greedy", first_player=first)
    se = np.sqrt(exact * (1 - exact) / games)
    assert np.all(np.abs(lost / games - exact) < 4 * se), (lost / games, exact)
    survive = r.first_player_survival(n, "greedy")
    assert abs((games - lost[first]) / games - survive) < 4 * np.sqrt(survive * (1 - survive) / games)
    win1 = r.first_player_first_round_win(n, "greedy")
    assert abs(first_won_round_1 / games - win1) < 4 * np.sqrt(win1 * (1 - win1) / games)
