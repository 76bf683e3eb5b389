"""Training presets: every hyperparameter of a run, visible in one place, and
next to each the settings ``python -m train sweep`` searches (``Preset.search``)."""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from typing import Any


@dataclass(frozen=True)
class Range:
    """A searched setting drawn from ``low..high`` (on a log scale if ``log``;
    whole numbers if ``integer``)."""

    low: float
    high: float
    log: bool = False
    integer: bool = False


@dataclass(frozen=True)
class Choice:
    """A searched setting drawn from a few values."""

    options: tuple[Any, ...]


# The settings a search space may name: MaskablePPO keyword arguments of ``Preset.ppo``,
# and "width", the units of every hidden layer of the policy and value networks.
WIDTH = "width"


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
    threads: int = 1  # torch threads for the network (the env steps in one); runs repeat exactly for the same count
    lr_final: float | None = None  # if set, the learning rate falls linearly to this over the run
    # if set, GAE lambda moves linearly from ppo["gae_lambda"] to this over the first
    # gae_lambda_steps steps, then stays there
    gae_lambda_final: float | None = None
    gae_lambda_steps: int = 0
    env: dict[str, Any] = field(default_factory=dict)  # game options (421: n_players, pot)
    # Self-play: each game draws its opponent from a pool of ``opponent``, the bots of
    # ``pool`` (name: share of the games) and ``snapshots`` frozen past versions of the
    # learner, which share ``snapshot_share`` of the games; every ``snapshot_every`` steps
    # the oldest is replaced by the learner as it is then.  ``opponent`` plays the rest.
    pool: dict[str, float] = field(default_factory=dict)
    snapshots: int = 0
    snapshot_share: float = 0.0
    snapshot_every: int = 0
    search: dict[str, Range | Choice] = field(default_factory=dict)  # what `python -m train sweep` varies
    # At a table of more than two players: steps between the evaluations that are exact
    # (``train.run.exact_tables``); None: every evaluation.  The others are sampled.
    exact_every: int | None = None

    @property
    def n_players(self) -> int:
        return int(self.env.get("n_players", 2))


PPO_421 = Preset(
    name="ppo-421",
    game="421",
    description="MaskablePPO on batched two-player 421 (pot 15) against the exact optimal bot",
    timesteps=16_000_000,  # see learning_rate
    n_envs=1024,
    threads=2,
    opponent="optimal",
    eval_every=1_000_000,
    env={"n_players": 2, "pot": 15},
    policy={
        "class": "FastMlpPolicy",
        # 256 x 256 with 1,024 games x 16 steps and two threads ended 0.47 and 0.40 pp short (seeds
        # 0 and 1, one-hot inputs, 25 M steps); 128 x 128 with 256 games x 64 steps, 0.58 and 0.67
        "net_arch": {"pi": [256, 256], "vf": [256, 256]},
        "activation": "tanh",
        # the one-hot code plus each hand's rank as a thermometer: a 25 M-step run at lr 2e-3 (seed
        # 0) was 0.42 pp short after 4 M steps, where one-hot inputs alone were 1.10
        "features_extractor": "Rank421Features",
    },
    ppo=dict(
        n_steps=16,  # x 1,024 games = 16,384 steps per rollout
        batch_size=4096,
        n_epochs=4,
        # falling to 0 over the run (lr_final). This preset, seed 0 (the shipped bot): 0.1747 pp short
        # in 721 s. Rank features, seed 0, one thread: 0.207 pp at 1.5e-3 over 16 M steps, 0.175 at
        # 1e-3 over 20 M, 0.213 at 2e-3 over 14 M; two threads, 0.278 at 2e-3 over 25 M
        learning_rate=1.5e-3,
        gamma=1.0,
        gae_lambda=0.7,  # 10 M steps ended 0.62 pp short at 0.7, 0.71 at 0.5, 0.79 at 0.8, 1.07 at 0.95
        clip_range=0.2,
        ent_coef=0.003,
        vf_coef=0.5,
        max_grad_norm=0.5,
    ),
    lr_final=0.0,
    stop_when_optimal=False,
    search={
        "learning_rate": Range(5e-4, 5e-3, log=True),
        "n_epochs": Range(2, 8, integer=True),
        "batch_size": Choice((1024, 2048, 4096, 8192)),  # all divide the 16,384-step rollout
        WIDTH: Choice((64, 128, 256)),
        "ent_coef": Range(0.0, 0.01),
    },
)


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
        PPO_421,
        replace(
            PPO_421,
            name="ppo-421-selfplay",
            description="the earlier ppo-421 (128 x 128, 256 games) against a pool: the optimal bot half "
                        "the games, the heuristic bots and four frozen past versions of itself the rest",
            # the earlier ppo-421 settings, with which its figures were measured
            n_envs=256,
            threads=1,
            policy={**PPO_421.policy, "net_arch": {"pi": [128, 128], "vf": [128, 128]},
                    "features_extractor": "OneHotInts"},
            timesteps=25_000_000,
            ppo={**PPO_421.ppo, "n_steps": 64, "learning_rate": 2e-3},
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
            timesteps=15_000_000,
            env={"n_players": 3, "pot": 15},
            # the inputs and learning rate its figures were measured with
            policy={**PPO_421.policy, "features_extractor": "OneHotInts"},
            ppo={**PPO_421.ppo, "learning_rate": 2e-3},
            opponent="heuristic",  # the table it is measured at: two heuristics
            pool={"exact3": 0.15, "cautious": 0.05, "greedy421": 0.05},
            snapshots=4,
            snapshot_share=0.35,
            snapshot_every=1_000_000,
            eval_every=2_500_000,
            exact_every=5_000_000,  # an exact evaluation takes minutes: the network at 4.9e7 decisions
        ),
        *(Preset(
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
        ) for n in (3, 4)),
    ]
}


