"""The one interface every rules engine follows, and the one game loop over it.

An engine is a state machine in the style of OpenSpiel's ``State``:

* ``n_players``; ``current_player`` (the seat to move, ``None`` once over);
* ``legal_actions()``: the actions of the seat to move (empty once over);
* ``apply(action)``: plays the action, then every step that needs no choice
  (chance, first rolls, forced rerolls, a follower's last roll, ...) until the
  next real choice or the end, so a player is only ever asked when it has one;
* ``is_over``; ``returns()``: +1 for every seat that did not lose and -1 for the
  loser once the game is over, 0 for everyone before;
* ``outcome(seat)``: +1 once ``seat`` is sure not to lose (it has left the table
  as a winner), -1 if it lost, ``None`` while its fate is open;
* ``clone()``: an independent copy;
* ``events``: what happened, as dicts with a ``"type"``, in order; the
  narration of each game (``core.narrate`` and each game's ``narrate``) turns them into text.

Chance comes only from the injected dice source (``core.dice``).  Dice are
written high to low in both games (``(6, 6, 5, 1)``, ``(4, 2, 1)``).

:func:`play_out` is the one loop that asks each seat's agent to move; envs,
matches and the terminal game all use it.
"""

from __future__ import annotations

import copy
from typing import Any, Callable, Optional, Protocol, Sequence

import numpy as np


class IllegalAction(ValueError):
    """An action the rules do not allow now; the message says why, in the rules' words."""


class Game(Protocol):
    n_players: int
    events: list[dict]

    @property
    def current_player(self) -> Optional[int]: ...

    @property
    def is_over(self) -> bool: ...

    def legal_actions(self) -> list[int]: ...

    def apply(self, action: int) -> Any: ...

    def returns(self) -> list[float]: ...

    def outcome(self, seat: int) -> Optional[float]: ...

    def clone(self) -> "Game": ...


class Codec(Protocol):
    """How a decision is shown to an agent (``games.dice420.codec``, ``games.dice421.codec``)."""

    def observe(self, game: Any, seat: int) -> np.ndarray: ...

    def legal_mask(self, actions: Sequence[int]) -> np.ndarray: ...

    def mask(self, game: Any) -> np.ndarray: ...


class TableGame:
    """What every engine's state shares once the rules have said who left and who lost.

    A subclass keeps ``n_players``, ``dice``, ``winners`` (the seats that have left
    the table as winners, first to last), ``loser`` (``None`` until the end) and
    ``is_over``.
    """

    n_players: int
    winners: list[int]
    loser: Optional[int]

    def returns(self) -> list[float]:
        """+1 for every seat that did not lose, -1 for the loser; 0 each before the end."""
        if not self.is_over:
            return [0.0] * self.n_players
        return [-1.0 if seat == self.loser else 1.0 for seat in range(self.n_players)]

    def outcome(self, seat: int) -> Optional[float]:
        """+1 once ``seat`` has left as a winner (it cannot lose), -1 if it lost, None while open."""
        if seat in self.winners:
            return 1.0
        return -1.0 if self.loser == seat else None

    def clone(self, dice: Any = None):
        """An independent copy; it shares only the dice source, or uses ``dice`` instead."""
        return copy.deepcopy(self, {id(self.dice): dice if dice is not None else self.dice})


def check_seat(seat: Any, n_players: int, what: str = "first_player") -> int:
    """A seat 0..n_players-1 (an integer, not a bool), or ValueError naming ``what``."""
    if isinstance(seat, (bool, np.bool_)) or not isinstance(seat, (int, np.integer)) or not 0 <= seat < n_players:
        raise ValueError(f"{what} must be a seat 0..{n_players - 1}, got {seat!r}")
    return int(seat)


def check_count(value: Any, low: int, high: int, what: str) -> int:
    """A whole number in low..high (not a bool), or ValueError naming ``what``."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) or not low <= value <= high:
        raise ValueError(f"{what} must be a whole number in {low}..{high}, got {value!r}")
    return int(value)


EventHook = Callable[[dict], None]


def check_action(action: Any) -> int:
    """``action`` as a Python int: ints and numpy integers only (not bools, floats or strings)."""
    if isinstance(action, (bool, np.bool_)) or not isinstance(action, (int, np.integer)):
        if isinstance(action, np.ndarray) and action.shape == () and np.issubdtype(action.dtype, np.integer):
            return int(action)
        raise IllegalAction(f"an action is an integer, got {action!r}")
    return int(action)


def act(agent: Any, game: Game, codec: Codec) -> int:
    """Ask ``agent`` for the move of the seat to move; its answer must be an integer."""
    return check_action(agent.act(codec.observe(game, game.current_player), codec.mask(game)))


def play_out(
    game: Game,
    agents: Sequence[Any],
    codec: Codec,
    on_event: Optional[EventHook] = None,
    until: Optional[Callable[[Game], bool]] = None,
) -> Game:
    """Play ``game`` on, asking ``agents[seat]`` (anything with ``act(obs, action_mask)``)
    for each move, until the game is over or ``until(game)`` holds (checked before
    every move).  ``on_event`` sees every event of the game, in order, as it
    happens (those from before the call first).  Returns the game.
    """
    shown = 0

    def flush() -> None:
        nonlocal shown
        if on_event is not None:
            for event in game.events[shown:]:
                on_event(event)
        shown = len(game.events)

    flush()
    while not game.is_over and not (until is not None and until(game)):
        game.apply(act(agents[game.current_player], game, codec))
        flush()
    return game
