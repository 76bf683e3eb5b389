"""Pig's narrator: one line per roll, bust, hold and win (``core.narrate``'s protocol)."""

from __future__ import annotations

from typing import Optional

from core.narrate import Narrator, fit
from games.pig import game as g


class NarratorPig(Narrator):
    """Seats are Player 1..N (``g.seat_name``)."""

    def seat_name(self, seat: int) -> str:
        return g.seat_name(seat)

    def line(self, e: dict) -> Optional[str]:
        kind = e["type"]
        if kind == "start":
            return fit(f"First to {e['goal']} wins;", f"{self.who(e['first_player'])} starts.")
        who = self.who(e["seat"])
        if kind == "roll":
            return fit(f"{who} rolls {e['value']}:", f"turn total {e['turn_total']}")
        if kind == "bust":
            return fit(f"{who} rolls a 1", f"and loses {e['lost']}" if e["lost"] else "and scores nothing")
        if kind == "hold":
            return fit(f"{who} holds:", f"{e['banked']} banked,", f"score {e['score']}")
        if kind == "win":
            end = "" if self.you is None else " You win!" if e["seat"] == self.you else " You lose."
            return fit(f"{who} reaches {e['score']}", f"and wins.{end}")
        return None
