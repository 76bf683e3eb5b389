"""Pig's training presets (``python -m train ppo-pig``)."""

from __future__ import annotations

from core.preset import WIDTH, Choice, Preset, Range

# How these settings were chosen, trial by trial: docs/results.md, "How the presets were chosen".
PRESETS = [
    Preset(
        name="ppo-pig",
        game="pig",
        description="MaskablePPO on batched two-player Pig (goal 100) against the exact optimal bot",
        timesteps=5_000_000,  # see learning_rate; 381 s here (the shipped run), 881 s at load 4 to 6
        n_envs=1024,
        # one torch thread: a 128 x 128 network gains little from a second one, and a run then
        # repeats exactly (this preset, seed 0, is the shipped bot)
        threads=1,
        opponent="optimal",
        # each exact evaluation asks the network at ~500 k decision states and solves three
        # matches and a best reply: ~5-10 s here, so a few per run
        eval_every=1_000_000,
        env={"n_players": 2, "goal": 100, "faces": 6},
        policy={
            "class": "FastMlpPolicy",
            # 128 x 128 learns as fast per step as 256 x 256 (1.31 pp after 800 k steps against
            # 1.21 after 500 k for 256 x 256) at about five times the steps/s; 64 x 64 (lr 3e-3),
            # 1.34 after 800 k, only ~25 % faster
            "net_arch": {"pi": [128, 128], "vf": [128, 128]},
            "activation": "tanh",
            # each score and the turn total as a thermometer: "hold once the turn total is at
            # least t(scores)" is then one weighted sum
            "features_extractor": "ThermometerInts",
        },
        ppo=dict(
            n_steps=16,  # x 1,024 games = 16,384 steps per rollout
            batch_size=4096,  # 8192 was no better by 3 M steps (0.57 pp against 0.56 at 2 M)
            n_epochs=4,
            # falling to 0 over the run (lr_final): the last 20 % of the run took the gap from
            # 0.54 to 0.42 pp (this preset); over 3 M steps it ended at 0.49 / 0.52
            learning_rate=2e-3,
            gamma=1.0,
            gae_lambda=0.8,  # 0.95: 0.45 pp at 2 M steps, 0.53 at 2.5 M; 0.8: 0.56 and 0.45
            clip_range=0.2,
            ent_coef=0.0,
            vf_coef=0.5,
            max_grad_norm=0.5,
        ),
        lr_final=0.0,
        stop_when_optimal=False,
        search={
            "learning_rate": Range(5e-4, 5e-3, log=True),
            "n_epochs": Range(2, 8, integer=True),
            "batch_size": Choice((2048, 4096, 8192)),
            WIDTH: Choice((64, 128, 256)),
        },
    ),
]
