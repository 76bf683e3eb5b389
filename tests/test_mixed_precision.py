"""Mixed precision (``Preset.mixed_precision``): the hidden layers train in bfloat16, while
the weights, the heads, the losses and every evaluation stay float32."""

from __future__ import annotations

from dataclasses import replace

import pytest
import torch
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
from stable_baselines3.common.callbacks import BaseCallback

import agents
from agents.features import FastMlpPolicy
from agents.ppo_agent import game_spaces, policy_class_from, policy_kwargs_from
from games.dice420.vec import Vec420Env
from tests.test_fast import rollout_batch_420, rollout_batch_421
from train.fast import BatchedMaskablePPO, EpisodeMonitor
from train.presets import PRESETS, mixed_precision_schedule
from train.run import build_model


@pytest.mark.parametrize("game", ["420", "421"])
def test_hidden_layers_in_bfloat16_leave_the_heads_and_outputs_float32(game):
    """ppo-420's SplitMlpPolicy and ppo-421's QMlpPolicy, as their presets build them."""
    spec = PRESETS[f"ppo-{game}"].policy
    policy = policy_class_from(spec)(*game_spaces(game), lambda _: 1e-3, **policy_kwargs_from(spec))
    torch.manual_seed(0)
    for p in policy.parameters():
        p.data.normal_(0.0, 0.3)
    obs, _, _ = rollout_batch_421() if game == "421" else rollout_batch_420()

    def outputs():
        return (*policy.logits_and_values(obs), policy.predict_values(obs))

    with torch.no_grad():
        float32 = outputs()
        policy.hidden_dtype = torch.bfloat16
        try:
            bfloat16 = outputs()
        finally:
            policy.hidden_dtype = None
        again = outputs()
    assert all(p.dtype == torch.float32 for p in policy.parameters())
    for low, high, same in zip(bfloat16, float32, again):  # logits, critic, state values
        assert low.dtype == torch.float32
        assert torch.equal(same, high)  # float32 again once it is unset
        assert not torch.equal(low, high)  # bfloat16 did compute the hidden layers
        # bfloat16 keeps 8 bits of each product: the outputs agree to a few percent
        assert (low - high).abs().max() < 0.05 * high.abs().max() + 1e-3


class _Seen(BaseCallback):
    """The dtype of the policy's hidden layers at each callback, and at each of their calls."""

    def __init__(self):
        super().__init__()
        self.at_callbacks: set = set()
        self.computed: set = set()

    def _on_training_start(self) -> None:
        self.model.policy.mlp_extractor.register_forward_hook(lambda m, i, out: self.computed.add(out[0].dtype))

    def _on_step(self) -> bool:
        self.at_callbacks.add(self.model.policy.hidden_dtype)
        return True


def _model(policy_class=FastMlpPolicy, seed: int = 3):
    env = EpisodeMonitor(Vec420Env(64, agents.bot_table("420", "optimal"), seed=seed))
    model = BatchedMaskablePPO(
        policy_class,
        env,
        policy_kwargs=policy_kwargs_from(PRESETS["ppo-420"].policy),
        n_steps=16,
        batch_size=256,
        n_epochs=2,
        seed=seed,
        device="cpu",
    )
    model.hidden_dtype_schedule = lambda left: torch.bfloat16
    return model


def test_training_computes_in_bfloat16_and_callbacks_see_the_float32_network():
    model, seen = _model(), _Seen()
    model.learn(64 * 16 * 2, callback=seen)
    assert seen.computed == {torch.bfloat16}  # every rollout and update call
    assert seen.at_callbacks == {None}  # evaluations run in the callbacks
    assert model.policy.hidden_dtype is None  # and after training
    assert all(p.dtype == torch.float32 for p in model.policy.parameters())


def test_mixed_precision_runs_repeat_exactly_from_a_seed():
    weights = []
    for _ in range(2):
        model = _model(seed=4)
        model.learn(64 * 16 * 2)
        weights.append(torch.cat([p.detach().reshape(-1) for p in model.policy.parameters()]))
    assert torch.equal(weights[0], weights[1])
    plain = _model(seed=4)
    plain.hidden_dtype_schedule = None
    plain.learn(64 * 16 * 2)
    other = torch.cat([p.detach().reshape(-1) for p in plain.policy.parameters()])
    assert not torch.equal(weights[0], other)  # the setting changes what is computed


