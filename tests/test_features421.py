"""Rank421Features: the one-hot code of a 421 observation plus each hand's rank as a
thermometer, in the engine's order of hands."""

import gymnasium as gym
import numpy as np
import pytest
import torch

from agents.features import OneHotInts
from games.dice421.features import Rank421Features
from agents.ppo_agent import game_spaces
from games.dice421 import codec as c
from games.dice421 import game as g
from tests.test_fast import rollout_batch_421

N_HANDS = len(g.HANDS)
HAND_STARTS = [0, 8, 15]  # the own hand, the other slots' hands (the layout table of games/dice421/codec.py)


def features(obs: np.ndarray) -> tuple[torch.Tensor, torch.Tensor]:
    """(the one-hot part, the thermometers as (rows, seats, 56)) of observations."""
    extractor = Rank421Features(game_spaces("421")[0])
    out = extractor(torch.as_tensor(obs))
    one_hot = extractor.one_hot_dim
    return out[:, :one_hot], out[:, one_hot:].reshape(len(obs), len(HAND_STARTS), N_HANDS)


def test_the_first_part_is_the_one_hot_code_of_the_observation():
    obs, _, _ = rollout_batch_421(n=200)
    one_hot, _ = features(obs)
    assert torch.equal(one_hot, OneHotInts(game_spaces("421")[0])(obs))


def test_each_hand_of_a_real_game_shows_its_rank_and_no_hand_shows_nothing():
    obs, _, _ = rollout_batch_421(n=400)
    _, therm = features(obs)
    seen_hands = [0, 0, 0]  # by seat slot
    for row, bits in zip(obs.long().numpy(), therm):
        for seat, start in enumerate(HAND_STARTS):
            dice = tuple(int(d) for d in row[start : start + 3])
            code = bits[seat]
            # a thermometer: ones, then zeros
            ones = int(code.sum())
            assert torch.equal(code, (torch.arange(N_HANDS) < ones).float())
            if dice == (0, 0, 0):
                assert ones == 0
            else:
                seen_hands[seat] += 1
                assert ones == 1 + g.hand_rank(dice)
    assert seen_hands[0] > 200 and seen_hands[1] > 50  # own hands and the other's played hands (two players)


def test_the_higher_thermometer_is_the_hand_that_wins_the_round():
    """Every pair of hands: the engine's winner (R6, H6) has more ones, or the same hand."""
    obs = np.zeros((N_HANDS, c.OBS_SIZE), dtype=np.int64)
    for i, hand in enumerate(g.HANDS):
        obs[i, c.HAND] = sorted(hand, reverse=True)
    _, therm = features(obs)
    ones = therm[:, 0].sum(dim=1)
    assert sorted(ones.tolist()) == list(range(1, N_HANDS + 1))  # 56 distinct codes
    for i, a in enumerate(g.HANDS):
        for j, b in enumerate(g.HANDS):
            if a != b:
                winner = g._best([(0, a), (1, b)])
                assert (ones[j] > ones[i]) == (winner == 1), (a, b)


def test_dice_in_any_order_read_as_the_same_hand_and_other_shapes_are_refused():
    obs = np.zeros((3, c.OBS_SIZE), dtype=np.int64)
    obs[0, c.HAND] = (4, 2, 1)
    obs[1, c.HAND] = (1, 4, 2)
    obs[2, c.HAND] = (2, 5, 2)
    obs[2, HAND_STARTS[1] : HAND_STARTS[1] + 3] = (6, 1, 6)
    obs[2, HAND_STARTS[2] : HAND_STARTS[2] + 3] = (3, 2, 2)  # a third seat's hand
    _, therm = features(obs)
    assert int(therm[0, 0].sum()) == int(therm[1, 0].sum()) == N_HANDS  # 4-2-1, the best hand
    assert [int(therm[2, seat].sum()) for seat in range(3)] == [
        1 + g.hand_rank(h) for h in ((5, 2, 2), (6, 6, 1), (3, 2, 2))
    ]
    assert int(therm[2, 2].sum()) == 1  # 3-2-2, the lowest hand: bit 0 alone
    with pytest.raises(ValueError, match="Rank421Features reads 421 observations"):
        Rank421Features(gym.spaces.Box(0, 6, (8,), dtype=np.int64))
