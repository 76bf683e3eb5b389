"""Rules engine for Pig, rules P1-P4 of ``games/pig/rules.md``.

Plain Python: no gymnasium, no torch.  The engine follows ``core.engine``'s
interface: it stops only where the player to move has a real choice.  The
first roll of every turn is played by the engine itself (the project's
decision: holding a turn total of 0 only passes the turn), so a player is
asked only with a turn total above 0, and then both ``ROLL`` and ``HOLD`` are
legal.  The game ends the moment the mover's score plus turn total reaches the
goal (P2): the total is banked and that player wins, without a hold.

Actions are numbered as in OpenSpiel's ``pig``: ``ROLL = 0``, ``HOLD = 1``.
"""

from __future__ import annotations

import copy
from typing import Any, Optional

from core.dice import DiceSource, RandomDice
from core.engine import IllegalAction, check_action, check_count, check_seat

ROLL, HOLD = 0, 1
N_ACTIONS = 2
ACTION_NAMES = ("roll", "hold")
MIN_PLAYERS, MAX_PLAYERS = 2, 8
DEFAULT_GOAL, MIN_GOAL, MAX_GOAL = 100, 1, 1000
DEFAULT_FACES, MIN_FACES, MAX_FACES = 6, 2, 20
BUST = 1  # P1: the face that ends the turn and loses the turn total


def check_options(n_players: Any = 2, goal: Any = DEFAULT_GOAL, faces: Any = DEFAULT_FACES) -> tuple[int, int, int]:
    """P4: (n_players, goal, faces), each checked, or ValueError in one line."""
    if isinstance(n_players, bool) or not isinstance(n_players, int) or not MIN_PLAYERS <= n_players <= MAX_PLAYERS:
        raise ValueError(f"Pig is played by {MIN_PLAYERS} to {MAX_PLAYERS} players, got {n_players!r}")
    goal = check_count(goal, MIN_GOAL, MAX_GOAL, "goal")
    faces = check_count(faces, MIN_FACES, MAX_FACES, "faces")
    return n_players, goal, faces


def reaches_goal(score: int, turn_total: int, goal: int) -> bool:
    """P2: the mover wins as soon as score + turn total reaches the goal."""
    return score + turn_total >= goal


def legal_actions(turn_total: int) -> list[int]:
    """P1 and the project decision: with a turn total above 0 both moves are legal;
    at 0 only a roll (the engine plays it itself)."""
    return [ROLL, HOLD] if turn_total > 0 else [ROLL]


def explain_illegal(action: int, turn_total: int) -> str:
    """Why ``action`` is not allowed with ``turn_total``, in the words of the rules."""
    if not 0 <= action < N_ACTIONS:
        return f"an action is 0 (roll) or 1 (hold), got {action}"
    if action == HOLD and turn_total == 0:
        return "you cannot hold with a turn total of 0: it would only pass the turn (project decision)"
    return "that move is legal"


