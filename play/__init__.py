"""Terminal front ends: play a bot, run bot-vs-bot matches, evaluate and export policies.

``python -m play --help`` lists the commands.  The modules only wire pieces
together (each game from its folder through the registry, ``games``; players from
``agents``):

* ``play.terminal``   a person against bots, for any game with a view (``GameSpec.view``);
* ``play.match``      bot-vs-bot matches and their statistics (Wilson intervals);
* ``play.evaluate``   exact and simulated evaluation of agents, for any game (its solver
                      and evaluators: ``GameSpec.exact``, ``evaluate``);
* ``play.tournament`` tournaments, with ``play.ratings`` and ``play.tournament_cli``.
"""

from __future__ import annotations

import os
import signal
import sys


# --- Ctrl-C while ``python -m play`` starts --------------------------------------------
# Importing the games, numpy and the rest takes a noticeable fraction of a second; a
# Ctrl-C then would print a long KeyboardInterrupt traceback from the imports.  So when
# this package is imported as the start of ``python -m play`` (and only then: a program
# that imports it keeps its own handler), its first statements make SIGINT end the
# program at once with one line and status 130; ``play.__main__.main`` hands SIGINT back
# to Python (``KeyboardInterrupt``, caught there) when the command starts.

INTERRUPTED = "Interrupted."


def interrupted_at_once(signum=None, frame=None) -> None:
    """A SIGINT handler for the moments with nothing to save or undo (starting, exiting):
    one line on stderr, straight to the descriptor, and exit status 130."""
    try:
        os.write(2, f"\n{INTERRUPTED}\n".encode())
    finally:
        os._exit(130)


def _started_as_play_main() -> bool:
    """Whether this interpreter was started as ``python [OPTIONS] -m play ...``."""
    argv = list(getattr(sys, "orig_argv", []))[1:]
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg == "-m":
            return argv[i + 1 : i + 2] == ["play"]
        if arg.startswith("-m"):
            return arg == "-mplay"
        if not arg.startswith("-") or arg.startswith("-c") or arg == "-":
            return False  # a script, -c or stdin: not python -m play
        i += 2 if arg in ("-X", "-W", "--check-hash-based-pycs") else 1
    return False


if _started_as_play_main() and signal.getsignal(signal.SIGINT) is signal.default_int_handler:
    signal.signal(signal.SIGINT, interrupted_at_once)


import time  # noqa: E402 (after the Ctrl-C handler: these can take a while)
from pathlib import Path  # noqa: E402
from typing import Callable, TextIO  # noqa: E402

import games  # noqa: E402
from agents.base import Agent  # noqa: E402


class UsageError(Exception):
    """A problem with what the user asked for; printed without a traceback, exit code 2."""


class AgentLoadError(Exception):
    """An agent name that could not be turned into an agent; the message says why."""


def load_agent(game: str, name: str, seed: int | None = None, option: str = "--opponent") -> Agent:
    """``agents.make_agent`` with every failure turned into one clear :class:`AgentLoadError`.

    The message is one line and names the command-line ``option`` that named
    the agent (``--opponent`` or ``--agent``).  The shipped trained bot
    (``ppo-420``, ``ppo-421``) can fail for reasons a user cannot see (no
    checkpoint yet, torch missing, a corrupt file); the message then says so and
    suggests a bot that always works.
    """
    import agents

    spec = games.get(game)
    if name not in spec.agent_names:
        _check_path(name, option, tuple(spec.bot_files))
    try:
        return agents.make_agent(game, name, seed)
    except Exception as e:  # noqa: BLE001 - any failure to load is reported the same way
        reason = one_line(str(e) or type(e).__name__)
        if name in spec.shipped_bots:
            raise AgentLoadError(
                f"could not load the trained bot {name!r}: {reason}; train it first, or use a built-in bot "
                f"instead, e.g. {option} {spec.suggested_bot} (bots: {', '.join(spec.bots)})"
            ) from None
        raise AgentLoadError(f"{option}: {reason}") from None


def one_torch_thread() -> None:
    """For games played one observation at a time (the terminal, match, tournament):
    a trained agent's single-row forward pass gains nothing from torch's threads, and
    on a busy machine their hand-offs made a 421 game 20 times slower (157 ms against
    7 ms with one thread, two shared cores).  Only if a checkpoint agent has imported
    torch; the exact evaluations, which ask the agent in large batches, keep them."""
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.set_num_threads(1)


CHECKPOINT_SUFFIXES = (".pt", ".json")


