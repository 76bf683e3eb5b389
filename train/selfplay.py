"""Self-play: the pool of opponents a run draws from, frozen past versions of the learner
among them, and the callback that refreshes it as training goes."""

from typing import Any

import torch
from stable_baselines3.common.callbacks import BaseCallback

import agents
from agents.ppo_agent import CheckpointError, PPOAgent, build_policy, check_weights, policy_state
from train import checkpoint
from train.checkpoint import RunError
from train.presets import pool_weights
from train.config import RunConfig
from train.evaluation import exact_options, plays_live


class SelfPlay:
    """The opponent pool of a self-play preset (``Preset.pool``, ``Preset.snapshots``).

    The env plays a pool of tables: the preset's ``opponent``, its ``pool`` bots, then
    ``snapshots`` frozen past versions of the learner, each game drawing one in
    proportion to ``pool_weights``.  The first rollout fills every snapshot place
    with the starting learner (the games already begun then, the env's first, play
    ``opponent``); then, before the first rollout after each ``snapshot_every``
    steps, the learner as it is replaces the oldest snapshot, in its place, so only
    the games that drew that place change opponent.  A snapshot is the learner's
    exact policy table at that moment (what the solver evaluates), or in a live env
    (``plays_live``) a frozen copy of its network asked as a batch policy; its
    weights go into the training state, so ``--resume`` plays on against the same
    past versions.  In a live env every other seat draws its own pool member."""

    def __init__(self, config: RunConfig):
        preset = config.preset
        self.config = config
        self.weights = pool_weights(preset)
        options = exact_options(preset)
        self.live = plays_live(preset)
        form = (
            (lambda name: agents.live_opponent(preset.game, name, preset.n_players))
            if self.live
            else (lambda name: agents.bot_table(preset.game, name, **options))
        )
        self.fixed = [form(name) for name in (preset.opponent, *preset.pool)] if self.weights else []
        self.snapshots: list[dict[str, torch.Tensor]] = []  # the learner's past weights, one per place
        self.tables: list[Any] = []  # their policy tables
        self.oldest = 0  # the place the next snapshot goes to
        self.taken = 0  # snapshots taken so far
        self.next_at = 0  # the step count at which the next snapshot is due

    @property
    def active(self) -> bool:
        return bool(self.weights)

    def _table(self, agent) -> Any:
        """A snapshot in the form the env plays it (``agent`` must not change after)."""
        if self.live:
            return agents.BatchPolicy(agent)
        return agents.exact_table(self.config.preset.game, agent, **exact_options(self.config.preset))

    def _frozen(self, weights: dict[str, torch.Tensor]) -> PPOAgent:
        policy = build_policy(self.config.preset.game, self.config.preset.policy, self.config.preset.env)
        policy.load_state_dict(weights)
        return PPOAgent(policy, self.config.preset.game)

    def _push(self, model) -> None:
        model.get_env().env_method("set_opponent", [*self.fixed, *self.tables], weights=self.weights)

    def update(self, model) -> bool:
        """Take a snapshot if one is due and give the env the new pool (a pool of bots
        only is given once); whether a snapshot was taken."""
        preset = self.config.preset
        if model.num_timesteps < self.next_at or (self.taken and not preset.snapshots):
            return False
        if preset.snapshots:
            weights = {k: v.clone() for k, v in policy_state(model.policy).items()}  # not the live tensors
            table = self._table(self._frozen(weights) if self.live else PPOAgent.from_model(model, preset.game))
            if not self.snapshots:  # the start: every place holds the starting learner
                self.snapshots, self.tables = [weights] * preset.snapshots, [table] * preset.snapshots
            else:
                self.snapshots[self.oldest], self.tables[self.oldest] = weights, table
                self.oldest = (self.oldest + 1) % preset.snapshots
        self.taken += 1
        self.next_at = model.num_timesteps + preset.snapshot_every
        self._push(model)
        return bool(preset.snapshots)

    def state(self) -> dict[str, Any]:
        return {
            "snapshots": list(self.snapshots),
            "oldest": self.oldest,
            "taken": self.taken,
            "next_at": int(self.next_at),
        }

    def restore(self, model, saved: Any, where: str) -> None:
        """The pool of a resumed run, from its training state (checked: one line if wrong)."""
        preset = self.config.preset

        def count(key: str, high: int) -> bool:
            value = saved.get(key)
            return not isinstance(value, bool) and isinstance(value, int) and 0 <= value <= high

        if (
            not isinstance(saved, dict)
            or not isinstance(saved.get("snapshots"), list)
            or len(saved["snapshots"]) not in (0, preset.snapshots)
            or not (
                count("next_at", checkpoint.MAX_TIMESTEPS)
                and count("taken", checkpoint.MAX_TIMESTEPS)
                and count("oldest", max(preset.snapshots - 1, 0))
            )
            or (preset.snapshots and bool(saved["snapshots"]) != bool(saved["taken"]))
        ):
            raise RunError(
                f"--resume: {where}: self_play is not the pool of {preset.snapshots} snapshots "
                f"the preset {preset.name} keeps"
            )
        tables = []
        for i, weights in enumerate(saved["snapshots"]):
            policy = build_policy(preset.game, preset.policy, preset.env)
            try:
                policy.load_state_dict(check_weights(weights, policy, f"{where}: self_play snapshot {i}"))
            except CheckpointError as e:
                raise RunError(f"--resume: {e}") from None
            tables.append(self._table(PPOAgent(policy, preset.game)))
        self.snapshots, self.tables = list(saved["snapshots"]), tables
        self.oldest, self.taken, self.next_at = saved["oldest"], saved["taken"], saved["next_at"]
        if self.taken:
            self._push(model)


class SelfPlayCallback(BaseCallback):
    """Before each rollout: a new snapshot of the learner in the pool when one is due
    (TensorBoard ``train/snapshots``: how many have been taken)."""

    def __init__(self, self_play: SelfPlay):
        super().__init__()
        self.self_play = self_play

    def _on_rollout_start(self) -> None:
        if self.self_play.update(self.model):
            self.logger.record("train/snapshots", self.self_play.taken)

    def _on_step(self) -> bool:
        return True
