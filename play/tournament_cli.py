"""Bot tournaments: every table of N of the agents, win rates, exact figures, ratings.

``python -m play tournament``.  ``add_arguments`` and ``run`` are what
``play/__main__.py`` wires in (the first line above is its help; as it does
``play.web.cli``); the tournament itself, its statistics and its reports are in
``play.tournament``.  Errors are one ``error:`` line on ``err`` and exit code 2.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import math
import secrets
import shlex
import sys
from pathlib import Path
from typing import Optional, TextIO

import games
from core.narrate import wrap
from core.cli import MAX_GAMES, MAX_SEED, agent_label, option_type, run_quietly, seed_number, whole_number
from core.files import FileRefused, check_output, write_output
from play import AgentLoadError, UsageError, check_fit, load_agent, one_torch_thread, progress_printer
from play.match import seatings
from play.ratings import FINISH_NOTES, finish_ranking
from play.tournament import format_tournament, run_tournament, tournament_json, tournament_rows

PROG = "python -m play tournament"
DEFAULT_GAMES = 100

DESCRIPTION = (
    "Play every table of N (--players) out of the listed agents, each table K (--games) games in every seat "
    "order (all orders up to four players, the cyclic shifts beyond), and print each agent's rate of not losing "
    "with a 95% Wilson interval at every table and over all its tables, with the exact figure beside it where "
    "one exists (two players by the game's solver; more where the game's exact tools can tabulate every agent), and "
    "a rating for each agent: heads-up Bradley-Terry (Elo scale, 95% CI) and openskill; with more players "
    "openskill's Plackett-Luce over each game's finishing order ("
    + "; ".join(f"{name}: {FINISH_NOTES[finish_ranking(name)]}" for name in games.names())
    + "). --out writes it all as JSON, and a CSV beside it with one "
    "row per table and agent. The same command and --seed give the same results."
)


_seed = seed_number


def _games(text: str) -> int:
    return whole_number(text, 1, MAX_GAMES, " games per seat order")


def _players(text: str) -> int:
    low = min(games.get(n).min_players for n in games.names())
    high = max(games.get(n).max_players for n in games.names())
    return whole_number(text, low, high)


_option_type = option_type


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("game", choices=games.names(), help="the game")
    parser.add_argument("--players", type=_players, default=2, metavar="N", help="players at each table (default: 2)")
    parser.add_argument(
        "--agents",
        required=True,
        metavar="A,B,C,...",
        help="the agents, comma-separated: bots of the game or checkpoint files; list one twice to seat it twice",
    )
    parser.add_argument(
        "--games",
        type=_games,
        default=DEFAULT_GAMES,
        metavar="K",
        help=f"games per seat order at each table (default: {DEFAULT_GAMES})",
    )
    parser.add_argument(
        "--seed",
        type=_seed,
        default=None,
        help=f"seed for every table's dice and bots, 0 to {MAX_SEED} (default: drawn and printed)",
    )
    parser.add_argument(
        "--out",
        default=None,
        metavar="FILE.json",
        help="write the results as JSON there, and as CSV beside it (FILE.csv), each atomically",
    )
    parser.add_argument("--force", action="store_true", help="replace FILE.json and FILE.csv if they exist")
    seen = set()
    for name in games.names():
        for o in games.get(name).options:
            if o.name not in seen:
                seen.add(o.name)
                parser.add_argument(
                    f"--{o.name}",
                    type=_option_type(o),
                    default=None,
                    metavar="N",
                    help=f"{name}: {o.help} (default: {o.default}; {o.low} to {o.high})",
                )


def _option_names() -> list[str]:
    return sorted({o.name for n in games.names() for o in games.get(n).options})


_label = agent_label


def entry_labels(names: list[str]) -> list[str]:
    """Unique labels: an agent listed more than once is "greedy (1)", "greedy (2)", ..."""
    labels = [_label(n) for n in names]
    seen: dict[str, int] = {}
    out = []
    for label in labels:
        seen[label] = seen.get(label, 0) + 1
        out.append(f"{label} ({seen[label]})" if labels.count(label) > 1 else label)
    return out


def _agent_names(text: str, spec: games.GameSpec, players: int) -> list[str]:
    names = [n.strip() for n in text.split(",")]
    if not any(names):
        raise UsageError(
            "--agents: give the agents, comma-separated, e.g. --agents " + ",".join(list(spec.bots_for(players))[:3])
        )
    if "" in names:
        raise UsageError(f"--agents {text[:60]}: an empty name between commas")
    if len(names) < players:
        raise UsageError(
            f"--agents: {len(names)} agent{'s' if len(names) != 1 else ''} for tables of "
            f"{players} players; list at least {players}"
        )
    for name in names:
        if not spec.plays(name, players):
            raise UsageError(f"--agents: {spec.why_not(name, players)}; use another bot")
    return names


def _options(spec: games.GameSpec, args) -> dict:
    given = {n: v for n in _option_names() if (v := getattr(args, n, None)) is not None}
    try:
        return spec.check_options(given)
    except ValueError as e:
        raise UsageError(str(e)) from None


def _csv_path(path: Path) -> Path:
    return path.with_suffix(".csv")


def check_out(text: str, force: bool = False) -> Path:
    """The --out path, refused (one line) if the JSON or the CSV cannot or must not be written
    there (:func:`core.files.check_output`: an existing file without --force; a link, a
    device, a FIFO or a folder ever)."""
    if not text.strip():
        raise UsageError("--out '': give the name of the JSON file to write")
    path = Path(text)
    if path.suffix.lower() != ".json":
        raise UsageError(f"--out {text[:60]}: give a FILE.json (the CSV goes beside it as FILE.csv)")
    try:
        check_output(path, force, "JSON file")
        check_output(_csv_path(path), force, "CSV file")
    except FileRefused as e:
        raise UsageError(f"--out {e}") from None
    return path


def command_line(args, names: list[str], seed: int, options: dict) -> str:
    """The command that replays this tournament (the seed always given)."""
    words = [
        "python",
        "-m",
        "play",
        "tournament",
        args.game,
        "--players",
        str(args.players),
        "--agents",
        ",".join(names),
        "--games",
        str(args.games),
        "--seed",
        str(seed),
    ]
    for name in _option_names():
        if name in options:
            words += [f"--{name}", str(options[name])]
    if args.out:
        words += ["--out", args.out]
    return " ".join(shlex.quote(w) for w in words)


class _Progress:
    """A tqdm bar on a terminal; elsewhere a line at most every 10 s (``progress_printer``)."""

    def __init__(self, err: TextIO):
        self.err = err
        self.bar = None
        self.fallback = None if _is_terminal(err) else progress_printer(err)

    def __call__(self, done: int, total: int) -> None:
        if self.fallback is not None:
            self.fallback(done, total)
            return
        if self.bar is None:
            from tqdm import tqdm

            self.bar = tqdm(total=total, file=self.err, unit="game", leave=False, dynamic_ncols=True)
        self.bar.update(done - self.bar.n)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def _is_terminal(stream: TextIO) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


def run(args: argparse.Namespace, out: TextIO = sys.stdout, err: Optional[TextIO] = None) -> int:
    """Run the tournament the arguments ask for; returns the exit code (2: a usage error)."""
    err = err if err is not None else sys.stderr
    try:
        return _run(args, out, err)
    except UsageError as e:
        print(f"{PROG}: error: {e}", file=err)
        return 2


def _run(args, out: TextIO, err: TextIO) -> int:
    spec = games.get(args.game)
    players = args.players
    if players not in spec.players:
        raise UsageError(
            f"--players {players}: {spec.name} is played by {spec.min_players} to {spec.max_players} players"
        )
    if args.games < 1:
        raise UsageError(f"--games {args.games}: play at least one game per seat order")
    names = _agent_names(args.agents, spec, players)
    options = _options(spec, args)
    if args.force and args.out is None:
        raise UsageError("--force replaces the files of --out: give --out FILE.json")
    path = check_out(args.out, args.force) if args.out is not None else None
    n_tables = math.comb(len(names), players)
    total = n_tables * len(seatings(players)) * args.games
    if total > MAX_GAMES:
        raise UsageError(
            f"{n_tables:,} tables x {len(seatings(players))} seat orders x {args.games:,} games is "
            f"{total:,} games; at most {MAX_GAMES:,} (fewer --games or agents)"
        )
    seed, drawn = (args.seed, False) if args.seed is not None else (secrets.randbelow(2**31), True)
    labels = entry_labels(names)
    entries = []
    warned = set()
    for name, label in zip(names, labels):
        try:
            agent = load_agent(spec.name, name, None, option="--agents")
            warning = check_fit(spec.name, agent, label, "--agents", players, options)
        except AgentLoadError as e:
            raise UsageError(str(e)) from None
        if warning and warning not in warned:
            warned.add(warning)
            print(warning, file=err)
        entries.append((label, agent))
    one_torch_thread()
    if drawn:
        print(f"(seed {seed}; pass --seed {seed} to replay)", file=out)
    progress = _Progress(err)
    try:
        result = run_tournament(spec.name, entries, players, args.games, seed, progress=progress, **options)
    finally:
        progress.close()
    print(format_tournament(result), file=out)
    if path is not None:
        data = tournament_json(result, command=command_line(args, names, seed, options))
        header, rows = tournament_rows(result)
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(header)
        writer.writerows(rows)
        try:
            write_output(path, json.dumps(data, indent=2) + "\n", args.force, "JSON file")
            write_output(_csv_path(path), buffer.getvalue(), args.force, "CSV file")
        except FileRefused as e:
            raise UsageError(f"--out {e}") from None
        print(wrap(f"wrote {path} and {_csv_path(path)}"), file=out)
    return 0


def main(argv: Optional[list[str]] = None) -> int:
    """Stand-alone entry point (``python -m play.tournament_cli``), the same as ``python -m play tournament``."""
    parser = argparse.ArgumentParser(prog=PROG, description=DESCRIPTION)
    add_arguments(parser)
    args = parser.parse_args(argv)
    return run(args)


if __name__ == "__main__":
    run_quietly(main)
