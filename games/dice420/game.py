"""Rules engine for 420 (Mark Steere), rules R1-R7 of ``games/dice420/rules.md``.

Plain Python: no gymnasium, no torch.  Everything else in the project (the
Gymnasium env, the batched env, the exact solver, the bots, the terminal game)
gets the rules from here.  The engine follows ``core.engine``'s interface.

A hand is four dice, and only the multiset matters, so hands are tuples
written high to low (``(6, 6, 5, 1)``), as in 421.  A move is named by the dice
*kept*, as a tuple of values high to low; the other dice are rerolled.  Only 14 keeps are ever legal under R3
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

from core.dice import DiceSource, RandomDice
from core.engine import IllegalAction, TableGame, check_action, check_seat

Hand = tuple[int, int, int, int]
Keep = tuple[int, ...]

N_DICE = 4
TARGET = 20
RED, BLUE = 0, 1
SEAT_NAMES = ("Red", "Blue")
MIN_PLAYERS, MAX_PLAYERS = 2, 8


def canonical(dice: Iterable[int]) -> tuple[int, ...]:
    """The canonical form of a multiset of dice: values high to low."""
    return tuple(sorted((int(d) for d in dice), reverse=True))


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


# Every hand (126 multisets) and every keep R3 allows anywhere (14 of them), each
# written high to low.  Their order (ascending multisets) numbers hands and actions
# everywhere: tables, observations' embeddings and trained policies rely on it.
HANDS: tuple[Hand, ...] = tuple(canonical(c) for c in itertools.combinations_with_replacement(range(1, 7), N_DICE))
HAND_INDEX: dict[Hand, int] = {h: i for i, h in enumerate(HANDS)}
KEEPS: tuple[Keep, ...] = tuple(
    canonical(k)
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
    """The dice rerolled when ``action`` is played from ``hand`` (high to low)."""
    return canonical((Counter(hand) - Counter(KEEPS[action])).elements())


def action_for_reroll(hand: Sequence[int], reroll: Sequence[int]) -> int:
    """The action that rerolls exactly the dice values ``reroll`` from ``hand``.

    Raises ``IllegalAction`` if those dice are not in the hand or the move breaks R2-R4.
    """
    hand, reroll = canonical(hand), canonical(reroll)
    if not is_submultiset(reroll, hand):
        raise IllegalAction(f"cannot reroll {_fmt(reroll)}: the hand {_fmt(hand)} does not hold those dice")
    keep = canonical((Counter(hand) - Counter(reroll)).elements())
    if not reroll:
        raise IllegalAction("you must reroll at least one die (R2)")
    if keep not in KEEP_INDEX or KEEP_INDEX[keep] not in legal_keeps(hand):
        raise IllegalAction(f"cannot keep {_fmt(keep)} and reroll {_fmt(reroll)}: {explain_illegal(hand, keep)}")
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
    return (
        f"rerolling {N_DICE - n} {dice} needs the kept dice to sum to at least {MIN_KEPT_SUM[n]} (R3), "
        f"they sum to {sum(keep)}"
    )


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


@dataclass(frozen=True)
class Turn:
    """One turn as it happened: who, what they kept, what they rolled, the new hand."""

    seat: int
    kept: Keep
    rolled: tuple[int, ...]
    hand: Hand
    won: bool


class Game420(TableGame):
    """A game of 420 among ``n_players`` (R1-R7), as a state machine that stops
    only where the player to move has a real choice (``core.engine``).

    :meth:`apply` plays the index of a keep in ``KEEPS`` for the player to move,
    then every turn with a single legal move (first rolls, R1; resets, R4; hands
    with nothing R3 lets them keep), until the next choice or the end.  Chance
    comes only from ``dice``.  Seats are 0..n-1 clockwise; with two players seat 0
    is Red and moves first (R6).  With more, Player 1 is drawn from ``dice``
    unless ``first_player`` is given (R7).  ``events`` records every turn.
    """

    def __init__(self, n_players: int = 2, dice: DiceSource | None = None, first_player: int | None = None):
        if isinstance(n_players, bool) or not isinstance(n_players, int) or not MIN_PLAYERS <= n_players <= MAX_PLAYERS:
            raise ValueError(f"420 is played by {MIN_PLAYERS} to {MAX_PLAYERS} players, got {n_players!r}")
        self.n_players = n_players
        self.dice = dice if dice is not None else RandomDice()
        if first_player is None:
            first_player = RED if n_players == 2 else self.dice.draw_seat(n_players)
        self.first_player = first_player = check_seat(first_player, n_players)
        self.hands: list[Optional[Hand]] = [None] * n_players
        self.remaining: list[int] = list(range(n_players))  # players still in, by seat
        self.finish_order: list[int] = []  # round winners, first to last
        self.round_first = first_player
        self._to_move: int = first_player
        self.events: list[dict] = []
        self._emit("start", n_players=n_players, first_player=first_player)
        self._emit("round", first_player=first_player, players=list(self.remaining))
        self._play_forced_turns()

    # --- state -------------------------------------------------------------
    @property
    def is_over(self) -> bool:
        return len(self.remaining) == 1

    @property
    def current_player(self) -> int | None:
        """The seat to move (it has a real choice), or None once the game is over."""
        return None if self.is_over else self._to_move

    @property
    def loser(self) -> int | None:
        """The last remaining player (R7), once the game is over."""
        return self.remaining[0] if self.is_over else None

    @property
    def winner(self) -> int | None:
        """The first player to make 20 (with two players, the winner of the game)."""
        return self.finish_order[0] if self.finish_order else None

    @property
    def history(self) -> list[Turn]:
        """Every turn played, in order."""
        return [
            Turn(e["seat"], e["keep"], e["rolled"], e["hand"], e["won"]) for e in self.events if e["type"] == "roll"
        ]

    def hand(self, seat: int) -> Optional[Hand]:
        return self.hands[seat]

    def legal_actions(self) -> list[int]:
        """Legal keeps for the player to move; empty once the game is over."""
        if self.is_over:
            return []
        return self._legal(self._to_move)

    def _legal(self, seat: int) -> list[int]:
        hand = self.hands[seat]  # canonical already
        return [REROLL_ALL] if hand is None else list(_legal_keeps(hand))

    @property
    def winners(self) -> list[int]:
        """The seats that made 20 and left the table (``finish_order``)."""
        return self.finish_order

    # --- moves -------------------------------------------------------------
    def apply(self, action: int) -> None:
        """Play the choice of the player to move (keep ``KEEPS[action]``, reroll the
        rest), then every forced turn up to the next choice or the end."""
        if self.is_over:
            raise IllegalAction("the game is over: no move is legal")
        legal = self.legal_actions()
        action = check_action(action)
        if action not in legal:
            hand = self.hands[self._to_move]
            keep = KEEPS[action] if 0 <= action < N_ACTIONS else None
            why = (
                f"action must be an integer in 0..{N_ACTIONS - 1}"
                if keep is None
                else explain_illegal(hand, keep)
                if keep_allowed(keep) and is_submultiset(keep, hand)
                else f"the hand {format_hand(hand)} does not hold {_fmt(keep)}"
            )
            raise IllegalAction(
                f"illegal move {action!r} for {self.seat_name(self._to_move)}: {why}; "
                f"legal: {[describe_action(a, hand) for a in legal]}"
            )
        self._turn(action, forced=None)
        self._play_forced_turns()

    def _play_forced_turns(self) -> None:
        """Play every turn that has a single legal move, until a choice or the end."""
        while not self.is_over:
            hand = self.hands[self._to_move]
            legal = self._legal(self._to_move)
            if len(legal) > 1:
                return
            why = "first" if hand is None else "reset" if must_reset(hand) else "no_keep"
            self._turn(legal[0], forced=why)

    def _turn(self, action: int, forced: str | None) -> None:
        seat = self._to_move
        before = self.hands[seat]
        kept = KEEPS[action]
        rolled = self.dice.roll(N_DICE - len(kept))
        hand: Hand = canonical((*kept, *rolled))  # type: ignore[assignment]
        self.hands[seat] = hand
        won = is_win(hand)
        self._emit("roll", seat=seat, before=before, keep=kept, rolled=tuple(rolled), hand=hand, forced=forced, won=won)
        if won:
            self._finish_round(seat)
        else:
            self._to_move = self._next_in(seat)

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
        self._emit("round_won", seat=winner, place=len(self.finish_order), remaining=list(self.remaining))
        if self.is_over:
            self._emit("game_end", loser=self.loser, finish_order=list(self.finish_order))
            return
        self.round_first = self._next_in(self.round_first)
        self._to_move = self.round_first
        self.hands = [None] * self.n_players
        self._emit("round", first_player=self.round_first, players=list(self.remaining))

    def _emit(self, kind: str, **fields) -> None:
        self.events.append({"type": kind, **fields})

    def seat_name(self, seat: int) -> str:
        return seat_name(seat, self.n_players)

    def __repr__(self) -> str:
        return f"<Game420 {self.n_players} players, to move {self.current_player}, hands {self.hands}>"


def check_options(**options) -> dict:
    """420 has no game options: any given is refused."""
    if options:
        raise ValueError(f"420 has no option {', '.join(sorted(options))}")
    return {}


def seat_name(seat: int, n_players: int) -> str:
    """Red and Blue with two players (R6), else Player 1..N."""
    return SEAT_NAMES[seat] if n_players == 2 else f"Player {seat + 1}"


def describe_action(action: int, hand: Sequence[int] | None) -> str:
    """Human wording of a move, e.g. 'keep 6-6, reroll 1-5'."""
    if hand is None:
        return "roll all four"
    return f"keep {_fmt(KEEPS[action])}, reroll {_fmt(reroll_of(hand, action))}"
