"""games.dice420.reply: exact N-player 420 at a table of own-hand policies (each
seat's P(not losing), the best reply of a seat and its regret), checked against
the two-player solver, race420, brute force, each other and Monte-Carlo games
of the engine; and ``python -m play evaluate 420``'s table (play.evaluate)."""

import io
import itertools

import numpy as np
import pytest

from agents import make_agent
from games.dice420 import race as race420
from games.dice420 import solver as solver420
from games.dice420 import reply as R
from agents.base import DeterministicAgent
from games.dice420.bots import OptimalAgent
from games.dice420 import codec as codec420
from games.dice420 import game as g
from games.dice420 import SPEC as SPEC420
from games.dice420 import evaluate as evaluate420
from play import UsageError
from play import evaluate as front_end

BOTS = ("random", "greedy", "foundation", "optimal")


@pytest.fixture(scope="module")
def pol():
    return {name: race420.policy_matrix(name) for name in BOTS}


# --- two players: the solver's figures ---------------------------------------------
@pytest.mark.parametrize("a, b", [("greedy", "random"), ("foundation", "optimal")])
def test_two_players_give_the_two_player_solvers_figures(pol, a, b):
    ta, tb = race420.two_player_table(pol[a]), race420.two_player_table(pol[b])
    red, _ = solver420.win_probabilities(ta, tb)
    assert np.abs(R.not_losing(2, [pol[a], pol[b]]) - [red, 1 - red]).max() < 1e-12
    assert abs(R.solve_seat(2, [None, pol[b]], 0, policy=pol[a]).value - red) < 1e-12
    _, x = solver420.best_reply(tb)
    assert abs(R.best_reply(2, [None, pol[b]], 0).value - solver420.red_win_probability(x)) < 1e-12
    reply = solver420.one_hot(solver420.best_reply(ta)[0])
    blue = 1 - solver420.win_probabilities(ta, reply)[0]
    assert abs(R.best_reply(2, [pol[a], None], 1).value - blue) < 1e-12


# --- own-hand tables: race420 and the two methods against each other ----------------
@pytest.mark.parametrize("n", [3, 4])
@pytest.mark.parametrize("name", ["greedy", "random"])
def test_one_policy_at_every_seat_agrees_with_race420(pol, n, name):
    assert np.abs(R.not_losing(n, [pol[name]] * n) - (1 - race420.loser_probabilities(n, name))).max() < 1e-12


def test_round_wins_match_brute_force_over_different_hitting_laws():
    laws = [np.array([0.5, 0.2, 0.3]), np.array([0.1, 0.9]), np.array([0.3, 0.3, 0.2, 0.2])]
    brute = np.zeros(3)
    for times in itertools.product(*(range(len(d)) for d in laws)):
        p = np.prod([d[t] for d, t in zip(laws, times)])
        brute[min(range(3), key=lambda j: (times[j], j))] += p  # lowest turn, then earliest position
    assert np.abs(R.round_wins(laws) - brute).max() < 1e-15


@pytest.mark.parametrize(
    "n, names", [(3, ("greedy", "random", "foundation")), (4, ("foundation", "optimal", "random", "greedy"))]
)
def test_the_round_recursion_evaluates_a_mixed_table_as_the_hitting_times_do(pol, n, names):
    policies = [pol[b] for b in names]
    exact = R.not_losing(n, policies)
    assert abs(exact.sum() - (n - 1)) < 1e-12  # one loser
    for seat in (0, n - 1):
        assert abs(R.solve_seat(n, policies, seat, policy=policies[seat]).value - exact[seat]) < 1e-12


@pytest.mark.parametrize("name", BOTS)
def test_a_lumped_opponent_races_as_its_policy_does(pol, name):
    opp = R.lump(pol[name])
    assert opp.size <= 15
    p = np.eye(opp.size)[opp.classes[R.NO_HAND]]
    dist = race420.hitting_distribution(pol[name])
    for t in range(60):
        assert abs(p @ opp.win - dist[t]) < 1e-15
        p = p @ opp.move


