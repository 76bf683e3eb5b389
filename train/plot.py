"""python -m train.plot INPUT [INPUT ...] [--gap {game,worst,each}] [--each-run]
[--out FILE.png] [--force]: the exact gap to optimal play against environment steps
(left) and against wall-clock seconds (right), from the evaluation history that
training runs save in their checkpoint metadata.

An INPUT is a run's metadata file (``NAME.json``), or a seed study of
``python -m train seeds``: its ``study.json`` or the study's folder.  Each run's
metadata is then ``FOLDER/NAME/NAME.json`` for every run the study lists.

Runs are drawn in groups, the way rliable draws sample-efficiency curves: the
median across the group's runs, with the interquartile range (25th to 75th
percentile) as a band.  A study is one group.  Run files form one group when
they have the same name except for a ``-seedN`` ending (``ppo-420-seed0.json``,
``ppo-420-seed1.json``: group ``ppo-420``) and the same game, and each has its
own seed.  Runs of the same seed (a run and an earlier copy of it) are drawn on
their own, labelled by file name.  A group of one run is just its line.
``--each-run`` draws every run alone.  The legend gives the number of runs.

For the median, each run's gap is interpolated onto a grid shared by the group:
every step count (or second) at which one of its runs was evaluated, from the
latest first evaluation onwards.  Between two evaluations the gap is interpolated
linearly on the log scale (what the line of a single run shows).  After its last
evaluation a run keeps its final gap: it ended there (exactly optimal, out of
steps, or stopped), and its policy's gap stays what it was.  A grid of more than
``MAX_GRID`` points is ``MAX_GRID`` evenly spaced ones instead.

Which gap (``--gap``): ``game`` (the default) is the whole game's gap, ``gap_pp``,
where the run recorded one (421, Pig); for a game that records only each seat's
(420's ``gap_pp_red`` and ``gap_pp_blue``) it is their mean, which is the whole
game's gap when each seat is played equally often.  ``worst`` is the worst
seat's gap (for 421, which has no seats, the whole game's).  ``each`` draws every
gap recorded, each seat's and the whole game's, as curves of their own.  A gap of
exactly 0 is drawn at ``FLOOR`` (1e-6 pp) on the log scale, and the title says so.

A run at a table of more players has no optimum, only regrets: what a best reply gets
more than the network in its seat.  Its curves are drawn from its exact evaluations (its
sampled ones have no regret): ``game`` is the regret at the table it is measured at
(``table_regret_pp``: the game's suggested bot in every other seat), ``worst`` the larger
of that and the regret at its own table (``table_own_regret_pp``: itself in every seat),
``each`` both.

Every gap is the exact one the training recorded, the final evaluation included.
A run whose history has no step counts (``timesteps``) is drawn in the
wall-clock panel only.  For each curve one line is printed (at most 80
columns): its runs, steps, and the median and interquartile range of the gap at
the end.

The picture goes to ``gap-vs-time.png`` in the current folder unless ``--out``
says otherwise.  It is written atomically, an existing file is never replaced
without ``--force`` (so the shipped ``docs/gap-vs-time.png`` is rewritten only on
purpose), and a link, a device, a FIFO or a folder there is never written.  A
run's file is read only if it is a regular file of at most ``MAX_META_BYTES``
with JSON nested at most ``MAX_META_DEPTH`` deep (a ``study.json`` of at most
``MAX_STUDY_BYTES``).  Bad input is one ``error:`` line and exit code 2: a file
that is not a run's metadata or a study, a study whose runs' files are missing,
or an ``--out`` that cannot or must not be written."""

from __future__ import annotations

import argparse
import math
import re
import sys
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from core.files import FileRefused, check_output, output_file, parse_json, read_regular, shown

