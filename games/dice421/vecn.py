"""Batched 421 for two or three players: many games stepped at once with numpy, as an SB3 VecEnv.

Same game, same observation, same masks and same rewards as
``Dice421Env(n_players=N, opponent=[...], pot=P)`` (see its docstring), with
every other seat played by *batch policies*: callables that answer a batch of
observations at once.  ``Vec421Env`` is the faster two-player env against
policy tables; this one plays any number of players the rules allow, against
any agent that answers in batches (bots, reply tables, network snapshots).

**Rules come from the engine and the codec**, as in ``games.dice421.vec``: hands are
ranks, values ``codec421.HAND_VALUES``, masks ``codec421.MASKS``, dice are real
dice (``ROLL_RANK``, ``KEEP_ROLL_RANK``), and a scripted die sequence plays the
same game here as in ``Game421`` with ``ScriptedDice``: a charge round rolls
every player in order from the first player, a discharge turn rolls its first
three dice then its keeps, a RAMPO (H6) rolls the tied players with the tie
maker first, and on a new tie the later of the newly tied rolls first; the
RAMPO's winner is the best hand of its first roll that is not a tie all round
(it gives, when the highest hand is among the tied).  The round's highest hand
is the first of the highest in play order; its player gives the lowest its
value, capped by what it holds (H4); players with no tokens leave as winners
(H5); whoever holds every token loses.

**State.**  Seats are absolute (``seat`` is the agent's): ``tok[game, seat]``,
``out[game, seat]`` (left as a winner), ``played[game, seat]`` (the hand played
this round, ``NO_HAND`` = -1 if none), ``leader``, ``cur`` (who is rolling, -1:
nobody), ``hand``, ``used``, ``allowed``, ``n_lead`` (the leader's roll count,
0 until its turn ends).  Round order is clockwise from the leader over the
players still in (``next_seat``).  ``decided`` marks games whose outcome for the agent
is known: it left (+1) or it holds every token (-1).  With three players the
others may still be playing then; the game is not played further.

**Stepping.**  A new game draws the agent's seat, the first player, and for
every other seat its policy from the pool (``opp_index``), plays the charge
round by round (every game still in it rolls a round each pass; RAMPOs are
played at once), then ``_advance`` plays, pass after pass, one decision of every
game whose roller is an opponent (their observations are built from their own
seats and each pool member is asked once for all its rows) and the end of
every turn with no roll left, until every game is at the agent's choice or
decided for the agent.  Loops run over passes, never over games.

**Batch policies.**  A pool member is a callable ``policy(obs, masks, rng) ->
actions``: ``obs`` (m, 25) int64 observations (``codec421`` layout, from the
mover's seat), ``masks`` (m, 29) bool, ``rng`` the env's generator (draw from it
to sample, so the same seed plays the same games); it returns m legal actions.
The agents layer makes one of any agent (``agents.batch_policy``).
"""

from __future__ import annotations

from typing import Any, Callable, Optional, Sequence

import numpy as np
from gymnasium import spaces

from games.dice421 import SPEC
from games.dice421 import codec as codec421
from games.dice421 import game as g
from envs.batched import BatchedVecEnv
from games.dice421.vec import (
    CHARGE,
    DISCHARGE,
    HAND_DICE,
    MASKS,
    NO_HAND,
    ONLY_STOP,
    OVER,
    ROLL_RANK,
    VALUE,
    BatchDice,
    Turns421,
    check_exploring_starts,
)

BatchPolicy = Callable[[np.ndarray, np.ndarray, np.random.Generator], np.ndarray]
NOBODY = -1
BIG = 1 << 20  # above every rank: the rank of "no roll" when finding the lowest


