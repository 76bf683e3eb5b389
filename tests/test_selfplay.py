"""Self-play presets: the opponent pool (the exact bot, heuristic bots and frozen past
versions of the learner), refreshed as training goes, saved with the run and resumed."""

import json
from dataclasses import replace

import numpy as np
import pytest
import torch

import agents
from games.dice421 import solver as solver421
from agents.ppo_agent import PPOAgent, build_policy
from train import presets as P
from train.__main__ import main as train_main
from train.checkpoint import read_saved_meta, restore
from train.run import RunConfig, build_model, make_env
from train.selfplay import SelfPlay

POT = 5  # small tables: snapshots are quick to tabulate


@pytest.fixture
def small_selfplay(monkeypatch):
    """ppo-421-selfplay at pot 5 with a small network, rollouts of 32 x 32 steps and a
    snapshot every two rollouts."""
    base = P.PRESETS["ppo-421-selfplay"]
    small = replace(
        base,
        env={"n_players": 2, "pot": POT},
        n_envs=32,
        snapshot_every=2048,
        policy={**base.policy, "net_arch": {"pi": [16], "vf": [16]}},
        ppo={**base.ppo, "n_steps": 32, "batch_size": 256, "n_epochs": 1},
    )
    monkeypatch.setitem(P.PRESETS, "ppo-421-selfplay", small)
    return small


def argv(root, name, timesteps, *extra):
    return [
        "ppo-421-selfplay",
        "--timesteps",
        str(timesteps),
        "--eval-every",
        "100000",
        "--seed",
        "3",
        "--logdir",
        str(root / "runs"),
        "--checkpoint-dir",
        str(root / "ck"),
        "--name",
        name,
        "--no-progress-bar",
        *extra,
    ]


def test_the_self_play_preset_pool_is_a_distribution():
    preset = P.PRESETS["ppo-421-selfplay"]
    weights = P.pool_weights(preset)
    assert len(weights) == 1 + len(preset.pool) + preset.snapshots
    assert sum(weights) == pytest.approx(1.0) and weights[0] == pytest.approx(0.5)  # the optimal bot half the games
    assert P.pool_weights(P.PRESETS["ppo-421"]) == []  # no self-play
    for bad in (dict(snapshot_share=0.0), dict(snapshot_every=0), dict(pool={"heuristic": 0.9})):
        with pytest.raises(ValueError, match="preset ppo-421-selfplay"):
            P.pool_weights(replace(preset, **bad))


@pytest.mark.slow
def test_snapshots_join_the_pool_oldest_first_as_training_goes(small_selfplay, tmp_path):
    config = RunConfig(
        small_selfplay, timesteps=4 * 1024, seed=3, n_envs=32, logdir=tmp_path, checkpoint_dir=tmp_path, name="sp"
    )
    env = make_env(config)
    model = build_model(config, env)
    self_play = SelfPlay(config)
    start = solver421.policy_table(PPOAgent.from_model(model, "421"), POT)
    assert self_play.update(model) and not self_play.update(model)  # the first is due at once, the next later
    venv = env.venv
    assert len(venv._pool) == 1 + 3 + 4 and np.allclose(venv._pool_cdf[-1], 1.0)
    assert all(np.array_equal(t[0].follower, start.follower) for t in venv._pool[4:])  # all the starting learner
    assert venv._pool[0][0].name == agents.bot_table("421", "optimal", pot=POT).name
    model.learn(2048)  # long enough to change the network
    assert self_play.update(model)
    now = solver421.policy_table(PPOAgent.from_model(model, "421"), POT)
    # the learner replaces the oldest in its place; the others stay until their turn
    assert np.array_equal(venv._pool[4][0].follower, now.follower) and not np.array_equal(now.follower, start.follower)
    assert all(np.array_equal(t[0].follower, start.follower) for t in venv._pool[5:])
    assert (self_play.oldest, self_play.taken) == (1, 2)
    assert self_play.next_at == model.num_timesteps + small_selfplay.snapshot_every
    env.close()


