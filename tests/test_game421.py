"""Tests for the 421 rules engine: one section per rule of games/dice421/rules.md (H1-H7)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections import Counter
from itertools import combinations_with_replacement, permutations, product
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core import engine
from games.dice420 import game as game420
from games.dice421 import game as g
from core.dice import RandomDice, ScriptedDice
from games.dice421.game import (
    HANDS,
    KEEPS,
    N_ACTIONS,
    STOP,
    Game421,
    IllegalAction,
    action_for_keep,
    canonical,
    describe_action,
    hand_rank,
    hand_value,
    keep_for_action,
)

# ------------------------------------------------------------------ helpers

ROOT = Path(__file__).resolve().parents[1]


def rolls(spec: str) -> list[int]:
    """'211 551 6' -> [2, 1, 1, 5, 5, 1, 6]: die values in the order rolled."""
    return [int(c) for c in spec if c.isdigit()]


def charge(takers: list[int], n_players: int = 2, first: int = 0) -> str:
    """Charge rolls where each round's taker rolls the lowest hand (6-5-2) and
    everyone else 6-5-3 (worth 1): the pot hands out one token per taker."""
    order = [(first + i) % n_players for i in range(n_players)]
    return " ".join("652" if seat == t else "653" for t in takers for seat in order)


def new_game(takers, discharge="", n_players=2, first=0):
    dice = ScriptedDice(rolls(charge(takers, n_players, first) + " " + discharge))
    game = Game421(n_players, pot=len(takers), dice=dice, first_player=first)
    return game, dice


def keep(*values) -> int:
    return action_for_keep(values)


def of_type(game, kind):
    return [e for e in game.events if e["type"] == kind]


def discharge_rolls(game, seat):
    return [
        e for e in game.events if e["type"] in ("roll", "reroll") and e["phase"] == "discharge" and e["seat"] == seat
    ]


# ------------------------------------------------------------------ H1

# H1 exactly as the rules write it, highest first.
H1_TABLE = """4-2-1 (10) > 1-1-1 (7) > 1-1-6 (6) > 6-6-6 (6) > 1-1-5 (5) > 5-5-5 (5) > 1-1-4 (4) >
  4-4-4 (4) > 1-1-3 (3) > 3-3-3 (3) > 1-1-2 (2) > 2-2-2 (2) > 4-5-6 (2) > 3-4-5 (2) >
  2-3-4 (2) > 1-2-3 (2) > 2-2-1 (2)"""
NAMED = [
    (tuple(sorted(map(int, h.split("-")))), int(v))
    for h, v in (part.strip().rstrip(")").split(" (") for part in H1_TABLE.split(">"))
]


def h1_key(hand):
    """H1 read independently: named hands above all others, in table order;
    other hands by their dice sorted high to low, lexicographically."""
    names = [h for h, _ in NAMED]
    multiset = tuple(sorted(hand))
    if multiset in names:
        return (1, -names.index(multiset))
    return (0, tuple(sorted(hand, reverse=True)))


ALL_MULTISETS = [tuple(c) for c in combinations_with_replacement(range(1, 7), 3)]


def test_hands_are_the_56_multisets_canonical_lowest_first():
    assert len(NAMED) == 17
    assert len(HANDS) == 56 == len(set(HANDS))
    assert {tuple(sorted(h)) for h in HANDS} == set(ALL_MULTISETS)
    assert all(h == tuple(sorted(h, reverse=True)) for h in HANDS)
    assert [hand_rank(h) for h in HANDS] == sorted(hand_rank(h) for h in HANDS)
    assert HANDS[-1] == (4, 2, 1)


def test_ranking_over_all_pairs_matches_h1():
    for a, b in product(ALL_MULTISETS, repeat=2):
        want = (h1_key(a) > h1_key(b)) - (h1_key(a) < h1_key(b))
        got = (hand_rank(a) > hand_rank(b)) - (hand_rank(a) < hand_rank(b))
        assert got == want, (a, b)


@pytest.mark.parametrize("higher, lower", [((5, 5, 2), (5, 4, 2)), ((6, 2, 1), (5, 2, 2)), ((3, 3, 2), (3, 3, 1))])
def test_h1_comparison_examples(higher, lower):
    assert hand_rank(higher) > hand_rank(lower)


def test_ties_only_for_the_same_multiset():
    for a, b in product(ALL_MULTISETS, repeat=2):
        assert (hand_rank(a) == hand_rank(b)) == (Counter(a) == Counter(b))
    for hand in ALL_MULTISETS:  # order of dice never matters
        assert {hand_rank(p) for p in permutations(hand)} == {hand_rank(hand)}
        assert {canonical(p) for p in permutations(hand)} == {tuple(sorted(hand, reverse=True))}


def test_hand_values_match_h1():
    values = {h: v for h, v in NAMED}
    for hand in ALL_MULTISETS:
        assert hand_value(hand) == values.get(hand, 1)
    assert hand_value((1, 2, 4)) == 10 and hand_value((6, 6, 5)) == 1


def test_bad_hands_are_rejected():
    with pytest.raises(ValueError):
        hand_rank((1, 2))
    with pytest.raises(ValueError):
        hand_rank((7, 1, 1))


# ------------------------------------------------------------------ actions


def test_keeps_are_the_28_canonical_sub_hands_in_order():
    assert N_ACTIONS == 29 and len(KEEPS) == 28 == len(set(KEEPS))
    assert [len(k) for k in KEEPS] == sorted(len(k) for k in KEEPS)
    for size in (1, 2):
        same = [k for k in KEEPS if len(k) == size]
        assert same == sorted(same) and all(k == canonical(k) for k in same)
    for a in range(1, N_ACTIONS):
        assert action_for_keep(keep_for_action(a)) == a
    assert action_for_keep((1, 4)) == action_for_keep((4, 1))
    assert describe_action(STOP) == "STOP" and describe_action(keep()) == "reroll all"
    assert describe_action(keep(4, 1)) == "keep 4-1"
    for bad in ((1, 1, 1), (0,), (7,)):
        with pytest.raises(ValueError):
            action_for_keep(bad)
    for bad in (STOP, N_ACTIONS, -1):
        with pytest.raises(ValueError):
            keep_for_action(bad)


# ------------------------------------------------------------------ the rules' worked example

WORKED_EXAMPLE = (
    "211 551  643 541  621 621 642 632  642 113"  # charge, with a RAMPO
    "  541 6 4  111 4 4"
)  # discharge


def test_seed_003_worked_example_replays_exactly():
    dice = ScriptedDice(rolls(WORKED_EXAMPLE))
    game = Game421(n_players=2, pot=5, dice=dice, first_player=0)  # P1 = seat 0, P2 = seat 1

    takes = of_type(game, "take")
    assert [(t["seat"], t["amount"]) for t in takes] == [(1, 2), (1, 1), (0, 1), (0, 1)]
    assert [t["tokens"] for t in takes] == [[0, 2], [0, 3], [1, 3], [2, 3]]
    assert [t["pot"] for t in takes] == [3, 2, 1, 0]
    assert takes[2]["rampo"] and takes[3]["due"] == 3  # 3 due, 1 left
    (rampo,) = of_type(game, "rampo")
    assert rampo["order"] == [1, 0]  # P2 made the tie and rolls first
    assert [(e["seat"], e["hand"]) for e in of_type(game, "rampo_roll")] == [(1, (6, 4, 2)), (0, (6, 3, 2))]
    assert game.tokens == [2, 3] and game.pot == 0

    # P1 took the last charge token and leads.
    assert (game.phase, game.leader, game.current_player) == ("discharge", 0, 0)
    assert (game.dice_in_hand, game.rolls_used, game.rolls_allowed) == ((5, 4, 1), 1, 3)
    game.apply(keep(4, 1))  # replay the 5
    assert (game.dice_in_hand, game.rolls_used) == ((6, 4, 1), 2)
    game.apply(keep(4, 1))  # replay the 6; the third roll ends the turn
    assert game.hands_played == [(0, (4, 4, 1), 3)]

    assert (game.current_player, game.dice_in_hand, game.rolls_allowed) == (1, (1, 1, 1), 3)
    assert STOP not in game.legal_actions()
    game.apply(keep(1, 1))  # replay one 1
    assert game.dice_in_hand == (4, 1, 1)
    game.apply(keep(1, 1))  # replay the 4
    assert [(e["seat"], e["hand"]) for e in of_type(game, "turn_end")] == [(0, (4, 4, 1)), (1, (4, 1, 1))]

    (give,) = of_type(game, "give")
    assert (give["giver"], give["receiver"], give["due"], give["amount"]) == (1, 0, 4, 3)
    assert game.is_over and game.tokens == [5, 0]
    assert game.loser == 0 and game.winners == [1]
    assert dice.remaining == ()


# ------------------------------------------------------------------ H2 charge


def test_h2_lowest_takes_the_value_of_the_highest_capped_by_the_pot():
    # 4-2-1 (10) vs 6-5-3: seat 1 takes 10; then 1-1-1 (7) vs 6-5-3 with 5 left: seat 0 takes 5.
    dice = ScriptedDice(rolls("421 653  653 111  653 652"))
    game = Game421(2, pot=15, dice=dice, first_player=0)
    takes = of_type(game, "take")
    assert [(t["seat"], t["due"], t["amount"], t["pot"]) for t in takes] == [(1, 10, 10, 5), (0, 7, 5, 0)]
    assert game.tokens == [5, 10] and game.pot == 0


def test_h2_rounds_repeat_until_the_pot_is_empty_without_decisions():
    takers = [0, 1, 1, 0, 1, 0, 0]
    game, dice = new_game(takers, "653")
    assert len([e for e in of_type(game, "round") if e["phase"] == "charge"]) == len(takers)
    assert game.tokens == [4, 3] and game.pot == 0
    assert game.phase == "discharge"  # the charge needed no action
    assert len(of_type(game, "charge_end")) == 1


# ------------------------------------------------------------------ H3 end of charge


def test_h3_holding_every_token_after_charge_loses():
    game, dice = new_game([1, 1, 1])
    assert game.is_over and game.loser == 1 and game.winners == [0]
    assert game.legal_actions() == [] and game.current_player is None
    assert of_type(game, "game_end")[0]["phase"] == "over"
    with pytest.raises(IllegalAction, match="over"):
        game.apply(STOP)


def test_h3_a_player_with_no_tokens_is_out_and_has_won():
    game, dice = new_game([0, 2, 2, 0], "653", n_players=3)
    assert game.tokens == [2, 0, 2] and game.winners == [1]
    assert game.phase == "discharge" and game.leader == 0 and game.round_order == [0, 2]


def test_h3_three_players_one_holds_all_the_others_win_in_play_order():
    game, dice = new_game([1, 1], n_players=3, first=2)
    assert game.is_over and game.loser == 1 and game.winners == [2, 0]


# ------------------------------------------------------------------ H4 discharge


def test_h4_leader_has_rolled_before_deciding_and_may_stop_after_roll_one():
    # tokens [1, 1], seat 1 took last and leads.
    game, dice = new_game([0, 1], "653  652")
    assert game.events[-1]["type"] == "roll" and game.events[-1]["seat"] == 1  # rolled first
    assert (game.current_player, game.rolls_used, game.dice_in_hand) == (1, 1, (6, 5, 3))
    assert game.legal_actions()[0] == STOP
    game.apply(STOP)
    # n = 1: the follower's one roll is forced, so no decision comes before the result.
    assert len(discharge_rolls(game, 0)) == 1
    assert of_type(game, "give")[0]["giver"] == 1
    assert game.is_over and game.loser == 0 and game.winners == [1]


def test_h4_leader_may_stop_after_roll_two_and_follower_owes_two_rolls():
    game, dice = new_game([0, 0, 1, 1], "653 4  322 653")
    game.apply(keep(6, 5))
    assert game.rolls_used == 2 and STOP in game.legal_actions()
    game.apply(STOP)
    assert (game.current_player, game.rolls_used, game.rolls_allowed) == (0, 1, 2)
    assert STOP not in game.legal_actions()
    game.apply(keep())  # reroll all three: the second and last roll
    assert [e["rolls"] for e in of_type(game, "turn_end")] == [2, 2]
    assert of_type(game, "give")[0]["amount"] == 2  # 6-5-4 is worth 2
    assert dice.remaining == ()


def test_h4_leader_turn_ends_after_three_rolls():
    game, dice = new_game([0, 1], "653 4 2  652 1 1")
    game.apply(keep(6, 5))
    game.apply(keep(6, 5))
    # No STOP decision at roll 3: the turn is over and the follower owes 3 rolls.
    assert game.hands_played == [(1, (6, 5, 2), 3)]
    assert (game.current_player, game.rolls_allowed) == (0, 3)


def test_h4_a_follower_can_never_stop():
    game, dice = new_game([0, 1], "653 4 2  652 1 1")
    game.apply(keep(6, 5))
    game.apply(keep(6, 5))
    before = (game.current_player, game.dice_in_hand, game.rolls_used, len(game.events))
    with pytest.raises(IllegalAction, match="legal actions"):
        game.apply(STOP)
    assert (game.current_player, game.dice_in_hand, game.rolls_used, len(game.events)) == before
    game.apply(keep(6, 5))
    with pytest.raises(IllegalAction):
        game.apply(STOP)
    game.apply(keep(6, 5))
    assert len(discharge_rolls(game, 0)) == 3


def test_h4_keep_names_values_of_the_hand_and_rerolls_the_rest():
    game, dice = new_game([0, 1], "541 6")
    assert game.legal_actions() == [STOP] + sorted(
        action_for_keep(k) for k in [(), (5,), (4,), (1,), (5, 4), (5, 1), (4, 1)]
    )
    with pytest.raises(IllegalAction, match="keep 6"):
        game.apply(keep(6))
    game.apply(keep(4, 1))
    assert game.dice_in_hand == (6, 4, 1)
    last = game.events[-1]
    assert (last["type"], last["keep"], last["rolled"]) == ("reroll", (4, 1), (6,))


def test_h4_legal_keeps_of_a_triple_are_three():
    game, dice = new_game([0, 1], "111")
    assert game.legal_actions() == [STOP, keep(), keep(1), keep(1, 1)]


def test_h4_highest_gives_lowest_the_value_of_the_highest():
    game, dice = new_game([0] * 5 + [1] * 5, "411  652  653")  # tokens [5, 5], seat 1 leads
    game.apply(STOP)
    give = of_type(game, "give")[0]
    assert (give["giver"], give["receiver"], give["amount"]) == (1, 0, 4)
    assert game.tokens == [9, 1]
    assert (game.phase, game.leader, game.current_player) == ("discharge", 0, 0)
    assert dice.remaining == () and game.dice_in_hand == (6, 5, 3)


def test_h4_give_is_capped_by_what_the_giver_holds():
    game, dice = new_game([0, 0, 0, 1, 1], "421  652")  # tokens [3, 2], 4-2-1 is worth 10
    game.apply(STOP)
    give = of_type(game, "give")[0]
    assert (give["due"], give["amount"]) == (10, 2)
    assert game.tokens == [5, 0] and game.loser == 0 and game.winners == [1]


# ------------------------------------------------------------------ H5 leaving, losing (3 players)


def test_h5_a_player_leaves_and_the_game_goes_on_with_two():
    # tokens [2, 1, 3]; seat 1 took last and leads: order 1, 2, 0.
    game, dice = new_game([0, 0, 2, 2, 2, 1], "421  653  652   653  421", n_players=3)
    assert game.tokens == [2, 1, 3] and game.round_order == [1, 2, 0]
    game.apply(STOP)  # 4-2-1: seat 1 gives all it has (1) to seat 0 and leaves
    assert game.tokens == [3, 0, 3] and game.winners == [1]
    assert [e["seat"] for e in of_type(game, "leave")] == [1]
    assert (game.leader, game.round_order, game.current_player) == (0, [0, 2], 0)
    game.apply(STOP)  # seat 2's 4-2-1 gives its 3 to seat 0
    assert game.tokens == [6, 0, 0]
    assert game.is_over and game.loser == 0 and game.winners == [1, 2]
    assert dice.remaining == ()


# ------------------------------------------------------------------ H6 RAMPO


def test_h6_charge_rampo_between_two_of_three_moves_one_token_from_the_pot():
    # 4-2-1 is highest (worth 10) but the tie on 6-5-2 moves only 1 token.
    dice = ScriptedDice(rolls("421 652 652  643 642"))
    game = Game421(3, pot=1, dice=dice, first_player=0)
    assert of_type(game, "rampo")[0]["order"] == [2, 1]  # seat 2 made the tie
    assert [e["seat"] for e in of_type(game, "rampo_roll")] == [2, 1]  # seat 0 does not play
    take = of_type(game, "take")[0]
    assert (take["seat"], take["amount"], take["rampo"]) == (1, 1, True)
    assert game.is_over and game.loser == 1 and game.winners == [0, 2]


def test_h6_a_new_tie_repeats_rampo():
    dice = ScriptedDice(rolls("621 621  543 543  653 652"))
    game = Game421(2, pot=1, dice=dice, first_player=0)
    assert [e["order"] for e in of_type(game, "rampo")] == [[1, 0], [0, 1]]
    assert game.tokens == [0, 1] and game.loser == 1


def test_h6_repeated_rampo_tie_maker_is_later_in_the_rampo_order():
    # Decision: all three tie, RAMPO order 2, 0, 1; seats 2 and 1 tie lowest and
    # seat 1 (who rolled later in the RAMPO) made that tie, so it rolls first.
    dice = ScriptedDice(rolls("653 653 653  652 653 652  653 652"))
    game = Game421(3, pot=1, dice=dice, first_player=2)
    assert [e["order"] for e in of_type(game, "rampo")] == [[1, 2, 0], [0, 1]]
    dice = ScriptedDice(rolls("653 653 653  652 653 652  653 652"))
    game = Game421(3, pot=1, dice=dice, first_player=0)
    assert [e["order"] for e in of_type(game, "rampo")] == [[2, 0, 1], [1, 2]]
    assert game.tokens == [0, 0, 1]


def test_h6_discharge_two_players_the_rampo_winner_gives_one():
    game, dice = new_game([0] * 5 + [1] * 5, "421  421  653 652  653")  # both 4-2-1
    game.apply(STOP)
    assert of_type(game, "rampo")[0]["order"] == [0, 1]  # seat 0 made the tie
    give = of_type(game, "give")[0]
    assert (give["giver"], give["receiver"], give["amount"], give["rampo"]) == (0, 1, 1, True)
    assert game.tokens == [4, 6] and game.leader == 1


def test_h6_discharge_three_players_the_highest_gives_one_to_the_rampo_loser():
    takers = [0, 0, 0, 2, 2, 2, 1, 1, 1]  # tokens [3, 3, 3], order 1, 2, 0
    game, dice = new_game(takers, "111  652  652   642 643  653", n_players=3)
    game.apply(STOP)
    assert of_type(game, "rampo")[0]["order"] == [0, 2]
    give = of_type(game, "give")[0]
    assert (give["giver"], give["receiver"], give["due"], give["amount"]) == (1, 0, 1, 1)
    assert game.tokens == [4, 2, 3] and game.leader == 0 and game.round_order == [0, 1, 2]


def test_h6_discharge_three_players_all_tied_the_rampo_winner_gives_one():
    # Decision (the rules are silent): nobody is above the tie, so the RAMPO winner gives.
    takers = [0, 0, 0, 2, 2, 2, 1, 1, 1]
    game, dice = new_game(takers, "653  653  653   555 652 653  653", n_players=3)
    game.apply(STOP)
    assert of_type(game, "rampo")[0]["order"] == [0, 1, 2]
    give = of_type(game, "give")[0]
    assert (give["giver"], give["receiver"], give["amount"]) == (0, 1, 1)
    assert game.tokens == [2, 4, 3]


def test_h6_discharge_three_players_all_tied_then_two_tied_the_first_rampo_winner_gives():
    # Decision: the winner is the best hand of the first RAMPO roll that is not a tie all
    # round.  All three tie on 6-5-3; RAMPO order 0, 1, 2: seat 0 rolls 5-5-5, seats 1 and 2
    # tie on 6-5-2, so seat 0 has won the RAMPO; seats 2 and 1 roll again (seat 2 made the
    # tie) and seat 1 loses.  Seat 0 gives, not seat 2, the better of the second roll.
    takers = [0, 0, 0, 2, 2, 2, 1, 1, 1]
    game, dice = new_game(takers, "653  653  653   555 652 652   653 652  653", n_players=3)
    game.apply(STOP)
    assert [e["order"] for e in of_type(game, "rampo")] == [[0, 1, 2], [2, 1]]
    assert of_type(game, "rampo_roll")[:2] == [
        {
            "type": "rampo_roll",
            "phase": "discharge",
            "seat": 0,
            "roll": 1,
            "keep": (),
            "rolled": (5, 5, 5),
            "hand": (5, 5, 5),
        },
        {
            "type": "rampo_roll",
            "phase": "discharge",
            "seat": 1,
            "roll": 1,
            "keep": (),
            "rolled": (6, 5, 2),
            "hand": (6, 5, 2),
        },
    ]
    give = of_type(game, "give")[0]
    assert (give["giver"], give["receiver"], give["due"], give["amount"], give["rampo"]) == (0, 1, 1, 1, True)
    assert game.tokens == [2, 4, 3] and game.leader == 1 and dice.remaining == ()


def test_h6_ties_above_the_lowest_go_to_the_earlier_player():
    takers = [0] * 5 + [2] * 5 + [1] * 5  # tokens [5, 5, 5], order 1, 2, 0
    game, dice = new_game(takers, "456  654  653  653", n_players=3)
    game.apply(STOP)
    assert of_type(game, "rampo") == []
    give = of_type(game, "give")[0]
    assert (give["giver"], give["receiver"], give["amount"]) == (1, 0, 2)
    assert game.tokens == [7, 3, 5]


# ------------------------------------------------------------------ H7 order


def test_h7_first_player_is_drawn_and_starts_every_charge_round():
    takers = [0, 1, 2, 0]
    dice = ScriptedDice(rolls(charge(takers, 3, first=2) + " 653"), seats=[2])
    game = Game421(3, pot=4, dice=dice)
    assert game.first_player == 2
    charge_rounds = [e for e in of_type(game, "round") if e["phase"] == "charge"]
    assert [e["order"] for e in charge_rounds] == [[2, 0, 1]] * 4
    charge_rolls = [e["seat"] for e in of_type(game, "roll") if e["phase"] == "charge"]
    assert charge_rolls == [2, 0, 1] * 4
    assert game.tokens == [2, 1, 1]


def test_h7_first_leader_took_the_last_charge_tokens():
    game, dice = new_game([2, 1, 0, 1], "653", n_players=3, first=0)
    assert game.tokens == [1, 2, 1]
    assert game.leader == 1 != game.first_player
    assert game.round_order == [1, 2, 0]  # clockwise from the leader
    assert game.current_player == 1


def test_h7_the_receiver_leads_the_next_round():
    game, dice = new_game([2, 1, 0, 1], "653  642  652  655", n_players=3, first=0)
    game.apply(STOP)  # 6-5-3 > 6-5-2 > 6-4-2: seat 2 is lowest and receives
    assert of_type(game, "give")[0]["receiver"] == 2
    assert game.tokens == [1, 1, 2]
    assert (game.leader, game.round_order, game.current_player) == (2, [2, 0, 1], 2)
    assert game.dice_in_hand == (6, 5, 5)


# ------------------------------------------------------------------ errors, clone, replay


def test_illegal_actions_raise_with_a_helpful_message():
    game, dice = new_game([0, 1], "541")
    for bad in (29, -1, keep(6), keep(5, 5)):
        with pytest.raises(IllegalAction) as info:
            game.apply(bad)
        message = str(info.value)
        assert "legal actions" in message and "0=STOP" in message and "keep 4-1" in message
        assert "5-4-1" in message
    with pytest.raises(IllegalAction):
        game.apply("STOP")
    assert issubclass(IllegalAction, ValueError)
    # one error class for both engines, defined by the engine interface
    assert IllegalAction is engine.IllegalAction is game420.IllegalAction


def test_returns_and_outcome_once_a_player_has_left_and_at_the_end():
    # The H5 game: seat 1 leaves first (a winner while the game goes on), then seat 2.
    game, dice = new_game([0, 0, 2, 2, 2, 1], "421  653  652   653  421", n_players=3)
    assert game.returns() == [0.0, 0.0, 0.0]
    assert [game.outcome(s) for s in range(3)] == [None, None, None]
    game.apply(STOP)
    assert game.winners == [1] and not game.is_over
    assert game.returns() == [0.0, 0.0, 0.0]
    assert [game.outcome(s) for s in range(3)] == [None, 1.0, None]
    game.apply(STOP)
    assert game.is_over and game.loser == 0
    assert game.returns() == [-1.0, 1.0, 1.0]
    assert [game.outcome(s) for s in range(3)] == [-1.0, 1.0, 1.0]


def test_returns_and_outcome_of_a_game_decided_in_the_charge():
    game, dice = new_game([1, 1, 1])  # H3: seat 1 holds every token
    assert game.is_over and game.returns() == [1.0, -1.0]
    assert (game.outcome(0), game.outcome(1)) == (1.0, -1.0)


def test_bad_arguments_are_rejected():
    for kwargs in (dict(n_players=1), dict(n_players=4), dict(n_players=True), dict(pot=0), dict(first_player=2)):
        with pytest.raises(ValueError):
            Game421(**kwargs)


def test_clone_shares_nothing_but_the_dice():
    game, dice = new_game([0] * 5 + [1] * 5, "411  652  111")
    assert game.clone().dice is dice and game.clone().events is not game.events
    twin = game.clone(dice=ScriptedDice(rolls("421")))
    assert twin.dice is not dice
    twin.apply(STOP)
    assert twin.tokens == [0, 10] and twin.is_over
    assert game.tokens == [5, 5] and not game.is_over and game.current_player == 1
    game.apply(STOP)
    assert game.tokens == [9, 1] and game.dice_in_hand == (1, 1, 1)


class RecordingDice:
    def __init__(self, seed):
        self.inner, self.values, self.seats = RandomDice(seed), [], []

    def roll(self, n):
        out = self.inner.roll(n)
        self.values += out
        return out

    def draw_seat(self, n_players):
        self.seats.append(self.inner.draw_seat(n_players))
        return self.seats[-1]


@pytest.mark.parametrize("seed", range(20))
def test_a_recorded_game_replays_exactly_from_its_dice(seed):
    rng = np.random.default_rng(seed)
    recorder = RecordingDice(seed)
    game = Game421(2 + seed % 2, pot=15, dice=recorder)
    actions = []
    while not game.is_over:
        actions.append(int(rng.choice(game.legal_actions())))
        game.apply(actions[-1])
    replay = Game421(2 + seed % 2, pot=15, dice=ScriptedDice(recorder.values, recorder.seats))
    for a in actions:
        replay.apply(a)
    assert replay.events == game.events
    # Every die value is narrated in the events.
    narrated = [v for e in game.events if "rolled" in e for v in e["rolled"]]
    assert narrated == recorder.values


def test_engine_runs_with_no_learning_library_installed():
    """The engine never imports an RL library: it plays a game with them blocked."""
    code = (
        "import sys\n"
        "for m in ('gymnasium', 'torch', 'stable_baselines3', 'sb3_contrib'): sys.modules[m] = None\n"
        "from games.dice421.game import Game421\n"
        "from core.dice import RandomDice\n"
        "g = Game421(2, pot=5, dice=RandomDice(0))\n"
        "while not g.is_over: g.apply(g.legal_actions()[-1])\n"
        "print('ok', g.loser in (0, 1))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert out.stdout.strip() == "ok True"


# ------------------------------------------------------------------ random play properties


def check_decision(game):
    assert game.phase == "discharge"
    legal = game.legal_actions()
    assert legal and all(0 <= a < N_ACTIONS for a in legal)
    seat = game.current_player
    assert seat is not None and seat not in game.winners and game.tokens[seat] > 0
    assert len(game.dice_in_hand) == 3 and all(1 <= d <= 6 for d in game.dice_in_hand)
    assert 1 <= game.rolls_used < game.rolls_allowed <= 3
    if seat == game.leader:
        assert game.rolls_allowed == 3 and legal[0] == STOP
    else:
        assert game.rolls_allowed == game.leader_rolls and STOP not in legal
    assert game.pot == 0


def check_finished(game):
    assert game.is_over and game.legal_actions() == [] and game.current_player is None
    assert game.tokens[game.loser] == game.initial_pot
    assert sorted(game.winners + [game.loser]) == list(range(game.n_players))
    assert len(of_type(game, "game_end")) == 1
    # Each follower made exactly as many rolls as the round's leader (H4).
    rounds, current = [], None
    for e in game.events:
        if e["type"] == "round" and e["phase"] == "discharge":
            current = []
            rounds.append(current)
        elif e["type"] == "turn_end":
            current.append(e["rolls"])
    assert all(len(set(r)) == 1 for r in rounds)


def play_randomly(seed, n_players, pot):
    rng = np.random.default_rng(seed)
    game = Game421(n_players, pot=pot, dice=RandomDice(rng))
    for _ in range(100_000):
        assert sum(game.tokens) + game.pot == pot
        if game.is_over:
            break
        check_decision(game)
        game.apply(int(rng.choice(game.legal_actions())))
    check_finished(game)
    return game


def test_thousands_of_random_games_terminate_with_one_loser():
    losers = Counter()
    for seed in range(2000):
        n_players = 2 + seed % 2
        game = play_randomly(seed, n_players, pot=15 if seed % 3 else 1 + seed % 20)
        losers[(n_players, game.loser)] += 1
    assert all(losers[(n, s)] > 0 for n in (2, 3) for s in range(n))  # every seat can lose


@settings(max_examples=300, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n_players=st.sampled_from([2, 3]), pot=st.integers(1, 30))
def test_random_games_keep_the_invariants(seed, n_players, pot):
    play_randomly(seed, n_players, pot)


# ------------------------------------------------------------------ exact events and wording
# (found by mutation testing: a UI narrates from these, word for word)


def test_a_discharge_round_is_recorded_event_by_event():
    game, dice = new_game([0, 0, 1, 1], "653 4  322 653")
    assert game.events[:5] == [
        {"type": "start", "phase": "charge", "n_players": 2, "pot": 4, "first_player": 0},
        {"type": "round", "phase": "charge", "order": [0, 1]},
        {"type": "roll", "phase": "charge", "seat": 0, "roll": 1, "keep": (), "rolled": (6, 5, 2), "hand": (6, 5, 2)},
        {"type": "roll", "phase": "charge", "seat": 1, "roll": 1, "keep": (), "rolled": (6, 5, 3), "hand": (6, 5, 3)},
        {
            "type": "take",
            "phase": "charge",
            "seat": 0,
            "amount": 1,
            "due": 1,
            "rampo": False,
            "pot": 3,
            "tokens": [1, 0],
        },
    ]
    assert game.leader_rolls is None and game.loser is None  # the leader is still on
    game.apply(keep(6, 5))
    assert game.leader_rolls is None
    game.apply(STOP)
    assert (game.leader_rolls, game.rolls_used, game.rolls_allowed) == (2, 1, 2)
    game.apply(keep())
    start = [e["type"] for e in game.events].index("charge_end")
    assert game.events[start:] == [
        {"type": "charge_end", "phase": "charge", "tokens": [2, 2], "last_taker": 1},
        {"type": "round", "phase": "discharge", "order": [1, 0], "leader": 1},
        {
            "type": "roll",
            "phase": "discharge",
            "seat": 1,
            "roll": 1,
            "keep": (),
            "rolled": (6, 5, 3),
            "hand": (6, 5, 3),
        },
        {
            "type": "reroll",
            "phase": "discharge",
            "seat": 1,
            "roll": 2,
            "keep": (6, 5),
            "rolled": (4,),
            "hand": (6, 5, 4),
        },
        {"type": "stop", "phase": "discharge", "seat": 1, "hand": (6, 5, 4), "rolls": 2},
        {"type": "turn_end", "phase": "discharge", "seat": 1, "hand": (6, 5, 4), "rolls": 2},
        {
            "type": "roll",
            "phase": "discharge",
            "seat": 0,
            "roll": 1,
            "keep": (),
            "rolled": (3, 2, 2),
            "hand": (3, 2, 2),
        },
        {
            "type": "reroll",
            "phase": "discharge",
            "seat": 0,
            "roll": 2,
            "keep": (),
            "rolled": (6, 5, 3),
            "hand": (6, 5, 3),
        },
        {"type": "turn_end", "phase": "discharge", "seat": 0, "hand": (6, 5, 3), "rolls": 2},
        {
            "type": "give",
            "phase": "discharge",
            "giver": 1,
            "receiver": 0,
            "amount": 2,
            "due": 2,
            "rampo": False,
            "tokens": [4, 0],
        },
        {"type": "leave", "phase": "discharge", "seat": 1},
        {"type": "game_end", "phase": "over", "loser": 0, "winners": [1], "tokens": [4, 0]},
    ]
    assert dice.remaining == ()


def test_illegal_action_messages_word_for_word():
    game, dice = new_game([0, 1], "541")
    legal = "0=STOP, 1=reroll all, 2=keep 1, 5=keep 4, 6=keep 5, 14=keep 4-1, 18=keep 5-1, 21=keep 5-4"
    for bad, what in ((29, "not in 0..28"), (-1, "not in 0..28"), (keep(6), "keep 6")):
        with pytest.raises(IllegalAction) as info:
            game.apply(bad)
        assert str(info.value) == (
            f"action {bad} ({what}) is not legal: seat 1 (leader) holds 5-4-1 after roll 1; legal actions: {legal}"
        )
    game, dice = new_game([0, 0, 1, 1], "653 4  322 653")
    game.apply(keep(6, 5))
    game.apply(STOP)
    with pytest.raises(IllegalAction) as info:
        game.apply(STOP)
    assert str(info.value) == (
        "action 0 (STOP) is not legal: seat 0 (follower owing 2 rolls) holds 3-2-2 after "
        "roll 1; legal actions: 1=reroll all, 3=keep 2, 4=keep 3, 10=keep 2-2, 12=keep 3-2"
    )
    with pytest.raises(ValueError) as info:
        action_for_keep((6, 6, 6))
    assert str(info.value) == "a keep is 0, 1 or 2 dice (at least one die is rerolled), got (6, 6, 6)"
    for action in (0, 29):
        with pytest.raises(ValueError) as info:
            g.keep_for_action(action)
        assert str(info.value) == f"action {action} is not a keep (keeps are 1..28)"


def test_sub_multisets():
    assert g._is_sub_multiset((), (6, 5, 4)) and g._is_sub_multiset((5, 5), (5, 5, 1))
    assert not g._is_sub_multiset((5, 5), (5, 4, 1)) and not g._is_sub_multiset((6,), (5, 4, 1))


def test_a_game_decided_in_the_charge_leaves_no_turn_open():
    game, dice = new_game([1, 1, 1])
    assert game.events[-3:] == [
        {"type": "charge_end", "phase": "charge", "tokens": [0, 3], "last_taker": 1},
        {"type": "leave", "phase": "charge", "seat": 0},
        {"type": "game_end", "phase": "over", "loser": 1, "winners": [0], "tokens": [0, 3]},
    ]
    assert (game.leader, game.round_order, game.current_player, game.dice_in_hand) == (None, [0, 1], None, None)
    assert (game.rolls_used, game.rolls_allowed, game.leader_rolls) == (0, 0, None)
    # and a game that ends after a discharge round, the same
    game, dice = new_game([0, 1], "653  652")
    game.apply(STOP)
    assert game.is_over and (game.current_player, game.dice_in_hand, game.rolls_used, game.rolls_allowed) == (
        None,
        None,
        0,
        0,
    )


def test_constructor_defaults_and_argument_messages_word_for_word():
    game = Game421()
    assert game.initial_pot == 15 and isinstance(game.dice, RandomDice) and game.n_players == 2
    for kwargs, message in (
        (dict(n_players=4), "421 is played by 2 or 3 players, got 4"),
        (dict(n_players=2.0), "421 is played by 2 or 3 players, got 2.0"),
        (dict(n_players=3.0), "421 is played by 2 or 3 players, got 3.0"),
        (dict(pot=0), "pot (tokens in the pot) must be a whole number in 1..100, got 0"),
        (dict(first_player=2), "first_player must be a seat 0..1, got 2"),
    ):
        with pytest.raises(ValueError) as info:
            Game421(dice=ScriptedDice([]), **kwargs)
        assert str(info.value) == message
    for call, message in (
        (lambda: canonical((7, 1)), "dice must be in 1..6, got (7, 1)"),
        (lambda: hand_rank((2, 1)), "a hand is three dice, got (2, 1)"),
    ):
        with pytest.raises(ValueError) as info:
            call()
        assert str(info.value) == message


def test_421_options_are_the_pot_only():
    assert g.check_options() == {"pot": 15} and g.check_options(pot=1) == {"pot": 1}
    assert g.check_options(pot=100) == {"pot": 100}
    for options, message in (
        ({"pot": 0}, "pot (tokens in the pot) must be a whole number in 1..100, got 0"),
        ({"pot": 101}, "pot (tokens in the pot) must be a whole number in 1..100, got 101"),
        ({"x": 1, "a": 2}, "421 has no option a, x (options: pot)"),
    ):
        with pytest.raises(ValueError) as info:
            g.check_options(**options)
        assert str(info.value) == message