def test_mixed_precision_refuses_a_policy_without_a_hidden_dtype():
    model = _model(policy_class=MaskableActorCriticPolicy)
    with pytest.raises(ValueError, match="mixed precision needs a policy .* not MaskableActorCriticPolicy"):
        model.learn(64 * 16)


def _rows(model):
    """Every row the model's logger writes, as a list it fills."""
    from stable_baselines3.common.logger import KVWriter, Logger

    logged = []

    class Rows(KVWriter):
        def write(self, key_values, key_excluded, step=0):
            logged.append(dict(key_values))

    model.set_logger(Logger(None, [Rows()]))
    return logged


def test_the_first_share_of_a_run_trains_in_bfloat16_and_each_update_as_its_rollout():
    model, seen = _model(), _Seen()
    model.hidden_dtype_schedule = lambda left: torch.bfloat16 if left > 0.5 else None
    dtypes = []
    model.policy.mlp_extractor.register_forward_hook(lambda m, i, out: dtypes.append(out[0].dtype))
    logged = _rows(model)
    model.learn(64 * 16 * 4, callback=seen)  # four rollouts and updates
    # a rollout's 16 steps and its update's 2 passes over 4 minibatches: 24 calls each. The
    # share left is 1, 0.75, 0.5 and 0.25 at the rollouts' starts; the second update, made
    # when half the run is left, is in its rollout's bfloat16 (its old log-probabilities')
    assert dtypes == [torch.bfloat16] * 48 + [torch.float32] * 48
    assert seen.at_callbacks == {None}
    # SB3 writes an update's row with the next rollout's: the last one is not written
    assert [row["train/mixed_precision"] for row in logged if "train/mixed_precision" in row] == [1.0, 1.0, 0.0]


def test_a_resumed_run_takes_its_precision_from_the_steps_done():
    model = _model()
    model.hidden_dtype_schedule = lambda left: torch.bfloat16 if left > 0.5 else None
    dtypes = []
    model.policy.mlp_extractor.register_forward_hook(lambda m, i, out: dtypes.append(out[0].dtype))
    model.num_timesteps = 64 * 16 * 3  # as a checkpoint restores it: three quarters done
    model.learn(64 * 16, reset_num_timesteps=False)
    assert dtypes and set(dtypes) == {torch.float32}


def test_a_preset_names_a_known_precision_and_a_share_of_the_run():
    preset = replace(PRESETS["ppo-420"], mixed_precision="bfloat16")
    assert mixed_precision_schedule(replace(preset, mixed_precision=None)) is None
    whole = mixed_precision_schedule(preset)
    # the last update comes when the run is done, or a little past it (a whole rollout)
    assert whole(1.0) == whole(0.0) == whole(-0.01) == "bfloat16"
    first = mixed_precision_schedule(replace(preset, mixed_precision_share=0.75))
    # of the share of the run still to go: bfloat16 until a quarter is left
    assert first(1.0) == first(0.26) == "bfloat16" and first(0.25) is None and first(0.0) is None
    with pytest.raises(ValueError, match=r"preset ppo-420: mixed_precision is 'float16' \(known: bfloat16"):
        mixed_precision_schedule(replace(preset, mixed_precision="float16"))
    for share in (0, 1.5, True, "half"):
        with pytest.raises(
            ValueError, match=r"preset ppo-420: mixed_precision_share is a share of the run in \(0, 1\]"
        ):
            mixed_precision_schedule(replace(preset, mixed_precision_share=share))
    # a checkpoint records both; --resume checks them
    assert {"mixed_precision", "mixed_precision_share"} <= set(preset.learning())


def test_a_run_of_a_mixed_precision_preset_trains_its_hidden_layers_in_bfloat16(tmp_path):
    from train.config import RunConfig
    from train.run import make_env

    preset = replace(PRESETS["ppo-420"], mixed_precision=None)
    config = RunConfig(preset, 2048, 0, 8, tmp_path / "runs", tmp_path / "ck", "mp")
    assert build_model(config, make_env(config)).hidden_dtype_schedule is None
    config = replace(config, preset=replace(preset, mixed_precision="bfloat16", mixed_precision_share=0.75))
    schedule = build_model(config, make_env(config)).hidden_dtype_schedule
    assert schedule(1.0) == torch.bfloat16 and schedule(0.2) is None
    plain = replace(preset, mixed_precision="bfloat16", policy={**preset.policy, "class": "MlpPolicy"})
    config = replace(config, preset=plain)
    with pytest.raises(
        ValueError, match="preset ppo-420: mixed_precision needs a policy .* not MaskableActorCriticPolicy"
    ):
        build_model(config, make_env(config))
