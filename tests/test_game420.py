"""The 420 rules engine against the rules R1-R7 (games/dice420/rules.md), with scripted dice.

The engine plays every turn without a choice itself (first rolls, R1; resets over
20, R4; hands R3 lets keep nothing), in its constructor and after each ``apply``,
and records every roll in ``game.events``; so the rules about those turns are
tested on the events.
"""

import ast
import itertools
from collections import Counter
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from games.dice420 import codec as codec420
from core import engine
from games.dice420 import game as g
from games.dice421 import game as game421
from core.dice import DiceScriptExhausted, RandomDice, ScriptedDice

CHOICE = (6, 6, 1, 1)  # a hand with a real choice: keep nothing, 6 or 6-6
NO_CHOICE = (2, 1, 1, 1)  # a hand R3 lets keep nothing: its next turn is forced


def keep(*values):
    return g.KEEP_INDEX[tuple(sorted(values, reverse=True))]


def rolls(game):
    return [e for e in game.events if e["type"] == "roll"]


def of_type(game, kind):
    return [e for e in game.events if e["type"] == kind]


def state(game):
    """Everything a move changes, for comparing a game before and after."""
    return (
        list(game.hands),
        game.current_player,
        list(game.remaining),
        list(game.finish_order),
        [dict(e) for e in game.events],
        game.is_over,
    )


def legal_by_brute_force(hand):
    """R2-R4 straight from the text: every non-empty set of dice *positions* to reroll."""
    legal = set()
    for n in range(1, 5):
        for positions in itertools.combinations(range(4), n):
            kept = tuple(sorted((hand[i] for i in range(4) if i not in positions), reverse=True))
            if sum(hand) >= 21 and n != 4:  # R4
                continue
            if n == 4 or (n == 3 and kept[0] >= 5) or (n == 2 and sum(kept) >= 10) or (n == 1 and sum(kept) >= 15):
                legal.add(kept)
    return legal


def test_engine_imports_no_rl_library():
    import core.dice
    import core.engine
    from games.dice420 import codec as codec420

    for module in (g, core.dice, codec420, core.engine):
        tree = ast.parse(Path(module.__file__).read_text())
        names = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        names |= {n.module.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
        assert not names & {"gymnasium", "torch", "stable_baselines3", "sb3_contrib"}, module


def test_engine_runs_with_no_learning_library_installed():
    import subprocess
    import sys

    code = (
        "import sys\n"
        "for m in ('gymnasium', 'torch', 'stable_baselines3', 'sb3_contrib'): sys.modules[m] = None\n"
        "from games.dice420 import game as g\n"
        "from core.dice import RandomDice\n"
        "game = g.Game420(dice=RandomDice(0))\n"
        "while not game.is_over: game.apply(game.legal_actions()[-1])\n"
        "print('ok', game.winner in (0, 1), sorted(game.returns()))"
    )
    root = Path(g.__file__).resolve().parent.parent
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=root)
    assert out.stdout.strip() == "ok True [-1.0, 1.0]"


def test_illegal_action_is_the_engine_error_shared_by_both_games():
    assert g.IllegalAction is engine.IllegalAction is game421.IllegalAction
    assert issubclass(g.IllegalAction, ValueError)
    assert not hasattr(g, "IllegalMove") and not hasattr(g.Game420, "play")
    assert not hasattr(g.Game420, "is_decision")


# --- hands and keeps are written high to low; their order is unchanged -----------


