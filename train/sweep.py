"""python -m train sweep PRESET --trials N [options]: a hyperparameter search
with Ray Tune, Optuna's sampler choosing the settings.

The settings searched and their ranges are declared next to the preset
(``Preset.search`` in ``train.presets``).  Each trial is an ordinary
``python -m train`` run of the preset with the trial's settings, in its own
folder (``OUT/trials/PRESET-trialN/``: checkpoints and TensorBoard log), on one
CPU by default.  At each exact evaluation it reports its score to Tune, and
Tune's ASHA scheduler stops the trials that trail the others at the same step
count.  The score is the exact gap to optimal play in pp (the mean over seats);
a run that becomes exactly optimal scores ``steps to the optimum / timesteps -
1`` instead (below 0: the sooner, the lower).  Every run of a sweep uses the
same seed (``--seed``), so the settings are compared on equal terms.

The study lives in Optuna's storage (``--storage``; an SQLite file under
``--out`` by default): running the same command again resumes it, up to
``--trials`` trials in all (trials cut off by an interrupted sweep are marked
failed and run again).  A new study starts with the preset's own settings, so
the sweep says whether it beat the preset.  At the end it prints the trials,
the best settings as an entry to paste into its game's ``presets.py``, and writes
``OUT/sweep.json``.  Bad input is one ``error:`` line and exit code 2.

``OUT/sweep.json`` keeps the records of the study's trials as they end; it is
read through ``core.files.load_json`` (a regular file, bounded) and written
atomically, never through a link or onto a device.  A new study replaces the
``sweep.json`` of another one only with ``--overwrite``; a bad one is one
``error:`` line.  Ctrl-C or SIGTERM stops the sweep in one line, exit status 130
(143 for SIGTERM): the trials it finished are recorded, and running the same
command again continues the study."""

from __future__ import annotations

import argparse
import os
import shlex
import sys
import tempfile
import textwrap
import time
from pathlib import Path
from typing import Any

from core.cli import run_quietly, signal_label, stop_signal, stop_signals_raise, stop_status
from core.files import FileRefused, check_output, load_json, write_output
from train.presets import PRESETS, Choice, Preset, preset_source, setting, with_settings
from train.scale import (
    ScaleError,
    add_run_options,
    check_folder,
    first_line,
    gap,
    print_error,
    require_ray,
    run_config,
    start_ray,
)

TRIAL_NUMBER = "trial_number"  # the Optuna trial's number, passed to the trial with its settings
OWN_SETTINGS = "preset_settings"  # Optuna user attribute of the trial that runs the preset as it is
MAX_TRIALS = 100_000
GRACE_EVALUATIONS = 4  # evaluations a trial runs before ASHA may stop it
REDUCTION_FACTOR = 2  # ASHA keeps the better half of the trials at each of its rungs


def build_parser() -> argparse.ArgumentParser:
    from core.cli import MAX_SEED
    from train.__main__ import _whole

    parser = argparse.ArgumentParser(
        prog="python -m train sweep",
        description=textwrap.fill(
            "Search a preset's settings (declared next to it in its game's presets.py) "
            "with Ray Tune and Optuna's sampler; poor trials are stopped early. "
            "Prints the best settings as a preset entry.",
            78,
        ),
        epilog=textwrap.fill(
            "Score: the exact gap in pp at the end (mean over seats); a run that "
            "becomes exactly optimal scores steps-to-optimum / timesteps - 1 "
            "(below 0, lower is sooner). Running the same command again resumes "
            "the study from --storage. Each trial is an ordinary python -m train "
            "run in OUT/trials/PRESET-trialN/. Needs the scale extra: "
            'pip install -e ".[scale]"',
            78,
        ),
    )
    parser.add_argument(
        "--trials",
        type=_whole(1, MAX_TRIALS),
        default=20,
        help="trials in the study in all, counting those of earlier sessions (default 20)",
    )
    add_run_options(parser, "runs/PRESET-sweep")
    parser.add_argument("--storage", help="Optuna storage URL that keeps the study (default: sqlite:///OUT/optuna.db)")
    parser.add_argument("--study-name", help="the study's name in --storage (default: PRESET)")
    parser.add_argument("--seed", type=_whole(0, MAX_SEED), default=0, help="seed of every trial's run (default 0)")
    parser.add_argument(
        "--sampler-seed", type=_whole(0, MAX_SEED), default=0, help="seed of Optuna's TPE sampler (default 0)"
    )
    parser.add_argument(
        "--overwrite",
        action="store_true",
        help="replace OUT/sweep.json (another study's, or one that cannot be read) instead of "
        "refusing it; the study's records are then rebuilt from --storage",
    )
    return parser


