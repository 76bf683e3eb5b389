"""The Pig engine against rules P1-P4 and the project decision (games/pig/rules.md),
with scripted dice; its codec and narrator."""

import ast
from pathlib import Path

import numpy as np
import pytest

from core.dice import DiceScriptExhausted, RandomDice, ScriptedDice
from core.engine import IllegalAction, play_out
from games.pig import codec
from games.pig import game as g
from games.pig.bots import Hold20Agent, OptimalPigAgent
from games.pig.game import HOLD, ROLL, PigGame
from games.pig.narrate import NarratorPig
from agents.base import RandomAgent


def scripted(*dice, n_players=2, **options):
    return PigGame(n_players, dice=ScriptedDice(dice, faces=options.get("faces", 6)), **options)


def of_type(game, kind):
    return [e for e in game.events if e["type"] == kind]


# ---------------------------------------------------------------- P1 Turn


def test_p1_a_roll_other_than_1_adds_to_the_turn_total_and_the_same_player_moves_again():
    game = scripted(4, 5, 6)
    assert game.current_player == 0 and game.turn_total == 4  # the first roll was the engine's
    game.apply(ROLL)
    assert game.current_player == 0 and game.turn_total == 9 and game.scores == [0, 0]
    game.apply(ROLL)
    assert game.turn_total == 15
    assert [(e["seat"], e["value"], e["turn_total"]) for e in of_type(game, "roll")] == [
        (0, 4, 4),
        (0, 5, 9),
        (0, 6, 15),
    ]


def test_p1_a_roll_of_1_loses_the_turn_total_and_ends_the_turn():
    game = scripted(4, 5, 1, 3)
    game.apply(ROLL)
    game.apply(ROLL)  # rolls the 1: 9 lost; Player 2's turn starts with its forced roll (3)
    assert game.scores == [0, 0]
    assert game.current_player == 1 and game.turn_total == 3
    assert of_type(game, "bust") == [{"type": "bust", "seat": 0, "value": 1, "lost": 9, "forced": False}]


def test_p1_hold_banks_the_turn_total_and_ends_the_turn():
    game = scripted(4, 5, 2, 3)
    game.apply(ROLL)
    game.apply(HOLD)
    assert game.scores == [9, 0]
    assert game.current_player == 1 and game.turn_total == 2
    assert of_type(game, "hold") == [{"type": "hold", "seat": 0, "banked": 9, "score": 9}]
    game.apply(HOLD)
    assert game.scores == [9, 2] and game.current_player == 0


def test_p1_banked_points_are_kept_when_a_later_turn_busts():
    game = scripted(6, 6, 1, 5, 1, 3)
    game.apply(HOLD)  # Player 1 banks 6
    game.apply(ROLL)  # Player 2: 6 then 1, loses 6
    assert game.scores == [6, 0]
    game.apply(ROLL)  # Player 1: 5 then 1, loses 5 but keeps the 6 banked
    assert game.scores == [6, 0] and game.current_player == 1


# ---------------------------------------------------------------- P2 End


def test_p2_the_game_ends_the_moment_score_plus_turn_total_reaches_the_goal():
    game = scripted(6, 5, 3, goal=14)
    game.apply(ROLL)  # 11: short of 14
    assert not game.is_over
    game.apply(ROLL)  # 14: exactly the goal, no hold needed
    assert game.is_over and game.winner == 0 and game.scores == [14, 0]
    assert game.events[-1] == {"type": "win", "seat": 0, "score": 14, "goal": 14}
    assert not of_type(game, "hold")


def test_p2_one_short_of_the_goal_is_not_a_win():
    game = scripted(6, 6, goal=13)
    game.apply(ROLL)  # 12 < 13
    assert not game.is_over and game.current_player == 0 and game.legal_actions() == [ROLL, HOLD]


def test_p2_banked_score_counts_towards_the_goal_and_the_winner_may_pass_it():
    game = scripted(6, 2, 6, 6, goal=16)
    game.apply(HOLD)  # Player 1: 6
    game.apply(HOLD)  # Player 2: 2; Player 1's forced roll: 6 + 6 = 12, short of 16
    assert not game.is_over and game.turn_total == 6
    game.apply(ROLL)  # 6 + 12 = 18 >= 16: banked, the winner passes the goal
    assert game.is_over and game.winner == 0 and game.scores == [18, 2]


