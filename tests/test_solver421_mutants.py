"""Tests of games.dice421.solver written against the mutants mutation testing left alive.

Each test checks behaviour the solver promises (docstrings, the engine, a direct
computation); the module's caches are cleared before each test so that every
function runs here, not in an earlier test.
"""

from __future__ import annotations

import numpy as np
import pytest

from games.dice421 import solver as s
from agents.base import RandomAgent
from games.dice421 import codec as codec421
from games.dice421 import game as g
from core.dice import RandomDice


@pytest.fixture(autouse=True)
def _fresh_caches():
    """Solve, tabulate and count again in each test (a cached result hides a change)."""
    for cached in (s._solve, s.decision_observations, s.charge_outcomes, s._outcome_terms, s._gather_index):
        cached.cache_clear()
    yield


def _policy(pot: int, seed: int) -> s.Policy421:
    """A random legal stationary policy (mixed rows), reproducible from ``seed``."""
    rng = np.random.default_rng(seed)
    lead = rng.random((pot + 1, 2, s.N_HANDS, s.N_ACTIONS)) * s.LEADER_LEGAL[None, None]
    foll = rng.random((pot + 1, 3, s.N_HANDS, s.N_HANDS, s.N_ACTIONS)) * s.FOLLOWER_LEGAL[None, None, None]
    return s.Policy421(pot, lead / lead.sum(-1, keepdims=True), foll / foll.sum(-1, keepdims=True), f"mixed {seed}")


# ------------------------------------------------------------------ observations


def test_the_observation_builders_show_what_the_engine_shows():
    """At every two-player discharge decision of real games, the leader's and the
    follower's observations equal ``codec421.observe``, and so do the tabulated ones."""
    pot = 5
    lead_obs, foll_obs = s.decision_observations(pot)
    seen = {"leader": 0, "follower": 0}
    for seed in range(25):
        game = g.Game421(2, pot=pot, dice=RandomDice(seed))
        rng = np.random.default_rng(seed)
        while not game.is_over:
            seat = game.current_player
            obs = codec421.observe(game, seat)
            t, h = game.tokens[seat], g.hand_rank(game.dice_in_hand)
            if seat == game.leader:
                direct = s.leader_observation(t, pot - t, game.rolls_used, game.dice_in_hand)
                table = lead_obs[t - 1, game.rolls_used - 1, h]
                seen["leader"] += 1
            else:
                leader_hand = game.hands_played[0][1]
                direct = s.follower_observation(
                    t, pot - t, game.rolls_allowed, game.rolls_used, leader_hand, game.dice_in_hand
                )
                d = s.FOLLOWER_DECISION_INDEX[(game.rolls_allowed, game.rolls_used)]
                table = foll_obs[t - 1, d, g.hand_rank(leader_hand), h]
                seen["follower"] += 1
            np.testing.assert_array_equal(direct, obs)
            np.testing.assert_array_equal(table, obs)
            game.apply(int(rng.choice(game.legal_actions())))
    assert min(seen.values()) > 30


# ------------------------------------------------------------------ value iteration


def test_bounded_iteration_counts_its_sweeps_and_stops_at_the_tolerance(monkeypatch):
    monkeypatch.setattr(s, "MAX_SWEEPS", 1000)  # plenty here: a gap that never closes fails fast
    pot = 4
    # One sweep from the bounds 0 and 1 already closes them within 1.
    lo, up, _, _, sweeps = s._bounded_iteration(pot, None, None, None, None, True, 1.0)
    assert sweeps == 1
    np.testing.assert_array_equal(
        lo,
        s._pad(
            s._play_round(
                s._round_utility(
                    pot, np.zeros(pot + 1), s._pad(np.ones(pot - 1)), np.zeros(pot + 1), s._pad(np.ones(pot - 1))
                ),
                None,
                None,
            )
        ),
    )
    # Stopping exactly at a gap reached: "within tol" includes equality.
    lo, up, _, _, n = s._bounded_iteration(pot, None, None, None, None, True, 1e-6)
    gap = float((up - lo).max())
    assert n > 2 and gap <= 1e-6
    again = s._bounded_iteration(pot, None, None, None, None, True, gap)
    assert again[4] == n
    np.testing.assert_array_equal(again[0], lo)
    # MAX_SWEEPS is the number of sweeps allowed: n are enough, n - 1 are not.
    monkeypatch.setattr(s, "MAX_SWEEPS", n)
    assert s._bounded_iteration(pot, None, None, None, None, True, gap)[4] == n
    monkeypatch.setattr(s, "MAX_SWEEPS", n - 1)
    with pytest.raises(RuntimeError) as info:
        s._bounded_iteration(pot, None, None, None, None, True, gap)
    message = str(info.value)
    prefix = f"value iteration did not close the bounds to {gap} in {n - 1} sweeps (gap "
    assert message.startswith(prefix) and message.endswith(")")
    assert float(message[len(prefix) : -1]) > gap


