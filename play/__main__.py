"""``python -m play``: play a bot, run a bot-vs-bot match, evaluate or export a policy.

Exit codes: 0 on success (and when a person quits a game), 2 on a usage error
or an agent that cannot be loaded.
"""

from __future__ import annotations

import argparse
import secrets
import sys
import time
from typing import Callable, Optional, Sequence, TextIO

from play import AgentLoadError, derive_seed, load_agent

PROG = "python -m play"

EPILOG = """\
examples:
  python -m play 420 --opponent optimal --seat red --seed 7
  python -m play 421 --players 3 --opponent heuristic --opponent cautious --seed 7
  python -m play match 420 --agent greedy --opponent random --games 1000 --seed 0
  python -m play match 421 --agent heuristic --opponent greedy421 --games 10000 --seed 0
  python -m play evaluate 420 --agent all --exact
  python -m play evaluate 421 --agent heuristic --games 2000
  python -m play export 420 --agent optimal --out optimal420.csv
"""


class UsageError(Exception):
    """A problem with what the user asked for; printed without a traceback, exit code 2."""


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def _bot_list(game: str = "420") -> str:
    from agents import agent_names

    return ", ".join(agent_names(game))


def _seat421(text: str) -> str:
    if text == "random" or (text.isdigit() and 1 <= int(text) <= 3):
        return text
    raise argparse.ArgumentTypeError(f"expected 1, 2, 3 or random, got {text!r}")


def build_parser() -> argparse.ArgumentParser:
    from play.tournament import RUNNERS

    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Dice games 420 and 421 in the terminal: play a bot, pit bots against each other, "
        "evaluate a bot exactly, export its policy.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    agents_help = f"an agent: one of {_bot_list()} (420) / {_bot_list('421')} (421), or a checkpoint file"
    agents_421 = f"one of {_bot_list('421')}, or a checkpoint file"

    p = sub.add_parser(
        "420",
        help="play 420 against a bot (you type the dice to reroll)",
        description="Play 420 against a bot in the terminal. Each turn you type the values of the dice "
        'to reroll ("1 5", "15", "all"); "?" explains the rules, "legal" lists your legal moves, "q" quits.',
    )
    p.add_argument("--opponent", default="ppo-420", metavar="NAME", help=f"the bot to play ({agents_help}; default: ppo-420)")
    p.add_argument("--seat", choices=("red", "blue", "random"), default="random", help="your seat; Red moves first (default: random)")
    p.add_argument("--seed", type=int, default=None, help="seed for the dice (and a random seat/bot): the same seed replays the session")
    p.add_argument("--games", type=_positive, default=1, metavar="N", help="play N games in a row with a running score (default: 1)")

    p = sub.add_parser(
        "421",
        help="play 421 against one or two bots (you type stop or the dice to reroll)",
        description="Play 421 against one or two bots in the terminal; you see every roll, the pot and "
        "everyone's tokens. At your turn type \"stop\" (\"s\"), the values of the dice to reroll "
        '("6 5", "65", "all") or "keep 4 2"; "?" explains the rules, "legal" lists your legal moves, "q" quits.',
    )
    p.add_argument("--players", type=int, choices=(2, 3), default=2, help="2 or 3 players, you included (default: 2)")
    p.add_argument(
        "--opponent", action="append", default=None, metavar="NAME",
        help=f"the bot(s) to play ({agents_421}; default: ppo-421). With 3 players give it once (both "
        "opponents) or twice (one each, in seat order)",
    )
    p.add_argument("--pot", type=_positive, default=15, metavar="N", help="tokens in the pot (default: 15)")
    p.add_argument("--seat", type=_seat421, default="random", metavar="N|random",
                   help="your seat, 1..players (P1, P2, P3; who plays first is drawn); default: random")
    p.add_argument("--seed", type=int, default=None, help="seed for the dice (and a random seat/bot): the same seed replays the session")
    p.add_argument("--games", type=_positive, default=1, metavar="N", help="play N games in a row with a running score (default: 1)")

    p = sub.add_parser(
        "match",
        help="bot vs bot: win rates with 95%% confidence intervals",
        description="Play GAMES games between two agents (421: or three), rotating seats game by game so each "
        "holds each seat (moves first) equally often, and print each one's win rate with a 95% Wilson confidence "
        "interval, overall and by seat. In 421 a win is not losing (seat 1 plays first).",
    )
    p.add_argument("game", choices=sorted(RUNNERS), help="the game")
    p.add_argument("--agent", required=True, metavar="A", help=agents_help)
    p.add_argument("--opponent", required=True, metavar="B", help=agents_help)
    p.add_argument("--opponent2", default=None, metavar="C", help="421 with 3 players: the third agent (default: same as --opponent)")
    p.add_argument("--players", type=int, choices=(2, 3), default=None, help="421: 2 or 3 players (default: 3 with --opponent2, else 2)")
    p.add_argument("--pot", type=_positive, default=None, metavar="N", help="421: tokens in the pot (default: 15)")
    p.add_argument("--games", type=_positive, default=1000, metavar="N", help="number of games (default: 1000)")
    p.add_argument("--seed", type=int, default=None, help="seed for the dice and the bots (default: drawn and printed)")

    p = sub.add_parser(
        "evaluate",
        help="win probability of an agent against the optimal bot (421: against each bot)",
        description="420: evaluate an agent against the optimal bot, as Red and as Blue. 421: against each "
        "built-in 421 bot in two-player games, moving first and second. With --exact the figures "
        "are exact (computed by the solver from the agent's whole policy); otherwise they are estimated "
        "by playing games, with 95% confidence intervals.",
    )
    p.add_argument("game", choices=("420", "421"), help="the game")
    p.add_argument("--agent", required=True, metavar="NAME", help=f"{agents_help}, or 'all' for every bot")
    p.add_argument("--exact", action="store_true", help="compute exact win probabilities with the solver")
    p.add_argument("--games", type=_positive, default=1000, metavar="N", help="games per agent without --exact (default: 1000)")
    p.add_argument("--seed", type=int, default=None, help="seed for the simulated games (default: drawn and printed)")

    p = sub.add_parser(
        "export",
        help="write an agent's whole policy as CSV",
        description="Write the agent's move in every decision state as CSV with header hand,opponent,reroll: "
        "hands as sorted dice joined by '-' (the mover's first), reroll the sorted values of the dice rerolled "
        "(the most probable move for a stochastic agent). Rows by hand, then opponent hand.",
    )
    p.add_argument("game", choices=("420",), help="the game")
    p.add_argument("--agent", required=True, metavar="NAME", help=agents_help)
    p.add_argument("--out", required=True, metavar="FILE.csv", help="the CSV file to write")
    parser.commands = sub.choices  # name -> subparser, for the usage line of an error
    return parser


