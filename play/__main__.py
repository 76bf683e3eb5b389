"""``python -m play``: play a bot, run a bot-vs-bot match, evaluate or export a policy.

Exit codes: 0 on success (and when a person quits a game), 2 on a usage error
or an agent that cannot be loaded (one ``error:`` line on stderr, no traceback),
1 when the reader of the output goes away (``python -m play ... | head -1``),
130 on Ctrl-C, at any moment, the imports at start-up included (one line).
A file a command writes (``export --out``, ``tournament --out``) is written
atomically, replaces an existing file only with ``--force``, and never goes
through a link or to a device, a FIFO or a folder (``core.files.write_output``).
"""

from __future__ import annotations

import argparse
import secrets
import signal
import sys
import threading
from typing import Callable, Optional, Sequence, TextIO

import core
from core.cli import MAX_GAMES, MAX_SEED, agent_label, option_type, run_quietly, seed_number, whole_number
import games
from core.narrate import wrap
from play.web import cli as web_cli
from core.files import FileRefused, check_output
from play import (
    INTERRUPTED,
    AgentLoadError,
    UsageError,
    check_fit,
    default_opponent,
    derive_seed,
    interrupted_at_once,
    load_agent,
    one_torch_thread,
    progress_printer,
)

PROG = "python -m play"


def epilog() -> str:
    """The help's examples: each game's (``EXAMPLES`` of its view), then the web page's."""
    lines = ["examples:"]
    for name in games.names():
        view = games.get(name).view
        examples = getattr(games.load(view), "EXAMPLES", ()) if view else ()
        lines += [f"  {PROG} {example}" for example in examples]
    return "\n".join([*lines, f'  {PROG} web --port 8420          (needs: pip install -e ".[web]")', ""])


def _whole(text: str, low: int, high: int, why: str = "") -> int:
    return whole_number(text, low, high, why)


def _positive(text: str) -> int:
    return _whole(text, 1, MAX_GAMES)


def _games(text: str) -> int:
    return _whole(text, 1, MAX_GAMES, " (a match of that many games already takes many hours)")


_seed = seed_number


def _bot_list(game: str) -> str:
    return ", ".join(games.get(game).agent_names)


def _seat(spec: games.GameSpec, text: str, players: int) -> str | int:
    """A seat from the command line: 1..players, the seat's name at this table, or "random"."""
    text = text.strip().lower()
    if text == "random":
        return text
    if text.isdigit() and 1 <= int(text) <= players:
        return int(text) - 1
    names = [spec.narrator(players).seat_name(s) for s in range(players)]
    if text in [n.lower() for n in names]:
        return [n.lower() for n in names].index(text)
    raise UsageError(f"--seat {text}: with {players} players the seats are 1..{players} ({', '.join(names)}) or random")


def _add_options(p: argparse.ArgumentParser, spec: games.GameSpec | None) -> None:
    """The game's options (421: --pot) as command-line options; for a generic command, all of them."""
    seen = set()
    for s in [spec] if spec is not None else [games.get(n) for n in games.names()]:
        for o in s.options:
            if o.name not in seen:
                seen.add(o.name)
                p.add_argument(
                    f"--{o.name}",
                    type=_option_type(o),
                    default=None,
                    metavar="N",
                    help=f"{s.name}: {o.help} (default: {o.default}; {o.low} to {o.high})",
                )


