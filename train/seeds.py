"""python -m train seeds PRESET --seeds 0-9 [options]: a seed study on Ray.

One figure from one seed says little about a preset: the same settings reach
the exact optimum at very different step counts from one seed to the next.
This trains the preset once per seed, in parallel on Ray (on this machine by
default; ``--address`` for a running cluster), each run an ordinary
``python -m train`` run in its own folder under ``--out``, and prints the
distribution of the results: the exact gap at the end and, where the run stops
once exactly optimal, the steps and seconds to the optimum, each as median,
interquartile mean (IQM) with a bootstrap 95% CI, and worst; then every seed's
figures.  The same goes to ``study.json`` under ``--out``, with a plot of each
run's gap and of the spread (``study.png``).  Bad input is one ``error:`` line
and exit code 2; a run that fails is one line each and exit code 1.

``study.json`` and ``study.png`` are written atomically (``core.files``), never
through a link or onto a device, and replace the files of an earlier study only
with ``--overwrite`` (checked before any run starts).  Ctrl-C or SIGTERM stops
the study in one line, exit status 130 (143 for SIGTERM): the finished runs, and
each other run's last checkpoint, stay in ``--out``."""

from __future__ import annotations

import argparse
import io
import shlex
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

from core.cli import run_quietly, signal_label, stop_signal, stop_signals_raise, stop_status
from core.files import FileRefused, check_output, write_output
from train.presets import PRESETS
from train.scale import (
    ScaleError,
    add_run_options,
    check_folder,
    distribution,
    first_line,
    outcome,
    print_error,
    require_ray,
    run_config,
    start_ray,
)

MAX_SEEDS = 10_000  # runs in one study


def parse_seeds(text: str) -> list[int]:
    """An argparse type: seeds as ``0-9``, ``3`` or ``0-4,7,10-12``, each once."""
    from core.cli import MAX_SEED

    seeds: list[int] = []
    for part in text.split(","):
        low, dash, high = part.strip().partition("-")
        try:
            first, last = int(low), int(high if dash else low)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{part.strip()[:40]!r} is not a seed or a range like 0-9") from None
        if not 0 <= first <= last <= MAX_SEED:
            raise argparse.ArgumentTypeError(f"{part.strip()[:40]!r}: seeds run from 0 to {MAX_SEED}, low to high")
        if last - first + len(seeds) >= MAX_SEEDS:
            raise argparse.ArgumentTypeError(f"more than {MAX_SEEDS:,} seeds")
        seeds.extend(range(first, last + 1))
    repeated = sorted({s for s in seeds if seeds.count(s) > 1})
    if repeated:
        raise argparse.ArgumentTypeError(f"seed {repeated[0]} is given twice")
    return seeds


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m train seeds",
        description=textwrap.fill(
            "Train a preset once per seed, in parallel on Ray, and print the "
            "distribution of the results (median, IQM with a bootstrap 95% CI, "
            "worst) and every seed's figures.",
            78,
        ),
        epilog=textwrap.fill(
            "Each run is an ordinary python -m train run (checkpoints and "
            "TensorBoard log) in OUT/PRESET-seedN/; OUT/study.json holds the "
            "figures and OUT/study.png the plot. Needs the scale extra: "
            'pip install -e ".[scale]"',
            78,
        ),
    )
    parser.add_argument(
        "--seeds", type=parse_seeds, default=parse_seeds("0-9"), help="seeds to train, e.g. 0-9 or 0-4,7 (default 0-9)"
    )
    add_run_options(parser, "runs/PRESET-study")
    parser.add_argument(
        "--overwrite",
        action="store_true",
        help="replace runs of these seeds, and the study's study.json and study.png, already in --out",
    )
    return parser


