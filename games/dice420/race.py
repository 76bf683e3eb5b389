"""Exact outcome probabilities of N-player 420 when everyone plays the same
own-hand ("solitaire") policy.

Why this is exact and cheap.  In 420 nobody can touch another player's dice, so
a player's hand evolves by their own keeps and rolls only.  If every player's
keep depends on nothing but their own hand (a table over ``game420.HANDS``, as
``GreedyAgent`` and ``FoundationAgent`` are), then within a round the players'
races are independent, identically distributed Markov chains that start with no
hand (R1).  Write T for the turn (1, 2, 3, ...) on which such a chain first
totals exactly 20 (R5; R4 resets are just forced rerolls of all four dice).
The round is then decided by the hitting times alone: the player at position j
of the round's turn order wins on turn t iff T_j = t, every player before them
has T > t and every player after them has T >= t.  The game (R7) is a chain of
rounds among fewer and fewer players, whose order is fixed by the rotation of
Player 1, so the loser's distribution is a recursion over
(remaining seats, Player 1) with the round-win probabilities at each step.

What is exact.  ``hitting_distribution`` is the distribution of T in floating
point, computed from the engine's transition table (``solver420.T``, itself
``game420.roll_distribution``) and the engine's legal keeps, run until the mass
not yet absorbed is below 1e-17 (it decays geometrically, since every keep can
make 20 at once).  Everything after it is finite sums and products of those
numbers; there is no sampling anywhere.  This does NOT apply to policies that
look at opponents' hands (e.g. the optimal two-player bot): then the races are
coupled and this module does not apply.

Seats are 0..n-1 clockwise (R7).  "Position" means the place in a round's turn
order (0 = the round's Player 1).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Sequence

import numpy as np

from games.dice420 import solver as solver420
from agents.base import agent_name, batch_probs
from games.dice420 import codec as codec420
from games.dice420 import game as g

N_HANDS = len(g.HANDS)
MIN_PLAYERS, MAX_PLAYERS = 2, g.MAX_PLAYERS
TAIL_TOL = 1e-17  # stop once P(T > t) is below this
MAX_TURNS = 100_000  # a guard; the tail of any legal policy is gone long before
SUM_TOL = 1e-12

# Opponent hands shown to an agent to check that it ignores them: low, middle,
# high and over 20 (R4).  None totals 20: that would not be a decision state.
PROBE_OPPONENTS: tuple[g.Hand, ...] = ((1, 1, 1, 1), (2, 3, 4, 5), (1, 5, 6, 6), (4, 4, 5, 6), (6, 6, 6, 6))


# --- policies ---------------------------------------------------------------
def policy_matrix(policy) -> np.ndarray:
    """The own-hand policy as probabilities P[h, k] (126 x 14), checked.

    ``policy`` is a (126,) array of keep indices (``KEEPS``), a (126, 14) array of
    probabilities, a bot name ("greedy", "foundation", "random"), or an agent
    (read with :func:`own_hand_table`).  Rows of hands that total 20 are never
    used (the hand has already won) and are not checked.  Raises ``ValueError``
    on a wrong shape, an illegal keep, negative or non-finite probabilities, or
    a row that does not sum to 1.
    """
    if isinstance(policy, str):
        from agents import make_agent

        return own_hand_table(make_agent("420", policy, seed=0))
    if not isinstance(policy, np.ndarray) and (hasattr(policy, "act") or hasattr(policy, "action_probs")):
        return own_hand_table(policy)
    arr = np.asarray(policy)
    live = ~solver420.WIN  # hands at which a move is ever asked for
    if arr.shape == (N_HANDS,):
        if not np.issubdtype(arr.dtype, np.integer):
            raise ValueError(
                f"a keep table of shape ({N_HANDS},) must hold integer keep indices, got dtype {arr.dtype}"
            )
        bad = np.flatnonzero(live & ((arr < 0) | (arr >= g.N_ACTIONS)))
        if bad.size:
            h = int(bad[0])
            raise ValueError(
                f"keep index {int(arr[h])} for hand {g.format_hand(g.HANDS[h])} is not in 0..{g.N_ACTIONS - 1}"
            )
        probs = np.zeros((N_HANDS, g.N_ACTIONS))
        probs[np.arange(N_HANDS), np.where(live, arr, g.REROLL_ALL)] = 1.0
    elif arr.shape == (N_HANDS, g.N_ACTIONS):
        probs = np.array(arr, dtype=np.float64)
        rows = probs[live]
        if not np.all(np.isfinite(rows)) or np.any(rows < 0):
            raise ValueError("policy probabilities must be finite and non-negative")
        sums = rows.sum(axis=1)
        if np.any(np.abs(sums - 1.0) > 1e-9):
            h = int(np.flatnonzero(live)[np.argmax(np.abs(sums - 1.0))])
            raise ValueError(f"policy row of hand {g.format_hand(g.HANDS[h])} sums to {probs[h].sum()!r}, not 1")
        probs[~live] = 0.0
        probs[~live, g.REROLL_ALL] = 1.0
    else:
        raise ValueError(
            f"an own-hand policy must have shape ({N_HANDS},) (keep indices) or ({N_HANDS}, {g.N_ACTIONS}) "
            f"(probabilities over KEEPS), got {arr.shape}"
        )
    illegal = np.where(codec420.LEGAL_MASKS, 0.0, probs)
    illegal[~live] = 0.0
    if np.any(illegal > 0):
        h, k = np.argwhere(illegal > 0)[0]
        raise ValueError(
            f"illegal keep for hand {g.format_hand(g.HANDS[h])}: {g.describe_action(int(k), g.HANDS[h])} "
            f"({g.explain_illegal(g.HANDS[h], g.KEEPS[k])})"
        )
    return probs


def own_hand_table(agent, opponents: Sequence[Sequence[int]] = PROBE_OPPONENTS) -> np.ndarray:
    """An agent's policy as an own-hand table P[h, k] (126 x 14).

    Asks the agent (``action_probs`` if it has it, else ``act``; see
    ``agents.base.batch_probs``) at every hand that does not total 20, with the
    observation own hand + each of ``opponents``, and raises ``ValueError`` if
    its answer changes with the opponent's hand.  Hands that total 20 never need
    a move; they get ``REROLL_ALL``.
    """
    live = np.flatnonzero(~solver420.WIN)
    masks = codec420.LEGAL_MASKS[live]
    tables = []
    for opp in opponents:
        obs = np.stack([codec420.encode(g.HANDS[h], opp) for h in live])

        def where(i, opp=opp):
            return f"hand {g.format_hand(g.HANDS[live[i]])} against {g.format_hand(opp)}"

        tables.append(batch_probs(agent, obs, masks, where))
    for opp, table in zip(opponents[1:], tables[1:]):
        diff = np.abs(table - tables[0]).max(axis=1)
        if np.any(diff > 1e-12):
            i = int(np.argmax(diff))
            raise ValueError(
                f"{agent_name(agent)} does not play from its own hand alone: with hand "
                f"{g.format_hand(g.HANDS[live[i]])} it answers differently against {g.format_hand(opponents[0])} "
                f"and against {g.format_hand(opp)}"
            )
    probs = np.zeros((N_HANDS, g.N_ACTIONS))
    probs[live] = tables[0]
    probs[solver420.WIN, g.REROLL_ALL] = 1.0
    return policy_matrix(probs)


def two_player_table(policy) -> np.ndarray:
    """The own-hand policy expanded over the opponent axis, as ``solver420`` reads
    policies: P[h, o, k] = P[h, k] for every opponent hand o."""
    probs = policy_matrix(policy)
    return np.repeat(probs[:, None, :], N_HANDS, axis=1)


# --- one player's race ------------------------------------------------------
def hitting_distribution(policy, tail_tol: float = TAIL_TOL) -> np.ndarray:
    """dist[t - 1] = P(T = t): the turn on which a player who starts a round with
    no hand (R1) and then follows ``policy`` first totals exactly 20.

    Turn 1 is the first roll of all four dice; a hand over 20 has only the
    reroll-all keep (R4) so any policy row of such a hand is that keep.  Runs
    until P(T > t) < ``tail_tol``.
    """
    probs = policy_matrix(policy)
    step = probs @ solver420.T  # step[h, h2]: one turn from hand h
    win = solver420.WIN
    out = []
    p = solver420.FIRST_ROLL.copy()  # distribution of the hand after turn 1
    for _ in range(MAX_TURNS):
        out.append(float(p[win].sum()))
        p = np.where(win, 0.0, p)  # still racing
        if p.sum() < tail_tol:
            break
        p = p @ step
    else:
        raise RuntimeError(f"the race has not ended by turn {MAX_TURNS} (tail mass {p.sum():.3g})")
    dist = np.array(out)
    total = dist.sum()
    if abs(total - 1.0) > SUM_TOL:
        raise AssertionError(f"hitting distribution sums to {total!r}, not 1")
    return dist


def mean_hitting_time(dist: np.ndarray) -> float:
    return float(np.arange(1, len(dist) + 1) @ dist)


def round_win_probabilities(dist: np.ndarray, n: int) -> np.ndarray:
    """w[j] = P(the player at position j of the round's turn order wins the round),
    for ``n`` players whose hitting times are independent with law ``dist``.

    Position j wins on turn t iff T_j = t, T_k > t for every k < j (they had their
    t-th turn first) and T_k >= t for every k > j:

        w[j] = sum_t P(T = t) * P(T > t)^j * P(T >= t)^(n - 1 - j).

    The survival functions are summed from the tail, so they keep their
    relative precision far out.  O(len(dist) * n).
    """
    dist = np.asarray(dist, dtype=np.float64)
    if dist.ndim != 1 or np.any(dist < 0):
        raise ValueError("dist must be a 1-D array of probabilities")
    if n < 1:
        raise ValueError(f"n must be at least 1, got {n}")
    at_least = np.cumsum(dist[::-1])[::-1]  # P(T >= t)
    more = at_least - dist  # P(T > t)
    more[-1] = 0.0
    more = np.clip(more, 0.0, None)
    j = np.arange(n)[:, None]
    return (dist[None, :] * more[None, :] ** j * at_least[None, :] ** (n - 1 - j)).sum(axis=1)


# --- the game (R7) ----------------------------------------------------------
def _check_players(n_players: int, first_player: int | None) -> None:
    if not MIN_PLAYERS <= n_players <= MAX_PLAYERS:
        raise ValueError(f"n_players must be in {MIN_PLAYERS}..{MAX_PLAYERS}, got {n_players}")
    if first_player is not None and not 0 <= first_player < n_players:
        raise ValueError(f"first_player must be in 0..{n_players - 1}, got {first_player}")


def _first_players(n_players: int, first_player: int | None) -> list[int]:
    """The possible first Player 1s, equally likely. With ``None``: seat 0 for two
    players (R6, as ``Game420(2)`` does), else uniform over all seats (R7)."""
    if first_player is not None:
        return [first_player]
    return [g.RED] if n_players == 2 else list(range(n_players))


def turn_order(remaining: Sequence[int], player_one: int, n_players: int) -> list[int]:
    """The seats of a round in turn order: clockwise from ``player_one``."""
    return sorted(remaining, key=lambda s: (s - player_one) % n_players)


def next_player_one(remaining: Sequence[int], player_one: int, n_players: int) -> int:
    """R7: the next remaining player clockwise from the last round's Player 1
    (who may have just dropped out)."""
    for step in range(1, n_players):
        seat = (player_one + step) % n_players
        if seat in remaining:
            return seat
    raise ValueError("no other player remains")


class Race:
    """The exact game (R7) for ``n_players`` whose races all have hitting-time law
    ``dist`` (as :func:`hitting_distribution` gives it for a policy).

    ``round_win(m)`` holds the round-win probabilities by position for m players;
    ``loser(player_one)`` the loser's distribution by seat from the first round,
    memoised over (remaining seats, round's Player 1).
    """

    def __init__(self, n_players: int, dist: np.ndarray):
        _check_players(n_players, None)
        self.n_players = n_players
        self.dist = np.asarray(dist, dtype=np.float64)
        self._round_win = {m: round_win_probabilities(self.dist, m) for m in range(1, n_players + 1)}
        self._memo: dict[tuple[frozenset, int], np.ndarray] = {}

    def round_win(self, m: int) -> np.ndarray:
        return self._round_win[m]

    def first_round_win(self, player_one: int) -> np.ndarray:
        """P(seat s wins the first round) when ``player_one`` leads it."""
        seats = list(range(self.n_players))
        out = np.zeros(self.n_players)
        out[turn_order(seats, player_one, self.n_players)] = self._round_win[self.n_players]
        return out

    def loser(self, player_one: int, remaining: frozenset | None = None) -> np.ndarray:
        """P(seat s is the last one left) from the start of a round led by ``player_one``
        among ``remaining`` (default: everyone)."""
        remaining = frozenset(range(self.n_players)) if remaining is None else frozenset(remaining)
        key = (remaining, player_one)
        if key in self._memo:
            return self._memo[key]
        out = np.zeros(self.n_players)
        if len(remaining) == 1:
            out[next(iter(remaining))] = 1.0
        else:
            order = turn_order(remaining, player_one, self.n_players)
            for seat, w in zip(order, self._round_win[len(order)]):
                rest = remaining - {seat}
                if len(rest) == 1:  # the game is over: the one left loses
                    out[next(iter(rest))] += w
                else:
                    out += w * self.loser(next_player_one(rest, player_one, self.n_players), rest)
        self._memo[key] = out
        return out


@lru_cache(maxsize=64)
def _race(n_players: int, key: bytes) -> Race:
    return Race(n_players, hitting_distribution(np.frombuffer(key).reshape(N_HANDS, g.N_ACTIONS)))


def race(n_players: int, policy) -> Race:
    """A (cached) :class:`Race` for ``n_players`` following ``policy``."""
    _check_players(n_players, None)
    return _race(n_players, np.ascontiguousarray(policy_matrix(policy)).tobytes())


def loser_probabilities(n_players: int, policy, first_player: int | None = None) -> np.ndarray:
    """P(seat s is the last remaining player, i.e. loses), for s = 0..n_players-1.

    With ``first_player=None`` the first Player 1 is drawn uniformly (R7) and the
    result is averaged over it; with two players it is seat 0 (Red, R6), as in
    ``Game420(2)``."""
    _check_players(n_players, first_player)
    r = race(n_players, policy)
    firsts = _first_players(n_players, first_player)
    return sum(r.loser(p) for p in firsts) / len(firsts)


def first_round_win_probabilities(n_players: int, policy, first_player: int | None = None) -> np.ndarray:
    """P(seat s wins the first round, i.e. is the first to make 20)."""
    _check_players(n_players, first_player)
    r = race(n_players, policy)
    firsts = _first_players(n_players, first_player)
    return sum(r.first_round_win(p) for p in firsts) / len(firsts)


def first_player_survival(n_players: int, policy) -> float:
    """P(the game's first Player 1 does not lose). By rotation it does not matter
    which seat that is, so this is ``1 - loser_probabilities(n, policy, 0)[0]``."""
    return float(1.0 - loser_probabilities(n_players, policy, first_player=0)[0])


def first_player_first_round_win(n_players: int, policy) -> float:
    """P(the game's first Player 1 wins the first round)."""
    return float(round_win_probabilities(race(n_players, policy).dist, n_players)[0])
