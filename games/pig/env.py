"""Gymnasium environment for Pig (2 to 8 players): one agent against ready opponents."""

from __future__ import annotations

from envs.table_env import TableEnv
from games.pig import SPEC


class PigEnv(TableEnv):
    """
    ## Description
    Pig (Neller and Presser; OpenSpiel's `pig`): on your turn you roll one die as
    often as you like, adding each face to your turn total, or hold to bank the
    turn total into your score. A roll of 1 loses the turn total and ends the turn
    (P1). The first player whose score plus turn total reaches the goal wins at
    once (P2). Players move in seat order and seat 0 starts (P3). The first roll of
    every turn is played by the engine, so the agent is asked only with a turn
    total above 0 (`games/pig/rules.md`).

    ## Action Space
    `Discrete(2)`: 0 = roll, 1 = hold (OpenSpiel's numbering). Both are legal at
    every decision (`info["action_mask"]`, `action_masks()`).

    ## Observation Space
    `Box(0, goal - 1 + faces, (n_players + 1,), int64)`: your score, your turn
    total, then every other seat's score clockwise from yours.

    ## Rewards
    +1 when you win, -1 when another player wins; 0 before.

    ## Starting State
    Every score 0; seat 0 to move with its first roll played (P3). The agent's
    seat is drawn at every reset (`agent_seat="random"`) or fixed.

    ## Episode End
    The episode ends when a player reaches the goal. There is no truncation: a
    game ends with probability 1.

    ## Arguments
    - `opponent`: an agent (`act(obs, action_mask)`) for every other seat, or a
      list, one per seat clockwise from the agent; default: random legal moves.
    - `n_players`: 2 to 8; default 2. `agent_seat`: a seat or `"random"`.
    - `goal`: 1 to 1000, default 100; `faces`: 2 to 20, default 6.
    - `illegal_action`: `"first_legal"` (default; sets `info["illegal_action"]`)
      or `"raise"`. `render_mode`: `"ansi"` or `"human"`.

    `info` holds `action_mask`, `decided`, `seat`, `scores` and `turn_total`.

    ## Version History
    - v0: initial version.
    """

    spec_of_game = SPEC

    def _game_info(self) -> dict:
        return {"scores": list(self.game.scores), "turn_total": self.game.turn_total}

    def _status(self) -> list[str]:
        game = self.game
        return [
            "Scores: "
            + ", ".join(f"{self._narrator.who(s)} {game.scores[s]}" for s in range(self.n_players))
            + f" (goal {game.goal})."
        ]
