"""The 421 bots: legal play, strength, and the behaviour each one promises."""

from __future__ import annotations

import numpy as np
import pytest

from agents import bots421
from agents.base import RandomAgent
from agents.bots421 import (
    BOT_NAMES_421, CautiousAgent, Greedy421Agent, HeuristicAgent, make_bot421, play_game421,
)
from envs import codec421
from envs import game421 as g
from envs.dice import ScriptedDice
from envs.dice421_env import Dice421Env


def rolls(spec: str) -> list[int]:
    return [int(c) for c in spec if c.isdigit()]


def keep(*values) -> int:
    return g.action_for_keep(values)


def discharge_game(discharge: str, n_players: int = 2, leader: int = 0, tokens_each: int = 5) -> g.Game421:
    """A game whose charge gives every seat ``tokens_each`` tokens, one per round
    (the taker rolls 6-5-2, the others 6-5-3), the last to ``leader``; then the
    discharge dice (from the leader's first roll on)."""
    takers = [s for _ in range(tokens_each) for s in range(n_players) if s != leader] + [leader] * tokens_each
    charge = " ".join("652" if seat == t else "653" for t in takers for seat in range(n_players))
    dice = ScriptedDice(rolls(charge + " " + discharge))
    game = g.Game421(n_players, pot=len(takers), dice=dice, first_player=0)
    assert game.leader == leader and game.tokens == [tokens_each] * n_players
    return game


def decide(bot, game) -> int:
    seat = game.current_player
    return bot.act(codec421.observe(game, seat), codec421.legal_mask(game.legal_actions()))


# --- the registry ---------------------------------------------------------------


def test_make_bot421_builds_every_named_bot():
    assert BOT_NAMES_421 == ("random", "heuristic", "greedy421", "cautious")
    for name in BOT_NAMES_421:
        bot = make_bot421(name, seed=1)
        assert bot.name == name and callable(bot.act) and bot.__doc__
    assert isinstance(make_bot421("random"), RandomAgent)
    with pytest.raises(ValueError, match="unknown agent 'nobody'"):
        make_bot421("nobody")


# --- legal play -------------------------------------------------------------------


class Checked:
    """Wraps a bot and checks every action it plays is in its mask."""

    def __init__(self, bot):
        self.bot, self.decisions = bot, 0

    def act(self, obs, action_mask):
        action = self.bot.act(obs, action_mask)
        assert isinstance(action, int) and action_mask[action], (self.bot.name, codec421.decode(obs), action)
        self.decisions += 1
        return action


def test_every_bot_plays_only_legal_actions():
    rng = np.random.default_rng(0)
    checked = []
    for i in range(240):
        n = 2 + i % 2
        agents = [Checked(make_bot421(str(name), seed=i)) for name in rng.choice(BOT_NAMES_421, size=n)]
        game = play_game421(agents, seed=i, pot=15 if i % 3 else 6)
        assert game.is_over and game.tokens[game.loser] == game.initial_pot
        checked += agents
    for name in BOT_NAMES_421:
        assert sum(c.decisions for c in checked if c.bot.name == name) > 200


# --- strength -----------------------------------------------------------------------


def loss_rate(bot, opponent, games, first_seed=0):
    """The share of heads-up games ``bot`` loses, alternating seats."""
    lost = 0
    for i in range(games):
        seat = i % 2
        agents = [opponent, opponent]
        agents[seat] = bot
        lost += play_game421(agents, seed=first_seed + i).loser == seat
    return lost / games


def test_heuristic_beats_random_clearly():
    # Measured: heuristic loses about 16% of 2,000 heads-up games to random.
    assert loss_rate(HeuristicAgent(), RandomAgent(0), 2000) < 0.25


def test_heuristic_beats_the_simpler_bots():
    # Measured over 2,000 games: about 44% against greedy421, 42% against cautious.
    heuristic = HeuristicAgent()
    assert loss_rate(heuristic, Greedy421Agent(), 800, first_seed=10_000) < 0.49
    assert loss_rate(heuristic, CautiousAgent(), 800, first_seed=20_000) < 0.49


def test_heuristic_leads_three_player_tables_against_random():
    lost = [0, 0, 0]
    for i in range(300):
        agents = [RandomAgent(i), RandomAgent(i + 1), RandomAgent(i + 2)]
        agents[i % 3] = HeuristicAgent()
        game = play_game421(agents, seed=i)
        lost[(game.loser - i) % 3] += 1  # position 0 = the heuristic's seat
    assert lost[0] < 0.2 * 300  # chance alone would be a third


