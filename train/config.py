"""A training run's settings, as the command line and the studies give them."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from train.presets import Preset

DEFAULT_LOGDIR = Path("runs")  # python -m train's --logdir default (a continue-with command leaves it out)


@dataclass
class RunConfig:
    preset: Preset
    timesteps: int
    seed: int | None  # None: the saved run's when resuming, else 0
    n_envs: int
    logdir: Path
    checkpoint_dir: Path
    name: str
    resume: bool = False
    overwrite: bool = False  # replace an existing run of this name
    eval_every: int | None = None
    exact_every: int | None = None  # None: the preset's (tables of more than two players)
    exact_aside: bool | None = None  # those in a process of their own (train.aside); None: the preset's
    stop_when_optimal: bool = True
    progress_bar: bool = True
    torch_threads: int | None = None  # None: the preset's, or the saved run's when resuming
    # called with the figures of each evaluation during training, once its checkpoint is
    # saved (python -m train sweep reports the exact gap to Ray Tune with it)
    on_eval: Callable[[dict[str, Any]], None] | None = None

    @property
    def exact_aside_on(self) -> bool:
        """Whether the exact evaluations are made aside: ``exact_aside``, else the preset's."""
        return self.preset.exact_aside if self.exact_aside is None else self.exact_aside
