"""One game at the web table: a :class:`play.session.Session` plus what a page and
the records need (every action and die, the person's moves, the narration so far).

Everything game-specific sits in the game's adapter, named by its spec
(``GameSpec.web``, ``"games.<folder>.web:WEB"``) and loaded through the registry;
nothing here names a game.  An adapter has:

* ``has_stop`` and ``kind`` (how the page draws the table: a game's own drawing,
  or ``"seats"``, the page's generic one: seats with a score and a line each, the
  dice to show, a figure in the middle, whose turn);
* ``hand(game, seat)``: the dice the person chooses from (None: the moves are
  buttons), ``choice(game, seat, reroll)`` for each choice of dice to reroll (the
  move, or why it is refused), ``stop(game, seat, narrator)``;
* ``describe(game, action)``: a legal move in the game's words; ``parse(game, seat,
  narrator, reroll=, keep=, stop=)`` a move named by dice, ``parse_text(game,
  text)`` one typed as in the terminal (optional), ``precheck(game, action,
  narrator)``; a refused move is a ``ValueError`` with its one line;
* ``table(game, narrator, seat, steps)``: the table as the page draws it, and
  ``fold(view, event)`` (optional) the table after one more event, so the page
  shows each of the bots' moves as it happens; ``turn_title(game, seat)``
  (optional): the line above the person's moves;
* the coach: ``coach_unavailable(game, options)`` (a reason, or None),
  ``snapshot``, ``values``, ``describe_snapshot`` and ``position_text``;
  ``refuse_bot(spec, bot, players, options)`` (optional): why a bot may not sit.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field, fields
from typing import Any, Optional, Sequence

import games
from core.dice import RandomDice
from play import check_table, derive_seed
from play.session import Session
from play.web.coach import NOTE, figures


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


# ------------------------------------------------------------------------ the adapters


def rules_for(spec: games.GameSpec):
    """The game's adapter for the page (``spec.web``, ``"module:attr"``): what it reads,
    lists, draws and coaches (see the module's docstring)."""
    if not spec.web:
        raise ValueError(f"{spec.name} declares no adapter for the web page")
    return games.load(spec.web)


def choices(rules, game, seat: int) -> dict[str, dict]:
    """Every choice of dice to reroll from the person's hand, keyed by ``dice_key``, with
    the move it makes or why it is refused ({} for a game whose moves are no dice)."""
    hand = rules.hand(game, seat)
    if hand is None or not hasattr(rules, "choice"):
        return {}
    return {dice_key(reroll): rules.choice(game, seat, reroll) for reroll in sub_multisets(hand)}


# ------------------------------------------------------------------------ recording


class RecordingDice:
    """A dice source that remembers every die and seat it gives."""

    def __init__(self, inner):
        self.inner = inner
        self.dice: list[int] = []
        self.seats: list[int] = []

    def roll(self, n: int, *faces: int) -> tuple[int, ...]:
        values = self.inner.roll(n, *faces)
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
    steps: list = field(default_factory=list)  # {"text", "event"} for every event so far (+ "view")
    view: Optional[dict] = None  # the table after the last step, for an adapter that folds events
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
    def start(
        cls,
        game_id: str,
        player: str,
        spec: games.GameSpec,
        bot_names: Sequence[str],
        seat: int,
        seed: int,
        options: dict,
        agent_for,
    ) -> "WebGame":
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
        """The new events as steps: each with the narrator's text (None for a silent one) and,
        where the adapter folds events into its table, the table after it (``view``)."""
        new = []
        fold = getattr(self.rules, "fold", None)
        for event in self.session.new_events():
            step = {"text": self.session.narrator.line(event), "event": jsonable(event)}
            if fold is not None:
                self.view = fold(self.view, step["event"])
                step["view"] = self.view
            new.append(step)
        self.steps.extend(new)
        return new

    def become(self, other: "WebGame") -> None:
        """Take on everything of ``other`` (the same game rebuilt from the records) but this
        game's lock, so requests waiting on it find the game as the records have it."""
        for f in fields(self):
            if f.name != "lock":
                setattr(self, f.name, getattr(other, f.name))

    @property
    def bot_names(self) -> list[str]:
        """The bots clockwise from the person's seat (the order they were asked for)."""
        n = self.n_players
        return [self.bots[(self.seat + 1 + i) % n] for i in range(n - 1)]

    # --- moving --------------------------------------------------------------------
    def play(self, *, action=None, reroll=None, keep=None, stop=False, text=None, turn=None) -> list[dict]:
        """Play the person's move (one of the five ways to name it); returns the new steps."""
        session = self.session
        if session.over:
            raise MoveError("the game is over: no move is legal", 409)
        if turn is not None and turn != len(self.moves):
            raise MoveError(
                f"out of turn: this move was sent for move {turn}, the game is at move "
                f"{len(self.moves)} (reload the game)",
                409,
            )
        if not session.waiting:  # cannot happen between requests: the bots move inside submit
            raise MoveError(f"it is not your turn: {session.narrator.who(session.game.current_player)} is to move", 409)
        game = session.game
        try:
            if text is not None:
                parse_text = getattr(self.rules, "parse_text", None)
                if parse_text is None:
                    raise MoveError(f"{self.spec.name} takes no move in words here: {self.spec.how_to_move}")
                action = parse_text(game, text)
            elif action is None:
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
        return next((s["text"] for s in reversed(self.steps) if s["text"]), None)

    def state(self, *, log: bool = True) -> dict:
        session, game, rules = self.session, self.game, self.rules
        narrator = session.narrator
        waiting = session.waiting
        hand = rules.hand(game, self.seat) if waiting else None
        turn_title = getattr(rules, "turn_title", None)
        seats = []
        for s in range(self.n_players):
            seats.append(
                {
                    "seat": s,
                    "name": narrator.seat_name(s),
                    "who": narrator.who(s),
                    "bot": self.bots[s],
                    "you": s == self.seat,
                }
            )
        state = {
            "id": self.id,
            "game": self.spec.name,
            "title": self.spec.title,
            "players": self.n_players,
            "seat": self.seat,
            "seats": seats,
            "bots": self.bot_names,
            "options": self.options,
            "seed": self.seed if game.is_over else None,  # it predicts every roll to come: shown once over
            "player": self.player,
            "to_move": game.current_player,
            "waiting": waiting,
            "turn": len(self.moves),
            "over": game.is_over,
            "outcome": session.outcome(),
            "result": self.result_text(),
            "loser": getattr(game, "loser", None),  # the one who lost, where a game has one
            "table": rules.table(game, narrator, self.seat, self.steps),
            "hand": list(hand) if hand is not None else None,
            "legal": [{"action": a, "text": rules.describe(game, a)} for a in session.legal_actions()],
            "choices": choices(rules, game, self.seat) if waiting else {},
            "turn_title": turn_title(game, self.seat) if waiting and turn_title is not None else None,
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
            review.append(
                {
                    "move": number + 1,
                    "position": f["position"],
                    "made": made,
                    "best": best,
                    "cost_pp": made["cost_pp"],
                    "value": f["value"],
                }
            )
        total = sum(r["cost_pp"] for r in review)
        return {
            "available": True,
            "why": None,
            "turn": len(self.moves),
            "position": position,
            "review": review,
            "total_cost_pp": total,
            "mistakes": sum(1 for r in review if r["cost_pp"] > 0),
            "note": NOTE,
        }
