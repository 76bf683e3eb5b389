"""Batched 420: many games of 2 to 8 players stepped at once with numpy, as an SB3 VecEnv.

Same game, same observation, same masks and same rewards as ``Dice420Env``
(see its docstring), but the state of every game is a few integer arrays and a
step is a handful of array operations, so MaskablePPO spends its time learning
rather than in Python loops.  The rules come from the engine: the legal keeps
(``codec420.LEGAL_MASKS``), the win test and the canonical hands are the
engine's, and dice are real dice (four per roll, the first ``4 - len(keep)``
used), so a scripted sequence plays the same game here as in ``Game420``
(R1-R7: with more than two players a round winner drops out, the others start
a new round with no hand, and the last one left loses).

**State.**  ``hands[game, seat]`` are hand indices (``NO_HAND`` = 126 before a
player's first roll of the round, or once it is out), ``remaining`` a bit mask
of the seats still in, ``cur`` the seat to move, ``round_first`` the round's
Player 1, ``n_out`` how many players have dropped out, ``seat`` the agent's
seat.  A new game plays the first roll of every player, seat by seat from
Player 1 (with two players: Red's roll for every game, then Blue's), then
``_advance`` plays, pass after pass, the agent's forced turns (one legal keep:
first rolls, R4 resets, nothing R3 lets it keep) and then one turn of every
opponent to move, until every game is at the agent's next choice or over for
the agent.  Loops run over passes and seats, never over games.

**Opponents.**  Every opponent plays one policy table.  Two players: ``(126,
126)`` keep indices or ``(126, 126, 14)`` probabilities indexed [mover's hand,
other's hand] (any agent becomes one through ``games.dice420.solver.policy_table``).
Any number of players: ``(126,)`` keep indices or ``(126, 14)`` probabilities
indexed by the mover's own hand (policies that look only at their own hand, as
the greedy and foundation bots do).  An opponent with a hand consults the table
on every turn (a valid table gives a forced hand its only keep); its first roll
of a round is played without it.  An opponent may also be a *batch policy*,
asked live: a callable ``policy(obs, masks, rng) -> keeps`` given the
observations of the movers' own seats (``codec420`` layout) and their masks,
at every turn with more than one legal keep (``agents.batch_policy`` makes one
of any agent, e.g. a frozen network for self-play).  A pool (a list of tables
and batch policies, with weights) lets every opponent seat of every new game
draw its own (``opp_index``).

**Rewards and episodes.**  The episode ends when the agent makes 20 (it drops
out and cannot lose) or is the last player left.  ``reward="outcome"``: +1 or
-1.  ``reward="rank"``: ``1 - 2 (place - 1) / (N - 1)`` for the agent's
finishing place (1 = first out, N = the loser).  With two players both are
+1/-1.  The terminal observation (``infos[i]["terminal_observation"]``) is the
table at that moment: the agent's winning hand, the others' hands as they
stood, players already out showing no hand.

**Decided games.**  A game decided before the agent's first choice shows that
position, a mask allowing only action 0, and the next step returns its reward
and ``done`` (whatever in-range action is given for it).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from gymnasium import spaces

from games.dice420 import SPEC
from games.dice420 import codec as codec420
from games.dice420 import game as g
from envs.batched import BatchedVecEnv

N = g.N_DICE
N_HANDS = len(g.HANDS)
NO_HAND = N_HANDS  # index of "no hand" in the tables below (one extra row)
WIN = np.array([g.is_win(h) for h in g.HANDS] + [False])
HAND_DICE = codec420.HAND_DICE  # (126, 4), ascending as observed
KEEP_LEN = np.array([len(k) for k in g.KEEPS])
KEEP_DICE = np.array([(*k, *(0,) * (N - len(k))) for k in g.KEEPS], dtype=np.int64)  # (14, 4)
CODE_TO_HAND, POWERS = codec420.CODE_TO_HAND, codec420.POWERS  # ascending dice -> hand index
# LEGAL[h]: legal keeps of hand h; a player with no hand rolls all four (R1).
LEGAL = np.vstack([codec420.LEGAL_MASKS, np.arange(g.N_ACTIONS) == g.REROLL_ALL])
FORCED = LEGAL.sum(axis=1) == 1  # one legal move: first roll, R4 reset, nothing R3 lets it keep
assert (LEGAL[FORCED].argmax(axis=1) == g.REROLL_ALL).all()
# What an observation shows of each hand index: the dice ascending; no hand: 1 1 1 1 with
# two players, 0 0 0 0 with more (codec420).
OBS_DICE = {
    2: np.vstack([HAND_DICE, np.ones(N, dtype=np.int64)]),
    3: np.vstack([HAND_DICE, np.zeros(N, dtype=np.int64)]),
}
RED, BLUE = g.RED, g.BLUE
SEAT_NAMES = {"red": RED, "blue": BLUE}


def next_in_table(n_players: int) -> np.ndarray:
    """``NEXT[mask, seat]``: the next seat clockwise from ``seat`` whose bit is in ``mask``
    (``seat`` itself if it is the only one; -1 for an empty mask)."""
    table = np.full((1 << n_players, n_players), -1, dtype=np.int64)
    for mask in range(1, 1 << n_players):
        for seat in range(n_players):
            table[mask, seat] = next(
                (seat + k) % n_players for k in range(1, n_players + 1) if mask >> ((seat + k) % n_players) & 1
            )
    return table


DiceFn = Callable[[np.ndarray, np.ndarray], np.ndarray]
"""dice(rows, n_dice) -> (len(rows), 4) die values 1..6; row i's first n_dice[i] are used
(the others may also be 0)."""


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
ROLL_USED = np.arange(N)[None, :] < N - KEEP_LEN[:, None]  # (14, 4): rolled die j is used


def play_keeps(hands: np.ndarray, keeps: np.ndarray, rolled: np.ndarray) -> np.ndarray:
    """New hand indices after keeping ``KEEPS[keeps]`` and taking the rest from ``rolled``."""
    from_roll = rolled[np.arange(len(keeps))[:, None], ROLL_COLUMN[keeps]]
    dice = np.where(KEEP_MASK[keeps], KEEP_DICE[keeps], from_roll)
    dice.sort(axis=1)
    return CODE_TO_HAND[(dice - 1) @ POWERS]


# KEEP_ROLL[k, code]: ``play_keeps`` as one lookup, ``code = rolled @ BASE7`` the code of the
# four rolled dice read as base-7 digits (the unused dice may read anything in 0..6; -1
# where a used die is not 1..6).
BASE7 = 7 ** np.arange(N - 1, -1, -1)
_DIGITS = np.array(list(np.ndindex(*(7,) * N)), dtype=np.int64)  # code order: digits @ BASE7
assert (_DIGITS @ BASE7 == np.arange(7**N)).all()
KEEP_ROLL = np.stack(
    [
        np.where(
            ((_DIGITS >= 1) | ~ROLL_USED[k]).all(axis=1), play_keeps(None, np.full(7**N, k), np.maximum(_DIGITS, 1)), -1
        )
        for k in range(g.N_ACTIONS)
    ]
)


def roll_hands(keeps: np.ndarray, rolled: np.ndarray) -> np.ndarray:
    """``play_keeps(_, keeps, rolled)``, by one table lookup."""
    return KEEP_ROLL[keeps, rolled @ BASE7]


def _describe_keeps(hand: int) -> str:
    h = None if hand == NO_HAND else g.HANDS[hand]
    return ", ".join(f"{k} ({g.describe_action(int(k), h)})" for k in np.flatnonzero(LEGAL[hand]))


def check_opponent_table(table, n_players: int = 2) -> tuple[np.ndarray | None, np.ndarray | None]:
    """Check an opponent policy table and return ``(keeps, cdf)``, one of them None, both
    padded with a row (and, for two-player tables, a column) for ``NO_HAND``.

    ``keeps[h(, o)]``: keep indices; ``cdf[h(, o), k]``: cumulative probabilities, set to
    ``inf`` from the last keep with probability on, so rounding never picks a keep with
    none.  Raises ``ValueError`` for a wrong shape, an illegal keep, or a probability
    row that is negative, does not sum to 1 or puts mass on an illegal keep, in a
    decision state (the mover's hand, and the other's with two players, not 20).
    """
    table = np.asarray(table)
    one, two = (N_HANDS,), (N_HANDS, N_HANDS)
    det_shapes = [one, two] if n_players == 2 else [one]
    prob_shapes = [s + (g.N_ACTIONS,) for s in det_shapes]
    if table.shape not in det_shapes + prob_shapes:
        allowed = " or ".join(str(s) for s in det_shapes + prob_shapes)
        why = (
            "; with more than two players the opponents look at their own hand only"
            if n_players > 2 and table.shape[:2] == two
            else ""
        )
        raise ValueError(
            f"the opponent must be a policy table of shape {allowed} for {n_players} players, "
            f"got shape {table.shape}{why}"
        )
    det = table.shape in det_shapes
    hand_axes = table.ndim - (0 if det else 1)
    if hand_axes == 1:  # indexed by the mover's hand only
        table = table[:, None] if det else table[:, None, :]
    decision = ~WIN[:N_HANDS, None] & ~WIN[None, :N_HANDS] if hand_axes == 2 else ~WIN[:N_HANDS, None]
    decision = np.broadcast_to(decision, table.shape[:2])

    def where(h: int, o: int) -> str:
        return f"hand {g.format_hand(g.HANDS[h])}" + (f" against {g.format_hand(g.HANDS[o])}" if hand_axes == 2 else "")

    if det:
        if table.dtype.kind == "b" or not (
            table.dtype.kind in "iu" or (table.dtype.kind == "f" and np.all(table == np.round(table)))
        ):
            raise ValueError(f"a (126, ...) opponent table holds keep indices (integers), got dtype {table.dtype}")
        keeps = table.astype(np.int64)
        in_range = (keeps >= 0) & (keeps < g.N_ACTIONS)
        legal = in_range & LEGAL[np.arange(N_HANDS)[:, None], np.where(in_range, keeps, 0)]
        bad = np.argwhere(decision & ~legal)
        if len(bad):
            h, o = bad[0]
            k = keeps[h, o]
            what = f"keep {k} ({g.describe_action(int(k), g.HANDS[h])})" if 0 <= k < g.N_ACTIONS else f"{k}"
            raise ValueError(
                f"opponent table: {what} is not legal for {where(h, o)} ({len(bad)} such states); "
                f"legal keeps: {_describe_keeps(h)}"
            )
        padded = np.full((N_HANDS + 1, table.shape[1] + 1), g.REROLL_ALL, dtype=np.int64)
        padded[:N_HANDS, : table.shape[1]] = keeps
        return (padded[:, 0] if hand_axes == 1 else padded), None
    probs = table.astype(np.float64)
    problems = (
        ("has a negative or non-finite probability", ~np.isfinite(probs).all(axis=2) | (probs < 0).any(axis=2)),
        ("does not sum to 1", np.abs(probs.sum(axis=2) - 1.0) > 1e-6),
        ("puts probability on an illegal keep", ((probs != 0) & ~LEGAL[:N_HANDS, None, :]).any(axis=2)),
    )
    for why, bad in problems:
        bad = np.argwhere(decision & bad)
        if len(bad):
            h, o = bad[0]
            raise ValueError(
                f"opponent table: the row for {where(h, o)} {why} ({len(bad)} such states): "
                f"{np.round(probs[h, o], 6).tolist()}; legal keeps: {_describe_keeps(h)}"
            )
    padded = np.zeros((N_HANDS + 1, table.shape[1] + 1, g.N_ACTIONS))
    padded[:N_HANDS, : table.shape[1]] = probs
    cdf = np.cumsum(padded, axis=2)
    last = g.N_ACTIONS - 1 - (padded[:, :, ::-1] > 0).argmax(axis=2)  # last keep with probability
    last[~(padded > 0).any(axis=2)] = 0
    cdf[np.arange(g.N_ACTIONS) >= last[:, :, None]] = np.inf
    return None, (cdf[:, 0] if hand_axes == 1 else cdf)


class Vec420Env(BatchedVecEnv):
    """``num_envs`` games of 420 among ``n_players``, the agent in one seat and one
    opponent policy in the others, for SB3.

    Arguments: ``num_envs``; ``opponent``: a policy table (see the module docstring:
    ``(126, 126)`` / ``(126, 126, 14)`` with two players, ``(126,)`` / ``(126, 14)``
    with any number); ``agent_seat``: ``"red"``, ``"blue"`` (two players), a seat
    ``0..N-1`` or ``"random"`` (drawn per game); ``seed``; ``dice``: a ``DiceFn``
    (default: the seeded generator; ``scripted_dice`` for tests); ``n_players``: 2
    to 8; ``reward``: ``"outcome"`` or ``"rank"``; ``first_players``: per game, the
    sequence of Player 1 seats of the games played in that row (tests; default:
    drawn from the generator, with two players always Red).  Illegal actions raise
    ``game420.IllegalAction``.
    """

    def __init__(
        self,
        num_envs: int,
        opponent: np.ndarray,
        agent_seat: str | int = "random",
        seed: int | None = None,
        dice: DiceFn | None = None,
        n_players: int = 2,
        reward: str = "outcome",
        first_players: Sequence[Sequence[int]] | None = None,
        weights: Sequence[float] | None = None,
    ):
        n_players = SPEC.check_players(n_players, "n_players")
        names = "'red', 'blue', 0, 1" if n_players == 2 else f"a seat 0..{n_players - 1}"
        if isinstance(agent_seat, str):
            if agent_seat != "random" and (n_players != 2 or agent_seat not in SEAT_NAMES):
                raise ValueError(f"agent_seat must be {names} or 'random', got {agent_seat!r}")
        elif (
            isinstance(agent_seat, bool)
            or not isinstance(agent_seat, (int, np.integer))
            or not 0 <= agent_seat < n_players
        ):
            raise ValueError(f"agent_seat must be {names} or 'random', got {agent_seat!r}")
        if reward not in ("outcome", "rank"):
            raise ValueError(f"reward must be 'outcome' or 'rank', got {reward!r}")
        if first_players is not None and len(first_players) != num_envs:
            raise ValueError(f"first_players needs one sequence per game ({num_envs}), got {len(first_players)}")
        low, high = codec420.observation_bounds(n_players)
        super().__init__(
            num_envs,
            spaces.Box(low, high, shape=(codec420.obs_size(n_players),), dtype=np.int64),
            spaces.Discrete(g.N_ACTIONS),
            seed,
            dice,
        )
        self.n_players = n_players
        self.agent_seat = agent_seat
        self.reward = reward
        self.opp_index = np.zeros((num_envs, n_players), dtype=np.int64)  # each seat's draw from a pool
        self.set_opponent(opponent, weights)
        places = np.arange(n_players + 1)
        # PLACE_REWARD[place]: the agent's reward for finishing in ``place`` (1..N; N = lost).
        self._place_reward = (
            1.0 - 2.0 * (places - 1) / (n_players - 1) if reward == "rank" else np.where(places == n_players, -1.0, 1.0)
        )
        self._next = next_in_table(n_players)
        # _clockwise[seat]: the seats in observation order (codec420.seats_from)
        self._clockwise = np.array([codec420.seats_from(s, n_players) for s in range(n_players)])
        self._obs_dice = OBS_DICE[min(n_players, 3)]
        self._first_players = None if first_players is None else [[int(s) for s in seq][::-1] for seq in first_players]
        n = num_envs
        self.hands = np.full((n, n_players), NO_HAND, dtype=np.int64)  # [game, seat]
        self._flat = self.hands.reshape(-1)  # a view: hands[game, seat] = _flat[game * N + seat]
        # (with two players the first 20 ends the game: ``remaining`` and ``n_out`` stay as set)
        self.remaining = np.zeros(n, dtype=np.int64)  # bit mask of the seats still in
        self.cur = np.zeros(n, dtype=np.int64)  # the seat to move
        self.round_first = np.zeros(n, dtype=np.int64)  # the round's Player 1
        self.first_player = np.zeros(n, dtype=np.int64)  # the game's Player 1
        self.n_out = np.zeros(n, dtype=np.int64)  # players who made 20 so far
        self.seat = np.zeros(n, dtype=np.int64)  # the agent's seat
        self.decided = np.zeros(n, dtype=bool)  # the agent's game ended before its next choice
        self.pending = np.zeros(n)  # its reward
        self._actions: np.ndarray | None = None

    def set_opponent(self, opponent: Any, weights: Sequence[float] | None = None) -> None:
        """Replace the opponents (e.g. for self-play): a policy table, a batch policy, or a
        pool of them (a non-empty list) from which every opponent seat of every new game
        draws one, in proportion to ``weights`` (default equal).  Checked first
        (``ValueError`` naming the pool entry); nothing changes if refused.  Games in
        progress keep their draws."""
        is_pool = isinstance(opponent, (list, tuple))
        pool = list(opponent) if is_pool else [opponent]  # a table is a numpy array
        if not pool:
            raise ValueError("the opponent pool is empty: give at least one policy table or batch policy")
        prepared = []
        for i, member in enumerate(pool):
            if callable(member):
                prepared.append(member)
                continue
            try:
                det, cdf = check_opponent_table(member, self.n_players)
            except ValueError as e:
                raise ValueError(f"pool entry {i}: {e}" if is_pool else str(e)) from None
            # indexed [mover's hand, other's hand] (two-player tables) or [mover's hand]
            prepared.append((det, cdf, (cdf.ndim == 3) if det is None else (det.ndim == 2)))
        self._set_pool(prepared, weights)

    @property
    def dice(self) -> DiceFn:
        return self._dice_override or random_dice(self.rng)

    @property
    def own(self) -> np.ndarray:
        """The agent's hand index in every game (``NO_HAND`` before its first roll)."""
        return self._flat[np.arange(self.num_envs) * self.n_players + self.seat]

    # --- game mechanics on a subset of games ---------------------------------
    def _roll(self, rows: np.ndarray, keeps: np.ndarray) -> np.ndarray:
        rolled = self.dice(rows, N - KEEP_LEN[keeps])
        if self._dice_override is None:
            return roll_hands(keeps, rolled)
        hands = roll_hands(keeps, np.clip(rolled, 0, 6))
        if (rolled < 0).any() or (rolled > 6).any() or (hands < 0).any():
            raise ValueError(f"the dice function gave values outside 1..6: {rolled.tolist()}")
        return hands

    def _play(self, rows: np.ndarray, keeps: np.ndarray):
        """The seat to move in each of ``rows`` keeps ``KEEPS[keeps]`` and rolls; a roll of 20
        wins the round (R5-R7).  Returns per row whether someone won, and, if anyone did
        (else None, None), whether the agent's game is over and the agent's reward if so."""
        seats = self.cur[rows]
        hands = self._roll(rows, keeps)
        self._flat[rows * self.n_players + seats] = hands
        won = WIN[hands]
        if self.n_players == 2:  # the other's turn, or the game is over
            self.cur[rows] = seats ^ 1
            if not won.any():
                return won, None, None
            return won, won, np.where(won, np.where(seats == self.seat[rows], 1.0, -1.0), 0.0)
        if not won.any():
            self.cur[rows] = self._next[self.remaining[rows], seats]
            return won, None, None
        go_on = ~won
        self.cur[rows[go_on]] = self._next[self.remaining[rows[go_on]], seats[go_on]]
        done = np.zeros(len(rows), dtype=bool)
        reward = np.zeros(len(rows))
        w_idx = np.flatnonzero(won)
        w, w_seats = rows[w_idx], seats[w_idx]
        self.n_out[w] += 1
        self.remaining[w] &= ~(1 << w_seats)
        agent_won = w_seats == self.seat[w]
        agent_last = self.remaining[w] == 1 << self.seat[w]
        over = agent_won | agent_last
        done[w_idx[over]] = True
        reward[w_idx[agent_won]] = self._place_reward[self.n_out[w[agent_won]]]
        reward[w_idx[agent_last & ~agent_won]] = self._place_reward[self.n_players]
        new_round = w[~over]  # the others start a new round (R7)
        if len(new_round):
            self.hands[new_round] = NO_HAND
            self.round_first[new_round] = self.cur[new_round] = self._next[
                self.remaining[new_round], self.round_first[new_round]
            ]
        return won, done, reward

    def _opponent_keeps(self, rows: np.ndarray) -> np.ndarray:
        if len(self._pool) == 1:
            return self._member_keeps(0, rows)
        keeps = np.empty(len(rows), dtype=np.int64)
        drawn = self.opp_index[rows, self.cur[rows]]
        for k in range(len(self._pool)):
            mine = np.flatnonzero(drawn == k)
            if len(mine):
                keeps[mine] = self._member_keeps(k, rows[mine])
        return keeps

    def _member_keeps(self, k: int, rows: np.ndarray) -> np.ndarray:
        """The keeps of pool member ``k`` for the movers of ``rows``."""
        member = self._pool[k]
        seats = self.cur[rows]
        at = rows * self.n_players
        h = self._flat[at + seats]
        if callable(member):  # asked live, where it has a choice
            keeps = np.full(len(rows), g.REROLL_ALL, dtype=np.int64)
            ask = np.flatnonzero(~FORCED[h])
            if len(ask):
                held = h[ask]
                got = member(self._obs(rows[ask], seats[ask]), LEGAL[held], self.rng)
                keeps[ask] = self._answers(
                    k,
                    got,
                    LEGAL[held],
                    "keep",
                    lambda i: f"for {g.format_hand(g.HANDS[held[i]])}; legal keeps: {_describe_keeps(held[i])}",
                )
            return keeps
        det, cdf, two_d = member
        index = (h, self._flat[at + (seats ^ 1)]) if two_d else (h,)
        if det is not None:
            return det[index]
        u = self.rng.random(len(rows))
        return (cdf[index] < u[:, None]).sum(axis=1)

    def _advance(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Play the agent's forced turns and the opponents' turns until the agent has a
        choice or its game is over.  Returns each row's (done, reward)."""
        done = np.zeros(len(rows), dtype=bool)
        reward = np.zeros(len(rows))
        where = np.arange(len(rows))  # positions in ``rows`` of the games still going
        while True:
            seat = self.seat[rows]
            agent_turn = self.cur[rows] == seat
            # The agent's forced turns: after one, an opponent is to move, or the agent is out.
            f = np.flatnonzero(agent_turn & FORCED[self._flat[rows * self.n_players + seat]])
            if len(f):
                _, d, r = self._play(rows[f], np.full(len(f), g.REROLL_ALL))
                agent_turn[f] = False
                if d is not None:
                    done[where[f]], reward[where[f]] = d, r
                    agent_turn[f[d]] = True  # games the agent just won leave with those at a choice
            go = ~agent_turn  # the others: the agent has a choice
            rows, where = rows[go], where[go]
            if not len(rows):
                return done, reward
            # One turn of the opponent to move.
            _, d, r = self._play(rows, self._opponent_keeps(rows))
            if d is not None:
                done[where], reward[where] = d, r
                rows, where = rows[~d], where[~d]

    def _draw_first_players(self, rows: np.ndarray) -> np.ndarray:
        if self._first_players is not None:
            out = np.zeros(len(rows), dtype=np.int64)
            for i, row in enumerate(rows):
                if not self._first_players[row]:
                    raise RuntimeError(f"first_players script of game {row} exhausted")
                out[i] = self._first_players[row].pop()
            if ((out < 0) | (out >= self.n_players)).any():
                raise ValueError(f"first_players must be seats 0..{self.n_players - 1}, got {out.tolist()}")
            return out
        if self.n_players == 2:
            return np.full(len(rows), RED, dtype=np.int64)
        return self.rng.integers(self.n_players, size=len(rows))

    def _new_games(self, rows: np.ndarray) -> None:
        """R1/R6/R7: the seats, Player 1, every player's first roll in turn from Player 1
        (Red's then Blue's with two players), then play up to the agent's first choice."""
        n = len(rows)
        if self.agent_seat == "random":
            self.seat[rows] = self.rng.integers(self.n_players, size=n)
        else:
            self.seat[rows] = SEAT_NAMES.get(self.agent_seat, self.agent_seat)
        first = self._draw_first_players(rows)
        self.first_player[rows] = self.round_first[rows] = self.cur[rows] = first
        if len(self._pool) > 1:
            self.opp_index[rows] = self._draw(self._pool_cdf, n * self.n_players).reshape(n, self.n_players)
        self.hands[rows] = NO_HAND
        self.remaining[rows] = (1 << self.n_players) - 1
        self.n_out[rows] = 0
        done = np.zeros(n, dtype=bool)
        reward = np.zeros(n)
        opening = np.arange(n)  # games still in the first rolls of the first round
        for _ in range(self.n_players):
            won, d, r = self._play(rows[opening], np.full(len(opening), g.REROLL_ALL))
            if d is not None:
                done[opening], reward[opening] = d, r
            opening = opening[~won]
            if not len(opening):
                break
        going = np.flatnonzero(~done)
        if len(going):
            done[going], reward[going] = self._advance(rows[going])
        self.decided[rows], self.pending[rows] = done, reward

    # --- VecEnv API ----------------------------------------------------------
    def _raise_illegal(self, row: int, action, why: str) -> None:
        action = action.item() if isinstance(action, np.generic) else action
        own = int(self.hands[row, self.seat[row]])
        if self.decided[row]:
            where, legal = "the game is decided (this step returns its reward and ignores the keep)", "0"
        else:
            where, legal = (
                f"the agent holds {g.format_hand(None if own == NO_HAND else g.HANDS[own])}",
                _describe_keeps(own),
            )
        raise g.IllegalAction(f"game {row}: illegal action {action!r}: {why}; {where}; legal keeps: {legal}")

    def step_wait(self):
        actions = self._pending_actions()
        rewards = np.where(self.decided, self.pending, 0.0)
        dones = self.decided.copy()
        live = np.flatnonzero(~dones)
        if len(live):
            a = actions[live]
            legal = LEGAL[self._flat[live * self.n_players + self.seat[live]], a]
            if not legal.all():
                bad = live[~legal][0]
                hand = g.HANDS[self.hands[bad, self.seat[bad]]]
                self._raise_illegal(
                    bad,
                    int(actions[bad]),
                    g.explain_illegal(hand, g.KEEPS[actions[bad]])
                    if g.is_submultiset(g.KEEPS[actions[bad]], hand)
                    else f"the hand does not hold {g.format_hand(g.KEEPS[actions[bad]])}",
                )
            _, d, r = self._play(live, a)
            going = live
            if d is not None:
                dones[live], rewards[live] = d, r
                going = live[~d]
            if len(going):
                dones[going], rewards[going] = self._advance(going)
        return self._finish_step(rewards.astype(np.float32), dones)

    def _obs(self, rows: np.ndarray | None = None, viewer: np.ndarray | None = None) -> np.ndarray:
        """``codec420.observe(game, viewer)`` (default: the agent's seat): the viewer's hand,
        then the others' clockwise."""
        rows = np.arange(self.num_envs) if rows is None else rows
        viewer = self.seat[rows] if viewer is None else viewer
        at = rows[:, None] * self.n_players + self._clockwise[viewer]
        return self._obs_dice[self._flat[at]].reshape(len(rows), -1)

    def action_masks(self) -> np.ndarray:
        masks = LEGAL[self.own]
        masks[self.decided] = LEGAL[NO_HAND]
        return masks
