"""420 in the terminal: a person against a bot.

The person types the *values* of the dice to reroll ("1 5", "1,5", "15",
"all"); the engine (``game420.action_for_reroll``) decides legality and its
``IllegalAction`` message, which cites R2-R4, is shown before asking again.
Turns without a choice (the first roll, R1; a reset over 20, R4; a hand
with nothing R3 lets it keep) are played by the engine, and the narration
(``core.narrate`` and each game's ``narrate``) says why.  With more than two players the person plays
rounds (R7) against several bots.

Input and output are injectable (``input_fn``, ``out``) so tests can drive a
whole session; all chance comes from one dice source, so a seed replays.
"""

from __future__ import annotations

import sys
from typing import Callable, Iterable, Optional, Sequence, TextIO

from agents.base import Agent
from games.dice420 import game as g
from core.dice import DiceSource
from core.narrate import fit, wrap
from games.dice420.narrate import hand_total
from play.session import Session
from play.prompt import ALL_WORDS, Command, ask_move, command_word, play_series, strip_word
from play.prompt import parse_dice as read_dice

InputFn = Callable[[str], str]

# shown on its own line before the first question of a game; later questions carry SHORT_HINT
PROMPT_HINT = '(type the dice to reroll, e.g. "1 5", "1,5", "15", "all"; "?" for help,\n"legal" lists your legal moves, "q" quits)'
SHORT_HINT = '("?" for help)'

HELP = """\
How to play 420: be the first to make your four dice total exactly 20 (R5).
Red moves first, then the players alternate (R6). Your first turn rolls all
four dice (R1).
With more players (R7): each round is a race among those still in; whoever
makes 20 drops out (not a loser), a new round starts, and the last player left
loses.
On each later turn you reroll 1, 2, 3 or all 4 of your dice (R2). Type the
VALUES of the dice to reroll, in any order: "1 5", "1,5" or "15" rerolls a 1
and a 5; "6 6" rerolls two sixes; "all" rerolls all four. "keep 6 6" says it
the other way round.
What you keep must qualify (R3):
  reroll 3 dice only if the die you keep is 5 or 6;
  reroll 2 dice only if the two you keep sum to 10 or more;
  reroll 1 die  only if the three you keep sum to 15 or more;
  rerolling all four is always allowed.
A hand over 20 must reroll all four next turn (R4); that is done for you.
Commands: "legal" lists your legal moves, "?" shows this help, "q" quits."""

# --- reading a move -------------------------------------------------------------
def parse_dice(text: str) -> tuple[int, ...]:
    """Die values from text like "1 5", "1,5", "15" or "1-5".  Raises ``ValueError`` with advice."""
    return read_dice(
        text,
        'type the values of the dice to reroll (e.g. "1 5", "15" or "all"), "?" for help',
        empty='type the values of the dice to reroll, e.g. "1 5", or "?" for help',
    )


def parse_command(text: str, hand: Sequence[int]) -> Command:
    """Read one line of input against ``hand``.

    Raises ``ValueError`` for unreadable input and ``game420.IllegalAction`` (a
    ``ValueError``) for a move the rules forbid; both messages are for the person.
    """
    line = text.strip().lower()
    word = command_word(line)
    if word is not None:
        return word
    if line in ALL_WORDS:
        return Command("move", g.action_for_reroll(hand, hand))
    keep_mode, line = strip_word(line, ("keep", "k"))
    if line.startswith("reroll"):
        line = line[len("reroll") :]
    values = parse_dice(line) if line.strip() else ()
    if keep_mode:
        if not g.is_submultiset(values, hand):
            raise g.IllegalAction(
                f"cannot keep {g.format_hand(g.canonical(values))}: the hand {g.format_hand(hand)} does not hold those dice"
            )
        rest = list(hand)
        for v in values:
            rest.remove(v)
        values = tuple(rest)
    elif not values:
        raise ValueError('type the values of the dice to reroll, e.g. "1 5", or "?" for help')
    if len(values) > g.N_DICE:
        raise g.IllegalAction(f"you have only {g.N_DICE} dice and typed {len(values)} values ({' '.join(map(str, values))})")
    return Command("move", g.action_for_reroll(hand, values))


def legal_moves_text(hand: Sequence[int]) -> str:
    """The legal moves from ``hand``, each with what to type for it."""
    lines = [f"Legal moves with {g.format_hand(hand)} ({sum(hand)}):"]
    for a in g.legal_keeps(hand):
        reroll = g.reroll_of(hand, a)
        typed = "all" if len(reroll) == g.N_DICE else " ".join(map(str, reroll))
        lines.append(f'  type "{typed}"{"":<{8 - len(typed)}} {g.describe_action(a, hand)}')
    return "\n".join(lines)


# --- the game -----------------------------------------------------------------------
def _total(hand: Optional[Sequence[int]]) -> str:
    return hand_total(hand)


SEATS_2 = {"red": g.RED, "blue": g.BLUE}