def test_hands_and_keeps_are_high_to_low_in_the_ascending_multiset_order():
    ascending = list(itertools.combinations_with_replacement(range(1, 7), 4))
    assert g.HANDS == tuple(tuple(reversed(h)) for h in ascending)
    assert g.HANDS[0] == (1, 1, 1, 1) and g.HANDS[1] == (2, 1, 1, 1) and g.HANDS[-1] == (6, 6, 6, 6)
    assert all(h == tuple(sorted(h, reverse=True)) for h in g.HANDS)
    assert all(g.HAND_INDEX[h] == i for i, h in enumerate(g.HANDS)) and len(g.HAND_INDEX) == 126
    assert (6, 6, 5, 1) in g.HAND_INDEX and (1, 5, 6, 6) not in g.HAND_INDEX
    assert g.KEEPS == (
        (),
        (5,),
        (6,),
        (6, 4),
        (5, 5),
        (6, 5),
        (6, 6),
        (6, 6, 3),
        (6, 5, 4),
        (6, 6, 4),
        (5, 5, 5),
        (6, 5, 5),
        (6, 6, 5),
        (6, 6, 6),
    )
    assert g.KEEP_INDEX[(6, 4)] == 3 and g.REROLL_ALL == 0
    assert g.canonical([1, 5, 6, 6]) == (6, 6, 5, 1) == g.canonical((6, 1, 6, 5))
    assert g.reroll_of((6, 6, 5, 1), keep(6, 6)) == (5, 1)
    assert g.roll_distribution((6, 6, 5))[(6, 6, 5, 3)] == Fraction(1, 6)


# --- R1 ---------------------------------------------------------------------


def test_r1_first_turn_rolls_all_four_without_a_choice():
    # The constructor plays both first rolls: Red 1-5-6-6, then Blue 6-6-1-1.
    dice = ScriptedDice([1, 5, 6, 6, 6, 6, 1, 1])
    game = g.Game420(dice=dice)
    assert dice.remaining == ()
    red, blue = rolls(game)
    assert red == {
        "type": "roll",
        "seat": g.RED,
        "before": None,
        "keep": (),
        "rolled": (1, 5, 6, 6),
        "hand": (6, 6, 5, 1),
        "forced": "first",
        "won": False,
    }
    assert (blue["seat"], blue["before"], blue["keep"], blue["forced"]) == (g.BLUE, None, (), "first")
    assert game.hands == [(6, 6, 5, 1), (6, 6, 1, 1)]
    # The first real choice is Red's second turn: a first roll is never a choice.
    assert game.current_player == g.RED and len(game.legal_actions()) > 1
    assert [t.kept for t in game.history] == [(), ()]
    assert game.history[0] == g.Turn(g.RED, (), (1, 5, 6, 6), (6, 6, 5, 1), False)
    # The first rolls happen in the constructor: with no dice there is no game.
    with pytest.raises(DiceScriptExhausted):
        g.Game420(dice=ScriptedDice([]))
    with pytest.raises(DiceScriptExhausted):
        g.Game420(dice=ScriptedDice([6, 6, 1, 1]))  # Blue's first roll is also played at once


def test_r1_first_roll_of_a_later_round_is_forced_too():
    # 3 players from seat 0: seat 0 6-6-1-1, seat 1 wins at once (5-5-5-5), then round 2
    # starts with every hand empty: seat 2 and seat 0 roll all four again.
    dice = ScriptedDice([6, 6, 1, 1, 5, 5, 5, 5, 1, 1, 6, 6, 6, 1, 6, 1])
    game = g.Game420(3, dice=dice, first_player=0)
    assert [(e["seat"], e["before"], e["forced"]) for e in rolls(game)] == [
        (0, None, "first"),
        (1, None, "first"),
        (2, None, "first"),
        (0, None, "first"),
    ]
    assert game.hands == [(6, 6, 1, 1), None, (6, 6, 1, 1)] and game.current_player == 2


# --- R2 ---------------------------------------------------------------------


def test_r2_zero_dice_is_not_a_move():
    with pytest.raises(g.IllegalAction, match="R2"):
        g.action_for_reroll((4, 3, 2, 1), ())
    # no keep of four dice exists at all
    assert all(len(k) < 4 for k in g.KEEPS)


# --- R3 ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "hand, reroll, ok",
    [
        ((5, 3, 2, 1), (3, 2, 1), True),  # reroll 3 keeping a 5
        ((4, 3, 2, 1), (3, 2, 1), False),  # kept die 4 < 5
        ((6, 4, 2, 1), (2, 1), True),  # kept 4+6 = 10
        ((6, 3, 2, 1), (2, 1), False),  # kept 3+6 = 9
        ((6, 5, 4, 1), (1,), True),  # kept 15
        ((6, 5, 3, 1), (1,), False),  # kept 14
        ((1, 1, 1, 1), (1, 1, 1, 1), True),  # reroll 4: always
    ],
)
def test_r3_restrictions(hand, reroll, ok):
    if ok:
        a = g.action_for_reroll(hand, reroll)
        assert g.reroll_of(hand, a) == tuple(sorted(reroll, reverse=True))
        assert a in g.legal_keeps(hand)
        # the order of the dice given does not matter
        assert g.action_for_reroll(tuple(reversed(hand)), tuple(reversed(reroll))) == a
    else:
        with pytest.raises(g.IllegalAction, match="R3"):
            g.action_for_reroll(hand, reroll)