def _check_path(name: str, option: str, bot_files: tuple[str, ...] = ()) -> None:
    """Refuse, with a message that says what is wrong, a name that is a path to
    something that cannot be a checkpoint or a bot file of the game (``GameSpec.bot_files``:
    a folder, a file of another kind)."""
    if not isinstance(name, str) or not name.strip():
        raise AgentLoadError(f"{option} {name!r}: give a bot name or a checkpoint file (NAME.pt)")
    path = Path(name)
    try:
        if path.is_dir() and path.suffix in bot_files:
            raise AgentLoadError(f"{option} {name}: is a folder, not a {path.suffix} bot file of the game")
        if path.is_dir():
            raise AgentLoadError(
                f"{option} {name}: is a folder, not a checkpoint; give the NAME.pt file in it "
                "that python -m train saved (NAME.json next to it)"
            )
        if path.exists() and path.suffix not in (*CHECKPOINT_SUFFIXES, *bot_files) and not Path(f"{name}.pt").exists():
            raise AgentLoadError(
                f"{option} {name}: not a checkpoint; a checkpoint is a NAME.pt file with its "
                "NAME.json next to it, as python -m train saves them"
            )
    except OSError as e:  # a name too long for the file system, a path it cannot look into
        raise AgentLoadError(
            f"{option} {one_line(name, 60)}: cannot look for a checkpoint there ({e.strerror or e})"
        ) from None


def one_line(text: str, limit: int = 240) -> str:
    """``text`` as one line of at most about ``limit`` characters: newlines and runs of
    spaces become one space, and a longer text is cut at its first sentence end
    past a third of ``limit`` (or at ``limit``), marked with "..."."""
    text = " ".join(str(text).split())
    if len(text) <= limit:
        return text
    end = text.find(". ", limit // 3, limit)
    return (text[: end + 1] if end > 0 else text[:limit].rstrip()) + " ..."


def check_table(agent: Agent, name: str, option: str, players: int, options: dict) -> None:
    """Raise :class:`AgentLoadError` when the agent says it cannot play this table (an
    agent built for some tables only, e.g. the three-player 421 reply at another pot,
    has ``check_table(n_players, **options)``)."""
    check = getattr(agent, "check_table", None)
    if callable(check):
        try:
            check(players, **options)
        except ValueError as e:
            raise AgentLoadError(f"{option} {name}: {e}") from None


def default_opponent(spec: games.GameSpec, players: int, options: dict) -> str:
    """The bot a table of ``players`` gets when none is named: the registry's default, or
    the suggested bot where that one cannot sit (``exact3`` is built for pot 15 only)."""
    name = spec.default_bot.get(players, spec.suggested_bot)
    if name in spec.bot_players:  # a bot made for some tables: ask it about this one
        try:
            check_table(load_agent(spec.name, name, None, option="--opponent"), name, "--opponent", players, options)
        except AgentLoadError:
            return spec.suggested_bot
    return name


def check_fit(game: str, agent: Agent, name: str, option: str, players: int, options: dict, exact: bool = False) -> str:
    """Whether a trained agent (a checkpoint) can play this table.

    Raises :class:`AgentLoadError` when it cannot (its observations have another
    size, e.g. a two-player 420 bot at a table of three), or, for ``exact``
    figures, when it was trained with other game options (421's pot) than the
    ones asked for.  Returns a warning line (else "") when it will play with
    options it was not trained for.  Agents without training metadata pass.
    """
    check_table(agent, name, option, players, options)
    metadata = getattr(agent, "metadata", None)
    space = getattr(getattr(agent, "policy", None), "observation_space", None)
    if not isinstance(metadata, dict) or not metadata:
        return ""
    spec = games.get(game)
    trained = metadata.get("env") if isinstance(metadata.get("env"), dict) else {}
    if space is not None and getattr(space, "shape", None):
        want = spec.observation_space(players, **options).shape
        if tuple(space.shape) != tuple(want):
            raise AgentLoadError(
                f"{option} {name}: trained for {trained.get('n_players', 2)} players (observations of "
                f"{space.shape[0]} numbers); a {spec.name} table of {players} shows {want[0]}: "
                f"pick a bot made for {players} players"
            )
    differ = [
        o.name for o in spec.options if o.name in trained and o.name in options and trained[o.name] != options[o.name]
    ]
    if not differ:
        return ""
    was = ", ".join(f"{k} {trained[k]}" for k in differ)
    now = ", ".join(f"{k} {options[k]}" for k in differ)
    if exact:
        raise AgentLoadError(
            f"{option} {name}: trained for {was}, so exact figures at {now} would describe it outside its "
            f"training; evaluate it with {' '.join(f'--{k} {trained[k]}' for k in differ)}, or without --exact"
        )
    return f"warning: {name} was trained for {was}; here it plays at {now} and may play worse"


def derive_seed(seed: int | None, stream: int) -> int | None:
    """An independent seed for the ``stream``-th consumer of one user seed (dice, agent A,
    agent B, ...), so that a random bot never replays the dice's own random stream."""
    if seed is None:
        return None
    import numpy as np

    return int(np.random.SeedSequence([seed, stream]).generate_state(1)[0])


def progress_printer(err: TextIO = sys.stderr, every: float = 10.0) -> Callable[[int, int], None]:
    """A match progress callback that writes a line to ``err`` at most every ``every`` seconds."""
    start = time.monotonic()
    last = [start]

    def progress(done: int, total: int) -> None:
        now = time.monotonic()
        if now - last[0] >= every and done < total:
            last[0] = now
            rate = done / (now - start)
            print(
                f"  ... {done}/{total} games, {now - start:.0f} s, about {(total - done) / rate:.0f} s to go",
                file=err,
                flush=True,
            )

    return progress
