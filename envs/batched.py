"""What the batched numpy envs (``Vec420Env``, ``Vec421Env``) share: the parts of
SB3's ``VecEnv`` interface that are about a batch being one object, not a list
of envs."""

from __future__ import annotations

from typing import Any

import numpy as np
from stable_baselines3.common.vec_env import VecEnv

from core.dice import TINY
from core.engine import IllegalAction


class BatchedVecEnv(VecEnv):
    """A VecEnv whose games live in arrays of one object: attributes and methods are
    the object's, shared by every game, and ``action_masks()`` gives every game's
    mask at once (``env_method("action_masks")``, which MaskablePPO calls, slices it).

    The generator is ``self.rng`` (from ``seed``); ``dice`` replaces it for the dice
    (scripted games).  A subclass provides ``_new_games(rows)``
    (start those games and play them to the agent's first choice), ``_obs(rows=None)``,
    ``action_masks()`` and ``step_wait()``.  ``reset()`` re-seeds ``rng`` from
    ``seed()``, as SB3's VecEnvs do, so the same seed gives the same games.

    ``step_async`` checks the actions before anything is played (``_checked_actions``:
    one integer per game, each in the action space) and refuses bad ones with
    ``IllegalAction`` through ``_raise_illegal(row, action, why)``, which a subclass
    overrides to say what the agent holds; ``step_wait`` checks legality.
    """

    _actions: np.ndarray | None = None

    def __init__(self, num_envs: int, observation_space, action_space, seed: int | None, dice: Any = None):
        self.render_mode = None
        super().__init__(num_envs, observation_space, action_space)
        self.rng = np.random.default_rng(seed)
        self._dice_override = dice  # scripted dice for tests; None: dice from self.rng

    def _new_games(self, rows: np.ndarray) -> None:
        raise NotImplementedError

    def _draw(self, cdf: np.ndarray, n: int) -> np.ndarray:
        """``n`` indices drawn from the cumulative distribution ``cdf``: for x in (0, total],
        the first index whose cdf reaches x, so never one without probability."""
        x = np.maximum(self.rng.random(n), TINY) * cdf[-1]
        return np.minimum(np.searchsorted(cdf, x), len(cdf) - 1)

    def _answers(self, place: int, got: Any, masks: np.ndarray, noun: str, where) -> np.ndarray:
        """A batch policy's answers (pool entry ``place``) as int64, checked: one integer per
        row of ``masks``, each legal there; else ``ValueError`` in one line (``where(i)``
        says where row i is and what is legal)."""
        a = np.asarray(got)
        if a.shape != (len(masks),) or a.dtype.kind not in "iu":
            raise ValueError(
                f"pool entry {place} answered {a.dtype} of shape {a.shape}; a batch policy returns "
                f"one integer {noun} per row, shape ({len(masks)},)"
            )
        ok = a < masks.shape[1] if a.dtype.kind == "u" else (a >= 0) & (a < masks.shape[1])
        ok[ok] = masks[np.flatnonzero(ok), a[ok].astype(np.int64)]
        if not ok.all():
            i = int(np.flatnonzero(~ok)[0])
            raise ValueError(
                f"pool entry {place} played {noun} {a[i].item()}, which is not legal {where(i)} "
                f"({int((~ok).sum())} such rows)"
            )
        return a.astype(np.int64)

    def _set_pool(self, pool: list, weights: Any) -> None:
        """Keep ``pool`` (opponents, checked and prepared by the subclass) and the cumulative
        distribution of ``weights``, one per member (default equal); ``ValueError`` (one line)
        unless they are finite, non-negative and not all 0, and then nothing changes.  With a
        pool of another size, the games' draws (``opp_index``) start again at 0."""
        w = (
            np.ones(len(pool))
            if weights is None
            else (np.asarray(weights, dtype=np.float64) if np.ndim(weights) == 1 else None)
        )
        with np.errstate(over="ignore"):  # a sum that overflows is refused below
            total = w.sum() if w is not None else 0.0
        if w is None or len(w) != len(pool) or not np.all(np.isfinite(w) & (w >= 0)) or not 0 < total < np.inf:
            raise ValueError(
                f"pool weights must be {len(pool)} finite non-negative numbers, not all 0; got {weights!r}"
            )
        if len(pool) != len(getattr(self, "_pool", pool)):
            self.opp_index[:] = 0
        self._pool, self._pool_cdf = pool, np.cumsum(w / w.sum())

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
        self._actions = self._checked_actions(actions)

    def _pending_actions(self) -> np.ndarray:
        """The actions ``step_async`` checked, for ``step_wait`` (a clear error without them)."""
        if self._actions is None:
            raise RuntimeError("step_wait() without step_async(actions): call step(actions)")
        return self._actions

    def _checked_actions(self, actions: Any) -> np.ndarray:
        """``actions`` as a fresh ``(num_envs,)`` int64 array, every one in ``0..n - 1``
        (``n`` = ``action_space.n``), or ``IllegalAction`` (a ValueError) naming the first
        bad game: one action per game, as an integer numpy array of shape ``(num_envs,)``
        or a list (or tuple) of ints; floats (even whole ones), NaN, bools, strings and
        other shapes are refused.  Legality in each game's state is ``step_wait``'s to
        check; nothing is played before both checks pass."""
        n, n_actions = self.num_envs, int(self.action_space.n)
        if isinstance(actions, np.ndarray) and actions.dtype.kind in "iu" and actions.shape == (n,):
            acts = np.asarray(actions).astype(np.int64)  # a copy: the caller may reuse its array
            # One comparison for both ends: negative int64s read as huge uint64s.  (uint64
            # values past 2**63 wrap to negative int64s, which read back as themselves.)
            if (acts.view(np.uint64) >= n_actions).any():
                row = int(np.flatnonzero(acts.view(np.uint64) >= n_actions)[0])
                self._raise_illegal(row, actions[row].item(), f"not in 0..{n_actions - 1}")
            return acts
        return self._checked_actions_slow(actions, n, n_actions)

    def _checked_actions_slow(self, actions: Any, n: int, n_actions: int) -> np.ndarray:
        if isinstance(actions, np.ndarray):
            if actions.shape != (n,):
                raise IllegalAction(
                    f"expected one action per game, an array of shape ({n},), got shape {actions.shape}"
                )
            if actions.dtype.kind != "O":  # floats, bools, strings, ...: not integers
                self._raise_illegal(0, actions[0].item(), f"an action is an integer, got dtype {actions.dtype}")
            items = list(actions)
        elif isinstance(actions, (list, tuple)):
            if len(actions) != n:
                raise IllegalAction(f"expected one action per game, {n} of them, got {len(actions)}")
            items = list(actions)
        else:
            raise IllegalAction(
                f"expected one action per game, an integer array of shape ({n},) or a list "
                f"of {n} ints, got {type(actions).__name__}"
            )
        for row, a in enumerate(items):
            if isinstance(a, (bool, np.bool_)) or not isinstance(a, (int, np.integer)):
                self._raise_illegal(
                    row,
                    a.item() if isinstance(a, np.generic) else a,
                    f"an action is an integer, got {type(a).__name__}",
                )
            if not 0 <= a < n_actions:
                self._raise_illegal(row, int(a), f"not in 0..{n_actions - 1}")
        return np.array([int(a) for a in items], dtype=np.int64)

    def _raise_illegal(self, row: int, action: Any, why: str) -> None:
        """Refuse ``action`` in game ``row``: one line, ``IllegalAction`` (subclasses add
        what the agent holds and what is legal)."""
        raise IllegalAction(f"game {row}: illegal action {action!r}: {why}")

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