class SearchSpace:
    """Optuna's define-by-run space of a preset's ``search``; it also hands the trial
    its Optuna number (the trial's folder and name).  A class, not a closure, so that
    Tune can save the searcher."""

    def __init__(self, search: dict[str, Any]):
        self.search = search

    def __call__(self, trial) -> dict[str, Any]:
        for key, dim in self.search.items():
            if isinstance(dim, Choice):
                trial.suggest_categorical(key, list(dim.options))
            elif dim.integer:
                trial.suggest_int(key, int(dim.low), int(dim.high), log=dim.log)
            else:
                trial.suggest_float(key, float(dim.low), float(dim.high), log=dim.log)
        return {TRIAL_NUMBER: trial.number}


def score(gap_pp: float, steps_to_optimum: int | None, budget: int) -> float:
    """What the sweep minimises (see the module docstring)."""
    return gap_pp if steps_to_optimum is None else steps_to_optimum / budget - 1.0


def trial_name(preset: Preset, number: int) -> str:
    return f"{preset.name}-trial{number}"


def _trial(config: dict[str, Any], base: Preset, args: argparse.Namespace, root: str) -> None:
    """One trial, in a Ray worker: the preset with the trial's settings, trained as an
    ordinary run that reports each exact evaluation to Tune."""
    from ray import tune

    from train.run import train

    preset = with_settings(base, {key: config[key] for key in base.search})
    name = trial_name(base, config[TRIAL_NUMBER])
    budget = args.timesteps or base.timesteps
    first_optimal: list[int] = []

    def metrics(figures: dict[str, Any], **extra) -> dict[str, Any]:
        if figures["optimal"] and not first_optimal:
            first_optimal.append(int(figures["timesteps"]))
        reached = first_optimal[0] if first_optimal else None
        found = {"steps_to_optimum": reached} if reached is not None else {}
        return {
            "score": score(gap(figures), reached, budget),
            "gap_pp": gap(figures),
            "timesteps": int(figures["timesteps"]),
            "wall_seconds": round(float(figures["wall_seconds"]), 1),
            "optimal": bool(figures["optimal"]),
            **found,
            **extra,
        }

    run = run_config(
        preset,
        args,
        seed=args.seed,
        name=name,
        folder=Path(root) / "trials" / name,
        on_eval=lambda figures: tune.report(metrics(figures)),
    )
    summary = train(run)
    tune.report(metrics(summary["final"], finished=True))


def open_study(storage: str, name: str, sampler_seed: int):
    """The Optuna study (created if new); ``ScaleError`` if the storage cannot be opened."""
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    try:
        return optuna.create_study(
            storage=storage,
            study_name=name,
            direction="minimize",
            load_if_exists=True,
            sampler=optuna.samplers.TPESampler(seed=sampler_seed),
        )
    except Exception as e:  # noqa: BLE001 - SQLAlchemy's and Optuna's errors for a bad URL or file are many
        raise ScaleError(f"--storage {storage}: cannot open the study there ({first_line(e)})") from None


