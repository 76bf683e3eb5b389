"""Training presets: every game's, gathered from the game folders (``GameSpec.presets``),
and what a run reads from one (pool weights, schedules, searched settings)."""

from __future__ import annotations

from dataclasses import fields, replace
from typing import Any

import games
from core.preset import WIDTH, Choice, Preset, Range  # noqa: F401 (the presets' API)


def _gather() -> dict[str, Preset]:
    """Every registered game's presets, by name (a name given twice is refused)."""
    found: dict[str, Preset] = {}
    for name in games.names():
        spec = games.get(name)
        for preset in games.load(spec.presets) if spec.presets else ():
            if preset.name in found:
                raise ValueError(f"preset {preset.name} is declared twice")
            if preset.game != spec.name:
                raise ValueError(f"preset {preset.name} of {spec.name}'s folder is for game {preset.game}")
            found[preset.name] = preset
    return found


PRESETS: dict[str, Preset] = _gather()


def pool_weights(preset: Preset) -> list[float]:
    """Each pool member's share of the games: ``opponent``, the ``pool`` bots in order, then
    the snapshots (empty for a preset without self-play); ``ValueError`` if they do not
    make a distribution."""
    if not preset.pool and not preset.snapshots and not preset.snapshot_share:
        return []
    shares = [float(v) for v in preset.pool.values()]
    if (
        preset.snapshots < 0
        or preset.snapshot_share < 0
        or (preset.snapshots > 0) != (preset.snapshot_share > 0)
        or (preset.snapshots > 0 and preset.snapshot_every <= 0)
    ):
        raise ValueError(f"preset {preset.name}: snapshots need a positive count, share and snapshot_every together")
    left = 1.0 - sum(shares) - preset.snapshot_share
    if any(not 0 <= v <= 1 for v in shares) or left < -1e-12:
        raise ValueError(
            f"preset {preset.name}: pool shares must be in 0..1 and leave the opponent a share "
            f"of at least 0, got {preset.pool} and snapshot_share {preset.snapshot_share}"
        )
    snapshot = [preset.snapshot_share / preset.snapshots] * preset.snapshots if preset.snapshots else []
    return [max(left, 0.0), *shares, *snapshot]


def _ramp(start: float, end: float, steps: int):
    """A value moving linearly from ``start`` to ``end`` over ``steps`` steps done, then
    staying at ``end``."""
    steps = max(1, steps)
    return lambda done: start + (end - start) * min(1.0, done / steps)


def learning_rate_schedule(preset: Preset):
    """The preset's learning rate as SB3 takes a schedule: a function of the share of the run
    still to go (1 at the start, 0 at the end), falling from ``ppo["learning_rate"]`` to
    ``lr_final`` as that share to the power ``lr_power`` (None: a constant rate, and no
    schedule unless ``n_epochs_late`` scales it).  With ``n_epochs_late`` the rate of the
    last ``late_share`` of the run is multiplied by ``n_epochs / n_epochs_late``
    (:func:`epochs_schedule`).  ``ValueError`` unless the power is a positive number."""
    epochs = epochs_schedule(preset)
    if preset.lr_final is None and epochs is None:
        return None
    start = float(preset.ppo["learning_rate"])
    if preset.lr_final is None:
        fall = lambda left: start  # noqa: E731
    else:
        power = preset.lr_power
        _check_power(preset, "lr_power", "the learning rate fall's", power)
        end = float(preset.lr_final)
        fall = lambda left: end + (start - end) * left**power  # noqa: E731
    if epochs is None:
        return fall
    early = epochs(1.0)
    return lambda left: fall(left) * early / epochs(left)


def critic_learning_rate_schedule(preset: Preset):
    """The critic's own learning rate (``Preset.critic_lr_power``) as a function of the share
    of the run still to go, or None when the critic learns at the network's rate: the
    actor's rate (:func:`learning_rate_schedule`, late factor included) divided by ``left
    ** (lr_power - critic_lr_power)``, so falling from the same start to 0 as ``left`` to
    the power ``critic_lr_power``.  ``ValueError`` unless the power is a positive number
    and the rate falls to ``lr_final`` 0."""
    power = preset.critic_lr_power
    if power is None:
        return None
    _check_power(preset, "critic_lr_power", "the critic's learning rate fall's", power)
    if preset.lr_final != 0:
        raise ValueError(
            f"preset {preset.name}: critic_lr_power needs the learning rate to fall to lr_final 0.0, "
            f"got lr_final {preset.lr_final!r}"
        )
    rate, ratio = learning_rate_schedule(preset), preset.lr_power - power
    # left no less than 1e-6: the actor's rate is 0 there, and so the critic's
    return lambda left: rate(left) / max(left, 1e-6) ** ratio


def _check_power(preset: Preset, name: str, whose: str, power: Any) -> None:
    """``ValueError`` unless ``power`` (the preset's setting ``name``, ``whose`` power) is a
    positive number."""
    if isinstance(power, bool) or not isinstance(power, (int, float)) or not 0 < power < float("inf"):
        raise ValueError(f"preset {preset.name}: {name} is {whose} power, a positive number, got {power!r}")