def test_p2_the_forced_first_roll_can_win_and_returns_say_who():
    game = scripted(2, 3, 1, 6, n_players=3, goal=6)
    game.apply(HOLD)  # Player 1 banks 2
    game.apply(ROLL)  # Player 2: 3, then 1
    # Player 3's forced first roll is a 6: it reaches the goal and wins before any choice
    assert game.is_over and game.winner == 2 and game.current_player is None
    assert game.returns() == [-1.0, -1.0, 1.0]
    assert [game.outcome(s) for s in range(3)] == [-1.0, -1.0, 1.0]


# ---------------------------------------------------------------- P3 Order


def test_p3_player_0_starts_and_players_move_in_seat_order():
    game = scripted(2, 2, 2, 2, 2, n_players=3)
    assert game.current_player == 0 and game.first_player == 0
    seen = []
    for _ in range(4):
        seen.append(game.current_player)
        game.apply(HOLD)
    assert seen == [0, 1, 2, 0]
    assert [e["seat"] for e in of_type(game, "hold")] == [0, 1, 2, 0]


def test_p3_the_turn_passes_in_seat_order_after_a_bust_too():
    game = scripted(1, 1, 1, 5, n_players=4)  # three forced first rolls bust in a row
    assert game.current_player == 3 and game.turn_total == 5
    assert [e["seat"] for e in of_type(game, "bust")] == [0, 1, 2]


def test_p3_first_player_none_means_seat_0_and_another_seat_may_be_given():
    assert PigGame(dice=ScriptedDice([3]), first_player=None).current_player == 0
    game = PigGame(3, dice=ScriptedDice([3, 4]), first_player=2)
    assert game.current_player == 2
    game.apply(HOLD)
    assert game.current_player == 0


# ---------------------------------------------------------------- P4 Options


def test_p4_defaults():
    game = PigGame(dice=ScriptedDice([2]))
    assert (game.n_players, game.goal, game.faces) == (2, 100, 6)


@pytest.mark.parametrize("n_players", [2, 5, 8])
def test_p4_any_number_of_players_from_2_to_8(n_players):
    game = PigGame(n_players, dice=RandomDice(n_players), goal=30)
    play_out(game, [Hold20Agent()] * n_players, codec)
    assert game.is_over and sorted(game.returns()) == [-1.0] * (n_players - 1) + [1.0]


def test_p4_faces_sets_the_die():
    game = scripted(20, 19, faces=20, goal=50)
    assert game.turn_total == 20
    game.apply(ROLL)
    assert game.turn_total == 39
    seen = set()
    dice = RandomDice(0)
    for _ in range(30):
        game = PigGame(dice=dice, faces=3, goal=20)
        play_out(game, [RandomAgent(1), RandomAgent(2)], codec)
        seen |= {e["value"] for e in game.events if e["type"] in ("roll", "bust")}
    assert seen == {1, 2, 3}


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(n_players=1), "Pig is played by 2 to 8 players, got 1"),
        (dict(n_players=9), "Pig is played by 2 to 8 players, got 9"),
        (dict(n_players=True), "Pig is played by 2 to 8 players, got True"),
        (dict(goal=0), "goal must be a whole number in 1..1000, got 0"),
        (dict(goal=1001), "goal must be a whole number in 1..1000, got 1001"),
        (dict(goal=50.0), "goal must be a whole number in 1..1000, got 50.0"),
        (dict(faces=1), "faces must be a whole number in 2..20, got 1"),
        (dict(faces=21), "faces must be a whole number in 2..20, got 21"),
        (dict(first_player=2), "first_player must be a seat 0..1, got 2"),
    ],
)
def test_p4_bad_options_are_refused_in_one_line(kwargs, message):
    with pytest.raises(ValueError) as info:
        PigGame(dice=ScriptedDice([3]), **kwargs)
    assert str(info.value) == message and "\n" not in message


def test_p4_goal_1_is_won_by_the_first_roll_that_is_not_a_1():
    game = scripted(1, 1, 2, goal=1)
    assert game.is_over and game.winner == 0 and game.scores == [2, 0]


# ---------------------------------------------------------------- the project decision


def test_decision_a_turn_starts_with_a_roll_the_engine_plays():
    game = scripted(3)
    (roll,) = of_type(game, "roll")
    assert roll["forced"] is True and game.turn_total == 3
    game = scripted(3, 4)
    game.apply(ROLL)
    assert [e["forced"] for e in of_type(game, "roll")] == [True, False]


