"""python -m train.plot RUN.json [RUN.json ...] [--out FILE.png] [--force]: the
exact gap to optimal play against wall-clock seconds, from the evaluation history
a training run saves in its checkpoint metadata.

Every gap a run recorded is drawn, its final evaluation included: a gap per seat
(``gap_pp_SEAT``, e.g. ``gap_pp_red``) and over the whole game (``gap_pp``),
whichever the game's solver gives.  Runs of the same name are labelled by file name.
The picture goes to ``gap-vs-time.png`` in the current folder unless ``--out``
says otherwise, and an existing file is never replaced without ``--force`` (so
the shipped ``docs/gap-vs-time.png`` is rewritten only on purpose).
Bad input (a file that is not a run's metadata, an ``--out`` that cannot be
written) is one ``error:`` line and exit code 2."""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import Any

DEFAULT_OUT = Path("gap-vs-time.png")
FLOOR = 1e-6  # where a gap of exactly 0 is drawn on the log scale
MAX_META_BYTES = 1 << 20  # a run's metadata is small; refuse to read anything bigger
GAP = "gap_pp"  # the whole game's gap; GAP + "_" + seat: the gap in that seat


def gap_label(key: str) -> str:
    """"whole game" for ``gap_pp``, "as Red" for ``gap_pp_red``."""
    return "whole game" if key == GAP else "as " + key[len(GAP) + 1:].capitalize()


def gap_keys(history: list[dict[str, Any]]) -> list[str]:
    """The gaps every entry of ``history`` holds: each seat's (in the order recorded), then the whole game's."""
    found = [k for k in history[0] if k.startswith(GAP + "_") and all(_number(h.get(k)) for h in history)]
    return found + ([GAP] if all(_number(h.get(GAP)) for h in history) else [])


class PlotError(Exception):
    """A run that cannot be plotted or a file that cannot be written: one line for the user."""


def read_history(path: Path) -> tuple[str, str, list[dict[str, Any]], list[str]]:
    """(run name, game, evaluation history, gap keys) of a run's metadata file."""
    try:
        if path.is_dir():
            raise PlotError(f"{path}: is a folder; give a run's metadata file (NAME.json)")
        if path.stat().st_size > MAX_META_BYTES:
            raise PlotError(f"{path}: larger than {MAX_META_BYTES:,} bytes, not a run's metadata")
        meta = json.loads(path.read_text())
    except OSError as e:
        raise PlotError(f"{path}: cannot read it ({e.strerror or type(e).__name__})") from None
    except (ValueError, UnicodeDecodeError) as e:
        raise PlotError(f"{path}: not JSON ({str(e)[:80]}); give a run's metadata file (NAME.json)") from None
    history = meta.get("eval_history") if isinstance(meta, dict) else None
    if not isinstance(history, list) or not history or not all(isinstance(h, dict) for h in history):
        raise PlotError(f"{path}: has no evaluation history (eval_history); is it a run's NAME.json?")
    keys = gap_keys(history)
    if not keys or not all(_number(h.get("wall_seconds")) for h in history):
        raise PlotError(f"{path}: its evaluation history has no gap_pp or gap_pp_SEAT "
                        "with wall_seconds in every entry")
    return str(meta.get("name") or path.stem), str(meta.get("game", "?")), history + _final_point(meta, history, keys), keys


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
    if not (_number(history[-1].get("timesteps")) and steps > history[-1]["timesteps"]
            and wall >= history[-1]["wall_seconds"]):
        return []
    return [{"timesteps": steps, "wall_seconds": wall, **{k: exact[k] for k in keys}}]


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def check_out(out: Path, force: bool) -> None:
    """Refuse an --out that is a folder, lies in no folder, or exists (unless ``force``)."""
    try:
        if out.is_dir():
            raise PlotError(f"--out {out}: is a folder; give the name of the PNG file to write")
        if out.exists() and not force:
            raise PlotError(f"--out {out}: exists; pass --force to replace it, or choose another --out")
    except OSError as e:
        raise PlotError(f"--out {out}: cannot write there ({e.strerror or type(e).__name__})") from None


def plot(runs: list[Path], out: Path, force: bool = False) -> Path:
    """Draw the runs' gaps to ``out``; raises :class:`PlotError`."""
    check_out(out, force)
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
            ax.plot(seconds, gaps, marker=".", label=f"{name} ({game}, {gap_label(key)})")
    games = sorted({game for _, game, _, _ in series})
    ax.set_yscale("log")
    ax.set_xlabel("wall-clock seconds of training (2-core CPU)")
    ax.set_ylabel("gap to optimal win probability (pp)")
    ax.set_title(f"{' and '.join(games)}: exact gap of the PPO policy to optimal play"
                 + (f"\n(points at {FLOOR:g} are exact: gap 0)" if exact_zero else ""))
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(out, dpi=110)
    except OSError as e:
        raise PlotError(f"--out {out}: cannot write it ({e.strerror or type(e).__name__})") from None
    finally:
        plt.close(fig)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m train.plot",
        description="Plot the exact gap to optimal play against wall-clock seconds from the evaluation history "
        "in training runs' metadata (each seat's gap and the whole game's, as the game's solver gives them).",
    )
    parser.add_argument("runs", nargs="+", type=Path, help="checkpoint metadata files (NAME.json) of runs to plot")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT,
                        help=f"PNG to write (default: {DEFAULT_OUT} in the current folder)")
    parser.add_argument("--force", action="store_true", help="replace --out if it exists")
    args = parser.parse_args(argv)
    try:
        out = plot(args.runs, args.out, args.force)
    except PlotError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