def settle(study, preset: Preset) -> int:
    """Ready a study for this session: trials an interrupted session left running are
    marked failed; a new study gets the preset's own settings as its first trial.
    The number of trials already done (complete or pruned)."""
    from optuna.trial import TrialState

    for trial in study.get_trials(deepcopy=False, states=(TrialState.RUNNING,)):
        study._storage.set_trial_state_values(trial._trial_id, state=TrialState.FAIL)
    if not study.get_trials(deepcopy=False):
        study.enqueue_trial({key: setting(preset, key) for key in preset.search}, user_attrs={OWN_SETTINGS: True})
    return len(study.get_trials(deepcopy=False, states=(TrialState.COMPLETE, TrialState.PRUNED)))


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    args = build_parser().parse_args(argv)
    preset = PRESETS[args.preset]
    out = args.out if args.out is not None else Path("runs") / f"{preset.name}-sweep"
    storage = args.storage or f"sqlite:///{(out / 'optuna.db').resolve()}"
    study_name = args.study_name or preset.name
    try:
        if not preset.search:
            raise ScaleError(f"preset {preset.name} declares no search space (Preset.search in its game's presets.py)")
        require_ray()
        check_folder(out)
        records = {} if args.overwrite else load_records(out, study_name)
        check_records_file(out)
        stop_signals_raise()  # from here on a signal unwinds: the storage and Ray are left in order
        study = open_study(storage, study_name, args.sampler_seed)
        new = not study.get_trials(deepcopy=False)
        trials = out / "trials"
        if new and trials.is_dir() and any(trials.iterdir()):
            raise ScaleError(
                f"{trials} holds trials of another study (not in --storage {storage}); "
                "choose another --out, or the --storage and --study-name of that study"
            )
        if new and records:
            raise ScaleError(
                f"{out / SWEEP_FILE} holds the trials of another study (not in --storage {storage}); "
                "give --overwrite to replace it, or choose another --out"
            )
        done = settle(study, preset)
        remaining = args.trials - done
        stop = start_ray(args.address, args.num_cpus, args.cpus_per_trial) if remaining > 0 else (lambda: None)
    except ScaleError as e:
        return print_error(str(e))
    try:
        session: dict[str, Any] = {"ran": 0, "errors": 0, "seconds": 0.0}
        if remaining > 0:
            print(
                f"sweep {preset.name}: {remaining} trial{'s' if remaining > 1 else ''} to run "
                f"({done} of {args.trials} done); output in {out}",
                flush=True,
            )
            session = run_trials(preset, args, out, storage, study_name, remaining, records)
        else:
            print(
                f"sweep {preset.name}: {done} trials done, --trials {args.trials}: nothing to run "
                "(raise --trials for more)"
            )
    except KeyboardInterrupt:
        print(
            f"\ninterrupted ({signal_label(stop_signal())}): the trials that ended are recorded in "
            f"{out / SWEEP_FILE}; run the same command again to continue the study",
            file=sys.stderr,
        )
        return stop_status()
    finally:
        stop()
    study = open_study(storage, study_name, args.sampler_seed)
    result = summarize(
        preset, args, study, records, storage=storage, command="python -m train sweep " + shlex.join(argv)
    )
    print()
    for line in format_sweep(result, session):
        print(line)
    from agents.ppo_agent import json_bytes

    try:  # the study's own file from here on (checked above): replaced, but never through a link
        write_output(out / SWEEP_FILE, json_bytes(result), True, "sweep summary", "--overwrite")
    except FileRefused as e:
        return print_error(str(e))
    print(f"\nwrote {out / SWEEP_FILE}")
    return 1 if session["errors"] else 0


