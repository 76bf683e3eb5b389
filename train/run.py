"""One training run, top to bottom: build the batched env, fit MaskablePPO,
evaluate exactly as it goes, save checkpoints, print the results."""

from __future__ import annotations

import platform
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

import numpy as np
import torch
from stable_baselines3.common.callbacks import BaseCallback

import agents
import games
from agents.ppo_agent import PPOAgent, policy_class_from, policy_kwargs_from, save_policy
from train.fast import BatchedMaskablePPO, EpisodeMonitor
from train.presets import Preset

@dataclass
class RunConfig:
    preset: Preset
    timesteps: int
    seed: int
    n_envs: int
    logdir: Path
    checkpoint_dir: Path
    name: str
    resume: bool = False
    eval_every: Optional[int] = None
    stop_when_optimal: bool = True
    progress_bar: bool = True
    torch_threads: int = 1


def exact_options(preset: Preset) -> dict[str, Any]:
    """The game options the exact evaluation takes (the env's, less the player count)."""
    return {k: v for k, v in preset.env.items() if k != "n_players"}


def eval_opponents(preset: Preset) -> tuple[str, ...]:
    """The bots an agent is measured against: the optimal one first, then the others."""
    others = tuple(b for b in games.get(preset.game).bots_for(2) if b != "optimal")
    return ("optimal", *others)


def evaluate(config: "RunConfig", agent) -> dict[str, Any]:
    """Exact figures of ``agent`` by the game's solver (``GameSpec.exact``)."""
    preset = config.preset
    options = exact_options(preset)
    tables = {name: agents.bot_table(preset.game, name, **options) for name in eval_opponents(preset)}
    return games.load(games.get(preset.game).exact).exact_figures(agent, tables, **options)


class ExactEvalCallback(BaseCallback):
    """Every ``every`` steps: exact evaluation, TensorBoard ``eval/*`` tags, a checkpoint.

    420 runs that stop once optimal also count, after every PPO update, the
    decision states where the policy's choice is worse than the best
    (``solver420.suboptimal_choices``, a table lookup; TensorBoard
    ``eval/suboptimal_choices``); at 0 the full evaluation confirms it and the
    run stops, without waiting for the next scheduled evaluation.
    """

    def __init__(self, config: RunConfig, started: float):
        super().__init__()
        self.config = config
        self.every = config.eval_every or config.preset.eval_every
        self.next_eval = 0
        self.started = started
        self.history: list[dict[str, Any]] = []
        solver = games.load(games.get(config.preset.game).exact)
        self.count_suboptimal = getattr(solver, "count_suboptimal", None)  # games with a cheap per-update check
        self.check_each_update = self.count_suboptimal is not None and config.stop_when_optimal
        self.rollout_started = False

    def _on_training_start(self) -> None:
        self.next_eval = self.num_timesteps  # evaluate the starting policy too

    def _on_rollout_start(self) -> None:
        self.rollout_started = True

    def _suboptimal_choices(self) -> int:
        count = self.count_suboptimal(PPOAgent.from_model(self.model, self.config.preset.game))
        self.logger.record("eval/suboptimal_choices", count)
        return count

    def _on_step(self) -> bool:
        first_step, self.rollout_started = self.rollout_started, False
        due = self.num_timesteps >= self.next_eval
        if not due and first_step and self.check_each_update:
            due = self._suboptimal_choices() == 0
        if not due:
            return True
        self.next_eval = self.num_timesteps + self.every
        figures = evaluate(self.config, PPOAgent.from_model(self.model, self.config.preset.game))
        figures.update(timesteps=self.num_timesteps, wall_seconds=time.time() - self.started)
        self.history.append(figures)
        for key, value in figures.items():
            if key.startswith(("vs_", "gap_", "suboptimal_")):
                self.logger.record(f"eval/{key}", value)
        self.logger.record("eval/wall_seconds", figures["wall_seconds"])
        self.logger.dump(self.num_timesteps)
        save_run(self.model, self.config, figures, self.history)
        if self.config.stop_when_optimal and figures["optimal"]:
            print(f"\nexactly optimal in both seats at {self.num_timesteps} steps, {figures['wall_seconds']:.1f} s: stopping")
            return False
        return True


def versions() -> dict[str, str]:
    import gymnasium
    import sb3_contrib
    import stable_baselines3

    return {
        "python": platform.python_version(),
        "torch": torch.__version__,
        "gymnasium": gymnasium.__version__,
        "stable_baselines3": stable_baselines3.__version__,
        "sb3_contrib": sb3_contrib.__version__,
        "numpy": np.__version__,
    }


