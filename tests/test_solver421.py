"""The exact two-player 421 solver: checks that would catch a wrong solver.

Independent references: a pure-Python enumeration of dice (no transition tables,
no numpy) for the one- and two-token games, and Monte-Carlo runs of the rules
engine itself, with the solver's agent at the table.
"""

from __future__ import annotations

import math
from functools import lru_cache
from itertools import combinations, product

import numpy as np
import pytest

import agents
from games.dice421 import solver as s
from agents.base import RandomAgent
from games.dice421.bots import Greedy421Agent, HeuristicAgent
from games.dice421 import codec as codec421
from games.dice421 import game as g
from games.dice421 import policy as policy421
from core.dice import RandomDice
from helpers import played

# ------------------------------------------------------------------ a brute force, dice by dice

DICE = {k: list(product(range(1, 7), repeat=k)) for k in range(4)}


def rank(dice) -> int:
    return g.hand_rank(dice)


def keeps_of(dice) -> list[tuple]:
    """The distinct value-sets a player may keep (0, 1 or 2 of its dice), found from positions."""
    return sorted({tuple(sorted(c)) for k in range(3) for c in combinations(dice, k)})


def after_keep(keep, f) -> float:
    """Mean of f over the hands made by keeping ``keep`` and rolling the other dice."""
    outcomes = DICE[3 - len(keep)]
    return sum(f(tuple(sorted(keep + o))) for o in outcomes) / len(outcomes)


def combine(values, how: str) -> float:
    return max(values) if how == "max" else min(values) if how == "min" else sum(values) / len(values)


def pair_probabilities():
    """(P(first roll lower), P(tie), P(first roll higher)) of two single rolls, by all 216^2 pairs."""
    lower = tie = 0
    ranks = [rank(d) for d in DICE[3]]
    for a in ranks:
        for b in ranks:
            lower += a < b
            tie += a == b
    n = len(ranks) ** 2
    return lower / n, tie / n, (n - lower - tie) / n


def rampo_first_loses_by_series() -> float:
    """RAMPO repeats with the order flipped: the first roller loses in the k-th repeat with
    q (k even, it rolls first again) or r (k odd): sum_k s^k (q or r) = (q + s r) / (1 - s^2)."""
    q, tie, r = pair_probabilities()
    return (q + tie * r) / (1 - tie * tie)


def two_token_leader_wins(leader: str, follower: str) -> float:
    """Pot 2, tokens 1-1: P(the leader wins) by enumerating dice.  With one token each,
    a round decides the game: the higher hand gives its token away (and wins), and a
    tie goes to RAMPO.  ``leader``/``follower``: "max"/"min" (best play) or "uniform"
    (every legal action equally likely)."""
    rampo = rampo_first_loses_by_series()  # the follower made the tie and rolls first

    @lru_cache(maxsize=None)
    def follower_value(leader_rank: int, hand: tuple, rolls_left: int) -> float:
        if rolls_left == 0:
            mine = rank(hand)
            return 1.0 if leader_rank > mine else 0.0 if leader_rank < mine else rampo
        return combine([follower_keep(leader_rank, k, rolls_left) for k in keeps_of(hand)], follower)

    @lru_cache(maxsize=None)
    def follower_keep(leader_rank: int, keep: tuple, rolls_left: int) -> float:
        return after_keep(keep, lambda h: follower_value(leader_rank, h, rolls_left - 1))

    @lru_cache(maxsize=None)
    def leader_value(hand: tuple, roll: int) -> float:
        stop = follower_keep(rank(hand), (), roll)  # the follower owes ``roll`` rolls
        if roll == 3:
            return stop
        options = [stop] + [leader_keep(k, roll) for k in keeps_of(hand)]
        return combine(options, "max" if leader == "max" else "uniform")

    @lru_cache(maxsize=None)
    def leader_keep(keep: tuple, roll: int) -> float:
        return after_keep(keep, lambda h: leader_value(h, roll + 1))

    return after_keep((), lambda h: leader_value(h, 1))


