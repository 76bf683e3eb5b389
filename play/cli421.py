"""421 in the terminal: a person against one or two bots.

The engine (``games.dice421.game``) plays every step without a choice (the charge
phase, first rolls, RAMPO, a follower's last roll) and records it in
``Game421.events``; ``core.narrate`` and each game's ``narrate`` puts those events into words (through
``play.session.Session``), so the person sees every roll, every exchange, the
pot and everyone's tokens.  At the person's own
decision it shows their dice, the rolls used and allowed, the hands already
played this round (the leader's with its roll count), and reads a move:
``stop`` (``s``), the *values* of the dice to reroll (``6 5``, ``65``,
``all``), or ``keep 4 2``.  Legality is the engine's (``legal_actions``,
``IllegalAction``); a bad line is explained and the question asked again.

Input and output are injectable (``input_fn``, ``out``) so tests can drive a
whole session; all chance comes from one dice source, so a seed replays.
"""

from __future__ import annotations

import sys
from collections import Counter
from typing import Callable, Optional, Sequence, TextIO

from agents.base import Agent
from games.dice421 import game as g
from core.dice import DiceSource
from core.narrate import fit, wrap
from core.narrate import plural as _plural
from play.cli420 import ScriptedInput  # noqa: F401 (re-exported for tests and callers)
from play.prompt import ALL_WORDS, Command, ask_move, command_word, play_series, strip_word
from play.prompt import parse_dice as read_dice
from play.session import Session

InputFn = Callable[[str], str]

# shown on their own lines before the first question of a game (the leader's, a follower's)
PROMPT_HINT = ('("s" stops; type the dice to reroll, e.g. "6 5", "65", "all", or "keep 4 2";\n'
               '"?" for help, "legal" lists your legal moves, "q" quits)')
FOLLOWER_HINT = ('(type the dice to reroll, e.g. "6 5", "65", "all", or "keep 4 2";\n'
                 '"?" for help, "legal" lists your legal moves, "q" quits)')

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


def seat_name(seat: int) -> str:
    """P1, P2, P3 for seats 0, 1, 2."""
    return f"P{seat + 1}"


# --- reading a move -------------------------------------------------------------
def parse_dice(text: str) -> tuple[int, ...]:
    """Die values from text like "6 5", "6,5", "65" or "6-5".  Raises ``ValueError`` with advice."""
    return read_dice(
        text, 'type "stop", the values of the dice to reroll (e.g. "6 5", "65" or "all"), or "keep 4 2"; "?" for help'
    )


def _remove(hand: Sequence[int], values: Sequence[int]) -> tuple[int, ...]:
    rest = list(hand)
    for v in values:
        rest.remove(v)
    return tuple(rest)


def parse_command(text: str, hand: Sequence[int]) -> Command:
    """Read one line of input against ``hand`` (three dice).

    Returns a move as an engine action (``STOP`` or a keep); whether STOP is
    legal here is the engine's to say.  Raises ``ValueError`` for unreadable
    input and ``game421.IllegalAction`` (a ``ValueError``) for a move the rules
    forbid whatever the turn; both messages are for the person.
    """
    hand = g.canonical(hand)
    line = text.strip().lower()
    word = command_word(line)
    if word is not None:
        return word
    if line in STOP_WORDS:
        return Command("move", g.STOP)
    if line in ALL_WORDS:
        return Command("move", g.action_for_keep(()))
    keep_mode, line = strip_word(line, ("keep", "k"))
    if not keep_mode:
        _, line = strip_word(line, ("reroll", "r"))
        if line.strip() in ALL_WORDS:
            return Command("move", g.action_for_keep(()))
    values = parse_dice(line)
    if keep_mode:
        if Counter(values) - Counter(hand):
            raise g.IllegalAction(f"cannot keep {g.hand_str(values)}: your dice {g.hand_str(hand)} do not hold those values")
        if len(values) == 3:
            raise g.IllegalAction(
                'you must reroll at least one die (H4); to keep all three, "stop" (the leader only)'
            )
        return Command("move", g.action_for_keep(values))
    if not values:
        raise ValueError('type "stop", the values of the dice to reroll (e.g. "6 5", "65" or "all"), or "keep 4 2"; "?" for help')
    if len(values) > 3:
        raise g.IllegalAction(f"you have only 3 dice and typed {len(values)} values ({' '.join(map(str, values))})")
    if Counter(values) - Counter(hand):
        missing = Counter(values) - Counter(hand)
        extra = " ".join(map(str, sorted(missing.elements(), reverse=True)))
        raise g.IllegalAction(f"cannot reroll {extra}: your dice are {g.hand_str(hand)}")
    return Command("move", g.action_for_keep(_remove(hand, values)))


