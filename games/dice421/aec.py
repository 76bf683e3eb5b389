"""PettingZoo AEC environment for 421, two or three players: ``env(n_players=N, pot=15)``."""

from __future__ import annotations

from typing import ClassVar

from games.dice421 import game as g
from games.dice421 import narrate
from envs.aec.base import DiceAECEnv, wrap
from games.dice421 import SPEC


def env(**kwargs) -> DiceAECEnv:
    """``raw_env(**kwargs)`` in the wrappers of PettingZoo's classic envs."""
    return wrap(raw_env(**kwargs))


class raw_env(DiceAECEnv):
    """
    ## Description
    421 is a dice game for 2 or 3 players with three dice and a pot of tokens;
    the aim is to get rid of tokens (`games/dice421/rules.md`). In the *charge* each
    round everyone rolls once and the lowest hand takes from the pot what the
    highest is worth (4-2-1 is worth 10, 1-1-1 7, ..., an unnamed hand 1). In the
    *discharge* the leader rolls up to three times and may stop after roll 1 or
    2; the others must make exactly as many rolls, and the highest hand gives the
    lowest its value in tokens. Ties at the bottom go to RAMPO. A player with no
    tokens leaves as a winner; whoever holds every token loses.

    Agents are `player_0`..`player_{N-1}` (seat i; P1..P3 in the narration). An
    agent is asked only when it has a real choice: the charge, first rolls,
    RAMPO and a follower's last roll are played for it.

    ## Observation Space
    A dict: `"observation"` is `Box(0, high, (25,), int64)`, laid out in
    `games.dice421.codec` (own dice, rolls, leader, then the other seats clockwise:
    played, hand, tokens, in game, leader; own tokens, pot, phase, players);
    tokens and the pot go up to `pot`. `"action_mask"` is
    `Box(0, 1, (29,), int8)`: the legal actions of the agent to move, all zeros
    for the others.

    ## Action Space
    `Discrete(29)`: 0 = STOP (the leader, after roll 1 or 2); `a` in 1..28 keeps
    the dice values `game421.KEEPS[a - 1]` (nothing, one die, or two) and rerolls
    the others.

    ## Rewards
    +1 to a player as soon as it leaves with no tokens (it is terminated; with
    three players the other two play on), -1 to the player left holding every
    token. An illegal move ends the game with -1 for the mover
    (`TerminateIllegalWrapper`).

    If the charge already decides a player's fate (it took no tokens, or took
    them all), it is revealed by the first step; if the game is over before
    anyone has a choice, `player_0`'s only legal action is 0, a formality that
    reveals the outcomes.

    ## Arguments
    - `n_players`: 2 or 3; default 2.
    - `pot`: tokens in the pot at the start, 1 to 100; default 15.
    - `render_mode`: `"ansi"` (render returns the text) or `"human"` (prints
      it): the rolls, takes and gives since the last render, then the tokens.

    `reset(seed=...)` draws every die and the first player from
    `np.random.default_rng(seed)`; `reset(options={"dice": ScriptedDice(...),
    "first_player": seat})` replays scripted dice or fixes the first player.

    ## Version History
    - v0: initial version.
    """

    metadata: ClassVar[dict] = {
        "render_modes": ["human", "ansi"],
        "name": "dice421_v0",
        "is_parallelizable": False,
        "render_fps": 2,
    }
    spec_of_game = SPEC

    def __init__(self, n_players: int = 2, pot: int = 15, render_mode: str | None = None):
        super().__init__(n_players=n_players, render_mode=render_mode, pot=pot)

    def status(self) -> str:
        game = self.game
        names = [self.who(s) for s in range(self.n_players)]
        tokens = narrate.tokens_text(game.tokens, names, game.pot if game.phase == g.CHARGE else None, game.winners)
        if game.is_over or game.dice_in_hand is None:
            return f"{tokens}. " + super().status()
        hand = narrate.dice_text(game.dice_in_hand)
        return (
            f"{tokens}. To move: {self.who(game.current_player)}, {hand} after roll {game.rolls_used} of "
            f"{game.rolls_allowed}."
        )
