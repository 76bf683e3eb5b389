"""One game at the web table: a :class:`play.session.Session` plus what a page and
the records need (every action and die, the person's moves, the narration so far).

Everything game-specific sits in two small "rules" adapters, chosen by the
game's engine class (not by its name: ``games`` is the only place that knows
names).  They read a move the way the terminal does (``play.cli420`` /
``play.cli421`` ``parse_command``, whose errors are the engines' and the
terminal's words), list the person's legal moves and every choice of dice with
the reason it is refused, describe the table, and snapshot a decision for the
coach.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Optional, Sequence

import games
from games.dice420 import game as g420
from games.dice421 import game as g421
from core.dice import RandomDice
from core.engine import IllegalAction
from play import check_table, derive_seed
from play.session import Session
from play.web import coach


class MoveError(ValueError):
    """A move the page may not send now: ``status`` is the HTTP status (409 out of turn, 422 illegal)."""

    def __init__(self, message: str, status: int = 422):
        super().__init__(message)
        self.status = status


def jsonable(value: Any) -> Any:
    """Events as JSON: tuples become lists (the engines use plain ints, bools, None and strings)."""
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if hasattr(value, "item") and callable(value.item):  # a numpy scalar
        return value.item()
    return value


def dice_key(dice: Sequence[int]) -> str:
    """The key of a multiset of dice in ``choices``: high to low joined by '-' ('' for none)."""
    return "-".join(map(str, sorted(dice, reverse=True)))


def sub_multisets(hand: Sequence[int]) -> list[tuple[int, ...]]:
    """Every distinct sub-multiset of ``hand`` (high to low), from none to all."""
    out = {()}
    for d in hand:
        out |= {tuple(sorted(s + (d,), reverse=True)) for s in out}
    return sorted(out, key=lambda s: (len(s), [-v for v in s]))


def _minus(hand: Sequence[int], part: Sequence[int]) -> tuple[int, ...]:
    return tuple(sorted((Counter(hand) - Counter(part)).elements(), reverse=True))


# ------------------------------------------------------------------------ the rules


class Rules420:
    """420: the person's choice is which dice to reroll (R2-R4)."""

    has_stop = False

    def hand(self, game: g420.Game420, seat: int):
        return game.hands[seat]

    def describe(self, game, action: int) -> str:
        return g420.describe_action(action, game.hands[game.current_player])

    def choices(self, game, seat: int) -> dict[str, dict]:
        hand = game.hands[seat]
        out = {}
        for reroll in sub_multisets(hand):
            try:
                action = g420.action_for_reroll(hand, reroll)
                out[dice_key(reroll)] = {"ok": True, "action": action, "text": g420.describe_action(action, hand)}
            except IllegalAction as e:
                out[dice_key(reroll)] = {"ok": False, "why": str(e)}
        return out

    def stop(self, game, seat: int, narrator) -> Optional[dict]:
        return None

    def precheck(self, game, action: int, narrator) -> None:
        """Refuse an action index in the terminal's words where the engine's would be terser."""

    def parse(self, game, seat: int, narrator, reroll=None, keep=None, stop=False) -> int:
        from play import cli420

        hand = game.hands[seat]
        if stop:
            raise MoveError("420 has no stop: reroll at least one die (R2)")
        if keep is not None:
            return cli420.parse_command("keep " + " ".join(map(str, keep)), hand).action
        if len(reroll) > g420.N_DICE:
            return cli420.parse_command(" ".join(map(str, reroll)), hand).action  # the terminal's message
        return g420.action_for_reroll(hand, reroll)

    def table(self, game: g420.Game420, narrator, seat: int, steps: Sequence[dict]) -> dict:
        seats = []
        for s in range(game.n_players):
            if s in game.finish_order:
                status = f"made 20, place {game.finish_order.index(s) + 1}"
            elif game.loser == s:
                status = "loses"
            else:
                status = "to move" if game.current_player == s else "in"
            hand = game.hands[s]
            seats.append({"seat": s, "hand": list(hand) if hand is not None else None,
                          "total": sum(hand) if hand is not None else None, "status": status,
                          "in": s in game.remaining and not game.is_over})
        return {"kind": "420", "seats": seats, "remaining": list(game.remaining),
                "finish_order": list(game.finish_order), "target": g420.TARGET}

    # the coach ------------------------------------------------------------------
    def coach_unavailable(self, game, options: dict) -> Optional[str]:
        if game.n_players != 2:
            return "the exact coach knows two-player games only"
        return None

    def snapshot(self, game, seat: int) -> dict:
        return {"hand": list(game.hands[seat]), "opponent": list(game.hands[1 - seat])}

    def values(self, snap: dict, options: dict):
        return coach.values420(snap["hand"], snap["opponent"])

    def describe_snapshot(self, snap: dict, action: int) -> str:
        return g420.describe_action(action, tuple(snap["hand"]))

    def position_text(self, snap: dict) -> str:
        h, o = snap["hand"], snap["opponent"]
        return f"your {g420.format_hand(h)} ({sum(h)}) against {g420.format_hand(o)} ({sum(o)})"