def two_token_game(x_a_leads: float, x_b_leads: float) -> float:
    """Pot 2: P(A wins), by enumerating the charge dice.  A charge round gives 1 token
    (a tie and RAMPO, or a high hand worth 1) or 2 (the taker then holds both and loses)."""
    ones = 0
    for a in DICE[3]:
        for b in DICE[3]:
            ra, rb = rank(a), rank(b)
            ones += ra == rb or g.hand_value(a if ra > rb else b) == 1
    p1 = ones / len(DICE[3]) ** 2
    # Every charge taker is either player with probability 1/2 (a fair draw of seats;
    # RAMPO is fair).  Two single tokens to different players: the second taker leads.
    p_discharge = p1 * 0.5
    return (1 - p_discharge) * 0.5 + p_discharge * 0.5 * (x_a_leads + 1 - x_b_leads)


# ------------------------------------------------------------------ the model's building blocks


def test_transition_table_and_rampo_by_enumeration():
    assert np.allclose(s.T.sum(1), 1.0)
    assert s.FIRST_ROLL[g.hand_rank((4, 2, 1))] == pytest.approx(6 / 216, abs=1e-15)
    assert s.FIRST_ROLL[g.hand_rank((1, 1, 1))] == pytest.approx(1 / 216, abs=1e-15)
    keep_11 = g.KEEPS.index((1, 1))
    assert s.T[keep_11, g.hand_rank((1, 1, 1))] == pytest.approx(1 / 6, abs=1e-15)
    assert s.RAMPO_FIRST_LOSES == pytest.approx(rampo_first_loses_by_series(), abs=1e-14)
    assert s.rampo_first_loses() == pytest.approx(rampo_first_loses_by_series(), abs=1e-14)  # as computed at import
    assert s.RAMPO_FIRST_LOSES == pytest.approx(0.5, abs=1e-14)


def test_charge_outcomes_are_a_fair_distribution():
    for pot in (1, 2, 5, 15):
        c = s.charge_outcomes(pot)
        assert c.sum() == pytest.approx(1.0, abs=1e-13)
        assert np.allclose(c[0], c[1], atol=1e-15)  # the charge favours neither seat
        assert c[:, 0].sum() == 0.0  # the last taker took at least one token
    assert np.allclose(s.charge_outcomes(1), [[0, 0.5], [0, 0.5]])


# ------------------------------------------------------------------ one and two tokens, independently


def test_one_token_game_is_a_coin_toss_whatever_the_policies():
    opt = s.solve(1).policy()
    rand = s.policy_table(RandomAgent(0), 1)
    assert s.evaluate(opt, rand) == pytest.approx(0.5, abs=1e-15)
    assert s.solve(1).game_value == pytest.approx(0.5, abs=1e-15)


def test_two_token_game_matches_enumeration_of_dice():
    sol = s.solve(2)
    best = two_token_leader_wins("max", "min")
    assert sol.value[1] == pytest.approx(best, abs=1e-12)
    assert 0.5 < best < 1  # the leader's choice of n is an advantage
    rand = s.policy_table(RandomAgent(0), 2)
    reply = s.best_reply(rand)
    reply_leads, random_leads = two_token_leader_wins("max", "uniform"), two_token_leader_wins("uniform", "min")
    assert reply.lead_value[1] == pytest.approx(reply_leads, abs=1e-12)
    assert reply.opponent_lead_value[1] == pytest.approx(random_leads, abs=1e-12)
    assert reply.value == pytest.approx(two_token_game(reply_leads, random_leads), abs=1e-12)
    # with one token each the game ends after one round: the optimal follower is a best reply
    opt = sol.policy()
    x_opt, x_rand = s.discharge_values(opt, rand)
    assert x_rand[1] == pytest.approx(random_leads, abs=1e-12)
    assert s.evaluate(opt, rand) == pytest.approx(two_token_game(x_opt[1], x_rand[1]), abs=1e-12)
    assert x_opt[1] <= reply_leads