def _train_one(config) -> dict[str, Any]:
    """One seed's run, as a Ray task: the study's figures of it."""
    from train.run import train

    return outcome(train(config), config.seed)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    args = build_parser().parse_args(argv)
    preset = PRESETS[args.preset]
    out = args.out if args.out is not None else Path("runs") / f"{preset.name}-study"
    names = {seed: f"{preset.name}-seed{seed}" for seed in args.seeds}
    try:
        require_ray()
        check_folder(out)
        if not args.overwrite:
            from train.checkpoint import existing_files

            for seed, name in names.items():
                existing = existing_files(out / name, name)
                if existing:
                    raise ScaleError(
                        f"{existing[0]} already exists (seed {seed} was trained there); "
                        "pass --overwrite to train it again, or choose another --out"
                    )
        check_outputs(out, args.overwrite)
        stop_signals_raise()  # from here on a signal unwinds: Ray is stopped, the runs keep their checkpoints
        stop = start_ray(args.address, args.num_cpus, args.cpus_per_trial)
    except ScaleError as e:
        return print_error(str(e))
    try:
        return study(args, out, names, "python -m train seeds " + shlex.join(argv))
    except KeyboardInterrupt:
        print(
            f"\ninterrupted ({signal_label(stop_signal())}): the finished runs, and each other run's last "
            f"checkpoint, are in {out}",
            file=sys.stderr,
        )
        return stop_status()
    finally:
        stop()


OUTPUTS = {"study.json": "study summary", "study.png": "plot"}  # file in --out: what it is


def check_outputs(out: Path, overwrite: bool) -> None:
    """Refuse, before any run starts, a study file of ``out`` that would be written through a
    link or onto a device, or that exists without ``--overwrite``."""
    for file, what in OUTPUTS.items():
        try:
            check_output(out / file, overwrite, what, "--overwrite")
        except FileRefused as e:
            raise ScaleError(str(e)) from None