def test_r3_mask_is_exactly_the_legal_set_for_all_1296_ordered_hands():
    for hand in itertools.product(range(1, 7), repeat=4):
        mask = codec420.action_mask(hand)
        assert mask.any()
        assert {g.KEEPS[a] for a in mask.nonzero()[0]} == legal_by_brute_force(hand), hand
        assert sorted(mask.nonzero()[0]) == g.legal_keeps(hand)


def test_r3_a_hand_that_can_keep_nothing_rerolls_all_four_by_itself():
    # Red 6-6-1-1, Blue 2-1-1-1 (R3 lets it keep nothing); Red keeps 6-6 and rolls 1-1:
    # Blue's reroll of all four is played at once, and it is Red's choice again.
    dice = ScriptedDice([6, 6, 1, 1, 2, 1, 1, 1, 1, 1, 6, 6, 1, 1])
    game = g.Game420(dice=dice)
    assert g.legal_keeps(NO_CHOICE) == [g.REROLL_ALL]
    assert game.current_player == g.RED
    assert game.apply(keep(6, 6)) is None
    chosen, forced = rolls(game)[-2:]
    assert (chosen["seat"], chosen["before"], chosen["keep"], chosen["rolled"], chosen["forced"]) == (
        g.RED,
        (6, 6, 1, 1),
        (6, 6),
        (1, 1),
        None,
    )
    assert (forced["seat"], forced["before"], forced["keep"], forced["hand"], forced["forced"]) == (
        g.BLUE,
        NO_CHOICE,
        (),
        (6, 6, 1, 1),
        "no_keep",
    )
    assert game.current_player == g.RED and dice.remaining == ()


# --- R4 ---------------------------------------------------------------------


def test_r4_reset_over_20_forces_rerolling_all_four():
    # Red 6-6-5-4 (21), Blue 6-6-1-1, then Red must reroll all four: 6-5-2-1.
    dice = ScriptedDice([6, 6, 5, 4, 6, 6, 1, 1, 6, 5, 2, 1])
    game = g.Game420(dice=dice)
    reset = rolls(game)[-1]
    assert reset == {
        "type": "roll",
        "seat": g.RED,
        "before": (6, 6, 5, 4),
        "keep": (),
        "rolled": (6, 5, 2, 1),
        "hand": (6, 5, 2, 1),
        "forced": "reset",
        "won": False,
    }
    # Red was never asked: the reset was played before Blue's choice.
    assert game.current_player == g.BLUE and dice.remaining == ()
    assert g.legal_keeps((6, 6, 5, 4)) == [g.REROLL_ALL] and g.must_reset((6, 6, 5, 4))
    with pytest.raises(g.IllegalAction, match="R4"):
        g.action_for_reroll((6, 6, 5, 4), (4,))
    # So keeping 6-6-5 from 6-6-5-4 never is a mover's choice (the invariants test checks
    # that no decision is ever asked from a hand over 20).


def test_r4_a_choice_that_goes_over_20_resets_on_the_next_turn():
    # Red 6-6-1-1, Blue 6-6-1-1; Red keeps 6-6 and rolls 6-5 (23); Blue keeps 6-6 and
    # rolls 2-1; Red's reset is played at once (6-6-1-1) and the game stops at Blue's choice.
    dice = ScriptedDice([6, 6, 1, 1, 6, 6, 1, 1, 6, 5, 2, 1, 6, 6, 1, 1])
    game = g.Game420(dice=dice)
    game.apply(keep(6, 6))
    assert game.hands[g.RED] == (6, 6, 6, 5) and game.current_player == g.BLUE
    game.apply(keep(6, 6))
    assert [e["forced"] for e in rolls(game)] == ["first", "first", None, None, "reset"]
    assert rolls(game)[-1]["before"] == (6, 6, 6, 5) and rolls(game)[-1]["keep"] == ()
    assert game.hands == [(6, 6, 1, 1), (6, 6, 2, 1)] and game.current_player == g.BLUE