def test_a_leader_who_always_stops_at_once_ties_at_two_tokens():
    """Stopping on the first roll leaves the follower one roll: two i.i.d. rolls, 1/2."""
    stop = np.zeros((3, 2, s.N_HANDS, s.N_ACTIONS))
    stop[1, :, :, g.STOP] = 1.0
    rand = s.policy_table(RandomAgent(0), 2)
    stopper = s.Policy421(2, stop, rand.follower, "stopper")
    x, _ = s.discharge_values(stopper, s.solve(2).policy())
    assert x[1] == pytest.approx(0.5, abs=1e-14)


# ------------------------------------------------------------------ the solution


@pytest.mark.parametrize("pot", [3, 5, 15])
def test_bounds_meet_and_bellman_holds(pot):
    sol = s.solve(pot)
    t = slice(1, pot)
    assert np.all(sol.lower[t] <= sol.value[t]) and np.all(sol.value[t] <= sol.upper[t])
    assert float((sol.upper - sol.lower).max()) <= s.DEFAULT_TOL
    w = sol.value
    backed_up = s._play_round(s._round_utility(pot, w, w, w, w), None, None)
    assert np.abs(backed_up - w[t]).max() < 1e-12
    assert np.all((0 < w[t]) & (w[t] < 1))


@pytest.mark.parametrize("pot", [5, 15])
@pytest.mark.slow
def test_whole_game_is_even_and_optimal_equals_its_best_reply(pot):
    sol = s.solve(pot)
    opt = sol.policy()
    assert sol.game_value == pytest.approx(0.5, abs=1e-12)
    assert s.evaluate(opt, opt) == pytest.approx(0.5, abs=1e-12)
    x_a, x_b = s.discharge_values(opt, opt)  # the linear solve, not the iteration
    assert np.abs(x_a - sol.value).max() < 1e-11 and np.abs(x_b - sol.value).max() < 1e-11
    reply = s.best_reply(opt)
    assert reply.value == pytest.approx(0.5, abs=1e-11)
    assert np.abs(reply.lead_value - sol.value).max() < 1e-11
    assert s.evaluate(reply.policy, opt) == pytest.approx(0.5, abs=1e-11)


def test_bots_lose_to_optimal_and_best_replies_exploit_them():
    pot = 5
    opt = s.solve(pot).policy()
    for agent in (HeuristicAgent(), Greedy421Agent(), RandomAgent(0)):
        table = s.policy_table(agent, pot)
        vs_opt = s.evaluate(table, opt)
        assert vs_opt < 0.5
        assert s.evaluate(opt, table) == pytest.approx(1 - vs_opt, abs=1e-12)
        reply = s.best_reply(table)
        assert reply.value >= 1 - vs_opt - 1e-12  # at least what optimal wins against it
        assert reply.value >= 0.5
        # the reply's table, evaluated forward by the linear solve, wins what the iteration said
        assert s.evaluate(reply.policy, table) == pytest.approx(reply.value, abs=1e-11)


# ------------------------------------------------------------------ agents, observations, the engine


def test_representative_observations_are_what_the_engine_shows():
    pot = 5
    lead_obs, foll_obs = s.decision_observations(pot)
    agent = s.OptimalAgent421()
    seen = 0
    for seed in range(40):
        game = g.Game421(2, pot=pot, dice=RandomDice(seed))
        while not game.is_over:
            seat = game.current_player
            obs = codec421.observe(game, seat)
            h = g.hand_rank(game.dice_in_hand)
            t = game.tokens[seat]
            if seat == game.leader:
                expected = lead_obs[t - 1, game.rolls_used - 1, h]
                direct = s.leader_observation(t, pot - t, game.rolls_used, game.dice_in_hand)
            else:
                d = s.FOLLOWER_DECISION_INDEX[(game.rolls_allowed, game.rolls_used)]
                expected = foll_obs[t - 1, d, g.hand_rank(game.hands_played[0][1]), h]
                direct = s.follower_observation(
                    t, pot - t, game.rolls_allowed, game.rolls_used, game.hands_played[0][1], game.dice_in_hand
                )
            np.testing.assert_array_equal(obs, expected)
            np.testing.assert_array_equal(obs, direct)
            action = agent.act(obs, codec421.legal_mask(game.legal_actions()))
            assert agent.action_probs(obs[None], None)[0, action] == 1.0  # the batch lookup agrees
            game.apply(action)
            seen += 1
    assert seen > 100


