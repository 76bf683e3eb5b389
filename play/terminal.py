"""A person against bots in the terminal, for any game that declares a view.

A thin loop over :class:`play.session.Session`: it prints what the game's narrator
says, shows the table and reads a move at the person's turn.  Everything about
the game's words comes from its view module (``GameSpec.view``):

* ``intro(n_players, seat, who) -> str``: the opening line of a game;
* ``board(game, who) -> list[str]``: the table as the person sees it;
* ``prompt(game, seat) -> str``: the question at the person's turn;
* ``parse(line, game) -> int``: the action a line names (``ValueError`` with advice
  when it names none, ``IllegalAction`` with the rules' reason when the rules forbid it);
* ``legal_text(game) -> str`` and ``HELP``: the legal moves, and how to type a move.

``who(seat)`` names a seat as the narrator does ("Player 2 (hold20)", "you").
"""

from __future__ import annotations

import sys
from typing import Callable, Optional, Sequence, TextIO

import games
from core.dice import DiceSource
from core.engine import IllegalAction
from core.narrate import wrap
from play.prompt import Command, QuitGame, ask_move, command_word, play_series
from play.session import Session

InputFn = Callable[[str], str]


class TerminalGame:
    """A series of games of ``game`` between a person and one bot per other seat."""

    def __init__(self, game: str, opponents: Sequence, dice: DiceSource, *, opponent_names=None,
                 seat: str | int = "random", input_fn: InputFn = input, out: Optional[TextIO] = None, **options):
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
        if not (seat == "random" or (isinstance(seat, int) and not isinstance(seat, bool) and 0 <= seat < self.n_players)):
            raise ValueError(f"seat must be 'random' or a seat 0..{self.n_players - 1}, got {seat!r}")
        self.names, self.seat_option, self.dice, self.options = names, seat, dice, options
        self.input_fn = input_fn
        self.out = out if out is not None else sys.stdout
        self.score = [0, 0]  # person, bots
        self.session: Optional[Session] = None

    def say(self, text: str = "") -> None:
        print(wrap(text), file=self.out, flush=True)

    def who(self, seat: int) -> str:
        return self.session.narrator.who(seat)

    def run(self, n_games: int = 1) -> int:
        bots = self.names[0] if len(set(self.names)) == 1 else "the bots"
        return play_series(self.say, self.play_game, n_games, lambda: f"you {self.score[0]}, {bots} {self.score[1]}",
                           lambda: sum(self.score))

    def play_game(self) -> float:
        """One game to the end; the person's outcome (+1 not losing, -1 losing).  Raises ``QuitGame``."""
        n = self.n_players
        me = self.dice.draw_seat(n) if self.seat_option == "random" else self.seat_option
        bots = [None if s == me else self.opponents[(s - me - 1) % n] for s in range(n)]
        labels = ["" if s == me else self.names[(s - me - 1) % n] for s in range(n)]
        self.session = session = Session(self.spec.name, bots, me, self.dice, labels=labels, **self.options)
        self.say(self.view.intro(n, me, self.who))
        while True:
            for line in session.read():
                self.say(line)
            if session.over:
                break
            for line in self.view.board(session.game, self.who):
                self.say(line)
            session.submit(self.ask(session.game, me))
        for line in self.view.board(session.game, self.who):
            self.say(line)
        outcome = session.outcome()
        self.score[0 if outcome > 0 else 1] += 1
        return outcome

    def ask(self, game, seat: int) -> int:
        """Ask the person for a move until the rules allow it."""

        def parse(line: str) -> Command:
            try:
                action = self.view.parse(line, game)
            except IllegalAction:
                raise
            except ValueError:
                command = command_word(line.strip().lower())
                if command is None:
                    raise
                return command
            if action not in game.legal_actions():
                game.clone().apply(action)  # raises IllegalAction with the rules' reason
            return Command("move", action)

        return ask_move(self.input_fn, self.say, lambda: self.view.prompt(game, seat), parse, self.view.HELP,
                        lambda: self.view.legal_text(game), IllegalAction)


def play_terminal(game: str, opponents, dice: DiceSource, *, opponent_names=None, seat: str | int = "random",
                  games: int = 1, input_fn: InputFn = input, out: Optional[TextIO] = None, **options) -> int:
    """Play ``games`` games against ``opponents`` in the terminal; returns the exit code
    (0, also when the person quits or presses Ctrl-C)."""
    terminal = TerminalGame(game, opponents, dice, opponent_names=opponent_names, seat=seat, input_fn=input_fn,
                            out=out, **options)
    try:
        return terminal.run(games)
    except KeyboardInterrupt:
        terminal.say("\nInterrupted: game abandoned. Bye.")
        return 0
    except QuitGame as stop:  # raised outside a series' own handling
        terminal.say(str(stop))
        return 0