# --- R5 ---------------------------------------------------------------------


def test_r5_win_on_exactly_20_including_the_first_roll():
    game = g.Game420(dice=ScriptedDice([6, 5, 5, 4]))
    (turn,) = rolls(game)
    assert turn["won"] and turn["forced"] == "first"
    assert game.is_over and game.winner == g.RED and game.loser == g.BLUE
    assert game.hands[g.BLUE] is None  # Blue never rolled
    assert game.legal_actions() == [] and game.current_player is None
    assert [e["type"] for e in game.events] == ["start", "round", "roll", "round_won", "game_end"]
    assert game.events[-1] == {"type": "game_end", "loser": g.BLUE, "finish_order": [g.RED]}
    with pytest.raises(g.IllegalAction, match="over"):
        game.apply(g.REROLL_ALL)


def test_r5_first_roll_wins_with_probability_35_over_1296_exactly():
    first = g.roll_distribution(())
    assert sum(first.values()) == 1
    assert sum(p for hand, p in first.items() if g.is_win(hand)) == Fraction(35, 1296)
    # and by plain enumeration of ordered rolls
    assert sum(sum(r) == 20 for r in itertools.product(range(1, 7), repeat=4)) == 35


def test_r5_a_later_roll_that_makes_20_wins():
    # Red 6-5-4-1, Blue 1-1-1-1, Red keeps 6-5-4 and rolls a 5.
    game = g.Game420(dice=ScriptedDice([6, 5, 4, 1, 1, 1, 1, 1, 5]))
    assert game.current_player == g.RED
    game.apply(g.action_for_reroll((6, 5, 4, 1), (1,)))
    turn = game.history[-1]
    assert turn == g.Turn(g.RED, (6, 5, 4), (5,), (6, 5, 5, 4), True)
    assert rolls(game)[-1]["forced"] is None
    assert game.is_over and game.winner == g.RED and game.loser == g.BLUE


# --- R6 ---------------------------------------------------------------------


def test_r6_red_moves_first_then_turns_alternate():
    # Forced turns (2-1-1-1 keeps nothing) and chosen ones alternate all the same.
    dice = ScriptedDice([2, 1, 1, 1] * 3 + [6, 6, 1, 1] * 2 + [6, 6, 1, 1] * 4)
    game = g.Game420(dice=dice)
    assert [e["seat"] for e in rolls(game)] == [g.RED, g.BLUE] * 2 + [g.RED]
    assert [e["forced"] for e in rolls(game)] == ["first", "first", "no_keep", "no_keep", "no_keep"]
    movers = []
    for _ in range(4):
        movers.append(game.current_player)
        game.apply(g.REROLL_ALL)
    assert movers == [g.BLUE, g.RED] * 2
    assert [e["seat"] for e in rolls(game)] == [g.RED, g.BLUE] * 4 + [g.RED]
    assert dice.remaining == ()


# --- R7 ---------------------------------------------------------------------


def test_r7_multiplayer_rounds_drop_winners_and_rotate_player_one():
    # 3 players, Player 1 drawn = seat 1. Round 1: seats 1, 2; seat 2 makes 20 at once.
    # Round 2: Player 1 is the next remaining clockwise from seat 1: seat 0. Hands
    # start anew (R1), and seat 0 makes 20 on its second turn. No turn has a choice,
    # so the constructor plays the whole game.
    dice = ScriptedDice([2, 1, 1, 1, 5, 5, 5, 5, 2, 1, 1, 1, 2, 1, 1, 1, 6, 6, 4, 4], seats=[1])
    game = g.Game420(3, dice=dice)
    assert game.first_player == 1
    assert [(e["seat"], e["forced"], e["won"]) for e in rolls(game)] == [
        (1, "first", False),
        (2, "first", True),  # round 1
        (0, "first", False),
        (1, "first", False),
        (0, "no_keep", True),  # round 2
    ]
    assert [(e["type"], e.get("first_player"), e.get("players")) for e in of_type(game, "round")] == [
        ("round", 1, [0, 1, 2]),
        ("round", 0, [0, 1]),
    ]
    assert [(e["seat"], e["place"], e["remaining"]) for e in of_type(game, "round_won")] == [
        (2, 1, [0, 1]),
        (0, 2, [1]),
    ]
    assert rolls(game)[3]["before"] is None  # seat 1's round-1 hand was cleared
    assert game.is_over and game.loser == 1 and game.finish_order == [2, 0] and game.remaining == [1]
    assert game.events[-1] == {"type": "game_end", "loser": 1, "finish_order": [2, 0]}
    assert dice.remaining == ()