# --- the best reply ------------------------------------------------------------------
def test_the_best_reply_is_at_least_every_bot_and_its_keeps_reach_its_value(pol):
    others = [pol["greedy"], pol["foundation"]]
    for seat in range(3):
        best = R.best_reply(3, others[:seat] + [None] + others[seat:], seat)
        for bot in BOTS:
            table = others[:seat] + [pol[bot]] + others[seat:]
            assert best.value >= R.not_losing(3, table)[seat] - 1e-12
        kept = R.solve_seat(
            3,
            others[:seat] + [None] + others[seat:],
            seat,
            keeps=lambda remaining, leader, best=best: best.rounds[(remaining, leader)].keeps(),
        )
        assert abs(kept.value - best.value) < 1e-12


def test_the_two_player_optimum_is_a_best_reply_at_three_players_but_not_at_four(pol):
    opt = pol["optimal"]
    three = R.best_reply(3, [opt] * 3, 0)
    assert R.worse_choices(three, opt) == 0
    assert abs(three.value - R.not_losing(3, [opt] * 3)[0]) < 1e-12
    four = R.best_reply(4, [opt] * 4, 0)
    assert R.worse_choices(four, opt) > 0
    assert four.value - R.not_losing(4, [opt] * 4)[0] > 1e-9
    # and not because the best reply knows who led the round: a reply blind to the
    # leader (one leader's keeps in every round with those players) beats it too
    everyone = (0, 1, 2, 3)
    blind = R.solve_seat(
        4,
        [opt] * 4,
        0,
        keeps=lambda remaining, leader: four.rounds[(remaining, 0 if remaining == everyone else leader)].keeps(),
    )
    assert blind.value - R.not_losing(4, [opt] * 4)[0] > 1e-9


# --- agents -----------------------------------------------------------------------------
class LooksAtTheNextHand:
    """Rerolls all four when the next player's hand totals 18 or more, else plays greedy."""

    name = "peeker"

    def __init__(self):
        self.greedy = make_agent("420", "greedy")

    def act(self, obs, mask):
        hands = codec420.decode(obs)
        if hands[1] is not None and sum(hands[1]) >= 18:
            return g.REROLL_ALL
        return self.greedy.act(obs, mask)


def test_an_agent_that_looks_at_other_hands_is_refused_at_four_players_with_one_line():
    with pytest.raises(ValueError, match="Player 2 \\(peeker\\).*own hand.*up to 3 players") as e:
        R.table_figures(4, [make_agent("420", "greedy"), LooksAtTheNextHand(), *[make_agent("420", "greedy")] * 2])
    assert "\n" not in str(e.value)


def test_an_agent_that_looks_at_other_hands_gets_the_two_player_solvers_figures_over_the_full_state():
    peeker, greedy = LooksAtTheNextHand(), make_agent("420", "greedy")
    tp, tg = solver420.policy_table(peeker), solver420.policy_table(greedy)
    red, _ = solver420.win_probabilities(tp, tg)
    assert abs(R.solve_seat_joint(2, [peeker, greedy], 0, own=True).value - red) < 1e-12
    assert abs(R.solve_seat_joint(2, [peeker, greedy], 1, own=True).value - (1 - red)) < 1e-12
    best_blue = 1 - solver420.win_probabilities(tp, solver420.one_hot(solver420.best_reply(tp)[0]))[0]
    assert abs(R.solve_seat_joint(2, [peeker, greedy], 1).value - best_blue) < 1e-12
    # and for own-hand seats the full state gives what lumping gives
    pg = race420.policy_matrix(greedy)
    assert abs(R.solve_seat_joint(2, [greedy, greedy], 0).value - R.best_reply(2, [pg, pg], 0).value) < 1e-12


def test_a_joint_table_shows_each_seat_the_table_clockwise_with_players_out_as_no_hand():
    peeker, greedy = LooksAtTheNextHand(), race420.policy_matrix("greedy").argmax(axis=1)
    live = np.ix_(~solver420.WIN, ~solver420.WIN)  # the states that occur
    alone = R.joint_table(peeker, 1, 3, (0, 1))  # axes (seat 0, seat 1); seat 2 is out: shown no hand
    assert np.array_equal(alone[live], np.broadcast_to(greedy[None, :], alone.shape)[live])
    facing = R.joint_table(peeker, 1, 3, (1, 2))  # axes (seat 1, seat 2); seat 2 is next clockwise
    high = np.array([sum(h) >= 18 for h in g.HANDS])
    expected = np.where(high[None, :], g.REROLL_ALL, greedy[:, None])
    assert np.array_equal(facing[live], expected[live])
    assert (facing[live] != alone[live].T).any()  # the next hand is seen