def test_bounded_iteration_with_both_policies_fixed_is_the_exact_evaluation(monkeypatch):
    """With both sides' tables given it is policy evaluation: A's leader rows against
    B's follower rows and the other way round, as the linear solve gives.  It takes
    a few dozen sweeps; bounds fed by the wrong sides need not meet at all."""
    monkeypatch.setattr(s, "MAX_SWEEPS", 300)
    pot = 4
    a, b = _policy(pot, 1), _policy(pot, 2)
    lead_a, foll_a = s._aligned(a)
    lead_b, foll_b = s._aligned(b)
    lo_a, up_a, lo_b, up_b, _ = s._bounded_iteration(pot, lead_a, foll_a, lead_b, foll_b, False, 1e-12)
    x_a, x_b = s.discharge_values(a, b)
    assert np.abs(lo_a - x_a).max() < 1e-9 and np.abs(up_a - x_a).max() < 1e-9
    assert np.abs(lo_b - x_b).max() < 1e-9 and np.abs(up_b - x_b).max() < 1e-9
    assert np.abs(x_a - x_b).max() > 1e-3  # the two sides do differ


def test_the_solution_is_the_symmetric_fixed_point_and_defaults_to_pot_15():
    sol = s.solve(4)
    w = sol.value
    np.testing.assert_allclose(
        s._pad(s._play_round(s._round_utility(4, w, w, w, w), None, None))[1:4], w[1:4], atol=1e-11
    )
    assert sol.lower[1:4].max() > 0 and (sol.upper - sol.lower).max() <= s.DEFAULT_TOL
    assert s.solve().pot == 15


def test_the_follower_breaks_ties_on_the_first_best_keep():
    """Like the leader (argmax: the first best action), the follower's table holds, among
    a hand's legal keeps of least value for the leader, the first."""
    pot = 4
    sol = s.solve(pot)
    w = sol.value
    q = s._round_utility(pot, w, w, w, w) @ s.T.T  # (t, L, keep): the follower keeps, rolls its last
    d = s.FOLLOWER_DECISION_INDEX[(2, 1)]
    ties = 0
    for t in range(1, pot):
        for L in range(s.N_HANDS):
            for h in range(s.N_HANDS):
                legal = np.flatnonzero(s.FOLLOWER_LEGAL[h, 1:])
                values = q[t - 1, L, legal]
                best = np.flatnonzero(values == values.min())
                ties += len(best) > 1
                assert sol.follower_actions[pot - t, d, L, h] == 1 + legal[best[0]]
    assert ties > 0  # the rule is exercised


# ------------------------------------------------------------------ evaluation


def _direct_game_value(C: np.ndarray, pot: int, x_a: np.ndarray, x_b: np.ndarray) -> float:
    """1/2 sum over A's seat and the charge's end: A took last holding x < P -> X_A[x];
    B took last -> 1 - X_B[x]; the last taker holding all P tokens loses."""
    a_last = np.concatenate([x_a[1:pot], [0.0]])  # A took last holding x = 1..P
    b_last = np.concatenate([1.0 - x_b[1:pot], [1.0]])
    # A first player: it took last when who == 0; A second: when who == 1.
    return 0.5 * (C[0, 1:] @ a_last + C[1, 1:] @ b_last) + 0.5 * (C[1, 1:] @ a_last + C[0, 1:] @ b_last)


def test_game_value_against_a_direct_sum_over_seats_and_charge_ends(monkeypatch):
    pot = 5
    rng = np.random.default_rng(7)
    x_a, x_b = s._pad(rng.random(pot - 1)), s._pad(rng.random(pot - 1))
    value = s._game_value(pot, x_a, x_b)
    assert abs(value - _direct_game_value(s.charge_outcomes(pot), pot, x_a, x_b)) < 1e-14
    assert abs(value + s._game_value(pot, x_b, x_a) - 1.0) < 1e-14
    # The rules make the charge seat-symmetric (C[0] = C[1]); the seat draw must be
    # right for any charge, so check it on a charge that favours one seat.
    C = np.zeros((2, pot + 1))
    C[:, 1:] = rng.random((2, pot))
    C /= C.sum()
    monkeypatch.setattr(s, "charge_outcomes", lambda p: C)
    assert abs(s._game_value(pot, x_a, x_b) - _direct_game_value(C, pot, x_a, x_b)) < 1e-14


def test_values_are_indexed_by_tokens_zero_to_pot_even_for_one_token():
    for pot in (1, 3):
        p = s.solve(pot).policy()
        x_a, x_b = s.discharge_values(p, p)
        assert x_a.shape == x_b.shape == (pot + 1,)
        reply = s.best_reply(p)
        assert reply.lead_value.shape == reply.opponent_lead_value.shape == (pot + 1,)
    assert s.best_reply(s.solve(1).policy()).value == 0.5


def test_best_reply_is_named_after_its_target_and_counts_its_sweeps():
    pot = 3
    target = _policy(pot, 3)
    reply = s.best_reply(target)
    assert reply.policy.name == "best reply to mixed 3"
    lead_b, foll_b = s._aligned(target)
    assert reply.sweeps == s._bounded_iteration(pot, None, None, lead_b, foll_b, False, s.DEFAULT_TOL)[4] > 0
    assert abs(s.evaluate(reply.policy, target) - reply.value) < 1e-9


