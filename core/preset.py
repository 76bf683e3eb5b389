"""A training preset: every hyperparameter of a run in one place, next to the settings
``python -m train sweep`` searches (``Preset.search``).  Each game keeps its presets in
its folder (``GameSpec.presets``); ``train.presets`` gathers them."""

from __future__ import annotations

from dataclasses import MISSING, dataclass, field, fields
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
    # torch threads for the network (the env steps in one); runs repeat exactly for the same
    # count on the same machine
    threads: int = 1
    lr_final: float | None = None  # if set, the learning rate falls to this over the run
    # the fall's shape: lr_final + (start - lr_final) * left ** lr_power, ``left`` the share of
    # the run still to go (1: a straight line; 2: low sooner, and low for longer)
    lr_power: float = 1.0
    # if set, the updates of the last ``late_share`` of the run make this many passes over
    # their rollout instead of ppo["n_epochs"], at the learning rate times n_epochs /
    # n_epochs_late: the rate times the passes, what an update moves the network by when
    # the rate is low, stays as it was, for fewer products per step
    n_epochs_late: int | None = None
    late_share: float = 0.5
    # if set (with lr_final 0), the critic's weights (the value network and its head) learn in
    # an Adam group of their own whose rate falls as the share left to this power instead:
    # the actor's rate divided by left ** (lr_power - critic_lr_power), late factor included
    critic_lr_power: float | None = None
    # if set, GAE lambda moves linearly from ppo["gae_lambda"] to this over the first
    # gae_lambda_steps steps, then stays there
    gae_lambda_final: float | None = None
    gae_lambda_steps: int = 0
    # if set, the entropy coefficient falls linearly from ppo["ent_coef"] to this over the run
    ent_coef_final: float | None = None
    # With an action-value critic (policy class ``QMlpPolicy``): the share of each step's
    # advantage taken from the critic, Q(s, a) - V(s), instead of GAE's; moving linearly
    # from ``q_advantage`` to ``q_advantage_final`` over the run (None: constant)
    q_advantage: float = 0.0
    q_advantage_final: float | None = None
    # "bfloat16": the network's hidden layers compute in bfloat16 in the rollouts and the
    # updates (mixed precision: the weights, the heads and the losses stay float32); the
    # evaluations and play use the float32 network.  None: float32 throughout.  Only the
    # first ``mixed_precision_share`` of the run, if less than 1; the rest in float32
    mixed_precision: str | None = None
    mixed_precision_share: float = 1.0
    env: dict[str, Any] = field(default_factory=dict)  # game options (421: n_players, pot)
    # More keyword arguments of the training env only (the game's batched or live env, as
    # ``train.run.make_env`` builds it): a training aid the env offers, such as exploring
    # starts. The evaluations play the game as ``env`` sets it.
    train_env: dict[str, Any] = field(default_factory=dict)
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
    # (``train.evaluation.exact_tables``); None: every evaluation.  The others are sampled.
    exact_every: int | None = None
    # With ``exact_every``: make those exact evaluations in a process of their own on a
    # spare core while training goes on (``train.aside``; ``--exact-aside``), by default.
    # For presets that train on fewer threads than the machine has cores.
    exact_aside: bool = False

    @property
    def n_players(self) -> int:
        return int(self.env.get("n_players", 2))

    def learning(self) -> dict[str, Any]:
        """The settings that shape what a run learns, besides the network (``policy``), the
        game (``env``) and ``opponent``: a checkpoint records them (``training`` in its
        metadata), and ``--resume`` refuses a preset that has changed them since."""
        return {name: getattr(self, name) for name in LEARNING_FIELDS}

    @classmethod
    def defaults(cls) -> dict[str, Any]:
        """The default of each setting of :meth:`learning` (what a run saved before the
        setting existed was trained with)."""
        found = {f.name: f for f in fields(cls)}
        return {
            name: found[name].default_factory() if found[name].default is MISSING else found[name].default
            for name in LEARNING_FIELDS
        }


LEARNING_FIELDS = (
    "ppo",
    "lr_final",
    "lr_power",
    "n_epochs_late",
    "late_share",
    "critic_lr_power",
    "gae_lambda_final",
    "gae_lambda_steps",
    "ent_coef_final",
    "q_advantage",
    "q_advantage_final",
    "mixed_precision",
    "mixed_precision_share",
    "train_env",
    "pool",
    "snapshots",
    "snapshot_share",
    "snapshot_every",
)
