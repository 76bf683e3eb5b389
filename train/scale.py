"""What ``python -m train seeds`` and ``python -m train sweep`` share: starting
Ray, their common options, one training run as a Ray job, and the statistics
of a distribution over seeds.

A run on Ray is an ordinary run (``train.run.train``: the same checkpoints,
TensorBoard logs and exact evaluations as ``python -m train PRESET``), in a
folder of its own under the study's output folder.  Ray is imported only here
and in ``train.seeds`` / ``train.sweep`` (the ``scale`` extra); without it the
commands say in one line how to install it.  Ray keeps its logs and temporary
files under its own temporary folder (``/tmp/ray``), not in the project."""

from __future__ import annotations

import argparse
import math
import os
import signal
import sys
from pathlib import Path
from typing import Any, Callable

import numpy as np

from core.cli import interrupt, stop_signals_installed, stop_signals_raise
from train.presets import PRESETS, Preset

INSTALL = 'pip install -e ".[scale]"'
MAX_CPUS = 4096  # CPUs a run or a local Ray may be given
BOOTSTRAP_SAMPLES = 10_000
BOOTSTRAP_SEED = 0  # the confidence intervals are reproducible
AUTH_MODE = "RAY_AUTH_MODE"  # Ray's switch for token authentication
IQM_TRIM = 0.25  # the interquartile mean leaves out this share of runs at each end


class ScaleError(Exception):
    """A study that cannot start (no Ray, no cluster, too few CPUs): one line for the user."""


def require_ray() -> None:
    """Raise ``ScaleError`` saying how to install the scale extra (Ray, Optuna) if it is missing."""
    try:
        import optuna  # noqa: F401
        import ray  # noqa: F401
        from ray import tune  # noqa: F401
    except ImportError as e:
        raise ScaleError(
            f"{e.name or 'Ray'} is not installed; seed studies and sweeps need the scale extra: {INSTALL}"
        ) from None


def add_run_options(parser: argparse.ArgumentParser, default_out: str) -> None:
    """The options of ``python -m train`` a study passes to each of its runs, and where
    the study runs (Ray's address, CPUs)."""
    from train.__main__ import MAX_N_ENVS, _folder_name, _whole
    from train.checkpoint import MAX_TIMESTEPS

    # studies score the exact gap to the two-player optimum: heads-up presets only
    heads_up = [name for name, p in PRESETS.items() if p.n_players == 2]
    parser.add_argument("preset", choices=heads_up, metavar="PRESET", help="one of: " + ", ".join(heads_up))
    parser.add_argument(
        "--timesteps", type=_whole(1, MAX_TIMESTEPS), help="total steps of each run (default: the preset's)"
    )
    parser.add_argument(
        "--n-envs", type=_whole(1, MAX_N_ENVS), help="games stepped in parallel in each run (default: the preset's)"
    )
    parser.add_argument(
        "--eval-every", type=_whole(1, MAX_TIMESTEPS), help="steps between exact evaluations (default: the preset's)"
    )
    parser.add_argument("--no-early-stop", action="store_true", help="train all --timesteps even once exactly optimal")
    parser.add_argument(
        "--out",
        type=_folder_name,
        help=f"output folder: one folder per run, the summary JSON, the plot (default {default_out})",
    )
    parser.add_argument(
        "--address", help="a running Ray cluster to use (e.g. auto, or HOST:6379); default: start Ray on this machine"
    )
    parser.add_argument(
        "--num-cpus",
        type=_whole(1, MAX_CPUS),
        help="CPUs of the Ray started on this machine (default: all; not with --address)",
    )
    parser.add_argument(
        "--cpus-per-trial", type=_whole(1, MAX_CPUS), default=1, help="CPUs (and torch threads) of each run (default 1)"
    )


def start_ray(address: str | None, num_cpus: int | None, cpus_per_trial: int) -> Callable[[], None]:
    """Connect to the cluster at ``address``, or start Ray on this machine (unless
    this process already did); a function that stops what was started here.
    Workers' output stays in Ray's logs: the study prints its own lines."""
    if address is not None and num_cpus is not None:
        raise ScaleError("--num-cpus sizes the Ray started on this machine; a cluster (--address) has its own")
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")  # no usage report, and no notice about it
    import ray

    started = not ray.is_initialized()
    if started and address is not None:
        check_reachable(address)
    if started:
        options: dict[str, Any] = dict(log_to_driver=False, include_dashboard=False, logging_level="ERROR")
        try:
            if address is not None:
                ray.init(address=address, **options)
            else:  # "local": a new Ray, even if a cluster started by `ray start` runs here
                ray.init(address="local", num_cpus=num_cpus, **options)
        except (ConnectionError, ValueError, RuntimeError) as e:
            where = f"--address {address}" if address is not None else "Ray on this machine"
            hint = ""
            if address not in (None, "auto") and AUTH_MODE not in os.environ:
                # Ray takes the cluster's token (~/.ray/auth_token) by itself only for "auto"
                hint = f"; a cluster with token authentication (Ray's default) also needs {AUTH_MODE}=token"
            raise ScaleError(f"{where}: cannot start or reach it ({first_line(e)}){hint}") from None
        except SystemExit as e:
            # ray.init puts in its own SIGTERM handler, which exits with the signal's number:
            # stop what it started and unwind as our SIGTERM does
            ray.shutdown()
            if e.code == signal.SIGTERM and stop_signals_installed():
                stop_signals_raise()
                interrupt(signal.SIGTERM)
            raise
        except BaseException:  # a Ctrl-C while Ray starts: stop what it started
            ray.shutdown()
            raise
        stop_signals_raise()  # ours again (the program's, if it installed them), instead of Ray's
    stop = ray.shutdown if started else (lambda: None)
    cpus = int(ray.cluster_resources().get("CPU", 0))
    if cpus < cpus_per_trial:
        stop()
        raise ScaleError(f"--cpus-per-trial {cpus_per_trial}: the Ray cluster has only {cpus} CPUs")
    return stop


