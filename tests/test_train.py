"""A short training run end to end: TensorBoard tags, checkpoints, reload, resume, bad checkpoints."""

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

from agents import make_agent
from agents.ppo_agent import CheckpointError, PPOAgent
from games.dice420 import codec as codec420
from games.dice420 import game as g
from core.dice import RandomDice
from train.__main__ import main as train_main

EVAL_TAGS = {
    "eval/vs_optimal_red",
    "eval/vs_optimal_blue",
    "eval/gap_pp_red",
    "eval/gap_pp_blue",
    "eval/vs_greedy",
    "eval/vs_foundation",
    "eval/vs_random",
    "eval/suboptimal_choices",
}


@pytest.fixture(scope="module")
def smoke_run(tmp_path_factory):
    root = tmp_path_factory.mktemp("train")
    args = [
        "ppo-420",
        "--timesteps",
        "4096",
        "--n-envs",
        "64",
        "--eval-every",
        "2048",
        "--seed",
        "1",
        "--logdir",
        str(root / "runs"),
        "--checkpoint-dir",
        str(root / "ck"),
        "--name",
        "smoke",
        "--no-progress-bar",
    ]
    assert train_main(args) == 0
    return root, args


def tags_in(logdir: Path) -> set[str]:
    tags = set()
    for event_file in logdir.rglob("events.out.tfevents.*"):
        acc = EventAccumulator(str(event_file))
        acc.Reload()
        tags |= set(acc.Tags()["scalars"])
    return tags


def test_smoke_run_logs_exact_evaluation_to_tensorboard(smoke_run):
    root, _ = smoke_run
    tags = tags_in(root / "runs")
    assert EVAL_TAGS <= tags, EVAL_TAGS - tags
    assert "rollout/ep_rew_mean" in tags


def test_smoke_run_saves_a_checkpoint_that_reloads_and_plays(smoke_run):
    root, _ = smoke_run
    ck = root / "ck"
    assert {p.name for p in ck.iterdir()} == {"smoke.pt", "smoke.json", "smoke.state"}  # no .zip, no .lock left
    meta = json.loads((ck / "smoke.json").read_text())
    assert meta["game"] == "420" and meta["preset"] == "ppo-420" and meta["seed"] == 1
    assert meta["timesteps"] >= 4096 and "torch" in meta["versions"] and meta["threads"] == 1
    assert 0 < meta["exact"]["vs_optimal_red"] < 1
    agent = make_agent("420", str(ck / "smoke.pt"))
    # it plays a whole game through the engine, always legally
    game = g.Game420(dice=RandomDice(0))
    while not game.is_over:
        mask = codec420.action_mask(game.hands[game.current_player])
        action = agent.act(codec420.observe(game, game.current_player), mask)
        assert mask[action]
        game.apply(action)
    # reloading gives the same decisions as the saved policy reported
    again = PPOAgent.load(ck / "smoke")
    obs = np.stack([codec420.encode(g.HANDS[h], g.HANDS[o]) for h, o in codec420.decision_states()[:500]])
    masks = codec420.LEGAL_MASKS[[h for h, _ in codec420.decision_states()[:500]]]
    assert np.array_equal(agent.action_probs(obs, masks), again.action_probs(obs, masks))


def test_resume_continues_from_the_saved_step(smoke_run, capsys):
    root, args = smoke_run
    resumed = root / "resumed"
    shutil.copytree(root / "ck", resumed)
    args = [a if a != str(root / "ck") else str(resumed) for a in args]
    args[args.index("--timesteps") + 1] = "6144"
    assert train_main([*args, "--resume"]) == 0
    assert "resuming" in capsys.readouterr().out
    assert json.loads((resumed / "smoke.json").read_text())["timesteps"] >= 6144


def test_resume_without_a_saved_run_is_explained(tmp_path, capsys):
    assert train_main(["ppo-420", "--resume", "--checkpoint-dir", str(tmp_path), "--no-progress-bar"]) == 2
    err = capsys.readouterr().err
    assert "no saved run" in err and len(err.strip().splitlines()) == 1


@pytest.mark.slow
def test_same_seed_same_training_run(tmp_path):
    def run(name):
        train_main(
            [
                "ppo-420",
                "--timesteps",
                "2048",
                "--n-envs",
                "32",
                "--eval-every",
                "100000",
                "--seed",
                "5",
                "--logdir",
                str(tmp_path / "runs"),
                "--checkpoint-dir",
                str(tmp_path),
                "--name",
                name,
                "--no-progress-bar",
            ]
        )
        return PPOAgent.load(tmp_path / f"{name}.pt")

    a, b = run("a"), run("b")
    obs = np.stack([codec420.encode(g.HANDS[h], g.HANDS[o]) for h, o in codec420.decision_states()[:300]])
    assert np.allclose(a.logits(obs), b.logits(obs))


