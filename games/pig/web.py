"""Pig on the web page (``play.web``): the adapter ``WEB`` named by ``SPEC.web``.

The person's choice is to roll or to bank (hold) the turn total.  The table is
drawn by the page's generic view (``kind "seats"``): each seat's score against
the goal, a line of what it did last, the die it rolled, the turn total in the
middle and whose turn it is.  The view is folded from the engine's events, one
at a time (:meth:`WebPig.fold`), so the page shows each of the bots' rolls as it
happens and the table after the last event is the table of the game.

The coach is exact for two players (``solver.solve``): the value of rolling
and of banking at (own score, opponent's score, turn total).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Optional, Sequence

from games.pig import game as g
from games.pig import view as words

MAX_COACH_GOAL = 100  # the solver takes about 2 s at goal 100 and grows as goal**3


@dataclass(frozen=True)
class MoveValue:
    action: int
    p: float  # the mover's exact chance to win after this move, both playing optimally on


def values(
    score: int, opponent: int, turn_total: int, goal: int = g.DEFAULT_GOAL, faces: int = g.DEFAULT_FACES
) -> tuple[float, list[MoveValue]]:
    """(the position's value, the value of rolling and of banking) for the mover with
    ``score`` and ``turn_total`` against ``opponent`` in two-player Pig, both playing
    optimally from there on (``solver.solve``'s V and U[a, b] = V[a, b, 0])."""
    from games.pig import solver

    sol = solver.solve(goal, faces)
    v, i, j, k = sol.value, score, opponent, turn_total
    if not (0 <= i < goal and 0 <= j < goal and 1 <= k and i + k < goal):
        raise ValueError(f"not a decision of Pig to {goal}: score {i}, opponent {j}, turn total {k}")
    roll = (1.0 - v[j, i, 0] + sum(1.0 if i + k + r >= goal else v[i, j, k + r] for r in range(2, faces + 1))) / faces
    hold = 1.0 - v[j, i + k, 0]
    return float(v[i, j, k]), [MoveValue(g.ROLL, float(roll)), MoveValue(g.HOLD, float(hold))]


def _describe(action: int, turn_total: int) -> str:
    return "roll" if action == g.ROLL else f"bank {turn_total}"


class WebPig:
    """What ``play.web.table`` asks a game (see there)."""

    has_stop = False
    kind = "seats"  # the page's generic table: seats, scores, dice, whose turn

    def hand(self, game: g.PigGame, seat: int):
        return None  # no dice to choose from: the moves are buttons

    def describe(self, game, action: int) -> str:
        return _describe(action, game.turn_total)

    def turn_title(self, game: g.PigGame, seat: int) -> str:
        k = game.turn_total
        return (
            f"Your turn: turn total {k}; banked, your score would be "
            f"{game.scores[seat] + k} of {game.goal}. Roll or bank?"
        )

    def stop(self, game, seat: int, narrator) -> Optional[dict]:
        return None

    def precheck(self, game, action: int, narrator) -> None:
        """Nothing to add: the engine's refusal says it."""

    def parse(self, game, seat: int, narrator, reroll=None, keep=None, stop=False) -> int:
        raise ValueError('Pig has no dice to choose: send "action" 0 (roll) or 1 (bank), or "text": "roll" or "bank"')

    def parse_text(self, game, text: str) -> int:
        """A move typed as in the terminal: "roll" or "r", "bank" or "b" (or "hold")."""
        return words.parse(text, game)

    # the table ---------------------------------------------------------------------
    def blank(self, n_players: int, goal: int) -> dict:
        seats = [
            {
                "seat": s,
                "score": "0",
                "detail": f"of {goal}",
                "line": "",
                "status": "",
                "dice": None,
                "won": False,
                "lost": False,
            }
            for s in range(n_players)
        ]
        return {
            "kind": self.kind,
            "seats": seats,
            "to_move": None,
            "goal": goal,
            "centre": {"label": "turn total", "value": "0", "small": f"first to {goal} wins"},
        }

    def fold(self, view: Optional[dict], event: dict) -> dict:
        """The table after ``event`` (the engine's, as JSON) from the table before it."""
        kind = event["type"]
        if kind == "start":
            view = self.blank(event["n_players"], event["goal"])
            view["to_move"] = event["first_player"]
            return view
        view = copy.deepcopy(view)
        seats, s = view["seats"], event["seat"]
        n = len(seats)
        if kind in ("roll", "bust"):
            if view.get("roller") != s:  # another player rolls: the last one's die goes
                for other in seats:
                    other["dice"] = None
            seats[s]["dice"] = [event["value"]]
            view["roller"] = s
        if kind == "roll":
            seats[s]["line"] = f"turn total {event['turn_total']}"
            view["centre"]["value"] = str(event["turn_total"])
            view["to_move"] = s
        elif kind == "bust":
            seats[s]["line"] = f"rolled a 1: lost {event['lost']}" if event["lost"] else "rolled a 1"
            view["centre"]["value"] = "0"
            view["to_move"] = (s + 1) % n
        elif kind == "hold":
            seats[s]["score"] = str(event["score"])
            seats[s]["line"] = f"banked {event['banked']}"
            view["centre"]["value"] = "0"
            view["to_move"] = (s + 1) % n
        elif kind == "win":
            seats[s]["score"] = str(event["score"])
            seats[s]["line"] = f"reached {event['score']}"
            view["centre"]["value"] = "0"
            view["to_move"] = None
            for seat in seats:
                seat["won"], seat["lost"] = seat["seat"] == s, seat["seat"] != s
                seat["status"] = "wins" if seat["won"] else "loses"
        for seat in seats:
            if not (seat["won"] or seat["lost"]):
                seat["status"] = "to move" if seat["seat"] == view["to_move"] else ""
        return view

    def table(self, game: g.PigGame, narrator, seat: int, steps: Sequence[dict]) -> dict:
        view = None
        for step in steps:
            view = self.fold(view, step["event"])
        return view if view is not None else self.blank(game.n_players, game.goal)

    # the coach ---------------------------------------------------------------------
    def coach_unavailable(self, game, options: dict) -> Optional[str]:
        if game.n_players != 2:
            return "the exact coach knows two-player games only"
        if game.goal > MAX_COACH_GOAL:
            return f"the exact coach solves goals up to {MAX_COACH_GOAL} here (goal {game.goal} would take too long)"
        return None

    def refuse_bot(self, spec, bot: str, players: int, options: dict) -> Optional[str]:
        """The optimal bot is solved for the default goal and die only."""
        if bot == "optimal" and (options.get("goal"), options.get("faces")) != (g.DEFAULT_GOAL, g.DEFAULT_FACES):
            return f"the optimal {spec.name} bot plays goal {g.DEFAULT_GOAL} with a {g.DEFAULT_FACES}-faced die only"
        return None

    def snapshot(self, game, seat: int) -> dict:
        return {
            "score": game.scores[seat],
            "opponent": game.scores[1 - seat],
            "turn_total": game.turn_total,
            "goal": game.goal,
            "faces": game.faces,
        }

    def values(self, snap: dict, options: dict):
        return values(snap["score"], snap["opponent"], snap["turn_total"], snap["goal"], snap["faces"])

    def describe_snapshot(self, snap: dict, action: int) -> str:
        return _describe(action, snap["turn_total"])

    def position_text(self, snap: dict) -> str:
        return (
            f"your score {snap['score']} against {snap['opponent']}, turn total "
            f"{snap['turn_total']}, first to {snap['goal']}"
        )


WEB = WebPig()
