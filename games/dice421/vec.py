"""Batched two-player 421: many games stepped at once with numpy, as an SB3 VecEnv.

Same game, same observation, same masks and same rewards as
``Dice421Env(n_players=2, opponent=X, pot=P)`` (see its docstring), but the
state of every game is a few integer arrays and a step is array operations on
the games that need them (about 100x the steps per second of ``Dice421Env``).

**Rules come from the engine and the codec.**  Hands are ranks (indices in
``game421.HANDS``, low to high), their token values are ``hand_value``, the
actions are the engine's (0 = STOP, ``a`` keeps ``KEEPS[a - 1]``), the masks are
``codec421.MASKS`` and the observation is laid out as ``codec421.observe`` lays
it out.  Dice are real dice: a roll keeping ``KEEPS[k]`` draws ``3 - len(keep)``
dice and the hand is the multiset, a charge round draws the first player's
three dice then the second's, a RAMPO roll the tie maker's then the other's,
so a scripted die sequence plays the same game here as in ``Game421`` with
``ScriptedDice``.  Tables built once at import turn dice into ranks:
``ROLL_RANK[code]`` for three rolled dice and ``KEEP_ROLL_RANK[k, code]`` for a
keep plus the first ``3 - len(keep)`` rolled dice (``code = 36 d1 + 6 d2 + d3``).

**State.**  Players are named relative to the agent: ``AGENT`` = 0 and ``OPP`` = 1
(two players only), so tokens are ``tok[:, who]`` and the first player, the
leader and the player rolling now are ``who`` numbers.  ``seat`` remembers the
agent's seat (the scripted first-player seat is compared with it).

**Stepping.**  A new game draws the agent's seat and the first player, then
``_play_charge`` plays the whole charge, which has no decisions.  With random
dice its end (the tokens each player took, and the last taker, who leads) is
drawn at once from its exact distribution (``codec421.charge_outcomes``).  With
scripted dice it is rolled die by die: each pass, every game still in it rolls
a pair (a charge round, or a RAMPO roll after a tie), until every pot is empty.
The agent's action is played on every live game at once (STOP ends the turn by
setting ``allowed = used``), then ``_advance`` plays forced events until
every game is at the agent's next choice or over; each pass of its loop plays,
on the games that need it, one opponent decision and the end of every turn with
no roll left (the follower's forced first roll, or the round's settlement and
the next leader's first roll).  Both loops run on shrinking active subsets and
never loop over games.  Random rolls (codes of three dice) are taken from a
buffer drawn in large chunks from the env's generator (scripted dice come from
``scripted_dice``).

**Decided games.**  A game decided before the agent's first choice (in the
charge, or in rounds where the agent had no choice, e.g. as a follower owing one
roll) shows the observation of the finished game, a mask allowing only action 0,
and the next step returns its reward and ``done`` (``Dice421Env``'s "decided").
Finished games report ``infos[i]["terminal_observation"]`` and restart at once.

The opponent is a ready ``games.dice421.policy.Policy421`` table (any agent becomes
one through ``games.dice421.solver.as_policy``, a named bot through
``agents.bot_table("421", name, pot=...)``); one-hot tables are played as action
lookups, others by sampling each row with the env's generator.  It may also be a
pool of tables (self-play against past versions and other bots): each new game
draws one, uniformly or in proportion to the weights given to ``set_opponent``,
and keeps it (``opp_index``).
"""

from __future__ import annotations

from typing import Any, Optional, Sequence

import numpy as np
from gymnasium import spaces

from games.dice421 import SPEC
from games.dice421 import codec as codec421
from games.dice421 import game as g
from envs.batched import BatchedVecEnv
from core.dice import sample_rows
from games.dice421.policy import FOLLOWER_DECISION_INDEX, Policy421

