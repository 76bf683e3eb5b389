"""420 in the front-ends' words (``play.terminal``): the table, the question at a
person's turn, and the moves a person types.

The person types the *values* of the dice to reroll ("1 5", "1,5", "15", "all")
or the dice to keep ("keep 6 6"); the engine (``game.action_for_reroll``) decides
legality and its ``IllegalAction`` message cites R2-R4.  Turns without a choice
(the first roll, R1; a reset over 20, R4; a hand with nothing R3 lets it keep)
are played by the engine and said by the narrator.  The web page's adapter
(``web``) reads a move with ``read_keep`` and ``read_reroll`` from here.
"""

from __future__ import annotations

from collections import Counter
from typing import Callable, Sequence

from core.engine import IllegalAction
from core.narrate import fit
from core.words import ALL_WORDS, parse_dice, strip_word
from games.dice420 import game as g
from games.dice420.narrate import hand_total

Who = Callable[[int], str]

# shown on its own line before the first question of a game; later questions carry SHORT_HINT
PROMPT_HINT = (
    '(type the dice to reroll, e.g. "1 5", "1,5", "15", "all"; "?" for help,\n"legal" lists your legal moves, '
    '"q" quits)'
)
SHORT_HINT = '("?" for help)'

# python -m play --help shows these (after "python -m play")
EXAMPLES = (
    "420 --opponent optimal --seat red --seed 7",
    "420 --players 4 --opponent greedy --seed 7",
    "match 420 --agent greedy --opponent random --games 1000",
    "match 420 --players 4 --agent optimal --opponent greedy",
    "evaluate 420 --agent all --exact",
    "export 420 --agent optimal --out optimal420.csv",
)

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

ADVICE = 'type the values of the dice to reroll (e.g. "1 5", "15" or "all"), "?" for help'
EMPTY = 'type the values of the dice to reroll, e.g. "1 5", or "?" for help'


# --- the table ----------------------------------------------------------------------
def intro(game: g.Game420, seat: int, who: Who, labels: Sequence[str]) -> str:
    n = game.n_players
    if n == 2:
        return fit(
            f"420: you play {g.SEAT_NAMES[seat]} against {labels[1 - seat]} ({g.SEAT_NAMES[1 - seat]}).",
            "Red moves first.",
            "First hand to total exactly 20 wins.",
            indent="",
        )
    return (
        f"420 with {n} players: you are {g.seat_name(seat, n)}. Each round is a race to\n"
        "make exactly 20; its winner drops out. The last player left loses."
    )


def board(game: g.Game420, seat: int, who: Who) -> list[str]:
    """Every hand still in play or rolled, with its total."""
    seats = [s for s in range(game.n_players) if s in game.remaining or game.hands[s] is not None]
    width = max(len(who(s)) for s in seats)
    return [f"  {who(s):<{width}}  {hand_total(game.hands[s])}" for s in seats]


def prompt(game: g.Game420, seat: int, first: bool) -> str:
    """The question; the first of a game carries the long hint on its own lines."""
    question = f"Your hand {hand_total(game.hands[seat])}. Reroll which dice?"
    return f"{PROMPT_HINT}\n{question} > " if first else f"{question} {SHORT_HINT} > "


# --- reading a move -------------------------------------------------------------
def read_keep(hand: Sequence[int], keep: Sequence[int]) -> int:
    """The action keeping ``keep`` (the rest rerolled); ``IllegalAction`` says why not."""
    if not g.is_submultiset(keep, hand):
        raise IllegalAction(
            f"cannot keep {g.format_hand(g.canonical(keep))}: the hand {g.format_hand(hand)} does not hold those dice"
        )
    return g.action_for_reroll(hand, tuple((Counter(hand) - Counter(keep)).elements()))


def read_reroll(hand: Sequence[int], reroll: Sequence[int]) -> int:
    """The action rerolling ``reroll``; ``IllegalAction`` says why not."""
    if len(reroll) > g.N_DICE:
        raise IllegalAction(
            f"you have only {g.N_DICE} dice and typed {len(reroll)} values ({' '.join(map(str, reroll))})"
        )
    return g.action_for_reroll(hand, reroll)


def read(text: str, hand: Sequence[int]) -> int:
    """The action a line names against ``hand``: "1 5", "15", "all", "keep 6 6", "reroll 15".

    Raises ``ValueError`` for unreadable input and ``IllegalAction`` (a ``ValueError``)
    for a move the rules forbid; both messages are for the person."""
    line = text.strip().lower()
    if line in ALL_WORDS:
        return g.action_for_reroll(hand, hand)
    keep_mode, line = strip_word(line, ("keep", "k"))
    if line.startswith("reroll"):
        line = line[len("reroll") :]
    values = parse_dice(line, ADVICE, empty=EMPTY) if line.strip() else ()
    if keep_mode:
        return read_keep(hand, values)
    if not values:
        raise ValueError(EMPTY)
    return read_reroll(hand, values)


def parse(line: str, game: g.Game420, who: Who) -> int:
    return read(line, game.hands[game.current_player])


def legal_text(game: g.Game420) -> str:
    """The legal moves of the hand to move, each with what to type for it."""
    hand = game.hands[game.current_player]
    lines = [f"Legal moves with {g.format_hand(hand)} ({sum(hand)}):"]
    for a in g.legal_keeps(hand):
        reroll = g.reroll_of(hand, a)
        typed = "all" if len(reroll) == g.N_DICE else " ".join(map(str, reroll))
        lines.append(f'  type "{typed}"{"":<{8 - len(typed)}} {g.describe_action(a, hand)}')
    return "\n".join(lines)
