"""The action-value critic (``QMlpPolicy``) and the share of each advantage taken from it
(``Preset.q_advantage``, ``train.fast.BatchedMaskablePPO.q_advantage_schedule``)."""

from dataclasses import replace

import numpy as np
import pytest
import torch

import agents
from agents.features import FastMlpPolicy, QMlpPolicy
from agents.ppo_agent import build_policy
from games.dice421.vec import Vec421Env
from train.fast import BatchedMaskablePPO
from train.presets import PRESETS, q_advantage_schedule

SPEC = {"class": "QMlpPolicy", "net_arch": {"pi": [32], "vf": [32]}, "activation": "tanh"}


def decisions(n: int = 64, seed: int = 0):
    env = Vec421Env(n, agents.bot_table("421", "heuristic"), seed=seed)
    obs = env.reset()
    return torch.as_tensor(obs, dtype=torch.float32), env.action_masks()


def test_the_critic_has_one_value_per_action_and_a_state_is_worth_the_policys_mean():
    policy = build_policy("421", SPEC)
    assert isinstance(policy, QMlpPolicy) and policy.value_net.out_features == policy.action_space.n
    obs, masks = decisions()
    torch.manual_seed(0)
    with torch.no_grad():
        actions, values, log_probs = policy(obs, action_masks=masks)
        logits, q = policy.logits_and_values(obs)
        probs = torch.softmax(torch.where(torch.as_tensor(masks), logits, -torch.inf), dim=1)
        assert torch.allclose(values.squeeze(1), (probs * q).sum(1), atol=1e-6)
        assert torch.allclose(policy.state_values(obs, masks), values, atol=1e-6)
        assert torch.equal(policy.chosen_q, q[torch.arange(len(obs)), actions])
        assert torch.as_tensor(masks)[torch.arange(len(obs)), actions].all()
        # an illegal action's value counts for nothing
        illegal = int(np.flatnonzero(~masks[0])[0])
        policy.value_net.bias[illegal] += 100.0
        assert torch.allclose(policy.state_values(obs[:1], masks[:1]), values[:1], atol=1e-5)
        assert not torch.allclose(policy.predict_values(obs[:1]), values[:1], atol=1e-3)  # no masks: every action


def test_the_update_fits_the_value_of_the_action_taken():
    policy = build_policy("421", SPEC)
    obs, masks = decisions()
    actions = torch.as_tensor([int(np.flatnonzero(m)[-1]) for m in masks])
    values, log_prob, entropy = policy.evaluate_actions(obs, actions, action_masks=masks)
    with torch.no_grad():
        _, q = policy.logits_and_values(obs)
    assert values.shape == (len(obs), 1)
    assert torch.allclose(values.squeeze(1), q[torch.arange(len(obs)), actions])
    values.sum().backward()
    assert policy.value_net.weight.grad[actions].abs().sum() > 0
    untaken = sorted(set(range(policy.action_space.n)) - set(actions.tolist()))
    assert policy.value_net.weight.grad[untaken].abs().sum() == 0
    # FastMlpPolicy's evaluate_actions is unchanged: one state value per sample
    fast = build_policy("421", {**SPEC, "class": "FastMlpPolicy"})
    assert type(fast) is FastMlpPolicy and fast.evaluate_actions(obs, actions, masks)[0].shape == (len(obs), 1)


def test_the_share_moves_over_the_run_and_must_be_a_share():
    base = PRESETS["ppo-421"]
    schedule = q_advantage_schedule(replace(base, q_advantage=0.5, q_advantage_final=0.9), 1000)
    assert schedule(0) == 0.5 and schedule(500) == pytest.approx(0.7)
    assert schedule(1000) == pytest.approx(0.9) and schedule(4000) == pytest.approx(0.9)
    assert q_advantage_schedule(replace(base, q_advantage=0.3, q_advantage_final=None), 1000)(700) == 0.3
    assert q_advantage_schedule(replace(base, q_advantage=0.0, q_advantage_final=None), 1000) is None
    with pytest.raises(ValueError, match="q_advantage and q_advantage_final are shares in 0..1"):
        q_advantage_schedule(replace(base, q_advantage=0.5, q_advantage_final=1.5), 1000)


def first_rollout(share):
    env = Vec421Env(16, agents.bot_table("421", "heuristic"), seed=0)
    model = BatchedMaskablePPO(
        QMlpPolicy,
        env,
        policy_kwargs={"net_arch": {"pi": [32], "vf": [32]}},
        n_steps=8,
        batch_size=64,
        n_epochs=1,
        seed=0,
        device="cpu",
        gae_lambda=0.7,
        gamma=1.0,
    )
    model.q_advantage_schedule = share
    start = {k: v.clone() for k, v in model.policy.state_dict().items()}
    model.learn(16 * 8)
    return model, start


def test_each_rollout_takes_that_share_of_its_advantages_from_the_critic():
    gae, _ = first_rollout(None)
    seen = []
    mixed, start = first_rollout(lambda done: seen.append(done) or 0.25)
    assert seen == [128]  # the steps done at the end of the rollout
    a, b = gae.rollout_buffer, mixed.rollout_buffer
    assert np.array_equal(a.observations, b.observations) and np.array_equal(a.actions, b.actions)
    assert np.array_equal(a.returns, b.returns)  # the critic's targets do not change
    # Q(s_t, a_t) of the network that played the rollout (the update has flattened the buffer)
    policy = mixed.policy
    policy.load_state_dict(start)
    with torch.no_grad():
        _, q = policy.logits_and_values(torch.as_tensor(b.observations.reshape(128, -1), dtype=torch.float32))
    chosen = q[torch.arange(128), torch.as_tensor(b.actions.reshape(-1)).long()].numpy()
    expected = 0.75 * a.advantages.reshape(-1) + 0.25 * (chosen - b.values.reshape(-1))
    assert np.allclose(b.advantages.reshape(-1), expected, atol=1e-5)
    assert not np.allclose(b.advantages, a.advantages, atol=1e-3)


def test_a_share_needs_an_action_value_critic():
    env = Vec421Env(16, agents.bot_table("421", "heuristic"), seed=0)
    model = BatchedMaskablePPO("MlpPolicy", env, n_steps=8, batch_size=64, n_epochs=1, seed=0, device="cpu")
    model.q_advantage_schedule = lambda done: 0.5
    with pytest.raises(ValueError, match="q_advantage needs a policy with an action-value critic"):
        model.learn(16 * 8)


def test_a_run_takes_the_share_from_its_preset(tmp_path):
    from train.run import RunConfig, build_model, make_env

    base = PRESETS["ppo-421"]
    preset = replace(base, policy={**base.policy, "class": "QMlpPolicy"}, q_advantage=0.5, q_advantage_final=0.9)
    config = RunConfig(preset, timesteps=4000, seed=0, n_envs=16, logdir=tmp_path, checkpoint_dir=tmp_path, name="x")
    model = build_model(config, make_env(config))
    assert isinstance(model.policy, QMlpPolicy)
    assert model.q_advantage_schedule(0) == 0.5 and model.q_advantage_schedule(4000) == pytest.approx(0.9)
    assert preset.learning()["q_advantage"] == 0.5 and preset.learning()["q_advantage_final"] == 0.9
