"""The game registry: which games there are, each a :class:`~core.spec.GameSpec`.

A game is one folder (``games/dice420/``, ``games/dice421/``, ``games/pig/``) whose ``SPEC``
says what the game is and what it offers.  On import the registry registers the games of
:data:`GAMES` and those that other installed packages declare under the
``dice_arena.games`` entry-point group (``[project.entry-points."dice_arena.games"]
mygame = "mypackage.mygame:SPEC"``), each with its Gymnasium id.  No other module keeps a
list of games.  Names are looked up in ``core.spec``'s table (:func:`get`, :func:`names`),
which only the registry fills, so the layers below it (an agent made by name, a checkpoint
naming its game) find the same games without importing it.
"""

from __future__ import annotations

import sys
from importlib.metadata import entry_points
from typing import Any

from core import spec as _table
from core.spec import PLAYER_WORDS, REGISTRY, GameSpec, Option, get, load, names  # noqa: F401 (the registry's API)

GAMES = ("games.dice420:SPEC", "games.dice421:SPEC", "games.pig:SPEC")  # the games of this project
ENTRY_POINT_GROUP = "dice_arena.games"  # games of other installed packages


def register(spec: GameSpec) -> GameSpec:
    """Register a game: in the table of names (``core.spec.REGISTRY``, where :func:`get` and
    the layers below look names up) and, where gymnasium is installed, its Gymnasium id."""
    _table.register(spec)
    _register_env_id(spec)
    return spec


def _register_env_id(spec: GameSpec) -> None:
    """The game's Gymnasium id, where gymnasium is installed (the engines need none)."""
    if not (spec.env_id and spec.env):
        return
    try:
        from gymnasium.envs.registration import register as gym_register, registry
    except ImportError:
        return
    if spec.env_id not in registry:
        gym_register(id=spec.env_id, entry_point=spec.env)


def discover_plugins() -> list[str]:
    """Register the games other installed packages declare under the ``dice_arena.games``
    entry-point group (each a ``GameSpec``); returns their names.  A plug-in that fails to
    load is reported in one line on stderr and skipped: it never takes the others down."""
    found = []
    for point in entry_points(group=ENTRY_POINT_GROUP):
        try:
            spec = point.load()
            if not isinstance(spec, GameSpec):
                raise ValueError(f"it is a {type(spec).__name__}, not a GameSpec")
            if spec.name not in names():
                register(spec)
                found.append(spec.name)
        except Exception as error:  # noqa: BLE001 - any failure of a plug-in is reported the same way
            print(f"dice-arena: game plug-in {point.name!r} ({point.value}) not loaded: {error}", file=sys.stderr)
    return found


for _target in GAMES:
    register(load(_target))
discover_plugins()


def aec_env(name: Any, **kwargs):
    """The PettingZoo AEC env of a game (``env(**kwargs)`` of its ``aec`` module, wrapped as
    PettingZoo's classic envs are)."""
    spec = get(name)
    if not spec.aec_module:
        raise ValueError(f"{spec.name} has no PettingZoo env")
    return load(spec.aec_module).env(**kwargs)