def test_r7_a_round_winner_leaves_and_the_others_play_on():
    # 4 players from seat 3: seats 3, 0, 1 roll; seat 1 wins round 1 at once. Round 2 is
    # led by seat 0, the next remaining after the last Player 1 (seat 3), not after the
    # winner; seat 1 never rolls again.
    dice = ScriptedDice([6, 6, 1, 1] * 2 + [6, 5, 5, 4] + [6, 6, 1, 1] * 3 + [4, 4] + [6, 6, 1, 1] * 2)
    game = g.Game420(4, dice=dice, first_player=3)
    assert [e["seat"] for e in rolls(game)] == [3, 0, 1, 0, 2, 3]
    assert game.finish_order == [1] and game.remaining == [0, 2, 3]
    assert game.hands == [(6, 6, 1, 1), None, (6, 6, 1, 1), (6, 6, 1, 1)]
    assert game.current_player == 0 and of_type(game, "round")[-1]["first_player"] == 0
    game.apply(keep(6, 6))  # seat 0: 6-6-4-4
    assert game.finish_order == [1, 0] and game.remaining == [2, 3] and not game.is_over
    # Round 3: led by seat 2 (next remaining after seat 0): seats 2 and 3 roll all four.
    assert [e["seat"] for e in rolls(game)][-2:] == [2, 3] and game.current_player == 2
    assert [e["first_player"] for e in of_type(game, "round")] == [3, 0, 2]
    assert dice.remaining == ()


def test_r7_first_player_drawn_from_the_seeded_source():
    def first(game):
        return rolls(game)[0]["seat"]

    games = [g.Game420(4, dice=RandomDice(seed)) for seed in range(40)]
    assert all(first(game) == game.first_player for game in games)
    assert {game.first_player for game in games} == {0, 1, 2, 3}
    assert first(g.Game420(4, dice=RandomDice(7))) == first(g.Game420(4, dice=RandomDice(7)))
    assert g.Game420(4, dice=RandomDice(7)).events == g.Game420(4, dice=RandomDice(7)).events
    # a given first player is not drawn
    game = g.Game420(3, dice=ScriptedDice(list(CHOICE) * 3), first_player=2)
    assert first(game) == 2 and game.current_player == 2
    with pytest.raises(ValueError, match="first_player"):
        g.Game420(3, dice=ScriptedDice([]), first_player=3)


def test_r7_with_two_players_is_r6():
    # no seat is drawn (the script has none to give) and Red rolls first
    game = g.Game420(2, dice=ScriptedDice(list(CHOICE) * 2))
    assert game.first_player == g.RED and rolls(game)[0]["seat"] == g.RED
    assert game.current_player == g.RED
    assert game.events[0] == {"type": "start", "n_players": 2, "first_player": g.RED}


def test_n_players_is_2_to_8():
    for n in (1, 9, 0, -2, True, False, 2.0, "2"):
        with pytest.raises(ValueError, match="2 to 8"):
            g.Game420(n, dice=RandomDice(0))
    assert g.MAX_PLAYERS == 8
    for n in range(2, 9):
        game = g.Game420(n, dice=RandomDice(n))
        assert game.n_players == n and len(game.hands) == n and len(game.returns()) == n


# --- returns, outcome, clone -------------------------------------------------------


