"""``python -m play``: play a bot, run a bot-vs-bot match, evaluate or export a policy.

Exit codes: 0 on success (and when a person quits a game), 2 on a usage error
or an agent that cannot be loaded.
"""

from __future__ import annotations

import argparse
import secrets
import sys
from typing import Callable, Optional, Sequence, TextIO

from play import AgentLoadError, derive_seed, load_agent

PROG = "python -m play"

EPILOG = """\
examples:
  python -m play 420 --opponent optimal --seat red --seed 7
  python -m play match 420 --agent greedy --opponent random --games 1000 --seed 0
  python -m play evaluate 420 --agent all --exact
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
    agents_help = f"an agent: one of {_bot_list()}, or a checkpoint file"

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
        "match",
        help="bot vs bot: win rates with 95%% confidence intervals",
        description="Play GAMES games between two agents, alternating seats game by game (each moves first "
        "half the time), and print each one's win rate with a 95% Wilson confidence interval, overall and by seat.",
    )
    p.add_argument("game", choices=sorted(RUNNERS), help="the game")
    p.add_argument("--agent", required=True, metavar="A", help=agents_help)
    p.add_argument("--opponent", required=True, metavar="B", help=agents_help)
    p.add_argument("--games", type=_positive, default=1000, metavar="N", help="number of games (default: 1000)")
    p.add_argument("--seed", type=int, default=None, help="seed for the dice and the bots (default: drawn and printed)")

    p = sub.add_parser(
        "evaluate",
        help="win probability of an agent against the optimal bot",
        description="Evaluate an agent against the optimal bot, as Red and as Blue. With --exact the figures "
        "are exact (computed by the solver from the agent's whole policy); otherwise they are estimated "
        "by playing games, with 95% confidence intervals.",
    )
    p.add_argument("game", choices=("420",), help="the game")
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


def cmd_match(args, out: TextIO) -> int:
    from play.tournament import format_match, play_match

    seed, note = _seed_or_draw(args.seed)
    a = _load(args.game, args.agent, derive_seed(seed, 1), "--agent")
    b = _load(args.game, args.opponent, derive_seed(seed, 2), "--opponent")
    _note(note, out)
    result = play_match(args.game, a, b, args.games, seed=seed, names=(args.agent, args.opponent))
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


def cmd_evaluate(args, out: TextIO) -> int:
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
        if args.command == "match":
            return cmd_match(args, out)
        if args.command == "evaluate":
            return cmd_evaluate(args, out)
        if args.command == "export":
            return cmd_export(args, out)
    except UsageError as e:
        print(f"{PROG} {args.command}: error: {e}", file=err)
        return 2
    except KeyboardInterrupt:
        print("\nInterrupted.", file=err)
        return 130
    raise AssertionError(f"unhandled command {args.command!r}")


if __name__ == "__main__":
    sys.exit(main())