def pool_weights(preset: Preset) -> list[float]:
    """Each pool member's share of the games: ``opponent``, the ``pool`` bots in order, then
    the snapshots (empty for a preset without self-play); ``ValueError`` if they do not
    make a distribution."""
    if not preset.pool and not preset.snapshots and not preset.snapshot_share:
        return []
    shares = [float(v) for v in preset.pool.values()]
    if preset.snapshots < 0 or preset.snapshot_share < 0 or (preset.snapshots > 0) != (preset.snapshot_share > 0) \
            or (preset.snapshots > 0 and preset.snapshot_every <= 0):
        raise ValueError(f"preset {preset.name}: snapshots need a positive count, share and snapshot_every together")
    left = 1.0 - sum(shares) - preset.snapshot_share
    if any(not 0 <= v <= 1 for v in shares) or left < -1e-12:
        raise ValueError(f"preset {preset.name}: pool shares must be in 0..1 and leave the opponent a share "
                         f"of at least 0, got {preset.pool} and snapshot_share {preset.snapshot_share}")
    snapshot = [preset.snapshot_share / preset.snapshots] * preset.snapshots if preset.snapshots else []
    return [max(left, 0.0), *shares, *snapshot]


def gae_lambda_schedule(preset: Preset):
    """The preset's GAE lambda as a function of the steps done (None: constant)."""
    if preset.gae_lambda_final is None:
        return None
    start, end, steps = float(preset.ppo["gae_lambda"]), float(preset.gae_lambda_final), max(1, preset.gae_lambda_steps)
    return lambda done: start + (end - start) * min(1.0, done / steps)


def setting(preset: Preset, key: str) -> Any:
    """The preset's own value of a setting a search space may name."""
    if key == WIDTH:
        widths = {w for layers in preset.policy["net_arch"].values() for w in layers}
        if len(widths) != 1:
            raise ValueError(f"preset {preset.name}: hidden layers of several widths {sorted(widths)}; "
                             f"{WIDTH!r} sets them all to one")
        return widths.pop()
    if key not in preset.ppo:
        raise ValueError(f"preset {preset.name}: {key!r} is neither {WIDTH!r} nor one of its ppo settings")
    return preset.ppo[key]


def with_settings(preset: Preset, settings: dict[str, Any], name: str | None = None) -> Preset:
    """``preset`` with ``settings`` (names as in ``Preset.search``) put in place; a
    learning rate set here still falls to ``lr_final`` over the run."""
    ppo, policy = dict(preset.ppo), dict(preset.policy)
    for key, value in settings.items():
        setting(preset, key)  # a name the preset has
        if key == WIDTH:
            policy["net_arch"] = {part: [value] * len(layers) for part, layers in preset.policy["net_arch"].items()}
        else:
            ppo[key] = value
    return replace(preset, name=name or preset.name, ppo=ppo, policy=policy)


def preset_source(preset: Preset) -> str:
    """``preset`` written as an entry of ``PRESETS`` above (to paste into this file)."""
    lines = ["Preset("]
    for f in fields(preset):
        value = getattr(preset, f.name)
        if f.name == "ppo":
            lines += ["    ppo=dict(", *(f"        {k}={v!r}," for k, v in value.items()), "    ),"]
        elif f.name == "search":
            lines += ["    search={", *(f"        {k!r}: {v!r}," for k, v in value.items()), "    },"]
        elif f.name == "policy":
            lines += ["    policy={", *(f"        {k!r}: {v!r}," for k, v in value.items()), "    },"]
        else:
            lines.append(f"    {f.name}={value!r},")
    return "\n".join([*lines, ")"])
