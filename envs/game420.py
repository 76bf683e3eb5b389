"""Rules engine for 420 (Mark Steere), rules R1-R7 of the project's RULES.md.

Plain Python: no gymnasium, no torch.  Everything else in the project (the
Gymnasium env, the batched env, the exact solver, the bots, the terminal game)
gets the rules from here.

A hand is four dice, and only the multiset matters, so hands are sorted tuples
(``(1, 5, 6, 6)``).  A move is named by the dice *kept*, as a sorted tuple of
values; the other dice are rerolled.  Only 14 keeps are ever legal under R3
(``KEEPS``), and the same keep means the same move in every hand, which is what
lets a learner share what it learns across hands.
"""

from __future__ import annotations

import itertools
from collections import Counter
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from typing import Iterable, Optional, Sequence

from envs.dice import DiceSource, RandomDice

Hand = tuple[int, int, int, int]
Keep = tuple[int, ...]

N_DICE = 4
TARGET = 20
RED, BLUE = 0, 1
SEAT_NAMES = ("Red", "Blue")


def canonical(dice: Iterable[int]) -> tuple[int, ...]:
    """The canonical (sorted) form of a multiset of dice."""
    return tuple(sorted(int(d) for d in dice))


# R3: the smallest sum the kept dice must reach, by how many dice are kept
# (keep 0 = reroll 4: always allowed).
MIN_KEPT_SUM = {0: 0, 1: 5, 2: 10, 3: 15}


def keep_allowed(keep: Sequence[int]) -> bool:
    """R2-R3: may these dice be kept while the others are rerolled?"""
    return len(keep) in MIN_KEPT_SUM and sum(keep) >= MIN_KEPT_SUM[len(keep)]


def must_reset(hand: Sequence[int]) -> bool:
    """R4: a hand over 20 must reroll all four dice next turn."""
    return sum(hand) > TARGET


def is_win(hand: Sequence[int] | None) -> bool:
    """R5: a hand wins the moment it totals exactly 20."""
    return hand is not None and sum(hand) == TARGET


# Every hand (126 multisets) and every keep R3 allows anywhere (14 of them).
HANDS: tuple[Hand, ...] = tuple(itertools.combinations_with_replacement(range(1, 7), N_DICE))
HAND_INDEX: dict[Hand, int] = {h: i for i, h in enumerate(HANDS)}
KEEPS: tuple[Keep, ...] = tuple(
    k
    for size in range(N_DICE)
    for k in itertools.combinations_with_replacement(range(1, 7), size)
    if keep_allowed(k)
)
KEEP_INDEX: dict[Keep, int] = {k: i for i, k in enumerate(KEEPS)}
REROLL_ALL = KEEP_INDEX[()]
N_ACTIONS = len(KEEPS)


def is_submultiset(part: Sequence[int], whole: Sequence[int]) -> bool:
    return not Counter(part) - Counter(whole)


def legal_keeps(hand: Sequence[int]) -> list[int]:
    """Indices into ``KEEPS`` of the legal moves from ``hand`` (R2-R4). Never empty."""
    return list(_legal_keeps(canonical(hand)))


@lru_cache(maxsize=None)
def _legal_keeps(hand: tuple[int, ...]) -> tuple[int, ...]:
    if must_reset(hand):
        return (REROLL_ALL,)
    return tuple(a for a, k in enumerate(KEEPS) if is_submultiset(k, hand))


def reroll_of(hand: Sequence[int], action: int) -> tuple[int, ...]:
    """The dice rerolled when ``action`` is played from ``hand`` (sorted values)."""
    rest = Counter(hand) - Counter(KEEPS[action])
    return tuple(sorted(rest.elements()))


def action_for_reroll(hand: Sequence[int], reroll: Sequence[int]) -> int:
    """The action that rerolls exactly the dice values ``reroll`` from ``hand``.

    Raises ``IllegalMove`` if those dice are not in the hand or the move breaks R2-R4.
    """
    hand, reroll = canonical(hand), canonical(reroll)
    if not is_submultiset(reroll, hand):
        raise IllegalMove(f"cannot reroll {_fmt(reroll)}: the hand {_fmt(hand)} does not hold those dice")
    keep = canonical((Counter(hand) - Counter(reroll)).elements())
    if not reroll:
        raise IllegalMove("you must reroll at least one die (R2)")
    if keep not in KEEP_INDEX or KEEP_INDEX[keep] not in legal_keeps(hand):
        raise IllegalMove(f"cannot keep {_fmt(keep)} and reroll {_fmt(reroll)}: {explain_illegal(hand, keep)}")
    return KEEP_INDEX[keep]


def explain_illegal(hand: Sequence[int], keep: Sequence[int]) -> str:
    """Why keeping ``keep`` from ``hand`` is not allowed, in the words of the rules."""
    if must_reset(hand):
        return f"the hand totals {sum(hand)}, over 20, so all four dice must be rerolled (R4)"
    n = len(keep)
    if n == N_DICE:
        return "at least one die must be rerolled (R2)"
    if n == 1:
        return f"rerolling 3 dice needs the kept die to be at least 5 (R3), it is {keep[0]}"
    dice = "die" if N_DICE - n == 1 else "dice"
    return f"rerolling {N_DICE - n} {dice} needs the kept dice to sum to at least {MIN_KEPT_SUM[n]} (R3), they sum to {sum(keep)}"


def _fmt(dice: Sequence[int]) -> str:
    return "-".join(map(str, dice)) if dice else "nothing"


def format_hand(hand: Sequence[int] | None) -> str:
    return "-".join(map(str, hand)) if hand is not None else "(none)"