# --- commands ------------------------------------------------------------------------
def _load(game: str, name: str, seed: Optional[int], option: str):
    try:
        return load_agent(game, name, seed, option=option)
    except AgentLoadError as e:
        raise UsageError(str(e)) from None


def _seed_or_draw(seed: Optional[int]) -> tuple[int, str]:
    """The seed to use, and a note to print (once the agents have loaded) if it was drawn."""
    if seed is not None:
        return seed, ""
    seed = secrets.randbelow(2**31)
    return seed, f"(seed {seed}; pass --seed {seed} to replay)"


def _note(text: str, out: TextIO) -> None:
    if text:
        print(text, file=out)


def cmd_play(args, out: TextIO, input_fn: Callable[[str], str]) -> int:
    from envs.dice import RandomDice
    from play.cli420 import play_terminal

    seed, note = _seed_or_draw(args.seed)
    opponent = _load("420", args.opponent, derive_seed(seed, 1), "--opponent")
    _note(note, out)
    return play_terminal(
        opponent,
        RandomDice(seed),
        opponent_name=args.opponent,
        seat=args.seat,
        games=args.games,
        input_fn=input_fn,
        out=out,
    )


def cmd_play421(args, out: TextIO, input_fn: Callable[[str], str]) -> int:
    from envs.dice import RandomDice
    from play.cli421 import play_terminal421

    names = args.opponent or ["ppo-421"]
    n_opponents = args.players - 1
    if len(names) > n_opponents:
        raise UsageError(
            f"--opponent given {len(names)} times for {args.players} players: give it at most {n_opponents} "
            f"time{'s' if n_opponents > 1 else ''} (use --players 3 for two opponents)"
        )
    if len(names) < n_opponents:
        names = names * n_opponents  # one name for both opponents
    if args.seat != "random" and int(args.seat) > args.players:
        raise UsageError(f"--seat {args.seat}: with {args.players} players the seats are 1..{args.players}")
    _check_two_player_bots(names, args.players)
    seed, note = _seed_or_draw(args.seed)
    opponents = [_load("421", name, derive_seed(seed, 1 + i), "--opponent") for i, name in enumerate(names)]
    _note(note, out)
    return play_terminal421(
        opponents,
        RandomDice(seed),
        opponent_names=names,
        seat="random" if args.seat == "random" else int(args.seat) - 1,
        pot=args.pot,
        games=args.games,
        input_fn=input_fn,
        out=out,
    )