def save_run(model, config: RunConfig, figures: Optional[dict[str, Any]] = None, history=()) -> Path:
    """Write NAME.zip (for --resume) and NAME.pt + NAME.json (for playing)."""
    base = config.checkpoint_dir / config.name
    config.checkpoint_dir.mkdir(parents=True, exist_ok=True)
    model.save(base.with_suffix(".zip"))
    meta = {
        "name": config.name,
        "game": config.preset.game,
        "preset": config.preset.name,
        "timesteps": int(model.num_timesteps),
        "seed": config.seed,
        "n_envs": config.n_envs,
        "opponent": config.preset.opponent,
        "policy": config.preset.policy,
        "env": config.preset.env,
        "versions": versions(),
    }
    if figures is not None:
        meta["exact"] = {k: v for k, v in figures.items() if k.startswith(("vs_", "gap_", "suboptimal_")) or k == "optimal"}
        meta["wall_seconds"] = round(figures.get("wall_seconds", 0.0), 1)
    if history:
        meta["eval_history"] = [
            {k: round(v, 6) for k, v in h.items() if k in ("timesteps", "wall_seconds") or k.startswith("gap_pp")}
            for h in history
        ]
    save_policy(model.policy, base, meta)
    return base


def make_env(config: RunConfig):
    """The training env: the game's batched numpy env (``GameSpec.batched_env``) of
    ``n_envs`` games against the exact table of the preset's opponent; player counts
    it does not play run ``n_envs`` Gymnasium envs in an SB3 DummyVecEnv."""
    preset = config.preset
    spec = games.get(preset.game)
    options = dict(preset.env)
    n_players = options.pop("n_players", 2)
    if n_players in spec.batched_players:
        opponent = agents.bot_table(preset.game, preset.opponent, **options)
        extra = {"n_players": n_players} if n_players != 2 else {}
        venv = games.load(spec.batched_env)(config.n_envs, opponent, seed=config.seed, **options, **extra)
        return EpisodeMonitor(venv)
    import gymnasium as gym
    from stable_baselines3.common.monitor import Monitor
    from stable_baselines3.common.vec_env import DummyVecEnv

    import envs  # noqa: F401 - registers the Gymnasium ids

    def make():
        opponent = agents.make_agent(preset.game, preset.opponent)
        return Monitor(gym.make(spec.env_id, opponent=opponent, n_players=n_players, **options).unwrapped)

    venv = DummyVecEnv([make] * config.n_envs)
    venv.seed(config.seed)
    return venv


def build_model(config: RunConfig, env) -> BatchedMaskablePPO:
    """The preset's MaskablePPO (``BatchedMaskablePPO``: same algorithm, leaner rollout loop)
    on ``env``, or the saved run when resuming."""
    if config.resume:
        zip_path = (config.checkpoint_dir / config.name).with_suffix(".zip")
        if not zip_path.exists():
            raise SystemExit(f"--resume: no saved run at {zip_path} (train once without --resume first)")
        model = BatchedMaskablePPO.load(zip_path, env=env, device="cpu")
        print(f"resuming {zip_path} at {model.num_timesteps} steps")
        return model
    ppo_kwargs = dict(config.preset.ppo)
    if config.preset.lr_final is not None:
        start, end = ppo_kwargs["learning_rate"], config.preset.lr_final
        ppo_kwargs["learning_rate"] = lambda progress_remaining: end + (start - end) * progress_remaining
    return BatchedMaskablePPO(
        policy_class_from(config.preset.policy),
        env,
        policy_kwargs=policy_kwargs_from(config.preset.policy),
        tensorboard_log=str(config.logdir),
        seed=config.seed,
        device="cpu",
        verbose=0,
        **ppo_kwargs,
    )


def train(config: RunConfig) -> dict[str, Any]:
    torch.set_num_threads(config.torch_threads)
    started = time.time()
    env = make_env(config)
    model = build_model(config, env)
    remaining = config.timesteps - model.num_timesteps
    callback = ExactEvalCallback(config, started)
    interrupted = False
    if remaining > 0:
        try:
            model.learn(
                remaining,
                callback=callback,
                tb_log_name=config.name,
                reset_num_timesteps=not config.resume,
                progress_bar=config.progress_bar,
            )
        except KeyboardInterrupt:
            interrupted = True
            print(f"\ninterrupted at {model.num_timesteps} steps; saving")
    wall = time.time() - started
    final = evaluate(config, PPOAgent.from_model(model, config.preset.game))
    final.update(timesteps=int(model.num_timesteps), wall_seconds=wall)
    base = save_run(model, config, final, callback.history)
    env.close()
    summary = {"final": final, "history": callback.history, "checkpoint": str(base), "interrupted": interrupted}
    print_results(config, summary)
    if interrupted:
        print(f"continue with: python -m train {config.preset.name} --name {config.name} --resume")
    return summary


def print_results(config: RunConfig, summary: dict[str, Any]) -> None:
    final = summary["final"]
    steps = final["timesteps"]
    print()
    print(f"run {config.name}: {steps:,} steps in {final['wall_seconds']:.1f} s "
          f"({steps / max(final['wall_seconds'], 1e-9):,.0f} steps/s); saved {summary['checkpoint']}.pt/.json/.zip")
    print()
    solver = games.load(games.get(config.preset.game).exact)
    for line in solver.format_figures(config.name, final, eval_opponents(config.preset), **exact_options(config.preset)):
        print(line)
