"""One PettingZoo AEC environment over any rules engine of ``core.engine``.

:class:`DiceAECEnv` knows nothing of a particular game: it reads the engine,
codec, narrator, player range and options from the game's spec, which each
game's ``aec`` module names (``spec_of_game``) with its metadata, adding a
status line for ``render()``.

How the engine maps onto the AEC cycle:

* agent ``player_i`` is seat ``i``; ``agent_selection`` is the engine's
  ``current_player`` (a seat is asked only when it has a real choice);
* after every step, each seat whose ``outcome`` has become known gets it as its
  reward (+1 it left as a winner, -1 it lost), once, and is terminated; the
  terminated agents are then selected first (``_deads_step_first``) so that the
  caller's ``step(None)`` removes them, before play goes on;
* PettingZoo requires every agent alive after ``reset()``, but the dice can
  settle a seat's fate before anyone has a choice.  Such outcomes are revealed
  by the first step.  If the game is already over at ``reset()`` nobody has a
  move, so ``player_0`` is given a formality: action 0 is its only legal action,
  it changes nothing, and the step reveals every outcome.
"""

from __future__ import annotations

from typing import Any, ClassVar

import gymnasium
import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from core.dice import RandomDice
from core.engine import IllegalAction, check_action
from core.spec import GameSpec


class IntegerActions(wrappers.BaseWrapper):
    """Refuses anything but an integer action in the action space (``None`` for a
    finished agent) with ``IllegalAction``, before it reaches the wrappers below: a
    Python bool is in a ``Discrete`` space, but is not a move.  A plain ``if``, not
    an ``assert``: the same under ``python -O`` (PettingZoo's
    ``AssertOutOfBoundsWrapper`` checks with ``assert``)."""

    def step(self, action: Any) -> None:
        agent = self.agent_selection
        dead = self.terminations.get(agent) or self.truncations.get(agent)
        if action is not None or not dead:
            action = check_action(action)
            n = self.action_space(agent).n
            if not dead and not 0 <= action < n:
                raise IllegalAction(f"{agent}'s action must be in 0..{n - 1}, got {action}")
        super().step(action)


def wrap(raw: AECEnv) -> AECEnv:
    """The wrappers of PettingZoo's classic envs: an illegal move ends the game
    with -1 for the mover, calls out of order raise; and only integers of the
    action space are actions (else ``IllegalAction``, nothing changes)."""
    env = wrappers.TerminateIllegalWrapper(raw, illegal_reward=-1)
    env = IntegerActions(env)
    return wrappers.OrderEnforcingWrapper(env)


