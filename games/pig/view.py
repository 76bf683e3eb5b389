"""Pig in the front-ends' words: the table, the question at a person's turn, and the
moves a person types ("roll" or "r", "bank" or "b"; "hold" too)."""

from __future__ import annotations

from typing import Callable, Optional, Sequence

from games.pig import game as g

ROLL_WORDS = {"r", "roll"}
HOLD_WORDS = {"b", "bank", "hold", "s", "stop"}

# python -m play --help shows these (after "python -m play")
EXAMPLES = ("pig --opponent optimal --seed 7", "evaluate pig --agent hold20 --exact")
HELP = (
    '  Type "r" (roll: add the die to your turn total; a 1 loses it and ends your turn)\n'
    '  or "b" (bank: add your turn total to your score; your turn ends).\n'
    '  "legal" lists your moves, "q" quits.'
)


def intro(game: g.PigGame, seat: int, who: Callable[[int], str], labels: Sequence[str]) -> str:
    return (
        f"Pig with {game.n_players} players: you are {g.seat_name(seat)}. Roll to add to your turn total, "
        "bank it before a 1 takes it away; the first to the goal wins."
    )


def board(game: g.PigGame, seat: int, who: Callable[[int], str]) -> list[str]:
    width = max(len(who(s)) for s in range(game.n_players))
    lines = []
    for s in range(game.n_players):
        turn = f"  (turn total {game.turn_total})" if s == game.current_player and game.turn_total else ""
        lines.append(f"  {who(s):<{width}}  {game.scores[s]:>4} of {game.goal}{turn}")
    return lines


def prompt(game: g.PigGame, seat: int, first: bool) -> str:
    at_stake = game.scores[seat] + game.turn_total
    return f"Turn total {game.turn_total} (banked it makes {at_stake}). Roll or bank? [r/b] > "


def parse(line: str, game: g.PigGame, who: Optional[Callable[[int], str]] = None) -> int:
    """The action ``line`` names (``who`` names no one here; the web page passes none)."""
    word = line.strip().lower()
    if word in ROLL_WORDS:
        return g.ROLL
    if word in HOLD_WORDS:
        return g.HOLD
    raise ValueError(
        f'I could not read {line.strip()!r}: type "r" to roll or "b" to bank'
        if word
        else 'type "r" to roll or "b" to bank'
    )


def legal_text(game: g.PigGame) -> str:
    return f'  Your moves: "r" (roll) or "b" (bank your turn total of {game.turn_total}).'
