"""python -m train PRESET [options]: fit a MaskablePPO bot (see --help).
python -m train seeds|sweep PRESET [options]: many runs on Ray (``train.seeds``,
``train.sweep``; the ``scale`` extra).

Bad input (a flag out of range, a folder that cannot be written, a name that
is not a plain file name, a name already taken, a saved run that cannot be
resumed, a run of that name already training) is one ``error:`` line on stderr
and exit code 2.  When the reader of the output goes away (``| head -1``) the
program exits quietly with code 1.

Ctrl-C (SIGINT) and SIGTERM stop it the same way.  While it starts (imports,
checks) either one ends it at once, in one line on stderr.  Once a run holds its
lock, the run stops where it is, is evaluated and saved (a second signal waits
for the save), says where it was saved and how to continue it (``--resume``),
releases its lock and exits.  Either way the exit status is 128 + the signal's
number, as a shell reports a program the signal ended: 130 for Ctrl-C, 143 for
SIGTERM (``core.cli``)."""

from __future__ import annotations

STARTING = "interrupted while starting: nothing was trained or saved"

if __name__ == "__main__":  # the program: from its first lines, Ctrl-C and SIGTERM end it in one line
    from core.cli import stop_signals_exit

    stop_signals_exit(STARTING)

import argparse
import importlib
import sys
import tempfile
import textwrap
from pathlib import Path

from core.cli import run_program, signal_label, stop_signal, stop_signals_raise, stop_status, whole_number
from train.presets import PRESETS

from core.cli import MAX_SEED  # numpy's legacy seeding (SB3 seeds it) takes no more

MAX_N_ENVS = 65_536  # games stepped at once: the rollout buffer holds n_envs x n_steps of each
MAX_NAME = 100  # train.checkpoint.NAME_PATTERN's length
COMMANDS = {  # subcommands next to the presets: module, what it does
    "seeds": ("train.seeds", "one run per seed; the distribution of the results"),
    "sweep": ("train.sweep", "search the preset's settings (Ray Tune and Optuna)"),
}


def _whole(low: int, high: int, why: str = ""):
    """An argparse type: a whole number in ``low..high``, else one line saying so."""

    def parse(text: str) -> int:
        return whole_number(text, low, high, why)

    parse.__name__ = "whole number"
    return parse