DEFAULT_OUT = Path("gap-vs-time.png")
FLOOR = 1e-6  # where a gap of exactly 0 is drawn on the log scale
MAX_META_BYTES = 1 << 20  # a run's metadata is small; refuse to read anything bigger
MAX_META_DEPTH = 16  # and shallow: a few levels of objects and lists
MAX_STUDY_BYTES = 8 << 20  # a study.json lists up to 10,000 runs, a few hundred bytes each
STUDY = "study.json"  # a seed study's summary, in its folder
PROG = "python -m train.plot"
GAP = "gap_pp"  # the whole game's gap; GAP + "_" + seat: the gap in that seat
GAP_CHOICES = {  # --gap: what it draws
    "game": "the whole game's gap (gap_pp; else the mean of the seats')",
    "worst": "the worst seat's gap (gap_pp for a game without seats)",
    "each": "every gap recorded, each seat's and the whole game's",
}
MAX_GRID = 2000  # points of a group's shared x grid (runs x points numbers are kept)
SEED_ENDING = re.compile(r"-seed\d+$")  # PRESET-seedN, the default run name


def gap_label(key: str) -> str:
    """ "whole game" for ``gap_pp``, "as Red" for ``gap_pp_red``."""
    return "whole game" if key == GAP else "as " + key[len(GAP) + 1 :].capitalize()


# a run at a table of more players: its regrets (best reply minus it), in its exact evaluations
MEASURED, OWN = "table_regret_pp", "table_own_regret_pp"
TABLE_GAPS = (MEASURED, OWN)


def gap_keys(history: list[dict[str, Any]]) -> list[str]:
    """The gaps every entry of ``history`` holds: each seat's (in the order recorded), then the
    whole game's; for a run at a table of more players, its regrets (``TABLE_GAPS``) that
    its exact evaluations hold (its other entries are left out: ``exact_entries``)."""
    found = [k for k in history[0] if k.startswith(GAP + "_") and all(_number(h.get(k)) for h in history)]
    found += [GAP] if all(_number(h.get(GAP)) for h in history) else []
    exact = exact_entries(history)
    return found or [k for k in TABLE_GAPS if exact and all(_number(h.get(k)) for h in exact)]


