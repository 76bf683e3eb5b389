"""Rules engine for the dice game 421 (rules H1-H7 of ``games/dice421/rules.md``).

One source of truth for the rules, shared by envs, solvers and a human UI, so it
imports no learning code.  It stops only where a player has a real choice; every
chance step (charge rolls, first rolls, forced follower rolls, RAMPO) is played
here with dice from an injected ``DiceSource``, so scripted dice replay any game
exactly, and ``events`` lets a UI narrate what happened in between.

Actions name the *values kept*, not dice positions: the same action means the
same thing in every hand, which is what lets a learner generalize across hands.
"""

from __future__ import annotations

from collections import Counter
from itertools import combinations_with_replacement
from typing import Iterable, NamedTuple

from core.dice import DiceSource, RandomDice
from core.engine import IllegalAction, TableGame, check_action, check_count, check_seat

# ---------------------------------------------------------------- H1: hands


def canonical(dice: Iterable[int]) -> tuple[int, ...]:
    """Dice as a multiset: values sorted high to low, e.g. (1, 4, 2) -> (4, 2, 1)."""
    values = tuple(sorted((int(d) for d in dice), reverse=True))
    if any(not 1 <= v <= 6 for v in values):
        raise ValueError(f"dice must be in 1..6, got {values}")
    return values


def hand_str(hand: Iterable[int]) -> str:
    return "-".join(map(str, canonical(hand)))


# The named hands of H1, highest first, with their token values.
_NAMED_HANDS = tuple(
    (canonical(dice), value)
    for dice, value in [
        ((4, 2, 1), 10),
        ((1, 1, 1), 7),
        ((1, 1, 6), 6),
        ((6, 6, 6), 6),
        ((1, 1, 5), 5),
        ((5, 5, 5), 5),
        ((1, 1, 4), 4),
        ((4, 4, 4), 4),
        ((1, 1, 3), 3),
        ((3, 3, 3), 3),
        ((1, 1, 2), 2),
        ((2, 2, 2), 2),
        ((4, 5, 6), 2),
        ((3, 4, 5), 2),
        ((2, 3, 4), 2),
        ((1, 2, 3), 2),
        ((2, 2, 1), 2),
    ]
)
OTHER_HAND_VALUE = 1

_ALL_HANDS = {canonical(c) for c in combinations_with_replacement(range(1, 7), 3)}
_NAMED = {hand for hand, _ in _NAMED_HANDS}
# Every other hand ranks below the named ones; among them, sorted high-to-low
# tuples compare lexicographically (5-5-2 > 5-4-2 > 5-2-2).
HANDS: tuple[tuple[int, int, int], ...] = tuple(sorted(_ALL_HANDS - _NAMED)) + tuple(
    hand for hand, _ in reversed(_NAMED_HANDS)
)
_RANK = {hand: i for i, hand in enumerate(HANDS)}
_VALUE = {hand: dict(_NAMED_HANDS).get(hand, OTHER_HAND_VALUE) for hand in HANDS}


def _hand(dice: Iterable[int]) -> tuple[int, int, int]:
    hand = canonical(dice)
    if len(hand) != 3:
        raise ValueError(f"a hand is three dice, got {hand}")
    return hand  # type: ignore[return-value]


def hand_rank(hand: Iterable[int]) -> int:
    """Index in HANDS: 0 for 3-2-2 up to 55 for 4-2-1; equal only for the same multiset."""
    return _RANK[_hand(hand)]


def hand_value(hand: Iterable[int]) -> int:
    """Tokens the hand is worth when it is the highest of a round (H1)."""
    return _VALUE[_hand(hand)]


# ---------------------------------------------------------------- actions

STOP = 0
# The values a player keeps; the other dice are rerolled.  Keeping at most two
# dice makes the reroll a non-empty subset (H4).  Ordered by size, then values.
KEEPS: tuple[tuple[int, ...], ...] = tuple(
    keep
    for size in (0, 1, 2)
    for keep in sorted(canonical(c) for c in combinations_with_replacement(range(1, 7), size))
)
N_ACTIONS = 1 + len(KEEPS)
assert N_ACTIONS == 29
_KEEP_ACTION = {keep: 1 + i for i, keep in enumerate(KEEPS)}