def build_parser() -> argparse.ArgumentParser:
    width = max(len(name) for name in PRESETS)
    presets = "\n".join(
        textwrap.fill(
            f"{p.name:<{width}} {p.description} (default {p.timesteps:,} steps)",
            78,
            initial_indent="  ",
            subsequent_indent=" " * (width + 3),
        )
        for p in PRESETS.values()
    )
    commands = "\n".join(f"  {c:<6} {what}" for c, (_, what) in COMMANDS.items())
    notes = textwrap.fill(
        "Ctrl-C (or SIGTERM) saves the run, says how to continue it, and exits with status 130 "
        "(143 for SIGTERM); --resume continues it. A name already saved is refused unless "
        "--resume or --overwrite is given. Watch with: tensorboard --logdir runs",
        78,
    )
    parser = argparse.ArgumentParser(
        prog="python -m train",
        description=textwrap.fill(
            "Train a MaskablePPO bot on a batched dice-game environment, with exact "
            "evaluation logged to TensorBoard and checkpoints saved as it goes.",
            78,
        ),
        epilog=f"presets:\n{presets}\n\n{notes}\n\n"
        f'python -m train COMMAND PRESET: many runs on Ray (pip install -e ".[scale]"):\n{commands}',
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("preset", choices=sorted(PRESETS), metavar="PRESET", help="one of: " + ", ".join(PRESETS))
    from train.checkpoint import MAX_THREADS, MAX_TIMESTEPS

    parser.add_argument(
        "--timesteps", type=_whole(1, MAX_TIMESTEPS), help="total environment steps (default: the preset's)"
    )
    parser.add_argument(
        "--seed",
        type=_whole(0, MAX_SEED),
        help=f"seed for the envs, the network and PPO, 0 to {MAX_SEED} (default 0; with --resume, the saved run's)",
    )
    parser.add_argument(
        "--n-envs",
        type=_whole(1, MAX_N_ENVS, " (the rollout buffer and the env arrays grow with it)"),
        help=f"games stepped in parallel, at most {MAX_N_ENVS:,} (default: the preset's)",
    )
    parser.add_argument(
        "--logdir", type=_folder_name, default=Path("runs"), help="TensorBoard log directory (default runs/)"
    )
    parser.add_argument(
        "--checkpoint-dir",
        type=_folder_name,
        default=Path("checkpoints"),
        help="where checkpoints go (default checkpoints/)",
    )
    parser.add_argument(
        "--name",
        help="run name: checkpoint file stem and TensorBoard run; letters, digits, "
        "'-', '_', '.' (default PRESET-seedSEED)",
    )
    again = parser.add_mutually_exclusive_group()
    again.add_argument(
        "--resume",
        action="store_true",
        help="continue the saved run NAME (NAME.pt, NAME.state, NAME.json) up to --timesteps",
    )
    again.add_argument("--overwrite", action="store_true", help="replace the saved run NAME, if there is one")
    parser.add_argument(
        "--eval-every", type=_whole(1, MAX_TIMESTEPS), help="steps between exact evaluations (default: the preset's)"
    )
    parser.add_argument(
        "--exact-every",
        type=_whole(1, MAX_TIMESTEPS),
        help="at a table of more than two players: steps between the evaluations that are exact, the "
        "others sampled (default: the preset's)",
    )
    parser.add_argument(
        "--exact-aside",
        action=argparse.BooleanOptionalAction,
        help="at a table of more than two players: make the exact evaluations in a second process, "
        "on a spare core, while training goes on (their figures reach TensorBoard and the "
        "metadata once done; the run is the same); default: the preset's (aside: "
        + (", ".join(name for name, p in PRESETS.items() if p.exact_aside) or "none")
        + ")",
    )
    parser.add_argument("--no-early-stop", action="store_true", help="train all --timesteps even once exactly optimal")
    parser.add_argument(
        "--threads",
        type=_whole(1, MAX_THREADS),
        help="torch threads for the network (default: the preset's; with --resume, the saved "
        "run's); a run repeats exactly with the same seed and the same count",
    )
    parser.add_argument("--no-progress-bar", action="store_true", help="hide the progress bar")
    from core import __version__

    parser.add_argument(
        "--version",
        action="version",
        version=f"%(prog)s (dice-arena) {__version__}",
        help="print the version of dice-arena and exit",
    )
    return parser


def _folder_name(text: str) -> Path:
    """An argparse type: a folder name (not empty: Path('') would quietly be the current folder)."""
    if not text.strip():
        raise argparse.ArgumentTypeError("give a folder name, not an empty one")
    return Path(text)


def _folder(path: Path, flag: str, create: bool = True) -> str:
    """Why ``path`` cannot be the folder ``flag`` names (creating it if ``create``), or ""."""
    text = str(path)
    shown = text if len(text) <= 80 else text[:77] + "..."
    try:
        if path.exists() and not path.is_dir():
            return f"{flag} {shown}: is a file, not a folder"
        if not create and not path.exists():
            return ""
        path.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=path):  # can we write there? (permissions alone miss read-only mounts)
            pass
    except OSError as e:
        return f"{flag} {shown}: cannot write there ({e.strerror or type(e).__name__})"
    return ""


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv and argv[0] in COMMANDS:
        return importlib.import_module(COMMANDS[argv[0]][0]).main(argv[1:])
    args = build_parser().parse_args(argv)
    preset = PRESETS[args.preset]
    from train.checkpoint import RunError, check_name

    name = args.name if args.name is not None else f"{preset.name}-seed{args.seed or 0}"
    if len(name) > MAX_NAME:
        print(
            f"error: --name is {len(name):,} characters long; a run name has 1 to {MAX_NAME} letters, digits, "
            "'-', '_' or '.' (it names files)",
            file=sys.stderr,
        )
        return 2
    try:
        check_name(name)
    except RunError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    for path, flag, create in (
        (args.checkpoint_dir, "--checkpoint-dir", not args.resume),
        (args.logdir, "--logdir", True),
    ):
        problem = _folder(path, flag, create)
        if problem:
            print(f"error: {problem}", file=sys.stderr)
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
        exact_every=args.exact_every,
        exact_aside=args.exact_aside,
        stop_when_optimal=preset.stop_when_optimal and not args.no_early_stop,
        progress_bar=not args.no_progress_bar,
        torch_threads=args.threads,
    )
    stop_signals_raise()  # from here on a signal stops the run where it is: it saves and releases its lock
    try:
        summary = train(config)
    except RunError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # before the run started training (train.run holds the signals from there on)
        print(
            f"\ninterrupted ({signal_label(stop_signal())}) before run {name} started training: nothing was saved",
            file=sys.stderr,
        )
        return stop_status()
    return stop_status() if summary["interrupted"] else 0


def run() -> None:
    """The program: ``main()``, quiet when the reader of our output goes away, and
    ended by Ctrl-C or SIGTERM in one line, with status 130 or 143 (see the module docstring)."""
    run_program(main, STARTING)


if __name__ == "__main__":
    run()
