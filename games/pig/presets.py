"""Pig's training presets (``python -m train ppo-pig``)."""

from __future__ import annotations

from core.preset import WIDTH, Choice, Preset, Range

PRESETS = [
    Preset(
        name="ppo-pig",
        game="pig",
        description="MaskablePPO on batched two-player Pig (goal 100) against the exact optimal bot",
        timesteps=20_000_000,
        n_envs=1024,
        threads=2,
        opponent="optimal",
        eval_every=1_000_000,
        env={"n_players": 2, "goal": 100, "faces": 6},
        policy={
            "class": "FastMlpPolicy",
            "net_arch": {"pi": [256, 256], "vf": [256, 256]},
            "activation": "tanh",
            # each score and the turn total as a thermometer: "hold once the turn total is at
            # least t(scores)" is then one weighted sum
            "features_extractor": "ThermometerInts",
        },
        ppo=dict(
            n_steps=16,  # x 1,024 games = 16,384 steps per rollout
            batch_size=4096,
            n_epochs=4,
            learning_rate=1e-3,
            gamma=1.0,
            gae_lambda=0.8,
            clip_range=0.2,
            ent_coef=0.0,
            vf_coef=0.5,
            max_grad_norm=0.5,
        ),
        lr_final=0.0,
        stop_when_optimal=False,
        search={
            "learning_rate": Range(3e-4, 3e-3, log=True),
            "n_epochs": Range(2, 8, integer=True),
            "batch_size": Choice((2048, 4096, 8192)),
            WIDTH: Choice((64, 128, 256)),
        },
    ),
]
