"""Batched 420: many two-player games stepped at once with numpy, as an SB3 VecEnv.

Same game, same observation, same masks and same rewards as ``Dice420Env``
(see its docstring), but the state of every game is a few integer arrays and a
step is a handful of array operations, so MaskablePPO spends its time learning
rather than in Python loops.  The rules come from the engine: the legal keeps
(``codec420.LEGAL_MASKS``), the win test and the canonical hands are the
engine's, and dice are real dice (four per roll, the first ``4 - len(keep)``
used), so a scripted sequence plays the same game here as in ``Game420``.

The opponent is a policy table (``P[h, o, k]``, or keep indices ``[h, o]``):
any agent becomes one through ``agents.solver420.policy_table``.
"""

from __future__ import annotations

from typing import Callable, Optional, Sequence

import numpy as np
from gymnasium import spaces

from envs import codec420
from envs import game420 as g
from envs.batched import BatchedVecEnv

N = g.N_DICE
WIN = np.array([g.is_win(h) for h in g.HANDS])
HAND_DICE = codec420.HAND_DICE  # (126, 4), ascending as observed
KEEP_LEN = np.array([len(k) for k in g.KEEPS])
KEEP_DICE = np.array([(*k, *(0,) * (N - len(k))) for k in g.KEEPS], dtype=np.int64)  # (14, 4)
CODE_TO_HAND, POWERS = codec420.CODE_TO_HAND, codec420.POWERS  # ascending dice -> hand index
FORCED = codec420.LEGAL_MASKS.sum(axis=1) == 1  # hands with one legal move (R4 reset)
RED, BLUE = g.RED, g.BLUE

DiceFn = Callable[[np.ndarray, np.ndarray], np.ndarray]
"""dice(rows, n_dice) -> (len(rows), 4) die values; row i's first n_dice[i] are used."""


def random_dice(rng: np.random.Generator) -> DiceFn:
    return lambda rows, n: rng.integers(1, 7, size=(len(rows), N))


def scripted_dice(scripts: Sequence[Sequence[int]]) -> DiceFn:
    """Per-game dice scripts (game i takes its dice from ``scripts[i]`` in order)."""
    streams = [list(s)[::-1] for s in scripts]

    def roll(rows, n):
        out = np.ones((len(rows), N), dtype=np.int64)
        for r, (row, count) in enumerate(zip(rows, n)):
            if len(streams[row]) < count:
                raise RuntimeError(f"dice script of game {row} exhausted")
            out[r, :count] = [streams[row].pop() for _ in range(count)]
        return out

    return roll


# Where each of the four dice of the new hand comes from, per keep: kept value, or roll column.
KEEP_MASK = np.arange(N)[None, :] < KEEP_LEN[:, None]  # (14, 4): die j is a kept die
ROLL_COLUMN = np.clip(np.arange(N)[None, :] - KEEP_LEN[:, None], 0, N - 1)  # (14, 4)


def play_keeps(hands: np.ndarray, keeps: np.ndarray, rolled: np.ndarray) -> np.ndarray:
    """New hand indices after keeping ``KEEPS[keeps]`` and taking the rest from ``rolled``."""
    from_roll = rolled[np.arange(len(keeps))[:, None], ROLL_COLUMN[keeps]]
    dice = np.where(KEEP_MASK[keeps], KEEP_DICE[keeps], from_roll)
    dice.sort(axis=1)
    return CODE_TO_HAND[(dice - 1) @ POWERS]


