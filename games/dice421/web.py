"""421 on the web page (``play.web``): the adapter ``WEB`` named by ``SPEC.web``.

The person's choice is STOP (the leader after roll 1 or 2) or the dice to keep.
The adapter reads a move named by dice values, says why a choice is refused (the
engine's words, and the terminal's for a misread line or a follower's stop),
describes the table with the last two rounds as they happened, and gives the
exact coach's figures for two players.  It imports nothing from the front-ends;
a refused move is a ``ValueError`` (``IllegalAction``) with its one line.

The coach: the solver's values ``W[t]`` of the leader holding ``t`` tokens give
the value of every final pair of hands of a round (``solver._round_utility``);
the backward expectimax of ``solver._play_round``, kept step by step here
instead of only its maximum, gives the value of each action at each of the
round's decisions: the leader after roll 1 or 2 (STOP or a keep) and the
follower owing one or two more rolls.  The argmax of these values is the
solver's own optimal action (``tests/test_web.py`` checks it).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Optional, Sequence

import numpy as np

from core.engine import IllegalAction
from games.dice421 import game as g
from games.dice421.view import minus, describe, read_keep, read_reroll, why_not_stop  # the terminal's words

# The 421 solver's time grows fast with the pot (pot 15: about 1 s, 30: about 5 s,
# 50: about 40 s): the coach (and the optimal 421 bot on the web) stop here.
MAX_COACH_POT = 30


@dataclass(frozen=True)
class MoveValue:
    action: int
    p: float  # the mover's exact chance to win after this move, both playing optimally on


# --------------------------------------------------------------------------- the adapter


class Web421:
    """What ``play.web.table`` asks a game (see there)."""

    has_stop = True
    kind = "421"  # how the page draws the table (static/app.js)

    def hand(self, game: g.Game421, seat: int):
        return game.dice_in_hand if game.current_player == seat else None

    def describe(self, game, action: int) -> str:
        return describe(game.dice_in_hand, action)

    def choice(self, game, seat: int, reroll: Sequence[int]) -> dict:
        """Rerolling ``reroll`` from the person's dice: the move, or why it is refused."""
        hand = game.dice_in_hand
        try:
            action = read_keep(hand, minus(hand, reroll))
            legal = game.legal_actions()
            if action not in legal:
                raise IllegalAction(game._illegal_message(action, sorted(legal)))
            return {"ok": True, "action": action, "text": describe(hand, action)}
        except IllegalAction as e:
            return {"ok": False, "why": str(e)}

    def stop(self, game, seat: int, narrator) -> dict:
        if g.STOP in game.legal_actions():
            return {"ok": True, "action": g.STOP, "text": describe(game.dice_in_hand, g.STOP)}
        return {"ok": False, "why": why_not_stop(game, narrator.who)}

    def precheck(self, game, action: int, narrator) -> None:
        if action == g.STOP and action not in game.legal_actions():
            raise ValueError(why_not_stop(game, narrator.who))

    def parse(self, game, seat: int, narrator, reroll=None, keep=None, stop=False) -> int:
        hand = game.dice_in_hand
        if stop:
            self.precheck(game, g.STOP, narrator)
            return g.STOP
        if keep is not None:
            return read_keep(hand, keep)
        return read_reroll(hand, reroll)

    def refuse_bot(self, spec, bot: str, players: int, options: dict) -> Optional[str]:
        """Why ``bot`` may not sit at this table on the web (the solver would take minutes)."""
        if spec.bot_players.get(bot) == (2,) and options.get("pot", 0) > MAX_COACH_POT:
            return f"the {bot} {spec.name} bot solves pots up to {MAX_COACH_POT} tokens here"
        return None

    def table(self, game: g.Game421, narrator, seat: int, steps: Sequence[dict]) -> dict:
        seats = []
        for s in range(game.n_players):
            if s in game.winners:
                status = "out, a winner"
            elif game.loser == s:
                status = "loses"
            elif game.current_player == s:
                status = "to move"
            else:
                status = "in"
            seats.append(
                {
                    "seat": s,
                    "tokens": game.tokens[s],
                    "status": status,
                    "leader": s == game.leader and not game.is_over,
                    "hand": list(game.dice_in_hand) if game.current_player == s else None,
                }
            )
        rounds = last_rounds(steps)
        return {
            "kind": self.kind,
            "seats": seats,
            "pot": game.pot,
            "initial_pot": game.initial_pot,
            "phase": game.phase,
            "leader": game.leader,
            "round_order": list(game.round_order),
            "to_move": game.current_player,
            "rolls_used": game.rolls_used,
            "rolls_allowed": game.rolls_allowed,
            "leader_rolls": game.leader_rolls,
            "hands_played": [{"seat": s, "hand": list(h), "rolls": r} for s, h, r in game.hands_played],
            "round": rounds[-1] if rounds else None,
            "previous_round": rounds[-2] if len(rounds) > 1 else None,
        }

    # the coach ------------------------------------------------------------------
    def coach_unavailable(self, game, options: dict) -> Optional[str]:
        if game.n_players != 2:
            return "the exact coach knows two-player games only (the three-player game is not solved)"
        if options.get("pot", 0) > MAX_COACH_POT:
            return (
                f"the exact coach solves pots up to {MAX_COACH_POT} tokens here "
                f"(pot {options['pot']} would take minutes)"
            )
        return None

    def snapshot(self, game, seat: int) -> dict:
        follower = seat != game.leader
        return {
            "pot": game.initial_pot,
            "tokens": game.tokens[seat],
            "leader": not follower,
            "rolls_used": game.rolls_used,
            "rolls_allowed": game.rolls_allowed,
            "hand": list(game.dice_in_hand),
            "leader_hand": list(dict((s, h) for s, h, _ in game.hands_played)[game.leader]) if follower else None,
        }

    def values(self, snap: dict, options: dict):
        return values(
            snap["pot"],
            snap["tokens"],
            snap["leader"],
            snap["rolls_used"],
            snap["rolls_allowed"],
            snap["hand"],
            snap["leader_hand"],
        )

    def describe_snapshot(self, snap: dict, action: int) -> str:
        return describe(snap["hand"], action)

    def position_text(self, snap: dict) -> str:
        role = "leading" if snap["leader"] else f"following {g.hand_str(snap['leader_hand'])}"
        return (
            f"your {g.hand_str(snap['hand'])} after roll {snap['rolls_used']} of "
            f"{snap['rolls_allowed']}, {role}, holding {snap['tokens']} of {snap['pot']} tokens"
        )


