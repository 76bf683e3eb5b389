"""What the batched numpy envs (``Vec420Env``, ``Vec421Env``) share: the parts of
SB3's ``VecEnv`` interface that are about a batch being one object, not a list
of envs."""

from __future__ import annotations

from typing import Any

import numpy as np
from stable_baselines3.common.vec_env import VecEnv


class BatchedVecEnv(VecEnv):
    """A VecEnv whose games live in arrays of one object: attributes and methods are
    the object's, shared by every game, and ``action_masks()`` gives every game's
    mask at once (``env_method("action_masks")``, which MaskablePPO calls, slices it).

    The generator is ``self.rng`` (from ``seed``); ``dice`` replaces it for the dice
    (scripted games).  A subclass provides ``_new_games(rows)``
    (start those games and play them to the agent's first choice), ``_obs(rows=None)``,
    ``action_masks()`` and ``step_wait()``.  ``reset()`` re-seeds ``rng`` from
    ``seed()``, as SB3's VecEnvs do, so the same seed gives the same games.
    """

    _actions: np.ndarray | None = None

    def __init__(self, num_envs: int, observation_space, action_space, seed: int | None, dice: Any = None):
        self.render_mode = None
        super().__init__(num_envs, observation_space, action_space)
        self.rng = np.random.default_rng(seed)
        self._dice_override = dice  # scripted dice for tests; None: dice from self.rng

    def _new_games(self, rows: np.ndarray) -> None:
        raise NotImplementedError

    def _obs(self, rows: np.ndarray | None = None) -> np.ndarray:
        raise NotImplementedError

    def action_masks(self) -> np.ndarray:
        raise NotImplementedError

    def reset(self):
        if self._seeds[0] is not None:
            self.rng = np.random.default_rng(self._seeds[0])
        self._reset_seeds()
        self._new_games(np.arange(self.num_envs))
        self.reset_infos = [{} for _ in range(self.num_envs)]
        return self._obs()

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = np.asarray(actions, dtype=np.int64).reshape(self.num_envs)

    def _finish_step(self, rewards: np.ndarray, dones: np.ndarray):
        """The step's return (SB3 auto-reset): finished games report their last
        observation as ``infos[i]["terminal_observation"]`` and start again."""
        infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        done_rows = np.flatnonzero(dones)
        if len(done_rows):
            terminal = self._obs(done_rows)
            for i, row in enumerate(done_rows):
                infos[row]["terminal_observation"] = terminal[i]
            self._new_games(done_rows)
        return self._obs(), rewards, dones, infos

    def close(self) -> None:
        pass

    def get_attr(self, attr_name: str, indices=None) -> list[Any]:
        return [getattr(self, attr_name) for _ in self._get_indices(indices)]

    def set_attr(self, attr_name: str, value: Any, indices=None) -> None:
        setattr(self, attr_name, value)

    def env_method(self, method_name: str, *method_args, indices=None, **method_kwargs) -> list[Any]:
        if method_name == "action_masks":
            return list(self.action_masks()[list(self._get_indices(indices))])
        result = getattr(self, method_name)(*method_args, **method_kwargs)
        return [result for _ in self._get_indices(indices)]

    def env_is_wrapped(self, wrapper_class, indices=None) -> list[bool]:
        return [False for _ in self._get_indices(indices)]
