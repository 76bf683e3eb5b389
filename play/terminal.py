"""A person against bots in the terminal, for any game that declares a view.

A thin loop over :class:`play.session.Session`: it prints what the game's narrator
says, shows the table and reads a move at the person's turn.  Everything about
the game's words comes from its view module (``GameSpec.view``):

* ``intro(game, seat, who, labels) -> str``: the opening lines of a game (``labels``:
  each seat's player as named at the table, "" for the person's);
* ``board(game, seat, who) -> list[str]``: the table as the person in ``seat`` sees it,
  before each of their moves and once the game is over;
* ``prompt(game, seat, first) -> str``: the question at the person's turn (``first``:
  the first question of the game, for a longer hint);
* ``parse(line, game, who) -> int``: the action a line names (``ValueError`` with advice
  when it names none, ``IllegalAction`` with the rules' reason when the rules forbid it);
* ``legal_text(game) -> str`` and ``HELP``: the legal moves, and how to type a move;
* optionally ``tally(mine, theirs, bots) -> str``: the running score of a series
  (by default "you 2, hold20 1").

``who(seat)`` names a seat as the narrator does ("Player 2 (hold20)", "you").  The
command words ("q", "?", "legal") are read here, before the view sees a line.
Input and output are injectable (``input_fn``, ``out``) so tests can drive a whole
session; all chance comes from one dice source, so a seed replays.
"""

from __future__ import annotations

import sys
from typing import Callable, Iterable, Optional, Sequence, TextIO

import games
from core.dice import DiceSource
from core.engine import IllegalAction
from core.narrate import wrap
from play.prompt import Command, QuitGame, ask_move, command_word, play_series
from play.session import Session

InputFn = Callable[[str], str]


class TerminalGame:
    """A series of games of ``game`` between a person and one bot per other seat."""

    def __init__(
        self,
        game: str,
        opponents: Sequence,
        dice: DiceSource,
        *,
        opponent_names=None,
        seat: str | int = "random",
        input_fn: InputFn = input,
        out: Optional[TextIO] = None,
        **options,
    ):
        self.spec = games.get(game)
        if not self.spec.view:
            raise ValueError(f"{self.spec.name} declares no view to play it in the terminal")
        self.view = games.load(self.spec.view)
        self.opponents = list(opponents) if isinstance(opponents, (list, tuple)) else [opponents]
        self.n_players = self.spec.check_players(len(self.opponents) + 1)
        names = opponent_names if opponent_names is not None else [getattr(a, "name", "bot") for a in self.opponents]
        names = [names] if isinstance(names, str) else list(names)
        names = names * len(self.opponents) if len(names) == 1 else names
        if len(names) != len(self.opponents):
            raise ValueError(f"{len(self.opponents)} opponents but {len(names)} names")
        seat = self._seat(seat)
        self.names, self.seat_option, self.dice, self.options = names, seat, dice, options
        self.input_fn = input_fn
        self.out = out if out is not None else sys.stdout
        self.score = [0, 0]  # person, bots
        self.session: Optional[Session] = None
        self.asked = False

    def _seat(self, seat: str | int) -> str | int:
        """ "random", a seat 0..n-1, or a seat's name at this table ("red")."""
        names = [self.spec.narrator(self.n_players).seat_name(s).lower() for s in range(self.n_players)]
        if isinstance(seat, str) and seat.lower() in names:
            return names.index(seat.lower())
        if not (
            seat == "random" or (isinstance(seat, int) and not isinstance(seat, bool) and 0 <= seat < self.n_players)
        ):
            raise ValueError(
                f"seat must be 'random', a seat 0..{self.n_players - 1} or its name ({', '.join(names)}), got {seat!r}"
            )
        return seat

    def say(self, text: str = "") -> None:
        print(wrap(text), file=self.out, flush=True)

    def who(self, seat: int) -> str:
        return self.session.narrator.who(seat)

    def run(self, n_games: int = 1) -> int:
        bots = self.names[0] if len(set(self.names)) == 1 else "the bots"
        tally = getattr(self.view, "tally", None) or (lambda mine, theirs, bots: f"you {mine}, {bots} {theirs}")
        return play_series(
            self.say,
            self.play_game,
            n_games,
            lambda: tally(self.score[0], self.score[1], bots),
            lambda: sum(self.score),
        )

    def play_game(self) -> float:
        """One game to the end; the person's outcome (+1 not losing, -1 losing).  Raises ``QuitGame``."""
        n = self.n_players
        me = self.dice.draw_seat(n) if self.seat_option == "random" else self.seat_option
        bots = [None if s == me else self.opponents[(s - me - 1) % n] for s in range(n)]
        labels = ["" if s == me else self.names[(s - me - 1) % n] for s in range(n)]
        self.session = session = Session(self.spec.name, bots, me, self.dice, labels=labels, **self.options)
        self.say(self.view.intro(session.game, me, self.who, labels))
        self.asked = False  # the first question of a game may carry a longer hint
        while True:
            for line in session.read():
                self.say(line)
            if session.over:
                break
            for line in self.view.board(session.game, me, self.who):
                self.say(line)
            session.submit(self.ask(session.game, me))
        for line in self.view.board(session.game, me, self.who):
            self.say(line)
        outcome = session.outcome()
        self.score[0 if outcome > 0 else 1] += 1
        return outcome

    def ask(self, game, seat: int) -> int:
        """Ask the person for a move until the rules allow it."""

        def parse(line: str) -> int:
            action = self.view.parse(line, game, self.who)
            if action not in game.legal_actions():
                game.clone().apply(action)  # raises IllegalAction with the rules' reason
            return action

        def prompt() -> str:
            first, self.asked = not self.asked, True
            return self.view.prompt(game, seat, first)

        return ask_move(
            self.input_fn,
            self.say,
            prompt,
            lambda line: read_command(line, parse),
            self.view.HELP,
            lambda: self.view.legal_text(game),
            IllegalAction,
        )