class PigGame:
    """A game of Pig among ``n_players`` (P1-P4), as a state machine that stops only
    where the player to move has a real choice (``core.engine``).

    Seats are 0..n-1 in play order; ``first_player`` (0 by default, P3) starts.
    ``scores[seat]`` are the banked scores, ``turn_total`` the mover's unbanked
    points.  Chance comes only from ``dice``.  ``events`` records every roll, bust,
    hold and the win.
    """

    def __init__(
        self,
        n_players: int = 2,
        dice: DiceSource | None = None,
        first_player: int | None = 0,
        goal: int = DEFAULT_GOAL,
        faces: int = DEFAULT_FACES,
    ):
        self.n_players, self.goal, self.faces = check_options(n_players, goal, faces)
        self.dice = dice if dice is not None else RandomDice()
        self.first_player = check_seat(0 if first_player is None else first_player, self.n_players)
        self.scores = [0] * self.n_players
        self.turn_total = 0
        self.winner: Optional[int] = None
        self._to_move = self.first_player
        self.events: list[dict] = []
        self._emit("start", n_players=self.n_players, first_player=self.first_player, goal=self.goal, faces=self.faces)
        self._play_forced()

    # --- state -------------------------------------------------------------
    @property
    def is_over(self) -> bool:
        return self.winner is not None

    @property
    def current_player(self) -> Optional[int]:
        """The seat to move (it has a real choice), or None once the game is over."""
        return None if self.is_over else self._to_move

    def legal_actions(self) -> list[int]:
        """Roll and hold for the player to move (the turn total is above 0); [] once over."""
        return [] if self.is_over else legal_actions(self.turn_total)

    def returns(self) -> list[float]:
        """+1 for the winner and -1 for every other seat once over; 0 each before."""
        if not self.is_over:
            return [0.0] * self.n_players
        return [1.0 if seat == self.winner else -1.0 for seat in range(self.n_players)]

    def outcome(self, seat: int) -> Optional[float]:
        """+1 if ``seat`` won, -1 if another seat did, None while the game is open."""
        if not self.is_over:
            return None
        return 1.0 if seat == self.winner else -1.0

    def clone(self, dice: Any = None) -> "PigGame":
        """An independent copy; it shares only the dice source, or uses ``dice`` instead."""
        return copy.deepcopy(self, {id(self.dice): dice if dice is not None else self.dice})

    # --- moves -------------------------------------------------------------
    def apply(self, action: int) -> None:
        """Play ``ROLL`` or ``HOLD`` for the player to move, then every step without a
        choice (the first roll of the next turn) up to the next choice or the end."""
        if self.is_over:
            raise IllegalAction("the game is over: no move is legal")
        action = check_action(action)
        if action not in self.legal_actions():
            raise IllegalAction(
                f"illegal move {action!r} for {seat_name(self._to_move)}: {explain_illegal(action, self.turn_total)}"
            )
        if action == ROLL:
            self._roll(forced=False)
        else:
            self._hold()
        self._play_forced()

    def _play_forced(self) -> None:
        """The decision: a turn total of 0 (a new turn) is always rolled by the engine."""
        while not self.is_over and self.turn_total == 0:
            self._roll(forced=True)

    def _roll(self, forced: bool) -> None:
        """P1: a 1 loses the turn total and ends the turn; any other face adds to it (P2: maybe winning)."""
        seat = self._to_move
        (value,) = self.dice.roll(1, self.faces)
        if value == BUST:
            lost, self.turn_total = self.turn_total, 0
            self._emit("bust", seat=seat, value=value, lost=lost, forced=forced)
            self._to_move = (seat + 1) % self.n_players
            return
        self.turn_total += value
        self._emit("roll", seat=seat, value=value, turn_total=self.turn_total, forced=forced)
        if reaches_goal(self.scores[seat], self.turn_total, self.goal):
            self.scores[seat] += self.turn_total
            self.turn_total = 0
            self.winner = seat
            self._emit("win", seat=seat, score=self.scores[seat], goal=self.goal)

    def _hold(self) -> None:
        """P1: bank the turn total; the next seat's turn starts."""
        seat = self._to_move
        banked, self.turn_total = self.turn_total, 0
        self.scores[seat] += banked
        self._emit("hold", seat=seat, banked=banked, score=self.scores[seat])
        self._to_move = (seat + 1) % self.n_players

    def _emit(self, kind: str, **fields) -> None:
        self.events.append({"type": kind, **fields})

    def seat_name(self, seat: int) -> str:
        return seat_name(seat)

    def __repr__(self) -> str:
        return (
            f"<PigGame {self.n_players} players, goal {self.goal}, scores {self.scores}, "
            f"to move {self.current_player}, turn total {self.turn_total}>"
        )


def seat_name(seat: int) -> str:
    return f"Player {seat + 1}"


def describe_action(action: int) -> str:
    return ACTION_NAMES[action]