def legal_moves_text(hand: Sequence[int], legal: Sequence[int]) -> str:
    """The legal moves (engine actions) from ``hand``, each with what to type for it."""
    hand = g.canonical(hand)
    lines = [f"Legal moves with {g.hand_str(hand)}:"]
    for a in legal:
        if a == g.STOP:
            typed, what = "stop", f"stop with {g.hand_str(hand)}"
        else:
            keep = g.keep_for_action(a)
            reroll = _remove(hand, keep)
            typed = "all" if not keep else " ".join(map(str, reroll))
            what = "reroll all three" if not keep else f"keep {g.hand_str(keep)}, reroll {g.hand_str(reroll)}"
        lines.append(f'  type "{typed}"{"":<{6 - len(typed)}} {what}')
    return "\n".join(lines)


# --- the game -----------------------------------------------------------------------
class TerminalGame421:
    """A session of one or more games of 421 between a person and 1 or 2 bots."""

    def __init__(
        self,
        opponents: Sequence[Agent],
        dice: DiceSource,
        *,
        opponent_names: Sequence[str] | None = None,
        seat: int | str = "random",
        pot: int = 15,
        input_fn: InputFn = input,
        out: TextIO | None = None,
    ):
        self.n_players = len(opponents) + 1
        if self.n_players not in (2, 3):
            raise ValueError(f"421 is played by 2 or 3 players: give 1 or 2 opponents, got {len(opponents)}")
        if seat != "random" and not (isinstance(seat, int) and 0 <= seat < self.n_players):
            raise ValueError(f"seat must be 'random' or a seat in 0..{self.n_players - 1}, got {seat!r}")
        if pot < 1:
            raise ValueError(f"the pot needs at least one token, got {pot}")
        self.opponents = list(opponents)
        names = list(opponent_names) if opponent_names is not None else [str(getattr(a, "name", "bot")) for a in opponents]
        if len(names) != len(self.opponents):
            raise ValueError(f"{len(self.opponents)} opponents but {len(names)} names")
        self.opponent_names = names
        self.dice = dice
        self.seat_option = seat
        self.pot = pot
        self.input_fn = input_fn
        self.out = out if out is not None else sys.stdout
        self.wins = self.losses = 0
        self.human = 0
        self.agent_of_seat: dict[int, Agent] = {}
        self.name_of_seat: dict[int, str] = {}
        self.hinted = False
        self.session: Optional[Session] = None

    def say(self, text: str = "") -> None:
        print(wrap(text), file=self.out, flush=True)

    # names -------------------------------------------------------------------------
    def who(self, seat: int) -> str:
        return self.session.narrator.who(seat)

    def tokens_line(self, game: g.Game421) -> str:
        pot = game.pot if game.phase == g.CHARGE or game.pot else None
        return self.session.narrator.tokens_line(game.tokens, pot, out=game.winners)

    # play ------------------------------------------------------------------------
    def run(self, games: int = 1) -> int:
        """Play ``games`` games; returns the exit code (0, also when the person quits)."""
        return play_series(self.say, self.play_game, games,
                           lambda: f"you won {self.wins}, lost {self.losses}", lambda: self.wins + self.losses)

    def seat_players(self) -> None:
        n = self.n_players
        self.human = self.dice.draw_seat(n) if self.seat_option == "random" else int(self.seat_option)
        others = [s for s in range(n) if s != self.human]
        self.agent_of_seat = dict(zip(others, self.opponents))
        self.name_of_seat = dict(zip(others, self.opponent_names))

    def play_game(self) -> int:
        """One game to the end; returns the losing seat.  Raises ``QuitGame``."""
        self.seat_players()
        self.hinted = False
        labels = ["" if s == self.human else self.name_of_seat[s] for s in range(self.n_players)]
        bots = [self.agent_of_seat.get(s) for s in range(self.n_players)]
        self.session = session = Session("421", bots, self.human, self.dice, labels=labels, pot=self.pot)
        game = session.game
        seats = ", ".join(self.who(s) for s in range(self.n_players))
        self.say(f"421: {self.n_players} players ({seats}), pot {self.pot}.")
        self.say(fit(f"{self.who(game.first_player)} plays first (drawn at random).",
                     "Whoever ends up holding every token loses;", "'?' at your turn explains the rules.", indent=""))
        while True:
            for line in session.read():
                self.say(line)
            if session.over:
                break
            self.human_turn(game)
        if game.loser == self.human:
            self.losses += 1
        else:
            self.wins += 1
        return game.loser

    # the person's turn -------------------------------------------------------------
    def decision_text(self, game: g.Game421) -> str:
        seat, hand = game.current_player, game.dice_in_hand
        lines = []
        if seat == game.leader:
            lines.append(fit(
                f"Your turn, {self.who(seat)}: you lead this round, roll {game.rolls_used} of at most {game.rolls_allowed}.",
                f"If you stop now, every other player must make exactly {_plural(game.rolls_used, 'roll')}.",
                indent="",
            ))
        else:
            lines.append(fit(
                f"Your turn, {self.who(seat)}: roll {game.rolls_used} of {game.rolls_allowed}.",
                f"The leader {self.who(game.leader)} made {_plural(game.rolls_allowed, 'roll')},",
                f"so you must make exactly {game.rolls_allowed} (no stopping).",
                indent="",
            ))
        lines.append(f"  your dice:    {g.hand_str(hand)}")
        if game.hands_played:
            for s, h, rolls in game.hands_played:
                role = "leader, " if s == game.leader else ""
                lines.append(f"  played:       {self.who(s)} {g.hand_str(h)} ({role}{_plural(rolls, 'roll')})")
        else:
            lines.append("  played:       nothing yet this round")
        lines.append(f"  {self.tokens_line(game)}")
        return "\n".join(lines)

    def human_turn(self, game: g.Game421) -> None:
        self.say(self.decision_text(game))
        while True:
            action = self.ask(game)
            try:
                self.session.submit(action)
                return
            except g.IllegalAction as e:
                self.say(f"  Not a legal move: {self.explain_illegal(game, action, e)}. (\"legal\" lists your legal moves)")

    def explain_illegal(self, game: g.Game421, action: int, error: g.IllegalAction) -> str:
        if action == g.STOP and game.current_player != game.leader:
            return (
                f"you cannot stop: the leader {self.who(game.leader)} made {_plural(game.rolls_allowed, 'roll')}, "
                f"so you must make exactly {game.rolls_allowed} and this is roll {game.rolls_used} (H4)"
            )
        return str(error)

    def ask(self, game: g.Game421) -> int:
        """Ask the person for a move until one reads well (legality is checked on playing it)."""
        hand = game.dice_in_hand
        leader = game.current_player == game.leader
        question = "Stop, or reroll which dice?" if leader else "Reroll which dice?"

        def prompt() -> str:
            text = f"Your dice {g.hand_str(hand)} (roll {game.rolls_used} of {game.rolls_allowed}). {question} > "
            first, self.hinted = not self.hinted, True
            return f"{PROMPT_HINT if leader else FOLLOWER_HINT}\n{text}" if first else text

        return ask_move(self.input_fn, self.say, prompt, lambda line: parse_command(line, hand), HELP,
                        lambda: legal_moves_text(hand, game.legal_actions()), g.IllegalAction)


def play_terminal421(
    opponents: Sequence[Agent],
    dice: DiceSource,
    *,
    opponent_names: Sequence[str] | None = None,
    seat: int | str = "random",
    pot: int = 15,
    games: int = 1,
    input_fn: InputFn = input,
    out: TextIO | None = None,
) -> int:
    """Play ``games`` games of 421 against ``opponents`` (1 or 2 bots) in the terminal;
    returns the exit code.  ``seat`` is the person's seat (0-based) or "random".

    Ctrl-C anywhere in the session ends it cleanly (exit code 0), like end of input.
    """
    session = TerminalGame421(
        opponents, dice, opponent_names=opponent_names, seat=seat, pot=pot, input_fn=input_fn, out=out
    )
    try:
        return session.run(games)
    except KeyboardInterrupt:
        session.say("\nInterrupted: game abandoned. Bye.")
        return 0