class _ExplainShim:
    """What ``TerminalGame421.explain_illegal`` reads from its terminal game: ``who``."""

    def __init__(self, narrator):
        self.who = narrator.who


class Rules421:
    """421: the person's choice is STOP (the leader after roll 1 or 2) or the dice to keep."""

    has_stop = True

    def hand(self, game: g421.Game421, seat: int):
        return game.dice_in_hand if game.current_player == seat else None

    def describe(self, game, action: int) -> str:
        return self._describe(game.dice_in_hand, action)

    @staticmethod
    def _describe(hand, action: int) -> str:
        """The words of ``play.cli421.legal_moves_text``."""
        hand = g421.canonical(hand)
        if action == g421.STOP:
            return f"stop with {g421.hand_str(hand)}"
        keep = g421.keep_for_action(action)
        if not keep:
            return "reroll all three"
        return f"keep {g421.hand_str(keep)}, reroll {g421.hand_str(_minus(hand, keep))}"

    def choices(self, game, seat: int) -> dict[str, dict]:
        from play import cli421

        hand = game.dice_in_hand
        legal = set(game.legal_actions())
        out = {}
        for reroll in sub_multisets(hand):
            kept = _minus(hand, reroll)
            try:
                action = cli421.parse_command("keep " + " ".join(map(str, kept)), hand).action
                if action not in legal:
                    raise IllegalAction(game._illegal_message(action, sorted(legal)))
                out[dice_key(reroll)] = {"ok": True, "action": action, "text": self._describe(hand, action)}
            except IllegalAction as e:
                out[dice_key(reroll)] = {"ok": False, "why": str(e)}
        return out

    def stop(self, game, seat: int, narrator) -> dict:
        if g421.STOP in game.legal_actions():
            return {"ok": True, "action": g421.STOP, "text": self._describe(game.dice_in_hand, g421.STOP)}
        return {"ok": False, "why": self._why_not_stop(game, narrator)}

    def precheck(self, game, action: int, narrator) -> None:
        if action == g421.STOP and action not in game.legal_actions():
            raise MoveError(self._why_not_stop(game, narrator))

    def _why_not_stop(self, game, narrator) -> str:
        from play.cli421 import TerminalGame421

        legal = game.legal_actions()
        error = IllegalAction(game._illegal_message(g421.STOP, legal))
        return TerminalGame421.explain_illegal(_ExplainShim(narrator), game, g421.STOP, error)

    def parse(self, game, seat: int, narrator, reroll=None, keep=None, stop=False) -> int:
        from play import cli421

        hand = game.dice_in_hand
        if stop:
            if g421.STOP not in game.legal_actions():
                raise MoveError(self._why_not_stop(game, narrator))
            return g421.STOP
        if keep is not None:
            return cli421.parse_command("keep " + " ".join(map(str, keep)), hand).action
        if not reroll:  # rerolling nothing is keeping everything: the terminal's "keep" message
            return cli421.parse_command("keep " + " ".join(map(str, hand)), hand).action
        return cli421.parse_command(" ".join(map(str, reroll)), hand).action

    def table(self, game: g421.Game421, narrator, seat: int, steps: Sequence[dict]) -> dict:
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
            seats.append({"seat": s, "tokens": game.tokens[s], "status": status,
                          "leader": s == game.leader and not game.is_over,
                          "hand": list(game.dice_in_hand) if game.current_player == s else None})
        rounds = _rounds421(steps)
        return {
            "kind": "421", "seats": seats, "pot": game.pot, "initial_pot": game.initial_pot,
            "phase": game.phase, "leader": game.leader, "round_order": list(game.round_order),
            "to_move": game.current_player, "rolls_used": game.rolls_used, "rolls_allowed": game.rolls_allowed,
            "leader_rolls": game.leader_rolls,
            "hands_played": [{"seat": s, "hand": list(h), "rolls": r} for s, h, r in game.hands_played],
            "round": rounds[-1] if rounds else None,
            "previous_round": rounds[-2] if len(rounds) > 1 else None,
        }

    # the coach ------------------------------------------------------------------
    def coach_unavailable(self, game, options: dict) -> Optional[str]:
        if game.n_players != 2:
            return "the exact coach knows two-player games only (the three-player game is not solved)"
        if options.get("pot", 0) > coach.MAX_COACH_POT:
            return (f"the exact coach solves pots up to {coach.MAX_COACH_POT} tokens here "
                    f"(pot {options['pot']} would take minutes)")
        return None

    def snapshot(self, game, seat: int) -> dict:
        follower = seat != game.leader
        return {
            "pot": game.initial_pot, "tokens": game.tokens[seat], "leader": not follower,
            "rolls_used": game.rolls_used, "rolls_allowed": game.rolls_allowed,
            "hand": list(game.dice_in_hand),
            "leader_hand": list(dict((s, h) for s, h, _ in game.hands_played)[game.leader]) if follower else None,
        }

    def values(self, snap: dict, options: dict):
        return coach.values421(snap["pot"], snap["tokens"], snap["leader"], snap["rolls_used"],
                               snap["rolls_allowed"], snap["hand"], snap["leader_hand"])

    def describe_snapshot(self, snap: dict, action: int) -> str:
        return self._describe(snap["hand"], action)

    def position_text(self, snap: dict) -> str:
        role = "leading" if snap["leader"] else f"following {g421.hand_str(snap['leader_hand'])}"
        return (f"your {g421.hand_str(snap['hand'])} after roll {snap['rolls_used']} of "
                f"{snap['rolls_allowed']}, {role}, holding {snap['tokens']} of {snap['pot']} tokens")