def run_trials(
    preset: Preset,
    args: argparse.Namespace,
    out: Path,
    storage: str,
    study_name: str,
    count: int,
    records: dict[int, dict[str, Any]],
) -> dict[str, Any]:
    """Run ``count`` trials with Tune; record each one's last report in ``records`` and
    ``OUT/sweep.json``."""
    from ray import tune
    from ray.tune.schedulers import ASHAScheduler
    from ray.tune.search.optuna import OptunaSearch

    from train.scale import cluster_cpus

    import optuna

    os.environ["RAY_AIR_NEW_OUTPUT"] = "0"  # Tune's older console output, which verbose=0 silences
    os.environ["TUNE_DISABLE_SIGINT_HANDLER"] = "1"  # Ctrl-C stops the sweep (main), not only Tune's loop
    budget = args.timesteps or preset.timesteps
    every = args.eval_every or preset.eval_every
    rdb = optuna.storages.RDBStorage(storage)
    # the sampler's seed moves on with the trials already in the study: a resumed sweep
    # draws new settings, not those of the session before it (and stays reproducible)
    seed = args.sampler_seed + len(rdb.get_all_trials(rdb.get_study_id_from_name(study_name), deepcopy=False))
    searcher = OptunaSearch(
        space=SearchSpace(preset.search),
        metric="score",
        mode="min",
        sampler=optuna.samplers.TPESampler(seed=seed),
        study_name=study_name,
        storage=rdb,
    )
    # time in steps: trials are compared at equal step counts; max_t lies past the last
    # step a run can reach (PPO rounds up to whole rollouts), so runs end by themselves
    scheduler = ASHAScheduler(
        time_attr="timesteps",
        metric="score",
        mode="min",
        max_t=2 * budget + 1,
        grace_period=min(GRACE_EVALUATIONS * every, budget),
        reduction_factor=REDUCTION_FACTOR,
    )
    trainable = tune.with_resources(
        tune.with_parameters(_trial, base=preset, args=args, root=str(out.resolve())), {"cpu": args.cpus_per_trial}
    )

    class Progress(tune.Callback):
        """A line per trial as it ends, and its record kept at once (an interrupted
        sweep keeps the records of the trials it finished)."""

        def on_trial_complete(self, iteration, trials, trial, **info) -> None:
            self.keep(trial, None)

        def on_trial_error(self, iteration, trials, trial, **info) -> None:
            self.keep(trial, "failed (why: in Ray's logs under /tmp/ray)")

        def keep(self, trial, error) -> None:
            record = trial_record(preset, out, trial.config, trial.last_result, error)
            if record is not None:
                records[record["trial"]] = record
                save_records(out, records, study_name)
                print(f"  {describe(record)}", flush=True)

    started = time.time()
    with tempfile.TemporaryDirectory(prefix="dice-arena-tune-") as tune_dir:  # Tune's own records: not kept
        tuner = tune.Tuner(
            trainable,
            tune_config=tune.TuneConfig(
                search_alg=searcher,
                scheduler=scheduler,
                num_samples=count,
                max_concurrent_trials=max(1, cluster_cpus() // args.cpus_per_trial),
            ),
            run_config=tune.RunConfig(name="sweep", storage_path=tune_dir, verbose=0, callbacks=[Progress()]),
        )
        results = tuner.fit()
        for result in results:  # the final word on each trial (the callback may have missed an error)
            record = trial_record(preset, out, result.config, result.metrics, result.error)
            if record is not None:
                records[record["trial"]] = record
    save_records(out, records, study_name)
    errors = sum(result.error is not None for result in results)
    return {"ran": len(results), "errors": errors, "seconds": round(time.time() - started, 1)}


def trial_record(
    preset: Preset, out: Path, config: dict[str, Any] | None, metrics: dict[str, Any] | None, error: Any
) -> dict[str, Any] | None:
    """A finished trial's settings and last report (``error``: why it failed, or None)."""
    config, metrics = config or {}, metrics or {}
    if TRIAL_NUMBER not in config:
        return None
    name = trial_name(preset, config[TRIAL_NUMBER])
    state = "error" if error is not None else "finished" if metrics.get("finished") else "stopped early"
    record = {
        "trial": config[TRIAL_NUMBER],
        "state": state,
        "settings": {k: config[k] for k in preset.search},
        "folder": str(out / "trials" / name),
    }
    for key in ("score", "gap_pp", "timesteps", "wall_seconds", "optimal", "steps_to_optimum"):
        if key in metrics:
            record[key] = metrics[key]
    if error is not None:
        record["error"] = first_line(error) if isinstance(error, BaseException) else str(error)
    return record


def describe(record: dict[str, Any]) -> str:
    text = f"trial {record['trial']}: {record['state']}"
    if "score" in record:
        text += f", score {record['score']:.4f} at {record['timesteps']:,} steps"
    return text + (f" ({record['error']})" if "error" in record else "")


SWEEP_FILE = "sweep.json"
MAX_SWEEP_BYTES = 64 * 1024 * 1024  # the records of MAX_TRIALS trials fit in far less


def check_records_file(out: Path) -> None:
    """Refuse ``OUT/sweep.json`` if it is a link, a device or anything but a regular file
    (it is replaced as the sweep goes)."""
    try:
        check_output(out / SWEEP_FILE, True, "sweep summary", "--overwrite")
    except FileRefused as e:
        raise ScaleError(str(e)) from None


def load_records(out: Path, study_name: str | None = None) -> dict[int, dict[str, Any]]:
    """The trial records of earlier sessions (``OUT/sweep.json``), by trial number; none if
    there is no such file.  A file that is not a regular file, not JSON, too large or too
    deep, not a sweep's records, or those of another study (``study_name``) is a
    ``ScaleError`` (one line)."""
    path = out / SWEEP_FILE
    if not os.path.lexists(path):
        return {}
    check_records_file(out)
    try:
        saved = load_json(path, "sweep summary", MAX_SWEEP_BYTES)
    except FileRefused as e:
        raise ScaleError(f"{e}; give --overwrite to replace it") from None
    trials = saved.get("trials") if isinstance(saved, dict) else None
    if not isinstance(trials, list) or not all(
        isinstance(r, dict) and type(r.get("trial")) is int and 0 <= r["trial"] <= MAX_TRIALS for r in trials
    ):
        raise ScaleError(
            f'{path}: not a sweep\'s summary ("trials": a list of trial records with their '
            "numbers); give --overwrite to replace it, or choose another --out"
        )
    if study_name is not None and saved.get("study", study_name) != study_name:
        raise ScaleError(
            f"{path} holds the trials of study {str(saved['study'])[:60]!r}, not {study_name!r}; "
            "give --overwrite to replace it, or choose another --out"
        )
    return {r["trial"]: r for r in trials}


def save_records(out: Path, records: dict[int, dict[str, Any]], study_name: str) -> None:
    """Keep the trial records at once (the summary rewrites the file with them): atomically,
    never through a link or onto a device (``FileRefused``)."""
    from agents.ppo_agent import json_bytes

    write_output(
        out / SWEEP_FILE,
        json_bytes({"study": study_name, "trials": [records[k] for k in sorted(records)]}),
        True,
        "sweep summary",
        "--overwrite",
    )


def summarize(
    preset: Preset, args: argparse.Namespace, study, records: dict[int, dict[str, Any]], *, storage: str, command: str
) -> dict[str, Any]:
    """The sweep's JSON: every trial of the study, the best one, and the best as a preset entry."""
    from optuna.trial import TrialState

    trials = []
    own = best = None
    for trial in study.get_trials(deepcopy=False):
        entry = {
            "trial": trial.number,
            "state": trial.state.name.lower(),
            "score": trial.value,
            "settings": dict(trial.params),
            "preset_settings": bool(trial.user_attrs.get(OWN_SETTINGS)),
        }
        entry.update({k: v for k, v in records.get(trial.number, {}).items() if k not in entry or k == "state"})
        trials.append(entry)
        if trial.state == TrialState.COMPLETE and trial.value is not None:
            if entry["preset_settings"]:
                own = entry
            if best is None or trial.value < best["score"]:
                best = entry
    result: dict[str, Any] = {
        "preset": preset.name,
        "command": command,
        "storage": storage,
        "study": study.study_name,
        "timesteps": args.timesteps or preset.timesteps,
        "seed": args.seed,
        "trials": trials,
        "best": best,
        "preset_trial": own,
    }
    if best is not None:
        result["best_preset_entry"] = preset_source(with_settings(preset, best["settings"], f"{preset.name}-tuned"))
    return result


def format_sweep(result: dict[str, Any], session: dict[str, Any]) -> list[str]:
    """The sweep's results for people (80 columns, but for the preset entry's long lines)."""
    trials = result["trials"]
    lines = [
        f"study {result['study']} ({result['storage']}):",
        f"  {len(trials)} trials; {session['ran']} ran now in {session['seconds']:.1f} s"
        + (f", {session['errors']} of them failed (see above)" if session["errors"] else ""),
        "",
        f"{'trial':>6}  {'state':<14}{'score':>9}{'gap (pp)':>10}{'steps':>13}{'optimal at':>13}",
    ]
    ranked = sorted(trials, key=lambda t: (t["score"] is None, t["score"] if t["score"] is not None else 0))
    for t in ranked:
        cells = [f"{t['trial']:>6}  {t['state']:<14}", f"{t['score']:>9.4f}" if t["score"] is not None else " " * 9]
        cells.append(f"{t['gap_pp']:>10.4f}" if "gap_pp" in t else " " * 10)
        cells.append(f"{t['timesteps']:>13,}" if "timesteps" in t else " " * 13)
        cells.append(f"{t['steps_to_optimum']:>13,}" if t.get("steps_to_optimum") is not None else " " * 13)
        lines.append("".join(cells).rstrip() + ("  (preset)" if t["preset_settings"] else ""))
    best, own = result["best"], result["preset_trial"]
    if best is None:
        return [*lines, "", "no trial has finished yet"]
    lines += ["", f"best: trial {best['trial']}, score {best['score']:.4f}"]
    if own is None:
        lines.append("(the preset's own settings have no finished trial to compare with)")
    elif best["trial"] == own["trial"]:
        lines.append("the preset's own settings remain the best")
    else:
        lines.append(f"it beats the preset's own settings (trial {own['trial']}, score {own['score']:.4f})")
    for key, value in best["settings"].items():
        lines.append(
            f"  {key:<16}{value!r:>12}   preset: {own['settings'][key]!r}" if own else f"  {key:<16}{value!r:>12}"
        )
    return [*lines, "", "as a preset entry (the game's presets.py):", *result["best_preset_entry"].splitlines()]


if __name__ == "__main__":
    run_quietly(main)