class Vec420Env(BatchedVecEnv):
    """``num_envs`` games of 420 against one opponent policy, for SB3.

    Arguments: ``num_envs``; ``opponent``: a policy table, ``(126, 126)`` keep
    indices or ``(126, 126, 14)`` probabilities; ``agent_seat``: ``"red"``,
    ``"blue"`` or ``"random"``; ``seed``; ``dice``: a ``DiceFn`` (default: the
    seeded generator; ``scripted_dice`` for tests).  Illegal actions raise.
    """

    def __init__(
        self,
        num_envs: int,
        opponent: np.ndarray,
        agent_seat: str = "random",
        seed: Optional[int] = None,
        dice: Optional[DiceFn] = None,
    ):
        if agent_seat not in ("red", "blue", "random"):
            raise ValueError(f"agent_seat must be 'red', 'blue' or 'random', got {agent_seat!r}")
        super().__init__(
            num_envs,
            spaces.Box(1, 6, shape=(codec420.OBS_SIZE,), dtype=np.int64),
            spaces.Discrete(g.N_ACTIONS),
            seed,
            dice,
        )
        self.set_opponent(opponent)
        self.agent_seat = agent_seat
        self.own = np.zeros(num_envs, dtype=np.int64)
        self.opp = np.zeros(num_envs, dtype=np.int64)
        self.seat = np.zeros(num_envs, dtype=np.int64)
        self.pending = np.zeros(num_envs)  # reward of a game decided before the agent's first choice
        self._actions: Optional[np.ndarray] = None

    def set_opponent(self, opponent: np.ndarray) -> None:
        """Replace the opponent's policy table (e.g. for self-play)."""
        opponent = np.asarray(opponent)
        if opponent.shape == (len(g.HANDS), len(g.HANDS)):
            self._opp_det, self._opp_cdf = opponent.astype(np.int64), None
        elif opponent.shape == (len(g.HANDS), len(g.HANDS), g.N_ACTIONS):
            self._opp_det, self._opp_cdf = None, np.cumsum(opponent, axis=2)
        else:
            raise ValueError(f"opponent must be a (126, 126) or (126, 126, 14) policy table, got shape {opponent.shape}")

    @property
    def dice(self) -> DiceFn:
        return self._dice_override or random_dice(self.rng)

    # --- game mechanics on a subset of games ---------------------------------
    def _roll(self, rows: np.ndarray, hands: np.ndarray, keeps: np.ndarray) -> np.ndarray:
        return play_keeps(hands, keeps, self.dice(rows, N - KEEP_LEN[keeps]))

    def _opponent_keeps(self, rows: np.ndarray) -> np.ndarray:
        h, o = self.opp[rows], self.own[rows]
        if self._opp_det is not None:
            return self._opp_det[h, o]
        u = self.rng.random(len(rows))
        return (self._opp_cdf[h, o] < u[:, None]).sum(axis=1).clip(max=g.N_ACTIONS - 1)

    def _advance(self, rows: np.ndarray, agent_to_move: np.ndarray) -> np.ndarray:
        """Play the opponent's and the agent's forced turns until the agent has a
        choice.  Returns each row's result: +1/-1 if the game ended, else 0."""
        result = np.zeros(len(rows))
        active = np.ones(len(rows), dtype=bool)
        agent_to_move = agent_to_move.copy()
        while active.any():
            # The agent's forced resets (R4).
            forced = active & agent_to_move & FORCED[self.own[rows]]
            r = rows[forced]
            if len(r):
                self.own[r] = self._roll(r, self.own[r], np.full(len(r), g.REROLL_ALL))
                won = WIN[self.own[r]]
                result[np.flatnonzero(forced)[won]] = 1.0
                active[np.flatnonzero(forced)[won]] = False
                agent_to_move[forced] = False
            active &= ~agent_to_move  # the agent has a choice
            idx = np.flatnonzero(active)
            if not len(idx):
                break
            r = rows[idx]
            self.opp[r] = self._roll(r, self.opp[r], self._opponent_keeps(r))
            won = WIN[self.opp[r]]
            result[idx[won]] = -1.0
            active[idx[won]] = False
            agent_to_move[idx[~won]] = True
        return result

    def _new_games(self, rows: np.ndarray) -> None:
        """R1/R6: Red rolls, Blue rolls, then play up to the agent's first choice."""
        n = len(rows)
        if self.agent_seat == "random":
            self.seat[rows] = self.rng.integers(2, size=n)
        else:
            self.seat[rows] = RED if self.agent_seat == "red" else BLUE
        self.pending[rows] = 0.0
        red_hand = self._roll(rows, np.zeros(n, dtype=np.int64), np.full(n, g.REROLL_ALL))
        blue_hand = np.zeros(n, dtype=np.int64)
        later = ~WIN[red_hand]
        if later.any():
            blue_hand[later] = self._roll(rows[later], blue_hand[later], np.full(later.sum(), g.REROLL_ALL))
        agent_red = self.seat[rows] == RED
        self.own[rows] = np.where(agent_red, red_hand, blue_hand)
        self.opp[rows] = np.where(agent_red, blue_hand, red_hand)
        red_won, blue_won = WIN[red_hand], later & WIN[blue_hand]
        self.pending[rows] = np.where(red_won, np.where(agent_red, 1.0, -1.0), 0.0)
        self.pending[rows] += np.where(blue_won, np.where(agent_red, -1.0, 1.0), 0.0)
        going = ~(red_won | blue_won)
        if going.any():
            self.pending[rows[going]] = self._advance(rows[going], agent_red[going])

    # --- VecEnv API ----------------------------------------------------------
    def step_wait(self):
        actions = self._actions
        decided = self.pending != 0
        rewards = self.pending.copy()
        live = np.flatnonzero(~decided)
        if len(live):
            a = actions[live]
            legal = codec420.LEGAL_MASKS[self.own[live], a]
            if not legal.all():
                bad = live[~legal][0]
                raise g.IllegalAction(
                    f"illegal action {actions[bad]} in game {bad}: hand {g.format_hand(g.HANDS[self.own[bad]])}, "
                    f"legal {np.flatnonzero(codec420.LEGAL_MASKS[self.own[bad]]).tolist()}"
                )
            self.own[live] = self._roll(live, self.own[live], a)
            won = WIN[self.own[live]]
            rewards[live[won]] = 1.0
            going = live[~won]
            if len(going):
                rewards[going] = self._advance(going, np.zeros(len(going), dtype=bool))
        return self._finish_step(rewards.astype(np.float32), rewards != 0)

    def _obs(self, rows: Optional[np.ndarray] = None) -> np.ndarray:
        rows = np.arange(self.num_envs) if rows is None else rows
        return np.concatenate([HAND_DICE[self.own[rows]], HAND_DICE[self.opp[rows]]], axis=1)

    def action_masks(self) -> np.ndarray:
        masks = codec420.LEGAL_MASKS[self.own].copy()
        decided = self.pending != 0
        masks[decided] = False
        masks[decided, g.REROLL_ALL] = True
        return masks
