"""421 in the front-ends' words (``play.terminal``): the table at a person's
decision, the question, and the moves a person types.

The engine plays every step without a choice (the charge phase, first rolls,
RAMPO, a follower's last roll) and the narrator says it.  At the person's own
decision the table shows their dice, the rolls used and allowed, the hands
already played this round (the leader's with its roll count) and everyone's
tokens, and a move is read: ``stop`` (``s``), the *values* of the dice to reroll
(``6 5``, ``65``, ``all``), or ``keep 4 2``.  The web page's adapter (``web``)
reads and describes a move with ``read_keep``, ``read_reroll``, ``why_not_stop``
and ``describe`` from here.
"""

from __future__ import annotations

from collections import Counter
from typing import Callable, Sequence

from core.engine import IllegalAction
from core.narrate import fit, plural
from core.words import ALL_WORDS, parse_dice, strip_word
from games.dice421 import game as g
from games.dice421.narrate import Narrator421

Who = Callable[[int], str]

# shown on their own lines before the first question of a game (the leader's, a follower's)
PROMPT_HINT = (
    '("s" stops; type the dice to reroll, e.g. "6 5", "65", "all", or "keep 4 2";\n'
    '"?" for help, "legal" lists your legal moves, "q" quits)'
)
FOLLOWER_HINT = (
    '(type the dice to reroll, e.g. "6 5", "65", "all", or "keep 4 2";\n'
    '"?" for help, "legal" lists your legal moves, "q" quits)'
)

HELP = """\
How to play 421 (2 or 3 players and a pot of tokens; whoever ends up holding
every token loses).
Hands, high to low, with the tokens they are worth (H1):
  4-2-1 (10)  1-1-1 (7)  6-1-1, 6-6-6 (6)  5-1-1, 5-5-5 (5)  4-1-1, 4-4-4 (4)
  3-1-1, 3-3-3 (3)  2-1-1, 2-2-2, 6-5-4, 5-4-3, 4-3-2, 3-2-1, 2-2-1 (2 each);
  any other hand is worth 1, and those compare by their dice read high to low
  (5-5-2 > 5-4-2 > 5-2-2).
Charge (H2, played for you): each round everyone rolls once; the lowest hand
  takes from the pot what the highest hand is worth, until the pot is empty.
  Whoever has no token is out, a winner.
Discharge (H4): each round the leader rolls up to 3 times and may stop after
  roll 1 or 2. Everyone else must then make exactly as many rolls as the
  leader (no stopping early), rerolling at least one die each time. The
  highest hand gives the lowest hand as many tokens as it is worth (at most
  what it holds). Run out of tokens and you leave, a winner (H5).
  Whoever received tokens leads the next round (H7).
A tie for the lowest hand is settled by RAMPO: one roll each, the lowest
  loses, and only 1 token moves (H6). Ties higher up go to whoever played
  earlier.
On your turn type:
  "stop" or "s"        stop now (the leader only, after roll 1 or 2)
  the dice to reroll   "6 5", "65" or "6,5" rerolls a 6 and a 5;
                       "all" rerolls all three
  "keep 4 2"           keeps a 4 and a 2 and rerolls the rest
  "legal" lists your legal moves, "?" shows this help, "q" quits."""

STOP_WORDS = {"stop", "s"}

# python -m play --help shows these (after "python -m play")
EXAMPLES = (
    "421 --players 3 --opponent heuristic --opponent cautious",
    "match 421 --agent heuristic --opponent greedy421 --seed 0",
    "evaluate 421 --agent heuristic --games 2000",
    "evaluate 421 --players 3 --agent greedy421 --exact",
)
ADVICE = 'type "stop", the values of the dice to reroll (e.g. "6 5", "65" or "all"), or "keep 4 2"; "?" for help'


# --- the table ----------------------------------------------------------------------
def intro(game: g.Game421, seat: int, who: Who, labels: Sequence[str]) -> str:
    seats = ", ".join(who(s) for s in range(game.n_players))
    return f"421: {game.n_players} players ({seats}), pot {game.initial_pot}.\n" + fit(
        f"{who(game.first_player)} plays first (drawn at random).",
        "Whoever ends up holding every token loses;",
        "'?' at your turn explains the rules.",
        indent="",
    )


def board(game: g.Game421, seat: int, who: Who) -> list[str]:
    """The person's decision: the rolls, their dice, the hands played this round, the
    tokens (nothing once the game is over: the narration said it all)."""
    if game.is_over:
        return []
    me, hand = game.current_player, game.dice_in_hand
    if me == game.leader:
        lines = [
            fit(
                f"Your turn, {who(me)}: you lead this round, roll {game.rolls_used} of at most {game.rolls_allowed}.",
                f"If you stop now, every other player must make exactly {plural(game.rolls_used, 'roll')}.",
                indent="",
            )
        ]
    else:
        lines = [
            fit(
                f"Your turn, {who(me)}: roll {game.rolls_used} of {game.rolls_allowed}.",
                f"The leader {who(game.leader)} made {plural(game.rolls_allowed, 'roll')},",
                f"so you must make exactly {game.rolls_allowed} (no stopping).",
                indent="",
            )
        ]
    lines.append(f"  your dice:    {g.hand_str(hand)}")
    if game.hands_played:
        for s, h, rolls in game.hands_played:
            role = "leader, " if s == game.leader else ""
            lines.append(f"  played:       {who(s)} {g.hand_str(h)} ({role}{plural(rolls, 'roll')})")
    else:
        lines.append("  played:       nothing yet this round")
    pot = game.pot if game.phase == g.CHARGE or game.pot else None
    lines.append("  " + Narrator421(game.n_players, you=seat).tokens_line(game.tokens, pot, out=game.winners))
    return lines


