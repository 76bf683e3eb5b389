"""MaskablePPO without the per-game Python loops, for batched envs.

SB3 steps its vectorised envs as a list of games: each step it stacks one mask
array per game, walks every game's info dict (twice) and ``VecMonitor`` walks
every game again.  With 1,024 games in one numpy env those loops cost more than
the env step itself.  Here the same work is done only where something happened:

* ``EpisodeMonitor``: ``VecMonitor`` with array bookkeeping; it touches the
  info dicts of finished games only (same ``info["episode"]`` records).
* ``BatchedMaskablePPO``: ``MaskablePPO`` whose rollout reads the masks of all
  games in one call when the env offers ``action_masks()`` (``Vec420Env`` and
  ``Vec421Env`` do) and looks only at finished games' infos.  Everything else
  (the policy, the sampling, the buffer, the PPO update, callbacks, saving and
  loading) is MaskablePPO's own; with the same seed it collects exactly the
  same rollouts (``tests/test_fast.py`` checks this).
"""

from __future__ import annotations

import time
from contextlib import contextmanager
from typing import Callable

import numpy as np
import torch as th
from gymnasium import spaces
from sb3_contrib import MaskablePPO
from sb3_contrib.common.maskable.buffers import MaskableDictRolloutBuffer, MaskableRolloutBuffer
from sb3_contrib.common.maskable.utils import get_action_masks, is_masking_supported
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.utils import obs_as_tensor
from stable_baselines3.common.vec_env import VecEnv, VecMonitor


class EpisodeMonitor(VecMonitor):
    """``VecMonitor`` that updates its counters with array operations and builds
    ``info["episode"]`` only for the games that just ended."""

    def step_wait(self):
        obs, rewards, dones, infos = self.venv.step_wait()
        self.episode_returns += rewards
        self.episode_lengths += 1
        ended = np.flatnonzero(dones)
        if len(ended):
            infos = list(infos)
            now = round(time.time() - self.t_start, 6)
            for i in ended:
                info = dict(infos[i])
                episode = {"r": self.episode_returns[i], "l": self.episode_lengths[i], "t": now}
                for key in self.info_keywords:
                    episode[key] = info[key]
                info["episode"] = episode
                infos[i] = info
                if self.results_writer:
                    self.results_writer.write_row(episode)
            self.episode_count += len(ended)
            self.episode_returns[ended] = 0
            self.episode_lengths[ended] = 0
        return obs, rewards, dones, infos


def _batched_masks(env: VecEnv):
    """The env's ``action_masks()`` for all games at once, if it has one (else None)."""
    try:
        method = env.action_masks
    except AttributeError:
        return None
    return method if callable(method) else None


def check_hidden_dtype(policy, what: str) -> None:
    """``ValueError`` (``what`` needs ...) unless ``policy`` (a policy or its class) computes
    its hidden layers in a dtype of its own (``hidden_dtype``, as
    ``agents.features.FastMlpPolicy``)."""
    if not hasattr(policy, "hidden_dtype"):
        name = policy.__name__ if isinstance(policy, type) else type(policy).__name__
        raise ValueError(
            f"{what} needs a policy that computes its hidden layers in a dtype of its own "
            f"(FastMlpPolicy and its kind), not {name}"
        )