def _rounds421(steps: Sequence[dict]) -> list[dict]:
    """The last two rounds as they happened: every roll (charge, discharge, RAMPO), stop and
    exchange, each with the narrator's line."""
    starts = [i for i, s in enumerate(steps) if s["event"]["type"] == "round"][-2:]
    rounds = []
    for n, start in enumerate(starts):
        end = starts[n + 1] if n + 1 < len(starts) else len(steps)
        head = steps[start]
        entries, result = [], None
        for step in steps[start + 1:end]:
            e, kind = step["event"], step["event"]["type"]
            if kind in ("roll", "reroll", "rampo_roll", "stop", "turn_end"):
                entries.append({"seat": e["seat"], "kind": kind, "hand": e["hand"], "keep": e.get("keep"),
                                "text": step["text"]})
            elif kind in ("rampo", "take", "give", "leave", "charge_end", "game_end") and step["text"]:
                entries.append({"seat": None, "kind": kind, "hand": None, "keep": None, "text": step["text"]})
                if kind in ("take", "give"):
                    result = step["text"]
        rounds.append({"phase": head["event"]["phase"], "order": head["event"]["order"],
                       "leader": head["event"].get("leader"), "title": head["text"], "entries": entries,
                       "result": result})
    return rounds


RULES = {g420.Game420: Rules420(), g421.Game421: Rules421()}


def rules_for(spec: games.GameSpec):
    return RULES[spec.engine]


# ------------------------------------------------------------------------ recording


class RecordingDice:
    """A dice source that remembers every die and seat it gives."""

    def __init__(self, inner):
        self.inner = inner
        self.dice: list[int] = []
        self.seats: list[int] = []

    def roll(self, n: int) -> tuple[int, ...]:
        values = self.inner.roll(n)
        self.dice.extend(int(v) for v in values)
        return values

    def draw_seat(self, n_players: int) -> int:
        seat = int(self.inner.draw_seat(n_players))
        self.seats.append(seat)
        return seat


