"""420 on the web page (``play.web``): the adapter ``WEB`` named by ``SPEC.web``.

The person's choice is which dice to reroll (R2-R4).  The adapter reads a move
named by dice values, says why a choice of dice is refused (the engine's words,
and the terminal's where a line is misread), describes the table and gives the
exact coach's figures for two players (``solver.solve()``).  It sits in the
game's folder and imports nothing from the front-ends; a refused move is a
``ValueError`` (``IllegalAction``) with its one line.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Sequence

from core.engine import IllegalAction
from games.dice420 import game as g
from games.dice420.view import read_keep, read_reroll  # the terminal's words for a refused move


@dataclass(frozen=True)
class MoveValue:
    action: int
    p: float  # the mover's exact chance to win after this move, both playing optimally on


def values(hand: Sequence[int], opponent: Sequence[int]) -> tuple[float, list[MoveValue]]:
    """(the position's value, each legal keep's value) for the mover holding ``hand``
    against ``opponent`` in two-player 420: ``solve().q[k, o]`` is the mover's chance
    to win by keeping ``KEEPS[k]`` against the opponent's hand ``o``; the position is
    worth ``solve().value[h, o]``, the best of them."""
    from games.dice420 import solver

    sol = solver.solve()
    h = g.HAND_INDEX[g.canonical(hand)]
    o = g.HAND_INDEX[g.canonical(opponent)]
    moves = [MoveValue(a, float(sol.q[a, o])) for a in g.legal_keeps(g.HANDS[h])]
    return float(sol.value[h, o]), moves


class Web420:
    """What ``play.web.table`` asks a game (see there)."""

    has_stop = False
    kind = "420"  # how the page draws the table (static/app.js)

    def hand(self, game: g.Game420, seat: int):
        return game.hands[seat]

    def describe(self, game, action: int) -> str:
        return g.describe_action(action, game.hands[game.current_player])

    def choice(self, game, seat: int, reroll: Sequence[int]) -> dict:
        """Rerolling ``reroll`` from the person's hand: the move, or why it is refused."""
        hand = game.hands[seat]
        try:
            action = g.action_for_reroll(hand, reroll)
            return {"ok": True, "action": action, "text": g.describe_action(action, hand)}
        except IllegalAction as e:
            return {"ok": False, "why": str(e)}

    def stop(self, game, seat: int, narrator) -> Optional[dict]:
        return None

    def precheck(self, game, action: int, narrator) -> None:
        """Nothing to add: the engine's refusal says it."""

    def parse(self, game, seat: int, narrator, reroll=None, keep=None, stop=False) -> int:
        hand = game.hands[seat]
        if stop:
            raise ValueError("420 has no stop: reroll at least one die (R2)")
        if keep is not None:
            return read_keep(hand, keep)
        return read_reroll(hand, reroll)

    def table(self, game: g.Game420, narrator, seat: int, steps: Sequence[dict]) -> dict:
        seats = []
        for s in range(game.n_players):
            if s in game.finish_order:
                status = f"made 20, place {game.finish_order.index(s) + 1}"
            elif game.loser == s:
                status = "loses"
            else:
                status = "to move" if game.current_player == s else "in"
            hand = game.hands[s]
            seats.append(
                {
                    "seat": s,
                    "hand": list(hand) if hand is not None else None,
                    "total": sum(hand) if hand is not None else None,
                    "status": status,
                    "in": s in game.remaining and not game.is_over,
                }
            )
        return {
            "kind": self.kind,
            "seats": seats,
            "remaining": list(game.remaining),
            "finish_order": list(game.finish_order),
            "target": g.TARGET,
        }

    # the coach ------------------------------------------------------------------
    def coach_unavailable(self, game, options: dict) -> Optional[str]:
        if game.n_players != 2:
            return "the exact coach knows two-player games only"
        return None

    def snapshot(self, game, seat: int) -> dict:
        return {"hand": list(game.hands[seat]), "opponent": list(game.hands[1 - seat])}

    def values(self, snap: dict, options: dict):
        return values(snap["hand"], snap["opponent"])

    def describe_snapshot(self, snap: dict, action: int) -> str:
        return g.describe_action(action, tuple(snap["hand"]))

    def position_text(self, snap: dict) -> str:
        h, o = snap["hand"], snap["opponent"]
        return f"your {g.format_hand(h)} ({sum(h)}) against {g.format_hand(o)} ({sum(o)})"


WEB = Web420()