def check_reachable(address: str, timeout: float = 5.0) -> None:
    """A HOST:PORT nothing answers at is refused at once (Ray would retry for minutes)."""
    import socket

    host, colon, port = address.rpartition(":")
    if not colon or "://" in address or not port.isdigit():
        return  # "auto", or a form Ray reads itself
    try:
        socket.create_connection((host, int(port)), timeout=timeout).close()
    except (OSError, ValueError) as e:
        raise ScaleError(
            f"--address {address}: nothing answers there ({getattr(e, 'strerror', None) or e}); "
            "start the cluster's head with: ray start --head"
        ) from None


def cluster_cpus() -> int:
    import ray

    return int(ray.cluster_resources().get("CPU", 0))


def first_line(error: BaseException, width: int = 120) -> str:
    """The first line of an error's message, cut to ``width`` characters."""
    text = (str(error).strip().splitlines() or [type(error).__name__])[0]
    return text if len(text) <= width else text[: width - 3] + "..."


def check_folder(path: Path, flag: str = "--out") -> None:
    """Create the output folder, or say in one line why it cannot be one."""
    from train.__main__ import _folder

    problem = _folder(path, flag)
    if problem:
        raise ScaleError(problem)


def gap(figures: dict[str, Any]) -> float:
    """The exact gap to optimal play in pp, one figure for any game: the mean of the
    gaps per seat the evaluation reports (``gap_pp_SEAT``: 420's as Red and as Blue), else
    its whole game's (``gap_pp``: 421's)."""
    from train.plot import GAP

    seats = [float(v) for k, v in figures.items() if k.startswith(GAP + "_")]
    gaps = seats or [float(figures[GAP])]
    return sum(gaps) / len(gaps)


def outcome(summary: dict[str, Any], seed: int) -> dict[str, Any]:
    """A finished run's figures for a study: the end (steps, seconds, gap) and the
    first evaluation that found it exactly optimal, if any."""
    final = summary["final"]
    first = next((h for h in summary["history"] if h.get("optimal")), None)
    return {
        "name": Path(summary["checkpoint"]).name,
        "seed": seed,
        "steps": int(final["timesteps"]),
        "seconds": round(float(final["wall_seconds"]), 1),
        "gap_pp": gap(final),
        "optimal": bool(final["optimal"]),
        "steps_to_optimum": None if first is None else int(first["timesteps"]),
        "seconds_to_optimum": None if first is None else round(float(first["wall_seconds"]), 1),
        "checkpoint": summary["checkpoint"],
    }


def run_config(preset: Preset, args: argparse.Namespace, *, seed: int, name: str, folder: Path, **extra):
    """The ``train.run.RunConfig`` of one run of a study: the run's checkpoints and its
    TensorBoard log both in ``folder``; no progress bar (nobody sees a worker's)."""
    from train.run import RunConfig

    return RunConfig(
        preset=preset,
        timesteps=args.timesteps or preset.timesteps,
        seed=seed,
        n_envs=args.n_envs or preset.n_envs,
        logdir=folder,
        checkpoint_dir=folder,
        name=name,
        eval_every=args.eval_every,
        stop_when_optimal=preset.stop_when_optimal and not args.no_early_stop,
        progress_bar=False,
        torch_threads=args.cpus_per_trial,
        **extra,
    )


# --- the distribution over seeds ------------------------------------------------------


def iqm(values: np.ndarray) -> float:
    """The interquartile mean: the mean of the runs left once the lowest and the highest
    quarter (rounded down) are set aside; robust to a few outliers, less noisy than the
    median.  ``inf`` (a run that never got there) counts as the largest value."""
    ordered = np.sort(np.asarray(values, dtype=float))
    cut = int(IQM_TRIM * len(ordered))
    return float(ordered[cut : len(ordered) - cut].mean())


def bootstrap_ci(
    values: np.ndarray, statistic: Callable[[np.ndarray], float] = iqm, level: float = 0.95
) -> tuple[float, float]:
    """A percentile bootstrap confidence interval of ``statistic`` over the runs:
    ``BOOTSTRAP_SAMPLES`` resamples with replacement, drawn from ``BOOTSTRAP_SEED``.
    The bounds are resampled values, not interpolated (``inf`` stays ``inf``)."""
    values = np.asarray(values, dtype=float)
    rng = np.random.default_rng(BOOTSTRAP_SEED)
    picks = rng.integers(0, len(values), size=(BOOTSTRAP_SAMPLES, len(values)))
    stats = np.array([statistic(values[row]) for row in picks])
    tail = (1 - level) / 2
    return float(np.quantile(stats, tail, method="lower")), float(np.quantile(stats, 1 - tail, method="higher"))


def distribution(values: list[float | None]) -> dict[str, float | None]:
    """Median, interquartile mean, its bootstrap 95% CI and the worst (largest) of
    the runs' figures; ``None`` (never reached) counts as infinite and is written
    back as ``None``."""
    array = np.array([math.inf if v is None else v for v in values], dtype=float)
    low, high = bootstrap_ci(array)
    figures = {
        "median": float(np.median(array)),
        "iqm": iqm(array),
        "ci95_low": low,
        "ci95_high": high,
        "worst": float(array.max()),
    }
    return {k: (v if math.isfinite(v) else None) for k, v in figures.items()}


def print_error(message: str) -> int:
    print(f"error: {message}", file=sys.stderr)
    return 2