class TerminalGame:
    """A session of one or more games of 420 between a person and 1 to 7 bots.

    A thin loop over ``play.session.Session``: it prints what the narrator says,
    and at the person's turn shows the table and reads a move.
    """

    def __init__(
        self,
        opponents: Agent | Sequence[Agent],
        dice: DiceSource,
        *,
        opponent_names: str | Sequence[str] | None = None,
        seat: str | int = "red",
        input_fn: InputFn = input,
        out: TextIO | None = None,
    ):
        self.opponents = list(opponents) if isinstance(opponents, (list, tuple)) else [opponents]
        self.n_players = len(self.opponents) + 1
        if not 2 <= self.n_players <= g.MAX_PLAYERS:
            raise ValueError(f"420 is played by 2 to {g.MAX_PLAYERS} players: give 1 to {g.MAX_PLAYERS - 1} opponents")
        if opponent_names is None:
            names = [str(getattr(a, "name", "bot")) for a in self.opponents]
        else:
            names = [opponent_names] if isinstance(opponent_names, str) else list(opponent_names)
        if len(names) == 1 and len(self.opponents) > 1:
            names = names * len(self.opponents)
        if len(names) != len(self.opponents):
            raise ValueError(f"{len(self.opponents)} opponents but {len(names)} names")
        self.opponent_names = names
        self.opponent_name = names[0] if len(set(names)) == 1 else "the bots"
        valid = seat == "random" or (self.n_players == 2 and seat in SEATS_2) or (
            isinstance(seat, int) and not isinstance(seat, bool) and 0 <= seat < self.n_players)
        if not valid:
            two = "'red', 'blue', " if self.n_players == 2 else ""
            raise ValueError(f"seat must be {two}'random' or a seat 0..{self.n_players - 1}, got {seat!r}")
        self.dice = dice
        self.seat_option = seat
        self.input_fn = input_fn
        self.out = out if out is not None else sys.stdout
        self.score = [0, 0]  # person, bots
        self.human = g.RED
        self.hinted = False  # the long prompt hint is shown once per game
        self.session: Optional[Session] = None

    def say(self, text: str = "") -> None:
        print(wrap(text), file=self.out, flush=True)

    # names -------------------------------------------------------------------------
    def who(self, seat: int) -> str:
        return self.session.narrator.who(seat)

    def board(self, game: g.Game420) -> str:
        seats = [s for s in range(self.n_players) if s in game.remaining or game.hands[s] is not None]
        width = max(len(self.who(s)) for s in seats)
        return "\n".join(f"  {self.who(s):<{width}}  {_total(game.hands[s])}" for s in seats)

    # play ------------------------------------------------------------------------
    def run(self, games: int = 1) -> int:
        """Play ``games`` games; returns the exit code (0, also when the person quits)."""
        return play_series(self.say, self.play_game, games,
                           lambda: f"you {self.score[0]}, {self.opponent_name} {self.score[1]}",
                           lambda: sum(self.score))

    def _seat(self) -> int:
        if self.seat_option == "random":
            return self.dice.draw_seat(self.n_players)
        return SEATS_2.get(self.seat_option, self.seat_option)  # type: ignore[arg-type]

    def play_game(self) -> Optional[float]:
        """One game to the end; returns the person's outcome (+1 not losing, -1 losing).  Raises ``QuitGame``."""
        self.human = self._seat()
        n = self.n_players
        bots = [None if s == self.human else self.opponents[(s - self.human - 1) % n] for s in range(n)]
        labels = ["" if s == self.human else self.opponent_names[(s - self.human - 1) % n] for s in range(n)]
        self.session = session = Session("420", bots, self.human, self.dice, labels=labels)
        if n == 2:
            self.say(fit(
                f"420: you play {g.SEAT_NAMES[self.human]} against {self.opponent_name} "
                f"({g.SEAT_NAMES[1 - self.human]}).", "Red moves first.", "First hand to total exactly 20 wins.",
                indent="",
            ))
        else:
            self.say(f"420 with {n} players: you are {g.seat_name(self.human, n)}. Each round is a race to\n"
                     "make exactly 20; its winner drops out. The last player left loses.")
        self.hinted = False
        while True:
            for line in session.read():
                self.say(line)
            if session.over:
                break
            game = session.game
            self.say(self.board(game))
            session.submit(self.ask(game.hands[self.human]))
        self.say(self.board(session.game))
        outcome = session.outcome()
        self.score[0 if outcome > 0 else 1] += 1
        return outcome

    def ask(self, hand: g.Hand) -> int:
        """Ask the person for a move until it is legal."""

        def prompt() -> str:
            question = f"Your hand {_total(hand)}. Reroll which dice?"
            first, self.hinted = not self.hinted, True
            return f"{PROMPT_HINT}\n{question} > " if first else f"{question} {SHORT_HINT} > "

        return ask_move(self.input_fn, self.say, prompt, lambda line: parse_command(line, hand), HELP,
                        lambda: legal_moves_text(hand), g.IllegalAction)


def play_terminal(
    opponents: Agent | Sequence[Agent],
    dice: DiceSource,
    *,
    opponent_names: str | Sequence[str] | None = None,
    seat: str | int = "red",
    games: int = 1,
    input_fn: InputFn = input,
    out: TextIO | None = None,
) -> int:
    """Play ``games`` games against ``opponents`` (one bot, or one per other seat
    clockwise from the person's) in the terminal; returns the exit code.

    Ctrl-C anywhere in the session ends it cleanly (exit code 0), like end of input.
    """
    session = TerminalGame(opponents, dice, opponent_names=opponent_names, seat=seat, input_fn=input_fn, out=out)
    try:
        return session.run(games)
    except KeyboardInterrupt:
        session.say("\nInterrupted: game abandoned. Bye.")
        return 0


class ScriptedInput:
    """An ``input_fn`` that answers from a list of lines, echoing prompt and answer
    to ``out`` as a terminal would; raises ``EOFError`` when the lines run out."""

    def __init__(self, lines: Iterable[str], out: TextIO | None = None):
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