def test_corrupt_and_foreign_checkpoints_are_refused_clearly(smoke_run, tmp_path):
    root, _ = smoke_run
    shutil.copy(root / "ck" / "smoke.json", tmp_path / "bad.json")
    (tmp_path / "bad.pt").write_bytes(b"not a checkpoint")
    with pytest.raises(CheckpointError, match="cannot read the weights"):
        PPOAgent.load(tmp_path / "bad.pt")
    shutil.copy(root / "ck" / "smoke.pt", tmp_path / "nometa.pt")
    with pytest.raises(CheckpointError, match="metadata"):
        PPOAgent.load(tmp_path / "nometa.pt")
    shutil.copy(root / "ck" / "smoke.pt", tmp_path / "foreign.pt")
    (tmp_path / "foreign.json").write_text(json.dumps({"format": "something-else"}))
    with pytest.raises(CheckpointError, match="not a dice-arena policy"):
        PPOAgent.load(tmp_path / "foreign.pt")
    meta = json.loads((root / "ck" / "smoke.json").read_text())
    meta["policy"]["class"] = "os.system"
    shutil.copy(root / "ck" / "smoke.pt", tmp_path / "evil.pt")
    (tmp_path / "evil.json").write_text(json.dumps(meta))
    with pytest.raises(CheckpointError, match="unknown policy class"):
        PPOAgent.load(tmp_path / "evil.pt")
    with pytest.raises(ValueError, match="unknown agent"):
        make_agent("420", str(tmp_path / "missing.pt"))


def test_help_lists_the_presets(capsys):
    with pytest.raises(SystemExit) as exit_info:
        train_main(["--help"])
    assert exit_info.value.code == 0
    assert "ppo-420" in capsys.readouterr().out


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_ppo421_smoke_run_logs_exact_evaluation_and_saves_a_playable_checkpoint(tmp_path):
    from helpers import played

    args = [
        "ppo-421",
        "--timesteps",
        "1024",
        "--n-envs",
        "4",
        "--eval-every",
        "1024",  # one exact evaluation (the final one) logs every figure: each takes seconds
        "--seed",
        "2",
        "--logdir",
        str(tmp_path / "runs"),
        "--checkpoint-dir",
        str(tmp_path / "ck"),
        "--name",
        "smoke421",
        "--no-progress-bar",
    ]
    assert train_main(args) == 0
    tags = tags_in(tmp_path / "runs")
    bots = ("heuristic", "greedy421", "cautious", "random")
    expected = {
        "eval/vs_optimal",
        "eval/gap_pp",
        "eval/exploitability_pp",
        *(f"eval/vs_{b}" for b in bots),
        *(f"eval/regret_vs_{b}_pp" for b in bots),
    }
    assert expected <= tags, expected - tags
    meta = json.loads((tmp_path / "ck" / "smoke421.json").read_text())
    assert meta["game"] == "421" and meta["env"] == {"n_players": 2, "pot": 15}
    assert 0 < meta["exact"]["vs_optimal"] < 1
    agent = make_agent("421", str(tmp_path / "ck" / "smoke421.pt"))
    with pytest.raises(CheckpointError, match="not 420"):
        make_agent("420", str(tmp_path / "ck" / "smoke421.pt"))
    game = played("421", [agent, make_agent("421", "heuristic")], seed=0)  # legal moves throughout, or it raises
    assert game.is_over


def test_ctrl_c_saves_the_run_and_resume_continues_it(tmp_path, monkeypatch, capsys):
    import train.run as run

    original = run.ExactEvalCallback._on_step

    def interrupted(self):
        if self.num_timesteps >= 2048:
            raise KeyboardInterrupt
        return original(self)

    monkeypatch.setattr(run.ExactEvalCallback, "_on_step", interrupted)
    args = [
        "ppo-420",
        "--timesteps",
        "8192",
        "--n-envs",
        "32",
        "--eval-every",
        "100000",
        "--seed",
        "3",
        "--logdir",
        str(tmp_path / "runs"),
        "--checkpoint-dir",
        str(tmp_path),
        "--name",
        "cut",
        "--no-progress-bar",
    ]
    assert train_main(args) == 130  # saved, and stopped by Ctrl-C: 128 + SIGINT
    out = capsys.readouterr().out
    assert "interrupted at" in out and "--resume" in out
    saved = json.loads((tmp_path / "cut.json").read_text())["timesteps"]
    assert 2048 <= saved < 8192 and (tmp_path / "cut.state").exists() and not (tmp_path / "cut.zip").exists()
    monkeypatch.setattr(run.ExactEvalCallback, "_on_step", original)
    assert train_main([*args, "--resume"]) == 0
    assert json.loads((tmp_path / "cut.json").read_text())["timesteps"] >= 8192