# ------------------------------------------------------------------ agents as tables


class _TableAgent:
    """An agent whose ``exact_table`` is one table and whose ``act`` plays another."""

    name = "table"

    def __init__(self, table):
        self.table = table

    def exact_table(self, pot):
        return self.table

    def act(self, obs, action_mask):
        return int(np.flatnonzero(action_mask)[-1])


def test_policy_table_takes_an_exact_table_as_it_is():
    table = _policy(3, 4)
    assert s.policy_table(_TableAgent(table), 3) is table


def test_policy_table_is_named_after_the_agent_and_reports_where_an_agent_fails():
    pot = 2
    agent = RandomAgent(seed=0)
    assert s.policy_table(agent, pot).name == agent.name

    class Illegal:
        name = "illegal"

        def act(self, obs, action_mask):
            return 0  # STOP: illegal for a follower

    with pytest.raises(ValueError) as info:
        s.policy_table(Illegal(), pot)
    where = str(codec421.decode(s.decision_observations(pot)[1][0, 0, 0, 0]))
    assert str(info.value) == f"illegal puts probability 1 on illegal actions at {where}"


@pytest.mark.slow
def test_the_pot_15_defaults():
    fifteen = s.solve(15).policy()
    agent = s.OptimalAgent421()
    assert s.policy_table(agent).pot == 15 and s.as_policy(agent).pot == 15
    assert abs(s.win_probability(fifteen) - 0.5) < 1e-12
    assert abs(s.best_reply_value(fifteen) - 0.5) < 1e-9 and abs(s.exploitability(fifteen)) < 1e-9
    figures = s.exact_figures(agent, {"optimal": fifteen})
    assert abs(figures["vs_optimal"] - 0.5) < 1e-12
    assert (
        s.format_figures("optimal", figures, ["optimal"])[0]
        == "exact win probability, two players, pot 15 (charge and seat draw included)"
    )


def test_a_gap_below_rounding_is_reported_as_zero():
    """Optimal against itself wins 1/2 up to a rounding error, reported as no gap."""
    rounded = 0
    for pot in range(2, 9):
        opt = s.solve(pot).policy()
        vs = s.evaluate(opt, opt)
        assert abs(vs - 0.5) < 1e-12
        rounded += vs != 0.5
        assert s.exact_figures(s.OptimalAgent421(), {"optimal": opt}, pot)["gap_pp"] == 0.0
    assert rounded > 0  # some pot does not give exactly 0.5


# ------------------------------------------------------------------ the optimal agent


def test_the_optimal_agent_solves_to_its_own_tolerance():
    loose = s.OptimalAgent421(tol=1e-3)
    assert loose.solution(4).sweeps == s.solve(4, 1e-3).sweeps < s.solve(4).sweeps


def test_solution_action_defaults_read_three_rolls_and_the_lowest_leader_hand():
    sol = s.solve(3)
    d = s.FOLLOWER_DECISION_INDEX[(3, 1)]
    rows = sol.follower_actions[1, d]
    assert (rows != rows[0]).any()  # the leader's hand matters
    for h in range(s.N_HANDS):
        assert sol.action(1, False, 1, h) == rows[0, h]


def test_a_batch_of_mixed_pots_reads_each_pot_s_own_solution():
    """Leaders at pot 3 and pot 5 in one batch, with hands the two pots play differently."""
    agent = s.OptimalAgent421()
    three, five = s.solve(3), s.solve(5)
    hand = (6, 4, 1)
    h = g.hand_rank(hand)
    assert three.leader_actions[1, 0, h] != five.leader_actions[1, 0, h]
    batch = np.stack(
        [
            s.leader_observation(1, 2, 1, hand),
            s.leader_observation(1, 4, 1, hand),
            s.follower_observation(2, 3, 3, 1, (4, 2, 1), (6, 6, 1)),
        ]
    )
    expected = [
        three.leader_actions[1, 0, h],
        five.leader_actions[1, 0, h],
        five.action(2, False, 1, g.hand_rank((6, 6, 1)), 3, g.hand_rank((4, 2, 1))),
    ]
    np.testing.assert_array_equal(agent.action_probs(batch, None), np.eye(s.N_ACTIONS)[expected])
    assert [agent.act(o, None) for o in batch] == expected


# ------------------------------------------------------------------ the command line


def test_the_command_line_defaults_to_pot_15_and_describes_itself(capsys):
    s.main([])
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("pot 15: solved in ")
    assert 0 <= float(lines[0].split(" solved in ")[1].split(" s ")[0]) < 60
    assert len(lines) == 7 and lines[5].startswith("  13:")
    with pytest.raises(SystemExit):
        s.main(["--help"])
    first_sentence = " ".join(s.main.__doc__.split(":")[0].split())  # "Solve two-player 421"
    assert first_sentence in " ".join(capsys.readouterr().out.split())
