"""The 420 network's split: the actor reads only the other hand (a keep's worth does
not depend on the dice thrown back), the critic reads both; and the GAE lambda
schedule of a preset."""

from dataclasses import replace
from types import SimpleNamespace

import numpy as np
import pytest
import torch
from stable_baselines3.common.logger import KVWriter, Logger

import agents
from games.dice420 import solver as solver420
from agents.features import FastMlpPolicy, SplitMlpPolicy
from agents.ppo_agent import PPOAgent, build_policy, policy_kwargs_from
from core.dice import ScriptedDice
from games.dice420 import game as g
from games.dice420.vec import Vec420Env
from train.fast import BatchedMaskablePPO
from train.presets import (
    PRESETS,
    critic_learning_rate_schedule,
    ent_coef_schedule,
    epochs_schedule,
    gae_lambda_schedule,
    learning_rate_schedule,
)

SPEC = PRESETS["ppo-420"].policy


def random_split_policy(seed: int = 0) -> SplitMlpPolicy:
    policy = build_policy("420", SPEC)
    torch.manual_seed(seed)
    for p in policy.parameters():
        p.data.normal_(0.0, 0.3)
    return policy


def test_the_ppo_420_preset_uses_the_split_network():
    assert SPEC["class"] == "SplitMlpPolicy" and SPEC["features_extractor"] == "Keep420Features"
    assert isinstance(build_policy("420", SPEC), SplitMlpPolicy)


def test_a_keep_leads_to_the_same_game_whatever_was_thrown_back():
    """The game fact the split rests on (R2), played by the engine: Red keeps 6-6 from
    6-6-5-1 in one game and from 6-6-6-1 in another; with the same dice after that,
    both games go on identically."""
    games_played = []
    for red_first in ([6, 6, 5, 1], [6, 6, 6, 1]):
        # Red's and Blue's first rolls; Red keeps 6-6 and rolls 6-1; Blue rerolls all
        # (5-5-2-2); Red keeps 6-6 and rolls 5-3: 20.
        game = g.Game420(dice=ScriptedDice([*red_first, 6, 6, 1, 1, 6, 1, 5, 5, 2, 2, 5, 3]))
        for move in [(6, 6), (), (6, 6)]:
            game.apply(g.KEEPS.index(move))
        first_keep = next(i for i, e in enumerate(game.events) if e.get("keep") == (6, 6))
        games_played.append([{k: v for k, v in e.items() if k != "before"} for e in game.events[first_keep:]])
    assert games_played[0] == games_played[1] and len(games_played[0]) == 5
    assert game.is_over and game.returns()[g.RED] == 1 and game.hands[g.RED] == (6, 6, 5, 3)


def test_the_actor_ignores_the_own_hand_and_the_critic_reads_it():
    policy = random_split_policy()
    agent = PPOAgent(policy, "420")
    states, obs, masks = solver420.decision_batch()
    other = states[:, 1] == states[0, 1]  # every own hand against one other hand
    logits = agent.logits(obs[other])
    assert other.sum() > 50
    assert np.allclose(logits, logits[0], atol=1e-6)
    with torch.no_grad():
        values = policy.predict_values(torch.as_tensor(obs[other], dtype=torch.float32)).numpy().ravel()
    assert np.ptp(values) > 1e-3
    # and the actor does read the other hand
    mine = states[:, 0] == states[0, 0]
    assert np.ptp(agent.logits(obs[mine]), axis=0).max() > 1e-3


def test_the_split_policy_refuses_an_extractor_that_is_not_split():
    kwargs = policy_kwargs_from({**SPEC, "features_extractor": "Hand420Features"})
    from agents.ppo_agent import game_spaces

    with pytest.raises(ValueError, match="two halves"):
        SplitMlpPolicy(*game_spaces("420"), lambda _: 1e-3, **kwargs)
    with pytest.raises(ValueError, match="share_features_extractor must be True"):
        SplitMlpPolicy(*game_spaces("420"), lambda _: 1e-3, share_features_extractor=False, **policy_kwargs_from(SPEC))