class Without:
    """An agent with only ``act`` (and ``action_probs`` if ``batched``): no ``exact_table``."""

    def __init__(self, agent, batched=False):
        self.agent, self.name = agent, agent.name
        if batched:
            self.action_probs = agent.action_probs

    def act(self, obs, action_mask):
        return self.agent.act(obs, action_mask)


def test_optimal_agent_plays_the_solved_table():
    pot = 4
    opt = s.solve(pot).policy()
    exact = s.policy_table(s.OptimalAgent421(), pot)  # read from exact_table
    assert exact.name == "optimal" and exact.pot == pot
    for table in (
        exact,
        s.policy_table(Without(s.OptimalAgent421()), pot),
        s.policy_table(Without(s.OptimalAgent421(), batched=True), pot),
    ):
        np.testing.assert_array_equal(table.leader[1:pot], opt.leader[1:pot])
        np.testing.assert_array_equal(table.follower[1:pot], opt.follower[1:pot])


def test_policy421_lives_in_envs_and_as_policy_takes_no_names():
    assert s.Policy421 is policy421.Policy421
    opt = agents.bot_table("421", "optimal", pot=3)
    assert isinstance(opt, policy421.Policy421) and opt.name == "optimal"
    assert agents.bot_table("421", "optimal", pot=3) is opt  # cached
    assert s.as_policy(opt, 3) is opt
    with pytest.raises(ValueError, match="pot 3"):
        s.as_policy(opt, 5)
    for name in ("optimal", "random"):
        with pytest.raises(TypeError, match="name"):
            s.as_policy(name, 3)
        with pytest.raises(TypeError):
            s.win_probability(name, opt, 3)
    rand = s.as_policy(RandomAgent(0), 3)
    np.testing.assert_array_equal(rand.leader, agents.bot_table("421", "random", pot=3).leader)
    np.testing.assert_array_equal(rand.follower, agents.bot_table("421", "random", pot=3).follower)
    assert s.win_probability(s.OptimalAgent421(), RandomAgent(0), 3) == s.evaluate(opt, rand)
    assert s.win_probability(RandomAgent(0), pot=3) == s.evaluate(rand, opt)


def test_optimal_agent_is_for_two_players_only():
    game = next(gm for seed in range(100) if not (gm := g.Game421(3, pot=6, dice=RandomDice(seed))).is_over)
    obs = codec421.observe(game, game.current_player)
    with pytest.raises(ValueError, match="two players"):
        s.OptimalAgent421().act(obs, codec421.legal_mask(game.legal_actions()))


def test_bad_policy_tables_are_rejected():
    opt = s.solve(3).policy()
    bad = opt.leader.copy()
    bad[1, 0, g.hand_rank((6, 6, 6)), :] = 0.0
    bad[1, 0, g.hand_rank((6, 6, 6)), g.action_for_keep((5,))] = 1.0  # no 5 in 6-6-6
    with pytest.raises(ValueError, match="illegal"):
        s.evaluate(s.Policy421(3, bad, opt.follower), opt)


class _DiceAfter:
    """Scripted dice for the charge, then fair dice: starts a game at a chosen discharge state."""

    def __init__(self, prefix, seed):
        self.prefix, self.random = list(prefix), RandomDice(seed)

    def roll(self, n):
        if self.prefix:
            out, self.prefix = tuple(self.prefix[:n]), self.prefix[n:]
            return out
        return self.random.roll(n)

    def draw_seat(self, n_players):
        return 0


def _z(hits: float, expected: float, variance: float) -> float:
    return abs(hits - expected) / math.sqrt(variance)