def read_command(line: str, parse: Callable[[str], int]) -> Command:
    """A command word ("q", "?", "legal"...) or the move ``parse`` reads in ``line``
    (its ``ValueError`` and ``IllegalAction`` pass through)."""
    command = command_word(line.strip().lower())
    return command if command is not None else Command("move", parse(line))


def play_terminal(
    game: str,
    opponents,
    dice: DiceSource,
    *,
    opponent_names=None,
    seat: str | int = "random",
    games: int = 1,
    input_fn: InputFn = input,
    out: Optional[TextIO] = None,
    **options,
) -> int:
    """Play ``games`` games against ``opponents`` in the terminal; returns the exit code
    (0, also when the person quits or presses Ctrl-C)."""
    terminal = TerminalGame(
        game, opponents, dice, opponent_names=opponent_names, seat=seat, input_fn=input_fn, out=out, **options
    )
    try:
        return terminal.run(games)
    except KeyboardInterrupt:
        terminal.say("\nInterrupted: game abandoned. Bye.")
        return 0
    except QuitGame as stop:  # raised outside a series' own handling
        terminal.say(str(stop))
        return 0


class ScriptedInput:
    """An ``input_fn`` that answers from a list of lines, echoing prompt and answer
    to ``out`` as a terminal would; raises ``EOFError`` when the lines run out."""

    def __init__(self, lines: Iterable[str], out: Optional[TextIO] = None):
        self.lines = list(lines)
        self.out = out
        self.prompts: list[str] = []

    def __call__(self, prompt: str = "") -> str:
        self.prompts.append(prompt)
        if not self.lines:
            if self.out is not None:
                print(prompt, file=self.out)
            raise EOFError
        line = self.lines.pop(0)
        if self.out is not None:
            print(prompt + line, file=self.out)
        return line