_option_type = option_type


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description=wrap(
            f"Dice games ({', '.join(games.names())}) in the terminal: play a bot, pit bots against "
            "each other, evaluate a bot exactly, export its policy.",
            indent="",
        ),
        epilog=epilog(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s (dice-arena) {core.__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    agents_help = "an agent: " + " / ".join(f"{_bot_list(n)} ({n})" for n in games.names()) + ", or a checkpoint file"

    for name in games.names():
        spec = games.get(name)
        p = sub.add_parser(
            name,
            help=f"play {name} against bots ({spec.min_players}-{spec.max_players} players, you included)",
            description=f"Play {name} ({spec.title}) against bots in the terminal. At your turn type "
            f'{spec.how_to_move}; "?" explains the rules, "legal" lists your legal moves, "q" quits.',
        )
        p.add_argument(
            "--players",
            type=int,
            choices=list(spec.players),
            default=2,
            help=f"{spec.min_players} to {spec.max_players} players, you included (default: 2)",
        )
        p.add_argument(
            "--opponent",
            action="append",
            default=None,
            metavar="NAME",
            help=f"the bot(s) to play ({_bot_list(name)}, or a checkpoint file; default: "
            f"{spec.default_bot.get(2, spec.suggested_bot)} with 2 players). Give it once (every opponent) or "
            "once per opponent, in seat order after yours",
        )
        two = spec.narrator(2)
        p.add_argument(
            "--seat",
            default="random",
            metavar="N|random",
            help=f"your seat: 1..players, or its name ({two.seat_name(0)}, {two.seat_name(1)}, ...); default: random",
        )
        _add_options(p, spec)
        p.add_argument(
            "--seed",
            type=_seed,
            default=None,
            help=f"seed for the dice (and a random seat/bot), 0 to {MAX_SEED}: the same seed replays the session",
        )
        p.add_argument(
            "--games",
            type=_positive,
            default=1,
            metavar="N",
            help="play N games in a row with a running score (default: 1)",
        )

    p = sub.add_parser(
        "match",
        help="bot vs bot: win rates with 95%% confidence intervals",
        description="Play GAMES games between agents, rotating seats game by game so each holds each seat "
        "equally often, and print each one's rate of not losing with a 95% Wilson confidence interval, overall "
        "and by seat. With more than two players the seats beyond --opponent2 are filled with --opponent.",
    )
    p.add_argument("game", choices=games.names(), help="the game")
    p.add_argument("--agent", required=True, metavar="A", help=agents_help)
    p.add_argument("--opponent", required=True, metavar="B", help=agents_help)
    p.add_argument(
        "--opponent2", default=None, metavar="C", help="with 3 or more players: the third agent (default: --opponent)"
    )
    p.add_argument(
        "--players",
        type=int,
        default=None,
        metavar="N",
        help="players at the table (default: 3 with --opponent2, else 2)",
    )
    _add_options(p, None)
    p.add_argument("--games", type=_games, default=1000, metavar="N", help="number of games (default: 1000)")
    p.add_argument(
        "--seed",
        type=_seed,
        default=None,
        help=f"seed for the dice and the bots, 0 to {MAX_SEED} (default: drawn and printed)",
    )

    p = sub.add_parser(
        "evaluate",
        help="win probability of an agent against the game's bots, or at a table",
        description="Two players: with --exact the game's exact figures by its solver (against its optimal bot "
        "in each seat, and against the agent's best reply where the game computes one), else simulated games against "
        "each of the game's bots, each seat held in half of them. With --players N or --opponent: "
        "the agent at seat 1 and the opponents at the other seats (by default the agent itself), and for "
        "each seat its probability of not losing, the best reply's and the regret in percentage points. "
        "With --exact the figures are exact (computed from every agent's whole policy); otherwise they are "
        "estimated by playing games, with 95% confidence intervals.",
    )
    p.add_argument("game", choices=games.names(), help="the game")
    p.add_argument("--agent", required=True, metavar="NAME", help=f"{agents_help}, or 'all' for every bot")
    p.add_argument("--exact", action="store_true", help="compute exact win probabilities with the solver")
    p.add_argument(
        "--players",
        type=int,
        default=2,
        metavar="N",
        help="players at the table (default: 2; "
        + ", ".join(f"{n}: {games.get(n).min_players} to {games.get(n).max_players}" for n in games.names())
        + ")",
    )
    p.add_argument(
        "--opponent",
        default=None,
        metavar="A",
        help="the agent at seat 2 and, unless --opponent2, at every other seat (default: --agent itself)",
    )
    p.add_argument("--opponent2", default=None, metavar="B", help="with 3 or more players: the agent at seat 3")
    explained = [n for n in games.names() if games.get(n).explain]
    p.add_argument(
        "--explain",
        type=_positive,
        nargs="?",
        const=10,
        default=None,
        metavar="K",
        help=f"with --exact, two players ({', '.join(explained)}): where the gap to the optimum "
        "goes, by decision and tokens, and the K largest losses (default 10)",
    )
    _add_options(p, None)
    p.add_argument(
        "--games", type=_games, default=1000, metavar="N", help="games per agent without --exact (default: 1000)"
    )
    p.add_argument(
        "--seed",
        type=_seed,
        default=None,
        help=f"seed for the simulated games, 0 to {MAX_SEED} (default: drawn and printed)",
    )

    exportable = [n for n in games.names() if games.get(n).export]
    p = sub.add_parser(
        "export",
        help="write an agent's whole policy as CSV",
        description="Write the agent's move in every two-player decision state (both hands as dice written "
        "high to low, the mover's first; 14,641 rows, of which 9,559 have more than one legal move) as CSV "
        "with header hand,opponent,reroll: reroll is the dice rerolled (the most probable move for a "
        "stochastic agent). Rows by hand, then opponent hand.",
    )
    p.add_argument("game", choices=exportable, help="the game")
    p.add_argument("--agent", required=True, metavar="NAME", help=agents_help)
    p.add_argument(
        "--out",
        required=True,
        metavar="FILE.csv",
        help="the CSV file to write (atomically; never through a link, to a device or a folder)",
    )
    p.add_argument("--force", action="store_true", help="replace --out if it exists")

    p = sub.add_parser(
        "web", help="play in the browser: a page on this machine, with an exact coach", description=web_cli.DESCRIPTION
    )
    web_cli.add_arguments(p)

    tournament = _tournament_cli()
    if tournament is not None:
        summary = (tournament.__doc__ or "a tournament between bots").strip().splitlines()[0].rstrip(".")
        p = sub.add_parser("tournament", help=summary, description=getattr(tournament, "DESCRIPTION", summary))
        tournament.add_arguments(p)
    parser.commands = sub.choices  # name -> subparser, for the usage line of an error
    return parser


def _tournament_cli():
    """``play.tournament_cli`` (the ``tournament`` command), or None while it is not there."""
    try:
        from play import tournament_cli
    except ModuleNotFoundError as e:
        if e.name != "play.tournament_cli":
            raise
        return None
    return tournament_cli


# --- commands ------------------------------------------------------------------------
def _load(game: str, name: str, seed: Optional[int], option: str):
    try:
        return load_agent(game, name, seed, option=option)
    except AgentLoadError as e:
        raise UsageError(str(e)) from None


def _fit(
    game: str,
    agents_named: Sequence[tuple[str, str, object]],
    players: int,
    options: dict,
    err: TextIO,
    exact: bool = False,
) -> None:
    """Refuse a trained agent that cannot play this table; warn (one line each, on
    ``err``) about one trained for other game options.  ``agents_named``: (option, name, agent)."""
    warned = set()
    for option, name, agent in agents_named:
        try:
            warning = check_fit(game, agent, _label(name), option, players, options, exact=exact)
        except AgentLoadError as e:
            raise UsageError(str(e)) from None
        if warning and warning not in warned:
            warned.add(warning)
            print(warning, file=err)


_label = agent_label


def _seed_or_draw(seed: Optional[int]) -> tuple[int, str]:
    """The seed to use, and a note to print (once the agents have loaded) if it was drawn."""
    if seed is not None:
        return seed, ""
    seed = secrets.randbelow(2**31)
    return seed, f"(seed {seed}; pass --seed {seed} to replay)"


def _note(text: str, out: TextIO) -> None:
    if text:
        print(text, file=out)


def _options(spec: games.GameSpec, args) -> dict:
    """The game's options from the command line (defaults filled in, unknown ones refused)."""
    given = {name: value for name in _all_option_names() if (value := getattr(args, name, None)) is not None}
    try:
        return spec.check_options(given)
    except ValueError as e:
        raise UsageError(str(e)) from None


def _all_option_names() -> set[str]:
    return {o.name for n in games.names() for o in games.get(n).options}


def _check_bots_for(spec: games.GameSpec, names: Sequence[str], players: int) -> None:
    for name in names:
        if not spec.plays(name, players):
            raise UsageError(f"{spec.why_not(name, players)}; use another bot")


def cmd_play(args, out: TextIO, input_fn: Callable[[str], str], err: Optional[TextIO] = None) -> int:
    """Play a person against bots: ``python -m play GAME``."""
    from core.dice import RandomDice

    spec = games.get(args.command)
    players = args.players
    options = _options(spec, args)
    names = args.opponent or [default_opponent(spec, players, options)]
    n_opponents = players - 1
    if len(names) not in (1, n_opponents):
        more = f" (use --players {len(names) + 1} for {len(names)} opponents)" if len(names) + 1 in spec.players else ""
        raise UsageError(
            f"--opponent given {len(names)} times for {players} players: give it once (every opponent)"
            + (f" or {n_opponents} times (one per opponent)" if n_opponents > 1 else "")
            + more
        )
    names = names * n_opponents if len(names) == 1 else names
    seat = _seat(spec, args.seat, players)
    _check_bots_for(spec, names, players)
    seed, note = _seed_or_draw(args.seed)
    opponents = [_load(spec.name, name, derive_seed(seed, 1 + i), "--opponent") for i, name in enumerate(names)]
    _fit(
        spec.name,
        [("--opponent", n, a) for n, a in zip(names, opponents)],
        players,
        options,
        err if err is not None else sys.stderr,
    )
    one_torch_thread()
    _note(note, out)
    if not spec.view:
        raise UsageError(f"{spec.name} declares no view to play it in the terminal")
    from play.terminal import play_terminal  # the one terminal front-end, over the game's view

    return play_terminal(
        spec.name,
        opponents,
        RandomDice(seed),
        opponent_names=[_label(n) for n in names],
        seat=seat,
        games=args.games,
        input_fn=input_fn,
        out=out,
        **options,
    )


def _match_table(spec: games.GameSpec, args) -> tuple[int, list[str]]:
    """(players, agent names by player) of a match, checked against the game."""
    players = args.players if args.players is not None else 3 if args.opponent2 is not None else 2
    if players not in spec.players:
        raise UsageError(
            f"--players {players}: {spec.name} is played by {spec.min_players} to {spec.max_players} players"
        )
    if players == 2 and args.opponent2 is not None:
        raise UsageError("--opponent2 needs --players 3 or more")
    names = [args.agent, args.opponent] + ([args.opponent2] if args.opponent2 is not None else [])
    names += [args.opponent] * (players - len(names))
    _check_bots_for(spec, names, players)
    return players, names


def cmd_match(args, out: TextIO, err: Optional[TextIO] = None) -> int:
    from play.match import format_match, play_match_n

    spec = games.get(args.game)
    players, names = _match_table(spec, args)
    options = _options(spec, args)
    seed, note = _seed_or_draw(args.seed)
    option_names = ("--agent", "--opponent", "--opponent2")
    agents = [_load(spec.name, name, derive_seed(seed, 1 + i), option_names[min(i, 2)]) for i, name in enumerate(names)]
    _fit(
        spec.name,
        [(option_names[min(i, 2)], n, a) for i, (n, a) in enumerate(zip(names, agents))],
        players,
        options,
        err if err is not None else sys.stderr,
    )
    one_torch_thread()
    _note(note, out)
    settings = ", ".join([f"{players} players"] + [f"{k} {v}" for k, v in options.items()])
    result = play_match_n(
        spec.name,
        agents,
        args.games,
        seed=seed,
        names=[_label(n) for n in names],
        progress=progress_printer(err) if err is not None else None,
        settings=settings,
        note="A win is not losing; seat 1 moves first.",
        **options,
    )
    print(format_match(result), file=out)
    return 0


EVALUATED_PLAYERS = 2  # export is about two-player games; evaluate takes --players


def _agents_to_evaluate(
    game: str,
    name: str,
    seed: Optional[int],
    out: TextIO,
    err: TextIO,
    options: dict,
    exact: bool,
    players: int = EVALUATED_PLAYERS,
) -> list[tuple[str, object]]:
    spec = games.get(game)
    if name != "all":
        _check_bots_for(spec, [name], players)
        agent = _load(game, name, seed, "--agent")
        _fit(game, [("--agent", name, agent)], players, options, err, exact=exact)
        return [(_label(name), agent)]
    found = []
    for n in spec.agent_names:
        if not spec.plays(n, players):
            print(wrap(f"(skipping {n}: {spec.why_not(n, players)})"), file=out)
            continue
        try:
            agent = load_agent(game, n, seed, option="--agent")
            warning = check_fit(game, agent, n, "--agent", players, options, exact=exact)
        except AgentLoadError as e:
            print(wrap(f"(skipping {n}: {str(e).splitlines()[0]})"), file=out)
            continue
        if warning:
            print(warning, file=err)
        found.append((n, agent))
    return found


def _evaluate_table(spec: games.GameSpec, args) -> tuple[int, list[tuple[str, str]]]:
    """(players, (option, name) of the opponents by seat from seat 2) of ``evaluate``, checked."""
    players = args.players
    if players not in spec.players:
        raise UsageError(
            f"--players {players}: {spec.name} is played by {spec.min_players} to {spec.max_players} players"
        )
    if args.opponent is None:
        if args.opponent2 is not None:
            raise UsageError("--opponent2 needs --opponent (the agent at seat 2)")
        return players, []
    if players == 2 and args.opponent2 is not None:
        raise UsageError("--opponent2 needs --players 3 or more")
    names = [("--opponent", args.opponent)]
    if players > 2:
        names.append(("--opponent2", args.opponent2 if args.opponent2 is not None else args.opponent))
    names += [("--opponent", args.opponent)] * (players - len(names) - 1)
    _check_bots_for(spec, [n for _, n in names], players)
    return players, names


def cmd_evaluate(args, out: TextIO, err: Optional[TextIO] = None) -> int:
    spec = games.get(args.game)
    warn = err if err is not None else sys.stderr
    options = _options(spec, args)
    players, opponent_names = _evaluate_table(spec, args)
    if args.explain is not None:
        if not spec.explain:
            raise UsageError(
                f"--explain: {spec.name} has no gap breakdown "
                f"(games with one: {', '.join(n for n in games.names() if games.get(n).explain)})"
            )
        if not args.exact or players != 2 or opponent_names:
            raise UsageError("--explain needs --exact and two players (no --players above 2, no --opponent)")
    seed, note = _seed_or_draw(args.seed)
    rows = _agents_to_evaluate(spec.name, args.agent, derive_seed(seed, 1), out, warn, options, args.exact, players)
    opponents = None
    if opponent_names:
        # One agent per name, shared by the seats it holds (the evaluated one too): an exact
        # evaluation then asks it once, and a table of one agent is seen to be symmetric.
        loaded = {args.agent: rows[0][1]} if args.agent != "all" else {}
        for i, (option, name) in enumerate(opponent_names):
            if name not in loaded:
                loaded[name] = _load(spec.name, name, derive_seed(seed, 2 + i), option)
                _fit(spec.name, [(option, name, loaded[name])], players, options, warn, exact=args.exact)
        opponents = [(_label(name), loaded[name]) for _, name in opponent_names]
    if not args.exact:
        _note(note, out)
    from play.evaluate import evaluate, explain  # the one evaluation, over what the game's folder offers

    evaluate(spec, rows, args.exact, args.games, seed, out, err, players=players, opponents=opponents, **options)
    if args.explain is not None:
        explain(spec, rows, out, args.explain, **options)
    return 0


def _check_out(path: str, force: bool) -> None:
    """Refuse an --out that cannot or must not be written (:func:`core.files.check_output`:
    an existing file without --force; a link, a device, a FIFO or a folder ever), before
    the work of computing it."""
    try:
        check_output(path, force, "CSV file")
    except FileRefused as e:
        raise UsageError(f"--out {e}") from None


def cmd_export(args, out: TextIO) -> int:
    spec = games.get(args.game)
    exporter = games.load(spec.export)
    _check_out(args.out, args.force)
    agent = _load(spec.name, args.agent, None, "--agent")
    _fit(spec.name, [("--agent", args.agent, agent)], EVALUATED_PLAYERS, _options(spec, args), sys.stderr, exact=True)
    table = exporter.policy_table(agent)
    try:
        n = exporter.write_policy_csv(table, args.out, force=args.force)
    except FileRefused as e:
        raise UsageError(f"--out {e}") from None
    note = (
        "" if exporter.is_deterministic(table) else f" ({args.agent} is stochastic: each row is its most probable move)"
    )
    print(f"wrote {n} rows (one per decision state) to {args.out}{note}", file=out)
    return 0


def main(
    argv: Optional[Sequence[str]] = None,
    *,
    input_fn: Optional[Callable[[str], str]] = None,
    out: Optional[TextIO] = None,
    err: Optional[TextIO] = None,
) -> int:
    """Run the CLI; returns the exit code (130 on Ctrl-C).  ``input_fn``/``out``/``err`` are for tests."""
    out = out if out is not None else sys.stdout
    err = err if err is not None else sys.stderr
    if signal.getsignal(signal.SIGINT) is interrupted_at_once:  # python -m play, past its imports:
        signal.signal(signal.SIGINT, signal.default_int_handler)  # Ctrl-C is a KeyboardInterrupt again
    try:
        return _main(argv, input_fn, out, err)
    except KeyboardInterrupt:
        print(f"\n{INTERRUPTED}", file=err)
        return 130


def _main(argv: Optional[Sequence[str]], input_fn: Optional[Callable[[str], str]], out: TextIO, err: TextIO) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:  # --help (0) or a usage error (2, already printed)
        return int(e.code or 0)
    try:
        if args.command in games.names():
            return cmd_play(args, out, input_fn or input, err)
        if args.command == "match":
            return cmd_match(args, out, err)
        if args.command == "evaluate":
            return cmd_evaluate(args, out, err)
        if args.command == "export":
            return cmd_export(args, out)
        if args.command == "web":
            return web_cli.run(args, out, err)
        if args.command == "tournament":
            return _tournament_cli().run(args, out, err)
    except UsageError as e:
        print(parser.commands[args.command].format_usage(), end="", file=err)
        print(f"{PROG} {args.command}: error: {e}", file=err)
        return 2
    raise AssertionError(f"unhandled command {args.command!r}")


def run() -> None:
    """The program: ``main()``, quiet when the reader of our output goes away; a Ctrl-C
    once ``main`` has returned (while the program exits) ends it in one line too."""

    def program() -> int:
        try:
            return main()
        finally:
            if threading.current_thread() is threading.main_thread():
                signal.signal(signal.SIGINT, interrupted_at_once)

    try:
        run_quietly(program)
    except KeyboardInterrupt:  # between the return of main and the handler above
        interrupted_at_once()


if __name__ == "__main__":
    run()