def test_an_interrupted_run_is_saved_before_its_final_evaluation(tmp_path, monkeypatch, capsys):
    # A run killed outright (SIGKILL) during its final evaluation, minutes long at a table of
    # three, keeps every step: the files as they are when that evaluation starts resume.
    import train.run as run

    original_step, original_evaluate = run.ExactEvalCallback._on_step, run.evaluate

    def interrupted(self):
        if self.num_timesteps >= 2048:
            raise KeyboardInterrupt
        return original_step(self)

    def evaluate(config, agent, final=False, exact_now=False):
        if final:  # what a kill now would leave
            (tmp_path / "killed").mkdir()
            for suffix in (".pt", ".json", ".state"):
                shutil.copy(tmp_path / "ck" / f"cut{suffix}", tmp_path / "killed")
        return original_evaluate(config, agent, final=final, exact_now=exact_now)

    monkeypatch.setattr(run.ExactEvalCallback, "_on_step", interrupted)
    monkeypatch.setattr(run, "evaluate", evaluate)
    args = ["ppo-420", "--timesteps", "8192", "--n-envs", "32", "--eval-every", "100000", "--seed", "3"]
    args += ["--logdir", str(tmp_path / "runs"), "--no-progress-bar"]
    assert train_main([*args, "--checkpoint-dir", str(tmp_path / "ck"), "--name", "cut"]) == 130
    final = json.loads((tmp_path / "ck" / "cut.json").read_text())
    killed = json.loads((tmp_path / "killed" / "cut.json").read_text())
    assert killed["timesteps"] == final["timesteps"] >= 2048 and killed["eval_history"] == final["eval_history"]
    assert "vs_optimal_red" in final["exact"] and "vs_optimal_red" not in killed["exact"]
    monkeypatch.setattr(run.ExactEvalCallback, "_on_step", original_step)
    monkeypatch.setattr(run, "evaluate", original_evaluate)
    capsys.readouterr()
    assert train_main([*args, "--checkpoint-dir", str(tmp_path / "killed"), "--name", "cut", "--resume"]) == 0
    assert f"killed/cut at {final['timesteps']} steps" in capsys.readouterr().out


def test_a_run_stops_right_after_the_update_that_makes_it_optimal(tmp_path):
    # The per-update check (solver420.suboptimal_choices), not a scheduled evaluation, stops the
    # run: the shipped (exactly optimal) weights are put in at the end of the first rollout, the
    # learning rate is 0 so the update keeps them, and the run must stop at the next step.
    import time
    from dataclasses import replace

    import torch
    from stable_baselines3.common.callbacks import BaseCallback, CallbackList

    from agents import CHECKPOINT_DIR
    from train.presets import PRESETS
    from train.run import ExactEvalCallback, RunConfig, build_model, make_env

    base = PRESETS["ppo-420"]
    preset = replace(
        base, ppo=dict(base.ppo, n_steps=16, batch_size=1024, learning_rate=0.0), lr_final=None, eval_every=10**9
    )
    config = RunConfig(
        preset,
        timesteps=64 * 16 * 5,
        seed=0,
        n_envs=64,
        logdir=tmp_path / "runs",
        checkpoint_dir=tmp_path / "ck",
        name="stop",
        progress_bar=False,
    )
    model = build_model(config, make_env(config))
    shipped = torch.load(CHECKPOINT_DIR / "ppo-420.pt", weights_only=True)

    class PutInOptimalWeights(BaseCallback):
        def _on_step(self) -> bool:
            return True

        def _on_rollout_end(self) -> None:
            self.model.policy.load_state_dict(shipped)

    evals = ExactEvalCallback(config, time.time())
    model.learn(config.timesteps, callback=CallbackList([PutInOptimalWeights(), evals]))
    assert model.num_timesteps == 64 * 16 + 64  # the first step of the second rollout
    assert [h["optimal"] for h in evals.history] == [False, True]
    assert evals.history[0]["suboptimal_choices"] > 0 and evals.history[-1]["suboptimal_choices"] == 0


