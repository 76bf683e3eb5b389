"""420's events as text: what happened at the table, in the rules' words."""

from __future__ import annotations

from typing import Optional, Sequence

from core.narrate import Narrator, dice_text, fit, plural
from games.dice420 import game as g420


def hand_total(hand: Optional[Sequence[int]]) -> str:
    """A 420 hand with its total, e.g. '6-6-5-1 (18)'."""
    return f"{dice_text(hand)} ({sum(hand)})" if hand is not None else "(not rolled yet)"


class Narrator420(Narrator):
    def seat_name(self, seat: int) -> str:
        return g420.seat_name(seat, self.n_players)

    def line(self, e: dict) -> Optional[str]:
        kind = e["type"]
        if kind == "start":
            if self.n_players == 2:
                return None
            return fit(f"{self.who(e['first_player'])} starts the first round", "(drawn at random).")
        if kind == "round":
            if self.n_players == 2:
                return None
            *others, last = [self.seat_name(s) for s in e["players"]]
            return fit(
                "New round among",
                *(f"{name}," for name in others),
                f"{last};",
                f"{self.who(e['first_player'])} starts.",
            )
        if kind == "roll":
            return self._roll(e)
        if kind == "round_won":
            if self.n_players == 2:
                return None
            left = len(e["remaining"])
            return fit(
                f"{self.who(e['seat'])} made 20 and is out,", f"place {e['place']};", f"{plural(left, 'player')} left."
            )
        if kind == "game_end":
            return self._end(e)
        return None

    def _roll(self, e: dict) -> str:
        who, before, hand = self.who(e["seat"]), e["before"], e["hand"]
        result = f"-> {hand_total(hand)}" + ("  = 20!" if e["won"] else "")
        forced = e["forced"]
        if forced == "first":
            return fit(f"{who} rolls all four (first turn, R1)", result)
        if forced == "reset":
            return fit(f"{who}: {hand_total(before)} is over 20,", "rerolls all four (R4)", result)
        if forced == "no_keep":
            return fit(f"{who}: nothing in {hand_total(before)}", "may be kept (R3),", "rerolls all four", result)
        if e["keep"]:
            move = (f"kept {dice_text(e['keep'])},", f"rolled {dice_text(e['rolled'])}")
        else:
            move = ("rerolled all four,", f"rolled {dice_text(e['rolled'])}")
        return fit(who, *move, result)

    def _end(self, e: dict) -> str:
        loser = e["loser"]
        if self.n_players == 2:
            winner = e["finish_order"][0]
            if self.you is None:
                return f"{self.who(winner)} wins."
            if winner == self.you:
                return fit(f"{self.who(winner)} made 20:", "you win!")
            return fit(
                f"{self.who(winner)} made 20:", f"{self.labels[winner] or self.seat_name(winner)} wins,", "you lose."
            )
        text = f"{self.who(loser)} is the last player left and loses."
        if self.you is None:
            return fit(text)
        return fit(text, "You lose." if loser == self.you else "You do not lose: you win!")