def study(args: argparse.Namespace, out: Path, names: dict[int, str], command: str) -> int:
    """Run the seeds on Ray, print and write the results; 0, or 1 if a run failed."""
    import ray

    from train.scale import cluster_cpus

    preset = PRESETS[args.preset]
    cpus = cluster_cpus()
    task = ray.remote(_train_one).options(num_cpus=args.cpus_per_trial, max_retries=0)
    root = out.resolve()  # workers may run elsewhere (another folder, another machine)
    pending = {}
    for seed, name in names.items():
        config = run_config(preset, args, seed=seed, name=name, folder=root / name, overwrite=args.overwrite)
        pending[task.remote(config)] = seed
    at_once = max(1, min(len(names), cpus // args.cpus_per_trial))
    print(
        f"{preset.name}: {len(names)} runs on Ray ({plural(cpus, 'CPU')}, {args.cpus_per_trial} per run, "
        f"up to {at_once} at once); output in {out}"
    )
    started = time.time()
    runs: list[dict[str, Any]] = []
    failed = 0
    try:
        while pending:
            [ready], _ = ray.wait(list(pending), num_returns=1)
            seed = pending.pop(ready)
            try:
                run = ray.get(ready)
            except ray.exceptions.RayError as e:
                failed += 1
                print(f"  seed {seed}: failed: {first_line(getattr(e, 'cause', None) or e)}", flush=True)
                continue
            runs.append(run)
            print(f"  {describe(run)}  ({len(runs) + failed} of {len(names)} done)", flush=True)
    except KeyboardInterrupt:
        stop_runs(list(pending))
        raise
    wall = time.time() - started
    runs.sort(key=lambda r: r["seed"])
    if not runs:
        print("no run finished", file=sys.stderr)
        return 1
    result = summarize(preset, runs, args, command=command, wall_seconds=wall, cpus=cpus)
    print()
    for line in format_study(result):
        print(line)
    try:
        write_outputs(out, result, args.overwrite)
    except FileRefused as e:
        return print_error(str(e))
    return 1 if failed else 0


STOP_WAIT = 120  # seconds the runs get to save once the study is interrupted


def stop_runs(refs: list, wait: float = STOP_WAIT) -> None:
    """Stop the study's runs as Ctrl-C stops ``python -m train``: each running one is
    interrupted (``ray.cancel``: a ``KeyboardInterrupt`` in its worker), saves its
    checkpoint and releases its lock; the ones not started are dropped.  Waits up to
    ``wait`` seconds for them (a further signal stops waiting)."""
    import ray

    for ref in refs:
        ray.cancel(ref, force=False)
    if refs:
        ray.wait(refs, num_returns=len(refs), timeout=wait)


def plural(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


def describe(run: dict[str, Any]) -> str:
    """One run's line as it finishes."""
    if run["steps_to_optimum"] is not None:
        return (
            f"seed {run['seed']}: exactly optimal at {run['steps_to_optimum']:,} steps, "
            f"{run['seconds_to_optimum']:.1f} s"
        )
    return f"seed {run['seed']}: {run['steps']:,} steps, {run['seconds']:.1f} s, gap {run['gap_pp']:.4f} pp"


def summarize(
    preset, runs: list[dict[str, Any]], args: argparse.Namespace, *, command: str, wall_seconds: float, cpus: int
) -> dict[str, Any]:
    """The study's JSON: what was run, where, how long, the distributions and every run."""
    stops = preset.stop_when_optimal and not args.no_early_stop
    figures = {"gap_pp": distribution([r["gap_pp"] for r in runs])}
    if stops:  # the runs look for the exact optimum: how long it took them
        figures["steps_to_optimum"] = distribution([r["steps_to_optimum"] for r in runs])
        figures["seconds_to_optimum"] = distribution([r["seconds_to_optimum"] for r in runs])
    return {
        "preset": preset.name,
        "game": preset.game,
        "command": command,
        "seeds": [r["seed"] for r in runs],
        "ray": {"address": args.address or "local", "cpus": cpus, "cpus_per_trial": args.cpus_per_trial},
        "wall_seconds": round(wall_seconds, 1),
        "runs_seconds_total": round(sum(r["seconds"] for r in runs), 1),
        "reached_optimum": sum(r["steps_to_optimum"] is not None for r in runs) if stops else None,
        "distribution": figures,
        "runs": runs,
    }


ROWS = {  # distribution key: (row label, how a value is shown)
    "gap_pp": ("gap at the end (pp)", lambda v: f"{v:.4f}"),
    "steps_to_optimum": ("steps to the optimum", lambda v: f"{v / 1e6:.2f} M"),
    "seconds_to_optimum": ("seconds to the optimum", lambda v: f"{v:.1f}"),
}


def format_study(result: dict[str, Any]) -> list[str]:
    """The study's results for people (80 columns)."""
    n = len(result["runs"])
    lines = [
        f"{result['preset']}: {n} seeds in {result['wall_seconds']:.1f} s on Ray "
        f"({plural(result['ray']['cpus'], 'CPU')}, "
        f"{result['ray']['cpus_per_trial']} per run)",
        f"(the runs' own seconds add up to {result['runs_seconds_total']:.1f} s)",
        "",
        f"{'':<24}{'median':>9}{'IQM':>9}{'IQM 95% CI':>20}{'worst':>9}",
    ]
    for key, stats in result["distribution"].items():
        label, show = ROWS[key]

        def cell(v, show=show):
            return "never" if v is None else show(v)

        ci = f"{cell(stats['ci95_low'])} to {cell(stats['ci95_high'])}"
        lines.append(f"{label:<24}{cell(stats['median']):>9}{cell(stats['iqm']):>9}{ci:>20}{cell(stats['worst']):>9}")
    if result["reached_optimum"] is not None:
        lines.append(
            f"{result['reached_optimum']} of {n} runs reached the exact optimum (a run that did not counts as never)"
        )
    header = f"{'seed':>10}{'steps':>13}{'seconds':>9}{'gap (pp)':>10}"
    lines += ["", header + (f"{'optimal at':>13}{'seconds':>9}" if result["reached_optimum"] is not None else "")]
    for run in result["runs"]:
        at = (
            ""
            if run["steps_to_optimum"] is None
            else f"{run['steps_to_optimum']:>13,}{run['seconds_to_optimum']:>9.1f}"
        )
        lines.append(f"{run['seed']:>10}{run['steps']:>13,}{run['seconds']:>9.1f}{run['gap_pp']:>10.4f}{at}")
    return lines


def write_outputs(out: Path, result: dict[str, Any], overwrite: bool = False) -> None:
    """``study.json`` and the plot of the runs' gap against time (``core.files.write_output``:
    atomic; an existing file only with ``overwrite``; never a link or a device, else
    ``FileRefused``, one line)."""
    from agents.ppo_agent import json_bytes

    write_output(out / "study.json", json_bytes(result), overwrite, OUTPUTS["study.json"], "--overwrite")
    print(f"\nwrote {out / 'study.json'}")
    try:
        image = plot_study(out, result)
    except ImportError:
        print('no plot: matplotlib is not installed (pip install -e ".[scale]")')
        return
    except (OSError, ValueError) as e:  # e.g. a run's metadata on another machine's disk (no shared storage)
        print(f"no plot: {first_line(e)}")
        return
    print(f"wrote {write_output(out / 'study.png', image, overwrite, OUTPUTS['study.png'], '--overwrite')}")


def plot_study(out: Path, result: dict[str, Any]) -> bytes:
    """The PNG of ``OUT/study.png``: left, each seed's exact gap (mean over seats) against steps,
    from its evaluation history (``train.plot.read_history``); right, each seed's
    steps to the optimum (or gap at the end, for runs that do not look for it) with
    the median and the IQM."""
    from train.plot import FLOOR, PlotError, read_history

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (curves, spread) = plt.subplots(1, 2, figsize=(10, 4), gridspec_kw={"width_ratios": [3, 2]})
    for run in result["runs"]:
        try:
            _, _, history, keys = read_history(out / run["name"] / f"{run['name']}.json")
        except PlotError as e:
            raise ValueError(str(e)) from None
        gaps = [max(sum(abs(h[k]) for k in keys) / len(keys), FLOOR) for h in history]
        curves.plot([h["timesteps"] for h in history], gaps, marker=".", label=f"seed {run['seed']}")
    curves.set_yscale("log")
    curves.set_xlabel("steps")
    curves.ticklabel_format(axis="x", style="plain")
    curves.set_ylabel("exact gap to optimal play (pp, mean of seats)")
    curves.set_title(f"{result['preset']}: {len(result['runs'])} seeds (gap 0 drawn at {FLOOR:g})")
    curves.grid(True, which="both", alpha=0.3)
    curves.legend(fontsize="small", ncol=2)
    key = "steps_to_optimum" if "steps_to_optimum" in result["distribution"] else "gap_pp"
    scale = 1e6 if key == "steps_to_optimum" else 1.0
    values = [r[key] for r in result["runs"]]
    shown = [v / scale for v in values if v is not None]
    spread.plot(shown, [0] * len(shown), "o", alpha=0.6, label="one seed")
    stats = result["distribution"][key]
    for name, label, style in (("median", "median", "--"), ("iqm", "IQM", "-")):
        if stats[name] is not None:
            spread.axvline(stats[name] / scale, linestyle=style, color="black", label=label)
    if stats["ci95_low"] is not None and stats["ci95_high"] is not None:
        spread.axvspan(stats["ci95_low"] / scale, stats["ci95_high"] / scale, alpha=0.15, label="IQM 95% CI")
    spread.set_yticks([])
    spread.set_xlabel("steps to the exact optimum (M)" if scale > 1 else "gap at the end (pp)")
    missing = sum(v is None for v in values)
    spread.set_title(
        f"{len(values) - missing} of {len(values)} seeds reached the exact optimum" if scale > 1 else "gap at the end"
    )
    spread.legend(fontsize="small")
    fig.tight_layout()
    image = io.BytesIO()
    try:
        fig.savefig(image, format="png", dpi=110)
    finally:
        plt.close(fig)
    return image.getvalue()


if __name__ == "__main__":
    run_quietly(main)