AGENT, OPP = 0, 1
CHARGE, DISCHARGE, OVER = (codec421.PHASE_CODE[p] for p in (g.CHARGE, g.DISCHARGE, g.OVER))
N_HANDS = len(g.HANDS)
NO_HAND = -1
VALUE = codec421.HAND_VALUES
# Dice of each hand, high to low; row NO_HAND (-1, the last) is 0 0 0 ("no hand" in an observation).
HAND_DICE = np.array([*g.HANDS, (0, 0, 0)], dtype=np.int64)
KEEP_LEN = np.array([len(k) for k in g.KEEPS], dtype=np.int64)
DIE_WEIGHTS = np.array([36, 6, 1], dtype=np.int64)  # code of three dice d1 d2 d3 (1..6 each)
N_CODES = 6 * 36 + 6 * 6 + 6 + 1
# ROLL_RANK[code]: rank of three rolled dice; KEEP_ROLL_RANK[k, code]: rank of KEEPS[k] plus the
# first 3 - len(KEEPS[k]) of the rolled dice.  -1 where the code is not three dice.
ROLL_RANK = np.full(N_CODES, -1, dtype=np.int64)
KEEP_ROLL_RANK = np.full((len(g.KEEPS), N_CODES), -1, dtype=np.int64)
for _d in np.ndindex(6, 6, 6):
    _dice = tuple(int(v) + 1 for v in _d)
    _code = int(np.dot(_dice, DIE_WEIGHTS))
    ROLL_RANK[_code] = g.hand_rank(_dice)
    for _k, _keep in enumerate(g.KEEPS):
        KEEP_ROLL_RANK[_k, _code] = g.hand_rank(_keep + _dice[: 3 - len(_keep)])
MASKS = codec421.MASKS  # [is_leader, hand, action]
ONLY_STOP = codec421.legal_mask([g.STOP])
ROLL_BUFFER = 1 << 17  # random rolls (codes of three dice) drawn at a time
CODES = np.flatnonzero(ROLL_RANK >= 0)  # the 216 codes of three dice
# FOLLOWER_DECISION[n, r]: the Policy421 follower index of (rolls allowed n, rolls used r).
FOLLOWER_DECISION = np.zeros((g.MAX_ROLLS + 1, g.MAX_ROLLS + 1), dtype=np.int64)
for (_n, _r), _d in FOLLOWER_DECISION_INDEX.items():
    FOLLOWER_DECISION[_n, _r] = _d


# --- dice sources -------------------------------------------------------------


class BatchDice:
    """Where a batch of games gets its chance: ``roll(rows, count, width)`` returns
    (len(rows), width) die values of which row i uses the first ``count`` (an int
    or one per row); ``draw_seats(rows)`` draws each game's first player (H7)."""

    def roll(self, rows: np.ndarray, count, width: int) -> np.ndarray:
        raise NotImplementedError

    def draw_seats(self, rows: np.ndarray) -> np.ndarray:
        raise NotImplementedError


class ScriptedBatchDice(BatchDice):
    """Per-game scripts: game i rolls the values of ``dice[i]`` in order and draws its
    first players from ``seats[i]`` in order (one per game played in that row), as
    ``ScriptedDice(dice[i], seats[i])`` feeds ``Game421``."""

    def __init__(self, dice: Sequence[Sequence[int]], seats: Sequence[Sequence[int] | int]):
        if len(dice) != len(seats):
            raise ValueError(f"give one seat script per dice script, got {len(seats)} and {len(dice)}")
        self._dice = [[int(v) for v in s][::-1] for s in dice]
        self._seats = [([int(s)] if np.isscalar(s) else [int(v) for v in s])[::-1] for s in seats]

    def roll(self, rows, count, width):
        counts = np.broadcast_to(count, len(rows))
        out = np.ones((len(rows), width), dtype=np.int64)
        for r, (row, n) in enumerate(zip(rows, counts)):
            stream = self._dice[row]
            if len(stream) < n:
                raise RuntimeError(f"dice script of game {row} exhausted")
            out[r, :n] = [stream.pop() for _ in range(n)]
        return out

    def draw_seats(self, rows):
        out = np.zeros(len(rows), dtype=np.int64)
        for r, row in enumerate(rows):
            if not self._seats[row]:
                raise RuntimeError(f"seat script of game {row} exhausted")
            out[r] = self._seats[row].pop()
        return out


