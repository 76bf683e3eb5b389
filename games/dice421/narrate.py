"""421's events as text: what happened at the table, in the rules' words."""

from __future__ import annotations

from typing import Optional, Sequence

from core.narrate import Narrator, dice_text, fit, plural
from games.dice421 import game as g421


def tokens_text(tokens: Sequence[int], names: Sequence[str], pot: Optional[int] = None, out: Sequence[int] = ()) -> str:
    parts = [f"{names[s]} {t}" + (" (out)" if s in out else "") for s, t in enumerate(tokens)]
    return "Tokens: " + ", ".join(parts) + (f" | pot {pot}" if pot is not None else "")


class Narrator421(Narrator):
    def __init__(self, n_players: int, labels: Optional[Sequence[str]] = None, you: Optional[int] = None):
        super().__init__(n_players, labels, you)
        self.charge_round = self.discharge_round = self.rampo_count = 0
        self.round_hands: list[tuple[int, tuple]] = []
        self.round_leader: Optional[int] = None

    def seat_name(self, seat: int) -> str:
        return f"P{seat + 1}"

    def short(self, seat: int) -> str:
        return self.seat_name(seat) + (" (you)" if seat == self.you else "")

    def tokens_line(self, tokens: Sequence[int], pot: Optional[int] = None, out: Sequence[int] = ()) -> str:
        return tokens_text(tokens, [self.short(s) for s in range(self.n_players)], pot, out)

    def line(self, e: dict) -> Optional[str]:
        kind, phase, who = e["type"], e["phase"], self.who
        if kind == "start":
            return None
        if kind == "round":
            self.round_hands, self.rampo_count = [], 0
            order = ", ".join(self.seat_name(s) for s in e["order"])
            if phase == g421.CHARGE:
                self.charge_round += 1
                return f"Charge round {self.charge_round} (order {order}):"
            self.discharge_round += 1
            self.round_leader = e["leader"]
            return fit(f"Discharge round {self.discharge_round}: {who(e['leader'])} leads", f"(order {order}).")
        if kind == "roll" and phase == g421.CHARGE:
            self.round_hands.append((e["seat"], e["hand"]))
            return f"  {who(e['seat'])} rolls {dice_text(e['hand'])}"
        if kind == "roll":
            return f"  {who(e['seat'])} roll 1: {dice_text(e['hand'])}"
        if kind == "reroll":
            keep, rolled = e["keep"], e["rolled"]
            move = (
                (f"kept {dice_text(keep)},", f"rolled {dice_text(rolled)}")
                if keep
                else ("rerolled all three,", f"rolled {dice_text(rolled)}")
            )
            return fit(f"  {who(e['seat'])} roll {e['roll']}:", *move, f"-> {dice_text(e['hand'])}", indent="      ")
        if kind == "stop":
            n = plural(e["rolls"], "roll")
            return fit(
                f"  {who(e['seat'])} stops after {n} with {dice_text(e['hand'])}:",
                f"the others must make exactly {n}.",
                indent="      ",
            )
        if kind == "turn_end":
            self.round_hands.append((e["seat"], e["hand"]))
            if e["seat"] == self.round_leader:
                if e["rolls"] == g421.MAX_ROLLS:
                    return fit(
                        f"  {who(e['seat'])} plays {dice_text(e['hand'])} after all 3 rolls:",
                        "the others must make exactly 3 rolls.",
                        indent="      ",
                    )
                return None  # the stop line said it
            return f"  {who(e['seat'])} plays {dice_text(e['hand'])}."
        if kind == "rampo":
            self.rampo_count += 1
            order = ", ".join(who(s) for s in e["order"])
            again = "again " if self.rampo_count > 1 else ""
            return fit(f"  Tie for the lowest hand {again}->", f"RAMPO, one roll each: {order}", indent="      ")
        if kind == "rampo_roll":
            return f"    RAMPO: {who(e['seat'])} rolls {dice_text(e['hand'])}"
        if kind == "take":
            return self._take(e)
        if kind == "charge_end":
            return f"End of the charge. {who(e['last_taker'])} took the last tokens."
        if kind == "give":
            return self._give(e)
        if kind == "leave":
            if e["seat"] == self.you:
                return f"{who(e['seat'])} has no tokens left: you are out of the game, a winner!"
            return f"{who(e['seat'])} has no tokens left and leaves the game, a winner."
        if kind == "game_end":
            loser = e["loser"]
            held = f"{who(loser)} holds all {e['tokens'][loser]} tokens and loses the game."
            if self.you is None:
                return fit(f"Game over: {held}")
            return fit(f"Game over: {held}", "You lose." if loser == self.you else "You win!")
        return None

    def _take(self, e: dict) -> str:
        taker = self.who(e["seat"])
        if e["rampo"]:
            what = fit(f"  -> {taker} loses the RAMPO", "and takes 1 token from the pot.", indent="     ")
        else:
            _, high = max(self.round_hands, key=lambda sh: g421.hand_rank(sh[1]))
            left = f"; only {e['amount']} left" if e["amount"] < e["due"] else ""
            what = fit(
                f"  -> {taker} has the lowest hand and takes {plural(e['amount'], 'token')} from the pot",
                f"(the highest hand, {dice_text(high)}, is worth {e['due']}{left}).",
                indent="     ",
            )
        return f"{what}\n  {self.tokens_line(e['tokens'], e['pot'])}"

    def _give(self, e: dict) -> str:
        giver, receiver = self.who(e["giver"]), self.who(e["receiver"])
        hands = dict(self.round_hands)
        given = f"{plural(e['amount'], 'token')}"
        if e["rampo"]:
            what = fit(f"  -> {receiver} loses the RAMPO:", f"{giver} gives {receiver} {given}.", indent="     ")
        else:
            short = f" (all it held; {e['due']} due)" if e["amount"] < e["due"] else ""
            what = fit(
                f"  -> highest hand {dice_text(hands[e['giver']])} (worth {e['due']}) by {giver},",
                f"lowest {dice_text(hands[e['receiver']])} by {receiver}:",
                f"{self.seat_name(e['giver'])} gives {self.seat_name(e['receiver'])} {given}{short}.",
                indent="     ",
            )
        return f"{what}\n  {self.tokens_line(e['tokens'])}"