@pytest.mark.slow
def test_a_self_play_run_saves_its_pool_and_resumes_against_it(small_selfplay, monkeypatch, tmp_path, capsys):
    # snapshots at 0 and 3,072 steps; the next is due at 6,144, after the resumed run ends
    preset = replace(small_selfplay, snapshot_every=3072)
    monkeypatch.setitem(P.PRESETS, "ppo-421-selfplay", preset)
    assert train_main(argv(tmp_path, "sp", 4096)) == 0
    state = torch.load(tmp_path / "ck" / "sp.state", weights_only=True)
    saved = state["self_play"]
    assert len(saved["snapshots"]) == 4 and saved["taken"] == 2 and saved["oldest"] == 1
    assert saved["next_at"] == 3072 + 3072
    # the snapshots are past versions: places 1-3 hold the starting network, place 0 the learner at 3,072 steps
    first, later = (build_policy("421", preset.policy, preset.env) for _ in range(2))
    first.load_state_dict(saved["snapshots"][1])
    later.load_state_dict(saved["snapshots"][0])
    assert not all(torch.equal(a, b) for a, b in zip(first.state_dict().values(), later.state_dict().values()))

    # restoring rebuilds the pool from the saved weights and gives it to the env
    config = RunConfig(
        preset,
        timesteps=5120,
        seed=3,
        n_envs=32,
        logdir=tmp_path / "runs",
        checkpoint_dir=tmp_path / "ck",
        name="sp",
        resume=True,
    )
    env = make_env(config)
    model = build_model(config, env)
    run = restore(model, env, tmp_path / "ck", "sp", read_saved_meta(tmp_path / "ck", "sp", preset), snapshots=4)
    self_play = SelfPlay(config)
    self_play.restore(model, run.self_play, "sp.state")
    assert (self_play.oldest, self_play.taken, self_play.next_at) == (1, 2, 6144)
    venv = env.venv
    assert len(venv._pool) == 8 and np.isclose(venv._pool_cdf[-1], 1.0)
    for place, weights in enumerate(saved["snapshots"]):
        policy = build_policy("421", preset.policy, preset.env)
        policy.load_state_dict(weights)
        want = solver421.policy_table(PPOAgent(policy, "421"), POT)
        assert np.array_equal(venv._pool[4 + place][0].follower, want.follower), place
    assert not np.array_equal(venv._pool[4][0].follower, venv._pool[5][0].follower)
    env.close()

    # the resumed run goes on against that pool (no snapshot is due before 6,144 steps)
    assert train_main(argv(tmp_path, "sp", 5120, "--resume")) == 0
    assert "resuming" in capsys.readouterr().out
    meta = json.loads((tmp_path / "ck" / "sp.json").read_text())
    assert meta["timesteps"] == 5120 and meta["preset"] == "ppo-421-selfplay"
    again = torch.load(tmp_path / "ck" / "sp.state", weights_only=True)["self_play"]
    assert (again["taken"], again["oldest"], again["next_at"]) == (2, 1, 6144)
    for before, after in zip(saved["snapshots"], again["snapshots"]):
        assert all(torch.equal(before[k], after[k]) for k in before)


def test_a_bad_self_play_state_is_refused_in_one_line(small_selfplay, tmp_path, capsys):
    assert train_main(argv(tmp_path, "sp", 2048)) == 0
    path = tmp_path / "ck" / "sp.state"
    state = torch.load(path, weights_only=True)
    state["self_play"]["snapshots"][1] = {k: v * float("nan") for k, v in state["self_play"]["snapshots"][1].items()}
    from agents.ppo_agent import sha256, tensor_bytes

    data = tensor_bytes(state)
    path.write_bytes(data)
    meta_path = tmp_path / "ck" / "sp.json"
    meta = json.loads(meta_path.read_text())
    meta["state_sha256"] = sha256(data)
    meta_path.write_text(json.dumps(meta))
    assert train_main(argv(tmp_path, "sp", 4096, "--resume")) != 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "self_play snapshot 1" in err[0] and "NaN" in err[0], err
