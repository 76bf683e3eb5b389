"""One Gymnasium env over any game's engine and codec: one agent at a table of ready opponents.

A game's env is a subclass that names its :class:`~core.spec.GameSpec` (``spec``)
and keeps the toy_text-style documentation of its game; everything else (seats,
options, opponents, masks, rewards, rendering) is here.  The opponents are
agents (anything with ``act(obs, action_mask)``), never names, so this module
imports no agent code; without one a seat plays uniformly random legal moves
drawn from the env's own generator.
"""

from __future__ import annotations

import sys
from typing import Any, Optional

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from core import engine
from core.dice import RandomDice
from core.spec import GameSpec
from envs import policies
from envs.policies import RandomPolicy


class TableEnv(gym.Env):
    """A seat at a table of ``n_players`` of ``spec``'s game; see each game's subclass for its rules.

    Arguments: ``opponent`` (an agent for every other seat, or a list, one per seat
    clockwise from the agent), ``n_players``, ``agent_seat`` (a seat, its name at the
    table in lower case, or ``"random"``: drawn at every reset), ``illegal_action``
    (``"raise"``: raise ``IllegalAction`` with the rules' reason; else the game's
    fallback, ``fallback[0]``: play ``fallback[1]``, or the first legal action, instead
    and set ``info["illegal_action"]``), ``render_mode`` (``"ansi"`` or ``"human"``)
    and the game's options (e.g. ``goal=50``), each checked by the game's spec.

    The reward is the game's outcome for the agent, given once its fate is known:
    +1 when it can no longer lose, -1 when it lost.  ``reset(options=...)`` accepts
    ``"dice"`` (a ``DiceSource``, e.g. ``ScriptedDice``), ``"agent_seat"`` and
    ``"first_player"``.
    """

    spec_of_game: GameSpec  # set by each game's subclass
    # What illegal_action calls playing a legal action instead, and that action (None: the first legal)
    fallback: tuple[str, Optional[int]] = ("first_legal", None)
    metadata = {"render_modes": ["ansi", "human"], "render_fps": 4}

    def __init__(
        self,
        opponent: Any = None,
        n_players: Optional[int] = None,
        agent_seat: int | str = "random",
        illegal_action: Optional[str] = None,
        render_mode: Optional[str] = None,
        **options,
    ):
        game = self.spec_of_game
        self.n_players = game.check_players(game.min_players if n_players is None else n_players, "n_players")
        self.options = game.check_options(options)
        self._seat_of(agent_seat)  # checks it
        illegal_action = self.fallback[0] if illegal_action is None else illegal_action
        if illegal_action not in ("raise", self.fallback[0]):
            raise ValueError(f"illegal_action must be 'raise' or {self.fallback[0]!r}, got {illegal_action!r}")
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']}, got {render_mode!r}")
        self._default_opponent = RandomPolicy()
        example = next(iter(game.bots), "random")
        given = policies.seat_opponents(opponent, self.n_players - 1, game.name, game.env_id, example)
        self.opponents = [self._default_opponent if o is None else o for o in given]
        self.agent_seat_option = agent_seat
        self.illegal_action = illegal_action
        self.render_mode = render_mode
        self.action_space = spaces.Discrete(game.n_actions)
        self.observation_space = game.observation_space(self.n_players, **self.options)
        self.game = None
        self.seat = 0
        self._agents: list = []
        self._ended = False
        self._narrator = None
        self._shown = 0

    # --- Gymnasium API -------------------------------------------------------
    def reset(self, *, seed: Optional[int] = None, options: Optional[dict] = None):
        super().reset(seed=seed)
        options = options or {}
        seat = self._seat_of(options.get("agent_seat", self.agent_seat_option))
        self.seat = int(self.np_random.integers(self.n_players)) if seat is None else seat
        self._default_opponent.rng = self.np_random
        policies.reseed_opponents(self.opponents, self.np_random)
        self._agents = policies.table(self.seat, self.opponents)
        dice = options.get("dice") or RandomDice(self.np_random)
        self.game = self.spec_of_game.new_game(
            self.n_players, dice=dice, first_player=options.get("first_player"), **self.options
        )
        self._ended = False
        self._narrator = self.spec_of_game.narrator(self.n_players, ["bot"] * self.n_players, you=self.seat)
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
        extra = {}
        if not self._decided():
            legal = self.game.legal_actions()
            if action not in legal:
                if self.illegal_action == "raise":
                    self.game.apply(action)  # raises IllegalAction with the reason
                action = legal[0] if self.fallback[1] is None else self.fallback[1]
                extra["illegal_action"] = True
            self.game.apply(action)
            self._advance()
        elif not 0 <= action < self.spec_of_game.n_actions:
            if self.illegal_action == "raise":
                raise engine.IllegalAction(
                    f"an action is an integer in 0..{self.spec_of_game.n_actions - 1}, got {action}"
                )
            extra["illegal_action"] = True
        done = self._decided()
        reward = self._reward() if done else 0.0
        self._ended = done
        if self.render_mode == "human":
            self.render()
        return self._obs(), reward, done, False, {**self._info(), **extra}

    def action_masks(self) -> np.ndarray:
        """Legal actions for the agent now (what MaskablePPO calls); only 0 once its fate is known."""
        codec = self.spec_of_game.codec
        if self.game is None or self._decided():
            return codec.legal_mask([0])
        return codec.legal_mask(self.game.legal_actions())

    def render(self):
        if self.render_mode is None:
            gym.logger.warn("render() called without a render_mode; pass render_mode='ansi' or 'human'")
            return None
        if self.game is None:
            return None
        lines = self._narrator.lines(self.game.events[self._shown :])
        self._shown = len(self.game.events)
        text = "\n".join(lines + self._status())
        if self.render_mode == "ansi":
            return text
        sys.stdout.write(text + "\n")
        return None

    # --- what a game's subclass may add ---------------------------------------
    def _reward(self) -> float:
        """The reward once the agent's fate is known: its outcome, +1 or -1."""
        return float(self.game.outcome(self.seat))

    def _game_info(self) -> dict:
        """The game's own entries of ``info`` (its state as a player sees it)."""
        return {}

    def _status(self) -> list[str]:
        """Lines under the narration in ``render()``: the table as it stands."""
        return []

    # --- internals -----------------------------------------------------------
    def _seat_of(self, seat) -> Optional[int]:
        """The agent's seat for an ``agent_seat`` value (None: draw it), or ValueError."""
        n = self.n_players
        names = [self.spec_of_game.narrator(n).seat_name(s).lower() for s in range(n)]
        if isinstance(seat, str):
            if seat == "random":
                return None
            if seat in names:
                return names.index(seat)
        elif not isinstance(seat, (bool, np.bool_)) and isinstance(seat, (int, np.integer)) and 0 <= seat < n:
            return int(seat)
        raise ValueError(
            f"agent_seat must be a seat 0..{n - 1}, its name ({', '.join(map(repr, names))}) or 'random', got {seat!r}"
        )

    def _decided(self) -> bool:
        return self.game.outcome(self.seat) is not None

    def _advance(self) -> None:
        """Let the opponents play until the agent has a choice or its fate is known."""
        engine.play_out(
            self.game,
            self._agents,
            self.spec_of_game.codec,
            until=lambda game: game.current_player == self.seat or game.outcome(self.seat) is not None,
        )

    def _obs(self) -> np.ndarray:
        return self.spec_of_game.codec.observe(self.game, self.seat)

    def _info(self) -> dict:
        return {"action_mask": self.action_masks(), "decided": self._decided(), "seat": self.seat, **self._game_info()}