def test_returns_and_outcome_two_players():
    game = g.Game420(dice=ScriptedDice([6, 5, 4, 1, 6, 6, 1, 1, 5]))
    assert game.returns() == [0.0, 0.0]
    assert game.outcome(g.RED) is None and game.outcome(g.BLUE) is None
    game.apply(keep(6, 5, 4))  # 6-5-5-4
    assert game.returns() == [1.0, -1.0]
    assert game.outcome(g.RED) == 1.0 and game.outcome(g.BLUE) == -1.0
    # Blue making 20 first is the mirror image
    game = g.Game420(dice=ScriptedDice([6, 6, 1, 1, 6, 5, 5, 4]))
    assert game.returns() == [-1.0, 1.0] and (game.outcome(0), game.outcome(1)) == (-1.0, 1.0)


def test_outcome_is_known_once_a_seat_has_made_20_returns_only_at_the_end():
    # 3 players from seat 1: seat 1 6-6-1-1, seat 2 wins at once; round 2 from seat 0.
    dice = ScriptedDice([6, 6, 1, 1, 5, 5, 5, 5, 6, 6, 1, 1, 6, 6, 1, 1, 4, 4])
    game = g.Game420(3, dice=dice, first_player=1)
    assert not game.is_over and game.current_player == 0
    assert game.returns() == [0.0, 0.0, 0.0]
    assert [game.outcome(s) for s in range(3)] == [None, None, 1.0]
    game.apply(keep(6, 6))  # seat 0: 6-6-4-4
    assert game.is_over and game.loser == 1
    assert game.returns() == [1.0, -1.0, 1.0]
    assert [game.outcome(s) for s in range(3)] == [1.0, -1.0, 1.0]


def test_clone_shares_the_dice_and_nothing_else():
    dice = ScriptedDice([6, 6, 1, 1, 6, 6, 1, 1, 6, 1, 6, 5, 4, 4])
    game = g.Game420(dice=dice)
    before = state(game)
    twin = game.clone()
    assert twin is not game and twin.dice is game.dice
    assert state(twin) == before
    assert twin.events is not game.events and twin.hands is not game.hands
    twin.apply(keep(6, 6))  # rolls 6-1 from the shared dice
    assert twin.hands[g.RED] == (6, 6, 6, 1) and twin.current_player == g.BLUE
    assert state(game) == before  # the original is untouched...
    assert dice.remaining == (6, 5, 4, 4)  # ...but the dice are shared
    game.apply(keep(6, 6))  # the original rolls the next dice: 6-5
    assert game.hands[g.RED] == (6, 6, 6, 5)
    assert twin.hands[g.RED] == (6, 6, 6, 1) and len(twin.events) == len(game.events)


def test_clone_with_its_own_dice_leaves_the_original_and_its_dice_alone():
    dice = ScriptedDice([6, 6, 1, 1, 6, 6, 1, 1, 5, 5])
    game = g.Game420(dice=dice)
    before = state(game)
    own = ScriptedDice([4, 4])
    twin = game.clone(dice=own)
    assert twin.dice is own and game.dice is dice
    twin.apply(keep(6, 6))
    assert twin.is_over and twin.winner == g.RED and twin.returns() == [1.0, -1.0]
    assert own.remaining == () and dice.remaining == (5, 5)
    assert state(game) == before and not game.is_over
    game.apply(keep(6, 6))
    assert game.hands[g.RED] == (6, 6, 5, 5) and not game.is_over and game.current_player == g.BLUE
    assert twin.hands[g.RED] == (6, 6, 4, 4)


# --- invariants -------------------------------------------------------------------


def check_rolls(events, chosen=None):
    """Every roll in ``events`` obeys R1-R5; only the first may be a choice (``chosen``:
    the action played), the others are the turns with a single legal move."""
    for i, e in enumerate(events):
        if e["type"] != "roll":
            continue
        before, hand = e["before"], e["hand"]
        assert len(hand) == 4 and all(1 <= d <= 6 for d in hand) and hand == g.canonical(hand)
        assert hand == g.canonical(e["keep"] + e["rolled"]) and len(e["rolled"]) == 4 - len(e["keep"])
        assert e["won"] == (sum(hand) == 20)
        if i == 0 and chosen is not None:
            assert e["forced"] is None and e["keep"] == g.KEEPS[chosen]
            assert before is not None and chosen in g.legal_keeps(before)
            assert len(g.legal_keeps(before)) > 1 and sum(before) <= 20
        else:
            assert e["keep"] == ()
            if before is None:
                assert e["forced"] == "first"
            elif sum(before) > 20:
                assert e["forced"] == "reset"
            else:
                assert e["forced"] == "no_keep" and g.legal_keeps(before) == [g.REROLL_ALL]