def action_for_keep(keep: Iterable[int]) -> int:
    """The action that keeps these values (any order) and rerolls the rest."""
    key = canonical(keep)
    if key not in _KEEP_ACTION:
        raise ValueError(f"a keep is 0, 1 or 2 dice (at least one die is rerolled), got {key}")
    return _KEEP_ACTION[key]


def keep_for_action(action: int) -> tuple[int, ...]:
    if not 1 <= action < N_ACTIONS:
        raise ValueError(f"action {action} is not a keep (keeps are 1..{N_ACTIONS - 1})")
    return KEEPS[action - 1]


def describe_action(action: int) -> str:
    if action == STOP:
        return "STOP"
    keep = keep_for_action(action)
    return f"keep {hand_str(keep)}" if keep else "reroll all"


def _is_sub_multiset(part: tuple[int, ...], whole: tuple[int, ...]) -> bool:
    return not Counter(part) - Counter(whole)


# Keep actions that are possible from each hand (the keep is part of the hand).
_KEEP_ACTIONS_FOR = {
    hand: tuple(a for keep, a in _KEEP_ACTION.items() if _is_sub_multiset(keep, hand)) for hand in HANDS
}


# ---------------------------------------------------------------- rounds


def _best(hands: list[tuple[int, tuple]]) -> int:
    """Seat of the highest hand; of equal hands the earlier in play order ranks higher (H6)."""
    best_seat, best_hand = hands[0]
    for seat, hand in hands[1:]:
        if _RANK[hand] > _RANK[best_hand]:
            best_seat, best_hand = seat, hand
    return best_seat


def _lowest(hands: list[tuple[int, tuple]]) -> list[int]:
    """Seats sharing the lowest hand, in play order."""
    low = min(_RANK[hand] for _, hand in hands)
    return [seat for seat, hand in hands if _RANK[hand] == low]


def _tie_maker_first(tied: list[int]) -> list[int]:
    """RAMPO order (H6): the later tied player made the tie and rolls first, then the others in order."""
    return tied[-1:] + tied[:-1]


class _Outcome(NamedTuple):
    receiver: int
    giver: int
    due: int  # before the cap by what the pot or the giver holds
    rampo: bool


CHARGE, DISCHARGE, OVER = "charge", "discharge", "over"
MIN_PLAYERS, MAX_PLAYERS = 2, 3
MAX_POT = 100  # tokens; the exact solver's time grows fast with the pot (pot 30: 4 s, 50: 26 s, 100: 4 min)
MAX_ROLLS = 3


def check_options(pot: int = 15, **unknown) -> dict:
    """421's game options, checked: the pot (1..MAX_POT tokens)."""
    if unknown:
        raise ValueError(f"421 has no option {', '.join(sorted(unknown))} (options: pot)")
    return {"pot": check_count(pot, 1, MAX_POT, "pot (tokens in the pot)")}