class RecordingAgent:
    """A bot that logs each of its moves as ``[seat, action]``."""

    def __init__(self, agent, seat: int, log: list):
        self.agent, self.seat, self.log = agent, seat, log
        self.name = getattr(agent, "name", "bot")

    def act(self, obs, action_mask) -> int:
        action = int(self.agent.act(obs, action_mask))
        self.log.append([self.seat, action])
        return action


# ------------------------------------------------------------------------ a game


@dataclass
class WebGame:
    """One person's game: the session, its seed and bots, and everything that happened."""

    id: str
    player: str
    spec: games.GameSpec
    seat: int
    bots: list  # bot name by seat, None at the person's
    options: dict
    seed: int
    session: Session
    dice: RecordingDice
    actions: list  # [seat, action] in order, every seat's
    moves: list = field(default_factory=list)  # the person's: {"action", "snapshot"}
    steps: list = field(default_factory=list)  # {"text", "event"} for every event so far
    started: float = field(default_factory=time.time)
    lock: threading.RLock = field(default_factory=threading.RLock)

    @property
    def rules(self):
        return rules_for(self.spec)

    @property
    def game(self):
        return self.session.game

    @property
    def n_players(self) -> int:
        return self.session.game.n_players

    @classmethod
    def start(cls, game_id: str, player: str, spec: games.GameSpec, bot_names: Sequence[str], seat: int,
              seed: int, options: dict, agent_for) -> "WebGame":
        """A new game: ``bot_names`` one per other seat clockwise from ``seat``; bot ``i`` is
        ``agent_for(name, derive_seed(seed, 1 + i))`` and the dice ``RandomDice(seed)``, as
        ``python -m play GAME --seed SEED --seat ...`` seeds them (so the terminal replays it)."""
        n = len(bot_names) + 1
        by_seat: list = [None] * n
        agents_by_seat: list = [None] * n
        actions: list = []
        for i, name in enumerate(bot_names):
            s = (seat + 1 + i) % n
            by_seat[s] = name
            agent = agent_for(name, derive_seed(seed, 1 + i))
            check_table(agent, name, "bots", n, options)
            agents_by_seat[s] = RecordingAgent(agent, s, actions)
        dice = RecordingDice(RandomDice(seed))
        labels = ["" if s == seat else by_seat[s] for s in range(n)]
        session = Session(spec.name, agents_by_seat, seat, dice, labels=labels, **options)
        web = cls(game_id, player, spec, seat, by_seat, dict(options), seed, session, dice, actions)
        web._collect()
        return web

    def _collect(self) -> list[dict]:
        """The new events as steps: each with the narrator's text (None for a silent one)."""
        new = []
        for event in self.session.new_events():
            new.append({"text": self.session.narrator.line(event), "event": jsonable(event)})
        self.steps.extend(new)
        return new

    @property
    def bot_names(self) -> list[str]:
        """The bots clockwise from the person's seat (the order they were asked for)."""
        n = self.n_players
        return [self.bots[(self.seat + 1 + i) % n] for i in range(n - 1)]

    # --- moving --------------------------------------------------------------------
    def play(self, *, action=None, reroll=None, keep=None, stop=False, turn=None) -> list[dict]:
        """Play the person's move (one of the four ways to name it); returns the new steps."""
        session = self.session
        if session.over:
            raise MoveError("the game is over: no move is legal", 409)
        if turn is not None and turn != len(self.moves):
            raise MoveError(f"out of turn: this move was sent for move {turn}, the game is at move "
                            f"{len(self.moves)} (reload the game)", 409)
        if not session.waiting:  # cannot happen between requests: the bots move inside submit
            raise MoveError(f"it is not your turn: {session.narrator.who(session.game.current_player)} is to move", 409)
        game = session.game
        try:
            if action is None:
                action = self.rules.parse(game, self.seat, session.narrator, reroll=reroll, keep=keep, stop=stop)
            else:
                self.rules.precheck(game, action, session.narrator)
            snapshot = self.rules.snapshot(game, self.seat) if self.coach_unavailable() is None else None
            self.actions.append([self.seat, action])  # before the bots' replies, which submit plays
            played = len(game.events)
            try:
                session.submit(action)
            except BaseException:
                if len(game.events) == played:  # refused before it was played: nothing changed
                    self.actions.pop()
                raise
        except MoveError:
            raise
        except ValueError as e:  # IllegalAction and the terminal's reading errors
            raise MoveError(str(e)) from None
        self.moves.append({"action": int(action), "snapshot": snapshot})
        return self._collect()

    # --- reading -------------------------------------------------------------------
    def coach_unavailable(self) -> Optional[str]:
        return self.rules.coach_unavailable(self.game, self.options)

    def result_text(self) -> Optional[str]:
        """Who won, plainly, once the game is over: the narrator's last line."""
        if not self.game.is_over:
            return None
        return next(s["text"] for s in reversed(self.steps) if s["event"]["type"] == "game_end")

    def state(self, *, log: bool = True) -> dict:
        session, game, rules = self.session, self.game, self.rules
        narrator = session.narrator
        waiting = session.waiting
        seats = []
        for s in range(self.n_players):
            seats.append({"seat": s, "name": narrator.seat_name(s), "who": narrator.who(s),
                          "bot": self.bots[s], "you": s == self.seat})
        state = {
            "id": self.id,
            "game": self.spec.name,
            "title": self.spec.title,
            "players": self.n_players,
            "seat": self.seat,
            "seats": seats,
            "bots": self.bot_names,
            "options": self.options,
            "seed": self.seed,
            "player": self.player,
            "to_move": game.current_player,
            "waiting": waiting,
            "turn": len(self.moves),
            "over": game.is_over,
            "outcome": session.outcome(),
            "result": self.result_text(),
            "loser": game.loser,
            "table": rules.table(game, narrator, self.seat, self.steps),
            "hand": list(rules.hand(game, self.seat)) if waiting else None,
            "legal": [{"action": a, "text": rules.describe(game, a)} for a in session.legal_actions()],
            "choices": rules.choices(game, self.seat) if waiting else {},
            "stop": rules.stop(game, self.seat, narrator) if waiting else None,
            "has_stop": rules.has_stop,
            "coach": self.coach_unavailable() is None,
            "coach_why_not": self.coach_unavailable(),
            "events": len(self.steps),
        }
        if log:
            state["log"] = [s["text"] for s in self.steps if s["text"] is not None]
        return state

    def coach(self) -> dict:
        """The exact value of the current position and its moves, and a review of the person's moves."""
        why = self.coach_unavailable()
        if why is not None:
            return {"available": False, "why": why, "turn": len(self.moves), "position": None, "review": []}
        rules = self.rules
        position = None
        if self.session.waiting:
            position = figures(rules, rules.snapshot(self.game, self.seat), self.options)
        review = []
        for number, move in enumerate(self.moves):
            snap = move["snapshot"]
            if snap is None:
                continue
            f = figures(rules, snap, self.options)
            made = next(m for m in f["moves"] if m["action"] == move["action"])
            best = f["moves"][0]
            review.append({"move": number + 1, "position": f["position"], "made": made, "best": best,
                           "cost_pp": made["cost_pp"], "value": f["value"]})
        total = sum(r["cost_pp"] for r in review)
        return {"available": True, "why": None, "turn": len(self.moves), "position": position, "review": review,
                "total_cost_pp": total, "mistakes": sum(1 for r in review if r["cost_pp"] > 0),
                "note": "Exact win probabilities with both players playing optimally from the position on."}


def figures(rules, snap: dict, options: dict) -> dict:
    """The coach's figures at one decision: every legal move, best first, with its cost in pp."""
    value, moves = rules.values(snap, options)
    rows = []
    for m in sorted(moves, key=lambda m: (-m.p, m.action)):
        cost = 100.0 * (value - m.p)
        rows.append({"action": m.action, "text": rules.describe_snapshot(snap, m.action), "p": m.p,
                     "cost_pp": 0.0 if cost < 1e-9 else cost, "best": cost < 1e-9})
    return {"position": rules.position_text(snap), "value": value, "moves": rows, "snapshot": snap}
