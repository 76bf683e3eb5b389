"""Checkpoints: --resume runs no code from any file, a crash mid-save keeps the last good
checkpoint, runs do not overwrite each other or escape their folder, a resumed run reads
as one run, and the policy loader checks what it reads before it builds or loads it."""

import base64
import fcntl
import hashlib
import io
import json
import os
import pickle
import re
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import zipfile
from dataclasses import replace
from pathlib import Path

import pytest
import torch

from agents import CHECKPOINT_DIR, make_agent
from agents.ppo_agent import CheckpointError, PPOAgent, json_bytes
from games.dice420 import codec as codec420
from games.dice420 import game as g
from core.dice import RandomDice
from core.preset import Preset
from core.spec import names as registered_games
from train import checkpoint
from train.__main__ import main as train_main
from train.presets import PRESETS

ROOT = Path(__file__).resolve().parent.parent


def argv(root: Path, name: str, *extra: str, timesteps: int = 4096) -> list[str]:
    """A small ppo-420 run in ``root`` (checkpoints in root/ck, TensorBoard in root/runs);
    a rollout is 64 steps of timesteps / 64 games (so a run takes exactly ``timesteps``)."""
    return [
        "ppo-420",
        "--timesteps",
        str(timesteps),
        "--n-envs",
        str(max(timesteps // 64, 1)),
        "--eval-every",
        "2048",
        "--logdir",
        str(root / "runs"),
        "--checkpoint-dir",
        str(root / "ck"),
        "--name",
        name,
        "--no-progress-bar",
        *extra,
    ]


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """A finished small run named r (seed 1), never modified by the tests: copy it first."""
    root = tmp_path_factory.mktemp("saved")
    assert train_main([*argv(root, "r"), "--seed", "1"]) == 0
    return root


def copy_run(saved: Path, tmp_path: Path) -> Path:
    shutil.copytree(saved / "ck", tmp_path / "ck")
    return tmp_path


def plays_a_game(path: Path) -> PPOAgent:
    """The checkpoint at ``path`` plays a whole 420 game, always legally."""
    agent = make_agent("420", str(path))
    game = g.Game420(dice=RandomDice(0))
    while not game.is_over:
        mask = codec420.action_mask(game.hands[game.current_player])
        action = agent.act(codec420.observe(game, game.current_player), mask)
        assert mask[action]
        game.apply(action)
    return agent


def one_line(text: str) -> str:
    lines = text.strip().splitlines()
    assert len(lines) == 1, text
    return lines[0]


def rewrite_state(ck: Path, name: str, meta_too: bool = True, **changes) -> None:
    """Change entries of NAME.state and keep NAME.json's checksum (and, with ``meta_too``,
    its step) in step with it, as a save would have written them."""
    state = torch.load(ck / f"{name}.state", weights_only=True)
    state.update(changes)
    buffer = io.BytesIO()
    torch.save(state, buffer)
    (ck / f"{name}.state").write_bytes(buffer.getvalue())
    meta = json.loads((ck / f"{name}.json").read_text())
    meta["state_sha256"] = hashlib.sha256(buffer.getvalue()).hexdigest()
    if meta_too and "num_timesteps" in changes:
        meta["timesteps"] = changes["num_timesteps"]
    (ck / f"{name}.json").write_text(json.dumps(meta))


# --- 1. --resume runs no code -------------------------------------------------------------


class _Payload:
    """Unpickled, it creates the file ``marker``: a stand-in for any code."""

    def __init__(self, marker: str):
        self.marker = marker

    def __reduce__(self):
        return (open, (self.marker, "w"))


def write_malicious_zip(path: Path, marker: Path) -> None:
    """An SB3 save whose ``data`` holds a pickled payload, as SB3's ``load`` unpickles it."""
    payload = base64.b64encode(pickle.dumps(_Payload(str(marker)))).decode()
    data = {
        "policy_class": {":type:": "<class 'type'>", ":serialized:": payload},
        "num_timesteps": 0,
        "_total_timesteps": 0,
    }
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("data", json.dumps(data))


def test_the_malicious_zip_would_run_its_payload_if_unpickled(tmp_path):
    marker = tmp_path / "ran"
    write_malicious_zip(tmp_path / "x.zip", marker)
    with zipfile.ZipFile(tmp_path / "x.zip") as archive:
        data = json.loads(archive.read("data"))
    pickle.loads(base64.b64decode(data["policy_class"][":serialized:"])).close()
    assert marker.exists()  # so the tests below would notice if --resume unpickled it


@pytest.mark.slow
def test_resume_never_reads_name_zip(saved, tmp_path, capsys):
    root = copy_run(saved, tmp_path)
    marker = tmp_path / "payload-ran"
    write_malicious_zip(root / "ck" / "r.zip", marker)
    try:
        code = train_main(argv(root, "r", "--resume", timesteps=6144))
    finally:
        assert not marker.exists(), "--resume unpickled NAME.zip"
    assert code == 0
    assert "resuming" in capsys.readouterr().out
    assert json.loads((root / "ck" / "r.json").read_text())["timesteps"] >= 6144


def test_a_run_saved_only_as_zip_is_refused_not_unpickled(tmp_path, capsys):
    (tmp_path / "ck").mkdir()
    marker = tmp_path / "payload-ran"
    write_malicious_zip(tmp_path / "ck" / "old.zip", marker)
    try:
        code = train_main(argv(tmp_path, "old", "--resume"))
    finally:
        assert not marker.exists(), "--resume unpickled NAME.zip"
    assert code == 2
    assert "no longer reads" in one_line(capsys.readouterr().err)


def test_training_writes_no_zip(saved):
    assert not list((saved / "ck").glob("*.zip"))


def test_resume_restores_the_weights_optimizer_counters_and_random_states(saved, tmp_path):
    from train.checkpoint import read_saved_meta, restore
    from train.presets import PRESETS
    from train.run import RunConfig, build_model, make_env

    ck = saved / "ck"
    state = torch.load(ck / "r.state", weights_only=True)
    weights = torch.load(ck / "r.pt", weights_only=True)
    meta = json.loads((ck / "r.json").read_text())
    config = RunConfig(
        PRESETS["ppo-420"],
        timesteps=8192,
        seed=1,
        n_envs=64,
        logdir=tmp_path / "runs",
        checkpoint_dir=ck,
        name="r",
        resume=True,
    )
    env = make_env(config)
    model = build_model(config, env)  # fresh, from the preset
    assert model.num_timesteps == 0 and not model.policy.optimizer.state_dict()["state"]
    run = restore(model, env, ck, "r", read_saved_meta(ck, "r", config.preset))

    assert model.num_timesteps == state["num_timesteps"] == meta["timesteps"] == run.num_timesteps >= 4096
    assert model._n_updates == state["n_updates"] > 0
    optimizer = model.policy.optimizer.state_dict()["state"]
    assert optimizer and optimizer.keys() == state["optimizer"]["state"].keys()
    for index, entry in state["optimizer"]["state"].items():
        assert entry.keys() == optimizer[index].keys()
        for key, tensor in entry.items():
            assert torch.equal(optimizer[index][key], tensor), (index, key)
    current = model.policy.state_dict()
    assert all(torch.equal(current[k], v) for k, v in weights.items())
    assert torch.equal(torch.get_rng_state(), state["rng"]["torch"])
    assert run.history == meta["eval_history"] and run.wall_seconds == state["wall_seconds"]
    env.close()


def test_a_run_whose_critic_has_a_rate_of_its_own_resumes_with_both_groups(tmp_path, monkeypatch):
    from train.checkpoint import read_saved_meta, restore
    from train.run import RunConfig, build_model, make_env

    preset = replace(PRESETS["ppo-420"], lr_final=0.0, lr_power=2.0, critic_lr_power=1.0)
    monkeypatch.setitem(PRESETS, "ppo-420", preset)
    assert train_main([*argv(tmp_path, "c"), "--seed", "1"]) == 0
    ck = tmp_path / "ck"
    saved = torch.load(ck / "c.state", weights_only=True)["optimizer"]
    assert len(saved["param_groups"]) == 2 and saved["state"]
    config = RunConfig(
        preset, timesteps=8192, seed=1, n_envs=64, logdir=tmp_path / "runs", checkpoint_dir=ck, name="c", resume=True
    )
    env = make_env(config)
    model = build_model(config, env)
    restore(model, env, ck, "c", read_saved_meta(ck, "c", preset))
    restored = model.policy.optimizer.state_dict()
    assert [g["params"] for g in restored["param_groups"]] == [g["params"] for g in saved["param_groups"]]
    for index, entry in saved["state"].items():
        assert all(torch.equal(restored["state"][index][key], tensor) for key, tensor in entry.items())
    env.close()
    assert train_main(argv(tmp_path, "c", "--resume", timesteps=8192)) == 0
    assert json.loads((ck / "c.json").read_text())["training"]["critic_lr_power"] == 1.0


# --- 2. a crash during a save keeps the last good checkpoint --------------------------------


def kill_in_second_save(tmp_path: Path, name: str, pause: str) -> None:
    """Train run ``name`` in a subprocess whose second save pauses where ``pause`` says
    (DICE_ARENA_TEST_SAVE_PAUSE, train/checkpoint.py), and kill it there."""
    process = subprocess.Popen(
        [sys.executable, "-m", "train", *argv(tmp_path, name)],
        cwd=ROOT,
        env=dict(os.environ, DICE_ARENA_TEST_SAVE_PAUSE=pause),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        seen = []
        for line in process.stderr:
            seen.append(line)
            if "DICE_ARENA_TEST_SAVE_PAUSE: save 2 paused" in line:
                break
        else:
            pytest.fail("the run ended without pausing in its second save:\n" + "".join(seen)[-3000:])
        process.send_signal(signal.SIGKILL)
        assert process.wait() == -signal.SIGKILL
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        process.stderr.close()


@pytest.mark.slow
def test_a_run_killed_in_the_middle_of_a_save_leaves_the_previous_checkpoint_whole(tmp_path, capsys):
    # The run's second save (its evaluation at step 2,112) pauses after writing the new
    # weights and is killed there.
    kill_in_second_save(tmp_path, "k", "2")

    ck = tmp_path / "ck"
    assert list(ck.glob(".k.tmp-*"))  # the save was cut off with its new files half made
    meta = json.loads((ck / "k.json").read_text())
    assert meta["timesteps"] == 64  # the first save, whole
    plays_a_game(ck / "k.pt")
    assert train_main(argv(tmp_path, "k", "--resume")) == 0
    assert "resuming" in capsys.readouterr().out
    assert json.loads((ck / "k.json").read_text())["timesteps"] >= 4096
    assert not list(ck.glob(".k.tmp-*")) and not (ck / "k.lock").exists()


@pytest.mark.slow
def test_a_run_killed_right_after_its_save_commits_reads_as_the_new_checkpoint(tmp_path, capsys):
    # The second save is killed after the new metadata is renamed into place (the
    # commit point) but before the new weights and state replace the old ones.
    kill_in_second_save(tmp_path, "c", "2@committed")

    ck = tmp_path / "ck"
    meta = json.loads((ck / "c.json").read_text())
    assert meta["timesteps"] > 64  # the second save is the checkpoint now
    assert (ck / ".c.pending.pt").exists()
    pending = ck / ".c.pending.state"  # the state differs between saves (its step count)
    assert hashlib.sha256((ck / "c.state").read_bytes()).hexdigest() != meta["state_sha256"]
    assert hashlib.sha256(pending.read_bytes()).hexdigest() == meta["state_sha256"]
    agent = PPOAgent.load(ck / "c.pt")
    assert agent.metadata["timesteps"] == meta["timesteps"]
    plays_a_game(ck / "c.pt")
    assert train_main(argv(tmp_path, "c", "--resume")) == 0
    out = capsys.readouterr().out
    assert "resuming" in out
    assert not list(ck.glob(".c.*")) and not (ck / "c.lock").exists()
    final = json.loads((ck / "c.json").read_text())
    assert hashlib.sha256((ck / "c.pt").read_bytes()).hexdigest() == final["weights_sha256"]


def test_pending_files_of_a_save_that_never_committed_are_removed(saved, tmp_path):
    ck = copy_run(saved, tmp_path) / "ck"
    name = "r"
    before = (ck / f"{name}.pt").read_bytes()
    (ck / f".{name}.pending.pt").write_bytes(b"not committed")
    (ck / f".{name}.pending.state").write_bytes(b"not committed either")
    assert PPOAgent.load(ck / f"{name}.pt").metadata["name"]  # the committed weights load
    checkpoint.clean_temporaries(ck, name)
    assert not list(ck.glob(f".{name}.*"))
    assert (ck / f"{name}.pt").read_bytes() == before


def test_weights_and_metadata_of_different_saves_are_refused(saved, tmp_path, capsys):
    root = copy_run(saved, tmp_path)
    ck = root / "ck"
    weights = torch.load(ck / "r.pt", weights_only=True)
    key = next(iter(weights))
    weights[key] = weights[key] + 0.5  # other (finite) weights than the metadata's
    torch.save(weights, ck / "r.pt")
    with pytest.raises(CheckpointError, match="weights_sha256"):
        PPOAgent.load(ck / "r.pt")
    assert train_main(argv(root, "r", "--resume", timesteps=8192)) == 2
    assert "weights_sha256" in one_line(capsys.readouterr().err)


def test_a_training_state_of_another_save_is_refused(saved, tmp_path, capsys):
    root = copy_run(saved, tmp_path)
    ck = root / "ck"
    state = torch.load(ck / "r.state", weights_only=True)
    state["n_updates"] += 2
    torch.save(state, ck / "r.state")  # NAME.json still has the checksum of the other save
    assert train_main(argv(root, "r", "--resume", timesteps=8192)) == 2
    assert "state_sha256" in one_line(capsys.readouterr().err)


# --- 3. no run overwrites another ---------------------------------------------------------


def test_an_existing_run_is_kept_unless_resume_or_overwrite_is_given(saved, tmp_path, capsys):
    root = copy_run(saved, tmp_path)
    ck = root / "ck"
    before = {p.name: p.read_bytes() for p in ck.iterdir()}
    assert train_main(argv(root, "r", timesteps=1024)) == 2
    err = one_line(capsys.readouterr().err)
    assert "already exists" in err and "--resume" in err and "--overwrite" in err
    assert {p.name: p.read_bytes() for p in ck.iterdir()} == before
    assert train_main(argv(root, "r", "--overwrite", timesteps=1024)) == 0
    assert json.loads((ck / "r.json").read_text())["timesteps"] == 1024


def test_resume_and_overwrite_together_are_refused(tmp_path):
    with pytest.raises(SystemExit) as exit_info:
        train_main(argv(tmp_path, "x", "--resume", "--overwrite"))
    assert exit_info.value.code == 2


def test_a_run_holds_its_name_while_it_trains(tmp_path, monkeypatch, capsys):
    from train import run

    original = run.ExactEvalCallback._on_step
    second = []

    def start_the_same_run_again(self):
        if not second:
            second.append(train_main(argv(tmp_path, "busy", "--overwrite", timesteps=1024)))
        return original(self)

    monkeypatch.setattr(run.ExactEvalCallback, "_on_step", start_the_same_run_again)
    assert train_main(argv(tmp_path, "busy", timesteps=1024)) == 0
    assert second == [2]
    assert "already training" in one_line(capsys.readouterr().err)
    assert not (tmp_path / "ck" / "busy.lock").exists()  # released and removed at the end


def test_a_lock_held_by_another_process_refuses_the_run(tmp_path, capsys):
    (tmp_path / "ck").mkdir()
    with open(tmp_path / "ck" / "held.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        assert train_main(argv(tmp_path, "held", timesteps=1024)) == 2
    assert "already training" in one_line(capsys.readouterr().err)
    assert not (tmp_path / "ck" / "held.pt").exists()
    assert train_main(argv(tmp_path, "held", timesteps=1024)) == 0  # once it is free


# --- 4. names stay in their folders -------------------------------------------------------


@pytest.mark.parametrize("name", ["../x", "../../x", "a/b", "/tmp/x", ".hidden", "..", "", "x" * 101, "a b", "a\nb"])
def test_a_name_that_is_not_a_plain_file_name_is_refused(tmp_path, capsys, name):
    inner = tmp_path / "inner" / "deeper"
    inner.mkdir(parents=True)
    assert train_main(argv(inner, name, timesteps=1024)) == 2
    assert "--name" in one_line(capsys.readouterr().err)
    assert [p for p in tmp_path.rglob("*")] == [tmp_path / "inner", inner]  # nothing written anywhere


def test_names_with_dots_name_their_own_files(tmp_path):
    assert train_main(argv(tmp_path, "v1.2_b-3", timesteps=1024)) == 0
    assert sorted(p.name for p in (tmp_path / "ck").iterdir()) == ["v1.2_b-3.json", "v1.2_b-3.pt", "v1.2_b-3.state"]
    plays_a_game(tmp_path / "ck" / "v1.2_b-3.pt")


def test_a_link_at_a_checkpoint_file_is_replaced_not_written_through(saved, tmp_path):
    root = copy_run(saved, tmp_path)
    ck = root / "ck"
    targets = {}
    for ext in ("pt", "json", "state"):
        targets[ext] = tmp_path / f"precious-{ext}.txt"
        targets[ext].write_text("keep me\n")
        (ck / f"r.{ext}").unlink()
        (ck / f"r.{ext}").symlink_to(targets[ext])
    assert train_main(argv(root, "r", "--overwrite", timesteps=1024)) == 0
    for ext, target in targets.items():
        assert target.read_text() == "keep me\n"
        assert not (ck / f"r.{ext}").is_symlink()
    assert json.loads((ck / "r.json").read_text())["timesteps"] == 1024
    plays_a_game(ck / "r.pt")


# --- 5. a resumed run reads as one run ------------------------------------------------------


@pytest.mark.slow
def test_a_resumed_run_keeps_its_history_and_its_clock(saved, tmp_path, capsys):
    root = copy_run(saved, tmp_path)
    ck = root / "ck"
    before = json.loads((ck / "r.json").read_text())
    rewrite_state(ck, "r", wall_seconds=10_000.0)  # as if the first session had taken 10,000 s
    assert train_main(argv(root, "r", "--resume", timesteps=8192)) == 0
    out = capsys.readouterr().out
    assert f"resuming {ck / 'r'} at {before['timesteps']} steps" in out
    after = json.loads((ck / "r.json").read_text())
    history = after["eval_history"]
    assert history[: len(before["eval_history"])] == before["eval_history"]
    later = history[len(before["eval_history"]) :]
    assert later and all(h["wall_seconds"] >= 10_000 for h in later)
    assert [h["timesteps"] for h in history] == sorted(h["timesteps"] for h in history)
    assert after["wall_seconds"] >= 10_000
    steps, seconds, rate = re.search(r"run r: ([\d,]+) steps in ([\d.]+) s \(([\d,]+) steps/s\)", out).groups()
    assert int(steps.replace(",", "")) == after["timesteps"] >= 8192
    assert float(seconds) >= 10_000 and int(rate.replace(",", "")) <= after["timesteps"] / 10_000 + 1


@pytest.mark.slow
def test_ctrl_c_prints_a_complete_continue_command_and_a_second_one_does_not_lose_the_save(
    tmp_path, monkeypatch, capsys
):
    from train import run

    original = run.ExactEvalCallback._on_step
    real_save = torch.save
    second_ctrl_c = []

    def interrupted(self):
        if self.num_timesteps >= 2048:
            second_ctrl_c.append(True)
            raise KeyboardInterrupt  # the first Ctrl-C
        return original(self)

    def save_with_a_ctrl_c(*args, **kwargs):
        if second_ctrl_c:
            os.kill(os.getpid(), signal.SIGINT)  # the second Ctrl-C, in the middle of the save
        return real_save(*args, **kwargs)

    monkeypatch.setattr(run.ExactEvalCallback, "_on_step", interrupted)
    monkeypatch.setattr(torch, "save", save_with_a_ctrl_c)
    first = [
        "ppo-420",
        "--timesteps",
        "8192",
        "--n-envs",
        "32",
        "--eval-every",
        "100000",
        "--exact-every",
        "300000",
        "--seed",
        "3",
        "--logdir",
        str(tmp_path / "tb"),
        "--checkpoint-dir",
        str(tmp_path / "ck"),
        "--name",
        "cut",
        "--no-progress-bar",
        "--exact-aside",
    ]
    try:
        assert train_main(first) == 130
    except KeyboardInterrupt:
        pytest.fail("the second Ctrl-C interrupted the save")
    captured = capsys.readouterr()
    assert "finishing" in captured.err or "still evaluating and saving" in captured.err
    saved_steps = json.loads((tmp_path / "ck" / "cut.json").read_text())["timesteps"]
    assert 2048 <= saved_steps < 8192
    plays_a_game(tmp_path / "ck" / "cut.pt")
    line = [l for l in captured.out.splitlines() if l.startswith("continue with: ")][-1]
    command = shlex.split(line[len("continue with: ") :])
    assert command[:4] == ["python", "-m", "train", "ppo-420"] and command[-1] == "--resume"
    assert "--exact-aside" in command
    for flag, value in (
        ("--checkpoint-dir", tmp_path / "ck"),
        ("--logdir", tmp_path / "tb"),
        ("--name", "cut"),
        ("--timesteps", "8192"),
        ("--n-envs", "32"),
        ("--eval-every", "100000"),
        ("--exact-every", "300000"),
    ):
        assert command[command.index(flag) + 1] == str(value)
    monkeypatch.undo()
    assert train_main(command[3:]) == 0  # the printed command continues the run
    assert f"at {saved_steps} steps" in capsys.readouterr().out
    assert json.loads((tmp_path / "ck" / "cut.json").read_text())["timesteps"] >= 8192


@pytest.mark.parametrize(
    "steps, meta_too", [(-4096, True), (-4096, False), (10**13, True), (4096.5, False), (True, False)]
)
def test_a_saved_step_count_out_of_range_is_refused(saved, tmp_path, capsys, steps, meta_too):
    root = copy_run(saved, tmp_path)
    rewrite_state(root / "ck", "r", meta_too=meta_too, num_timesteps=steps)
    assert train_main(argv(root, "r", "--resume", timesteps=8192)) == 2
    err = one_line(capsys.readouterr().err)
    assert "timesteps" in err and str(steps) in err


def test_a_corrupt_optimizer_state_is_refused(saved, tmp_path, capsys):
    root = copy_run(saved, tmp_path)
    state = torch.load(root / "ck" / "r.state", weights_only=True)
    state["optimizer"]["state"][0]["exp_avg"].view(-1)[0] = float("nan")
    rewrite_state(root / "ck", "r", optimizer=state["optimizer"])
    assert train_main(argv(root, "r", "--resume", timesteps=8192)) == 2
    assert "optimizer.state[0].exp_avg" in one_line(capsys.readouterr().err)


def test_resume_refuses_another_preset_or_seed(saved, tmp_path, capsys):
    root = copy_run(saved, tmp_path)
    assert (
        train_main(
            [
                "ppo-421",
                "--resume",
                "--name",
                "r",
                "--checkpoint-dir",
                str(root / "ck"),
                "--logdir",
                str(root / "runs"),
                "--no-progress-bar",
            ]
        )
        == 2
    )
    assert "preset" in one_line(capsys.readouterr().err)
    assert train_main([*argv(root, "r", "--resume", timesteps=8192), "--seed", "2"]) == 2
    assert "--seed 1" in one_line(capsys.readouterr().err)


def test_a_run_records_its_learning_settings_and_resume_refuses_changed_ones(saved, tmp_path, capsys):
    root = copy_run(saved, tmp_path)
    meta_path = root / "ck" / "r.json"
    meta = json.loads(meta_path.read_text())
    preset = PRESETS["ppo-420"]
    assert meta["training"] == json.loads(json.dumps({"timesteps": 4096, **preset.learning()}))
    assert meta["training"]["ppo"]["learning_rate"] == preset.ppo["learning_rate"]
    meta["training"]["ppo"]["ent_coef"] = 0.5  # as if the preset had changed since
    meta_path.write_text(json.dumps(meta))
    assert train_main(argv(root, "r", "--resume", timesteps=8192)) == 2
    err = one_line(capsys.readouterr().err)
    now = preset.ppo["ent_coef"]
    assert f"r.json: ppo.ent_coef was 0.5, preset ppo-420 now has {now!r};" in err and "--overwrite" in err
    meta["training"]["ppo"]["ent_coef"] = now
    del meta["training"]["snapshots"]  # saved before the setting existed: it had its default, 0
    meta_path.write_text(json.dumps(meta))
    with pytest.MonkeyPatch.context() as patch:
        patch.setitem(PRESETS, "ppo-420", replace(preset, snapshots=2, snapshot_share=0.2, snapshot_every=4096))
        assert train_main(argv(root, "r", "--resume", timesteps=8192)) == 2
        assert "r.json: snapshots was 0, preset ppo-420 now has 2;" in one_line(capsys.readouterr().err)
    del meta["training"]  # a run saved before the settings were recorded resumes
    meta_path.write_text(json.dumps(meta))
    assert train_main(argv(root, "r", "--resume", timesteps=8192)) == 0


# --- 6. the loader checks what it reads ------------------------------------------------------


def bad_copy(saved: Path, tmp_path: Path, name: str, policy=None, weights=None) -> Path:
    """r.pt and r.json as tmp_path/NAME.pt/.json, with ``policy`` changes to the metadata
    and ``weights`` (a function of the tensor dict) applied; no checksum, as in files
    saved before checksums, so the check under test is the one that refuses."""
    meta = json.loads((saved / "ck" / "r.json").read_text())
    meta.pop("weights_sha256", None), meta.pop("state_sha256", None)
    meta["policy"].update(policy or {})
    (tmp_path / f"{name}.json").write_text(json.dumps(meta))
    state = torch.load(saved / "ck" / "r.pt", weights_only=True)
    if weights:
        weights(state)
    torch.save(state, tmp_path / f"{name}.pt")
    return tmp_path / f"{name}.pt"


def test_every_presets_settings_can_be_recorded():
    for preset in PRESETS.values():
        json_bytes(preset.learning())  # what every save writes: no NaN, nothing but JSON's types


def test_a_preset_whose_settings_cannot_be_recorded_is_refused_before_training(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(PRESETS, "ppo-420", replace(PRESETS["ppo-420"], lr_final=float("nan")))
    assert train_main(argv(tmp_path, "nan")) == 2
    err = one_line(capsys.readouterr().err)
    assert "preset ppo-420: a setting cannot be saved in a checkpoint's metadata" in err
    assert not (tmp_path / "ck" / "nan.json").exists()


def test_each_shipped_bot_can_be_trained_again_from_its_preset():
    """A shipped bot's preset still has every setting its run was trained with: a preset
    changed since must pin the old values for that preset, or the bot be trained again."""
    shipped = sorted(CHECKPOINT_DIR.glob("ppo-*.json"))
    assert {path.stem for path in shipped} >= {"ppo-420", "ppo-421", "ppo-421-3p", "ppo-pig"}
    for path in shipped:
        meta = json.loads(path.read_text())
        preset = PRESETS[meta["preset"]]
        saved = (meta["game"], meta["policy"], meta["env"], meta["opponent"], meta["n_envs"], meta.get("threads", 1))
        assert saved == (preset.game, preset.policy, preset.env, preset.opponent, preset.n_envs, preset.threads), path
        # a setting added since the bot was trained is not in its metadata: it had its default
        trained = {**json.loads(json.dumps(Preset.defaults())), **meta["training"]}
        assert trained == json.loads(json.dumps({"timesteps": preset.timesteps, **preset.learning()})), path


def test_the_shipped_checkpoints_load(saved, tmp_path):
    for game in ("420", "421"):
        agent = PPOAgent.load(CHECKPOINT_DIR / f"ppo-{game}.pt", expected_game=game)
        assert agent.metadata["game"] == game and agent.metadata["name"] == f"ppo-{game}"
    PPOAgent.load(bad_copy(saved, tmp_path, "plain"))  # a checkpoint saved before checksums loads


@pytest.mark.parametrize(
    "value, words", [(float("nan"), "NaN"), (float("inf"), "infinite"), (-float("inf"), "infinite")]
)
def test_weights_that_are_not_finite_are_refused(saved, tmp_path, value, words):
    def spoil(state):
        state["action_net.weight"].view(-1)[3] = value

    path = bad_copy(saved, tmp_path, "spoilt", weights=spoil)
    with pytest.raises(
        CheckpointError, match=f"{re.escape(str(path))}: tensor 'action_net.weight' holds .*{words}"
    ) as e:
        PPOAgent.load(path)
    one_line(str(e.value))


def test_weights_of_another_shape_are_refused(saved, tmp_path):
    path = bad_copy(saved, tmp_path, "other", policy={"net_arch": {"pi": [32], "vf": [64]}})
    with pytest.raises(
        CheckpointError, match=r"tensor 'mlp_extractor.policy_net.0.weight' has shape \(64, 256\).*\(32, 256\)"
    ):
        PPOAgent.load(path)


@pytest.mark.parametrize(
    "policy, field",
    [
        ({"net_arch": {"pi": [5000], "vf": [64]}}, r"policy.net_arch.pi\[0\] is 5000"),
        ({"net_arch": {"pi": [8] * 9, "vf": [64]}}, r"policy.net_arch.pi has 9 layers"),
        ({"net_arch": {"pi": [0], "vf": [64]}}, r"policy.net_arch.pi\[0\] is 0"),
        ({"net_arch": {"pi": [64.5], "vf": [64]}}, r"policy.net_arch.pi\[0\] is 64.5"),
        ({"net_arch": {"pi": [4096, 4096], "vf": [4096, 4096]}}, r"policy.net_arch has .* hidden-layer weights"),
        ({"net_arch": {"pi": [64], "qf": [64]}}, r"policy.net_arch.qf is not"),
        (
            {"features_extractor_kwargs": {"features_dim": 5000}},
            r"policy.features_extractor_kwargs.features_dim is 5000",
        ),
        (
            {"features_extractor_kwargs": {"features_dim": 256, "embed": 3}},
            r"policy.features_extractor_kwargs.embed is not",
        ),
        ({"kwargs": {"ortho_init": False}}, r"policy.kwargs is not a policy setting"),
        ({"activation": "os.system"}, r"policy.activation is 'os.system'"),
    ],
)
def test_network_settings_out_of_bounds_or_unknown_are_refused(saved, tmp_path, policy, field):
    path = bad_copy(saved, tmp_path, "big", policy=policy)
    with pytest.raises(CheckpointError, match=f"{re.escape(str(path.with_suffix('.json')))}: {field}") as e:
        PPOAgent.load(path)
    one_line(str(e.value))


def test_a_network_part_made_for_the_other_game_is_refused(saved, tmp_path):
    path = bad_copy(
        saved, tmp_path, "other-game", policy={"class": "FastMlpPolicy", "features_extractor": "Rank421Features"}
    )
    meta = json.loads(path.with_suffix(".json").read_text())
    meta["policy"].pop("features_extractor_kwargs", None)
    path.with_suffix(".json").write_text(json.dumps(meta))
    assert meta["game"] == "420"
    with pytest.raises(
        CheckpointError,
        match=f"{re.escape(str(path.with_suffix('.json')))}: policy: "
        r"Rank421Features reads 421 observations",
    ) as e:
        PPOAgent.load(path)
    one_line(str(e.value))


def test_a_checkpoint_of_a_game_this_program_does_not_have_is_refused_by_its_game(saved, tmp_path):
    """Not by the network part the game would bring (an extractor of its own, unknown here)."""
    path = bad_copy(saved, tmp_path, "chess", policy={"features_extractor": "ChessFeatures"})
    meta = json.loads(path.with_suffix(".json").read_text())
    meta["game"] = "chess"
    path.with_suffix(".json").write_text(json.dumps(meta))
    with pytest.raises(
        CheckpointError,
        match=f"{re.escape(str(path.with_suffix('.json')))}: game 'chess' is not a game this program has "
        + re.escape(f"(known: {', '.join(registered_games())})"),
    ) as e:
        PPOAgent.load(path)
    one_line(str(e.value))


@pytest.mark.parametrize("which", ["json", "pt"])
def test_a_checkpoint_file_that_is_a_fifo_is_refused_without_waiting(saved, tmp_path, which):
    path = bad_copy(saved, tmp_path, "fifo")
    fifo = path.with_suffix(f".{which}")
    fifo.unlink()
    os.mkfifo(fifo)

    def writer():  # a reader that waits for a writer gets one, and then end of file: no test hangs
        os.close(os.open(fifo, os.O_WRONLY))

    thread = threading.Thread(target=writer, daemon=True)
    thread.start()
    what = {"json": "checkpoint metadata file", "pt": "weights file"}[which]
    try:
        with pytest.raises(CheckpointError, match=f"fifo.{which}: the {what} is a FIFO, not a regular file"):
            PPOAgent.load(path)
    finally:
        reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # let the writer finish: keep a reader
        thread.join(timeout=30)  # open until it has, or its open() waits for a partner forever
        os.close(reader)
        assert not thread.is_alive()


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/null"])
def test_metadata_linked_to_a_device_is_refused(saved, tmp_path, device):
    path = bad_copy(saved, tmp_path, "dev")
    path.with_suffix(".json").unlink()
    path.with_suffix(".json").symlink_to(device)
    with pytest.raises(CheckpointError, match="dev.json: the checkpoint metadata file is a character device"):
        PPOAgent.load(path)


def test_metadata_larger_than_a_megabyte_is_refused(saved, tmp_path):
    path = bad_copy(saved, tmp_path, "huge")
    meta = json.loads(path.with_suffix(".json").read_text())
    meta["notes"] = "x" * (1 << 20)
    path.with_suffix(".json").write_text(json.dumps(meta))
    with pytest.raises(CheckpointError, match="huge.json: the checkpoint metadata file is larger than 1,048,576 bytes"):
        PPOAgent.load(path)
