"""Terminal front ends: play a bot, run bot-vs-bot matches, evaluate and export policies.

``python -m play --help`` lists the commands.  The modules only wire pieces
together (rules from ``envs``, players from ``agents``):

* ``play.cli420``     the interactive game of 420 for a person;
* ``play.cli421``     the interactive game of 421 for a person (against one or two bots);
* ``play.tournament`` bot-vs-bot matches and their statistics (Wilson intervals);
* ``play.exact420``   exact evaluation of a 420 agent with the solver, and policy export.
"""

from __future__ import annotations

from agents.base import Agent


# The built-in bot a message suggests when the trained bot cannot be loaded.
SUGGESTED_BOT = {"420": "optimal", "421": "heuristic"}


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

    try:
        return agents.make_agent(game, name, seed)
    except Exception as e:  # noqa: BLE001 - any failure to load is reported the same way
        reason = str(e) or type(e).__name__
        if name == agents.SHIPPED.get(str(game)):
            raise AgentLoadError(
                f"could not load the trained bot {name!r}: {reason}\n"
                f"(train it first, or use a built-in bot instead, e.g. {option} {SUGGESTED_BOT.get(str(game), 'random')}; "
                f"bots: {', '.join(agents.BOT_NAMES[str(game)])})"
            ) from None
        raise AgentLoadError(reason) from None


def derive_seed(seed: int | None, stream: int) -> int | None:
    """An independent seed for the ``stream``-th consumer of one user seed (dice, agent A,
    agent B, ...), so that a random bot never replays the dice's own random stream."""
    if seed is None:
        return None
    import numpy as np

    return int(np.random.SeedSequence([seed, stream]).generate_state(1)[0])
