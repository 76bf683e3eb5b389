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


def _summed(features, obs: torch.Tensor, weight_t: torch.Tensor) -> torch.Tensor:
    """A first layer's sums (no bias) taken as lookups of ``features``' active rows."""
    table = features.rows_table(weight_t).contiguous()
    return torch.nn.functional.embedding_bag(features.active_rows(obs), table, mode="sum")


@pytest.mark.parametrize("extractor", [OneHotInts, ThermometerInts])
@pytest.mark.parametrize("low,high", [((0, 1), (3, 4)), ((0, 0, 0), (105, 105, 105)), ((2, 0, -3), (2, 1, 3))])
def test_a_first_layer_summed_by_lookups_is_its_product_with_the_features(extractor, low, high):
    """One row per component: its one-hot's, or its thermometer's running sum of weights;
    values outside the box read as its nearest edge, as the features do."""
    space = gym.spaces.Box(np.array(low), np.array(high), dtype=np.int64)
    features = extractor(space)
    rng = np.random.default_rng(1)
    obs = torch.as_tensor(rng.integers(np.array(low) - 2, np.array(high) + 3, size=(300, len(low))))
    weight_t = torch.as_tensor(rng.normal(size=(features.features_dim, 24)), dtype=torch.float32)
    assert features.active_rows(obs).shape == (300, len(low))
    dense = features(obs) @ weight_t
    assert torch.allclose(_summed(features, obs, weight_t), dense, atol=1e-4)
    # a wrong row is seen: each component's rows are its own
    rows = features.active_rows(obs)
    assert len(set(rows[:, 0].tolist()) & set(rows[:, -1].tolist())) == 0


def _policies(policy_class, extractor, space, n_actions: int):
    """Two copies of the same fresh network: as built, and with its first layer summed."""
    import copy

    torch.manual_seed(0)
    dense = policy_class(
        space,
        gym.spaces.Discrete(n_actions),
        lambda _: 1e-3,
        net_arch={"pi": [32, 16], "vf": [24, 16]},
        activation_fn=torch.nn.Tanh,
        features_extractor_class=extractor,
    )
    summed = copy.deepcopy(dense)
    summed.sum_first_layer()
    return dense, summed


@pytest.mark.parametrize("policy_class", ["FastMlpPolicy", "QMlpPolicy"])
@pytest.mark.parametrize("extractor", [OneHotInts, ThermometerInts])
def test_a_summed_first_layer_gives_the_networks_outputs_and_gradients(policy_class, extractor):
    """The PPO update's outputs and every weight's gradient are the dense network's, up to
    rounding; so are a rollout's values and log-probabilities."""
    from agents.features import POLICY_CLASSES

    space = gym.spaces.Box(np.array([0, 0, 1]), np.array([5, 9, 3]), dtype=np.int64)
    dense, summed = _policies(POLICY_CLASSES[policy_class], extractor, space, 7)
    assert (dense.summed_first_layer, summed.summed_first_layer) == (False, True)
    rng = np.random.default_rng(2)
    obs = torch.as_tensor(rng.integers([0, 0, 1], [6, 10, 4], size=(500, 3)))
    actions = torch.as_tensor(rng.integers(0, 7, size=500))
    grads = []
    for policy in (dense, summed):
        values, log_probs, entropy = policy.evaluate_actions(obs, actions)
        policy.zero_grad()
        (values.square().mean() - log_probs.mean() - entropy.mean()).backward()
        grads.append({name: p.grad for name, p in policy.named_parameters()})
        with torch.no_grad():
            _, rollout_values, rollout_log_probs = policy(obs, deterministic=True)
        grads[-1]["outputs"] = torch.cat([values.reshape(-1), log_probs, entropy, rollout_values.reshape(-1)])
    assert grads[0].keys() == grads[1].keys()
    for name, grad in grads[0].items():
        assert grad is not None and grad.abs().max() > 0, name
        assert torch.allclose(grads[1][name], grad, rtol=1e-4, atol=1e-6), name


def test_a_first_layer_is_summed_only_where_the_network_allows_it():
    """Features without active rows, or networks that do not start with a Linear layer on
    shared features, refuse with the reason."""
    from stable_baselines3.common.torch_layers import FlattenExtractor

    from agents.features import FastMlpPolicy

    space = gym.spaces.Box(np.array([0, 0]), np.array([3, 3]), dtype=np.int64)

    def refusal(**kwargs) -> str:
        policy = FastMlpPolicy(space, gym.spaces.Discrete(3), lambda _: 1e-3, **kwargs)
        with pytest.raises(ValueError) as info:
            policy.sum_first_layer()
        assert policy.summed_first_layer is False
        return str(info.value)

    assert refusal(features_extractor_class=FlattenExtractor) == (
        "the first layer cannot be summed by lookups: its features extractor FlattenExtractor has no "
        "active_rows and rows_table"
    )
    assert refusal(features_extractor_class=OneHotInts, net_arch={"pi": [], "vf": [8]}) == (
        "the first layer cannot be summed by lookups: the policy and value networks do not both start "
        "with a Linear layer"
    )
    assert refusal(features_extractor_class=OneHotInts, share_features_extractor=False).endswith(
        "the policy and value networks do not read the same features through SB3's MlpExtractor"
    )