def roll_distribution(keep: Sequence[int] = ()) -> dict[Hand, Fraction]:
    """Exact distribution of the hand after keeping ``keep`` and rolling the rest."""
    n = N_DICE - len(keep)
    dist: Counter = Counter()
    for roll in itertools.product(range(1, 7), repeat=n):
        dist[canonical((*keep, *roll))] += 1
    total = 6**n
    return {h: Fraction(c, total) for h, c in dist.items()}


class IllegalMove(ValueError):
    """A move the rules do not allow; the message says why."""


@dataclass(frozen=True)
class Turn:
    """One turn as it happened: who, what they kept, what they rolled, the new hand."""

    seat: int
    kept: Keep
    rolled: tuple[int, ...]
    hand: Hand
    won: bool


class Game420:
    """A game of 420 among ``n_players`` (R1-R7), as an explicit state machine.

    Every turn is one call to :meth:`play` with the index of a keep in ``KEEPS``
    (``REROLL_ALL`` for a first turn, R1, or a reset, R4).  Chance comes only from
    ``dice``.  Seats are 0..n-1 clockwise; with two players seat 0 is Red and
    moves first (R6).  With more, Player 1 is drawn from ``dice`` unless
    ``first_player`` is given (R7).
    """

    def __init__(self, n_players: int = 2, dice: DiceSource | None = None, first_player: int | None = None):
        if n_players < 2:
            raise ValueError(f"420 needs at least 2 players, got {n_players}")
        self.n_players = n_players
        self.dice = dice if dice is not None else RandomDice()
        if first_player is None:
            first_player = RED if n_players == 2 else self.dice.draw_seat(n_players)
        if not 0 <= first_player < n_players:
            raise ValueError(f"first_player must be in 0..{n_players - 1}, got {first_player}")
        self.hands: list[Optional[Hand]] = [None] * n_players
        self.remaining: list[int] = list(range(n_players))  # players still in, by seat
        self.finish_order: list[int] = []  # round winners, first to last
        self.round_first = first_player
        self.current = first_player
        self.history: list[Turn] = []

    # --- state -------------------------------------------------------------
    @property
    def is_over(self) -> bool:
        return len(self.remaining) == 1

    @property
    def loser(self) -> int | None:
        """The last remaining player (R7), once the game is over."""
        return self.remaining[0] if self.is_over else None

    @property
    def winner(self) -> int | None:
        """The first player to make 20 (with two players, the winner of the game)."""
        return self.finish_order[0] if self.finish_order else None

    def hand(self, seat: int) -> Optional[Hand]:
        return self.hands[seat]

    def legal_actions(self) -> list[int]:
        """Legal keeps for the player to move: only ``REROLL_ALL`` on a first turn (R1)."""
        if self.is_over:
            return []
        hand = self.hands[self.current]
        return [REROLL_ALL] if hand is None else legal_keeps(hand)

    def is_decision(self) -> bool:
        """Whether the player to move has a real choice (more than one legal move)."""
        return len(self.legal_actions()) > 1

    # --- moves -------------------------------------------------------------
    def play(self, action: int) -> Turn:
        """Play one turn for the player to move: keep ``KEEPS[action]``, reroll the rest."""
        if self.is_over:
            raise IllegalMove("the game is over")
        legal = self.legal_actions()
        if action not in legal:
            hand = self.hands[self.current]
            keep = KEEPS[action] if isinstance(action, int) and 0 <= action < N_ACTIONS else None
            why = (
                f"action must be an integer in 0..{N_ACTIONS - 1}"
                if keep is None
                else "this is the first turn: all four dice are rolled (R1)"
                if hand is None
                else explain_illegal(hand, keep)
                if keep_allowed(keep) and is_submultiset(keep, hand)
                else f"the hand {format_hand(hand)} does not hold {_fmt(keep)}"
            )
            raise IllegalMove(
                f"illegal move {action!r} for {self.seat_name(self.current)}: {why}; "
                f"legal: {[describe_action(a, hand) for a in legal]}"
            )
        seat = self.current
        kept = KEEPS[action]
        rolled = self.dice.roll(N_DICE - len(kept))
        hand: Hand = canonical((*kept, *rolled))  # type: ignore[assignment]
        self.hands[seat] = hand
        turn = Turn(seat, kept, rolled, hand, is_win(hand))
        self.history.append(turn)
        if turn.won:
            self._finish_round(seat)
        else:
            self.current = self._next_in(seat)
        return turn

    def _next_in(self, seat: int) -> int:
        """The next remaining player clockwise from ``seat``."""
        for step in range(1, self.n_players + 1):
            nxt = (seat + step) % self.n_players
            if nxt in self.remaining:
                return nxt
        raise AssertionError("no player remains")

    def _finish_round(self, winner: int) -> None:
        """R5/R7: the round winner drops out; a new round starts for the others."""
        self.finish_order.append(winner)
        self.remaining.remove(winner)
        if self.is_over:
            return
        self.round_first = self._next_in(self.round_first)
        self.current = self.round_first
        self.hands = [None] * self.n_players

    def seat_name(self, seat: int) -> str:
        return SEAT_NAMES[seat] if self.n_players == 2 else f"Player {seat + 1}"


def describe_action(action: int, hand: Sequence[int] | None) -> str:
    """Human wording of a move, e.g. 'keep 6-6, reroll 1-5'."""
    if hand is None:
        return "roll all four"
    return f"keep {_fmt(KEEPS[action])}, reroll {_fmt(reroll_of(hand, action))}"
