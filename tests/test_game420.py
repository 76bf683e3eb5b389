"""The 420 rules engine against RULES.md R1-R7, with scripted dice."""

import ast
import itertools
from collections import Counter
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from envs import codec420
from envs import game420 as g
from envs.dice import DiceScriptExhausted, RandomDice, ScriptedDice


def keep(*values):
    return g.KEEP_INDEX[tuple(sorted(values))]


def legal_by_brute_force(hand):
    """R2-R4 straight from the text: every non-empty set of dice *positions* to reroll."""
    legal = set()
    for n in range(1, 5):
        for positions in itertools.combinations(range(4), n):
            kept = tuple(sorted(hand[i] for i in range(4) if i not in positions))
            if sum(hand) >= 21 and n != 4:  # R4
                continue
            if n == 4 or (n == 3 and kept[0] >= 5) or (n == 2 and sum(kept) >= 10) or (n == 1 and sum(kept) >= 15):
                legal.add(kept)
    return legal


def test_engine_imports_no_rl_library():
    for module in ("game420.py", "dice.py", "codec420.py"):
        tree = ast.parse((Path(g.__file__).parent / module).read_text())
        names = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        names |= {n.module.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
        assert not names & {"gymnasium", "torch", "stable_baselines3", "sb3_contrib"}, module


def test_engine_runs_with_no_learning_library_installed():
    import subprocess
    import sys

    code = (
        "import sys\n"
        "for m in ('gymnasium', 'torch', 'stable_baselines3', 'sb3_contrib'): sys.modules[m] = None\n"
        "from envs import game420 as g\n"
        "from envs.dice import RandomDice\n"
        "game = g.Game420(dice=RandomDice(0))\n"
        "while not game.is_over: game.play(game.legal_actions()[-1])\n"
        "print('ok', game.winner in (0, 1))"
    )
    root = Path(g.__file__).resolve().parent.parent
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=root)
    assert out.stdout.strip() == "ok True"


def test_r1_first_turn_rolls_all_four_without_a_choice():
    game = g.Game420(dice=ScriptedDice([1, 2, 3, 4]))
    assert game.legal_actions() == [g.REROLL_ALL]
    assert not game.is_decision()
    turn = game.play(g.REROLL_ALL)
    assert turn.rolled == (1, 2, 3, 4) and game.hands[g.RED] == (1, 2, 3, 4)
    with pytest.raises(g.IllegalMove, match="R1"):
        g.Game420(dice=ScriptedDice([])).play(keep(6))


def test_r2_zero_dice_is_not_a_move():
    with pytest.raises(g.IllegalMove, match="R2"):
        g.action_for_reroll((1, 2, 3, 4), ())
    # no keep of four dice exists at all
    assert all(len(k) < 4 for k in g.KEEPS)


@pytest.mark.parametrize(
    "hand, reroll, ok",
    [
        ((1, 2, 3, 5), (1, 2, 3), True),  # reroll 3 keeping a 5
        ((1, 2, 3, 4), (1, 2, 3), False),  # kept die 4 < 5
        ((1, 2, 4, 6), (1, 2), True),  # kept 4+6 = 10
        ((1, 2, 3, 6), (1, 2), False),  # kept 3+6 = 9
        ((1, 4, 5, 6), (1,), True),  # kept 15
        ((1, 3, 5, 6), (1,), False),  # kept 14
        ((1, 1, 1, 1), (1, 1, 1, 1), True),  # reroll 4: always
    ],
)
def test_r3_restrictions(hand, reroll, ok):
    if ok:
        a = g.action_for_reroll(hand, reroll)
        assert g.reroll_of(hand, a) == tuple(sorted(reroll))
    else:
        with pytest.raises(g.IllegalMove, match="R3"):
            g.action_for_reroll(hand, reroll)


def test_r3_mask_is_exactly_the_legal_set_for_all_1296_ordered_hands():
    for hand in itertools.product(range(1, 7), repeat=4):
        mask = codec420.action_mask(hand)
        assert mask.any()
        assert {g.KEEPS[a] for a in mask.nonzero()[0]} == legal_by_brute_force(hand), hand


def test_r4_reset_over_20_forces_rerolling_all_four():
    # Red 6-6-5-4 (21), Blue 1-1-1-1, then Red must reroll all four.
    game = g.Game420(dice=ScriptedDice([6, 6, 5, 4, 1, 1, 1, 1, 2, 2, 2, 2]))
    game.play(g.REROLL_ALL)
    game.play(g.REROLL_ALL)
    assert game.legal_actions() == [g.REROLL_ALL]
    with pytest.raises(g.IllegalMove, match="R4"):
        game.play(keep(6, 6, 5))
    assert game.play(g.REROLL_ALL).hand == (2, 2, 2, 2)


def test_r5_win_on_exactly_20_including_the_first_roll():
    game = g.Game420(dice=ScriptedDice([6, 5, 5, 4]))
    turn = game.play(g.REROLL_ALL)
    assert turn.won and game.is_over and game.winner == g.RED and game.loser == g.BLUE
    assert game.legal_actions() == []
    with pytest.raises(g.IllegalMove):
        game.play(g.REROLL_ALL)