@pytest.mark.slow
def test_engine_games_from_a_discharge_state_agree_with_the_exact_values():
    """Seat 0 leads holding 2 of 5 tokens (a scripted charge: every charge hand worth 1),
    optimal against random: the engine's win rate vs discharge_values, both ways round."""
    pot, games = 5, 1500
    takers = [1, 1, 1, 0, 0]  # seat 0 takes the last tokens: it leads with 2
    prefix = [v for taker in takers for seat in (0, 1) for v in ((6, 5, 2) if seat == taker else (6, 5, 3))]
    opt, rand = s.solve(pot).policy(), s.policy_table(RandomAgent(0), pot)
    x_opt, x_rand = s.discharge_values(opt, rand)
    for leader_is_optimal, expected in ((True, x_opt[2]), (False, x_rand[2])):
        wins = 0
        for i in range(games):
            game = g.Game421(2, pot=pot, dice=_DiceAfter(prefix, 1000 + i), first_player=0)
            assert game.leader == 0 and game.tokens == [2, 3]
            players = (
                [s.OptimalAgent421(), RandomAgent(i)] if leader_is_optimal else [RandomAgent(i), s.OptimalAgent421()]
            )
            while not game.is_over:
                seat = game.current_player
                game.apply(players[seat].act(codec421.observe(game, seat), codec421.legal_mask(game.legal_actions())))
            wins += game.loser == 1
        assert _z(wins, games * expected, games * expected * (1 - expected)) < 4


def test_engine_games_with_optimal_bots_agree_with_the_exact_values():
    """Optimal in both seats, whole games: the first discharge leader wins as W says,
    the charge ends as charge_outcomes says, and each seat wins half the games."""
    pot, games = 5, 3000
    sol = s.solve(pot)
    agent = s.OptimalAgent421()
    seat0 = lead_wins = lead_expected = lead_var = 0.0
    last = np.zeros((2, pot + 1))
    for seed in range(games):
        game = g.Game421(2, pot=pot, dice=RandomDice(seed))
        taker = next(e for e in reversed(game.events) if e["type"] == "take")["seat"]
        last[int(taker != game.first_player), game.tokens[taker]] += 1
        leader = game.leader if not game.is_over else None
        if leader is not None:
            w = sol.value[game.tokens[leader]]
            lead_expected += w
            lead_var += w * (1 - w)
        while not game.is_over:
            seat = game.current_player
            game.apply(agent.act(codec421.observe(game, seat), codec421.legal_mask(game.legal_actions())))
        seat0 += game.loser == 1
        if leader is not None:
            lead_wins += game.loser != leader
    assert _z(seat0, games * sol.game_value, games * 0.25) < 4
    assert _z(lead_wins, lead_expected, lead_var) < 4
    c = s.charge_outcomes(pot)
    for who in (0, 1):
        for x in range(1, pot + 1):
            assert _z(last[who, x], games * c[who, x], games * c[who, x] * (1 - c[who, x]) + 1e-9) < 4


def test_engine_games_optimal_against_random_agree_with_evaluate():
    pot, games = 5, 2000
    exact = s.win_probability(s.OptimalAgent421(), RandomAgent(0), pot)
    assert exact == s.evaluate(agents.bot_table("421", "optimal", pot=pot), agents.bot_table("421", "random", pot=pot))
    assert exact > 0.6
    wins = 0
    for seed in range(games):
        optimal_seat = seed % 2
        players = [None, None]
        players[optimal_seat], players[1 - optimal_seat] = s.OptimalAgent421(), RandomAgent(seed)
        wins += played("421", players, seed=seed, pot=pot).loser != optimal_seat
    assert _z(wins, games * exact, games * exact * (1 - exact)) < 4


# ------------------------------------------------------------------ reports, the command line, bad input