@settings(max_examples=150, deadline=None)
@given(st.integers(2, 8), st.integers(0, 2**32 - 1))
def test_random_games_keep_every_invariant(n_players, seed):
    dice = RandomDice(seed)
    game = g.Game420(n_players, dice=dice)
    assert game.events[0]["type"] == "start"
    check_rolls(game.events)
    chooser = RandomDice(seed + 1).rng
    for _ in range(20_000):
        if game.is_over:
            break
        legal = game.legal_actions()
        assert len(legal) > 1  # the engine stops only at a real choice
        seat = game.current_player
        hand = game.hands[seat]
        assert seat in game.remaining and hand is not None
        assert sum(hand) < 20  # never asked to move from a hand over 20 (R4) nor a winning one
        assert legal == g.legal_keeps(hand) and g.REROLL_ALL in legal
        assert game.returns() == [0.0] * n_players
        seen = len(game.events)
        action = int(chooser.choice(legal))
        assert game.apply(action) is None
        new = game.events[seen:]
        assert new[0]["type"] == "roll" and new[0]["seat"] == seat
        check_rolls(new, chosen=action)
    assert game.is_over and game.current_player is None and game.legal_actions() == []
    assert sorted(game.finish_order + [game.loser]) == list(range(n_players))
    assert game.returns() == [-1.0 if s == game.loser else 1.0 for s in range(n_players)]
    assert [game.outcome(s) for s in range(n_players)] == game.returns()
    assert game.events[-1] == {"type": "game_end", "loser": game.loser, "finish_order": game.finish_order}
    assert [e["seat"] for e in of_type(game, "round_won")] == game.finish_order
    assert game.history == [g.Turn(e["seat"], e["keep"], e["rolled"], e["hand"], e["won"]) for e in rolls(game)]


def test_illegal_move_messages_explain_the_rule():
    game = g.Game420(dice=ScriptedDice([5, 5, 2, 1, 1, 1, 1, 1]))
    assert game.current_player == g.RED
    before = state(game)
    with pytest.raises(g.IllegalAction, match="does not hold 6"):
        game.apply(keep(6))
    with pytest.raises(g.IllegalAction, match="0..13"):
        game.apply(99)
    with pytest.raises(g.IllegalAction, match="0..13"):
        game.apply(-1)
    with pytest.raises(g.IllegalAction, match="integer"):
        game.apply("keep 5")
    with pytest.raises(g.IllegalAction, match="integer"):
        game.apply(0.0)
    assert state(game) == before  # an illegal action changes nothing


def test_scripted_dice_exhaustion_and_validation():
    with pytest.raises(ValueError):
        ScriptedDice([7])
    dice = ScriptedDice([1, 2])
    with pytest.raises(DiceScriptExhausted, match="exhausted"):
        dice.roll(3)


def test_keeps_are_derived_from_r3():
    expected = {
        tuple(sorted(k, reverse=True))
        for n in range(4)
        for k in itertools.combinations_with_replacement(range(1, 7), n)
        if sum(k) >= {0: 0, 1: 5, 2: 10, 3: 15}[n]
    }
    assert set(g.KEEPS) == expected and len(g.KEEPS) == 14
    assert Counter(len(k) for k in g.KEEPS) == {0: 1, 1: 2, 2: 4, 3: 7}


# --- exact wording and the small public helpers (found by mutation testing) -------


def test_keep_allowed_and_must_reset_at_their_bounds():
    assert g.keep_allowed(()) and g.keep_allowed((5,)) and not g.keep_allowed((4,))
    assert g.keep_allowed((6, 4)) and not g.keep_allowed((6, 3))
    assert g.keep_allowed((6, 5, 4)) and not g.keep_allowed((6, 5, 3))
    assert not g.keep_allowed((6, 6, 6, 6))  # four kept dice reroll nothing (R2)
    assert g.must_reset((6, 6, 5, 4)) and not g.must_reset((6, 5, 5, 4)) and not g.must_reset((1, 1, 1, 1))


