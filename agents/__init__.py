"""Agents: everything that can take a seat at the table, behind one protocol
(``agents.base.Agent``: ``act(obs, action_mask) -> int``)."""

from __future__ import annotations

from pathlib import Path

from agents.base import Agent, RandomAgent
from agents.bots421 import BOT_NAMES_421

GAMES = ("420", "421")
BOT_NAMES = {"420": ("random", "greedy", "foundation", "optimal"), "421": BOT_NAMES_421}
SHIPPED = {"420": "ppo-420", "421": "ppo-421"}
CHECKPOINT_DIR = Path(__file__).resolve().parent.parent / "checkpoints"


def agent_names(game: str) -> tuple[str, ...]:
    return (*BOT_NAMES[game], SHIPPED[game])


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
    if game == "421" and name in BOT_NAMES["421"]:
        if name == "optimal":
            return _OptimalAgent421()
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


# The exact 421 bot ("optimal") exists once agents/solver421.py offers OptimalAgent421.
# Imported last, so that the solver module may itself import from ``agents``.
try:
    from agents.solver421 import OptimalAgent421 as _OptimalAgent421
except Exception:  # noqa: BLE001 - missing or unfinished solver: 421 simply has no "optimal" bot
    _OptimalAgent421 = None
else:
    BOT_NAMES["421"] = (*BOT_NAMES_421, "optimal")
