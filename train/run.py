"""One training run, top to bottom: build the batched env, fit MaskablePPO,
evaluate exactly as it goes, save checkpoints, print the results."""

from __future__ import annotations

import json
import platform
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

import numpy as np
import torch
from stable_baselines3.common.callbacks import BaseCallback

from agents import solver420
from agents.ppo_agent import PPOAgent, policy_class_from, policy_kwargs_from, save_policy
from train.fast import BatchedMaskablePPO, EpisodeMonitor
from train.presets import Preset

HEURISTICS = {"420": ("greedy", "foundation", "random"), "421": ("heuristic", "greedy421", "cautious", "random")}
HEURISTICS_420 = HEURISTICS["420"]


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


def _pp(diff: float) -> float:
    """A probability difference in percentage points; below the solver's precision it is 0."""
    return 0.0 if abs(diff) < 1e-12 else 100.0 * diff


def evaluate_420(agent) -> dict[str, Any]:
    """Exact figures for an agent: vs optimal in each seat, gap, and vs each heuristic."""
    table = solver420.policy_table(agent)
    suboptimal = solver420.suboptimal_choices(table.argmax(axis=2))
    figures = solver420.exact_strength(table, ("optimal", *HEURISTICS_420))
    best = solver420.solve()
    opt_red, opt_blue = best.red_win, 1.0 - best.red_win
    red, blue = figures["optimal"]
    return {
        "vs_optimal_red": red,
        "vs_optimal_blue": blue,
        "gap_pp_red": _pp(opt_red - red),
        "gap_pp_blue": _pp(opt_blue - blue),
        "suboptimal_choices": suboptimal,
        "optimal": bool(opt_red - red < 5e-7 and opt_blue - blue < 5e-7),
        **{f"vs_{name}": sum(figures[name]) / 2 for name in HEURISTICS_420},
    }


def evaluate_421(agent, pot: int) -> dict[str, Any]:
    """Exact figures for a two-player 421 agent (charge phase and seat draw included):
    P(win) against the optimal bot, its gap to 1/2, and P(win) against each heuristic."""
    from agents import solver421

    table = solver421.policy_table(agent, pot)
    figures = {f"vs_{name}": solver421.evaluate(table, solver421.bot_table(name, pot)) for name in ("optimal", *HEURISTICS["421"])}
    return {**figures, "gap_pp": _pp(0.5 - figures["vs_optimal"]), "optimal": False}


def evaluate(config: "RunConfig", agent) -> dict[str, Any]:
    if config.preset.game == "420":
        return evaluate_420(agent)
    return evaluate_421(agent, config.preset.env["pot"])


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
        self.check_each_update = config.preset.game == "420" and config.stop_when_optimal
        self.rollout_started = False

    def _on_training_start(self) -> None:
        self.next_eval = self.num_timesteps  # evaluate the starting policy too

    def _on_rollout_start(self) -> None:
        self.rollout_started = True

    def _suboptimal_choices(self) -> int:
        table = solver420.policy_table(PPOAgent.from_model(self.model, "420"))
        count = solver420.suboptimal_choices(table.argmax(axis=2))
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
    """The training env: a batched numpy env (``Vec420Env``, or ``Vec421Env`` for
    two-player 421) of ``n_envs`` games against the preset's opponent; three-player
    421 runs ``n_envs`` ``Dice421Env`` games in an SB3 DummyVecEnv."""
    if config.preset.game == "420":
        from envs.vec420 import Vec420Env

        opponent = solver420.bot_table(config.preset.opponent)
        return EpisodeMonitor(Vec420Env(config.n_envs, opponent, seed=config.seed))
    options = dict(config.preset.env)
    if options.get("n_players", 2) == 2:
        from envs.vec421 import Vec421Env

        unknown = set(options) - {"n_players", "pot"}
        if unknown:
            raise ValueError(f"two-player 421 presets take the options n_players and pot, not {sorted(unknown)}")
        return EpisodeMonitor(Vec421Env(config.n_envs, config.preset.opponent, pot=options.get("pot", 15),
                                        seed=config.seed))
    from stable_baselines3.common.monitor import Monitor
    from stable_baselines3.common.vec_env import DummyVecEnv

    from envs.dice421_env import Dice421Env

    def make():
        return Monitor(Dice421Env(opponent=config.preset.opponent, **options))

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
    if config.preset.game == "421":
        print(f"exact win probability, two players, pot {config.preset.env['pot']} (charge and seat draw included)")
        print(f"  vs optimal     {final['vs_optimal']:.6f}   (optimal vs optimal: 0.5; gap {final['gap_pp']:.4f} pp)")
        for name in HEURISTICS["421"]:
            print(f"  vs {name:<11} {final[f'vs_{name}']:.6f}")
        return
    best = solver420.solve()
    w = max(10, len(config.name))
    print("exact win probability vs the optimal bot")
    print(f"  {'':<{w}} {'as Red':>9} {'as Blue':>9} {'gap Red (pp)':>13} {'gap Blue (pp)':>14}")
    print(f"  {'optimal':<{w}} {best.red_win:>9.6f} {1 - best.red_win:>9.6f} {0:>13.4f} {0:>14.4f}")
    print(f"  {config.name:<{w}} {final['vs_optimal_red']:>9.6f} {final['vs_optimal_blue']:>9.6f} "
          f"{final['gap_pp_red']:>13.4f} {final['gap_pp_blue']:>14.4f}")
    print()
    print("exact win probability (mean of both seats) vs each heuristic")
    for name in HEURISTICS_420:
        print(f"  vs {name:<11} {final[f'vs_{name}']:.6f}")
    print("exactly optimal in both seats" if final["optimal"] else
          f"not yet exactly optimal: {final['suboptimal_choices']} decision states with a worse than best choice")