def test_the_optimal_bot_plays_the_two_player_optimum_at_every_table():
    expected = race420.policy_matrix(solver420.solve().policy[:, 0])
    for n in (2, 3, 4):
        assert np.array_equal(R.seat_policy(OptimalAgent(), 0, n), expected)


# --- Monte-Carlo games of the engine -----------------------------------------------------
def test_engine_games_agree_with_the_exact_figures_within_4_standard_errors(pol):
    names = ("greedy", "random", "foundation")
    exact = R.not_losing(3, [pol[b] for b in names])
    games = 600
    kept = front_end.simulate_table(SPEC420, [make_agent("420", b, seed=1) for b in names], games, seed=11)
    se = np.sqrt(exact * (1 - exact) / games)
    assert np.all(np.abs(kept / games - exact) <= 4 * se)


# --- python -m play evaluate 420 -------------------------------------------------------------
def _evaluate(names, exact=True, players=3, opponents=None, games=0):
    out = io.StringIO()
    rows = [(n, make_agent("420", n, seed=0)) for n in names]
    opp = None if opponents is None else [(n, make_agent("420", n, seed=0)) for n in opponents]
    front_end.evaluate(SPEC420, rows, exact, games, 5, out, players=players, opponents=opp)
    return out.getvalue()


def test_evaluate_prints_each_seats_exact_figures_in_80_columns(pol):
    text = _evaluate(["optimal"], opponents=["greedy", "random"])
    figures = R.table_figures(3, [pol["optimal"], pol["greedy"], pol["random"]])
    rows = [line.split() for line in text.splitlines() if line.startswith("Player")]
    assert [r[:3] for r in rows] == [["Player", "1", "optimal"], ["Player", "2", "greedy"], ["Player", "3", "random"]]
    for r, f in zip(rows, figures):
        assert r[3:] == [f"{f.not_losing:.6f}", f"{f.best:.6f}", f"{f.regret_pp:.4f}"]
    assert float(rows[2][5]) > 1.0  # random is far from its best reply
    assert all(len(line) <= 80 for line in text.splitlines())


def test_evaluate_with_two_players_and_no_opponents_is_unchanged():
    agent = make_agent("420", "greedy")
    text = _evaluate(["greedy"], players=2)
    assert text == evaluate420.format_exact([("greedy", evaluate420.exact_evaluation(agent))]) + "\n"


def test_evaluate_two_players_with_an_opponent_gives_the_solvers_seats(pol):
    text = _evaluate(["foundation"], players=2, opponents=["optimal"])
    rows = {line.split()[0]: line.split()[2:] for line in text.splitlines() if line.startswith(("Red", "Blue"))}
    red, _ = solver420.win_probabilities(
        race420.two_player_table(pol["foundation"]), race420.two_player_table(pol["optimal"])
    )
    assert rows["Red"][0] == f"{red:.6f}" and rows["Blue"][0] == f"{1 - red:.6f}"
    assert rows["Blue"][2] == "0.0000"  # optimal is the best reply to anything at two players


def test_evaluate_simulated_prints_a_wilson_interval_per_seat():
    text = _evaluate(["greedy"], exact=False, games=40)
    rows = [line for line in text.splitlines() if line.startswith("Player")]
    assert len(rows) == 3 and all("/40)" in r and "[" in r for r in rows)
    kept = sum(int(r.split("(")[-1].split("/")[0]) for r in rows)
    assert kept == 2 * 40  # every game has exactly one loser


def test_evaluate_refuses_a_wrong_table_with_one_line():
    with pytest.raises(UsageError, match="2 opponents given for a table of 4"):
        _evaluate(["greedy"], players=4, opponents=["greedy", "random"])
    out = io.StringIO()
    with pytest.raises(UsageError, match="own hand") as e:
        front_end.evaluate(SPEC420, [("peeker", LooksAtTheNextHand())], True, 0, 5, out, players=4)
    assert "\n" not in str(e.value)


