"""420 in the terminal: a person against a bot.

The person types the *values* of the dice to reroll ("1 5", "1,5", "15",
"all"); the engine (``game420.action_for_reroll``) decides legality and its
``IllegalMove`` message, which cites R2-R4, is shown before asking again.
Turns without a choice (the first roll, R1; a reset over 20, R4; a hand
with nothing R3 lets it keep) are played automatically with a line saying why.

Input and output are injectable (``input_fn``, ``out``) so tests can drive a
whole session; all chance comes from one dice source, so a seed replays.
"""

from __future__ import annotations

import re
import sys
from typing import Callable, Iterable, Optional, Sequence, TextIO

from agents.base import Agent
from envs import codec420
from envs import game420 as g
from envs.dice import DiceSource
from play.prompt import ALL_WORDS, Command, QuitGame, ask_move, command_word, play_series, strip_word
from play.prompt import parse_dice as read_dice

InputFn = Callable[[str], str]

PROMPT_HINT = '(e.g. "1 5", "1,5", "15", "all"; "?" for help, "legal" lists legal moves, "q" quits)'

HELP = """\
How to play 420: be the first to make your four dice total exactly 20 (R5).
Red moves first, then the players alternate (R6). Your first turn rolls all four dice (R1).
On each later turn you reroll 1, 2, 3 or all 4 of your dice (R2). Type the VALUES of
the dice to reroll, in any order:  "1 5", "1,5" or "15" rerolls a 1 and a 5;
"6 6" rerolls two sixes; "all" rerolls all four. "keep 6 6" says it the other way round.
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

    Raises ``ValueError`` for unreadable input and ``game420.IllegalMove`` (a
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
            raise g.IllegalMove(
                f"cannot keep {g.format_hand(g.canonical(values))}: the hand {g.format_hand(hand)} does not hold those dice"
            )
        rest = list(hand)
        for v in values:
            rest.remove(v)
        values = tuple(rest)
    elif not values:
        raise ValueError('type the values of the dice to reroll, e.g. "1 5", or "?" for help')
    if len(values) > g.N_DICE:
        raise g.IllegalMove(f"you have only {g.N_DICE} dice and typed {len(values)} values ({' '.join(map(str, values))})")
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
    return f"{g.format_hand(hand)} ({sum(hand)})" if hand is not None else "(not rolled yet)"


class TerminalGame:
    """A session of one or more games of 420 between a person and a bot."""

    def __init__(
        self,
        opponent: Agent,
        dice: DiceSource,
        *,
        opponent_name: str | None = None,
        seat: str = "red",
        input_fn: InputFn = input,
        out: TextIO | None = None,
    ):
        if seat not in ("red", "blue", "random"):
            raise ValueError(f"seat must be 'red', 'blue' or 'random', got {seat!r}")
        self.opponent = opponent
        self.opponent_name = opponent_name or str(getattr(opponent, "name", "bot"))
        self.dice = dice
        self.seat_option = seat
        self.input_fn = input_fn
        self.out = out if out is not None else sys.stdout
        self.score = [0, 0]  # person, bot
        self.human = g.RED
        self.hinted = False  # the long prompt hint is shown once per game

    def say(self, text: str = "") -> None:
        print(text, file=self.out, flush=True)

    # names -------------------------------------------------------------------------
    def who(self, seat: int) -> str:
        colour = g.SEAT_NAMES[seat]
        return f"{colour} (you)" if seat == self.human else f"{colour} ({self.opponent_name})"

    def board(self, game: g.Game420) -> str:
        width = max(len(self.who(s)) for s in (g.RED, g.BLUE))
        return "\n".join(f"  {self.who(s):<{width}}  {_total(game.hands[s])}" for s in (g.RED, g.BLUE))

    # play ------------------------------------------------------------------------
    def run(self, games: int = 1) -> int:
        """Play ``games`` games; returns the exit code (0, also when the person quits)."""
        return play_series(self.say, self.play_game, games,
                           lambda: f"you {self.score[0]}, {self.opponent_name} {self.score[1]}",
                           lambda: sum(self.score))

    def play_game(self) -> Optional[int]:
        """One game to the end; returns the winning seat.  Raises ``QuitGame``."""
        if self.seat_option == "random":
            self.human = self.dice.draw_seat(2)
        else:
            self.human = g.RED if self.seat_option == "red" else g.BLUE
        game = g.Game420(2, dice=self.dice)
        self.say(
            f"420: you play {g.SEAT_NAMES[self.human]} against {self.opponent_name} "
            f"({g.SEAT_NAMES[1 - self.human]}). Red moves first. First hand to total exactly 20 wins."
        )
        self.hinted = False
        while not game.is_over:
            self.turn(game)
        winner = game.winner
        self.say(self.board(game))
        if winner == self.human:
            self.score[0] += 1
            self.say(f"{self.who(winner)} made 20: you win!")
        else:
            self.score[1] += 1
            self.say(f"{self.who(winner)} made 20: {self.opponent_name} wins, you lose.")
        return winner

    def turn(self, game: g.Game420) -> g.Turn:
        seat = game.current
        hand = game.hands[seat]
        legal = game.legal_actions()
        if len(legal) == 1:
            turn = game.play(legal[0])
            self.say(self.forced_line(seat, hand, turn))
            return turn
        if seat == self.human:
            self.say(self.board(game))
            action = self.ask(hand)
        else:
            obs = codec420.observe(game, seat)
            action = int(self.opponent.act(obs, codec420.action_mask(hand)))
        turn = game.play(action)
        self.say(self.choice_line(seat, turn))
        return turn

    def ask(self, hand: g.Hand) -> int:
        """Ask the person for a move until it is legal."""

        def prompt() -> str:
            hint = PROMPT_HINT if not self.hinted else '("?" for help, "legal" lists legal moves)'
            self.hinted = True
            return f"Your hand {_total(hand)}. Reroll which dice? {hint} > "

        return ask_move(self.input_fn, self.say, prompt, lambda line: parse_command(line, hand), HELP,
                        lambda: legal_moves_text(hand), g.IllegalMove)

    def forced_line(self, seat: int, before: Optional[g.Hand], turn: g.Turn) -> str:
        who = self.who(seat)
        if before is None:
            why = "first turn, rolls all four dice (R1)"
        elif g.must_reset(before):
            why = f"hand {_total(before)} is over 20, so all four dice are rerolled (R4)"
        else:
            why = f"hand {_total(before)} has no dice R3 allows keeping, so all four are rerolled"
        return f"{who}: {why} -> {_total(turn.hand)}" + ("  = 20!" if turn.won else "")

    def choice_line(self, seat: int, turn: g.Turn) -> str:
        who = self.who(seat)
        if turn.kept:
            move = f"kept {g.format_hand(turn.kept)}, rolled {g.format_hand(turn.rolled)}"
        else:
            move = f"rerolled all four, rolled {g.format_hand(turn.rolled)}"
        return f"{who} {move} -> {_total(turn.hand)}" + ("  = 20!" if turn.won else "")


def play_terminal(
    opponent: Agent,
    dice: DiceSource,
    *,
    opponent_name: str | None = None,
    seat: str = "red",
    games: int = 1,
    input_fn: InputFn = input,
    out: TextIO | None = None,
) -> int:
    """Play ``games`` games against ``opponent`` in the terminal; returns the exit code.

    Ctrl-C anywhere in the session ends it cleanly (exit code 0), like end of input.
    """
    session = TerminalGame(opponent, dice, opponent_name=opponent_name, seat=seat, input_fn=input_fn, out=out)
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
