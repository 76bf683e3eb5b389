"""PettingZoo AEC environment for Pig, two to eight players: ``env(n_players=N, goal=100, faces=6)``."""

from __future__ import annotations

from typing import ClassVar

from envs.aec.base import DiceAECEnv, wrap
from games.pig import SPEC


def env(**kwargs) -> DiceAECEnv:
    """``raw_env(**kwargs)`` in the wrappers of PettingZoo's classic envs."""
    return wrap(raw_env(**kwargs))


class raw_env(DiceAECEnv):
    """
    ## Description
    Pig (`games/pig/rules.md`): roll to add a die to your turn total, hold to bank
    it; a 1 loses the turn total; the first to reach the goal with score plus turn
    total wins. Agents `player_0`..`player_{N-1}`; `player_0` starts. An agent is
    asked only with a turn total above 0 (the engine plays each turn's first roll).

    ## Observation Space
    A dict: `"observation"` is `Box(0, goal - 1 + faces, (N + 1,), int64)`: the
    agent's score, its turn total (0 when another seat moves), then every other
    seat's score clockwise. `"action_mask"` is `Box(0, 1, (2,), int8)`.

    ## Action Space
    `Discrete(2)`: 0 = roll, 1 = hold.

    ## Rewards
    +1 to the winner, -1 to every other player, when the game ends. An illegal move
    ends the game with -1 for the mover (`TerminateIllegalWrapper`).

    ## Arguments
    - `n_players`: 2 to 8; `goal`: default 100; `faces`: default 6;
      `render_mode`: `"ansi"` or `"human"`.

    ## Version History
    - v0: initial version.
    """

    metadata: ClassVar[dict] = {
        "render_modes": ["human", "ansi"],
        "name": "pig_v0",
        "is_parallelizable": False,
        "render_fps": 2,
    }
    spec_of_game = SPEC

    def __init__(self, n_players: int = 2, goal: int = 100, faces: int = 6, render_mode: str | None = None):
        super().__init__(n_players=n_players, render_mode=render_mode, goal=goal, faces=faces)

    def status(self) -> str:
        game = self.game
        scores = ", ".join(f"{self.who(s)} {game.scores[s]}" for s in range(self.n_players))
        return f"Scores: {scores}. " + super().status()
