"""The question both terminal games ask: read a move, explain what is wrong, ask again."""

from __future__ import annotations

from typing import Callable


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
