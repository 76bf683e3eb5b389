"""Gymnasium environment for 421 (two or three players): one agent against ready opponents,
over the generic ``envs.table_env.TableEnv``."""

from __future__ import annotations

from typing import Any, Optional

from envs.table_env import TableEnv
from games.dice421 import SPEC, narrate
from games.dice421 import game as g

REROLL_ALL = g.action_for_keep(())  # legal at every decision


class Dice421Env(TableEnv):
    """
    ## Description
    421 is a dice game for 2 or 3 players with three shared dice and a pot of
    tokens; the aim is to get rid of tokens. Hands rank from 4-2-1 (worth 10
    tokens) down through 1-1-1 (7), 1-1-x and triples, straights and 2-2-1 (2),
    to every other hand (1) (H1). In the *charge* each round everyone rolls once
    and the lowest hand takes from the pot what the highest is worth (H2), until
    the pot is empty (H3). In the *discharge* each round the leader rolls up to
    three times and may stop after roll 1 or 2; every other player must then make
    exactly as many rolls (rerolling at least one die each time), and the highest
    hand gives the lowest hand its value in tokens (H4). Ties at the bottom are
    settled by RAMPO (H6). A player with no tokens leaves as a winner; whoever
    ends with every token loses (H5). Rules: `games/dice421/rules.md`.

    The agent holds one seat; the other seats are opponent agents played inside
    `step()`. The agent is asked only where the rules give it a choice: the charge,
    first rolls, RAMPO and turns with a single roll are played for it.

    ## Action Space
    `Discrete(29)`, the engine's actions: `0` = STOP (leader only, after roll 1
    or 2); `a` in 1..28 keeps the dice *values* `game421.KEEPS[a - 1]` and rerolls
    the others:

    | a | keep | a | keep | a | keep | a | keep |
    |---|------|---|------|---|------|---|------|
    | 0 | STOP | 8 | 1-1 | 15 | 4-2 | 22 | 5-5 |
    | 1 | nothing (reroll all) | 9 | 2-1 | 16 | 4-3 | 23 | 6-1 |
    | 2..7 | one 1, 2, ..., 6 | 10 | 2-2 | 17 | 4-4 | 24 | 6-2 |
    | | | 11 | 3-1 | 18 | 5-1 | 25 | 6-3 |
    | | | 12 | 3-2 | 19 | 5-2 | 26 | 6-4 |
    | | | 13 | 3-3 | 20 | 5-3 | 27 | 6-5 |
    | | | 14 | 4-1 | 21 | 5-4 | 28 | 6-6 |

    A keep is legal when the hand holds those values. The legal set is
    `action_masks()` (as MaskablePPO reads it) and `info["action_mask"]`; it is
    never empty, and it is exactly the engine's `legal_actions()`. An action is
    an integer (a Python or numpy integer, or a 0-d integer array); anything
    else raises `core.engine.IllegalAction` (a `ValueError`). By default
    (`illegal_action="reroll_all"`) an illegal integer plays action 1 (always
    legal) instead and sets `info["illegal_action"] = True`, so every action of
    the space is accepted, as Gymnasium expects; with `illegal_action="raise"`
    it raises `IllegalAction` with the reason.

    ## Observation Space
    `Box(0, high, (25,), int64)`, laid out in `games.dice421.codec` (decode it with
    `codec421.decode`): own dice high to low (3), rolls used, rolls allowed, is
    leader, the leader's roll count n (0 if the agent leads); then for each other
    seat clockwise from the agent (two slots; the second is zeros with two
    players): played this round, the hand played (3 dice, 0s if not), tokens, still
    in the game, is leader; then own tokens, pot, phase (0 charge, 1 discharge,
    2 over), number of players. Tokens and pot go up to `pot`.

    ## Rewards
    +1 when the agent wins (leaves the game with no tokens), -1 when it loses
    (holds every token), 0 on every other step.

    ## Starting State
    The first player is drawn, the whole charge is played, then play goes on until
    the agent has a choice. If the agent's game is decided before then (it holds
    every token or none after the charge, or it wins or loses in rounds where it
    had no choice), `reset()` returns that position with `info["decided"] = True`
    and a mask allowing only action 0; the next `step()` (any action in the space)
    ends the episode with the reward, so every game counts.

    ## Episode End
    Terminates when the agent leaves the game as a winner or loses it (with three
    players, the other two may still be playing). No truncation: games end with
    probability 1; wrap the env in `TimeLimit` to bound them. Stepping after the
    end raises `RuntimeError`: call `reset()`.

    ## Arguments
    - `opponent`: a ready agent (`act(obs, action_mask) -> int`) for every other
      seat, or a list of `n_players - 1` of them, one per other seat clockwise
      from the agent (`None` for a seat: the default); default `None`: a
      uniformly random legal policy drawn from the env's `np_random`. Opponents
      see `codec421.observe(game, seat)`.
      Names are not accepted here: pass `agents.make_agent("421", "heuristic")`,
      or build the env with `agents.make_env("Dice421-v0", opponent="heuristic")`.
      At every `reset()` an opponent with `reseed(seed)` is reseeded with a seed
      drawn from the env's `np_random`, so the same seed and actions give the
      same game.
    - `n_players`: 2 or 3; default 2.
    - `agent_seat`: a seat `0..n_players-1` or `"random"` (drawn each episode);
      default `"random"`.
    - `pot`: tokens in the pot at the start; default 15.
    - `illegal_action`: `"reroll_all"` (default) or `"raise"`.
    - `render_mode`: `"ansi"` or `"human"`; either narrates the events since the
      last render (`games.dice421.narrate.Narrator421`: rolls, takes, gives, RAMPO,
      leaving) and the tokens.

    `reset(options=...)` accepts `"dice"` (a `DiceSource`, e.g. `ScriptedDice`,
    which also supplies the first-player draw), `"agent_seat"` and `"first_player"`.

    ## Version History
    - v0: initial version.
    """

    spec_of_game = SPEC
    fallback = ("reroll_all", REROLL_ALL)

    def __init__(
        self,
        opponent: Any = None,
        n_players: int = 2,
        agent_seat: int | str = "random",
        pot: int = 15,
        illegal_action: str = "reroll_all",
        render_mode: Optional[str] = None,
    ):
        super().__init__(opponent, n_players, agent_seat, illegal_action, render_mode, pot=pot)
        self.pot = self.options["pot"]

    def _game_info(self) -> dict:
        game = self.game
        return {"tokens": list(game.tokens), "phase": game.phase, "winners": list(game.winners), "loser": game.loser}

    def _status(self) -> list[str]:
        game, narrator = self.game, self._narrator
        lines = [narrator.tokens_line(game.tokens, game.pot, out=game.winners)]
        if not self._decided() and game.current_player == self.seat:
            role = "you lead: STOP or keep" if game.leader == self.seat else f"you must make {game.rolls_allowed} rolls"
            lines.append(
                f"Your dice {narrate.dice_text(game.dice_in_hand)}, roll {game.rolls_used} of "
                f"{game.rolls_allowed} ({role})"
            )
        return lines
