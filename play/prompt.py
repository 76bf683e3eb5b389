"""The question the terminal asks: read a move, explain what is wrong, ask again.

The command words ("q", "?", "legal") are read here; the words of a move are the
game's view's, which reads them with ``core.words``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

QUIT_WORDS = {"q", "quit", "exit"}
HELP_WORDS = {"?", "h", "help"}
LEGAL_WORDS = {"legal", "l", "moves"}


@dataclass(frozen=True)
class Command:
    """What one line of input asked for: a move (an engine action) or a command word."""

    kind: str  # "move", "help", "legal", "quit"
    action: int | None = None


def command_word(line: str) -> Command | None:
    """The command a stripped, lower-case line names ("q", "?", "legal"...), if any."""
    for words, kind in ((QUIT_WORDS, "quit"), (HELP_WORDS, "help"), (LEGAL_WORDS, "legal")):
        if line in words:
            return Command(kind)
    return None


class QuitGame(Exception):
    """The person left the game (q, end of input, Ctrl-C); the message says how."""


def ask_move(
    input_fn: Callable[[str], str],
    say: Callable[[str], None],
    prompt: Callable[[], str],
    parse: Callable[[str], object],
    help_text: str,
    legal_text: Callable[[], str],
    illegal: type[Exception],
) -> int:
    """Ask until ``parse`` reads a move (a command with ``kind`` and ``action``).

    ``parse`` raises ``ValueError`` for unreadable input and ``illegal`` (a
    ValueError) for a move the rules forbid; both are explained and asked again.
    "?" shows ``help_text``, "legal" lists the legal moves, "q" quits.
    """
    while True:
        try:
            line = input_fn(prompt())
        except EOFError:
            raise QuitGame("\nEnd of input: game abandoned. Bye.") from None
        except KeyboardInterrupt:
            raise QuitGame("\nInterrupted: game abandoned. Bye.") from None
        try:
            command = parse(line)
        except ValueError as e:
            say(f'  Not a legal move: {e}. ("legal" lists your legal moves)' if isinstance(e, illegal) else f"  {e}.")
            continue
        if command.kind == "quit":
            raise QuitGame("You quit: game abandoned. Bye.")
        if command.kind == "help":
            say(help_text)
        elif command.kind == "legal":
            say(legal_text())
        else:
            return command.action


def play_series(
    say: Callable[[str], None],
    play_game: Callable[[], object],
    games: int,
    tally: Callable[[], str],
    finished: Callable[[], int],
) -> int:
    """Play ``games`` games in a row with a running score (``tally()``, e.g. "you 2, bot 1").

    Quitting (``QuitGame``) ends the series with the final score; the exit code is 0 either way."""
    try:
        for number in range(1, games + 1):
            if games > 1:
                say(f"=== Game {number} of {games} ===")
            play_game()
            if games > 1:
                say(f"Score after {number} game{'s' if number > 1 else ''}: {tally()}")
                say("")
    except QuitGame as stop:
        say(str(stop))
        if finished():
            say(f"Final score: {tally()}")
    return 0