def test_action_for_reroll_messages_word_for_word():
    cases = [
        ((6, 6, 1, 1), (5,), "cannot reroll 5: the hand 6-6-1-1 does not hold those dice"),
        ((4, 3, 2, 1), (), "you must reroll at least one die (R2)"),
        (
            (4, 3, 2, 1),
            (3, 2, 1),
            "cannot keep 4 and reroll 3-2-1: rerolling 3 dice needs the kept die to be at least 5 (R3), it is 4",
        ),
        (
            (6, 3, 2, 1),
            (2, 1),
            "cannot keep 6-3 and reroll 2-1: rerolling 2 dice needs the kept dice to sum"
            " to at least 10 (R3), they sum to 9",
        ),
        (
            (6, 5, 3, 1),
            (1,),
            "cannot keep 6-5-3 and reroll 1: rerolling 1 die needs the kept dice to sum"
            " to at least 15 (R3), they sum to 14",
        ),
        (
            (6, 6, 5, 4),
            (4,),
            "cannot keep 6-6-5 and reroll 4: the hand totals 21, over 20, so all four dice must be rerolled (R4)",
        ),
    ]
    for hand, reroll, message in cases:
        with pytest.raises(g.IllegalAction) as err:
            g.action_for_reroll(hand, reroll)
        assert str(err.value) == message
    assert g.explain_illegal((4, 3, 2, 1), (4, 3, 2, 1)) == "at least one die must be rerolled (R2)"


def test_apply_messages_word_for_word():
    game = g.Game420(dice=ScriptedDice([5, 5, 2, 1, 1, 1, 1, 1]))
    legal = "legal: ['keep nothing, reroll 5-5-2-1', 'keep 5, reroll 5-2-1', 'keep 5-5, reroll 2-1']"
    with pytest.raises(g.IllegalAction) as err:
        game.apply(keep(6))
    assert str(err.value) == f"illegal move 2 for Red: the hand 5-5-2-1 does not hold 6; {legal}"
    for action in (g.N_ACTIONS, -1):  # just past either end
        with pytest.raises(g.IllegalAction) as err:
            game.apply(action)
        assert str(err.value) == f"illegal move {action} for Red: action must be an integer in 0..13; {legal}"
    with pytest.raises(ValueError) as err:
        g.Game420(3, dice=ScriptedDice([]), first_player=3)
    assert str(err.value) == "first_player must be a seat 0..2, got 3"
    over = g.Game420(dice=ScriptedDice([6, 5, 5, 4]))
    with pytest.raises(g.IllegalAction) as err:
        over.apply(g.REROLL_ALL)
    assert str(err.value) == "the game is over: no move is legal"


def test_names_and_descriptions():
    assert [g.seat_name(s, 2) for s in (0, 1)] == ["Red", "Blue"]
    assert [g.seat_name(s, 3) for s in (0, 2)] == ["Player 1", "Player 3"]
    assert g.Game420(dice=ScriptedDice(list(CHOICE) * 2)).seat_name(1) == "Blue"
    assert g.Game420(3, dice=ScriptedDice(list(CHOICE) * 3), first_player=0).seat_name(1) == "Player 2"
    assert g.describe_action(g.REROLL_ALL, None) == "roll all four"
    assert g.describe_action(keep(6, 6), (6, 6, 1, 1)) == "keep 6-6, reroll 1-1"
    assert g.describe_action(g.REROLL_ALL, (6, 6, 1, 1)) == "keep nothing, reroll 6-6-1-1"
    assert g.format_hand(None) == "(none)" and g.format_hand((6, 5, 2, 1)) == "6-5-2-1"


def test_default_dice_are_random():
    game = g.Game420()
    assert isinstance(game.dice, RandomDice) and game.hands[g.RED] is not None


def test_420_has_no_game_options():
    assert g.check_options() == {}
    for options, message in (({"pot": 3}, "420 has no option pot"), ({"x": 1, "a": 2}, "420 has no option a, x")):
        with pytest.raises(ValueError) as err:
            g.check_options(**options)
        assert str(err.value) == message