def test_decision_a_player_is_asked_only_with_a_turn_total_above_0_and_may_then_roll_or_hold():
    rng = np.random.default_rng(5)
    asked = 0
    for seed in range(40):
        game = PigGame(int(rng.integers(2, 5)), dice=RandomDice(seed), goal=int(rng.integers(1, 60)))
        while not game.is_over:
            assert game.turn_total > 0 and game.legal_actions() == [ROLL, HOLD]
            asked += 1
            game.apply(int(rng.integers(2)))
    assert asked > 200


def test_decision_holding_a_turn_total_of_0_is_explained_in_the_rules_words():
    assert g.legal_actions(0) == [ROLL]
    assert g.explain_illegal(HOLD, 0) == (
        "you cannot hold with a turn total of 0: it would only pass the turn (project decision)"
    )


# ---------------------------------------------------------------- engine interface


def test_interface_before_and_after_the_end():
    game = scripted(6, 6, goal=12)
    assert game.returns() == [0.0, 0.0] and game.outcome(0) is None and game.outcome(1) is None
    assert game.current_player == 0
    game.apply(ROLL)
    assert game.is_over and game.current_player is None and game.legal_actions() == []
    assert game.returns() == [1.0, -1.0] and (game.outcome(0), game.outcome(1)) == (1.0, -1.0)
    with pytest.raises(IllegalAction, match="the game is over"):
        game.apply(ROLL)


@pytest.mark.parametrize("action", [2, -1, True, 1.0, "roll", None])
def test_interface_refuses_what_is_not_an_action_and_changes_nothing(action):
    game = scripted(4, 5)
    before = (list(game.scores), game.turn_total, game.current_player, list(game.events))
    with pytest.raises(IllegalAction):
        game.apply(action)
    assert (list(game.scores), game.turn_total, game.current_player, list(game.events)) == before


def test_interface_numpy_integers_are_actions():
    game = scripted(4, 5)
    game.apply(np.int64(ROLL))
    assert game.turn_total == 9


def test_interface_clone_is_independent_and_shares_the_dice():
    game = scripted(4, 5, 6, 2)
    copy = game.clone()
    copy.apply(ROLL)  # takes the 5 from the shared script
    assert game.turn_total == 4 and copy.turn_total == 9 and len(game.events) == 2
    game.apply(ROLL)  # the shared script now gives 6
    assert game.turn_total == 10
    other = game.clone(dice=ScriptedDice([3]))
    other.apply(ROLL)
    assert other.turn_total == 13 and game.dice.remaining == (2,)


def test_interface_the_dice_are_the_only_chance():
    game = PigGame(dice=ScriptedDice([2]))
    with pytest.raises(DiceScriptExhausted):
        game.apply(ROLL)
    a = play_out(PigGame(dice=RandomDice(7)), [Hold20Agent(), Hold20Agent()], codec)
    b = play_out(PigGame(dice=RandomDice(7)), [Hold20Agent(), Hold20Agent()], codec)
    assert a.events == b.events


def test_interface_events_account_for_every_point():
    for seed in range(20):
        game = play_out(
            PigGame(3, dice=RandomDice(seed), goal=50),
            [Hold20Agent(), RandomAgent(seed), OptimalPigAgent(goal=50)],
            codec,
        )
        banked = [0, 0, 0]
        for e in game.events:
            if e["type"] == "hold":
                banked[e["seat"]] += e["banked"]
                assert banked[e["seat"]] == e["score"]
            if e["type"] == "win":
                banked[e["seat"]] = e["score"]
        assert banked == game.scores and max(game.scores) >= 50
        assert game.events[0]["type"] == "start" and game.events[-1]["type"] == "win"