def test_exact_figures_and_their_table_are_the_exact_evaluations():
    pot = 3
    opponents = {"optimal": s.solve(pot).policy(), "random": agents.bot_table("421", "random", pot=pot)}
    greedy = s.policy_table(Greedy421Agent(), pot)
    figures = s.exact_figures(Greedy421Agent(), opponents, pot)
    vs_opt, vs_rand = s.evaluate(greedy, opponents["optimal"]), s.evaluate(greedy, opponents["random"])
    exploit = s.best_reply(greedy).value - 0.5  # its regret at its own table: what a best reply gains
    regret = s.best_reply(opponents["random"]).value - vs_rand  # what it leaves on the table against random
    assert figures == {
        "vs_optimal": vs_opt,
        "vs_random": vs_rand,
        "gap_pp": 100.0 * (0.5 - vs_opt),
        "regret_vs_random_pp": 100.0 * regret,
        "exploitability_pp": 100.0 * exploit,
        "optimal": False,
    }
    assert regret > 0  # greedy421 is not the best reply to random
    assert 0 < figures["gap_pp"] < 50
    # a best reply gains at least what the optimal bot gains against it (the optimum is one reply)
    assert exploit >= 0.5 - vs_opt - 1e-12
    assert s.format_figures("greedy", figures, list(opponents), pot) == [
        f"exact win probability, two players, pot {pot} (charge and seat draw included)",
        f"  vs optimal     {vs_opt:.6f}   (optimal vs optimal: 0.5; gap {100 * (0.5 - vs_opt):.4f} pp)",
        f"  vs random      {vs_rand:.6f}   (regret {100 * regret:.4f} pp)",
        f"  a best reply to it wins {0.5 + exploit:.6f} (exploitable by {100 * exploit:.4f} pp)",
    ]
    assert s.format_figures("greedy", figures, list(opponents))[0].endswith("pot 15 (charge and seat draw included)")
    best = s.exact_figures(s.OptimalAgent421(), {"optimal": opponents["optimal"]}, pot)
    assert best["gap_pp"] == 0.0 and best["exploitability_pp"] == 0.0 and abs(best["vs_optimal"] - 0.5) < 1e-12


@pytest.mark.slow
def test_the_command_line_prints_the_solution(capsys):
    """Every figure the solution has, in lines that fit 80 columns (W[t] six to a line)."""
    pot = 15
    s.main([])  # the default pot
    lines = capsys.readouterr().out.splitlines()
    assert float(lines[0].split(" solved in ")[1].split(" s ")[0]) < 60
    sol = s.solve(pot)
    gap = float((sol.upper - sol.lower).max())
    assert lines[0].startswith(f"pot {pot}: solved in ")
    assert lines[0].endswith(f" s ({sol.sweeps} sweeps, bound gap {gap:.1e})")
    assert lines[1:3] == [f"game value {sol.game_value:.12f}", "W[t] (leader holding t wins):"]
    values = [f"{t}:{sol.value[t]:.6f}" for t in range(1, pot)]
    assert lines[3:6] == ["  " + " ".join(values[:6]), "  " + " ".join(values[6:12]), "  " + " ".join(values[12:])]
    assert lines[6] == f"the optimal policy against its best reply wins {1 - s.best_reply(sol.policy()).value:.12f}"
    assert len(lines) == 7 and max(map(len, lines)) <= 80


def test_bad_pots_and_tables_get_one_line():
    for pot in (0, -1, 2.5):
        with pytest.raises(ValueError) as info:
            s.solve(pot)
        assert str(info.value) == f"the pot needs at least one token, got {pot!r}"
    assert s.solve(3.0).pot == 3 and type(s.solve(3.0).pot) is int
    with pytest.raises(ValueError) as info:
        s.evaluate(s.solve(3).policy(), s.solve(4).policy())
    assert str(info.value) == "the policies are for different pots (3 and 4)"
    opt = agents.bot_table("421", "optimal", pot=3)
    with pytest.raises(ValueError) as info:
        s.as_policy(opt, 5)
    assert str(info.value) == "policy is for pot 3, not 5"
    with pytest.raises(TypeError) as info:
        s.as_policy("optimal", 3)
    assert str(info.value) == (
        "as_policy takes a table or an agent, got the name 'optimal': "
        "use agents.bot_table('421', name, pot=...) or agents.make_agent('421', name)"
    )