def scripted_dice(dice: Sequence[Sequence[int]], seats: Sequence[Sequence[int] | int]) -> ScriptedBatchDice:
    """Scripted dice for ``Vec421Env(dice=...)``: game i plays like
    ``Game421(2, pot, dice=ScriptedDice(dice[i], seats[i]))``."""
    return ScriptedBatchDice(dice, seats)


def check_exploring_starts(share: Any, dice: Optional[BatchDice]) -> float:
    """The share of games whose discharge starts from an even token split (the batched
    envs' ``exploring_starts``), checked: a number in 0..1, and 0 with scripted dice."""
    if not (
        isinstance(share, (int, float, np.integer, np.floating))
        and not isinstance(share, (bool, np.bool_))
        and 0 <= share <= 1
    ):
        raise ValueError(f"exploring_starts is a share of the games in 0..1, got {share!r}")
    if share and dice is not None:
        raise ValueError("exploring_starts needs the env's own dice: scripted dice roll the charge die by die")
    return float(share)


class Turns421:
    """What the batched 421 envs share: chance (``_rolls``, codes of three dice from
    scripted dice or a buffer drawn in large chunks from ``self.rng``) and turns (a round's start, first rolls, the
    rollers' actions), on the arrays both keep: ``leader``, ``played``, ``n_lead``,
    ``cur``, ``hand``, ``used``, ``allowed``.  Mixed into a ``BatchedVecEnv``."""

    _buffer: np.ndarray = np.zeros(0, dtype=np.int64)
    _buffer_rng: Any = None
    _buffer_pos: int = 0

    def _rolls(self, rows: np.ndarray, count, n_rolls: int) -> np.ndarray:
        """(len(rows), n_rolls) codes of three dice, of which row i uses the first
        ``count`` dice (an int or one per row)."""
        if self._dice_override is not None:
            dice = self._dice_override.roll(rows, count, 3 * n_rolls).reshape(len(rows), n_rolls, 3)
            return dice[..., 0] * 36 + dice[..., 1] * 6 + dice[..., 2]
        # Random rolls come from a buffer of codes drawn from self.rng in large chunks: three
        # i.i.d. dice per code (a uniform code is three uniform dice), without the per-call
        # cost of Generator.integers.
        n = len(rows) * n_rolls
        if self._buffer_rng is not self.rng or self._buffer_pos + n > len(self._buffer):
            self._buffer = CODES[self.rng.integers(len(CODES), size=max(ROLL_BUFFER, n))]
            self._buffer_rng, self._buffer_pos = self.rng, 0
        start = self._buffer_pos
        self._buffer_pos += n
        return self._buffer[start : start + n].reshape(-1, n_rolls)

    def _roll_keeps(self, rows: np.ndarray, keeps) -> None:
        """The rollers keep ``KEEPS[keeps]`` (indices into KEEPS) and roll the other dice."""
        self.hand[rows] = KEEP_ROLL_RANK[keeps, self._rolls(rows, 3 - KEEP_LEN[keeps], 1)[:, 0]]
        self.used[rows] += 1

    def _first_rolls(self, rows: np.ndarray, who: np.ndarray, allowed) -> None:
        """Turns begin: ``who`` rolls all three dice (no choice) and owes ``allowed`` rolls."""
        self.cur[rows] = who
        self.allowed[rows] = allowed
        self.used[rows] = 1
        self.hand[rows] = ROLL_RANK[self._rolls(rows, 3, 1)[:, 0]]

    def _start_rounds(self, rows: np.ndarray, leader: np.ndarray) -> None:
        if not len(rows):
            return
        self.leader[rows] = leader
        self.played[rows] = NO_HAND
        self.n_lead[rows] = 0
        self._first_rolls(rows, leader, g.MAX_ROLLS)

    def _play(self, rows: np.ndarray, actions: np.ndarray) -> None:
        """The rollers play legal ``actions``: STOP ends the turn (no roll left), a keep rolls."""
        stop = actions == g.STOP
        if stop.any():
            self.allowed[rows[stop]] = self.used[rows[stop]]
            keep = ~stop
            rows, actions = rows[keep], actions[keep]
        if len(rows):
            self._roll_keeps(rows, actions - 1)