def _check_share(preset: Preset, name: str, share: Any) -> None:
    """``ValueError`` unless ``share`` (the preset's setting ``name``) is a share of the run
    in (0, 1]."""
    if isinstance(share, bool) or not isinstance(share, (int, float)) or not 0 < share <= 1:
        raise ValueError(f"preset {preset.name}: {name} is a share of the run in (0, 1], got {share!r}")


def epochs_schedule(preset: Preset):
    """The passes over each rollout (``n_epochs``) as a function of the share of the run
    still to go, as the learning rate's: ``ppo["n_epochs"]`` (SB3's 10 if unset), then
    ``n_epochs_late`` once less than ``late_share`` of the run is left; None without
    ``n_epochs_late``.  ``ValueError`` unless it is a whole number of at least 1 and the
    share is in (0, 1]."""
    late, share = preset.n_epochs_late, preset.late_share
    if late is None:
        return None
    if isinstance(late, bool) or not isinstance(late, int) or late < 1:
        raise ValueError(f"preset {preset.name}: n_epochs_late is a number of passes, at least 1, got {late!r}")
    _check_share(preset, "late_share", share)
    early = int(preset.ppo.get("n_epochs", 10))
    return lambda left: late if left < share else early


def gae_lambda_schedule(preset: Preset):
    """The preset's GAE lambda as a function of the steps done (None: constant)."""
    if preset.gae_lambda_final is None:
        return None
    return _ramp(float(preset.ppo["gae_lambda"]), float(preset.gae_lambda_final), preset.gae_lambda_steps)


def ent_coef_schedule(preset: Preset, timesteps: int):
    """The preset's entropy coefficient as a function of the steps done, falling to
    ``ent_coef_final`` at ``timesteps`` (the run's length; None: constant)."""
    if preset.ent_coef_final is None:
        return None
    start, end, steps = float(preset.ppo.get("ent_coef", 0.0)), float(preset.ent_coef_final), max(1, timesteps)
    return lambda done: end + (start - end) * max(0.0, 1.0 - done / steps)  # as the learning rate's


def q_advantage_schedule(preset: Preset, timesteps: int):
    """The share of the critic's advantage in each rollout's (``Preset.q_advantage``) as a
    function of the steps done, moving to ``q_advantage_final`` at ``timesteps`` (the run's
    length); None when the preset takes none.  ``ValueError`` unless each share is in 0..1."""
    start = float(preset.q_advantage)
    end = start if preset.q_advantage_final is None else float(preset.q_advantage_final)
    if not (0.0 <= start <= 1.0 and 0.0 <= end <= 1.0):
        raise ValueError(
            f"preset {preset.name}: q_advantage and q_advantage_final are shares in 0..1, "
            f"got {preset.q_advantage} and {preset.q_advantage_final}"
        )
    if start == end == 0.0:
        return None
    return _ramp(start, end, timesteps)


MIXED_PRECISIONS = ("bfloat16",)  # what Preset.mixed_precision may name (None: float32)


def mixed_precision_schedule(preset: Preset):
    """The dtype the preset's hidden layers train in (``Preset.mixed_precision``) as a
    function of the share of the run still to go, as the learning rate's: the dtype's
    name for the first ``mixed_precision_share`` of the run, then None (float32); None
    for a preset in float32 throughout.  ``ValueError`` for a dtype not in
    ``MIXED_PRECISIONS`` or a share not in (0, 1]."""
    value, share = preset.mixed_precision, preset.mixed_precision_share
    if value is None:
        return None
    if value not in MIXED_PRECISIONS:
        raise ValueError(
            f"preset {preset.name}: mixed_precision is {value!r} (known: {', '.join(MIXED_PRECISIONS)}, "
            f"or None for float32)"
        )
    _check_share(preset, "mixed_precision_share", share)
    if share == 1:
        return lambda left: value  # to the end, the last update included
    return lambda left: value if left > 1 - share else None


def check_schedules(preset: Preset, timesteps: int) -> None:
    """``ValueError`` (one line, naming the preset and the setting) for a pool or schedule
    setting a run of ``timesteps`` steps cannot take: each is built once, as a run builds
    them, so a bad preset stops before anything is trained."""
    pool_weights(preset)
    learning_rate_schedule(preset)  # epochs_schedule's checks included
    critic_learning_rate_schedule(preset)
    q_advantage_schedule(preset, timesteps)
    mixed_precision_schedule(preset)


def setting(preset: Preset, key: str) -> Any:
    """The preset's own value of a setting a search space may name."""
    if key == WIDTH:
        widths = {w for layers in preset.policy["net_arch"].values() for w in layers}
        if len(widths) != 1:
            raise ValueError(
                f"preset {preset.name}: hidden layers of several widths {sorted(widths)}; "
                f"{WIDTH!r} sets them all to one"
            )
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
    """``preset`` written as a ``Preset(...)`` entry (to paste into its game's ``presets.py``)."""
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
