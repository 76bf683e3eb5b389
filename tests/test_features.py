"""The generic feature extractors: what each network input says about an observation."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
import torch

from agents.features import OneHotInts, ThermometerInts


@pytest.mark.parametrize("low,high", [((0, 1), (3, 4)), ((0, 0, 0), (105, 105, 105)), ((2, 0), (2, 1))])
def test_a_thermometer_bit_says_the_value_is_at_least_its_threshold(low, high):
    space = gym.spaces.Box(np.array(low), np.array(high), dtype=np.int64)
    features = ThermometerInts(space)
    assert features.features_dim == sum(h - l for l, h in zip(low, high))
    rng = np.random.default_rng(0)
    obs = rng.integers(np.array(low), np.array(high) + 1, size=(64, len(low)))
    bits = features(torch.as_tensor(obs)).numpy()
    start = 0
    for i, (l, h) in enumerate(zip(low, high)):
        part = bits[:, start : start + h - l]
        assert (part.sum(axis=1) == obs[:, i] - l).all()  # as many ones as steps above low
        assert (np.diff(part, axis=1) <= 0).all()  # ones first: a thermometer
        start += h - l


def test_a_thermometer_holds_the_one_hot_code():
    """One-hot of each value = the difference of two neighbouring thermometer bits."""
    space = gym.spaces.Box(np.array([0, 1]), np.array([5, 3]), dtype=np.int64)
    obs = torch.tensor([[v, w] for v in range(6) for w in range(1, 4)])
    bits = ThermometerInts(space)(obs)
    hot = OneHotInts(space)(obs)
    padded = torch.cat(
        [
            torch.ones(len(obs), 1),
            bits[:, :5],
            torch.zeros(len(obs), 1),
            torch.ones(len(obs), 1),
            bits[:, 5:],
            torch.zeros(len(obs), 1),
        ],
        dim=1,
    )
    rebuilt = torch.cat([padded[:, 0:6] - padded[:, 1:7], padded[:, 7:10] - padded[:, 8:11]], dim=1)
    assert torch.equal(rebuilt, hot)
