"""A game between a person and bots that never blocks: start it, submit the
person's moves, read what happened.

The terminal front-ends are thin loops over a :class:`Session` (print the new
lines, ask for a move when :attr:`Session.waiting`, submit it); a web page can
drive the same object from requests.  The bots move inside :meth:`submit` (and
at the start) through the one game loop, ``core.engine.play_out``, and every
event is narrated by the game's narrator, so no front-end writes game text.
"""

from __future__ import annotations

from typing import Any, Optional, Sequence

import games
from core.dice import DiceSource
from core.engine import IllegalAction, check_action, play_out


class Session:
    """One game of ``game`` with the person in ``seat`` and ``bots`` in the other
    seats: either one per other seat clockwise from the person's, or one entry per
    seat with ``None`` at the person's.  ``labels`` (one per seat) name the
    players in narration; by default the bots' names."""

    def __init__(
        self,
        game: str,
        bots: Sequence[Any],
        seat: int,
        dice: Optional[DiceSource] = None,
        *,
        labels: Optional[Sequence[str]] = None,
        first_player: Optional[int] = None,
        **options,
    ):
        self.spec = games.get(game)
        bots = list(bots)
        if None in bots:
            by_seat = bots  # one entry per seat, None for the person
            if sum(b is None for b in bots) != 1:
                raise ValueError("give one bot per seat but the person's (exactly one None, at the person's seat)")
        else:
            n = len(bots) + 1
            if not 0 <= seat < n:
                raise ValueError(f"seat must be in 0..{n - 1}, got {seat!r}")
            by_seat = [None] * n
            for i, bot in enumerate(bots):
                by_seat[(seat + 1 + i) % n] = bot
        n = len(by_seat)
        self.spec.check_players(n)
        if not 0 <= seat < n or by_seat[seat] is not None:
            raise ValueError(f"seat {seat!r} is not the person's: give the bots of the other seats")
        self.seat = seat
        self.agents = by_seat
        if labels is None:
            labels = [str(getattr(b, "name", "bot")) if b is not None else "" for b in by_seat]
        self.game = self.spec.new_game(n, dice=dice, first_player=first_player, **options)
        self.narrator = self.spec.narrator(n, labels, you=seat)
        self._read = 0  # events already returned by read()
        self._advance()

    # --- reading ---------------------------------------------------------------
    @property
    def waiting(self) -> bool:
        """Whether the game waits for the person's move."""
        return not self.game.is_over and self.game.current_player == self.seat

    @property
    def over(self) -> bool:
        return self.game.is_over

    def legal_actions(self) -> list[int]:
        return self.game.legal_actions() if self.waiting else []

    def outcome(self) -> Optional[float]:
        """+1 once the person cannot lose, -1 if they lost, None while open."""
        return self.game.outcome(self.seat)

    def new_events(self) -> list[dict]:
        """The events since the last call (the game's own records)."""
        events = self.game.events[self._read :]
        self._read = len(self.game.events)
        return events

    def read(self) -> list[str]:
        """What happened since the last call, in words (the narrator's lines)."""
        return self.narrator.lines(self.new_events())

    def state(self) -> dict:
        """A plain summary: whose turn, the person's legal actions, the outcome."""
        return {
            "game": self.spec.name,
            "n_players": self.game.n_players,
            "seat": self.seat,
            "to_move": self.game.current_player,
            "waiting": self.waiting,
            "legal_actions": self.legal_actions(),
            "over": self.over,
            "outcome": self.outcome(),
            "returns": self.game.returns(),
            "events": len(self.game.events),
        }

    # --- moving ----------------------------------------------------------------
    def submit(self, action: Any) -> None:
        """Play the person's move, then the bots' until the person's next move or the end.

        Raises ``IllegalAction`` (with the rules' reason) and changes nothing if the
        move is not legal now, or if it is not the person's turn.
        """
        if self.over:
            raise IllegalAction("the game is over")
        if not self.waiting:
            raise IllegalAction(f"it is not your turn: {self.narrator.who(self.game.current_player)} is to move")
        self.game.apply(check_action(action))
        self._advance()

    def _advance(self) -> None:
        play_out(self.game, self.agents, self.spec.codec, until=lambda game: game.current_player == self.seat)
