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
from agents.ppo_agent import policy_kwargs_from
from games.dice420.vec import Vec420Env
from tests.test_fast import rollout_batch_420, rollout_batch_421, twin_policies
from train.fast import BatchedMaskablePPO, EpisodeMonitor
from train.presets import PRESETS, mixed_precision_schedule
from train.run import build_model


@pytest.mark.parametrize("game", ["420", "421"])
def test_hidden_layers_in_bfloat16_leave_the_heads_and_outputs_float32(game):
    policy, _ = twin_policies(game, PRESETS[f"ppo-{game}"].policy)
    obs, _, _ = rollout_batch_421() if game == "421" else rollout_batch_420()
    with torch.no_grad():
        logits32, values32 = policy.logits_and_values(obs)
        policy.hidden_dtype = torch.bfloat16
        try:
            logits16, values16 = policy.logits_and_values(obs)
        finally:
            policy.hidden_dtype = None
        again, _ = policy.logits_and_values(obs)
    assert logits16.dtype == values16.dtype == torch.float32
    assert all(p.dtype == torch.float32 for p in policy.parameters())
    assert torch.equal(again, logits32)  # float32 again once it is unset
    assert not torch.equal(logits16, logits32)  # bfloat16 did compute the hidden layers
    # bfloat16 keeps 8 bits of each product: the outputs agree to about a percent
    scale = logits32.abs().max()
    assert (logits16 - logits32).abs().max() < 0.05 * scale
    assert (values16 - values32).abs().max() < 0.05 * values32.abs().max() + 1e-3


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


def test_the_first_share_of_a_run_trains_in_bfloat16_and_the_rest_in_float32():
    model, seen = _model(), _Seen()
    model.hidden_dtype_schedule = lambda left: torch.bfloat16 if left > 0.5 else None
    dtypes = []
    model.policy.mlp_extractor.register_forward_hook(lambda m, i, out: dtypes.append(out[0].dtype))
    model.learn(64 * 16 * 4, callback=seen)  # four rollouts and updates
    assert torch.bfloat16 in dtypes and torch.float32 in dtypes
    first32 = dtypes.index(torch.float32)
    assert set(dtypes[:first32]) == {torch.bfloat16} and set(dtypes[first32:]) == {torch.float32}
    assert seen.at_callbacks == {None}


def test_a_preset_names_a_known_precision_and_a_share_of_the_run():
    preset = replace(PRESETS["ppo-420"], mixed_precision="bfloat16")
    assert mixed_precision_schedule(replace(preset, mixed_precision=None)) is None
    whole = mixed_precision_schedule(preset)
    assert whole(1.0) == whole(1e-9) == "bfloat16"
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
