"""Ratings of a tournament's entries: Bradley-Terry from head-to-head results, and
openskill's Plackett-Luce from each game's finishing order, ranked as the game says."""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

import games as registry
from play.match import z_value

ELO_PER_NATURAL = 400.0 / math.log(10.0)  # Bradley-Terry log-odds -> Elo points
FINISH_NOTES = {
    "left": "the winners ranked by the order they left the table, then the loser",
    "tied": "the winners tied, above the loser",
    "winner": "the winner above the others, who tie",
}


def finish_ranking(game: str) -> str:
    """ "left", "tied" or "winner": how ``game``'s finishing orders rank the players (the
    registry's ``finish_ranking``)."""
    return registry.get(game).finish_ranking


def finish_ranks(order: Sequence[int], ranking: str) -> list[int]:
    """openskill's ranks (0 best) of the players of a finishing ``order`` (first to last)."""
    n = len(order)
    if ranking == "winner":
        return [0] + [1] * (n - 1)
    return list(range(n)) if ranking == "left" else [0] * (n - 1) + [1]


def openskill_ratings(log: Sequence[Sequence[int]], n_entries: int, ranking: str = "left") -> list[dict]:
    """openskill's Plackett-Luce model (mu 25, sigma 25/3 to start) updated with every
    game's finishing order in ``log`` (entries, first to last; ranked as ``ranking``
    says, see the registry's finish_ranking), in order: per entry mu, sigma and the ordinal
    mu - 3 sigma (a rating it is very likely above).

    tau (the drift of skill between games, 25/300 by default) is 0: a bot's skill
    does not change during a tournament, and with drift the last few hundred games
    would set the rating, which then wanders by about sigma with the luck of the
    dice.  The updates still depend a little on the order of the games; a
    tournament interleaves its tables so that no table comes last as a block."""
    from openskill.models import PlackettLuce

    model = PlackettLuce(tau=0.0)
    ratings = [model.rating() for _ in range(n_entries)]
    for order in log:
        teams = model.rate([[ratings[e]] for e in order], ranks=finish_ranks(order, ranking))
        for e, team in zip(order, teams):
            ratings[e] = team[0]
    return [{"mu": float(r.mu), "sigma": float(r.sigma), "ordinal": float(r.ordinal())} for r in ratings]


def bradley_terry(
    wins: np.ndarray, confidence: float = 0.95, tol: float = 1e-10, max_steps: int = 200
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Bradley-Terry ratings from head-to-head results, ``wins[i, j]`` = games i won
    against j: (rating, low, high) on the Elo scale (400 / ln 10 per unit of
    log-odds), centred on mean 0, with a ``confidence`` interval from the standard
    errors of the maximum-likelihood fit (the inverse of the Hessian).

    Each rating also carries one virtual win and one virtual loss against a
    player rated 0 (a weak prior), so that a player who won every game gets a
    finite rating with a wide interval instead of infinity; against a few hundred
    real games it moves the ratings by little.  Newton's method on a concave
    log-likelihood: a few steps.
    """
    wins = np.asarray(wins, dtype=np.float64)
    n = len(wins)
    games = wins + wins.T
    r = np.zeros(n)
    for _ in range(max_steps):
        p = 1.0 / (1.0 + np.exp(-(r[:, None] - r[None, :])))  # P(i beats j)
        own = 1.0 / (1.0 + np.exp(-r))  # P(i beats the virtual player)
        grad = (wins - games * p).sum(axis=1) + (1.0 - 2.0 * own)
        w = games * p * (1.0 - p)
        hess = w - np.diag(w.sum(axis=1) + 2.0 * own * (1.0 - own))
        step = np.linalg.solve(hess, grad)
        r = r - step
        if np.abs(step).max() < tol:
            break
    else:
        raise RuntimeError(f"Bradley-Terry fit did not converge in {max_steps} steps")
    p = 1.0 / (1.0 + np.exp(-(r[:, None] - r[None, :])))
    own = 1.0 / (1.0 + np.exp(-r))
    w = games * p * (1.0 - p)
    cov = np.linalg.inv(np.diag(w.sum(axis=1) + 2.0 * own * (1.0 - own)) - w)
    centre = np.eye(n) - 1.0 / n
    rating = centre @ r
    se = np.sqrt(np.clip(np.diag(centre @ cov @ centre.T), 0.0, None))
    z = z_value(confidence)
    return ELO_PER_NATURAL * rating, ELO_PER_NATURAL * (rating - z * se), ELO_PER_NATURAL * (rating + z * se)