def next_in_table(n_players: int) -> np.ndarray:
    """``NEXT[mask, seat]``: the next seat clockwise from ``seat`` whose bit is in ``mask``
    (``seat`` itself if it is the only one; -1 for an empty mask)."""
    table = np.full((1 << n_players, n_players), -1, dtype=np.int64)
    for mask in range(1, 1 << n_players):
        for seat in range(n_players):
            for step in range(1, n_players + 1):
                s = (seat + step) % n_players
                if mask >> s & 1:
                    table[mask, seat] = s
                    break
    return table


class Vec421NEnv(Turns421, BatchedVecEnv):
    """``num_envs`` games of 421 for ``n_players`` (2 or 3), one seat the agent's, for SB3.

    Arguments: ``num_envs``; ``opponent``: a batch policy (see the module
    docstring) or a pool of them (a non-empty list), from which every other seat
    of every new game draws its own, in proportion to ``weights``; ``n_players``;
    ``pot`` (default 15); ``agent_seat``: a seat or ``"random"`` (drawn per game);
    ``seed``; ``dice``: a ``BatchDice`` (``games.dice421.vec.scripted_dice`` for tests);
    ``exploring_starts``: a training aid, as in ``Vec421Env``: the share of games (0..1,
    default 0) whose discharge starts, instead of after the charge, from a token split
    drawn evenly among those where every player holds at least one token, led by a
    player drawn evenly (with fewer tokens than players there is no such split, and
    every game plays the charge).

    ``step(actions)`` takes one action per game, checked as ``Vec421Env`` checks
    them (``game421.IllegalAction``, one line naming the game).  A policy that
    answers anything but one legal action per row raises ``ValueError`` naming
    its pool entry.
    """

    def __init__(
        self,
        num_envs: int,
        opponent: BatchPolicy | Sequence[BatchPolicy],
        n_players: int = 3,
        pot: int = 15,
        agent_seat: int | str = "random",
        seed: Optional[int] = None,
        dice: Optional[BatchDice] = None,
        weights: Optional[Sequence[float]] = None,
        exploring_starts: float = 0.0,
    ):
        self.n_players = P = SPEC.check_players(n_players, "n_players")
        self.exploring_starts = check_exploring_starts(exploring_starts, dice)
        if not (
            agent_seat == "random"
            or (isinstance(agent_seat, (int, np.integer)) and not isinstance(agent_seat, bool) and 0 <= agent_seat < P)
        ):
            raise ValueError(f"agent_seat must be a seat 0..{P - 1} or 'random', got {agent_seat!r}")
        self.pot = SPEC.check_options({"pot": pot})["pot"]
        low, high = codec421.observation_bounds(self.pot)
        super().__init__(
            num_envs,
            spaces.Box(low, high, shape=(codec421.OBS_SIZE,), dtype=np.int64),
            spaces.Discrete(g.N_ACTIONS),
            seed,
            dice,
        )
        self.agent_seat = agent_seat
        self.next_seat = next_in_table(P)
        n = num_envs
        self.opp_index = np.zeros((n, P), dtype=np.int64)  # each seat's draw from the pool
        self.set_opponent(opponent, weights)
        self.seat = np.zeros(n, dtype=np.int64)
        self.first = np.zeros(n, dtype=np.int64)
        self.phase = np.full(n, OVER, dtype=np.int64)
        self.pot_left = np.zeros(n, dtype=np.int64)
        self.tok = np.zeros((n, P), dtype=np.int64)
        self.out = np.zeros((n, P), dtype=bool)
        self.played = np.full((n, P), NO_HAND, dtype=np.int64)
        self.leader = np.full(n, NOBODY, dtype=np.int64)
        self.cur = np.full(n, NOBODY, dtype=np.int64)
        self.hand = np.full(n, NO_HAND, dtype=np.int64)
        self.used = np.zeros(n, dtype=np.int64)
        self.allowed = np.zeros(n, dtype=np.int64)
        self.n_lead = np.zeros(n, dtype=np.int64)
        self.decided = np.ones(n, dtype=bool)
        self.outcome = np.zeros(n)

    # --- opponents --------------------------------------------------------------
    def set_opponent(self, opponent: Any, weights: Optional[Sequence[float]] = None) -> None:
        """Replace the pool (one batch policy, or a non-empty list of them) and its weights
        (default equal).  Checked first; nothing changes if refused.  Games in progress
        keep their draws: with a pool of the same size they play the policies now at
        the same places."""
        pool = tuple(opponent) if isinstance(opponent, (list, tuple)) else (opponent,)
        if not pool:
            raise ValueError("the opponent pool is empty: give at least one batch policy")
        for i, policy in enumerate(pool):
            if not callable(policy):
                raise TypeError(
                    f"pool entry {i}: a batch policy is a callable (obs, masks, rng) -> actions, got "
                    f"{type(policy).__name__}; make one with agents.batch_policy(agent)"
                )
        self._set_pool(pool, weights)

    def _opponent_actions(self, rows: np.ndarray) -> np.ndarray:
        """The movers' actions (every mover an opponent at a decision), each pool member
        asked once for its rows."""
        movers = self.cur[rows]
        obs = self._obs(rows, movers)
        masks = MASKS[(self.leader[rows] == movers).astype(np.int64), self.hand[rows]]
        drawn = self.opp_index[rows, movers]
        actions = np.empty(len(rows), dtype=np.int64)
        for k, policy in enumerate(self._pool):
            mine = np.flatnonzero(drawn == k) if len(self._pool) > 1 else np.arange(len(rows))
            if len(mine):
                m = masks[mine]
                actions[mine] = self._answers(
                    k,
                    policy(obs[mine], m, self.rng),
                    m,
                    "action",
                    lambda i, m=m: f"there; legal: {np.flatnonzero(m[i]).tolist()}",
                )
        return actions

    # --- chance -----------------------------------------------------------------
    def _roll_ranks(self, rows: np.ndarray, k: np.ndarray) -> np.ndarray:
        """(len(rows), n_players) ranks: in row i the first ``k[i]`` players of an order each
        roll all three dice once (the rest ``BIG``)."""
        P = self.n_players
        ranks = ROLL_RANK[self._rolls(rows, 3 * k, P)]
        return np.where(np.arange(P)[None, :] < k[:, None], ranks, BIG)

    def _rampo(self, rows: np.ndarray, tied: np.ndarray, k: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """H6 among the ``k[i]`` seats ``tied[i, :k[i]]`` (in play order): (loser, winner).  The
        tie maker (the last of the tied) rolls first; the winner is the best hand of the
        first roll that is not a tie all round."""
        m, P = len(rows), self.n_players
        loser, winner = np.full(m, NOBODY), np.full(m, NOBODY)
        idx, tied, k = np.arange(m), tied.copy(), k.copy()
        cols = np.arange(P)[None, :]
        while len(idx):
            # the tie maker first: tied[k - 1], then tied[0 .. k - 2]
            before = np.broadcast_to(np.maximum(cols - 1, 0), tied.shape)
            order = np.where(cols == 0, tied[np.arange(len(idx)), k - 1][:, None], np.take_along_axis(tied, before, 1))
            order = np.where(cols < k[:, None], order, NOBODY)
            r = self._roll_ranks(rows[idx], k)
            low = r == r.min(1, keepdims=True)
            n_low = low.sum(1)
            valid = cols < k[:, None]
            best = np.argmax(np.where(valid, r, -1), 1)  # the first of the highest
            first_split = (winner[idx] == NOBODY) & (n_low < k)
            winner[idx[first_split]] = order[first_split, best[first_split]]
            ended = n_low == 1
            loser[idx[ended]] = order[ended, np.argmax(low[ended], 1)]
            going = ~ended
            keep = np.argsort(~low[going], axis=1, kind="stable")  # the lowest, in their roll order
            tied = np.take_along_axis(order[going], keep, 1)
            idx, k = idx[going], n_low[going]
        return loser, winner

    def _round_order(self, rows: np.ndarray, start: np.ndarray) -> np.ndarray:
        """(len(rows), n_players): the seats still in, clockwise from ``start`` (in), then -1."""
        mask = (~self.out[rows]) @ (1 << np.arange(self.n_players))
        order = np.full((len(rows), self.n_players), NOBODY, dtype=np.int64)
        order[:, 0] = start
        for j in range(1, self.n_players):
            nxt = self.next_seat[mask, order[:, j - 1]]
            order[:, j] = np.where((order[:, j - 1] != NOBODY) & (nxt != start), nxt, NOBODY)
        return order

    def _outcomes(
        self, rows: np.ndarray, order: np.ndarray, ranks: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """H4/H6 for hands ``ranks`` played in ``order`` (-1/BIG padded): (receiver, giver, due);
        a shared lowest hand is settled by RAMPO and moves 1 token."""
        m = len(rows)
        valid = order != NOBODY
        high = np.argmax(np.where(valid, ranks, -1), 1)
        giver = order[np.arange(m), high]
        due = VALUE[ranks[np.arange(m), high]]
        low = valid & (ranks == np.where(valid, ranks, BIG).min(1, keepdims=True))
        n_low = low.sum(1)
        receiver = order[np.arange(m), np.argmax(low, 1)]
        tie = np.flatnonzero(n_low > 1)
        if len(tie):
            keep = np.argsort(~low[tie], axis=1, kind="stable")
            tied = np.take_along_axis(order[tie], keep, 1)
            loser, winner = self._rampo(rows[tie], tied, n_low[tie])
            receiver[tie] = loser
            high_tied = low[tie, high[tie]]
            giver[tie] = np.where(high_tied, winner, giver[tie])
            due[tie] = 1
        return receiver, giver, due

    # --- the game on a subset of games ----------------------------------------------
    def _play_charge(self, rows: np.ndarray) -> None:
        """H2/H3/H7: charge rounds, every player from the first, until each pot is empty; then
        players with no tokens leave and the last taker leads the discharge."""
        P = self.n_players
        idx = np.arange(len(rows))
        taker = np.zeros(len(rows), dtype=np.int64)
        order_all = self._round_order(rows, self.first[rows])
        while len(idx):
            r_rows = rows[idx]
            order = order_all[idx]
            ranks = self._roll_ranks(r_rows, np.full(len(idx), P))
            receiver, _, due = self._outcomes(r_rows, order, ranks)
            left = self.pot_left[r_rows]
            amount = np.minimum(due, left)
            self.pot_left[r_rows] = left - amount
            self.tok[r_rows, receiver] += amount
            taker[idx] = receiver
            idx = idx[amount < left]
        self._settle(rows)
        going = self.phase[rows] != OVER
        self.phase[rows[going]] = DISCHARGE
        self._start_rounds(rows[going], taker[going])

    def _settle(self, rows: np.ndarray) -> None:
        """H5: players with no tokens leave as winners; whoever holds every token loses (the
        game is over).  The agent's game is decided once it has left or lost."""
        self.out[rows] |= self.tok[rows] == 0
        over = (self.tok[rows] == self.pot).any(1)
        r = rows[over]
        self.phase[r] = OVER
        self.cur[r], self.hand[r], self.used[r], self.allowed[r] = NOBODY, NO_HAND, 0, 0
        me = self.seat[rows]
        mine_out = self.out[rows, me]
        decided = mine_out | over
        self.decided[rows[decided]] = True
        self.outcome[rows[decided]] = np.where(mine_out[decided], 1.0, -1.0)

    def _end_turns(self, rows: np.ndarray) -> None:
        """Turns with no roll left end: the next player in the round begins (it owes the
        leader's roll count, the first forced), or the round is settled."""
        who = self.cur[rows]
        self.played[rows, who] = self.hand[rows]
        leads = who == self.leader[rows]
        self.n_lead[rows[leads]] = self.used[rows[leads]]
        mask = (~self.out[rows]) @ (1 << np.arange(self.n_players))
        nxt = self.next_seat[mask, who]
        more = nxt != self.leader[rows]
        if more.any():
            r = rows[more]
            self._first_rolls(r, nxt[more], self.n_lead[r])
        if not more.all():
            self._finish_rounds(rows[~more])

    def _finish_rounds(self, rows: np.ndarray) -> None:
        """H4/H5/H6: the round's giver pays the receiver (capped); the receiver leads next."""
        self.cur[rows], self.hand[rows], self.used[rows], self.allowed[rows] = NOBODY, NO_HAND, 0, 0
        order = self._round_order(rows, self.leader[rows])
        ranks = np.where(order != NOBODY, np.take_along_axis(self.played[rows], np.maximum(order, 0), 1), BIG)
        receiver, giver, due = self._outcomes(rows, order, ranks)
        amount = np.minimum(due, self.tok[rows, giver])
        self.tok[rows, giver] -= amount
        self.tok[rows, receiver] += amount
        self._settle(rows)
        going = self.phase[rows] != OVER
        self._start_rounds(rows[going], receiver[going])

    def _advance(self, rows: np.ndarray) -> None:
        """Play the opponents' choices and the forced turn ends until each game is at the
        agent's choice or decided for the agent."""
        active = rows[~self.decided[rows]]
        while len(active):
            cur, used, allowed = self.cur[active], self.used[active], self.allowed[active]
            opp = (cur != self.seat[active]) & (used < allowed)
            if opp.any():
                r = active[opp]
                self._play(r, self._opponent_actions(r))
                used, allowed = self.used[active], self.allowed[active]
            ended = used == allowed
            if ended.any():
                self._end_turns(active[ended])
            active = active[~self.decided[active]]
            cur, used, allowed = self.cur[active], self.used[active], self.allowed[active]
            active = active[(cur != self.seat[active]) | (used == allowed)]

    def _new_games(self, rows: np.ndarray) -> None:
        """H7: seats, the first player, every other seat's policy, the charge, then play up to
        the agent's first choice."""
        n, P = len(rows), self.n_players
        self.seat[rows] = self.rng.integers(P, size=n) if self.agent_seat == "random" else self.agent_seat
        self.first[rows] = (
            self.rng.integers(P, size=n) if self._dice_override is None else self._dice_override.draw_seats(rows)
        )
        if len(self._pool) > 1:
            self.opp_index[rows] = self._draw(self._pool_cdf, n * P).reshape(n, P)
        self.phase[rows] = CHARGE
        self.pot_left[rows] = self.pot
        self.tok[rows] = 0
        self.out[rows] = False
        self.played[rows] = NO_HAND
        self.leader[rows] = self.cur[rows] = NOBODY
        self.hand[rows] = NO_HAND
        self.used[rows] = self.allowed[rows] = self.n_lead[rows] = 0
        self.decided[rows] = False
        self.outcome[rows] = 0.0
        if self.exploring_starts and self.pot >= P:
            spread = self.rng.random(n) < self.exploring_starts
            self._even_starts(rows[spread])
            rows_charged = rows[~spread]
        else:
            rows_charged = rows
        self._play_charge(rows_charged)
        self._advance(rows)

    def _even_starts(self, rows: np.ndarray) -> None:
        """Exploring starts: the pot handed out evenly over the splits where every player
        holds at least one token (P - 1 distinct cuts of 1..pot-1), and a leader drawn
        evenly; the discharge starts there."""
        n, P = len(rows), self.n_players
        cuts = np.sort(np.argsort(self.rng.random((n, self.pot - 1)), axis=1)[:, : P - 1] + 1, axis=1)
        self.tok[rows] = np.diff(np.concatenate([np.zeros((n, 1), np.int64), cuts, np.full((n, 1), self.pot)], 1))
        self.pot_left[rows] = 0
        self.phase[rows] = DISCHARGE
        self._start_rounds(rows, self.rng.integers(P, size=n))

    # --- VecEnv API -------------------------------------------------------------------
    def step_wait(self):
        actions = self._pending_actions()
        live = np.flatnonzero(~self.decided)
        if len(live):
            a = actions[live]
            legal = MASKS[(self.leader[live] == self.seat[live]).astype(np.int64), self.hand[live], a]
            if not legal.all():
                row = int(live[~legal][0])
                self._raise_illegal(row, int(actions[row]), g.describe_action(int(actions[row])))
            self._play(live, a)
            self._advance(live)
        return self._finish_step(np.where(self.decided, self.outcome, 0.0).astype(np.float32), self.decided.copy())

    def _raise_illegal(self, row: int, action: Any, why: str) -> None:
        """Refuse ``action`` in game ``row``, in one line: why, what the agent holds, what is legal."""
        if self.decided[row]:
            state = (
                f"the game is decided (this step returns its reward, whatever action in 0..{g.N_ACTIONS - 1} is given)"
            )
            options = f"{g.STOP}={g.describe_action(g.STOP)}"
        else:
            is_leader = bool(self.leader[row] == self.seat[row])
            role = "leader" if is_leader else f"follower owing {self.allowed[row]} rolls"
            state = f"the agent ({role}) holds {g.hand_str(g.HANDS[self.hand[row]])} after roll {self.used[row]}"
            options = ", ".join(
                f"{x}={g.describe_action(x)}" for x in np.flatnonzero(MASKS[int(is_leader), self.hand[row]])
            )
        raise g.IllegalAction(f"game {row}: action {action!r} ({why}) is not legal: {state}; legal actions: {options}")

    def _obs(self, rows: Optional[np.ndarray] = None, viewer: Optional[np.ndarray] = None) -> np.ndarray:
        """``codec421.observe(game, viewer)`` for each game (default: every game, the agent's seat)."""
        rows = np.arange(self.num_envs) if rows is None else rows
        viewer = self.seat[rows] if viewer is None else viewer
        c, P, m = codec421, self.n_players, len(rows)
        obs = np.zeros((m, c.OBS_SIZE), dtype=np.int64)
        rolling = self.cur[rows] == viewer
        obs[:, c.HAND] = HAND_DICE[np.where(rolling, self.hand[rows], NO_HAND)]
        obs[:, c.ROLLS_USED] = np.where(rolling, self.used[rows], 0)
        obs[:, c.ROLLS_ALLOWED] = np.where(rolling, self.allowed[rows], 0)
        leader = self.leader[rows]
        leads = leader == viewer
        obs[:, c.IS_LEADER] = leads
        obs[:, c.LEADER_ROLLS] = np.where(leads, 0, self.n_lead[rows])
        for slot in range(P - 1):
            s = (viewer + 1 + slot) % P
            base = c.OTHERS_START + slot * c.OTHER_SLOT_SIZE
            hand = self.played[rows, s]
            obs[:, base + c.O_PLAYED] = hand != NO_HAND
            obs[:, base + 1 : base + 4] = HAND_DICE[hand]
            obs[:, base + c.O_TOKENS] = self.tok[rows, s]
            obs[:, base + c.O_IN_GAME] = ~self.out[rows, s]
            obs[:, base + c.O_IS_LEADER] = leader == s
        obs[:, c.TOKENS] = self.tok[rows, viewer]
        obs[:, c.POT] = self.pot_left[rows]
        obs[:, c.PHASE] = self.phase[rows]
        obs[:, c.N_PLAYERS] = P
        return obs

    def action_masks(self) -> np.ndarray:
        """(num_envs, 29): ``codec421.MASKS[is_leader, hand]`` at a decision, only 0 in a decided game."""
        masks = MASKS[(self.leader == self.seat).astype(np.int64), self.hand]
        masks[self.decided] = ONLY_STOP
        return masks