class Game421(TableGame):
    """A game of 421 as a state machine that stops only at a player's choice.

    The constructor plays the whole charge phase (it has no decisions) and the
    leader's first roll; ``apply`` plays the chosen action and every chance step
    after it.  At a decision ``current_player`` holds ``dice_in_hand`` after
    ``rolls_used`` of ``rolls_allowed`` rolls: the leader may STOP or keep,
    a follower must keep (it owes exactly the leader's number of rolls).

    ``dice`` defaults to ``RandomDice()``; ``first_player=None`` draws it (H7).
    """

    def __init__(
        self,
        n_players: int = 2,
        pot: int = 15,
        dice: DiceSource | None = None,
        first_player: int | None = None,
    ):
        if isinstance(n_players, bool) or not isinstance(n_players, int) or not MIN_PLAYERS <= n_players <= MAX_PLAYERS:
            raise ValueError(f"421 is played by {MIN_PLAYERS} or {MAX_PLAYERS} players, got {n_players!r}")
        pot = check_count(pot, 1, MAX_POT, "pot (tokens in the pot)")
        self.n_players = n_players
        self.initial_pot = pot
        self.dice: DiceSource = dice if dice is not None else RandomDice()
        if first_player is None:
            first_player = self.dice.draw_seat(n_players)
        self.first_player = first_player = check_seat(first_player, n_players)

        self.phase = CHARGE
        self.pot = pot
        self.tokens = [0] * n_players
        self.winners: list[int] = []
        self.loser: int | None = None
        self.events: list[dict] = []
        # The discharge round in progress.
        self.leader: int | None = None
        self.round_order: list[int] = []
        self.hands_played: list[tuple[int, tuple, int]] = []
        self.leader_rolls: int | None = None  # n, once the leader has finished
        # The turn in progress.
        self.current_player: int | None = None
        self.dice_in_hand: tuple | None = None
        self.rolls_used = 0
        self.rolls_allowed = 0

        self._emit("start", n_players=n_players, pot=pot, first_player=first_player)
        last_taker = self._play_charge()
        # Decision (the rules are silent): players out at once leave in charge play order.
        if not self._settle_leavers_and_loser(self._clockwise_from(first_player)):
            self.phase = DISCHARGE
            self._start_discharge_round(last_taker)

    # ------------------------------------------------------------ public API

    @property
    def is_over(self) -> bool:
        return self.phase == OVER

    def legal_actions(self) -> list[int]:
        if self.phase != DISCHARGE:
            return []
        keeps = list(_KEEP_ACTIONS_FOR[self.dice_in_hand])
        return [STOP, *keeps] if self.current_player == self.leader else keeps

    def apply(self, action: int) -> None:
        legal = self.legal_actions()
        action = check_action(action)
        if action not in legal:
            raise IllegalAction(self._illegal_message(action, legal))
        if action == STOP:
            self._emit("stop", seat=self.current_player, hand=self.dice_in_hand, rolls=self.rolls_used)
            self._end_turn()
        else:
            self._roll(keep_for_action(action))
        self._play_forced_turns()

    # ------------------------------------------------------------ H2: charge

    def _play_charge(self) -> int:
        """Charge rounds until the pot is empty; returns who took the last tokens."""
        while True:
            order = self._clockwise_from(self.first_player)  # H7: always from the first player
            self.round_order = order
            self._emit("round", order=order)
            hands = [(seat, self._roll_once(seat, "roll")) for seat in order]
            out = self._round_outcome(hands)
            taker = out.receiver
            amount = min(out.due, self.pot)
            self.pot -= amount
            self.tokens[taker] += amount
            self._emit(
                "take", seat=taker, amount=amount, due=out.due, rampo=out.rampo, pot=self.pot, tokens=list(self.tokens)
            )
            if self.pot == 0:
                self._emit("charge_end", tokens=list(self.tokens), last_taker=taker)
                return taker

    # ------------------------------------------------------------ H4: discharge

    def _start_discharge_round(self, leader: int) -> None:
        self.leader = leader
        self.round_order = self._clockwise_from(leader)
        self.hands_played = []
        self.leader_rolls = None
        self._emit("round", order=self.round_order, leader=leader)
        self._begin_turn(leader)

    def _begin_turn(self, seat: int) -> None:
        self.current_player = seat
        self.rolls_used = 0
        self.rolls_allowed = MAX_ROLLS if seat == self.leader else self.leader_rolls
        self._roll(())  # the first roll of a turn is all three dice, no choice

    def _roll(self, keep: tuple[int, ...]) -> None:
        rolled = self.dice.roll(3 - len(keep))
        self.dice_in_hand = canonical(keep + tuple(rolled))
        self.rolls_used += 1
        self._emit(
            "roll" if self.rolls_used == 1 else "reroll",
            seat=self.current_player,
            roll=self.rolls_used,
            keep=keep,
            rolled=tuple(rolled),
            hand=self.dice_in_hand,
        )

    def _play_forced_turns(self) -> None:
        """End every turn that has no roll left to choose, until a choice or game over."""
        while self.phase == DISCHARGE and self.rolls_used == self.rolls_allowed:
            self._end_turn()

    def _end_turn(self) -> None:
        seat = self.current_player
        self.hands_played.append((seat, self.dice_in_hand, self.rolls_used))
        self._emit("turn_end", seat=seat, hand=self.dice_in_hand, rolls=self.rolls_used)
        if seat == self.leader:
            self.leader_rolls = self.rolls_used
        if len(self.hands_played) < len(self.round_order):
            self._begin_turn(self.round_order[len(self.hands_played)])
        else:
            self._finish_discharge_round()

    def _finish_discharge_round(self) -> None:
        self.current_player, self.dice_in_hand = None, None
        self.rolls_used = self.rolls_allowed = 0
        hands = [(seat, hand) for seat, hand, _ in self.hands_played]
        out = self._round_outcome(hands)
        amount = min(out.due, self.tokens[out.giver])
        self.tokens[out.giver] -= amount
        self.tokens[out.receiver] += amount
        self._emit(
            "give",
            giver=out.giver,
            receiver=out.receiver,
            amount=amount,
            due=out.due,
            rampo=out.rampo,
            tokens=list(self.tokens),
        )
        if not self._settle_leavers_and_loser(self.round_order):
            self._start_discharge_round(out.receiver)  # H7: who received leads

    # ------------------------------------------------------------ H4/H6: who pays whom

    def _round_outcome(self, hands: list[tuple[int, tuple]]) -> _Outcome:
        """Who receives from whom, for a round's hands in play order.

        In charge the pot pays and ``giver`` is unused.  A shared lowest hand is
        settled by RAMPO and moves 1 token.  Decision (the rules are silent for three
        players): when *every* hand is tied there is no higher player, so the
        RAMPO winner gives, as the rules say for two players.
        """
        highest = _best(hands)
        tied = _lowest(hands)
        if len(tied) == 1:
            return _Outcome(tied[0], highest, hand_value(dict(hands)[highest]), rampo=False)
        loser, rampo_winner = self._rampo(tied)
        return _Outcome(loser, rampo_winner if highest in tied else highest, 1, rampo=True)

    def _rampo(self, tied: list[int]) -> tuple[int, int]:
        """H6: RAMPO among ``tied`` (in play order); returns (loser, winner).

        Decisions (the rules are silent): on a new tie, the tie maker is the later of
        the newly tied in the RAMPO's own roll order.  The winner is the best
        hand of the first RAMPO roll that is not a tie all round.
        """
        winner = None
        order = _tie_maker_first(tied)
        while True:
            self._emit("rampo", order=order)
            hands = [(seat, self._roll_once(seat, "rampo_roll")) for seat in order]
            lowest = _lowest(hands)
            if winner is None and len(lowest) < len(hands):
                winner = _best(hands)
            if len(lowest) == 1:
                return lowest[0], winner
            order = _tie_maker_first(lowest)

    # ------------------------------------------------------------ H3/H5: leaving, losing

    def _settle_leavers_and_loser(self, order: list[int]) -> bool:
        """Players without tokens leave as winners (in ``order``); whoever holds every token loses.

        Returns True if the game is over.
        """
        for seat in order:
            if self.tokens[seat] == 0 and seat not in self.winners:
                self.winners.append(seat)
                self._emit("leave", seat=seat)
        holders = [seat for seat, t in enumerate(self.tokens) if t == self.initial_pot]
        if not holders:
            return False
        self.loser = holders[0]
        self.phase = OVER
        self.current_player, self.dice_in_hand = None, None
        self.rolls_used = self.rolls_allowed = 0
        self._emit("game_end", loser=self.loser, winners=list(self.winners), tokens=list(self.tokens))
        return True

    # ------------------------------------------------------------ helpers

    def _clockwise_from(self, seat: int) -> list[int]:
        """H7: seats in increasing index mod n from ``seat``, skipping players who left."""
        seats = ((seat + i) % self.n_players for i in range(self.n_players))
        return [s for s in seats if s not in self.winners]

    def _roll_once(self, seat: int, kind: str) -> tuple:
        """One roll of all three dice with no choice (charge or RAMPO)."""
        rolled = tuple(self.dice.roll(3))
        hand = canonical(rolled)
        self._emit(kind, seat=seat, roll=1, keep=(), rolled=rolled, hand=hand)
        return hand

    def _emit(self, kind: str, **fields) -> None:
        self.events.append({"type": kind, "phase": self.phase, **fields})

    def _illegal_message(self, action: int, legal: list[int]) -> str:
        if self.is_over:
            return f"action {action}: the game is over, no action is legal"
        role = "leader" if self.current_player == self.leader else f"follower owing {self.rolls_allowed} rolls"
        what = describe_action(action) if 0 <= action < N_ACTIONS else f"not in 0..{N_ACTIONS - 1}"
        options = ", ".join(f"{a}={describe_action(a)}" for a in legal)
        return (
            f"action {action} ({what}) is not legal: seat {self.current_player} ({role}) holds "
            f"{hand_str(self.dice_in_hand)} after roll {self.rolls_used}; legal actions: {options}"
        )

    def __repr__(self) -> str:
        return (
            f"<Game421 {self.phase} tokens={self.tokens} pot={self.pot} "
            f"player={self.current_player} hand={self.dice_in_hand}>"
        )
