"""Gymnasium environment for two-player 420 against a built-in opponent."""

from __future__ import annotations

import sys
from typing import Any, Optional

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from envs import codec420
from envs import game420 as g
from envs.dice import RandomDice

SEATS = {"red": g.RED, "blue": g.BLUE}


class Dice420Env(gym.Env):
    """
    ## Description
    420 (Mark Steere, 2025) is a race to make four dice total exactly 20. Red and
    Blue each keep a hand of four dice. Each first turn rolls all four (R1); on
    every later turn a player must reroll 1 to 4 of their dice (R2), keeping only
    what the restrictions allow: reroll 3 only if the kept die is 5 or 6, reroll 2
    only if the kept pair totals 10 or more, reroll 1 only if the kept three total
    15 or more (R3); a hand over 20 must reroll all four (R4). The first hand to
    total exactly 20 wins (R5). Red moves first (R6).

    The agent holds one seat; the other is played inside `step()` by the opponent
    agent given at construction. The agent is asked to move only when it has a
    real choice: its first roll and forced resets (R4) are played for it.

    ## Action Space
    `Discrete(14)`: which dice *values* to keep; the rest are rerolled. Action `a`
    keeps `game420.KEEPS[a]`:

    | a | keep | a | keep | a | keep |
    |---|------|---|------|---|------|
    | 0 | nothing (reroll all 4) | 5 | 5-6 | 10 | 5-5-5 |
    | 1 | 5 | 6 | 6-6 | 11 | 5-5-6 |
    | 2 | 6 | 7 | 3-6-6 | 12 | 5-6-6 |
    | 3 | 4-6 | 8 | 4-5-6 | 13 | 6-6-6 |
    | 4 | 5-5 | 9 | 4-6-6 | | |

    These are all the keeps R3 allows. A keep is legal when the hand holds those
    dice (and the hand is not over 20). The legal set is `action_masks()` (as
    MaskablePPO reads it) and `info["action_mask"]`; it is never empty. An illegal
    action raises `game420.IllegalMove` (a `ValueError`), unless
    `illegal_action="reroll_all"`, which plays action 0 (always legal) instead and
    sets `info["illegal_action"] = True` (useful for API checkers that sample
    unmasked actions).

    ## Observation Space
    `Box(1, 6, (8,), int64)`: the agent's hand sorted ascending, then the
    opponent's hand sorted ascending, e.g. `[1 5 6 6 2 3 3 4]`. The seat is not
    part of it (the rules are the same for both seats once both have rolled); it
    is in `info["seat"]`.

    ## Rewards
    +1 when the agent wins, -1 when the opponent wins, 0 on every other step.

    ## Starting State
    Red rolls, then Blue rolls (R1), then play proceeds until the agent has a
    choice. If a first roll already totals 20, the game is decided before the
    agent's first choice: `reset()` then returns the final position with
    `info["decided"] = True` and a mask allowing only action 0, and the next
    `step()` ends the episode with the reward, so every game counts.

    ## Episode End
    Terminates when a hand totals exactly 20. No truncation (games end with
    probability 1; under optimal play they last about 9 turns).

    ## Arguments
    - `opponent`: an agent (`act(obs, action_mask) -> int`) or a bot name
      (`"random"`, `"greedy"`, `"foundation"`, `"optimal"`); default `"greedy"`.
    - `agent_seat`: `"red"`, `"blue"` or `"random"` (drawn each episode); default `"random"`.
    - `illegal_action`: `"raise"` (default) or `"reroll_all"`.
    - `render_mode`: `"ansi"` or `"human"`.

    ## Version History
    - v0: initial version.
    """

    metadata = {"render_modes": ["ansi", "human"], "render_fps": 4}

    def __init__(
        self,
        opponent: Any = "greedy",
        agent_seat: str = "random",
        illegal_action: str = "raise",
        render_mode: Optional[str] = None,
    ):
        if agent_seat not in (*SEATS, "random"):
            raise ValueError(f"agent_seat must be 'red', 'blue' or 'random', got {agent_seat!r}")
        if illegal_action not in ("raise", "reroll_all"):
            raise ValueError(f"illegal_action must be 'raise' or 'reroll_all', got {illegal_action!r}")
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']}, got {render_mode!r}")
        if isinstance(opponent, str):
            from agents import make_agent

            opponent = make_agent("420", opponent)
        self.opponent = opponent
        self.agent_seat_option = agent_seat
        self.illegal_action = illegal_action
        self.render_mode = render_mode
        self.action_space = spaces.Discrete(g.N_ACTIONS)
        self.observation_space = spaces.Box(1, 6, shape=(codec420.OBS_SIZE,), dtype=np.int64)
        self.game: Optional[g.Game420] = None
        self.seat = g.RED
        self._shown = 0  # turns of history already rendered

    # --- Gymnasium API -------------------------------------------------------
    def reset(self, *, seed: Optional[int] = None, options: Optional[dict] = None):
        super().reset(seed=seed)
        seat = (options or {}).get("agent_seat", self.agent_seat_option)
        if seat == "random":
            self.seat = int(self.np_random.integers(2))
        elif seat in SEATS:
            self.seat = SEATS[seat]
        else:
            raise ValueError(f"agent_seat must be 'red', 'blue' or 'random', got {seat!r}")
        self.game = g.Game420(2, dice=(options or {}).get("dice") or RandomDice(self.np_random))
        self._shown = 0
        self._advance()
        if self.render_mode == "human":
            self.render()
        return self._obs(), self._info()

    def step(self, action):
        if self.game is None:
            raise RuntimeError("call reset() before step()")
        game = self.game
        info_extra = {}
        if not game.is_over:
            action = int(action)
            legal = game.legal_actions()
            if action not in legal:
                if self.illegal_action == "raise":
                    game.play(action)  # raises IllegalMove with the reason
                action = g.REROLL_ALL
                info_extra["illegal_action"] = True
            game.play(action)
            self._advance()
        reward = 0.0
        if game.is_over:
            reward = 1.0 if game.winner == self.seat else -1.0
        if self.render_mode == "human":
            self.render()
        return self._obs(), reward, game.is_over, False, {**self._info(), **info_extra}

    def action_masks(self) -> np.ndarray:
        """Legal actions for the agent now (what MaskablePPO calls)."""
        if self.game is None or self.game.is_over:
            mask = np.zeros(g.N_ACTIONS, dtype=bool)
            mask[g.REROLL_ALL] = True
            return mask
        return codec420.action_mask(self.game.hands[self.seat])

    def render(self):
        if self.render_mode is None:
            gym.logger.warn("render() called without a render_mode; pass render_mode='ansi' or 'human'")
            return None
        text = self._render_text()
        if self.render_mode == "ansi":
            return text
        sys.stdout.write(text + "\n")
        return None

    # --- internals -----------------------------------------------------------
    def _advance(self) -> None:
        """Play forced turns and the opponent's turns until the agent has a choice."""
        game = self.game
        while not game.is_over:
            legal = game.legal_actions()
            if len(legal) == 1:
                game.play(legal[0])
            elif game.current == self.seat:
                return
            else:
                obs = codec420.observe(game, game.current)
                game.play(int(self.opponent.act(obs, codec420.action_mask(game.hands[game.current]))))

    def _obs(self) -> np.ndarray:
        hands = self.game.hands
        own, opp = hands[self.seat], hands[1 - self.seat]
        # A hand not rolled yet (Blue's, when Red's first roll won) shows as 1-1-1-1.
        return codec420.encode(own or (1,) * 4, opp or (1,) * 4)

    def _info(self) -> dict:
        game = self.game
        return {
            "action_mask": self.action_masks(),
            "seat": g.SEAT_NAMES[self.seat].lower(),
            "hands": tuple(game.hands),
            "decided": game.is_over,
            "winner": None if game.winner is None else g.SEAT_NAMES[game.winner].lower(),
        }

    def _render_text(self) -> str:
        game = self.game
        lines = []
        for turn in game.history[self._shown :]:
            kept = "rolled all four" if not turn.kept else f"kept {g.format_hand(turn.kept)}, rolled {g.format_hand(turn.rolled)}"
            lines.append(f"  {game.seat_name(turn.seat)} {kept} -> {g.format_hand(turn.hand)}" + ("  = 20!" if turn.won else ""))
        self._shown = len(game.history)
        for seat in (g.RED, g.BLUE):
            hand = game.hands[seat]
            who = "you" if seat == self.seat else "opponent"
            total = f"(total {sum(hand)})" if hand else ""
            lines.append(f"{game.seat_name(seat):<4} [{who:<8}] {g.format_hand(hand):<9} {total}")
        if game.is_over:
            lines.append(f"{game.seat_name(game.winner)} wins.")
        return "\n".join(lines)