def test_engine_imports_no_rl_library():
    for module in (g, codec):
        tree = ast.parse(Path(module.__file__).read_text())
        names = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        names |= {n.module.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
        assert not names & {"gymnasium", "torch", "stable_baselines3", "sb3_contrib"}, module


def test_engine_follows_the_core_protocol():
    game = scripted(3)
    for name in (
        "n_players",
        "events",
        "current_player",
        "is_over",
        "legal_actions",
        "apply",
        "returns",
        "outcome",
        "clone",
    ):
        assert hasattr(game, name)


# ---------------------------------------------------------------- codec


def test_codec_observation_is_own_score_turn_total_then_the_others_clockwise():
    game = scripted(5, 6, 2, 3, 4, n_players=3)
    game.apply(HOLD)  # P1 5
    game.apply(HOLD)  # P2 6
    game.apply(HOLD)  # P3 2
    game.apply(ROLL)  # P1: 3 + 4
    assert game.current_player == 0 and game.turn_total == 7
    assert codec.observe(game, 0).tolist() == [5, 7, 6, 2]
    assert codec.observe(game, 1).tolist() == [6, 0, 2, 5]
    assert codec.observe(game, 2).tolist() == [2, 0, 5, 6]
    assert codec.observe(game, 0).dtype == np.int64
    assert codec.mask(game).tolist() == [True, True]


def test_codec_masks():
    assert codec.legal_mask([ROLL]).tolist() == [True, False]
    game = scripted(6, 6, goal=6)
    assert game.is_over and codec.mask(game).tolist() == [False, False]
    assert (g.ROLL, g.HOLD, g.N_ACTIONS) == (0, 1, 2)  # OpenSpiel's order


def test_codec_space_bounds_hold_every_observation():
    for n_players, goal, faces in [(2, 100, 6), (3, 20, 20), (2, 1, 6), (8, 15, 2)]:
        low, high, shape = codec.space_bounds(n_players, goal=goal, faces=faces)
        assert shape == (n_players + 1,)
        assert high == goal - 1 + faces
        for seed in range(15):
            game = PigGame(n_players, dice=RandomDice(seed), goal=goal, faces=faces)
            play_out(game, [RandomAgent(seed)] * n_players, codec)
            for seat in range(n_players):
                obs = codec.observe(game, seat)
                assert obs.shape == shape and low <= obs.min() and obs.max() <= high
    # the highest value is reached: goal - 1 banked, then a roll of ``faces`` wins
    game = scripted(6, 6, 2, 6, goal=13)
    game.apply(ROLL)
    game.apply(HOLD)  # Player 1 banks 12
    game.apply(HOLD)  # Player 2 banks 2; Player 1's forced 6 makes 18
    assert game.winner == 0 and codec.observe(game, 0)[0] == 18 == codec.space_bounds(2, goal=13)[1]
    with pytest.raises(ValueError, match="goal must be"):
        codec.space_bounds(2, goal=0)


# ---------------------------------------------------------------- narration


def test_narration_lines():
    game = scripted(5, 4, 3, 6, 1, 2, 2, n_players=2, goal=11)
    game.apply(ROLL)  # P1: 5 + 4 = 9
    game.apply(HOLD)  # banks 9; P2: 3 (forced)
    game.apply(ROLL)  # P2: 6 -> 9
    game.apply(ROLL)  # P2 rolls a 1, loses 9; P1: 2 (forced) -> 9 + 2 = 11 wins
    assert NarratorPig(2).lines(game.events) == [
        "First to 11 wins; Player 1 starts.",
        "Player 1 rolls 5: turn total 5",
        "Player 1 rolls 4: turn total 9",
        "Player 1 holds: 9 banked, score 9",
        "Player 2 rolls 3: turn total 3",
        "Player 2 rolls 6: turn total 9",
        "Player 2 rolls a 1 and loses 9",
        "Player 1 rolls 2: turn total 2",
        "Player 1 reaches 11 and wins.",
    ]
    assert NarratorPig(2, you=0).lines(game.events)[-1] == "Player 1 (you) reaches 11 and wins. You win!"
    assert NarratorPig(2, you=1).lines(game.events)[-1] == "Player 1 reaches 11 and wins. You lose."


def test_narration_of_a_forced_bust():
    game = scripted(1, 4)
    assert NarratorPig(2).lines(game.events)[1] == "Player 1 rolls a 1 and scores nothing"


def test_narration_fits_80_columns():
    labels = ["a rather long label for a bot"] * 8
    for seed in range(10):
        game = PigGame(8, dice=RandomDice(seed), goal=1000, faces=20)
        play_out(game, [Hold20Agent()] * 8, codec)
        lines = NarratorPig(8, labels=labels, you=3).lines(game.events)
        assert len(lines) == len(game.events)
        assert all(len(part) <= 80 for line in lines for part in line.split("\n"))