def _progress_printer(err: TextIO, every: float = 10.0) -> Callable[[int, int], None]:
    """A match progress callback that writes a line to ``err`` at most every ``every`` seconds."""
    start = time.monotonic()
    last = [start]

    def progress(done: int, total: int) -> None:
        now = time.monotonic()
        if now - last[0] >= every and done < total:
            last[0] = now
            rate = done / (now - start)
            print(f"  ... {done}/{total} games, {now - start:.0f} s, about {(total - done) / rate:.0f} s to go",
                  file=err, flush=True)

    return progress


def _match_shape(args) -> tuple[int, int]:
    """(players, pot) of a match, checked against the game."""
    if args.game == "420":
        for option, value in (("--opponent2", args.opponent2), ("--players", args.players), ("--pot", args.pot)):
            if value is not None:
                raise UsageError(f"{option} is for 421 only (420 here is a two-player game with no pot)")
        return 2, 0
    players = args.players or (3 if args.opponent2 is not None else 2)
    if players == 2 and args.opponent2 is not None:
        raise UsageError("--opponent2 needs --players 3")
    _check_two_player_bots([args.agent, args.opponent, args.opponent2 or args.opponent], players)
    return players, args.pot or 15


def cmd_match(args, out: TextIO, err: Optional[TextIO] = None) -> int:
    import functools

    from play.tournament import format_match, play_game_421, play_match, play_match_n

    players, pot = _match_shape(args)
    seed, note = _seed_or_draw(args.seed)
    a = _load(args.game, args.agent, derive_seed(seed, 1), "--agent")
    b = _load(args.game, args.opponent, derive_seed(seed, 2), "--opponent")
    progress = _progress_printer(err) if err is not None else None
    if args.game == "420":
        _note(note, out)
        result = play_match(args.game, a, b, args.games, seed=seed, names=(args.agent, args.opponent), progress=progress)
    else:
        names = [args.agent, args.opponent]
        agents = [a, b]
        if players == 3:
            names.append(args.opponent2 or args.opponent)
            agents.append(_load(args.game, names[2], derive_seed(seed, 3), "--opponent2"))
        _note(note, out)
        result = play_match_n(
            "421", agents, args.games, seed=seed, names=names, progress=progress,
            runner=functools.partial(play_game_421, pot=pot),
            settings=f"{players} players, pot {pot}",
            note="A win is not losing (the loser ends up holding every token); the 1st player plays first.",
        )
    print(format_match(result), file=out)
    return 0


def _agents_to_evaluate(game: str, name: str, seed: Optional[int], out: TextIO) -> list[tuple[str, object]]:
    from agents import agent_names

    if name != "all":
        return [(name, _load(game, name, seed, "--agent"))]
    found = []
    for n in agent_names(game):
        try:
            found.append((n, load_agent(game, n, seed, option="--agent")))
        except AgentLoadError as e:
            print(f"(skipping {n}: {str(e).splitlines()[0]})", file=out)
    return found


TWO_PLAYER_ONLY_421 = {"optimal"}  # solved for two players only (agents/solver421.py)


def _check_two_player_bots(names: Sequence[str], players: int) -> None:
    for name in names:
        if players != 2 and name in TWO_PLAYER_ONLY_421:
            raise UsageError(f"the {name} 421 bot is solved for two players only; with {players} players use another bot")


def _exact_rows421(agents: list[tuple[str, object]], out: TextIO, pot: int = 15) -> None:
    """Exact P(win) of each agent against the optimal bot and against its own best reply."""
    from agents import solver421

    print(f"421, exact (solver): two players, pot {pot}, charge phase and first-player draw included.\n"
          "The optimal bot against itself wins exactly 0.5; gap in percentage points. The best reply is the\n"
          "strongest policy against this agent: 'vs best reply' is how much the agent wins against it.", file=out)
    width = max(len("agent"), *(len(n) for n, _ in agents)) if agents else 5
    print(f"{'agent':<{width}}  {'vs optimal':>10}  {'gap (pp)':>9}  {'vs best reply':>13}", file=out)
    for name, agent in agents:
        try:
            table = solver421.policy_table(agent, pot)
            p = solver421.evaluate(table, solver421.bot_table("optimal", pot))
            reply = solver421.best_reply(table).value
        except ValueError as e:  # e.g. an agent that puts weight on illegal moves
            raise UsageError(f"exact evaluation of {name} failed: {e}") from None
        gap = 0.0 if abs(p - 0.5) < 1e-12 else 100 * (p - 0.5)
        print(f"{name:<{width}}  {p:10.6f}  {gap:+9.4f}  {1 - reply:13.6f}", file=out, flush=True)


