"""420's training presets (``python -m train ppo-420``, ``ppo-420-3p``, ``ppo-420-4p``)."""

from __future__ import annotations

from core.preset import WIDTH, Choice, Preset, Range

PRESETS = [
    Preset(
        name="ppo-420",
        game="420",
        description="MaskablePPO on batched 420 against the exact optimal bot; stops once exactly optimal",
        timesteps=4_000_000,
        n_envs=1024,
        opponent="optimal",
        eval_every=262_144,
        policy={
            # the actor reads the other hand only: a keep's worth does not depend on
            # the dice thrown back (agents/features.py)
            "class": "SplitMlpPolicy",
            "net_arch": {"pi": [64], "vf": [64]},
            "activation": "tanh",
            "features_extractor": "Keep420Features",
            "features_extractor_kwargs": {"features_dim": 256},
        },
        ppo=dict(
            n_steps=64,  # x 1024 games = 65,536 steps per rollout
            batch_size=16_384,
            n_epochs=2,
            learning_rate=3e-3,
            gamma=1.0,
            gae_lambda=0.5,  # falling to gae_lambda_final below
            clip_range=0.2,
            ent_coef=0.0,
            vf_coef=0.5,
            max_grad_norm=0.5,
        ),
        lr_final=0.0,
        # lower-variance advantages once the critic has learnt: the last close calls
        # (e.g. 6-6-5-1 keeps 6 6, not 6 6 5) differ by under 1 pp of winning
        gae_lambda_final=0.2,
        gae_lambda_steps=2_000_000,
        search={
            "learning_rate": Range(1e-3, 1e-2, log=True),
            "n_epochs": Range(1, 4, integer=True),
            "batch_size": Choice((4096, 8192, 16_384, 32_768)),  # all divide the 65,536-step rollout
            WIDTH: Choice((32, 64, 128)),
            "ent_coef": Range(0.0, 0.01),
        },
    ),
    *(
        Preset(
            name=f"ppo-420-{n}p",
            game="420",
            description=f"MaskablePPO on batched {n}-player 420; each other seat plays optimal, greedy, "
            "foundation or one of four frozen past versions of the learner",
            timesteps=6_000_000,
            n_envs=1024,
            threads=2,
            opponent="optimal",  # the table it is measured at: optimal in every other seat
            eval_every=1_000_000,
            env={"n_players": n},
            policy={
                "class": "FastMlpPolicy",  # every hand of the table, one-hot die by die
                "net_arch": {"pi": [128, 128], "vf": [128, 128]},
                "activation": "tanh",
                "features_extractor": "OneHotInts",
            },
            ppo=dict(
                n_steps=32,  # x 1,024 games = 32,768 steps per rollout
                batch_size=8192,
                n_epochs=2,
                learning_rate=3e-3,
                gamma=1.0,
                gae_lambda=0.5,
                clip_range=0.2,
                ent_coef=0.0,
                vf_coef=0.5,
                max_grad_norm=0.5,
            ),
            lr_final=0.0,
            stop_when_optimal=False,
            pool={"greedy": 0.1, "foundation": 0.1},
            snapshots=4,
            snapshot_share=0.3,
            snapshot_every=1_000_000,
            search={
                "learning_rate": Range(1e-3, 1e-2, log=True),
                "n_epochs": Range(1, 4, integer=True),
                "batch_size": Choice((4096, 8192, 16_384, 32_768)),  # all divide the 32,768-step rollout
                WIDTH: Choice((64, 128, 256)),
                "ent_coef": Range(0.0, 0.01),
            },
        )
        for n in (3, 4)
    ),
]