# --- behaviour in scripted situations -------------------------------------------------


@pytest.mark.parametrize("hand", ["421", "111", "666", "115"])
def test_leader_stops_on_a_strong_hand(hand):
    for name in ("heuristic", "cautious"):
        game = discharge_game(hand)
        assert decide(make_bot421(name), game) == g.STOP
    parts = [v for v in (1, 4, 2) if v in rolls(hand)][:2]
    assert decide(Greedy421Agent(), discharge_game(hand)) == (g.STOP if hand == "421" else keep(*parts))


@pytest.mark.parametrize("hand", ["322", "552", "643"])
def test_heuristic_leader_rolls_on_with_a_weak_hand(hand):
    assert decide(HeuristicAgent(), discharge_game(hand)) != g.STOP


def test_cautious_stops_on_a_middling_hand_where_heuristic_rolls_on():
    assert decide(CautiousAgent(), discharge_game("653")) == g.STOP
    assert decide(HeuristicAgent(), discharge_game("653")) != g.STOP
    assert decide(CautiousAgent(), discharge_game("552")) != g.STOP


def test_heuristic_leader_plays_on_past_roll_one_with_a_pair_of_ones():
    game = discharge_game("211")  # 1-1-2 is worth 2; a 1 would make 1-1-1 (7)
    assert decide(HeuristicAgent(), game) == keep(1, 1)


def test_follower_keeps_what_surely_beats_the_leader():
    # The leader stops on 6-5-3 after two rolls; the follower rolls 6-6-4 and owes one more roll:
    # keeping 6-6 beats 6-5-3 whatever comes, keeping anything else may not.
    game = discharge_game("653 53 664")
    game.apply(keep(6))
    game.apply(g.STOP)
    assert (game.current_player, game.dice_in_hand, game.rolls_allowed) == (1, (6, 6, 4), 2)
    assert decide(HeuristicAgent(), game) == keep(6, 6)


def test_follower_facing_421_goes_for_421_itself():
    # A leader's 4-2-1 can only be tied (RAMPO, 1 token) rather than lose 10: keep 4-2.
    game = discharge_game("653 421 642")
    game.apply(keep())
    game.apply(g.STOP)
    assert (game.current_player, game.dice_in_hand) == (1, (6, 4, 2))
    assert decide(HeuristicAgent(), game) == keep(4, 2)
    assert decide(CautiousAgent(), game) == keep(4, 2)


def test_last_of_three_keeps_off_the_bottom():
    # Three players: the leader stops on 1-1-1 after two rolls; the next player makes 6-4-3;
    # the last holds 6-5-2 with one roll left.  6-5-x always beats 6-4-3 (not lowest).
    game = discharge_game("653 111  643 3  652", n_players=3)
    game.apply(keep())
    game.apply(g.STOP)
    game.apply(keep(6, 4))
    assert game.hands_played[1] == (1, (6, 4, 3), 2)
    assert (game.current_player, game.dice_in_hand) == (2, (6, 5, 2))
    assert decide(HeuristicAgent(), game) == keep(6, 5)


def test_greedy421_keeps_ones_fours_and_twos():
    game = discharge_game("641")
    assert decide(Greedy421Agent(), game) == keep(4, 1)
    game = discharge_game("653")
    assert decide(Greedy421Agent(), game) == keep()


def test_bots_play_inside_the_env():
    for name in BOT_NAMES_421:
        env = Dice421Env(opponent=name, n_players=3)
        bot = make_bot421(name, seed=0)
        for seed in range(5):
            obs, info = env.reset(seed=seed)
            term = False
            while not term:
                action = g.STOP if info["decided"] else bot.act(obs, info["action_mask"])
                obs, _, term, _, info = env.step(action)


def test_keep_transitions_are_exact_distributions():
    t = bots421.KEEP_TRANSITIONS
    assert np.allclose(t.sum(1), 1.0)
    assert t[g.KEEPS.index(())][g.hand_rank((4, 2, 1))] == pytest.approx(6 / 216)
    assert t[g.KEEPS.index((1, 1))][g.hand_rank((1, 1, 1))] == pytest.approx(1 / 6)
    assert t[g.KEEPS.index((4,))][g.hand_rank((4, 2, 1))] == pytest.approx(2 / 36)