def exact_entries(history: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The entries of a run at a table of more players that are exact (they hold a regret)."""
    return [h for h in history if any(k in h for k in TABLE_GAPS)]


def table_label(key: str, entry: dict[str, Any]) -> str:
    """ "with B x2" for the regret at the measured table (the bots its
    ``table_regret_vs_A_B_pp`` names, the figure ``table_regret_pp`` repeats), "at its own
    table" for ``table_own_regret_pp``."""
    if key == OWN:
        return "at its own table"
    same = [k for k, v in entry.items() if k.startswith("table_regret_vs_") and k.endswith("_pp") and v == entry[key]]
    if len(same) != 1:
        return "at its measured table"
    bots = same[0].removeprefix("table_regret_vs_").removesuffix("_pp").split("_")
    return f"with {bots[0]} x{len(bots)}" if len(set(bots)) == 1 else f"with {', '.join(bots)}"


class PlotError(Exception):
    """A run that cannot be plotted or a file that cannot be written: one line for the user."""


@dataclass
class Run:
    """One run to draw: where its metadata is, what it is called, its history."""

    path: Path
    name: str
    game: str
    seed: Any  # the run's seed (None if its metadata has none)
    history: list[dict[str, Any]]  # its evaluations and its final one, in order
    keys: list[str]  # the gaps every entry holds (gap_keys)
    order: int = 0  # where it was given among the inputs (a study's runs: where the study was)


@dataclass
class Group:
    """Runs drawn as one curve per gap (the median and IQR across them)."""

    label: str
    game: str
    runs: list[Run]


INPUT_HINT = "give a run's metadata file (NAME.json) or a seed study (study.json or its folder)"


def _read_json(path: Path, what: str, limit: int, hint: str = INPUT_HINT) -> tuple[Any, int]:
    """(the JSON value, its size in bytes) of ``path``: a regular file of at most
    ``limit`` bytes, nested at most ``MAX_META_DEPTH`` deep."""
    try:
        data = read_regular(path, limit, what)
        return parse_json(data, shown(path), MAX_META_DEPTH), len(data)
    except FileRefused as e:
        raise PlotError(f"{e}{'; ' + hint if hint else ''}") from None


def _run_of(meta: Any, path: Path) -> Run:
    """The run in ``meta``, the parsed metadata of ``path``."""
    history = meta.get("eval_history") if isinstance(meta, dict) else None
    if not isinstance(history, list) or not history or not all(isinstance(h, dict) for h in history):
        raise PlotError(f"{shown(path)}: has no evaluation history (eval_history); is it a run's NAME.json?")
    keys = gap_keys(history)
    exact = meta.get("exact")
    if not keys and isinstance(exact, dict):  # a run at a table of more players, exact only at its end
        keys = [k for k in TABLE_GAPS if _number(exact.get(k))]
    if keys and keys[0] in TABLE_GAPS:
        history = exact_entries(history)
    if not keys or not all(_number(h.get("wall_seconds")) for h in history):
        raise PlotError(
            f"{shown(path)}: its evaluation history has no gap_pp or gap_pp_SEAT (or, at a table of more "
            "players, an exact table_regret_pp) with wall_seconds in every entry"
        )
    history = history + _final_point(meta, history, keys)
    if not history:
        raise PlotError(f"{shown(path)}: has no exact evaluation to draw (its final one lacks steps or seconds)")
    return Run(
        path=path,
        name=str(meta.get("name") or path.stem),
        game=str(meta.get("game", "?")),
        seed=meta.get("seed"),
        history=history,
        keys=keys,
    )


def read_run(path: Path, hint: str = "give a run's metadata file (NAME.json)") -> Run:
    """The run of a metadata file (a regular file of at most ``MAX_META_BYTES``,
    JSON nested at most ``MAX_META_DEPTH`` deep)."""
    meta, _ = _read_json(path, "run's metadata file", MAX_META_BYTES, hint)
    return _run_of(meta, path)


def read_history(path: Path) -> tuple[str, str, list[dict[str, Any]], list[str]]:
    """(run name, game, evaluation history, gap keys) of a run's metadata file (a regular
    file of at most ``MAX_META_BYTES``, JSON nested at most ``MAX_META_DEPTH`` deep)."""
    run = read_run(path)
    return run.name, run.game, run.history, run.keys


def read_runs(runs: list[Path]) -> list[tuple[str, str, list[dict[str, Any]], list[str]]]:
    """``read_history`` of each run; runs of the same name (a run and an earlier copy of
    it) are told apart by their file names."""
    series = [read_history(path) for path in runs]
    names = [name for name, _, _, _ in series]
    return [(path.stem if names.count(name) > 1 else name, *rest) for path, (name, *rest) in zip(runs, series)]


def _study_runs(study: Any, path: Path) -> tuple[str, str, list[Run]]:
    """(preset, game, runs) of a seed study's ``study.json`` (``study``, read from ``path``):
    each run's metadata is ``FOLDER/NAME/NAME.json`` beside it."""
    entries = study.get("runs") if isinstance(study, dict) else None
    names = [e.get("name") if isinstance(e, dict) else None for e in entries or []]
    if not names or not all(isinstance(n, str) and n not in ("", ".", "..") and Path(n).name == n for n in names):
        raise PlotError(f"{shown(path)}: a seed study must list its runs, each with a plain name (runs[].name)")
    runs = []
    for name in names:
        run_path = path.parent / name / f"{name}.json"
        try:
            runs.append(read_run(run_path, ""))
        except PlotError as e:
            raise PlotError(f"{e} (a run of the seed study {shown(path)})") from None
    return str(study.get("preset") or path.parent.name), str(study.get("game", "?")), runs


def read_inputs(paths: list[Path]) -> tuple[list[Run], list[tuple[Path, str, str, list[Run]]]]:
    """The run files and the seed studies (study.json, preset, game, runs) among ``paths``,
    in the order given; a study's folder stands for its study.json."""
    runs: list[Run] = []
    studies: list[tuple[Path, str, str, list[Run]]] = []
    for order, path in enumerate(map(Path, paths)):
        if path.is_dir():
            if not (path / STUDY).exists():
                raise PlotError(f"{shown(path)} is a folder without a {STUDY}; {INPUT_HINT}")
            path = path / STUDY
        what = "seed study" if path.name == STUDY else "run's metadata file"
        value, size = _read_json(path, what, MAX_STUDY_BYTES)
        if isinstance(value, dict) and "runs" in value and "eval_history" not in value:
            studies.append((path, *_study_runs(value, path)))
            for run in studies[-1][3]:
                run.order = order
            continue
        if size > MAX_META_BYTES:  # a run's metadata has the lower limit
            raise PlotError(
                f"{shown(path)}: the run's metadata file is larger than {MAX_META_BYTES:,} bytes; refusing to read it"
            )
        runs.append(_run_of(value, path))
        runs[-1].order = order
    seen: dict[Path, Path] = {}
    for run in runs + [r for *_, study_runs in studies for r in study_runs]:
        real = run.path.resolve()
        if real in seen:
            raise PlotError(f"{shown(run.path)}: this run is given twice (also as {shown(seen[real])})")
        seen[real] = run.path
    return runs, studies


def group_runs(runs: list[Run], studies: list[tuple[Path, str, str, list[Run]]], each_run: bool = False) -> list[Group]:
    """The groups to draw, in the order given: each study, and the run files grouped by
    name less its ``-seedN`` ending and by game, as long as each of a group's runs has
    its own seed (else, and with ``each_run``, every run alone, named by file if names
    repeat, and by folder and file if file names repeat too)."""
    groups: list[Group] = []
    for path, preset, game, study_runs in studies:
        folder = path.parent.resolve().name or preset
        label = folder if preset in folder else f"{preset} {folder}"
        if each_run:
            groups += [Group(r.name, r.game, [r]) for r in study_runs]
        else:
            groups.append(Group(label, game, study_runs))
    by_key: dict[tuple[str, str], list[Run]] = {}
    for run in runs:
        by_key.setdefault((SEED_ENDING.sub("", run.path.stem), run.game), []).append(run)
    names = [r.name for r in runs]
    for (base, game), members in by_key.items():
        seeds = [r.seed for r in members]
        if len(members) > 1 and not each_run and None not in seeds and len(set(map(repr, seeds))) == len(seeds):
            groups.append(Group(base, game, members))
        else:
            groups += [Group(r.path.stem if names.count(r.name) > 1 else r.name, r.game, [r]) for r in members]
    groups.sort(key=lambda g: min(r.order for r in g.runs))  # stable: a study's runs stay in order
    labels = [g.label for g in groups]
    for g in groups:  # runs of one file name in two folders: named with their folder
        if labels.count(g.label) > 1 and len(g.runs) == 1:
            g.label = f"{g.runs[0].path.parent.resolve().name}/{g.runs[0].path.stem}"
    labels = [g.label for g in groups]
    for i, g in enumerate(groups):  # still the same (two studies in folders of one name, say): numbered
        if labels.count(g.label) > 1:
            g.label = f"{g.label} [{labels[: i + 1].count(g.label)}]"
    return groups


def curves(run: Run, how: str) -> list[tuple[str, list[float]]]:
    """(what it is, the gap at each entry of the run's history) of each curve ``how``
    (``--gap``) draws for ``run``."""
    seats = [k for k in run.keys if k != GAP]
    history = run.history
    if run.keys[0] in TABLE_GAPS:
        regrets = [(table_label(k, history[0]), [abs(h[k]) for h in history]) for k in run.keys]
        if how == "worst" and len(regrets) > 1:
            return [("worst table", [max(pair) for pair in zip(*(r for _, r in regrets))])]
        return regrets if how == "each" else regrets[:1]
    if how == "each":
        return [(gap_label(k), [abs(h[k]) for h in history]) for k in run.keys]
    if how == "worst" and seats:
        return [("worst seat", [max(abs(h[k]) for k in seats) for h in history])]
    if GAP in run.keys:
        return [("whole game", [abs(h[GAP]) for h in history])]
    return [("mean of seats", [sum(abs(h[k]) for k in seats) / len(seats) for h in history])]


def band(series: list[tuple[list[float], list[float]]]) -> tuple[np.ndarray, ...]:
    """(x, median, 25th percentile, 75th percentile) of runs given as (x, gap) lists.

    The grid ``x`` is every x of every run from the latest first x onwards.  Each run's
    gap is interpolated there linearly in log(max(gap, FLOOR)), and holds its last
    value after its last x; the quantiles are taken across runs at each x.  One
    run gives its own points back.  (A grid of more than ``MAX_GRID`` points is
    ``MAX_GRID`` evenly spaced ones.)"""
    logs = []
    for xs, gaps in series:
        order = np.argsort(np.asarray(xs, dtype=float), kind="stable")
        x = np.asarray(xs, dtype=float)[order]
        logs.append((x, np.log(np.maximum(np.asarray(gaps, dtype=float)[order], FLOOR))))
    start = max(x[0] for x, _ in logs)
    grid = np.unique(np.concatenate([x for x, _ in logs]))
    grid = grid[grid >= start]
    if len(grid) > MAX_GRID:
        grid = np.linspace(start, grid[-1], MAX_GRID)
    at = np.exp(np.array([np.interp(grid, x, y) for x, y in logs]))  # after the last x: the last y
    at = np.where(at <= FLOOR * (1 + 1e-9), FLOOR, at)  # exp(log(FLOOR)) is FLOOR, not a hair off
    return grid, np.median(at, axis=0), np.percentile(at, 25, axis=0), np.percentile(at, 75, axis=0)


def _final_point(meta: dict[str, Any], history: list[dict[str, Any]], keys: list[str]) -> list[dict[str, Any]]:
    """The run's final evaluation (its ``exact`` figures at ``timesteps``, ``wall_seconds``)
    as one more point, when it came after the last evaluation of the history."""
    exact, steps, wall = meta.get("exact"), meta.get("timesteps"), meta.get("wall_seconds")
    if not (isinstance(exact, dict) and all(_number(exact.get(k)) for k in keys) and _number(steps) and _number(wall)):
        return []
    if history and not (
        _number(history[-1].get("timesteps"))
        and steps > history[-1]["timesteps"]
        and wall >= history[-1]["wall_seconds"]
    ):
        return []
    tables = {k: v for k, v in exact.items() if k.startswith("table_regret_vs_")} if keys[0] in TABLE_GAPS else {}
    return [{"timesteps": steps, "wall_seconds": wall, **tables, **{k: exact[k] for k in keys}}]


MAX_ABS = 1e12  # seconds, steps and gaps beyond this are not a run's (and overflow the drawing)


def _number(value: Any) -> bool:
    """A finite number of plausible size (a huge int or float is no run's figure)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    try:
        return math.isfinite(value) and abs(value) <= MAX_ABS
    except OverflowError:  # an int too large for a float
        return False


def _plain(text: str, limit: int = 80) -> str:
    """A run's name or game as a label: cut to ``limit`` characters, with ``$`` escaped
    (matplotlib reads ``$...$`` as mathematics, and a bad formula fails the drawing)."""
    text = _cut(text, limit)
    return text.replace("$", r"\$")


def _cut(text: str, limit: int) -> str:
    """``text`` on one line (a character that does not print is a ``?``), cut to ``limit``."""
    text = "".join(c if c.isprintable() else "?" for c in text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def check_out(out: Path, force: bool) -> Path:
    """Refuse an --out that is a folder, a link, a device or a FIFO, lies in no folder, or
    exists (unless ``force``): :func:`core.files.check_output`."""
    try:
        return check_output(out, force, "PNG file")
    except FileRefused as e:
        raise PlotError(f"--out {e}") from None


@dataclass
class Curve:
    """One line of the picture (a group's gap of one kind), on both axes."""

    label: str  # group (game, gap)
    runs: int
    steps: tuple[np.ndarray, ...] | None  # band() against steps; None if a run has no step counts
    seconds: tuple[np.ndarray, ...]  # band() against wall-clock seconds
    last_steps: float | None  # the most steps of its runs
    last_seconds: float  # the most seconds of its runs
    regret: bool = False  # a regret at a table of more players, not a gap to an optimum


def group_curves(group: Group, how: str) -> list[Curve]:
    """The curves ``how`` (``--gap``) draws for ``group``: one per kind of gap its runs
    all have (with ``each``, seats missing from one of its runs are left out)."""
    per_run = [dict(curves(run, how)) for run in group.runs]
    kinds = [k for k in per_run[0] if all(k in c for c in per_run)]
    if not kinds:
        raise PlotError(
            f"the runs of {group.label} record different gaps ({', '.join(sorted({k for c in per_run for k in c}))}): "
            "a table of two and one of more? give them with --each-run"
        )
    with_steps = all(all(_number(h.get("timesteps")) for h in r.history) for r in group.runs)
    found = []
    for kind in kinds:
        steps = [([h.get("timesteps", 0) for h in r.history], c[kind]) for r, c in zip(group.runs, per_run)]
        seconds = [([h["wall_seconds"] for h in r.history], c[kind]) for r, c in zip(group.runs, per_run)]
        found.append(
            Curve(
                label=f"{group.label} ({group.game}, {kind})",
                runs=len(group.runs),
                steps=band(steps) if with_steps else None,
                seconds=band(seconds),
                last_steps=max(max(x) for x, _ in steps) if with_steps else None,
                last_seconds=max(max(x) for x, _ in seconds),
                regret=group.runs[0].keys[0] in TABLE_GAPS,
            )
        )
    return found


WIDTH = 80  # columns of the printed lines


def summary_lines(found: list[Curve]) -> list[str]:
    """One line per curve for people (at most ``WIDTH`` columns): its runs, its steps, and
    the median and IQR (with more than one run) of the gap at the end."""
    what = "regret" if found and all(c.regret for c in found) else "gap"
    lines = [f"{'':<56}{what} at the end (pp)", f"{'curve':<39}{'runs':>5}{'steps':>9}{'median':>9}  IQR"]
    for c in found:
        _, median, low, high = c.seconds
        steps = "" if c.last_steps is None else f"{c.last_steps / 1e6:.2f} M"
        iqr = f"{_pp(low[-1])} to {_pp(high[-1])}" if c.runs > 1 else ""
        rest = f"{c.runs:>5}{steps:>9}{_pp(median[-1]):>9}  {iqr}".rstrip()
        width = min(39, WIDTH - len(rest))  # narrower only if the figures are long
        lines.append(f"{_cut(c.label, width - 1):<{width}}{rest}")
    return lines


def _pp(value: float) -> str:
    """A gap for people: 0 when exactly optimal, else 3 significant digits."""
    return "0" if value <= FLOOR else f"{value:.3g}"


def draw(found: list[Curve], games: list[str]):
    """The figure of the curves: left against steps, right against wall-clock seconds."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import EngFormatter

    rows = math.ceil(len(found) / 2)  # of the legend, under the panels
    fig, (by_steps, by_time) = plt.subplots(1, 2, figsize=(12, 4.6 + 0.25 * rows), sharey=True, layout="constrained")
    exact_zero = False
    for i, c in enumerate(found):
        color = f"C{i % 10}"
        label = _plain(c.label, 120) + (
            f": median and IQR of {c.runs} runs" if c.runs > 1 else (" (1 run)" if len(found) > 1 else "")
        )
        for ax, b in ((by_steps, c.steps), (by_time, c.seconds)):
            if b is None:
                continue
            x, median, low, high = b
            exact_zero = exact_zero or bool(np.min(low) <= FLOOR)
            shown_as = label if ax is by_time else None  # once in the legend
            ax.plot(x, median, color=color, marker="." if c.runs == 1 else None, label=shown_as)
            if c.runs > 1:
                ax.fill_between(x, low, high, color=color, alpha=0.2, linewidth=0)
    by_steps.set_xlabel("environment steps")
    by_steps.xaxis.set_major_formatter(EngFormatter(sep=" "))
    by_time.set_xlabel("wall-clock seconds of training")
    regrets = sum(c.regret for c in found)  # curves of runs at a table of more players
    what = "regret" if regrets == len(found) else "gap to optimal play" + (" or regret" if regrets else "")
    by_steps.set_ylabel(f"exact {what} (pp)")
    if all(c.steps is None for c in found):
        by_steps.text(0.5, 0.5, "no step counts recorded", ha="center", transform=by_steps.transAxes)
    for ax in (by_steps, by_time):
        ax.set_yscale("log")
        ax.grid(True, which="both", alpha=0.3)
    fig.suptitle(
        f"{' and '.join(games)}: exact {what} of the PPO policy"
        + (
            (" (" if regrets == len(found) else " (regret: ") + "what a best reply in its seat gets more)"
            if regrets
            else ""
        )
        + (f"  (points at {FLOOR:g} are exact: gap 0)" if exact_zero else "")
    )
    fig.legend(loc="outside lower center", ncols=min(2, len(found)), fontsize="small")
    return fig, plt


def plot(runs: list[Path], out: Path | str, force: bool = False, how: str = "game", each_run: bool = False) -> Path:
    """Draw the gaps of ``runs`` (run metadata files, study.json files or study folders)
    to ``out`` (written atomically); raises :class:`PlotError`."""
    return plot_curves(runs, out, force, how, each_run)[0]


def plot_curves(
    runs: list[Path], out: Path | str, force: bool = False, how: str = "game", each_run: bool = False
) -> tuple[Path, list[Curve]]:
    """``plot``, and the curves drawn."""
    if how not in GAP_CHOICES:
        raise PlotError(f"--gap {how!r}: choose one of {', '.join(GAP_CHOICES)}")
    out = check_out(out, force)
    groups = group_runs(*read_inputs(runs), each_run=each_run)
    found = [c for g in groups for c in group_curves(g, how)]
    games = sorted({_plain(g.game) for g in groups})
    fig, plt = draw(found, games)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the layout's "not applied" for very long labels
            fig.canvas.draw()  # any failure of the drawing is met here, before the file is opened
    except (ValueError, OverflowError, RuntimeError) as e:
        plt.close(fig)
        raise PlotError(f"cannot draw these runs ({type(e).__name__}: {str(e).splitlines()[0][:100]})") from None
    try:
        with output_file(out, force, "PNG file") as f:
            fig.savefig(f, dpi=110, format="png")
    except FileRefused as e:
        raise PlotError(f"--out {e}") from None
    finally:
        plt.close(fig)
    return out, found


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Plot the exact gap to optimal play against environment steps and against seconds "
        "of training (wall clock), from the evaluation history in training runs' metadata. The runs of "
        "a seed study, or of one name save a -seedN ending, are drawn as their median with the "
        "interquartile range.",
        epilog="example: python -m train.plot runs/PRESET-study checkpoints/RUN.json --out gap.png",
    )
    parser.add_argument(
        "runs",
        nargs="+",
        type=Path,
        metavar="INPUT",
        help="a run's metadata file (NAME.json), or a seed study (study.json or its folder)",
    )
    parser.add_argument(
        "--gap",
        choices=list(GAP_CHOICES),
        default="game",
        help="which gap: " + "; ".join(f"{k}: {v}" for k, v in GAP_CHOICES.items()) + " (default: game)",
    )
    parser.add_argument("--each-run", action="store_true", help="draw every run alone, not its group's median")
    parser.add_argument(
        "--out", default=str(DEFAULT_OUT), help=f"PNG to write (default: {DEFAULT_OUT} in the current folder)"
    )
    parser.add_argument("--force", action="store_true", help="replace --out if it exists")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        out, found = plot_curves(args.runs, args.out, args.force, args.gap, args.each_run)
    except PlotError as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return 2
    for line in summary_lines(found):
        print(line)
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    from core.cli import run_interruptible

    run_interruptible(main)
