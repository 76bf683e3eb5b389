"""Gymnasium environment for 421 (two or three players): one agent against ready opponents."""

from __future__ import annotations

import sys
from typing import Any, Optional

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from envs import policies
from games.dice421 import narrate
from games.dice421 import codec as codec421
from core import engine
from games.dice421 import game as g
from core.dice import RandomDice
from envs.policies import RandomPolicy

REROLL_ALL = g.action_for_keep(())  # legal at every decision


class Dice421Env(gym.Env):
    """
    ## Description
    421 is a dice game for 2 or 3 players with three shared dice and a pot of
    tokens; the aim is to get rid of tokens. Hands rank from 4-2-1 (worth 10
    tokens) down through 1-1-1 (7), 1-1-x and triples, straights and 2-2-1 (2),
    to every other hand (1) (H1). In the *charge* each round everyone rolls once
    and the lowest hand takes from the pot what the highest is worth (H2), until
    the pot is empty (H3). In the *discharge* each round the leader rolls up to
    three times and may stop after roll 1 or 2; every other player must then make
    exactly as many rolls (rerolling at least one die each time), and the highest
    hand gives the lowest hand its value in tokens (H4). Ties at the bottom are
    settled by RAMPO (H6). A player with no tokens leaves as a winner; whoever
    ends with every token loses (H5). Rules: `docs/rules421.md`.

    The agent holds one seat; the other seats are opponent agents played inside
    `step()`. The agent is asked only where the rules give it a choice: the charge,
    first rolls, RAMPO and turns with a single roll are played for it.

    ## Action Space
    `Discrete(29)`, the engine's actions: `0` = STOP (leader only, after roll 1
    or 2); `a` in 1..28 keeps the dice *values* `game421.KEEPS[a - 1]` and rerolls
    the others:

    | a | keep | a | keep | a | keep | a | keep |
    |---|------|---|------|---|------|---|------|
    | 0 | STOP | 8 | 1-1 | 15 | 4-2 | 22 | 5-5 |
    | 1 | nothing (reroll all) | 9 | 2-1 | 16 | 4-3 | 23 | 6-1 |
    | 2..7 | one 1, 2, ..., 6 | 10 | 2-2 | 17 | 4-4 | 24 | 6-2 |
    | | | 11 | 3-1 | 18 | 5-1 | 25 | 6-3 |
    | | | 12 | 3-2 | 19 | 5-2 | 26 | 6-4 |
    | | | 13 | 3-3 | 20 | 5-3 | 27 | 6-5 |
    | | | 14 | 4-1 | 21 | 5-4 | 28 | 6-6 |

    A keep is legal when the hand holds those values. The legal set is
    `action_masks()` (as MaskablePPO reads it) and `info["action_mask"]`; it is
    never empty, and it is exactly the engine's `legal_actions()`. An action is
    an integer (a Python or numpy integer, or a 0-d integer array); anything
    else raises `core.engine.IllegalAction` (a `ValueError`). By default
    (`illegal_action="reroll_all"`) an illegal integer plays action 1 (always
    legal) instead and sets `info["illegal_action"] = True`, so every action of
    the space is accepted, as Gymnasium expects; with `illegal_action="raise"`
    it raises `IllegalAction` with the reason.

    ## Observation Space
    `Box(0, high, (25,), int64)`, laid out in `games.dice421.codec` (decode it with
    `codec421.decode`): own dice high to low (3), rolls used, rolls allowed, is
    leader, the leader's roll count n (0 if the agent leads); then for each other
    seat clockwise from the agent (two slots; the second is zeros with two
    players): played this round, the hand played (3 dice, 0s if not), tokens, still
    in the game, is leader; then own tokens, pot, phase (0 charge, 1 discharge,
    2 over), number of players. Tokens and pot go up to `pot`.

    ## Rewards
    +1 when the agent wins (leaves the game with no tokens), -1 when it loses
    (holds every token), 0 on every other step.

    ## Starting State
    The first player is drawn, the whole charge is played, then play goes on until
    the agent has a choice. If the agent's game is decided before then (it holds
    every token or none after the charge, or it wins or loses in rounds where it
    had no choice), `reset()` returns that position with `info["decided"] = True`
    and a mask allowing only action 0; the next `step()` (any action in the space)
    ends the episode with the reward, so every game counts.

    ## Episode End
    Terminates when the agent leaves the game as a winner or loses it (with three
    players, the other two may still be playing). No truncation: games end with
    probability 1; wrap the env in `TimeLimit` to bound them. Stepping after the
    end raises `RuntimeError`: call `reset()`.

    ## Arguments
    - `opponent`: a ready agent (`act(obs, action_mask) -> int`) for every other
      seat, or a list of `n_players - 1` of them, one per other seat clockwise
      from the agent (`None` for a seat: the default); default `None`: a
      uniformly random legal policy drawn from the env's `np_random`. Opponents
      see `codec421.observe(game, seat)`.
      Names are not accepted here: pass `agents.make_agent("421", "heuristic")`,
      or build the env with `agents.make_env("Dice421-v0", opponent="heuristic")`.
      At every `reset()` an opponent with `reseed(seed)` is reseeded with a seed
      drawn from the env's `np_random`, so the same seed and actions give the
      same game.
    - `n_players`: 2 or 3; default 2.
    - `agent_seat`: a seat `0..n_players-1` or `"random"` (drawn each episode);
      default `"random"`.
    - `pot`: tokens in the pot at the start; default 15.
    - `illegal_action`: `"reroll_all"` (default) or `"raise"`.
    - `render_mode`: `"ansi"` or `"human"`; either narrates the events since the
      last render (`games.dice421.narrate.Narrator421`: rolls, takes, gives, RAMPO,
      leaving) and the tokens.

    `reset(options=...)` accepts `"dice"` (a `DiceSource`, e.g. `ScriptedDice`,
    which also supplies the first-player draw), `"agent_seat"` and `"first_player"`.

    ## Version History
    - v0: initial version.
    """

    metadata = {"render_modes": ["ansi", "human"], "render_fps": 4}

    def __init__(
        self,
        opponent: Any = None,
        n_players: int = 2,
        agent_seat: int | str = "random",
        pot: int = 15,
        illegal_action: str = "reroll_all",
        render_mode: Optional[str] = None,
    ):
        n_players = engine.check_count(n_players, g.MIN_PLAYERS, g.MAX_PLAYERS, "n_players")
        self._check_seat(agent_seat, n_players)
        pot = g.check_options(pot=pot)["pot"]
        if illegal_action not in ("raise", "reroll_all"):
            raise ValueError(f"illegal_action must be 'raise' or 'reroll_all', got {illegal_action!r}")
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']}, got {render_mode!r}")
        self._default_opponent = RandomPolicy()
        given = policies.seat_opponents(opponent, n_players - 1, "421", "Dice421-v0", "heuristic")
        # By slot: slot k plays seat agent_seat + 1 + k (mod n).
        self.opponents = [self._default_opponent if o is None else o for o in given]
        self.n_players = int(n_players)
        self.agent_seat_option = agent_seat
        self.pot = int(pot)
        self.illegal_action = illegal_action
        self.render_mode = render_mode
        self.action_space = spaces.Discrete(g.N_ACTIONS)
        low, high = codec421.observation_bounds(self.pot)
        self.observation_space = spaces.Box(low, high, shape=(codec421.OBS_SIZE,), dtype=np.int64)
        self.game: Optional[g.Game421] = None
        self.seat = 0
        self._agents: list = []
        self._ended = False  # the episode's last step was returned
        self._narrator: Optional[narrate.Narrator421] = None
        self._shown = 0  # events already rendered

    # --- Gymnasium API -------------------------------------------------------
    def reset(self, *, seed: Optional[int] = None, options: Optional[dict] = None):
        super().reset(seed=seed)
        options = options or {}
        seat = options.get("agent_seat", self.agent_seat_option)
        self._check_seat(seat, self.n_players)
        self.seat = int(self.np_random.integers(self.n_players)) if seat == "random" else int(seat)
        self._default_opponent.rng = self.np_random
        policies.reseed_opponents(self.opponents, self.np_random)
        n = self.n_players
        self._agents = policies.table(self.seat, self.opponents)
        dice = options.get("dice") or RandomDice(self.np_random)
        self.game = g.Game421(n, pot=self.pot, dice=dice, first_player=options.get("first_player"))
        self._ended = False
        self._narrator = narrate.Narrator421(n, ["bot"] * n, you=self.seat)
        self._shown = 0
        self._advance()
        if self.render_mode == "human":
            self.render()
        return self._obs(), self._info()

    def step(self, action):
        if self.game is None:
            raise RuntimeError("call reset() before step()")
        if self._ended:
            raise RuntimeError("the episode is over: call reset() to start a new one")
        action = engine.check_action(action)
        info_extra = {}
        if not self._agent_done():
            if action not in self.game.legal_actions():
                if self.illegal_action == "raise":
                    self.game.apply(action)  # raises IllegalAction with the reason
                action = REROLL_ALL
                info_extra["illegal_action"] = True
            self.game.apply(action)
            self._advance()
        elif not 0 <= action < g.N_ACTIONS:  # decided: nothing is played, any action in the space will do
            if self.illegal_action == "raise":
                raise engine.IllegalAction(f"an action is an integer in 0..{g.N_ACTIONS - 1}, got {action}")
            info_extra["illegal_action"] = True
        done = self._agent_done()
        reward = self._outcome() if done else 0.0
        self._ended = done
        if self.render_mode == "human":
            self.render()
        return self._obs(), reward, done, False, {**self._info(), **info_extra}

    def action_masks(self) -> np.ndarray:
        """Legal actions for the agent now (what MaskablePPO calls); only 0 once its game is decided."""
        if self.game is None or self._agent_done():
            return codec421.legal_mask([g.STOP])
        return codec421.legal_mask(self.game.legal_actions())

    def render(self):
        if self.render_mode is None:
            gym.logger.warn("render() called without a render_mode; pass render_mode='ansi' or 'human'")
            return None
        if self.game is None:
            return None
        text = self._render_text()
        if self.render_mode == "ansi":
            return text
        sys.stdout.write(text + "\n")
        return None

    # --- internals -----------------------------------------------------------
    @staticmethod
    def _check_seat(seat, n_players: int) -> None:
        if seat == "random":
            return
        if isinstance(seat, (bool, np.bool_)) or not isinstance(seat, (int, np.integer)) or not 0 <= seat < n_players:
            raise ValueError(f"agent_seat must be a seat 0..{n_players - 1} or 'random', got {seat!r}")

    def _agent_done(self) -> bool:
        return self.game.outcome(self.seat) is not None

    def _outcome(self) -> float:
        return float(self.game.outcome(self.seat))

    def _advance(self) -> None:
        """Let the opponents play until the agent has a choice or its game is decided."""
        engine.play_out(
            self.game, self._agents, codec421,
            until=lambda game: game.current_player == self.seat or game.outcome(self.seat) is not None,
        )

    def _obs(self) -> np.ndarray:
        return codec421.observe(self.game, self.seat)

    def _info(self) -> dict:
        game = self.game
        return {
            "action_mask": self.action_masks(),
            "seat": self.seat,
            "decided": self._agent_done(),
            "tokens": list(game.tokens),
            "phase": game.phase,
            "winners": list(game.winners),
            "loser": game.loser,
        }

    def _render_text(self) -> str:
        game, narrator = self.game, self._narrator
        lines = narrator.lines(game.events[self._shown :])
        self._shown = len(game.events)
        lines.append(narrator.tokens_line(game.tokens, game.pot, out=game.winners))
        if not self._agent_done() and game.current_player == self.seat:
            role = "you lead: STOP or keep" if game.leader == self.seat else f"you must make {game.rolls_allowed} rolls"
            lines.append(f"Your dice {narrate.dice_text(game.dice_in_hand)}, roll {game.rolls_used} of "
                         f"{game.rolls_allowed} ({role})")
        return "\n".join(lines)
