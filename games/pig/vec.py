"""Batched two-player Pig: many games stepped at once with numpy, as an SB3 VecEnv.

Same game, observation, masks and rewards as the engine (``games.pig.game``)
seen through ``games.pig.codec``, but the state of every game is a few integer
arrays and a step is array operations on the games that need them.

**Rules come from the engine.**  P1: a roll of 1 loses the turn total and passes
the turn, another face adds to it; a hold banks it and passes the turn.  P2: the
moment the mover's score plus turn total reaches the goal it is banked and the
mover wins.  P3: seat 0 moves first.  The decision: a turn total of 0 is always
rolled, by the env, for the agent as for the opponent.  Dice are drawn one per
roll, so a scripted die sequence plays the same game here as in ``PigGame``
with ``ScriptedDice`` (``scripted_dice``).

**State.**  ``score[game, seat]``, ``turn`` (the mover's turn total), ``cur``
(the seat to move), ``seat`` (the agent's).  A new game draws the agent's seat
(``agent_seat="random"``) and ``_advance`` plays, pass after pass, the forced
first rolls and one opponent move per game that needs one, until every game is
at the agent's next choice (turn total above 0) or over.  Loops run over
passes, never over games.

**Opponents.**  A policy table ``P[i, j, k]`` of the probability of rolling
(``agents``-independent: any agent becomes one through
``games.pig.solver.policy_table``), indexed by the mover's score, the other's
score and the turn total.  Tables of 0s and 1s are played as lookups, others by
drawing from the env's generator.  A list of tables is a pool: each new game
draws one (``opp_index``), in proportion to ``weights``.

**Rewards and episodes.**  +1 when the agent wins, -1 when the opponent does.
A game decided before the agent's first choice (small goals) shows the
finished position, a mask allowing only ``ROLL``, and the next step returns its
reward and ``done`` whatever in-range action is given.  Finished games report
``infos[i]["terminal_observation"]`` (the final scores, turn total 0) and start
again at once.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from gymnasium import spaces

from envs.batched import BatchedVecEnv
from games.pig import codec
from games.pig import game as g
from games.pig import solver

DiceFn = Callable[[np.ndarray], np.ndarray]
"""dice(rows) -> one die value 1..faces per row."""

SEATS = {"first": 0, "second": 1}


def random_dice(rng: np.random.Generator, faces: int) -> DiceFn:
    return lambda rows: rng.integers(1, faces + 1, size=len(rows))


def scripted_dice(scripts: Sequence[Sequence[int]]) -> DiceFn:
    """Per-game dice scripts: game i takes its dice from ``scripts[i]`` in order, across
    the games it plays one after another."""
    streams = [list(s)[::-1] for s in scripts]

    def roll(rows):
        out = np.empty(len(rows), dtype=np.int64)
        for r, row in enumerate(rows):
            if not streams[row]:
                raise RuntimeError(f"dice script of game {row} exhausted")
            out[r] = streams[row].pop()
        return out

    return roll


class VecPigEnv(BatchedVecEnv):
    """``num_envs`` two-player games of Pig, the agent in one seat and an opponent
    policy table in the other, for SB3.

    Arguments: ``num_envs``; ``opponent``: a policy table of shape (goal, goal, goal)
    or a list of them (a pool, with ``weights``); ``agent_seat``: 0, 1, ``"first"``,
    ``"second"`` or ``"random"`` (drawn per game); ``seed``; ``dice``: a ``DiceFn``
    (default: the seeded generator; ``scripted_dice`` for tests); ``goal`` and
    ``faces`` (P4).  Illegal actions raise ``core.engine.IllegalAction``.
    """

    def __init__(self, num_envs: int, opponent: Any, agent_seat: str | int = "random", seed: int | None = None,
                 dice: DiceFn | None = None, goal: int = g.DEFAULT_GOAL, faces: int = g.DEFAULT_FACES,
                 weights: Sequence[float] | None = None):
        _, self.goal, self.faces = g.check_options(2, goal, faces)
        if isinstance(agent_seat, str):
            if agent_seat != "random" and agent_seat not in SEATS:
                raise ValueError(f"agent_seat must be 0, 1, 'first', 'second' or 'random', got {agent_seat!r}")
        elif isinstance(agent_seat, bool) or not isinstance(agent_seat, (int, np.integer)) or agent_seat not in (0, 1):
            raise ValueError(f"agent_seat must be 0, 1, 'first', 'second' or 'random', got {agent_seat!r}")
        low, high, shape = codec.space_bounds(2, self.goal, self.faces)
        super().__init__(num_envs, spaces.Box(low, high, shape=shape, dtype=np.int64),
                         spaces.Discrete(g.N_ACTIONS), seed, dice)
        self.agent_seat = agent_seat
        n = num_envs
        self.opp_index = np.zeros((n, 2), dtype=np.int64)
        self.set_opponent(opponent, weights)
        self.score = np.zeros((n, 2), dtype=np.int64)
        self.turn = np.zeros(n, dtype=np.int64)
        self.cur = np.zeros(n, dtype=np.int64)
        self.seat = np.zeros(n, dtype=np.int64)
        self.decided = np.zeros(n, dtype=bool)  # the agent's game ended before its next choice
        self.pending = np.zeros(n)  # its reward

    def set_opponent(self, opponent: Any, weights: Sequence[float] | None = None) -> None:
        """Replace the opponent: a policy table or a non-empty list of them (a pool).
        Checked first (``ValueError`` naming the pool entry); nothing changes if refused."""
        is_pool = isinstance(opponent, (list, tuple))
        pool = list(opponent) if is_pool else [opponent]
        if not pool:
            raise ValueError("the opponent pool is empty: give at least one policy table")
        prepared = []
        for i, table in enumerate(pool):
            try:
                table = np.asarray(table, dtype=np.float64)
                solver.check_policy(table, self.goal)
            except ValueError as e:
                raise ValueError(f"pool entry {i}: {e}" if is_pool else str(e)) from None
            rows = table[solver.decision_mask(self.goal)]
            deterministic = bool(np.all((rows == 0) | (rows == 1)))
            prepared.append((table > 0.5) if deterministic else table)
        self._set_pool(prepared, weights)

    @property
    def dice(self) -> DiceFn:
        return self._dice_override or random_dice(self.rng, self.faces)

    # --- game mechanics on a subset of games ---------------------------------
    def _roll(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The seat to move in each of ``rows`` rolls (P1, P2).  Returns per row whether the
        game is over and the agent's reward if so."""
        values = np.asarray(self.dice(rows), dtype=np.int64)
        if self._dice_override is not None and ((values < 1) | (values > self.faces)).any():
            raise ValueError(f"the dice function gave values outside 1..{self.faces}: {values.tolist()}")
        seats = self.cur[rows]
        bust = values == g.BUST
        self.turn[rows] = np.where(bust, 0, self.turn[rows] + values)
        self.cur[rows] = np.where(bust, seats ^ 1, seats)
        total = self.score[rows, seats] + self.turn[rows]
        won = ~bust & (total >= self.goal)
        w = rows[won]
        self.score[w, seats[won]] = total[won]
        self.turn[w] = 0
        return won, np.where(won, np.where(seats == self.seat[rows], 1.0, -1.0), 0.0)

    def _hold(self, rows: np.ndarray) -> None:
        seats = self.cur[rows]
        self.score[rows, seats] += self.turn[rows]
        self.turn[rows] = 0
        self.cur[rows] = seats ^ 1

    def _opponent_rolls(self, rows: np.ndarray) -> np.ndarray:
        """Whether the opponent to move in each of ``rows`` rolls, from its table."""
        out = np.empty(len(rows), dtype=bool)
        drawn = self.opp_index[rows, self.cur[rows]] if len(self._pool) > 1 else np.zeros(len(rows), dtype=np.int64)
        for k in np.unique(drawn):
            mine = np.flatnonzero(drawn == k)
            r = rows[mine]
            seats = self.cur[r]
            table = self._pool[k]
            p = table[self.score[r, seats], self.score[r, seats ^ 1], self.turn[r]]
            out[mine] = p if table.dtype == bool else self.rng.random(len(r)) < p
        return out

    def _advance(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Play forced first rolls and the opponent's moves until the agent has a choice or
        its game is over.  Returns each row's (done, reward)."""
        done = np.zeros(len(rows), dtype=bool)
        reward = np.zeros(len(rows))
        where = np.arange(len(rows))
        while True:
            waiting = (self.cur[rows] == self.seat[rows]) & (self.turn[rows] > 0)
            rows, where = rows[~waiting], where[~waiting]
            if not len(rows):
                return done, reward
            roll = (self.turn[rows] == 0) | self._opponent_rolls(rows)
            self._hold(rows[~roll])
            won, r = self._roll(rows[roll])
            at = where[roll][won]
            done[at], reward[at] = True, r[won]
            keep = np.ones(len(rows), dtype=bool)
            keep[np.flatnonzero(roll)[won]] = False
            rows, where = rows[keep], where[keep]

    def _new_games(self, rows: np.ndarray) -> None:
        """P3: seat 0 moves first; the agent's seat as asked; then up to its first choice."""
        n = len(rows)
        if self.agent_seat == "random":
            self.seat[rows] = self.rng.integers(2, size=n)
        else:
            self.seat[rows] = SEATS.get(self.agent_seat, self.agent_seat)
        if len(self._pool) > 1:
            self.opp_index[rows] = self._draw(self._pool_cdf, 2 * n).reshape(n, 2)
        self.score[rows] = 0
        self.turn[rows] = 0
        self.cur[rows] = 0
        self.decided[rows], self.pending[rows] = self._advance(rows)

    # --- VecEnv API ----------------------------------------------------------
    def _raise_illegal(self, row: int, action, why: str) -> None:
        action = action.item() if isinstance(action, np.generic) else action
        if self.decided[row]:
            state = "the game is decided (this step returns its reward and ignores the action)"
        else:
            state = f"turn total {int(self.turn[row])}"
        raise g.IllegalAction(f"game {row}: illegal action {action!r}: {why}; {state}")

    def step_wait(self):
        actions = self._pending_actions()
        rewards = np.where(self.decided, self.pending, 0.0)
        dones = self.decided.copy()
        live = np.flatnonzero(~dones)
        if len(live):
            a = actions[live]
            holds = live[a == g.HOLD]
            self._hold(holds)
            rolls = live[a == g.ROLL]
            won, r = self._roll(rolls)
            dones[rolls[won]], rewards[rolls[won]] = True, r[won]
            going = np.concatenate([holds, rolls[~won]])
            if len(going):
                dones[going], rewards[going] = self._advance(going)
        return self._finish_step(rewards.astype(np.float32), dones)

    def _obs(self, rows: np.ndarray | None = None) -> np.ndarray:
        """``codec.observe(game, agent's seat)``: own score, turn total (the agent's, when it
        is to move), the opponent's score."""
        rows = np.arange(self.num_envs) if rows is None else rows
        seat = self.seat[rows]
        turn = np.where(self.cur[rows] == seat, self.turn[rows], 0)
        return np.stack([self.score[rows, seat], turn, self.score[rows, seat ^ 1]], axis=1)

    def action_masks(self) -> np.ndarray:
        masks = np.ones((self.num_envs, g.N_ACTIONS), dtype=bool)
        masks[self.decided, g.HOLD] = False
        return masks
