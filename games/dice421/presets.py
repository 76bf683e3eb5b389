"""421's training presets (``python -m train ppo-421``, ``ppo-421-selfplay``, ``ppo-421-3p``)."""

from __future__ import annotations

from dataclasses import replace

from core.preset import WIDTH, Choice, Preset, Range

PPO_421 = Preset(
    name="ppo-421",
    game="421",
    description="MaskablePPO on batched two-player 421 (pot 15) against the exact optimal bot",
    # 16 M steps before the thirty-ninth idea, whose runs still gained at the lowest rates:
    # with the critic's own rate (critic_lr_power below) and 17 M, seeds 0-2 end 0.0947,
    # 0.0859 and 0.0814 pp short in 803.0, 794.9 and 805.9 s (16 M: 0.0871, 0.0849, 0.1105)
    timesteps=17_000_000,  # see learning_rate
    n_envs=1024,
    threads=2,
    opponent="optimal",
    eval_every=1_000_000,
    env={"n_players": 2, "pot": 15},
    policy={
        # the critic values each action, Q(s, a); part of each advantage is Q(s, a) - V(s)
        # (q_advantage below)
        "class": "QMlpPolicy",
        "net_arch": {"pi": [256, 256], "vf": [256, 256]},
        # as 2 * sigmoid(2x) - 1 instead (the same to 1.8e-7), no faster, seeds 0-2 end 0.0897,
        # 0.1369 and 0.0986 pp short: rounding alone moves a run's end (docs/results.md,
        # the nineteenth idea)
        "activation": "tanh",
        # the one-hot code plus each hand's rank as a thermometer (trials: docs/results.md).
        # Its first layers summed as lookups of the 28 active rows: no faster, seeds 0-2 end
        # 0.0944, 0.1048 and 0.1073 pp short (docs/results.md, the twentieth idea)
        "features_extractor": "Rank421Features",
    },
    ppo=dict(
        n_steps=16,  # x 1,024 games = 16,384 steps per rollout
        # 2,048 ends seeds 0-2 0.0702, 0.0899 and 0.0783 pp short (4,096: 0.0949, 0.1030,
        # 0.0914) but in 1,016.3 to 1,055.1 s, over 15 minutes. Made to fit with fewer steps
        # (13 M: seed 2 ends 0.1154), bfloat16 (19 M: seed 0 ends 0.1063), three passes
        # (n_epochs=3: seed 1 ends 0.1125) or a 128 x 128 actor (seed 1 ends 0.1045 in
        # 908.7 s), it misses; in the last quarter only, the preset's mean (docs/results.md,
        # the twenty-fifth, twenty-sixth and 28th to 31st ideas). 3,072 on rollouts of 12
        # steps: seeds 0-2 end 0.1058, 0.0765 and 0.1198 (the thirty-second idea)
        batch_size=4096,
        n_epochs=4,
        # falling to 0 over the run (lr_final, lr_power); this preset, seed 0, is the shipped bot.
        # From 2e-3 seeds 0-2 end 0.0833, 0.0849 and 0.1109 pp short (from 1.5e-3: 0.0894,
        # 0.1107, 0.0922): the worst seed as high (docs/results.md, the eighteenth idea)
        learning_rate=1.5e-3,
        gamma=1.0,
        # the value targets lean on the critic, not on the dice that follow. With the straight
        # fall of the learning rate 0.1 was ahead early and level at the end (seeds 0-2
        # 0.1143, 0.1127 and 0.0874 pp short; 0.7: 0.1081, 0.1142, 0.1266); with lr_power 2
        # below it keeps its lead (docs/results.md, the sixteenth and seventeenth ideas)
        gae_lambda=0.1,
        clip_range=0.2,
        # constant; 0.01 instead of 0.003 ends seeds 0-2 0.1575, 0.1878 and 0.1769 pp short
        # instead of 0.1950, 0.1870 and 0.2673 (two threads). Falling to 0 over the run
        # (ent_coef_final=0.0) won every seed on one thread and lost two on two
        # (docs/results.md)
        ent_coef=0.01,
        vf_coef=0.5,
        max_grad_norm=0.5,
    ),
    lr_final=0.0,
    # the rate falls as the square of the share of the run left: a quarter of the start at
    # half time, so the low rates, where a run's last gains are made, last longer. With lambda
    # 0.1, seeds 0-2 end 0.0894, 0.1107 and 0.0922 pp short (the straight fall with lambda
    # 0.7 on the same machine: 0.1271, 0.1089, 0.1299; docs/results.md, the seventeenth idea)
    lr_power=2.0,
    # the critic's weights in an Adam group of their own, whose rate falls straight (the
    # actor's over the share left): twice the actor's at half time, four times at three
    # quarters, so the critic the advantages lean on keeps learning late. With 16 M steps,
    # seeds 0-5 end 0.0871, 0.0849, 0.1105, 0.1091, 0.0989 and 0.1129 pp short; at the
    # actor's rate, on the same machine, 0.1124, 0.0982, 0.1209, 0.0838, 0.1047 and 0.1113:
    # a mean 0.0047 lower, within the seeds' noise, and no slower (docs/results.md, the
    # thirty-seventh idea); as the square root of the share left, seed 2 0.1209 (the
    # thirty-eighth)
    critic_lr_power=1.0,
    # the last quarter of the run (rate below 0.094e-3) makes 2 passes over each rollout at
    # twice the rate instead of 4: its updates take 0.59x the seconds, the run about 0.9x.
    # Seeds 0-2 end 0.0949, 0.1030 and 0.0914 pp short (with 4: 0.0894, 0.1107, 0.0922;
    # docs/results.md, the twenty-third idea); from half the run on, with 18 M steps:
    # 0.1260, 0.0856, 0.1367 (the twenty-first idea)
    n_epochs_late=2,
    late_share=0.25,
    # the share of each advantage taken from the critic, Q(s_t, a_t) - V(s_t), rising from
    # half to nine tenths over the run; GAE's share keeps the outcomes' say
    # (docs/results.md, the twelfth idea). Taken over every action in the update (the
    # expected policy gradient) instead of the action drawn: seed 1 ends 0.1313 pp short
    # instead of 0.1030 (the twenty-fourth idea)
    q_advantage=0.5,
    q_advantage_final=0.9,
    # exploring starts: half the training games start their discharge from a token split
    # drawn evenly instead of from where the charge leads, so the splits real games seldom
    # reach are trained as often as the others (docs/results.md, the fifteenth idea); the
    # evaluations play the game as dealt
    train_env={"exploring_starts": 0.5},
    stop_when_optimal=False,
    search={
        "learning_rate": Range(5e-4, 5e-3, log=True),
        "n_epochs": Range(2, 8, integer=True),
        "batch_size": Choice((1024, 2048, 4096, 8192)),  # all divide the 16,384-step rollout
        WIDTH: Choice((64, 128, 256)),
        "ent_coef": Range(0.0, 0.03),  # the preset's 0.01 inside, not at the edge
    },
)