@pytest.mark.slow
def test_threads_are_recorded_and_a_bad_count_is_one_line(tmp_path, capsys):
    args = [
        "ppo-420",
        "--timesteps",
        "2048",
        "--n-envs",
        "32",
        "--eval-every",
        "100000",
        "--threads",
        "2",
        "--checkpoint-dir",
        str(tmp_path / "ck"),
        "--logdir",
        str(tmp_path / "runs"),
        "--name",
        "t2",
        "--no-progress-bar",
    ]
    assert train_main(args) == 0
    assert json.loads((tmp_path / "ck" / "t2.json").read_text())["threads"] == 2
    with pytest.raises(SystemExit):
        train_main([*args, "--threads", "0"])
    err = capsys.readouterr().err.strip().splitlines()
    assert "--threads" in err[-1] and "0" in err[-1]
    # --resume takes the saved count, and refuses another in one line
    resume = [a for a in args if a not in ("--threads", "2")] + ["--resume"]
    resume[resume.index("--timesteps") + 1] = "4096"
    assert train_main([*resume, "--threads", "1"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "was trained with --threads 2, not 1" in err[0], err
    assert train_main(resume) == 0
    meta = json.loads((tmp_path / "ck" / "t2.json").read_text())
    assert meta["threads"] == 2 and meta["timesteps"] == 4096


def test_a_game_without_a_solver_or_batched_env_is_refused_in_one_line(tmp_path, monkeypatch):
    import dataclasses

    import games
    from train.checkpoint import RunError
    from train.presets import PRESETS
    from train.run import RunConfig, prepare

    config = RunConfig(PRESETS["ppo-pig"], 1024, 0, 8, tmp_path / "runs", tmp_path / "ck", "x")
    spec = games.get("pig")
    monkeypatch.setitem(games.REGISTRY, "pig", dataclasses.replace(spec, exact=""))
    with pytest.raises(RunError, match=r"^pig offers no exact solver \(GameSpec.exact\): python -m train needs"):
        prepare(config)
    monkeypatch.setitem(games.REGISTRY, "pig", dataclasses.replace(spec, exact="", batched_env=""))
    with pytest.raises(RunError, match="offers no exact solver .* and no batched env"):
        prepare(config)
    monkeypatch.setitem(games.REGISTRY, "pig", spec)
    assert prepare(config)[0].seed == 0


def test_train_env_reaches_the_training_env_and_a_bad_one_is_one_line(tmp_path, monkeypatch):
    """``Preset.train_env``: keyword arguments the training env takes (421's batched env:
    ``exploring_starts``); a name it does not take, or a game that trains on its Gymnasium
    env, is refused in one line before anything runs."""
    import dataclasses

    import games
    from train.presets import PRESETS
    from train.run import RunConfig, make_env

    def env_of(preset):
        return make_env(RunConfig(preset, 1024, 0, 8, tmp_path / "runs", tmp_path / "ck", "x"))

    ppo421 = PRESETS["ppo-421"]
    assert env_of(dataclasses.replace(ppo421, train_env={"exploring_starts": 0.25})).venv.exploring_starts == 0.25
    assert env_of(dataclasses.replace(ppo421, train_env={})).venv.exploring_starts == 0.0
    with pytest.raises(ValueError) as info:
        env_of(dataclasses.replace(ppo421, train_env={"explore": 1}))
    assert str(info.value) == (
        "preset ppo-421: train_env names 'explore', which the training env Vec421Env does not take"
    )
    live = dataclasses.replace(PRESETS["ppo-421-3p"], train_env={"exploring_starts": 0.5})
    assert env_of(live).venv.exploring_starts == 0.5
    with pytest.raises(ValueError) as info:
        env_of(dataclasses.replace(live, train_env={"explore": 1, "exploring_starts": 0.5}))
    assert (
        str(info.value)
        == "preset ppo-421-3p: train_env names 'explore', which the training env Vec421NEnv does not take"
    )
    monkeypatch.setitem(games.REGISTRY, "421", dataclasses.replace(games.get("421"), live_players=()))
    with pytest.raises(ValueError) as info:
        env_of(live)
    assert str(info.value) == (
        "preset ppo-421-3p: train_env (exploring_starts) is for a game's batched or live env, "
        "and 421 at 3 players trains on its Gymnasium env"
    )
