"""python -m train.plot RUN.json [--out FILE.png]: the exact gap to optimal play
against wall-clock seconds, from the evaluation history a training run saves in
its checkpoint metadata."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m train.plot", description=__doc__.split(":", 1)[1].strip())
    parser.add_argument("runs", nargs="+", type=Path, help="checkpoint metadata files (NAME.json) of runs to plot")
    parser.add_argument("--out", type=Path, default=Path("docs/gap-vs-time.png"), help="PNG to write (default docs/gap-vs-time.png)")
    args = parser.parse_args(argv)
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4))
    for path in args.runs:
        try:
            meta = json.loads(path.read_text())
            history = meta["eval_history"]
        except (OSError, ValueError, KeyError) as e:
            print(f"error: {path} has no evaluation history ({e})", file=sys.stderr)
            return 2
        seconds = [h["wall_seconds"] for h in history]
        for seat in ("red", "blue"):
            gaps = [max(h[f"gap_pp_{seat}"], 1e-6) for h in history]
            ax.plot(seconds, gaps, marker=".", label=f"{meta.get('name', path.stem)} as {seat.title()}")
    ax.set_yscale("log")
    ax.set_xlabel("wall-clock seconds of training (2-core CPU)")
    ax.set_ylabel("gap to optimal win probability (pp)")
    ax.set_title("420: exact gap of the PPO policy to optimal play\n(points at 1e-6 are exact: gap 0)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(args.out, dpi=110)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