def cmd_evaluate421(args, out: TextIO, err: Optional[TextIO] = None) -> int:
    import agents as agents_module
    from play.tournament import format_against, play_match_n

    if args.exact:
        _exact_rows421(_agents_to_evaluate("421", args.agent, derive_seed(args.seed, 1), out), out)
        return 0

    seed, note = _seed_or_draw(args.seed)
    agents = _agents_to_evaluate("421", args.agent, derive_seed(seed, 1), out)
    _note(note, out)
    progress = _progress_printer(err) if err is not None else None
    bots = agents_module.BOT_NAMES["421"]
    print(f"421, simulated: each agent against each built-in bot ({', '.join(bots)}), {args.games} two-player "
          f"games each (pot 15, seed {seed}), moving first in half of them. A win is not losing.", file=out)
    for name, agent in agents:
        results = []
        for k, bot in enumerate(bots):
            opponent = agents_module.make_agent("421", bot, derive_seed(seed, 100 + k))
            results.append(play_match_n("421", [agent, opponent], args.games, seed=seed, names=(name, bot), progress=progress))
        print(file=out)
        print(format_against(name, results), file=out)
    return 0


def cmd_evaluate(args, out: TextIO, err: Optional[TextIO] = None) -> int:
    if args.game == "421":
        return cmd_evaluate421(args, out, err)
    from play import exact420

    if args.exact:
        agents = _agents_to_evaluate(args.game, args.agent, derive_seed(args.seed, 1), out)
        print(exact420.format_exact([(n, exact420.exact_evaluation(a)) for n, a in agents]), file=out)
        return 0

    from agents.bots420 import OptimalAgent
    from play.tournament import format_match, play_match

    seed, note = _seed_or_draw(args.seed)
    agents = _agents_to_evaluate(args.game, args.agent, derive_seed(seed, 1), out)
    _note(note, out)
    optimal = OptimalAgent()
    print(f"Simulated against the optimal bot ({args.games} games each; --exact gives exact figures):", file=out)
    for name, agent in agents:
        result = play_match(args.game, agent, optimal, args.games, seed=seed, names=(name, "optimal"))
        print(file=out)
        print(format_match(result), file=out)
    return 0


def cmd_export(args, out: TextIO) -> int:
    from play import exact420

    agent = _load(args.game, args.agent, None, "--agent")
    table = exact420.policy_table(agent)
    try:
        n = exact420.write_policy_csv(table, args.out)
    except OSError as e:
        raise UsageError(f"cannot write {args.out}: {e.strerror or e}") from None
    note = "" if exact420.is_deterministic(table) else f" ({args.agent} is stochastic: each row is its most probable move)"
    print(f"wrote {n} rows (one per decision state) to {args.out}{note}", file=out)
    return 0


def main(
    argv: Optional[Sequence[str]] = None,
    *,
    input_fn: Optional[Callable[[str], str]] = None,
    out: Optional[TextIO] = None,
    err: Optional[TextIO] = None,
) -> int:
    """Run the CLI; returns the exit code.  ``input_fn``/``out``/``err`` are for tests."""
    out = out if out is not None else sys.stdout
    err = err if err is not None else sys.stderr
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:  # --help (0) or a usage error (2, already printed)
        return int(e.code or 0)
    try:
        if args.command == "420":
            return cmd_play(args, out, input_fn or input)
        if args.command == "421":
            return cmd_play421(args, out, input_fn or input)
        if args.command == "match":
            return cmd_match(args, out, err)
        if args.command == "evaluate":
            return cmd_evaluate(args, out, err)
        if args.command == "export":
            return cmd_export(args, out)
    except UsageError as e:
        print(parser.commands[args.command].format_usage(), end="", file=err)
        print(f"{PROG} {args.command}: error: {e}", file=err)
        return 2
    except KeyboardInterrupt:
        print("\nInterrupted.", file=err)
        return 130
    raise AssertionError(f"unhandled command {args.command!r}")


if __name__ == "__main__":
    sys.exit(main())