def test_r5_first_roll_wins_with_probability_35_over_1296_exactly():
    first = g.roll_distribution(())
    assert sum(first.values()) == 1
    assert sum(p for hand, p in first.items() if g.is_win(hand)) == Fraction(35, 1296)
    # and by plain enumeration of ordered rolls
    assert sum(sum(r) == 20 for r in itertools.product(range(1, 7), repeat=4)) == 35


def test_r5_a_later_roll_that_makes_20_wins():
    # Red 6-5-4-1, Blue 1-1-1-1, Red keeps 6-5-4 and rolls a 5.
    game = g.Game420(dice=ScriptedDice([6, 5, 4, 1, 1, 1, 1, 1, 5]))
    game.play(g.REROLL_ALL)
    game.play(g.REROLL_ALL)
    turn = game.play(g.action_for_reroll((1, 4, 5, 6), (1,)))
    assert turn.hand == (4, 5, 5, 6) and turn.won and game.winner == g.RED


def test_r6_red_moves_first_then_turns_alternate():
    dice = ScriptedDice([1, 1, 1, 2] * 6)
    game = g.Game420(dice=dice)
    movers = []
    for _ in range(6):
        movers.append(game.current)
        game.play(g.REROLL_ALL)
    assert movers == [g.RED, g.BLUE] * 3


def test_r7_multiplayer_rounds_drop_winners_and_rotate_player_one():
    # 3 players, Player 1 drawn = seat 1. Round 1: seats 1, 2, 0; seat 2 makes 20.
    dice = ScriptedDice([1, 1, 1, 2, 5, 5, 5, 5, 1, 1, 1, 2, 1, 1, 1, 2, 6, 6, 4, 4], seats=[1])
    game = g.Game420(3, dice=dice)
    assert game.current == 1
    game.play(g.REROLL_ALL)  # seat 1
    assert game.play(g.REROLL_ALL).won  # seat 2 wins round 1
    assert game.finish_order == [2] and game.remaining == [0, 1]
    # Round 2: Player 1 is the next remaining clockwise from seat 1: seat 0. Hands start anew (R1).
    assert game.current == 0 and game.hands == [None, None, None]
    assert game.legal_actions() == [g.REROLL_ALL]
    game.play(g.REROLL_ALL)  # seat 0
    game.play(g.REROLL_ALL)  # seat 1
    assert game.current == 0
    assert game.play(g.REROLL_ALL).won  # seat 0: 4-4-6-6 = 20
    assert game.is_over and game.loser == 1 and game.finish_order == [2, 0]


def test_r7_first_player_drawn_from_the_seeded_source():
    firsts = {g.Game420(4, dice=RandomDice(seed)).current for seed in range(40)}
    assert firsts == {0, 1, 2, 3}
    assert g.Game420(4, dice=RandomDice(7)).current == g.Game420(4, dice=RandomDice(7)).current


def test_r7_with_two_players_is_r6():
    assert g.Game420(2, dice=ScriptedDice([])).current == g.RED


@settings(max_examples=150, deadline=None)
@given(st.integers(2, 5), st.integers(0, 2**32 - 1))
def test_random_games_keep_every_invariant(n_players, seed):
    dice = RandomDice(seed)
    game = g.Game420(n_players, dice=dice)
    chooser = RandomDice(seed + 1).rng
    for _ in range(20_000):
        if game.is_over:
            break
        legal = game.legal_actions()
        assert legal
        hand = game.hands[game.current]
        if hand is not None and sum(hand) > 20:
            assert legal == [g.REROLL_ALL]
        turn = game.play(int(chooser.choice(legal)))
        assert all(1 <= d <= 6 for d in turn.hand) and len(turn.hand) == 4
        assert turn.won == (sum(turn.hand) == 20)
    assert game.is_over
    assert sorted(game.finish_order + [game.loser]) == list(range(n_players))


def test_illegal_move_messages_explain_the_rule():
    game = g.Game420(dice=ScriptedDice([1, 2, 3, 4, 1, 1, 1, 1]))
    game.play(g.REROLL_ALL)
    game.play(g.REROLL_ALL)
    with pytest.raises(g.IllegalMove, match="does not hold 6"):
        game.play(keep(6))
    with pytest.raises(g.IllegalMove, match="0..13"):
        game.play(99)


def test_scripted_dice_exhaustion_and_validation():
    with pytest.raises(ValueError):
        ScriptedDice([7])
    dice = ScriptedDice([1, 2])
    with pytest.raises(DiceScriptExhausted, match="exhausted"):
        dice.roll(3)


def test_keeps_are_derived_from_r3():
    expected = {
        k
        for n in range(4)
        for k in itertools.combinations_with_replacement(range(1, 7), n)
        if sum(k) >= {0: 0, 1: 5, 2: 10, 3: 15}[n]
    }
    assert set(g.KEEPS) == expected and len(g.KEEPS) == 14
    assert Counter(len(k) for k in g.KEEPS) == {0: 1, 1: 2, 2: 4, 3: 7}
