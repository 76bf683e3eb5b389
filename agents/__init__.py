"""Agents: everything that can take a seat at the table, behind one protocol
(``agents.base.Agent``: ``act(obs, action_mask) -> int``).

Names become agents here and only here (:func:`make_agent`): a bot of a registered
game, the shipped trained bot, or a checkpoint file.  A game's name is looked up in the
table of registered games (``core.spec.get``), which the registry (``games``, a layer
above) fills when it is imported.  Envs and the game loop receive ready agents.
"""

from __future__ import annotations

import inspect
from functools import lru_cache
from pathlib import Path

from agents.base import Agent, BatchPolicy
from core.spec import NoExactFigure, get, load, names

CHECKPOINT_DIR = Path(__file__).resolve().parent.parent / "checkpoints"


def agent_names(game: str) -> tuple[str, ...]:
    """The bots of ``game`` and its shipped trained bot, by name."""
    return get(game).agent_names


def make_agent(game: str, name: str, seed: int | None = None) -> Agent:
    """An agent by name: a bot, a shipped trained bot (``GameSpec.shipped``, ``more_shipped``), a checkpoint
    path, or the path of a bot file of the game's own kind (421: a ``.npz`` reply file)."""
    spec = get(game)
    if not isinstance(name, str) or not name:
        raise ValueError(f"an agent name is a bot name or a checkpoint path, got {name!r}")
    if name in spec.bots:
        factory = load(spec.bots[name])
        takes_seed = "seed" in inspect.signature(factory).parameters
        return factory(seed=seed) if takes_seed else factory()
    if name in spec.shipped_bots:
        path = CHECKPOINT_DIR / f"{name}.pt"
        if not path.exists():
            raise ValueError(
                f"the shipped bot {name} is missing: no {path} (train one with: python -m train {name} --name {name})"
            )
    else:
        path = Path(name)
        if path.suffix in spec.bot_files:
            return load(spec.bot_files[path.suffix])(path)
        if path.suffix == "" and path.with_suffix(".pt").exists():
            path = path.with_suffix(".pt")
        if not path.exists():
            raise ValueError(
                f"unknown agent {name!r} for {spec.name}: not one of {', '.join(spec.agent_names)} and no checkpoint "
                f"file at {path}"
            )
    from agents.ppo_agent import PPOAgent

    return PPOAgent.load(path, expected_game=spec.name)


def exact_table(game: str, agent, n_players: int = 2, **options):
    """The one way from an agent (or a bot's name) to its exact policy table: what the
    game's exact tools evaluate and the batched envs play.

    Two players: the game's solver (``GameSpec.exact``), ``policy_table(agent, **options)``
    (420: ``(126, 126, 14)``; 421: a ``Policy421`` for ``pot``; Pig: by goal and faces).
    More players: the game's N-player evaluator (``GameSpec.exact_n``),
    ``prepared(agent, n_players)``.  A name is made an agent (seed 0) and its table is
    cached.  ``NoExactFigure`` (a ``ValueError``, one line) where the game offers no such
    table; ``ValueError`` where the agent cannot be tabulated."""
    if isinstance(agent, str):
        return _named_table(str(game), agent, n_players, tuple(sorted(options.items())))
    return _table(get(game), agent, n_players, options)


def _table(spec, agent, n_players: int, options: dict):
    if n_players == 2:
        if not spec.exact:
            raise NoExactFigure(f"{spec.name} has no exact solver: no policy table of an agent")
        return load(spec.exact).policy_table(agent, **options)
    if not spec.exact_n:
        raise NoExactFigure(f"{spec.name} has no exact evaluation at a table of {n_players}")
    return load(spec.exact_n).prepared(agent, n_players)


@lru_cache(maxsize=64)
def _named_table(game: str, name: str, n_players: int, options: tuple):
    spec = get(game)
    return _table(spec, make_agent(spec.name, name, seed=0), n_players, dict(options))


def bot_table(game: str, name: str, **options):
    """The two-player exact policy table of a named bot (cached): :func:`exact_table`."""
    return exact_table(game, name, 2, **options)


def batch_policy(game: str, agent) -> BatchPolicy:
    """An agent (or a name, through :func:`make_agent`) as a batch policy, the form in
    which the batched envs that ask other seats live play it (``games.dice421.vecn``)."""
    return BatchPolicy(make_agent(game, agent) if isinstance(agent, str) else agent)


def live_opponent(game: str, agent, n_players: int):
    """An agent (or a name) in the form the game's live env plays it fastest at a table of
    ``n_players``: its table where the game makes one for it (``GameSpec.live_table``,
    e.g. a 420 bot that plays from its own hand), else a batch policy."""
    spec = get(game)
    agent = make_agent(game, agent, seed=0) if isinstance(agent, str) else agent
    if spec.live_table:
        try:
            return load(spec.live_table)(agent, n_players)
        except ValueError:
            pass
    return BatchPolicy(agent)


def make_env(env_id: str, opponent=None, **kwargs):
    """``gymnasium.make(env_id, ...)`` with opponents given by name: a name, or a list
    of names (one per other seat), becomes agents through :func:`make_agent`.  The
    env reseeds its opponents from its own generator at every ``reset(seed=...)``.
    Without an opponent the env's own random legal policy plays."""
    import gymnasium as gym

    by_id = {get(n).env_id: get(n) for n in names()}
    if env_id not in by_id:
        raise ValueError(f"unknown env id {env_id!r}; choose one of {', '.join(by_id)}")
    game = by_id[env_id].name

    def resolve(o):
        return make_agent(game, o) if isinstance(o, str) else o

    if opponent is None:
        return gym.make(env_id, **kwargs)
    opponent = [resolve(o) for o in opponent] if isinstance(opponent, (list, tuple)) else resolve(opponent)
    return gym.make(env_id, opponent=opponent, **kwargs)
