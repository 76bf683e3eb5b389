"""PettingZoo AEC environment for 420, two to eight players: ``env(n_players=N)``."""

from __future__ import annotations

from typing import ClassVar

from games.dice420 import narrate
from envs.aec.base import DiceAECEnv, wrap
from games.dice420 import SPEC


def env(**kwargs) -> DiceAECEnv:
    """``raw_env(**kwargs)`` in the wrappers of PettingZoo's classic envs."""
    return wrap(raw_env(**kwargs))


class raw_env(DiceAECEnv):
    """
    ## Description
    420 (Mark Steere) is a race to make four dice total exactly 20
    (`games/dice420/rules.md`). Each player keeps a hand of four dice. A first turn
    rolls all four (R1); later turns reroll 1 to 4 dice, keeping only what R3
    allows (one die of 5+, two dice summing 10+, three summing 15+); a hand over
    20 rerolls all four (R4). With two players (`player_0` Red moves first,
    `player_1` Blue) the first to make 20 wins. With more, Player 1 is drawn at
    random; whoever makes 20 wins the round and drops out, the others play a new
    round started by the next remaining player clockwise from the previous
    round's starter, and the last player left loses (R7).

    Agents are `player_0`..`player_{N-1}` (seat i, clockwise). An agent is asked
    only when it has a real choice: first rolls, resets and hands with nothing to
    keep are played for it.

    ## Observation Space
    A dict: `"observation"` is `Box(1, 6, (8,), int64)` with two players and
    `Box(0, 6, (4N,), int64)` with N > 2: the agent's hand (dice ascending), then
    every other seat's clockwise; 0 0 0 0 for a player without a hand (out, or
    not rolled yet this round), 1 1 1 1 for an unrolled hand with two players
    (`games.dice420.codec`). `"action_mask"` is `Box(0, 1, (14,), int8)`: the legal
    keeps of the agent to move, all zeros for the others.

    ## Action Space
    `Discrete(14)`: the dice values kept, `game420.KEEPS[a]` (0 = reroll all
    four, 1 = keep 5, 2 = keep 6, ..., 13 = keep 6-6-6); the rest are rerolled.

    ## Rewards
    +1 to a player as soon as it makes 20 (it cannot lose any more; it is
    terminated and the others play on), -1 to the last player left. With two
    players: +1 to the winner, -1 to the loser. An illegal move ends the game
    with -1 for the mover (`TerminateIllegalWrapper`).

    If the dice decide a player's fate before anyone has a choice (a first roll
    makes 20), it is revealed by the first step; if that ends the game,
    `player_0`'s only legal action is 0, a formality that reveals the outcome.

    ## Arguments
    - `n_players`: 2 to 8; default 2.
    - `render_mode`: `"ansi"` (render returns the text) or `"human"` (prints
      it): the moves since the last render, then every hand.

    `reset(seed=...)` draws every die from `np.random.default_rng(seed)`;
    `reset(options={"dice": ScriptedDice(...), "first_player": seat})` replays
    scripted dice or fixes Player 1.

    ## Version History
    - v0: initial version.
    """

    metadata: ClassVar[dict] = {
        "render_modes": ["human", "ansi"],
        "name": "dice420_v0",
        "is_parallelizable": False,
        "render_fps": 2,
    }
    spec_of_game = SPEC

    def __init__(self, n_players: int = 2, render_mode: str | None = None):
        super().__init__(n_players=n_players, render_mode=render_mode)

    def status(self) -> str:
        game = self.game
        hands = ", ".join(
            f"{self.who(s)} "
            + (
                f"out (place {game.finish_order.index(s) + 1})"
                if s in game.finish_order
                else narrate.hand_total(game.hands[s])
            )
            for s in range(self.n_players)
        )
        return f"Hands: {hands}. " + super().status()