# --- the env --------------------------------------------------------------------


class Vec421Env(Turns421, BatchedVecEnv):
    """``num_envs`` two-player games of 421 against one opponent policy (or a pool), for SB3.

    Arguments: ``num_envs``; ``opponent``: a ``Policy421`` table for ``pot``
    (``agents.bot_table("421", "optimal", pot=15)``, ``solver421.as_policy(agent)``),
    or a list of them, a pool from which each game draws its opponent;
    ``pot``: tokens in the pot (default 15); ``agent_seat``: 0, 1 or ``"random"``
    (drawn per game); ``seed``; ``dice``: a ``BatchDice`` (default: the seeded
    generator; ``scripted_dice`` for tests); ``exploring_starts``: a training aid, the
    share of games (0..1, default 0) whose discharge starts from a token split drawn
    evenly (the first player's tokens 1..pot-1, either player leading) instead of
    from where the charge leads.  Against a fixed opponent the best move in a state
    does not depend on how the game got there, so this changes which states training
    sees, not what is best in them: the token splits that real games seldom reach
    (a player leading with one or two tokens) come up as often as the others.  It
    needs the env's own dice (the charge is then drawn, not rolled).

    ``step(actions)`` takes one action per game: an integer numpy array of shape
    ``(num_envs,)`` or a list of ``num_envs`` ints, each in 0..28 (any of them in a
    decided game) and legal in its game (``action_masks()``).  Anything else (floats,
    even whole ones, NaN, bools, strings, other shapes, an action out of range or
    illegal) raises ``game421.IllegalAction`` (a ``ValueError``), one line naming the
    game, and plays nothing.  The opponent's table is checked when set
    (``Policy421.check``: shapes, finite non-negative rows summing to 1 on legal
    actions only).
    """

    def __init__(
        self,
        num_envs: int,
        opponent: Policy421,
        pot: int = 15,
        agent_seat: int | str = "random",
        seed: Optional[int] = None,
        dice: Optional[BatchDice] = None,
        exploring_starts: float = 0.0,
    ):
        self.exploring_starts = check_exploring_starts(exploring_starts, dice)
        if not (
            agent_seat == "random"
            or (isinstance(agent_seat, (int, np.integer)) and not isinstance(agent_seat, bool) and agent_seat in (0, 1))
        ):
            raise ValueError(f"agent_seat must be 0, 1 or 'random', got {agent_seat!r}")
        self.pot = SPEC.check_options({"pot": pot})["pot"]
        low, high = codec421.observation_bounds(self.pot)
        super().__init__(
            num_envs,
            spaces.Box(low, high, shape=(codec421.OBS_SIZE,), dtype=np.int64),
            spaces.Discrete(g.N_ACTIONS),
            seed,
            dice,
        )
        self.opp_index = np.zeros(num_envs, dtype=np.int64)  # each game's draw from the opponent pool
        self.set_opponent(opponent)
        self.agent_seat = agent_seat
        self._charge_cdf: Optional[np.ndarray] = None
        n = num_envs
        self.seat = np.zeros(n, dtype=np.int64)  # the agent's seat
        self.phase = np.full(n, OVER, dtype=np.int64)
        self.pot_left = np.zeros(n, dtype=np.int64)
        self.tok = np.zeros((n, 2), dtype=np.int64)  # [game, who]
        self.first = np.zeros(n, dtype=np.int64)  # who plays first in the charge
        self.leader = np.full(n, -1, dtype=np.int64)  # who leads the discharge round (-1: none yet)
        self.cur = np.full(n, -1, dtype=np.int64)  # who is rolling (-1: nobody)
        self.hand = np.full(n, NO_HAND, dtype=np.int64)  # the roller's hand
        self.used = np.zeros(n, dtype=np.int64)
        self.allowed = np.zeros(n, dtype=np.int64)
        self.n_lead = np.zeros(n, dtype=np.int64)  # rolls the leader used (0 while it is on)
        self.played = np.full((n, 2), NO_HAND, dtype=np.int64)  # [game, who]: hand played this round
        self.outcome = np.zeros(n)  # +1 agent won, -1 agent lost, once over
        self._actions: Optional[np.ndarray] = None

    # --- opponent -------------------------------------------------------------
    def set_opponent(self, opponent: Any, weights: Optional[Sequence[float]] = None) -> None:
        """Replace the opponent: a ``Policy421`` table, or a pool of them (a non-empty
        list or tuple) from which every new game draws one (self-play against past
        versions and other bots), in proportion to ``weights`` (one per member,
        default equal).  Everything is checked first, and nothing changes if
        something is refused.  A game in progress keeps its draw: with a pool of the
        same size it goes on against the table now at the same place."""
        is_pool = isinstance(opponent, (list, tuple))
        pool = tuple(opponent) if is_pool else (opponent,)
        if not pool:
            raise ValueError("the opponent pool is empty: give at least one Policy421 table")
        prepared = [self._prepare(policy, i if is_pool else None) for i, policy in enumerate(pool)]
        self._set_pool(prepared, weights)
        self.opponent_policy = pool if is_pool else pool[0]  # a pool as a tuple: the caller's list may change

    def _draw_opponents(self, rows: np.ndarray) -> None:
        """Each new game's opponent from the pool (nothing is drawn for a single table)."""
        if len(self._pool) > 1:
            self.opp_index[rows] = self._draw(self._pool_cdf, len(rows))

    def _prepare(self, policy: Any, place: int | None) -> tuple[Policy421, np.ndarray | None, np.ndarray | None]:
        """A checked table and, if it is one-hot, its actions for lookups."""
        where = "" if place is None else f"pool entry {place}: "
        if not isinstance(policy, Policy421):
            raise TypeError(
                f"{where}the opponent is a Policy421 table, got {type(policy).__name__}: build one with "
                "agents.bot_table('421', name, pot=...) or games.dice421.solver.as_policy(agent, pot)"
            )
        if policy.pot != self.pot:
            raise ValueError(f"{where}the opponent's table is for pot {policy.pot}, this env's pot is {self.pot}")
        try:
            policy.check()
        except ValueError as e:
            raise ValueError(f"{where}{e}") from None
        used = slice(1, self.pot)  # rows t = 0 and t = pot are never asked
        if all(np.all((t[used] == 0) | (t[used] == 1)) for t in (policy.leader, policy.follower)):
            return policy, policy.leader.argmax(-1), policy.follower.argmax(-1)  # (pot+1, 2, 56), (pot+1, 3, 56, 56)
        return policy, None, None

    def _opponent_actions(self, rows: np.ndarray) -> np.ndarray:
        if len(self._pool) == 1:
            return self._table_actions(self._pool[0], rows)
        actions = np.empty(len(rows), dtype=np.int64)
        drawn = self.opp_index[rows]
        for k, table in enumerate(self._pool):
            mine = np.flatnonzero(drawn == k)
            if len(mine):
                actions[mine] = self._table_actions(table, rows[mine])
        return actions

    def _table_actions(self, table, rows: np.ndarray) -> np.ndarray:
        policy, lead_act, foll_act = table
        t, h, u = self.tok[rows, OPP], self.hand[rows], self.used[rows]
        leads = self.leader[rows] == OPP
        d = FOLLOWER_DECISION[self.allowed[rows], u]
        L = self.played[rows, AGENT]  # the agent led and played, when the opponent follows
        if lead_act is not None:  # the unused lookup of each row reads a harmless entry
            return np.where(leads, lead_act[t, u - 1, h], foll_act[t, d, L, h])
        probs = np.empty((len(rows), g.N_ACTIONS))
        probs[leads] = policy.leader[t[leads], u[leads] - 1, h[leads]]
        f = ~leads
        probs[f] = policy.follower[t[f], d[f], L[f], h[f]]
        return sample_rows(probs, self.rng)

    def _roll_pair(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Two players roll all three dice once, one after the other: their ranks."""
        ranks = ROLL_RANK[self._rolls(rows, 6, 2)]
        return ranks[:, 0], ranks[:, 1]

    def _rampo(self, rows: np.ndarray, first_roller: np.ndarray) -> np.ndarray:
        """H6 for two players: who loses the RAMPO.  ``first_roller`` (the tie maker)
        rolls first; on a new tie the other, who made it, rolls first."""
        loser = np.empty(len(rows), dtype=np.int64)
        idx = np.arange(len(rows))
        fr = first_roller
        while len(idx):
            a, b = self._roll_pair(rows[idx])
            done = a != b
            loser[idx[done]] = np.where(a < b, fr, 1 - fr)[done]
            idx, fr = idx[~done], 1 - fr[~done]
        return loser

    # --- dice and game mechanics on a subset of games -------------------------
    def _play_charge(self, rows: np.ndarray) -> None:
        """H2/H3/H6/H7: charge rounds until each pot is empty; then the game is over if one
        player holds every token, else the last taker leads the discharge.  How the
        charge ends is drawn from its exact distribution with random dice
        (``_sample_charge``) and rolled die by die with scripted ones (``_roll_charge``)."""
        first = self.first[rows]
        if self._dice_override is None:
            first_tokens, taker = self._sample_charge(len(rows), first)
        else:
            first_tokens, taker = self._roll_charge(rows, first)
        self.tok[rows, first] = first_tokens
        self.tok[rows, 1 - first] = self.pot - first_tokens
        self.pot_left[rows] = 0
        over = (first_tokens == 0) | (first_tokens == self.pot)
        self._game_over(rows[over])
        going = ~over
        self.phase[rows[going]] = DISCHARGE
        self._start_rounds(rows[going], taker[going])

    def _sample_charge(self, n: int, first: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The end of ``n`` charges drawn at once from their exact distribution
        (``codec421.charge_outcomes``: the dice are not looked at, only where they
        lead): the first player's tokens and the last taker.  With ``exploring_starts``
        that share of the draws is even over the splits a discharge can start from."""
        if self._charge_cdf is None:
            ends = codec421.charge_outcomes(self.pot)  # [who took last, what it holds]
            if self.exploring_starts and self.pot > 1:
                even = np.zeros_like(ends)
                even[:, 1 : self.pot] = 1.0 / (2 * (self.pot - 1))
                ends = (1 - self.exploring_starts) * ends + self.exploring_starts * even
            self._charge_cdf = np.cumsum(ends.reshape(-1))
        outcome = self._draw(self._charge_cdf, n)
        by_first, held = outcome // (self.pot + 1) == 0, outcome % (self.pot + 1)  # who took last, holding
        return np.where(by_first, held, self.pot - held), np.where(by_first, first, 1 - first)

    def _roll_charge(self, rows: np.ndarray, first: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The charges played die by die (scripted dice): the first player's tokens and
        the last taker.  Each pass, every game still in the charge rolls a pair: a charge
        round (the first player, then the second; the lower takes the higher's value from
        the pot) or a RAMPO roll after a tie (the tie maker, who rolled second, first; the
        lower takes 1)."""
        roller = first.copy()  # who rolls first in the next pair
        rampo = np.zeros(len(rows), dtype=bool)  # the next pair is a RAMPO roll
        pot = np.full(len(rows), self.pot)
        first_tokens = np.zeros(len(rows), dtype=np.int64)
        taker = np.empty(len(rows), dtype=np.int64)
        idx = np.arange(len(rows))
        while len(idx):
            a, b = self._roll_pair(rows[idx])
            who = roller[idx]
            lower = np.where(a < b, who, 1 - who)
            due = np.where(rampo[idx], 1, VALUE[np.maximum(a, b)])
            tie = a == b
            rampo[idx] = tie
            roller[idx] = np.where(tie, 1 - who, first[idx])  # the later of the tied made the tie
            left = pot[idx]
            amount = np.where(tie, 0, np.minimum(due, left))
            pot[idx] = left - amount
            first_tokens[idx] += np.where(lower == first[idx], amount, 0)
            taker[idx] = lower
            idx = idx[amount < left]
        return first_tokens, taker

    def _end_turns(self, rows: np.ndarray) -> None:
        """Turns with no roll left: the leader's ends and the follower's begins (n rolls,
        the first forced); the follower's ends and the round is settled."""
        who = self.cur[rows]
        self.played[rows, who] = self.hand[rows]
        leads = who == self.leader[rows]
        r = rows[leads]
        if len(r):
            n = self.used[r]
            self.n_lead[r] = n
            self._first_rolls(r, 1 - who[leads], n)
        if len(r) < len(rows):
            self._finish_rounds(rows[~leads])

    def _finish_rounds(self, rows: np.ndarray) -> None:
        """H4/H5/H6: the higher hand gives the lower its value (capped); the receiver leads next."""
        played = self.played[rows]
        mine, theirs = played[:, AGENT], played[:, OPP]
        # the lower hand receives the higher hand's value; on a tie the loser of a RAMPO in
        # which the follower, who made the tie, rolls first receives 1
        receiver = (mine >= theirs).astype(np.int64)  # AGENT (0) if the agent's hand is lower
        due = VALUE[np.maximum(mine, theirs)]
        tie = np.flatnonzero(mine == theirs)
        if len(tie):
            receiver[tie] = self._rampo(rows[tie], 1 - self.leader[rows[tie]])
            due[tie] = 1
        # the discharge has no pot: the opponent holds what the agent does not
        tokens = self.tok[rows, AGENT]
        to_agent = receiver == AGENT
        held = np.where(to_agent, self.pot - tokens, tokens)  # the giver's tokens
        amount = np.minimum(due, held)
        tokens += np.where(to_agent, amount, -amount)
        self.tok[rows, AGENT] = tokens
        self.tok[rows, OPP] = self.pot - tokens
        over = amount == held
        if over.any():
            r = rows[over]
            self.cur[r], self.hand[r], self.used[r], self.allowed[r] = -1, NO_HAND, 0, 0
            self._game_over(r)
            going = ~over
            rows, receiver = rows[going], receiver[going]
        self._start_rounds(rows, receiver)

    def _game_over(self, rows: np.ndarray) -> None:
        self.phase[rows] = OVER
        self.outcome[rows] = np.where(self.tok[rows, AGENT] == 0, 1.0, -1.0)

    def _advance(self, rows: np.ndarray) -> None:
        """Play the opponent's choices and the forced events of the discharge until each
        game is at the agent's choice or over."""
        active = rows
        while len(active):
            cur, used, allowed = self.cur[active], self.used[active], self.allowed[active]
            opp = (cur == OPP) & (used < allowed)
            if opp.any():
                r = active[opp]
                self._play(r, self._opponent_actions(r))
                used, allowed = self.used[active], self.allowed[active]
            ended = used == allowed
            if ended.any():
                self._end_turns(active[ended])
                cur, used, allowed = self.cur[active], self.used[active], self.allowed[active]
            # Over games have nobody rolling (cur = -1); the agent's choices wait for a step.
            active = active[(cur == OPP) | ((cur == AGENT) & (used == allowed))]

    def _new_games(self, rows: np.ndarray) -> None:
        """H7: seats, the first player, the whole charge, then play up to the agent's first choice."""
        n = len(rows)
        if self.agent_seat == "random":
            self.seat[rows] = self.rng.integers(2, size=n)
        else:
            self.seat[rows] = self.agent_seat
        first_seat = (
            self.rng.integers(2, size=n) if self._dice_override is None else self._dice_override.draw_seats(rows)
        )
        self.first[rows] = np.where(first_seat == self.seat[rows], AGENT, OPP)
        self._draw_opponents(rows)
        self.phase[rows] = CHARGE
        self.pot_left[rows] = self.pot
        self.tok[rows] = 0
        self.leader[rows] = self.cur[rows] = -1
        self.hand[rows] = NO_HAND
        self.used[rows] = self.allowed[rows] = self.n_lead[rows] = 0
        self.played[rows] = NO_HAND
        self.outcome[rows] = 0.0
        self._play_charge(rows)
        self._advance(rows[self.phase[rows] == DISCHARGE])

    # --- VecEnv API ----------------------------------------------------------
    @property
    def pending(self) -> np.ndarray:
        """Per game: the reward of a game decided before the agent's next choice, else 0."""
        return np.where(self.phase == OVER, self.outcome, 0.0)

    def step_wait(self):
        actions = self._pending_actions()
        live = np.flatnonzero(self.phase != OVER)
        if len(live):
            a = actions[live]  # each in 0..28: step_async checked them
            legal = MASKS[(self.leader[live] == AGENT).astype(np.int64), self.hand[live], a]
            if not legal.all():
                row = int(live[~legal][0])
                self._raise_illegal(row, int(actions[row]), g.describe_action(int(actions[row])))
            self._play(live, a)
            self._advance(live)
        # outcome is 0 unless over: decided games and games just ended
        return self._finish_step(self.outcome.astype(np.float32), self.phase == OVER)

    def _raise_illegal(self, row: int, action: Any, why: str) -> None:
        """Refuse ``action`` in game ``row``, in one line: why, what the agent holds, what is legal."""
        if self.phase[row] == OVER:
            state = (
                f"the game is decided (this step returns its reward, whatever action in 0..{g.N_ACTIONS - 1} is given)"
            )
            options = f"{g.STOP}={g.describe_action(g.STOP)}"
        else:
            is_leader = bool(self.leader[row] == AGENT)
            role = "leader" if is_leader else f"follower owing {self.allowed[row]} rolls"
            state = f"the agent ({role}) holds {g.hand_str(g.HANDS[self.hand[row]])} after roll {self.used[row]}"
            legal = np.flatnonzero(MASKS[int(is_leader), self.hand[row]])
            options = ", ".join(f"{x}={g.describe_action(x)}" for x in legal)
        raise g.IllegalAction(f"game {row}: action {action!r} ({why}) is not legal: {state}; legal actions: {options}")

    def _obs(self, rows: Optional[np.ndarray] = None) -> np.ndarray:
        """``codec421.observe(game, agent seat)`` for each game (at a decision or over)."""
        n = self.num_envs if rows is None else len(rows)
        rows = slice(None) if rows is None else rows  # every game: views, not copies
        c = codec421
        obs = np.zeros((n, c.OBS_SIZE), dtype=np.int64)
        rolling = self.cur[rows] == AGENT
        obs[:, c.HAND] = HAND_DICE[np.where(rolling, self.hand[rows], NO_HAND)]
        obs[:, c.ROLLS_USED] = np.where(rolling, self.used[rows], 0)
        obs[:, c.ROLLS_ALLOWED] = np.where(rolling, self.allowed[rows], 0)
        leads = self.leader[rows] == AGENT
        obs[:, c.IS_LEADER] = leads
        obs[:, c.LEADER_ROLLS] = np.where(leads, 0, self.n_lead[rows])
        other = c.OTHERS_START  # slot 0: the opponent (slot 1 stays zeros with two players)
        opp_hand = self.played[rows, OPP]
        opp_tokens = self.tok[rows, OPP]
        obs[:, other + c.O_PLAYED] = opp_hand != NO_HAND
        obs[:, other + 1 : other + 4] = HAND_DICE[opp_hand]
        obs[:, other + c.O_TOKENS] = opp_tokens
        obs[:, other + c.O_IN_GAME] = opp_tokens > 0  # observed only in discharge or at the end
        obs[:, other + c.O_IS_LEADER] = self.leader[rows] == OPP
        obs[:, c.TOKENS] = self.tok[rows, AGENT]
        obs[:, c.POT] = self.pot_left[rows]
        obs[:, c.PHASE] = self.phase[rows]
        obs[:, c.N_PLAYERS] = 2
        return obs

    def action_masks(self) -> np.ndarray:
        """(num_envs, 29): ``codec421.MASKS[is_leader, hand]`` at a decision, only 0 in a decided game."""
        over = self.phase == OVER
        masks = MASKS[(self.leader == AGENT).astype(np.int64), self.hand]
        masks[over] = ONLY_STOP
        return masks