def last_rounds(steps: Sequence[dict]) -> list[dict]:
    """The last two rounds as they happened: every roll (charge, discharge, RAMPO), stop and
    exchange, each with the narrator's line."""
    starts = [i for i, s in enumerate(steps) if s["event"]["type"] == "round"][-2:]
    rounds = []
    for n, start in enumerate(starts):
        end = starts[n + 1] if n + 1 < len(starts) else len(steps)
        head = steps[start]
        entries, result = [], None
        for step in steps[start + 1 : end]:
            e, kind = step["event"], step["event"]["type"]
            if kind in ("roll", "reroll", "rampo_roll", "stop", "turn_end"):
                entries.append(
                    {"seat": e["seat"], "kind": kind, "hand": e["hand"], "keep": e.get("keep"), "text": step["text"]}
                )
            elif kind in ("rampo", "take", "give", "leave", "charge_end", "game_end") and step["text"]:
                entries.append({"seat": None, "kind": kind, "hand": None, "keep": None, "text": step["text"]})
                if kind in ("take", "give"):
                    result = step["text"]
        rounds.append(
            {
                "phase": head["event"]["phase"],
                "order": head["event"]["order"],
                "leader": head["event"].get("leader"),
                "title": head["text"],
                "entries": entries,
                "result": result,
            }
        )
    return rounds


WEB = Web421()


# --------------------------------------------------------------------------- the coach


@dataclass(frozen=True)
class _Tables:
    s1: np.ndarray  # [t-1, L]: leader stops on L after 1 roll (the follower then makes 1)
    s2: np.ndarray  # [t-1, L]: ... after 2 rolls
    s3: np.ndarray  # [t-1, L]: the leader ends on L after 3 rolls
    v2: np.ndarray  # [t-1, h]: the leader holding h after roll 2, playing best
    u: np.ndarray  # [t-1, L, F]: the round ends on L (leader) and F (follower)
    g_n2: np.ndarray  # [t-1, L, h]: a follower holding h owing one more roll, playing best


@lru_cache(maxsize=8)
def _tables(pot: int) -> _Tables:
    from games.dice421 import solver as s

    w = s.solve(pot).value  # W[t], indexed by tokens 0..pot
    u = s._round_utility(pot, w, w, w, w)
    s1 = u @ s.FIRST_ROLL
    g_n2, _ = s._follower_step(u, None, 0)
    s2 = g_n2 @ s.FIRST_ROLL
    g2_n3, _ = s._follower_step(g_n2, None, 1)
    s3 = g2_n3 @ s.FIRST_ROLL
    v2, _ = s._leader_step(s2, s3, None, 2)
    tables = _Tables(s1, s2, s3, v2, u, g_n2)
    for a in (s1, s2, s3, v2, g_n2):
        a.setflags(write=False)
    return tables


def values(
    pot: int,
    tokens: int,
    is_leader: bool,
    rolls_used: int,
    rolls_allowed: int,
    hand: Sequence[int],
    leader_hand: Optional[Sequence[int]] = None,
) -> tuple[float, list[MoveValue]]:
    """(the position's value, each legal action's value) for the mover in a two-player
    discharge round of 421 with ``pot`` tokens in all, holding ``tokens`` of them.

    ``leader_hand`` is the leader's final hand when the mover follows."""
    from games.dice421 import solver as s

    if not 1 <= tokens < pot:
        raise ValueError(f"a player in a discharge round holds 1..{pot - 1} tokens, got {tokens}")
    tab = _tables(pot)
    h = g.hand_rank(hand)
    keeps = [a for a in range(1, g.N_ACTIONS) if _holds(hand, g.keep_for_action(a))]
    T = s.T
    if is_leader:
        i = tokens - 1
        if rolls_used == 1:
            stop, after = tab.s1[i, h], tab.v2[i]
        elif rolls_used == 2:
            stop, after = tab.s2[i, h], tab.s3[i]
        else:
            raise ValueError(f"a leader decides after roll 1 or 2, not {rolls_used}")
        moves = [MoveValue(g.STOP, float(stop))]
        moves += [MoveValue(a, float(after @ T[a - 1])) for a in keeps]
    else:
        if leader_hand is None:
            raise ValueError("a follower's position needs the leader's hand")
        i = pot - tokens - 1  # tables are by the leader's tokens
        L = g.hand_rank(leader_hand)
        owed = rolls_allowed - rolls_used
        if owed == 1:
            after = tab.u[i, L]
        elif owed == 2:
            after = tab.g_n2[i, L]
        else:
            raise ValueError(f"a follower owes 1 or 2 more rolls at a decision, not {owed}")
        moves = [MoveValue(a, float(1.0 - after @ T[a - 1])) for a in keeps]
    return max(m.p for m in moves), moves


def _holds(hand: Sequence[int], keep: Sequence[int]) -> bool:
    rest = list(hand)
    for v in keep:
        if v not in rest:
            return False
        rest.remove(v)
    return True
