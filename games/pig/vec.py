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
(``agent_seat="random"``) and ``_play`` plays, pass after pass, the forced
first rolls and one opponent move per game that needs one, until every game is
at the agent's next choice (turn total above 0) or decided.  A step plays the
agent's moves and then one such loop, in which a game that ends starts again at
once (SB3's auto-reset) in the same passes.  Loops run over passes, never over
games.  The seeded generator draws dice and uniforms a block at a time
(``_drawn``), used in pass order.

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
from games.pig import SPEC, codec
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

    def __init__(
        self,
        num_envs: int,
        opponent: Any,
        agent_seat: str | int = "random",
        seed: int | None = None,
        dice: DiceFn | None = None,
        goal: int = g.DEFAULT_GOAL,
        faces: int = g.DEFAULT_FACES,
        weights: Sequence[float] | None = None,
    ):
        checked = SPEC.check_options({"goal": goal, "faces": faces})  # the game's one check of its options
        self.goal, self.faces = checked["goal"], checked["faces"]
        if isinstance(agent_seat, str):
            if agent_seat != "random" and agent_seat not in SEATS:
                raise ValueError(f"agent_seat must be 0, 1, 'first', 'second' or 'random', got {agent_seat!r}")
        elif isinstance(agent_seat, bool) or not isinstance(agent_seat, (int, np.integer)) or agent_seat not in (0, 1):
            raise ValueError(f"agent_seat must be 0, 1, 'first', 'second' or 'random', got {agent_seat!r}")
        low, high, shape = codec.space_bounds(2, self.goal, self.faces)
        super().__init__(
            num_envs, spaces.Box(low, high, shape=shape, dtype=np.int64), spaces.Discrete(g.N_ACTIONS), seed, dice
        )
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
        self._blocks: dict[str, tuple] = {}  # kind -> (numbers drawn, next one, their generator)

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
            mine = (table > 0.5) if deterministic else table.copy()
            mine[:, :, 0] = 1  # a turn total of 0 is rolled, whoever moves: one lookup says both
            prepared.append(mine)
        self._set_pool(prepared, weights)

    @property
    def dice(self) -> DiceFn:
        return self._dice_override or random_dice(self.rng, self.faces)

    BLOCK = 1 << 14  # dice and uniforms drawn from the generator this many at a time

    def _drawn(self, kind: str, n: int) -> np.ndarray:
        """The next ``n`` dice (``kind`` "dice") or uniforms in [0, 1) ("uniform") from the
        env's generator, drawn a block at a time (one call per pass costs more than the
        numbers); a new generator (``reset`` re-seeds) starts new blocks."""
        block, at, rng = self._blocks.get(kind, (None, 0, None))
        if rng is not self.rng or at + n > len(block):
            size = max(self.BLOCK, n)
            block = self.rng.integers(1, self.faces + 1, size=size) if kind == "dice" else self.rng.random(size)
            at, rng = 0, self.rng
        self._blocks[kind] = (block, at + n, rng)
        return block[at : at + n]

    # --- game mechanics on a subset of games ---------------------------------
    # The games in play are one int64 array ``S`` of shape (7, games), a column per game:
    # the mover's score, the other's score, the turn total, the seat to move, the agent's
    # seat, the game's row, and whether the game started in this call (``FRESH``).  A pass
    # is a few array operations on all of its columns; a column leaves (one copy of ``S``)
    # when its game is at the agent's choice or decided, and the rows are written back once.
    A, B, T, CUR, SEAT, ROW, FRESH = range(7)

    def _columns(self, rows: np.ndarray) -> np.ndarray:
        S = np.empty((7, len(rows)), dtype=np.int64)
        cur = self.cur[rows]
        S[self.A] = self.score[rows, cur]
        S[self.B] = self.score[rows, cur ^ 1]
        S[self.T] = self.turn[rows]
        S[self.CUR] = cur
        S[self.SEAT] = self.seat[rows]
        S[self.ROW] = rows
        S[self.FRESH] = 0
        return S

    def _start(self, S: np.ndarray, cols: np.ndarray | slice = slice(None)) -> None:
        """New games in the columns ``cols`` of ``S``, in place (P3: seat 0 moves first; the
        agent's seat as asked; a pool's tables drawn)."""
        n = len(S[self.ROW][cols])
        for field in (self.A, self.B, self.T, self.CUR):
            S[field][cols] = 0
        if self.agent_seat == "random":
            S[self.SEAT][cols] = self._drawn("uniform", n) < 0.5
        else:
            S[self.SEAT][cols] = SEATS.get(self.agent_seat, self.agent_seat)
        S[self.FRESH][cols] = 1
        if len(self._pool) > 1:
            self.opp_index[S[self.ROW][cols]] = self._draw(self._pool_cdf, 2 * n).reshape(n, 2)

    def _write_back(self, parts: list[np.ndarray]) -> None:
        S = parts[0] if len(parts) == 1 else np.concatenate(parts, axis=1)
        rows, cur = S[self.ROW], S[self.CUR]
        self.score[rows, cur] = S[self.A]
        self.score[rows, cur ^ 1] = S[self.B]
        self.turn[rows] = S[self.T]
        self.cur[rows] = cur
        self.seat[rows] = S[self.SEAT]

    def _move(self, S: np.ndarray, roll: np.ndarray) -> np.ndarray:
        """Every column of ``S`` moves, in place: a roll where ``roll`` (P1, P2; one die per
        roll, drawn in column order), else a hold.  Returns whether each column's game is won
        (by its mover, who keeps the move; its turn total banked)."""
        a, b, t, cur = S[self.A], S[self.B], S[self.T], S[self.CUR]
        n_rolls = np.count_nonzero(roll)
        if self._dice_override is None:
            values = self._drawn("dice", n_rolls)
        else:
            values = np.asarray(self._dice_override(S[self.ROW][roll]), dtype=np.int64)
            if ((values < 1) | (values > self.faces)).any():
                raise ValueError(f"the dice function gave values outside 1..{self.faces}: {values.tolist()}")
        if n_rolls == len(roll):
            v = values
        else:
            v = np.zeros(len(roll), dtype=np.int64)  # a hold: 0
            v[roll] = values
        stays = v > g.BUST  # rolled and not a 1: the mover moves again
        passes = ~stays  # a hold or a 1: the other seat's turn starts
        t += v
        t *= v != g.BUST  # a 1 loses the turn total (multiplications: no masked writes)
        total = a + t  # what the mover banks (a hold, a 1) or reaches (a roll)
        # Below the goal before moving (else the game was over), a hold or a 1 stays below
        # it: only a roll that stays can reach it (P2).
        won = total >= self.goal
        np.copyto(a, total, where=won)
        new_a = np.where(passes, b, a)
        np.copyto(b, total, where=passes)
        np.copyto(a, new_a)
        stays &= ~won
        t *= stays  # 0 for the next mover, or banked by the winner
        cur ^= passes
        return won

    def _rolls(self, S: np.ndarray) -> np.ndarray:
        """Whether the mover of each column rolls: by the opponent's table, in which a turn
        total of 0 is always rolled (``set_opponent``), so the agent's forced first roll too
        (the loop asks the agent nothing else).  One uniform per column, whoever moves."""
        a, b, t = S[self.A], S[self.B], S[self.T]
        if len(self._pool) == 1:
            table = self._pool[0]
            p = table[a, b, t]
            return p if table.dtype == bool else self._drawn("uniform", len(p)) < p
        out = np.empty(S.shape[1], dtype=bool)
        drawn = self.opp_index[S[self.ROW], S[self.CUR]]
        for k in np.unique(drawn):
            mine = np.flatnonzero(drawn == k)
            table = self._pool[k]
            p = table[a[mine], b[mine], t[mine]]
            out[mine] = p if table.dtype == bool else self._drawn("uniform", len(mine)) < p
        return out

    def _ended(self, W: np.ndarray, done: np.ndarray, reward: np.ndarray, terminal: np.ndarray) -> None:
        """Games just won in the columns of ``W``: a game that started in this call is
        decided before the agent's first choice (its reward pending, for the next step);
        another is done now, with its reward and terminal observation (the final scores,
        the agent's first)."""
        fresh = W[self.FRESH] == 1
        if np.count_nonzero(fresh):
            F = W.compress(fresh, axis=1)
            self.decided[F[self.ROW]] = True
            self.pending[F[self.ROW]] = np.where(F[self.CUR] == F[self.SEAT], 1.0, -1.0)
            W = W.compress(~fresh, axis=1)
        rows, agent_won = W[self.ROW], W[self.CUR] == W[self.SEAT]
        done[rows] = True
        reward[rows] = np.where(agent_won, 1.0, -1.0)
        terminal[rows, 0] = np.where(agent_won, W[self.A], W[self.B])
        terminal[rows, 2] = np.where(agent_won, W[self.B], W[self.A])

    def _play(self, S: np.ndarray, done: np.ndarray, reward: np.ndarray, terminal: np.ndarray) -> None:
        """Play forced first rolls and the opponent's moves, pass after pass, until every
        game of ``S`` is at the agent's choice or decided; a game that ends here is done
        (``_ended``) and the next one starts in its column at once, in the same passes.
        ``done``, ``reward`` and ``terminal`` are per row; the rows are written back."""
        parts, ended = [], []  # columns that left; games that ended (their last position)
        leave = (S[self.CUR] == S[self.SEAT]) & (S[self.T] > 0)  # at the agent's choice
        while True:
            if np.count_nonzero(leave):  # (cheaper than .any() on small arrays)
                parts.append(S.compress(leave, axis=1))
                S = S.compress(~leave, axis=1)  # (faster than S[:, ~leave])
                if not S.shape[1]:
                    break
            won = self._move(S, self._rolls(S))
            leave = (S[self.CUR] == S[self.SEAT]) & (S[self.T] > 0)
            if np.count_nonzero(won):
                again = np.flatnonzero(won)
                W = S.take(again, axis=1)
                ended.append(W)
                fresh = W[self.FRESH] == 1
                if np.count_nonzero(fresh):  # decided: shows its final position until the next step
                    leave[again[fresh]] = True
                    again = again[~fresh]
                if len(again):
                    self._start(S, again)
        if ended:
            self._ended(ended[0] if len(ended) == 1 else np.concatenate(ended, axis=1), done, reward, terminal)
        if parts:
            self._write_back(parts)

    def _new_games(self, rows: np.ndarray) -> None:
        """New games in ``rows``, played to the agent's first choice (or decided before it)."""
        S = self._columns(rows)
        self._start(S)
        self.decided[rows], self.pending[rows] = False, 0.0
        n = self.num_envs
        self._play(S, np.zeros(n, dtype=bool), np.zeros(n), np.zeros((n, 3), dtype=np.int64))

    # --- VecEnv API ----------------------------------------------------------
    def _raise_illegal(self, row: int, action, why: str) -> None:
        action = action.item() if isinstance(action, np.generic) else action
        if self.decided[row]:
            state = "the game is decided (this step returns its reward and ignores the action)"
        else:
            state = f"turn total {int(self.turn[row])}"
        raise g.IllegalAction(f"game {row}: illegal action {action!r}: {why}; {state}")

    def step_wait(self):
        """The agent's moves, then the games on to its next choices in one loop of passes: a
        game that ends (or was decided) reports its terminal observation and the next one
        starts at once (SB3's auto-reset), in the same passes."""
        actions = self._pending_actions()
        n = self.num_envs
        done, reward = self.decided.copy(), np.where(self.decided, self.pending, 0.0)
        terminal = np.zeros((n, 3), dtype=np.int64)
        decided = np.flatnonzero(done)
        live = np.flatnonzero(~done)
        parts = []
        if len(live):
            S = self._columns(live)
            won = self._move(S, actions[live] == g.ROLL)  # the agent's moves
            if np.count_nonzero(won):
                self._ended(S.compress(won, axis=1), done, reward, terminal)
                self._start(S, np.flatnonzero(won))
            parts.append(S)
        if len(decided):
            terminal[decided] = self._obs(decided)
            self.decided[decided], self.pending[decided] = False, 0.0
            S = self._columns(decided)
            self._start(S)
            parts.append(S)
        self._play(parts[0] if len(parts) == 1 else np.concatenate(parts, axis=1), done, reward, terminal)
        infos: list[dict[str, Any]] = [{} for _ in range(n)]
        for row in np.flatnonzero(done):
            infos[row]["terminal_observation"] = terminal[row]
        return self._obs(), reward.astype(np.float32), done, infos

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