def test_the_optimal_agent_refuses_states_it_was_not_solved_for():
    agent = s.OptimalAgent421()
    pot = 5
    lead = s.leader_observation(2, pot - 2, 1, (5, 4, 1))
    action = agent.act(lead, None)
    assert action == s.solve(pot).action(2, True, 1, g.hand_rank((5, 4, 1)))
    np.testing.assert_array_equal(agent.action_probs(lead, None), np.eye(s.N_ACTIONS)[[action]])
    forbid = codec421.action_mask((5, 4, 1), True)
    forbid[action] = False
    with pytest.raises(ValueError) as info:
        agent.act(lead, forbid)
    assert str(info.value) == (
        f"optimal 421 bot chose {g.describe_action(action)}, which the mask forbids: {codec421.decode(lead)}"
    )
    no_decision = "the optimal 421 bot was asked to act where there is no decision"
    charge = lead.copy()
    charge[codec421.PHASE] = codec421.PHASE_CODE[g.CHARGE]
    no_hand = lead.copy()
    no_hand[codec421.HAND] = 0
    spent = lead.copy()
    spent[codec421.ROLLS_USED] = 3
    for obs in (charge, no_hand, spent):
        with pytest.raises(ValueError) as info:
            agent.act(obs, None)
        assert str(info.value) == no_decision
    for obs in (charge, no_hand):
        with pytest.raises(ValueError) as info:
            agent.action_probs(obs[None], None)
        assert str(info.value) == no_decision
    # A batch mixing pots: each row is looked up in the solution of its own pot.
    batch = np.stack(
        [
            s.leader_observation(2, 3, 1, (5, 4, 1)),
            s.leader_observation(1, 2, 2, (6, 6, 2)),
            s.follower_observation(1, 4, 3, 1, (4, 2, 1), (3, 3, 1)),
        ]
    )
    acts = [agent.act(o, None) for o in batch]
    np.testing.assert_array_equal(agent.action_probs(batch, None), np.eye(s.N_ACTIONS)[acts])
    three = lead.copy()
    three[codec421.N_PLAYERS] = 3
    with pytest.raises(ValueError) as info:
        agent.act(three, None)
    assert str(info.value) == "the optimal 421 bot is solved for two players only, this game has 3"
    with pytest.raises(ValueError) as info:
        agent.action_probs(three[None], None)
    assert str(info.value) == "the optimal 421 bot is solved for two players only"


def test_a_follower_decision_reads_the_table_of_its_roll_count():
    """``Solution421.action`` as follower: the table row of (rolls allowed, rolls used) and
    the leader's hand; the defaults are a first-roll follower owing 3 against 1-1-1... (rank 0)."""
    sol = s.solve(4)
    for d, (n, r) in enumerate(s.FOLLOWER_DECISIONS):
        for t, L, h in ((1, 10, 20), (3, 55, 0), (2, 0, 31)):
            assert sol.action(t, False, r, h, n, L) == sol.follower_actions[t, d, L, h]
    assert sol.action(2, False, 1, 20) == sol.follower_actions[2, s.FOLLOWER_DECISION_INDEX[(3, 1)], 0, 20]
    assert sol.action(2, True, 2, 20) == sol.leader_actions[2, 1, 20]


def test_exploitability_is_what_a_best_reply_wins_beyond_one_half():
    pot = 3
    assert abs(s.exploitability(s.OptimalAgent421(), pot)) < 1e-11
    greedy = s.policy_table(Greedy421Agent(), pot)
    reply = s.best_reply(greedy)
    assert s.best_reply_value(Greedy421Agent(), pot) == reply.value
    assert s.exploitability(Greedy421Agent(), pot) == reply.value - 0.5 > 0.01
    assert s.win_probability(Greedy421Agent(), pot=pot) == s.evaluate(greedy, s.solve(pot).policy())
    fifteen = s.solve().policy()  # pot 15, the default of as_policy and win_probability
    assert s.as_policy(fifteen) is fifteen and abs(s.win_probability(fifteen) - 0.5) < 1e-12
    one = s.best_reply(s.solve(1).policy())  # one token: a coin toss, nothing to decide
    assert (one.value, one.sweeps) == (0.5, 0) and one.lead_value.tolist() == [0.0, 0.0]
    assert one.policy.pot == 1 and not one.policy.leader.any() and not one.policy.follower.any()