class BatchedMaskablePPO(MaskablePPO):
    """MaskablePPO with a rollout loop that does per-game Python work only for finished games.

    ``gae_lambda_schedule``, if set, maps the steps done so far to the GAE lambda of the
    next rollout (the losses stay PPO's; only the advantage estimate's lambda moves), and
    ``ent_coef_schedule`` to the entropy coefficient of the update after it.
    ``epochs_schedule``, if set, maps the share of the run still to go (as the learning
    rate's schedule) to the passes each update makes over its rollout (``n_epochs``).

    ``q_advantage_schedule``, if set, maps the steps done at the end of a rollout to the
    share ``b`` of its advantages taken from an action-value critic
    (``agents.features.QMlpPolicy``): each step's advantage is ``(1 - b)`` times GAE's plus
    ``b`` times ``Q(s_t, a_t) - V(s_t)``, both from the rollout's own network.  The value
    targets (GAE's lambda-returns) do not change.  A policy with such a critic also
    bootstraps each rollout with the masked policy's ``V`` (``state_values``).

    ``hidden_dtype_schedule``, if set, maps the share of the run still to go (as the
    learning rate's schedule) at the start of a rollout to the dtype the policy's hidden
    layers compute in during that rollout's network calls and its update's
    (``torch.bfloat16``: mixed precision; None: float32).  The policy needs a
    ``hidden_dtype`` of its own, as ``agents.features.FastMlpPolicy``.  The weights, the
    optimizer, the heads and the losses stay float32, and the callbacks (the evaluations)
    see the float32 network, the one a checkpoint plays.
    """

    gae_lambda_schedule: Callable[[int], float] | None = None
    ent_coef_schedule: Callable[[int], float] | None = None
    q_advantage_schedule: Callable[[int], float] | None = None
    epochs_schedule: Callable[[float], int] | None = None
    hidden_dtype_schedule: Callable[[float], th.dtype | None] | None = None
    critic_lr_schedule: Callable[[float], float] | None = None  # set by split_critic_rate
    _rollout_dtype: th.dtype | None = None  # the schedule's dtype for this rollout and its update

    @contextmanager
    def _mixed_precision(self):
        """The policy's hidden layers in this rollout's dtype inside (as it was after)."""
        dtype = self._rollout_dtype
        if dtype is None:
            yield
            return
        before = self.policy.hidden_dtype
        self.policy.hidden_dtype = dtype
        try:
            yield
        finally:
            self.policy.hidden_dtype = before

    def _choose_rollout_dtype(self) -> None:
        """The dtype of the rollout about to start and of its update, from the share of the
        run still to go now (counted from the steps done, so a resumed run starts right)."""
        schedule = self.hidden_dtype_schedule
        if schedule is None:
            self._rollout_dtype = None
            return
        check_hidden_dtype(self.policy, "mixed precision")
        left = 1.0 - float(self.num_timesteps) / float(max(1, self._total_timesteps))
        self._rollout_dtype = schedule(left)

    def split_critic_rate(self, schedule: Callable[[float], float]) -> None:
        """Give the critic's weights (``mlp_extractor.value_net``, ``value_net`` and a
        ``vf_features_extractor`` of its own) an Adam group of their own, the optimizer's
        second, whose learning rate is ``schedule`` of the share of the run still to go;
        the rest keep the model's ``lr_schedule``.  The optimizer is made anew, so call it
        before training (a resumed run loads its saved state after).  ``ValueError`` for a
        policy without such weights, or with nothing else."""
        policy = self.policy
        prefixes = ("mlp_extractor.value_net.", "value_net.", "vf_features_extractor.")
        critic = [p for name, p in policy.named_parameters() if name.startswith(prefixes)]
        ids = {id(p) for p in critic}
        actor = [p for p in policy.parameters() if id(p) not in ids]
        if not critic or not actor:
            raise ValueError(
                f"{type(policy).__name__} has no critic weights apart from the actor's "
                f"({', '.join(p.rstrip('.') for p in prefixes)}) to give a learning rate of their own"
            )
        policy.optimizer = policy.optimizer_class(
            [{"params": actor}, {"params": critic}],
            lr=policy.optimizer.param_groups[0]["lr"],
            **policy.optimizer_kwargs,
        )
        self.critic_lr_schedule = schedule

    def _update_learning_rate(self, optimizers) -> None:
        super()._update_learning_rate(optimizers)
        if self.critic_lr_schedule is not None:  # the critic's group, after SB3 set them all
            rate = float(self.critic_lr_schedule(self._current_progress_remaining))
            self.policy.optimizer.param_groups[1]["lr"] = rate
            self.logger.record("train/critic_learning_rate", rate)

    def train(self) -> None:
        if self.epochs_schedule is not None:  # of the share of the run left, as the learning rate
            self.n_epochs = int(self.epochs_schedule(self._current_progress_remaining))
            self.logger.record("train/n_epochs", self.n_epochs)
        if self.hidden_dtype_schedule is not None:  # 1: the hidden layers in the lower precision
            self.logger.record("train/mixed_precision", float(self._rollout_dtype is not None))
        with self._mixed_precision():
            super().train()

    def collect_rollouts(
        self,
        env: VecEnv,
        callback: BaseCallback,
        rollout_buffer: MaskableRolloutBuffer,
        n_rollout_steps: int,
        use_masking: bool = True,
    ) -> bool:
        # MaskablePPO.collect_rollouts (sb3-contrib 2.x), with the loops over games
        # restricted to the games that ended.
        assert isinstance(rollout_buffer, (MaskableRolloutBuffer, MaskableDictRolloutBuffer))
        assert self._last_obs is not None, "No previous observation was provided"
        self.policy.set_training_mode(False)
        n_steps = 0
        action_masks = None
        rollout_buffer.reset()
        if self.gae_lambda_schedule is not None:
            self.gae_lambda = rollout_buffer.gae_lambda = float(self.gae_lambda_schedule(self.num_timesteps))
            self.logger.record("train/gae_lambda", self.gae_lambda)
        if self.ent_coef_schedule is not None:
            self.ent_coef = float(self.ent_coef_schedule(self.num_timesteps))
            self.logger.record("train/ent_coef", self.ent_coef)
        if use_masking and not is_masking_supported(env):
            raise ValueError("Environment does not support action masking. Consider using ActionMasker wrapper")
        all_masks = _batched_masks(env)
        self._choose_rollout_dtype()
        q_share = self.q_advantage_schedule
        if q_share is not None and not hasattr(self.policy, "chosen_q"):
            raise ValueError(
                f"q_advantage needs a policy with an action-value critic (QMlpPolicy), not {type(self.policy).__name__}"
            )
        chosen_q = []  # Q(s_t, a_t) of each step, for q_share

        callback.on_rollout_start()
        while n_steps < n_rollout_steps:
            with th.no_grad():
                obs_tensor = obs_as_tensor(self._last_obs, self.device)  # type: ignore[arg-type]
                if use_masking:
                    action_masks = all_masks() if all_masks is not None else get_action_masks(env)
                with self._mixed_precision():
                    actions, values, log_probs = self.policy(obs_tensor, action_masks=action_masks)
            actions = actions.cpu().numpy()
            if q_share is not None:
                chosen_q.append(self.policy.chosen_q.cpu().numpy().copy())
            new_obs, rewards, dones, infos = env.step(actions)
            self.num_timesteps += env.num_envs

            callback.update_locals(locals())
            if not callback.on_step():
                return False

            ended = np.flatnonzero(dones)
            self._update_info_buffer([infos[i] for i in ended], dones[ended])
            n_steps += 1
            if isinstance(self.action_space, spaces.Discrete):
                actions = actions.reshape(-1, 1)

            # Timeouts: bootstrap with the value function (SB3 issue #633).
            for idx in ended:
                if infos[idx].get("terminal_observation") is not None and infos[idx].get("TimeLimit.truncated", False):
                    terminal_obs = self.policy.obs_to_tensor(infos[idx]["terminal_observation"])[0]
                    with th.no_grad(), self._mixed_precision():
                        terminal_value = self.policy.predict_values(terminal_obs)[0]
                    rewards[idx] += self.gamma * terminal_value

            rollout_buffer.add(
                self._last_obs,
                actions,
                rewards,
                self._last_episode_starts,
                values,
                log_probs,
                action_masks=action_masks,
            )
            self._last_obs = new_obs  # type: ignore[assignment]
            self._last_episode_starts = dones

        with th.no_grad(), self._mixed_precision():
            new_tensor = obs_as_tensor(new_obs, self.device)  # type: ignore[arg-type]
            if hasattr(self.policy, "state_values") and use_masking:
                masks = all_masks() if all_masks is not None else get_action_masks(env)
                values = self.policy.state_values(new_tensor, masks)
            else:
                values = self.policy.predict_values(new_tensor)
        rollout_buffer.compute_returns_and_advantage(last_values=values, dones=dones)
        if q_share is not None:
            share = float(q_share(self.num_timesteps))
            q_adv = np.stack(chosen_q) - rollout_buffer.values
            rollout_buffer.advantages = ((1 - share) * rollout_buffer.advantages + share * q_adv).astype(np.float32)
            self.logger.record("train/q_advantage", share)
        callback.on_rollout_end()
        return True
