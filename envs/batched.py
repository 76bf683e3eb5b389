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
    mask at once (``env_method("action_masks")``, which MaskablePPO calls, slices it)."""

    def action_masks(self) -> np.ndarray:
        raise NotImplementedError

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