def tally(won: int, lost: int, bots: str) -> str:
    """The running score of a series."""
    return f"you won {won}, lost {lost}"


def prompt(game: g.Game421, seat: int, first: bool) -> str:
    """The question; the first of a game carries the hint (the leader's or a follower's)."""
    leader = game.current_player == game.leader
    question = "Stop, or reroll which dice?" if leader else "Reroll which dice?"
    text = f"Your dice {g.hand_str(game.dice_in_hand)} (roll {game.rolls_used} of {game.rolls_allowed}). {question} > "
    return f"{PROMPT_HINT if leader else FOLLOWER_HINT}\n{text}" if first else text


# --- reading a move -------------------------------------------------------------
def minus(hand: Sequence[int], part: Sequence[int]) -> tuple[int, ...]:
    """``hand`` without the dice ``part``, high to low."""
    return tuple(sorted((Counter(hand) - Counter(part)).elements(), reverse=True))


def read_keep(hand: Sequence[int], keep: Sequence[int]) -> int:
    """The action keeping ``keep`` (the rest rerolled); ``IllegalAction`` says why not."""
    hand = g.canonical(hand)
    if Counter(keep) - Counter(hand):
        raise IllegalAction(f"cannot keep {g.hand_str(keep)}: your dice {g.hand_str(hand)} do not hold those values")
    if len(keep) == 3:
        raise IllegalAction('you must reroll at least one die (H4); to keep all three, "stop" (the leader only)')
    return g.action_for_keep(keep)


def read_reroll(hand: Sequence[int], reroll: Sequence[int]) -> int:
    """The action rerolling ``reroll`` (nothing: keeping all three, refused); ``IllegalAction`` says why not."""
    hand = g.canonical(hand)
    if not reroll:  # rerolling nothing is keeping everything
        return read_keep(hand, hand)
    if len(reroll) > 3:
        raise IllegalAction(f"you have only 3 dice and typed {len(reroll)} values ({' '.join(map(str, reroll))})")
    missing = Counter(reroll) - Counter(hand)
    if missing:
        extra = " ".join(map(str, sorted(missing.elements(), reverse=True)))
        raise IllegalAction(f"cannot reroll {extra}: your dice are {g.hand_str(hand)}")
    return g.action_for_keep(minus(hand, reroll))


def read(text: str, hand: Sequence[int]) -> int:
    """The action a line names against ``hand`` (three dice): ``STOP`` or a keep.

    Whether STOP is legal now is the engine's to say.  Raises ``ValueError`` for
    unreadable input and ``IllegalAction`` (a ``ValueError``) for a move the rules
    forbid whatever the turn; both messages are for the person."""
    line = text.strip().lower()
    if line in STOP_WORDS:
        return g.STOP
    if line in ALL_WORDS:
        return g.action_for_keep(())
    keep_mode, line = strip_word(line, ("keep", "k"))
    if not keep_mode:
        _, line = strip_word(line, ("reroll", "r"))
        if line.strip() in ALL_WORDS:
            return g.action_for_keep(())
    values = parse_dice(line, ADVICE)
    if keep_mode:
        return read_keep(hand, values)
    if not values:
        raise ValueError(ADVICE)
    return read_reroll(hand, values)


def why_not_stop(game: g.Game421, who: Who) -> str:
    """Why the person may not stop now: the follower's rule (H4), or the engine's words."""
    if game.current_player != game.leader:
        return (
            f"you cannot stop: the leader {who(game.leader)} made {plural(game.rolls_allowed, 'roll')}, "
            f"so you must make exactly {game.rolls_allowed} and this is roll {game.rolls_used} (H4)"
        )
    return game._illegal_message(g.STOP, game.legal_actions())


def parse(line: str, game: g.Game421, who: Who) -> int:
    action = read(line, game.dice_in_hand)
    if action == g.STOP and game.current_player != game.leader:
        raise IllegalAction(why_not_stop(game, who))
    return action  # any other refusal is the engine's


# --- the legal moves ------------------------------------------------------------
def describe(hand: Sequence[int], action: int) -> str:
    """A move in the words of the list of legal moves."""
    hand = g.canonical(hand)
    if action == g.STOP:
        return f"stop with {g.hand_str(hand)}"
    keep = g.keep_for_action(action)
    if not keep:
        return "reroll all three"
    return f"keep {g.hand_str(keep)}, reroll {g.hand_str(minus(hand, keep))}"


def legal_moves_text(hand: Sequence[int], legal: Sequence[int]) -> str:
    """The legal moves (engine actions) from ``hand``, each with what to type for it."""
    hand = g.canonical(hand)
    lines = [f"Legal moves with {g.hand_str(hand)}:"]
    for a in legal:
        keep = () if a == g.STOP else g.keep_for_action(a)
        typed = "stop" if a == g.STOP else "all" if not keep else " ".join(map(str, minus(hand, keep)))
        lines.append(f'  type "{typed}"{"":<{6 - len(typed)}} {describe(hand, a)}')
    return "\n".join(lines)


def legal_text(game: g.Game421) -> str:
    return legal_moves_text(game.dice_in_hand, game.legal_actions())