# The derived presets' shipped runs made four passes to the end: they leave out ppo-421's
# late passes (and keep late_share's default, as their metadata records it).
FOUR_PASSES_TO_THE_END = {"n_epochs_late": None, "late_share": Preset.late_share}
# Their critics learned at the network's rate, as ppo-421's before the thirty-seventh idea.
ONE_RATE = {"critic_lr_power": None}

PRESETS = [
    PPO_421,
    replace(
        PPO_421,
        name="ppo-421-selfplay",
        description="the earlier ppo-421 (128 x 128, 256 games) against a pool: the optimal bot half "
        "the games, the heuristic bots and four frozen past versions of itself the rest",
        # the earlier ppo-421 settings, with which its figures were measured
        n_envs=256,
        threads=1,
        policy={
            **PPO_421.policy,
            "class": "FastMlpPolicy",
            "net_arch": {"pi": [128, 128], "vf": [128, 128]},
            "features_extractor": "OneHotInts",
        },
        q_advantage=0.0,  # the critic of one state value, as then
        q_advantage_final=None,
        timesteps=25_000_000,
        ppo={**PPO_421.ppo, "n_steps": 64, "learning_rate": 2e-3, "ent_coef": 0.003, "gae_lambda": 0.7},
        lr_power=1.0,  # the straight fall, as then
        **FOUR_PASSES_TO_THE_END,
        **ONE_RATE,
        train_env={},  # the games as dealt, as then
        pool={"heuristic": 0.1, "greedy421": 0.05, "cautious": 0.05},
        snapshots=4,
        snapshot_share=0.3,
        snapshot_every=1_000_000,
    ),
    replace(
        PPO_421,
        name="ppo-421-3p",
        description="MaskablePPO on batched three-player 421 (pot 15); each other seat plays heuristic, "
        "exact3, the other bots or one of four frozen past versions of the learner",
        timesteps=20_000_000,
        threads=1,  # the shipped run's (a run repeats exactly with the same count)
        env={"n_players": 3, "pot": 15},
        # ppo-421's action-value critic and its share of each advantage (0.5 -> 0.9): regret
        # 0.2851 pp with two heuristics at the end where a critic of state values ended at
        # 0.4246 (docs/results.md). GAE lambda 0.1 (ppo-421's since), pinned here: the value
        # targets lean on the critic, not on the dice that follow: 0.2470 and 0.2494 pp at the
        # two tables where 0.7 ended at 0.2851 and 0.2901 (docs/results.md)
        ppo={**PPO_421.ppo, "ent_coef": 0.003, "gae_lambda": 0.1},  # ent_coef: ppo-421's then
        # the straight fall of the learning rate, as in the shipped run. ppo-421's square
        # fall and its two late passes (without FOUR_PASSES_TO_THE_END), not kept: seed 1
        # 0.2502 and 0.2510 pp where this preset's ends 0.2652 and 0.2636, but seed 2 0.3405
        # and 0.3325 where this preset's ends 0.2587 and 0.2587 (docs/results.md, tables of
        # three)
        lr_power=1.0,
        **FOUR_PASSES_TO_THE_END,
        **ONE_RATE,
        train_env={},  # the games as dealt, as in the shipped run
        # ppo-421's inputs (the hands' ranks) and learning rate: 0.98 pp at 5 M steps where the
        # one-hot inputs at 2e-3 were at 1.73 (docs/results.md)
        opponent="heuristic",  # the table it is measured at: two heuristics
        pool={"exact3": 0.15, "cautious": 0.05, "greedy421": 0.05},
        snapshots=4,
        snapshot_share=0.35,
        snapshot_every=1_000_000,
        # exact every 1 M steps, as the two-player runs: an exact point is the network's table
        # at its 4.9e7 decisions (131 s for the shipped network, 204 s for an untrained one:
        # python -m games.dice421.exactn --time-network) and two best replies, about 2.5 to
        # 4 min, made aside on the second core while training goes on one (the run is the
        # same; --no-exact-aside makes them in the run, adding about 50 min to it)
        eval_every=1_000_000,
        exact_every=1_000_000,
        exact_aside=True,
    ),
]
