"""Training presets: every hyperparameter of a run, visible in one place."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Preset:
    name: str
    game: str
    description: str
    timesteps: int
    n_envs: int
    opponent: str  # a bot name; the policy table of that bot is the opponent in every game
    eval_every: int  # timesteps between evaluations
    policy: dict[str, Any]  # network shape, stored in checkpoint metadata
    ppo: dict[str, Any] = field(default_factory=dict)  # MaskablePPO keyword arguments
    stop_when_optimal: bool = True
    lr_final: float | None = None  # if set, the learning rate falls linearly to this over the run
    env: dict[str, Any] = field(default_factory=dict)  # game options (421: n_players, pot)


PRESETS: dict[str, Preset] = {
    p.name: p
    for p in [
        Preset(
            name="ppo-420",
            game="420",
            description="MaskablePPO on batched 420 against the exact optimal bot; stops once exactly optimal",
            timesteps=4_000_000,
            n_envs=1024,
            opponent="optimal",
            eval_every=262_144,
            policy={
                "class": "FastMlpPolicy",
                "net_arch": {"pi": [64], "vf": [64]},
                "activation": "tanh",
                "features_extractor": "Hand420Features",
                "features_extractor_kwargs": {"features_dim": 256},
            },
            ppo=dict(
                n_steps=64,  # x 1024 games = 65,536 steps per rollout
                batch_size=16_384,
                n_epochs=2,
                learning_rate=3e-3,
                gamma=1.0,
                gae_lambda=0.8,
                clip_range=0.2,
                ent_coef=0.0,
                vf_coef=0.5,
                max_grad_norm=0.5,
            ),
            lr_final=0.0,
        ),
        Preset(
            name="ppo-421",
            game="421",
            description="MaskablePPO on batched two-player 421 (pot 15) against the exact optimal bot",
            timesteps=10_000_000,
            n_envs=256,
            opponent="optimal",
            eval_every=500_000,
            env={"n_players": 2, "pot": 15},
            policy={
                "class": "FastMlpPolicy",
                "net_arch": {"pi": [128, 128], "vf": [128, 128]},
                "activation": "tanh",
                "features_extractor": "OneHotInts",
            },
            ppo=dict(
                n_steps=64,  # x 256 games = 16,384 steps per rollout
                batch_size=4096,
                n_epochs=4,
                learning_rate=2e-3,
                gamma=1.0,
                gae_lambda=0.95,
                clip_range=0.2,
                ent_coef=0.003,
                vf_coef=0.5,
                max_grad_norm=0.5,
            ),
            lr_final=0.0,
            stop_when_optimal=False,
        ),
    ]
}
