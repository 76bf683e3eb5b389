"""Small helpers shared by tests."""

from __future__ import annotations

import games
from core.dice import RandomDice
from core.engine import play_out


def played(game: str, agents, seed=None, first_player=None, **options):
    """A finished game of ``game`` between ``agents`` (one per seat), through the one game loop."""
    spec = games.get(game)
    table = spec.new_game(len(agents), dice=RandomDice(seed), first_player=first_player, **options)
    return play_out(table, agents, spec.codec)


BOT_NAMES_421 = tuple(b for b in games.get("421").bots if b not in games.get("421").bot_players)  # every table
