"""Terminal front ends: play a bot, run bot-vs-bot matches, evaluate and export policies.

``python -m play --help`` lists the commands.  The modules only wire pieces
together (rules from ``envs``, players from ``agents``):

* ``play.cli420``     the interactive game of 420 for a person;
* ``play.cli421``     the interactive game of 421 for a person (against one or two bots);
* ``play.tournament`` bot-vs-bot matches and their statistics (Wilson intervals);
* ``play.exact420``   exact evaluation of a 420 agent with the solver, and policy export.
"""

from __future__ import annotations

import sys
import time
from typing import Callable, TextIO

import games
from agents.base import Agent


class UsageError(Exception):
    """A problem with what the user asked for; printed without a traceback, exit code 2."""


class AgentLoadError(Exception):
    """An agent name that could not be turned into an agent; the message says why."""


def load_agent(game: str, name: str, seed: int | None = None, option: str = "--opponent") -> Agent:
    """``agents.make_agent`` with every failure turned into one clear :class:`AgentLoadError`.

    The shipped trained bot (``ppo-420``, ``ppo-421``) can fail for reasons a user cannot see
    (no checkpoint yet, torch missing, a corrupt file); the message then says so
    and suggests a bot that always works, as the command-line ``option`` that
    names the agent (``--opponent`` or ``--agent``).
    """
    import agents

    spec = games.get(game)
    try:
        return agents.make_agent(game, name, seed)
    except Exception as e:  # noqa: BLE001 - any failure to load is reported the same way
        reason = str(e) or type(e).__name__
        if name == spec.shipped:
            raise AgentLoadError(
                f"could not load the trained bot {name!r}: {reason}\n"
                f"(train it first, or use a built-in bot instead, e.g. {option} {spec.suggested_bot}; "
                f"bots: {', '.join(spec.bots)})"
            ) from None
        raise AgentLoadError(reason) from None


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
            print(f"  ... {done}/{total} games, {now - start:.0f} s, about {(total - done) / rate:.0f} s to go",
                  file=err, flush=True)

    return progress
