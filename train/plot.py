"""python -m train.plot RUN.json [RUN.json ...] [--out FILE.png] [--force]: the
exact gap to optimal play against wall-clock seconds, from the evaluation history
a training run saves in its checkpoint metadata.

Every gap a run recorded is drawn, its final evaluation included: a gap per seat
(``gap_pp_SEAT``, e.g. ``gap_pp_red``) and over the whole game (``gap_pp``),
whichever the game's solver gives.  Runs of the same name are labelled by file name.
The picture goes to ``gap-vs-time.png`` in the current folder unless ``--out``
says otherwise; it is written atomically, an existing file is never replaced
without ``--force`` (so the shipped ``docs/gap-vs-time.png`` is rewritten only
on purpose), and a link, a device, a FIFO or a folder there is never written.
A run's file is read only if it is a regular file of at most ``MAX_META_BYTES``
with JSON nested at most ``MAX_META_DEPTH`` deep.  Bad input (a file that is not
a run's metadata, an ``--out`` that cannot or must not be written) is one
``error:`` line and exit code 2."""

from __future__ import annotations

import argparse
import math
import sys
import warnings
from pathlib import Path
from typing import Any

from core.files import FileRefused, check_output, load_json, output_file

DEFAULT_OUT = Path("gap-vs-time.png")
FLOOR = 1e-6  # where a gap of exactly 0 is drawn on the log scale
MAX_META_BYTES = 1 << 20  # a run's metadata is small; refuse to read anything bigger
MAX_META_DEPTH = 16  # and shallow: a few levels of objects and lists
PROG = "python -m train.plot"
GAP = "gap_pp"  # the whole game's gap; GAP + "_" + seat: the gap in that seat


def gap_label(key: str) -> str:
    """ "whole game" for ``gap_pp``, "as Red" for ``gap_pp_red``."""
    return "whole game" if key == GAP else "as " + key[len(GAP) + 1 :].capitalize()


def gap_keys(history: list[dict[str, Any]]) -> list[str]:
    """The gaps every entry of ``history`` holds: each seat's (in the order recorded), then the whole game's."""
    found = [k for k in history[0] if k.startswith(GAP + "_") and all(_number(h.get(k)) for h in history)]
    return found + ([GAP] if all(_number(h.get(GAP)) for h in history) else [])


class PlotError(Exception):
    """A run that cannot be plotted or a file that cannot be written: one line for the user."""


def read_history(path: Path) -> tuple[str, str, list[dict[str, Any]], list[str]]:
    """(run name, game, evaluation history, gap keys) of a run's metadata file (a regular
    file of at most ``MAX_META_BYTES``, JSON nested at most ``MAX_META_DEPTH`` deep)."""
    try:
        meta = load_json(path, "run's metadata file", MAX_META_BYTES, MAX_META_DEPTH)
    except FileRefused as e:
        raise PlotError(f"{e}; give a run's metadata file (NAME.json)") from None
    history = meta.get("eval_history") if isinstance(meta, dict) else None
    if not isinstance(history, list) or not history or not all(isinstance(h, dict) for h in history):
        raise PlotError(f"{path}: has no evaluation history (eval_history); is it a run's NAME.json?")
    keys = gap_keys(history)
    if not keys or not all(_number(h.get("wall_seconds")) for h in history):
        raise PlotError(f"{path}: its evaluation history has no gap_pp or gap_pp_SEAT with wall_seconds in every entry")
    return (
        str(meta.get("name") or path.stem),
        str(meta.get("game", "?")),
        history + _final_point(meta, history, keys),
        keys,
    )


def read_runs(runs: list[Path]) -> list[tuple[str, str, list[dict[str, Any]], list[str]]]:
    """``read_history`` of each run; runs of the same name (a run and an earlier copy of
    it) are told apart by their file names."""
    series = [read_history(path) for path in runs]
    names = [name for name, _, _, _ in series]
    return [(path.stem if names.count(name) > 1 else name, *rest) for path, (name, *rest) in zip(runs, series)]


def _final_point(meta: dict[str, Any], history: list[dict[str, Any]], keys: list[str]) -> list[dict[str, Any]]:
    """The run's final evaluation (its ``exact`` figures at ``timesteps``, ``wall_seconds``)
    as one more point, when it came after the last evaluation of the history."""
    exact, steps, wall = meta.get("exact"), meta.get("timesteps"), meta.get("wall_seconds")
    if not (isinstance(exact, dict) and all(_number(exact.get(k)) for k in keys) and _number(steps) and _number(wall)):
        return []
    if not (
        _number(history[-1].get("timesteps"))
        and steps > history[-1]["timesteps"]
        and wall >= history[-1]["wall_seconds"]
    ):
        return []
    return [{"timesteps": steps, "wall_seconds": wall, **{k: exact[k] for k in keys}}]


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
    text = text if len(text) <= limit else text[: limit - 1] + "…"
    return text.replace("$", r"\$")


def check_out(out: Path, force: bool) -> Path:
    """Refuse an --out that is a folder, a link, a device or a FIFO, lies in no folder, or
    exists (unless ``force``): :func:`core.files.check_output`."""
    try:
        return check_output(out, force, "PNG file")
    except FileRefused as e:
        raise PlotError(f"--out {e}") from None


def plot(runs: list[Path], out: Path | str, force: bool = False) -> Path:
    """Draw the runs' gaps to ``out`` (written atomically); raises :class:`PlotError`."""
    out = check_out(out, force)
    series = read_runs(runs)
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4))
    exact_zero = False
    for name, game, history, keys in series:
        seconds = [h["wall_seconds"] for h in history]
        for key in keys:
            gaps = [max(abs(h[key]), FLOOR) for h in history]
            exact_zero = exact_zero or min(gaps) == FLOOR
            ax.plot(seconds, gaps, marker=".", label=_plain(f"{name} ({game}, {gap_label(key)})", 120))
    games = sorted({_plain(game) for _, game, _, _ in series})
    ax.set_yscale("log")
    ax.set_xlabel("wall-clock seconds of training (2-core CPU)")
    ax.set_ylabel("gap to optimal win probability (pp)")
    ax.set_title(
        f"{' and '.join(games)}: exact gap of the PPO policy to optimal play"
        + (f"\n(points at {FLOOR:g} are exact: gap 0)" if exact_zero else "")
    )
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "tight layout not applied" for very long labels
            fig.tight_layout()
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
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Plot the exact gap to optimal play against wall-clock seconds from the evaluation history "
        "in training runs' metadata (each seat's gap and the whole game's, as the game's solver gives them).",
    )
    parser.add_argument("runs", nargs="+", type=Path, help="checkpoint metadata files (NAME.json) of runs to plot")
    parser.add_argument(
        "--out", default=str(DEFAULT_OUT), help=f"PNG to write (default: {DEFAULT_OUT} in the current folder)"
    )
    parser.add_argument("--force", action="store_true", help="replace --out if it exists")
    args = parser.parse_args(argv)
    try:
        out = plot(args.runs, args.out, args.force)
    except PlotError as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return 2
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
