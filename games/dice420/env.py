"""Gymnasium environment for 420 (2 to 8 players): one agent against ready opponents,
over the generic ``envs.table_env.TableEnv``."""

from __future__ import annotations

from typing import Any, Optional

from games.dice420 import SPEC
from games.dice420 import game as g
from games.dice420.narrate import hand_total
from envs.table_env import TableEnv

REWARDS = ("outcome", "rank")


def wrap(parts: list[str], sep: str = "; ", width: int = 80) -> list[str]:
    """``parts`` joined by ``sep`` into lines of at most ``width`` columns (where they fit)."""
    lines: list[str] = []
    for part in parts:
        if lines and len(lines[-1]) + len(sep) + len(part) <= width:
            lines[-1] += sep + part
        else:
            lines.append(part)
    return lines


class Dice420Env(TableEnv):
    """
    ## Description
    420 (Mark Steere, 2025) is a race to make four dice total exactly 20. Each
    player keeps a hand of four dice. Each first turn rolls all four (R1); on
    every later turn a player must reroll 1 to 4 of their dice (R2), keeping only
    what the restrictions allow: reroll 3 only if the kept die is 5 or 6, reroll 2
    only if the kept pair totals 10 or more, reroll 1 only if the kept three total
    15 or more (R3); a hand over 20 must reroll all four (R4). The first hand to
    total exactly 20 wins (R5). With two players Red (seat 0) moves first (R6).
    With 3 to 8 (R7) seats 0..N-1 play clockwise from a Player 1 drawn at random;
    each round is a race to 20 among the players still in, all starting with no
    hand; whoever makes 20 drops out (a winner), the next round starts with the
    next remaining player clockwise from the last round's Player 1, and the last
    player left loses.

    The agent holds one seat; the others are played inside `step()` by the
    opponents given at construction (through `core.engine.play_out`). The agent is
    asked to move only when it has a real choice: first rolls, resets (R4) and
    hands with nothing to keep are played by the engine.

    ## Action Space
    `Discrete(14)`: which dice *values* to keep; the rest are rerolled. Action `a`
    keeps `game420.KEEPS[a]` (written high to low):

    | a | keep | a | keep | a | keep |
    |---|------|---|------|---|------|
    | 0 | nothing (reroll all 4) | 5 | 6-5 | 10 | 5-5-5 |
    | 1 | 5 | 6 | 6-6 | 11 | 6-5-5 |
    | 2 | 6 | 7 | 6-6-3 | 12 | 6-6-5 |
    | 3 | 6-4 | 8 | 6-5-4 | 13 | 6-6-6 |
    | 4 | 5-5 | 9 | 6-6-4 | | |

    These are all the keeps R3 allows. A keep is legal when the hand holds those
    dice (and the hand is not over 20). The legal set is `action_masks()` (as
    MaskablePPO reads it) and `info["action_mask"]`; it is never empty. An
    action is an integer (a Python or numpy integer, or a 0-d integer array);
    anything else raises `core.engine.IllegalAction` (a `ValueError`). By
    default (`illegal_action="reroll_all"`) an illegal integer plays action 0
    (always legal) instead and sets `info["illegal_action"] = True`, so every
    action of the space is accepted, as Gymnasium expects; with
    `illegal_action="raise"` it raises `IllegalAction` with the reason.

    ## Observation Space
    `games.dice420.codec.observe(game, seat)`: four integers per player, the agent's
    hand first, then the other seats' clockwise, each hand ascending. Two players:
    `Box(1, 6, (8,), int64)`, e.g. `[1 5 6 6 2 3 3 4]` (a hand not rolled yet
    shows 1 1 1 1). N players: `Box(0, 6, (4N,), int64)`, 0 0 0 0 for a player
    with no hand (out of the game, or not rolled yet this round). The seat is not
    part of it; it is in `info["seat"]`.

    ## Rewards
    `reward="outcome"` (default): +1 when the agent makes 20 (with more than two
    players it drops out, a winner), -1 when it loses (the opponent makes 20;
    with more players, it is the last one left), 0 on every other step.
    `reward="rank"`: at the end, `1 - 2 * (place - 1) / (N - 1)` for the agent's
    place (1 = first out, N = last left): +1 for the first out, -1 for the last,
    linear in between. With two players both are +1 / -1.

    ## Starting State
    Player 1 rolls, then the others clockwise (R1), then play proceeds until the
    agent has a choice. If the agent's fate is decided before its first choice
    (a first roll makes 20, ...), `reset()` returns that position with
    `info["decided"] = True` and a mask allowing only action 0, and the next
    `step()` (any action in the space) ends the episode with the reward, so every
    game counts.

    ## Episode End
    Terminates when the agent's fate is known: it made 20, or it lost (with more
    than two players the others may play on without it). No truncation (games
    end with probability 1). Stepping after the end raises `RuntimeError`: call
    `reset()`.

    ## Info
    `action_mask`, `hands` (every seat's hand, high to low, None if not rolled),
    `decided` (the agent's fate is known). Two players: `seat` ("red"/"blue") and
    `winner` ("red"/"blue" or None). More: `seat` (int), `remaining` (seats still
    in), `finish_order` (seats out, first first) and `place` once known.

    ## Arguments
    - `opponent`: a ready agent (`act(obs, action_mask) -> int`) for every other
      seat, or a list of `n_players - 1` of them, one per other seat clockwise
      from the agent (`None` for a seat: the default); default `None`: a
      uniformly random legal policy drawn from the env's `np_random`.
      Names are not accepted here: pass `agents.make_agent("420", "greedy")`,
      or build the env with `agents.make_env("Dice420-v0", opponent="greedy")`.
      At every `reset()` an opponent with `reseed(seed)` is reseeded with a seed
      drawn from the env's `np_random`, so the same seed and actions give the
      same game.
    - `n_players`: 2 to 8; default 2.
    - `agent_seat`: a seat `0..n_players-1` or `"random"` (drawn each episode);
      with two players also `"red"` (0) or `"blue"` (1). Default `"random"`.
    - `reward`: `"outcome"` (default) or `"rank"`.
    - `illegal_action`: `"reroll_all"` (default) or `"raise"`.
    - `render_mode`: `"ansi"` or `"human"`; either narrates the turns since the
      last render (`games.dice420.narrate.Narrator420`) and the hands.

    `reset(options=...)` accepts `"dice"` (a `DiceSource`, e.g. `ScriptedDice`,
    which also supplies the draw of Player 1), `"agent_seat"` and `"first_player"`.

    ## Version History
    - v0: initial version.
    """

    spec_of_game = SPEC
    fallback = ("reroll_all", g.REROLL_ALL)

    def __init__(
        self,
        opponent: Any = None,
        n_players: int = 2,
        agent_seat: int | str = "random",
        reward: str = "outcome",
        illegal_action: str = "reroll_all",
        render_mode: Optional[str] = None,
    ):
        if reward not in REWARDS:
            raise ValueError(f"reward must be 'outcome' or 'rank', got {reward!r}")
        super().__init__(opponent, n_players, agent_seat, illegal_action, render_mode)
        self.reward_mode = reward

    def _place(self) -> Optional[int]:
        game = self.game
        if self.seat in game.finish_order:
            return game.finish_order.index(self.seat) + 1
        return self.n_players if game.loser == self.seat else None

    def _reward(self) -> float:
        if self.reward_mode == "outcome":
            return float(self.game.outcome(self.seat))
        return 1.0 - 2.0 * (self._place() - 1) / (self.n_players - 1)

    def _game_info(self) -> dict:
        game = self.game
        info = {"hands": tuple(game.hands)}
        if self.n_players == 2:
            info["seat"] = g.SEAT_NAMES[self.seat].lower()
            info["winner"] = None if game.winner is None else g.SEAT_NAMES[game.winner].lower()
        else:
            info["remaining"] = list(game.remaining)
            info["finish_order"] = list(game.finish_order)
            place = self._place()
            if place is not None:
                info["place"] = place
        return info

    def _status(self) -> list[str]:
        game, narrator = self.game, self._narrator
        parts = []
        for seat in range(self.n_players):
            if seat in game.finish_order:
                parts.append(f"{narrator.who(seat)} out, place {game.finish_order.index(seat) + 1}")
            else:
                parts.append(f"{narrator.who(seat)} {hand_total(game.hands[seat])}")
        return wrap(parts)