def test_the_split_policy_update_is_the_fast_policy_update_on_the_same_network():
    """SplitMlpPolicy only routes features: evaluate_actions is FastMlpPolicy's."""
    policy = random_split_policy(1)
    states, obs, masks = solver420.decision_batch()
    obs_t = torch.as_tensor(np.array(obs[:300]), dtype=torch.float32)
    actions = torch.as_tensor(masks[:300].argmax(axis=1), dtype=torch.float32)
    values, log_probs, entropy = policy.evaluate_actions(obs_t, actions, action_masks=masks[:300])
    features = policy.extract_features(obs_t)
    half = features.shape[1] // 2
    logits = policy.action_net(policy.mlp_extractor.policy_net(features[:, :half]))
    expected = torch.log_softmax(torch.where(torch.as_tensor(masks[:300]), logits, -1e8), dim=1)
    assert torch.allclose(log_probs, expected.gather(1, actions.long()[:, None]).squeeze(1), atol=1e-5)
    assert torch.allclose(values, policy.value_net(policy.mlp_extractor.value_net(features[:, half:])), atol=1e-6)
    assert isinstance(policy, FastMlpPolicy)


def test_gae_lambda_schedule_of_a_preset():
    preset = PRESETS["ppo-420"]
    schedule = gae_lambda_schedule(preset)
    start, end, steps = preset.ppo["gae_lambda"], preset.gae_lambda_final, preset.gae_lambda_steps
    assert schedule(0) == start
    assert schedule(steps // 2) == pytest.approx((start + end) / 2)
    assert schedule(steps) == pytest.approx(end) and schedule(10 * steps) == pytest.approx(end)
    assert gae_lambda_schedule(PRESETS["ppo-421"]) is None  # constant lambda


def test_each_rollout_takes_its_lambda_from_the_schedule():
    env = Vec420Env(16, agents.bot_table("420", "optimal"), seed=0)
    seen = []

    def schedule(done):
        seen.append(done)
        return 0.9 if done == 0 else 0.1

    model = BatchedMaskablePPO(
        "MlpPolicy", env, n_steps=8, batch_size=64, n_epochs=1, seed=0, device="cpu", gae_lambda=0.5
    )
    model.gae_lambda_schedule = schedule
    logged = []

    class Rows(KVWriter):
        def write(self, key_values, key_excluded, step=0):
            logged.append(dict(key_values))

    model.set_logger(Logger(None, [Rows()]))
    model.learn(16 * 8)
    assert seen == [0] and model.rollout_buffer.gae_lambda == 0.9
    model.learn(16 * 8, reset_num_timesteps=False)
    assert seen == [0, 128] and model.rollout_buffer.gae_lambda == 0.1 and model.gae_lambda == 0.1
    assert [row["train/gae_lambda"] for row in logged] == [0.9, 0.1]


def test_ent_coef_schedule_falls_over_the_run_and_each_update_takes_its_value():
    preset = replace(PRESETS["ppo-421"], ppo={**PRESETS["ppo-421"].ppo, "ent_coef": 0.004}, ent_coef_final=0.001)
    schedule = ent_coef_schedule(preset, 1000)
    assert schedule(0) == 0.004 and schedule(500) == pytest.approx(0.0025)
    assert schedule(1000) == pytest.approx(0.001) and schedule(5000) == pytest.approx(0.001)
    assert ent_coef_schedule(replace(preset, ent_coef_final=None), 1000) is None  # constant
    env = Vec420Env(16, agents.bot_table("420", "optimal"), seed=0)
    model = BatchedMaskablePPO("MlpPolicy", env, n_steps=8, batch_size=64, n_epochs=1, seed=0, device="cpu")
    seen = []
    model.ent_coef_schedule = lambda done: seen.append(done) or 0.25 / (1 + done)
    model.learn(16 * 8)
    assert seen == [0] and model.ent_coef == 0.25
    model.learn(16 * 8, reset_num_timesteps=False)
    assert seen == [0, 128] and model.ent_coef == 0.25 / 129


def test_the_learning_rate_falls_as_the_power_of_the_run_left(tmp_path):
    from train.run import RunConfig, build_model, make_env

    base = PRESETS["ppo-420"]
    preset = replace(base, ppo={**base.ppo, "learning_rate": 0.002}, lr_final=0.0002, lr_power=2.0)
    schedule = learning_rate_schedule(preset)  # of the share of the run left, as SB3 calls it
    assert schedule(1.0) == 0.002 and schedule(0.0) == pytest.approx(0.0002)
    assert schedule(0.5) == pytest.approx(0.0002 + 0.0018 / 4)  # a quarter of the way down at half time
    line = learning_rate_schedule(replace(preset, lr_power=1.0))
    assert line(0.5) == pytest.approx(0.0011) and line(0.25) == pytest.approx(0.0002 + 0.0018 / 4)
    assert learning_rate_schedule(replace(preset, lr_final=None)) is None  # a constant rate
    for bad in (0, -1.0, float("nan"), float("inf"), "2", True):
        with pytest.raises(ValueError, match=f"preset {base.name}: lr_power .* a positive number, got"):
            learning_rate_schedule(replace(preset, lr_power=bad))
    config = RunConfig(preset, timesteps=4000, seed=0, n_envs=16, logdir=tmp_path, checkpoint_dir=tmp_path, name="x")
    model = build_model(config, make_env(config))
    assert model.lr_schedule(1.0) == 0.002 and model.lr_schedule(0.5) == pytest.approx(0.0002 + 0.0018 / 4)


def test_the_late_updates_make_fewer_passes_at_a_rate_raised_to_match(tmp_path):
    from train.run import RunConfig, build_model, make_env

    base = PRESETS["ppo-420"]
    preset = replace(
        base,
        ppo={**base.ppo, "learning_rate": 0.002, "n_epochs": 4},
        lr_final=0.0,
        lr_power=1.0,
        n_epochs_late=1,
        late_share=0.25,
    )
    epochs = epochs_schedule(preset)  # of the share of the run left, as the learning rate
    assert [epochs(left) for left in (1.0, 0.5, 0.25, 0.2499, 0.0)] == [4, 4, 4, 1, 1]
    rate = learning_rate_schedule(preset)
    assert rate(1.0) == 0.002 and rate(0.5) == pytest.approx(0.001) and rate(0.25) == pytest.approx(0.0005)
    assert rate(0.2) == pytest.approx(4 * 0.0004)  # four times the fall's rate for a quarter of the passes
    constant = learning_rate_schedule(replace(preset, lr_final=None))  # a constant rate, raised late
    assert constant(1.0) == 0.002 and constant(0.1) == pytest.approx(0.008)
    assert epochs_schedule(base) is None and base.n_epochs_late is None
    for bad in (0, -2, 1.5, "2", True):
        with pytest.raises(ValueError, match=f"preset {base.name}: n_epochs_late is a number of passes"):
            epochs_schedule(replace(preset, n_epochs_late=bad))
    for bad in (0, -0.5, 1.5, float("nan"), "0.5", True):
        with pytest.raises(ValueError, match=f"preset {base.name}: late_share is a share of the run in"):
            learning_rate_schedule(replace(preset, late_share=bad))
    # a run: 4 rollouts of 16 x 8 steps; its updates happen with 3/4, 1/2, 1/4 and none of it left
    preset = replace(preset, ppo={**preset.ppo, "n_steps": 8, "batch_size": 64}, late_share=0.5, n_epochs_late=2)
    config = RunConfig(preset, timesteps=512, seed=0, n_envs=16, logdir=tmp_path, checkpoint_dir=tmp_path, name="x")
    model = build_model(config, make_env(config))
    logged = []

    class Rows(KVWriter):
        def write(self, key_values, key_excluded, step=0):
            logged.append(dict(key_values))

    model.set_logger(Logger(None, [Rows()]))
    model.learn(512)
    assert model._n_updates == 4 + 4 + 2 + 2  # SB3 counts the passes
    updates = [row for row in logged if "train/n_epochs" in row]  # SB3 writes an update's row with the next
    assert [row["train/n_epochs"] for row in updates] == [4, 4, 2]
    assert [row["train/learning_rate"] for row in updates] == pytest.approx([0.0015, 0.001, 0.001])


def test_the_critic_may_learn_at_a_rate_of_its_own(tmp_path):
    from train.run import RunConfig, build_model, make_env

    base = PRESETS["ppo-420"]
    preset = replace(
        base,
        ppo={**base.ppo, "learning_rate": 0.002, "n_epochs": 4, "n_steps": 8, "batch_size": 64},
        lr_final=0.0,
        lr_power=2.0,
        critic_lr_power=1.0,
        n_epochs_late=2,
        late_share=0.5,
    )
    actor, critic = learning_rate_schedule(preset), critic_learning_rate_schedule(preset)
    assert actor(1.0) == critic(1.0) == 0.002
    assert actor(0.75) == pytest.approx(0.002 * 0.75**2) and critic(0.75) == pytest.approx(0.002 * 0.75)
    assert critic(0.25) == pytest.approx(2 * 0.002 * 0.25)  # the late factor too (4 passes, then 2)
    assert critic(0.0) == actor(0.0) == 0.0
    assert critic_learning_rate_schedule(base) is None and base.critic_lr_power is None
    for bad in (0, -1.0, float("nan"), float("inf"), "1", True):
        with pytest.raises(ValueError, match=f"preset {base.name}: critic_lr_power .* a positive number, got"):
            critic_learning_rate_schedule(replace(preset, critic_lr_power=bad))
    for end in (None, 0.0001):
        with pytest.raises(ValueError, match=f"critic_lr_power needs .* lr_final 0.0, got lr_final {end!r}"):
            critic_learning_rate_schedule(replace(preset, lr_final=end))
    # a run of 4 rollouts of 16 x 8 steps: the critic's weights in the optimizer's second group
    config = RunConfig(preset, timesteps=512, seed=0, n_envs=16, logdir=tmp_path, checkpoint_dir=tmp_path, name="x")
    model = build_model(config, make_env(config))
    groups = model.policy.optimizer.param_groups
    named = dict(model.policy.named_parameters())
    critic_names = [n for n in named if n.startswith(("mlp_extractor.value_net.", "value_net."))]
    assert len(groups) == 2 and len(critic_names) == 4
    assert [id(p) for p in groups[1]["params"]] == [id(named[n]) for n in critic_names]
    assert {id(p) for p in groups[0]["params"]} == {id(p) for n, p in named.items() if n not in critic_names}
    logged = []

    class Rows(KVWriter):
        def write(self, key_values, key_excluded, step=0):
            logged.append(dict(key_values))

    model.set_logger(Logger(None, [Rows()]))
    before = {n: p.detach().clone() for n, p in named.items()}
    model.learn(512)
    updates = [row for row in logged if "train/critic_learning_rate" in row]
    # updates with 3/4, 1/2, 1/4 and none of the run left; SB3 writes an update's row with the next
    assert [row["train/critic_learning_rate"] for row in updates] == pytest.approx([0.0015, 0.001, 0.001])
    assert [row["train/learning_rate"] for row in updates] == pytest.approx([0.001125, 0.0005, 0.00025])
    assert groups[0]["lr"] == groups[1]["lr"] == 0.0  # the last update's, with none of the run left
    assert all(not torch.equal(before[n], p) for n, p in named.items() if n in critic_names)  # both learn
    assert not torch.equal(before["action_net.weight"], named["action_net.weight"])
    with pytest.raises(ValueError, match="Linear has no critic weights apart from the actor's"):
        BatchedMaskablePPO.split_critic_rate(SimpleNamespace(policy=torch.nn.Linear(2, 2)), critic)


def test_a_run_takes_its_ent_coef_schedule_from_its_preset(tmp_path):
    from train.run import RunConfig, build_model, make_env

    base = PRESETS["ppo-420"]
    preset = replace(base, ppo={**base.ppo, "ent_coef": 0.01}, ent_coef_final=0.0)
    config = RunConfig(preset, timesteps=4000, seed=0, n_envs=16, logdir=tmp_path, checkpoint_dir=tmp_path, name="x")
    model = build_model(config, make_env(config))
    assert model.ent_coef_schedule(0) == 0.01 and model.ent_coef_schedule(2000) == pytest.approx(0.005)
    assert model.ent_coef_schedule(4000) == 0.0
    config = replace(config, preset=base)
    assert build_model(config, make_env(config)).ent_coef_schedule is None