@pytest.mark.slow
def test_seat_figures_are_the_tables_figures_of_one_seat_and_refuse_in_one_line():
    bots = [make_agent("420", name) for name in ("greedy", "optimal", "foundation")]
    every = R.table_figures(3, bots)
    for seat in range(3):
        value, best = R.seat_figures(bots, seat)
        assert (value, best) == (every[seat].not_losing, every[seat].best)
    peeker, greedy = LooksAtTheNextHand(), make_agent("420", "greedy")
    value, best = R.seat_figures([peeker, greedy], 1)  # the full state at two players
    assert abs(value - R.solve_seat_joint(2, [peeker, greedy], 1, own=True).value) < 1e-15 and best >= value
    with pytest.raises(ValueError, match="own hand.*up to 3 players") as e:
        R.seat_figures([peeker, greedy, greedy, greedy])
    assert "\n" not in str(e.value)


@pytest.mark.slow
def test_own_hand_bots_become_the_tables_the_batched_env_plays():
    for name in ("greedy", "foundation", "optimal"):
        table = R.live_table(make_agent("420", name), 3)
        assert table.shape == (126,) and np.array_equal(table, R.own_hand_table(make_agent("420", name), 3).argmax(1))
    with pytest.raises(ValueError, match="does not play from its own hand alone"):
        R.live_table(LooksAtTheNextHand(), 3)


class OptimalAtProbesOnly(DeterministicAgent):
    """Plays optimal's keeps where every other hand is a probe hand (or none), else rerolls
    everything: a check at the probe tables alone would call it an own-hand player."""

    name = "probe-only"

    def __init__(self):
        self.optimal = OptimalAgent()
        self.probes = {codec420.encode(h).tobytes() for h in race420.PROBE_OPPONENTS}
        self.probes.add(np.zeros(4, dtype=np.int64).tobytes())

    def act(self, obs, mask):
        obs = np.asarray(obs, dtype=np.int64)
        others = [obs[k : k + 4].tobytes() for k in range(4, len(obs), 4)]
        if all(o in self.probes for o in others):
            return self.optimal.act(obs, mask)
        return g.REROLL_ALL


def test_an_agent_not_declared_own_hand_is_asked_at_every_table_or_refused():
    agent = OptimalAtProbesOnly()
    assert not getattr(agent, "own_hand", False) and OptimalAgent.own_hand
    with pytest.raises(ValueError, match="probe-only does not play from its own hand alone"):
        R.own_hand_table(agent, 3)  # every table of three: one without a probe hand gives it away
    with pytest.raises(ValueError, match="probe-only is not known to play from its own hand alone.*out of reach") as e:
        R.seat_figures([agent] + [make_agent("420", "optimal")] * 3)
    assert "\n" not in str(e.value)


@pytest.mark.slow
def test_a_table_too_large_is_refused_before_any_round_is_solved(monkeypatch):
    """evaluate 420 --players 8 --exact solved rounds for minutes before its largest round
    was refused: the size of every seat's largest round is checked first."""

    def no_work(*args, **kwargs):
        raise AssertionError("a round was solved before the size check")

    monkeypatch.setattr(R, "solve_round", no_work)
    monkeypatch.setattr(R, "not_losing", no_work)
    optimal = make_agent("420", "optimal")
    for n in (7, 8):
        with pytest.raises(ValueError, match=r"needs [\d,]+ states .* more than this module builds"):
            R.table_figures(n, [optimal] * n)
        with pytest.raises(ValueError, match="more than this module builds"):
            R.best_reply(n, [R.own_hand_table(optimal, n)] * n, 0)


def test_a_long_exact_evaluation_says_it_is_still_working():
    """While a table's exact figures are computed, a line on stderr every few seconds
    (here every 0.02 s, around a computation of 0.2 s); none once it is done."""
    import time

    err = io.StringIO()
    with front_end.Heartbeat(err, "exact evaluation of the table of x (5 players)", every=0.02):
        time.sleep(0.2)
    lines = err.getvalue().splitlines()
    assert len(lines) >= 3
    assert all(
        line.startswith("  ... exact evaluation of the table of x (5 players): ") and line.endswith(" s so far")
        for line in lines
    )
    time.sleep(0.1)
    assert err.getvalue().splitlines() == lines
