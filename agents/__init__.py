"""Agents: everything that can take a seat at the table, behind one protocol
(``agents.base.Agent``: ``act(obs, action_mask) -> int``)."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from agents.base import Agent, RandomAgent

GAMES = ("420", "421")
SHIPPED = {"420": "ppo-420", "421": "ppo-421"}
CHECKPOINT_DIR = Path(__file__).resolve().parent.parent / "checkpoints"
_BOT_NAMES_420 = ("random", "greedy", "foundation", "optimal")


@lru_cache(maxsize=None)
def _optimal421():
    """``agents.solver421.OptimalAgent421`` once that module offers it, else None."""
    try:
        from agents.solver421 import OptimalAgent421
    except Exception:  # noqa: BLE001 - missing or unfinished solver: 421 simply has no "optimal" bot
        return None
    return OptimalAgent421


def _bot_names() -> dict[str, tuple[str, ...]]:
    """``BOT_NAMES``, built on first use: the 421 names come from ``agents.bots421``
    (plus "optimal" when ``agents.solver421`` offers ``OptimalAgent421``).  They are
    imported only then, so that ``import agents`` stays light and
    ``python -m agents.bots421`` / ``python -m agents.solver421`` run cleanly."""
    names = globals().get("BOT_NAMES")
    if names is None:
        from agents.bots421 import BOT_NAMES_421

        optimal = ("optimal",) if _optimal421() is not None else ()
        names = {"420": _BOT_NAMES_420, "421": (*BOT_NAMES_421, *optimal)}
        globals()["BOT_NAMES"] = names
    return names


def __getattr__(name: str):
    if name == "BOT_NAMES":  # {game: bot names}; see _bot_names
        return _bot_names()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def agent_names(game: str) -> tuple[str, ...]:
    return (*_bot_names()[game], SHIPPED[game])


def make_agent(game: str, name: str, seed: int | None = None) -> Agent:
    """An agent by name: a bot, the shipped trained bot (``ppo-420``, ``ppo-421``) or a checkpoint path."""
    game = str(game)
    if game not in GAMES:
        raise ValueError(f"unknown game {game!r}; choose one of {', '.join(GAMES)}")
    if name == "random":
        return RandomAgent(seed)
    if game == "420":
        from agents import bots420

        bots = {"greedy": bots420.GreedyAgent, "foundation": bots420.FoundationAgent, "optimal": bots420.OptimalAgent}
        if name in bots:
            return bots[name]()
    if game == "421" and name in _bot_names()["421"]:
        if name == "optimal":
            return _optimal421()()
        from agents.bots421 import make_bot421

        return make_bot421(name, seed)
    if name == SHIPPED[game]:
        path = CHECKPOINT_DIR / f"{name}.pt"
        if not path.exists():
            raise ValueError(f"the shipped bot {name} is missing: no {path} (train one with: python -m train {name} --name {name})")
    else:
        path = Path(name)
        if path.suffix == "" and path.with_suffix(".pt").exists():
            path = path.with_suffix(".pt")
        if not path.exists():
            raise ValueError(
                f"unknown agent {name!r} for {game}: not one of {', '.join(agent_names(game))} and no checkpoint file at {path}"
            )
    from agents.ppo_agent import PPOAgent

    return PPOAgent.load(path, expected_game=game)
