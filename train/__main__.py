"""python -m train PRESET [options]: fit a MaskablePPO bot (see --help).

Bad input (a flag out of range, a name that is not a plain file name, a name
already taken, a saved run that cannot be resumed, a run of that name already
training) is one ``error:`` line on stderr and exit code 2."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from train.presets import PRESETS


def build_parser() -> argparse.ArgumentParser:
    presets = "\n".join(f"  {p.name:<9} {p.description} (default {p.timesteps:,} steps)" for p in PRESETS.values())
    parser = argparse.ArgumentParser(
        prog="python -m train",
        description="Train a MaskablePPO bot on a batched dice-game environment, with exact evaluation "
        "logged to TensorBoard and checkpoints saved as it goes.",
        epilog=f"presets:\n{presets}\n\nCtrl-C saves the run; --resume continues it. A name already saved is "
        "refused unless --resume or --overwrite is given. Watch with: tensorboard --logdir runs",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("preset", choices=sorted(PRESETS), metavar="PRESET", help="one of: " + ", ".join(PRESETS))
    parser.add_argument("--timesteps", type=int, help="total environment steps (default: the preset's)")
    parser.add_argument("--seed", type=int, help="seed for the envs, the network and PPO (default 0; "
                        "with --resume, the saved run's)")
    parser.add_argument("--n-envs", type=int, help="games stepped in parallel (default: the preset's)")
    parser.add_argument("--logdir", type=Path, default=Path("runs"), help="TensorBoard log directory (default runs/)")
    parser.add_argument("--checkpoint-dir", type=Path, default=Path("checkpoints"), help="where checkpoints go (default checkpoints/)")
    parser.add_argument("--name", help="run name: checkpoint file stem and TensorBoard run; letters, digits, "
                        "'-', '_', '.' (default PRESET-seedSEED)")
    again = parser.add_mutually_exclusive_group()
    again.add_argument("--resume", action="store_true",
                       help="continue the saved run NAME (NAME.pt, NAME.state, NAME.json) up to --timesteps")
    again.add_argument("--overwrite", action="store_true", help="replace the saved run NAME, if there is one")
    parser.add_argument("--eval-every", type=int, help="steps between exact evaluations (default: the preset's)")
    parser.add_argument("--no-early-stop", action="store_true", help="train all --timesteps even once exactly optimal")
    parser.add_argument("--no-progress-bar", action="store_true", help="hide the progress bar")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    preset = PRESETS[args.preset]
    from train.checkpoint import MAX_TIMESTEPS, RunError, check_name

    for flag in ("timesteps", "n_envs", "eval_every"):
        value = getattr(args, flag)
        if value is not None and not 0 < value <= MAX_TIMESTEPS:
            print(f"error: --{flag.replace('_', '-')} must be from 1 to {MAX_TIMESTEPS:,}, got {value}", file=sys.stderr)
            return 2
    name = args.name if args.name is not None else f"{preset.name}-seed{args.seed or 0}"
    try:
        check_name(name)
    except RunError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    from train.run import RunConfig, train

    config = RunConfig(
        preset=preset,
        timesteps=args.timesteps or preset.timesteps,
        seed=args.seed,
        n_envs=args.n_envs or preset.n_envs,
        logdir=args.logdir,
        checkpoint_dir=args.checkpoint_dir,
        name=name,
        resume=args.resume,
        overwrite=args.overwrite,
        eval_every=args.eval_every,
        stop_when_optimal=preset.stop_when_optimal and not args.no_early_stop,
        progress_bar=not args.no_progress_bar,
    )
    try:
        train(config)
    except RunError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
