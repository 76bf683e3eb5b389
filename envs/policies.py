"""What the single-agent envs need of the players they seat: ready opponents.

The envs (``Dice420Env``, ``Dice421Env``) seat *ready* policies, anything with
``act(obs, action_mask) -> int``; they never build a bot from a name (that is
``agents.make_agent``'s job, one layer up).  This module holds the little the
envs share about them: checking what they are given, the default opponent (a
uniformly random legal policy drawn from the env's own generator), reseeding at
``reset``, and the table of agents by seat that ``engine.play_out`` reads.
"""

from __future__ import annotations

from typing import Any, Optional, Sequence

import numpy as np


class RandomPolicy:
    """Plays a uniformly random legal action, drawn from ``rng``.

    An env's default opponent: the env points ``rng`` at its own ``np_random``
    at every ``reset``, so the seed of the env decides the opponent's choices.
    """

    name = "random"

    def __init__(self, rng: Optional[np.random.Generator] = None):
        self.rng = rng if rng is not None else np.random.default_rng()

    def act(self, obs: np.ndarray, action_mask: np.ndarray) -> int:
        return int(self.rng.choice(np.flatnonzero(action_mask)))

    def __repr__(self) -> str:
        return "<RandomPolicy>"


def _name_hint(game: str, env_id: str, name: str) -> str:
    return (
        f"pass an agent, e.g. agents.make_agent({game!r}, {name!r}), "
        f"or use agents.make_env({env_id!r}, opponent={name!r})"
    )


def seat_opponents(opponent: Any, n_others: int, game: str, env_id: str, example: str) -> list:
    """The opponents of the other seats (clockwise from the agent's), checked.

    ``opponent`` is one ready policy for every other seat, a list or tuple of
    ``n_others`` of them, or ``None`` (the env's default random policy: returned
    as ``None`` slots).  A name is refused with a ``TypeError`` saying how to
    turn it into an agent; so is anything without a callable ``act``.
    """
    if isinstance(opponent, (list, tuple)):
        given = list(opponent)
        if len(given) != n_others:
            raise ValueError(
                f"give one opponent per other seat ({n_others}, clockwise from the agent), got {len(given)}"
            )
    else:
        given = [opponent] * n_others
    for o in given:
        if isinstance(o, str):
            raise TypeError(
                f"an opponent is an agent with act(obs, action_mask), not a name: got {o!r}; "
                + _name_hint(game, env_id, o)
            )
        if o is not None and not callable(getattr(o, "act", None)):
            raise TypeError(
                f"an opponent must have act(obs, action_mask) -> int, got {o!r}; " + _name_hint(game, env_id, example)
            )
    return given


class AgentSeat:
    """Stands in the env's own agent's seat for ``engine.play_out``, which the env
    stops before that seat's move; being asked is a bug."""

    name = "agent"

    def act(self, obs, action_mask):
        raise AssertionError("the env's own agent was asked to move inside the env")


def table(agent_seat: int, opponents: Sequence[Any]) -> list:
    """The agents by seat for ``engine.play_out``: ``opponents[k]`` plays seat
    ``agent_seat + 1 + k`` (clockwise), an :class:`AgentSeat` holds the agent's."""
    n = len(opponents) + 1
    seats: list = [AgentSeat()] * n
    for slot, opponent in enumerate(opponents):
        seats[(agent_seat + 1 + slot) % n] = opponent
    return seats


def reseed_opponents(opponents: Sequence[Any], rng: np.random.Generator) -> None:
    """Call ``reseed(seed)`` once on every distinct opponent that has it, in seat
    order, with seeds drawn from ``rng`` (the env's ``np_random``)."""
    done: set[int] = set()
    for o in opponents:
        if id(o) in done:
            continue
        done.add(id(o))
        reseed = getattr(o, "reseed", None)
        if callable(reseed):
            reseed(int(rng.integers(2**63)))