class DiceAECEnv(AECEnv):
    """The AEC env of the game named ``game_name`` in ``games``; see the module docstring.

    Subclasses set ``metadata`` and ``game_name`` and may override :meth:`status`.
    ``reset(seed=...)`` draws all chance from ``np.random.default_rng(seed)``;
    ``reset()`` without a seed goes on with the same generator (a fresh one the
    first time).  ``reset(options=...)`` reads ``"dice"`` (a ``DiceSource``, e.g.
    ``core.dice.ScriptedDice``, for tests and replays) and ``"first_player"``
    (a seat); other keys are ignored.
    """

    metadata: ClassVar[dict[str, Any]] = {
        "render_modes": ["human", "ansi"],
        "is_parallelizable": False,
        "render_fps": 2,
    }
    # Set by each game's module: its GameSpec (engine, codec, narrator, players, options, actions).
    spec_of_game: ClassVar[GameSpec]

    def __init__(self, n_players: int = 2, render_mode: str | None = None, **options: Any):
        super().__init__()
        game = self.spec_of_game
        self.n_players = n_players = game.check_players(n_players, "n_players")
        self.options = game.check_options(options)
        self.codec = game.codec
        self.n_actions = game.n_actions
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']} or None, got {render_mode!r}")
        self.render_mode = render_mode
        self.possible_agents = [f"player_{seat}" for seat in range(n_players)]
        self.agent_name_mapping = {agent: seat for seat, agent in enumerate(self.possible_agents)}
        low, high, shape = self.codec.space_bounds(n_players, **self.options)
        self.action_spaces = {agent: spaces.Discrete(self.n_actions) for agent in self.possible_agents}
        self.observation_spaces = {
            agent: spaces.Dict(
                {
                    "observation": spaces.Box(low, high, shape=shape, dtype=np.int64),
                    "action_mask": spaces.Box(0, 1, shape=(self.n_actions,), dtype=np.int8),
                }
            )
            for agent in self.possible_agents
        }
        self.np_random: np.random.Generator | None = None  # the dice's generator, from reset() on
        self.game = None  # the engine of the game in play, from reset() on

    # --- spaces -----------------------------------------------------------------
    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    # --- AEC API ----------------------------------------------------------------
    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        options = options or {}
        if seed is not None or self.np_random is None:
            self.np_random = np.random.default_rng(seed)
        dice = options.get("dice")
        self.game = self.spec_of_game.engine(
            self.n_players,
            dice=dice if dice is not None else RandomDice(self.np_random),
            first_player=options.get("first_player"),
            **self.options,
        )
        self.agents = self.possible_agents[:]
        self.rewards = {agent: 0.0 for agent in self.agents}
        self._cumulative_rewards = {agent: 0.0 for agent in self.agents}
        self.terminations = {agent: False for agent in self.agents}
        self.truncations = {agent: False for agent in self.agents}
        self.infos = {agent: {} for agent in self.agents}
        self._skip_agent_selection = None
        # Over before anyone had a choice: player_0 steps a formality (action 0).
        self._formality = self.game.is_over
        self.agent_selection = self.agents[0] if self._formality else self._agent(self.game.current_player)
        self._narrator = self.spec_of_game.narrator(self.n_players, labels=self.possible_agents)
        self._shown = 0  # events already rendered
        if self.render_mode == "human":
            self.render()

    def step(self, action: Any) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        self._cumulative_rewards[agent] = 0.0  # last() has shown it
        self._clear_rewards()
        if self._formality:
            if check_action(action) != 0:
                raise IllegalAction(
                    f"the game was decided before anyone had a choice: {agent}'s only legal action is 0, got {action!r}"
                )
            self._formality = False
        else:
            self.game.apply(check_action(action))
        for other in self.agents:
            outcome = self.game.outcome(self.agent_name_mapping[other])
            if outcome is not None and not self.terminations[other]:
                self.rewards[other] = float(outcome)
                self.terminations[other] = True
        self._accumulate_rewards()
        if not self.game.is_over:
            self.agent_selection = self._agent(self.game.current_player)
        self._deads_step_first()
        if self.render_mode == "human":
            self.render()

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        """The codec's observation of ``agent``'s seat, and the mask of its legal
        actions if it is to move (all zeros otherwise)."""
        mask = np.zeros(self.n_actions, dtype=np.int8)
        if agent == self.agent_selection and not self.terminations.get(agent, True):
            mask[[0] if self._formality else self.game.legal_actions()] = 1
        return {
            "observation": self.codec.observe(self.game, self.agent_name_mapping[agent]),
            "action_mask": mask,
        }

    def render(self) -> str | None:
        """The events since the last render, narrated, then a status line."""
        if self.render_mode is None:
            gymnasium.logger.warn("You are calling render method without specifying any render mode.")
            return None
        if self.game is None:
            return None
        events = self.game.events
        lines = self._narrator.lines(events[self._shown :])
        self._shown = len(events)
        text = "\n".join([*lines, self.status()])
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def close(self) -> None:
        pass

    # --- helpers ----------------------------------------------------------------
    def _agent(self, seat: int) -> str:
        return self.possible_agents[seat]

    def who(self, seat: int) -> str:
        """A seat as the narration names it, with its agent: ``"Red (player_0)"``."""
        return self._narrator.who(seat)

    def status(self) -> str:
        """One line on the state of the game (games override it)."""
        game = self.game
        if game.is_over:
            return "Game over."
        return f"To move: {self.who(game.current_player)}."
