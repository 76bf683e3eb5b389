"""Ctrl-C (SIGINT) and SIGTERM sent to a real ``python -m train`` at a few moments, the
stale lock of a killed run, and the file rules of ``train seeds`` / ``train sweep``
(in-process, without starting Ray).

While the program starts, either signal ends it in one line with status 128 + N (130,
143); once a run trains, it saves the run (resumable), removes its lock and exits with
the same status (``core.cli``, ``train.run``).  The project's other programs (``python
-m train.bench``, ``games.dice421.reply``, ...) end in one line too, after their
clean-ups."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LINUX = sys.platform.startswith("linux")
pytestmark = pytest.mark.skipif(not LINUX, reason="reads /proc to see when the program's handlers are in")


def train_args(tmp_path: Path, name: str = "sig", *extra: str) -> list[str]:
    return [
        "ppo-420",
        "--timesteps",
        "10000000",
        "--n-envs",
        "16",
        "--eval-every",
        "10000000",
        "--seed",
        "4",
        "--checkpoint-dir",
        str(tmp_path / "ck"),
        "--logdir",
        str(tmp_path / "runs"),
        "--name",
        name,
        "--no-progress-bar",
        *extra,
    ]


def start(args: list[str]) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "train", *args],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=dict(os.environ, PYTHONUNBUFFERED="1"),
        # SIGINT as a foreground program has it, even when the tests run as a background job
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )


def caught_signals(pid: int) -> int:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("SigCgt:"):
                return int(line.split()[1], 16)
    return 0


def wait_for_handlers(process: subprocess.Popen, timeout: float = 1.0) -> None:
    """Until the program has put in its own handlers (SIGTERM caught: its first lines;
    Python itself catches SIGINT from its start, SIGTERM only when told to), or ``timeout``
    seconds (a program without handlers is then signalled all the same)."""
    deadline = time.monotonic() + timeout
    while not caught_signals(process.pid) & (1 << (signal.SIGTERM - 1)) and time.monotonic() < deadline:
        assert process.poll() is None, process.communicate()
        time.sleep(0.002)


def wait_for(path: Path, process: subprocess.Popen, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not path.exists():
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.02)


def finish(process: subprocess.Popen, timeout: float = 60.0) -> tuple[int, str, str]:
    try:
        out, err = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        out, err = process.communicate()
        pytest.fail(f"the program did not end after the signal:\n{out[-2000:]}\n{err[-2000:]}")
    return process.returncode, out, err


# --- while the program starts: one line, 130 or 143 --------------------------------------


@pytest.mark.parametrize("signum, delay", [(signal.SIGINT, 0.0), (signal.SIGTERM, 0.3), (signal.SIGINT, 0.8)])
def test_a_signal_while_train_starts_ends_it_in_one_line(tmp_path, signum, delay):
    # 0 s: the first moment the program answers; 0.3 and 0.8 s later: in its imports
    # (numpy, gymnasium, then torch and SB3), where a Ctrl-C printed a long traceback
    process = start(train_args(tmp_path))
    wait_for_handlers(process)
    time.sleep(delay)
    process.send_signal(signum)
    code, out, err = finish(process)
    assert code == 128 + signum, (code, err)
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert "interrupted" in err and ("Ctrl-C" if signum == signal.SIGINT else "SIGTERM") in err
    ck = tmp_path / "ck"
    assert not ck.exists() or not [p.name for p in ck.iterdir()]  # nothing saved, no lock left


@pytest.mark.parametrize("command, signum", [("seeds", signal.SIGINT), ("sweep", signal.SIGTERM)])
def test_a_signal_while_a_study_starts_ends_it_in_one_line(tmp_path, command, signum):
    process = start([command, "ppo-420", "--out", str(tmp_path / "out"), "--timesteps", "1024"])
    wait_for_handlers(process)
    time.sleep(0.3)  # importing Ray and Optuna, long before Ray starts
    process.send_signal(signum)
    code, out, err = finish(process)
    assert code == 128 + signum, (code, err)
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1 and "interrupted" in err, err


# --- while the run trains: saved, resumable, no lock, 130 or 143 -------------------------


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
@pytest.mark.slow
def test_a_signal_while_train_trains_saves_the_run_and_removes_its_lock(tmp_path, signum, capsys):
    from train.__main__ import main as train_main

    name = "int" if signum == signal.SIGINT else "term"
    ck = tmp_path / "ck"
    process = start(train_args(tmp_path, name))
    wait_for(ck / f"{name}.json", process)  # the evaluation of its first step is saved: it trains
    time.sleep(0.3)
    process.send_signal(signum)
    code, out, err = finish(process)
    assert code == 128 + signum, (code, out[-2000:], err[-2000:])
    assert "Traceback" not in err, err
    label = "Ctrl-C" if signum == signal.SIGINT else "SIGTERM"
    assert (
        re.search(rf"interrupted at \d+ steps \({label}\); saving", out) and f"saved {ck / name}.pt/.json/.state" in out
    )
    assert "continue with: python -m train ppo-420" in out and out.rstrip().endswith("--resume")
    assert sorted(p.name for p in ck.iterdir()) == [f"{name}.json", f"{name}.pt", f"{name}.state"]  # no lock
    saved = json.loads((ck / f"{name}.json").read_text())["timesteps"]
    assert saved > 16  # saved where it was stopped, past the first evaluation's checkpoint
    if signum == signal.SIGTERM:  # resumable: --resume continues it from there (one more rollout)
        capsys.readouterr()
        assert train_main(train_args(tmp_path, name, "--resume", "--timesteps", str(saved + 1))) == 0
        assert f"resuming {ck / name} at {saved} steps" in capsys.readouterr().out
        assert json.loads((ck / f"{name}.json").read_text())["timesteps"] > saved
        assert not (ck / f"{name}.lock").exists()


# --- a lock left by a process that is gone ----------------------------------------------


@pytest.mark.slow
def test_the_lock_of_a_killed_run_is_taken_over_and_said_so(tmp_path, capsys):
    from train.__main__ import main as train_main

    ck = tmp_path / "ck"
    process = start(train_args(tmp_path, "dead"))
    wait_for(ck / "dead.json", process)
    process.send_signal(signal.SIGKILL)
    assert process.wait() == -signal.SIGKILL
    process.communicate()
    assert (ck / "dead.lock").read_text().strip() == str(process.pid)  # left behind, but nobody holds it
    saved = json.loads((ck / "dead.json").read_text())["timesteps"]
    assert train_main(train_args(tmp_path, "dead", "--resume", "--timesteps", str(saved + 1))) == 0
    err = capsys.readouterr().err
    assert f"taking over the stale lock of run dead (process {process.pid} is gone)" in err
    assert not (ck / "dead.lock").exists()


def test_a_stale_lock_file_with_a_dead_pid_is_taken_over_and_a_fresh_one_silently(tmp_path, capsys):
    from train.checkpoint import RunLock

    gone = subprocess.Popen(["true"])
    gone.wait()
    (tmp_path / "x.lock").write_text(f"{gone.pid}\n")
    with RunLock(tmp_path, "x"):
        assert (tmp_path / "x.lock").read_text() == f"{os.getpid()}\n"
    assert capsys.readouterr().err == f"taking over the stale lock of run x (process {gone.pid} is gone)\n"
    assert not (tmp_path / "x.lock").exists()
    with RunLock(tmp_path, "x"):  # no lock file: nothing to say
        pass
    (tmp_path / "x.lock").write_text("")  # a starting run's, not written yet: nothing to say either
    with RunLock(tmp_path, "x"):
        pass
    assert capsys.readouterr().err == ""


# --- the files of train seeds and train sweep ---------------------------------------------


def test_seed_study_files_are_written_atomically_and_replaced_only_with_overwrite(tmp_path, monkeypatch):
    from core.files import FileRefused
    from train import seeds
    from train.scale import ScaleError

    monkeypatch.setattr(seeds, "plot_study", lambda out, result: b"\x89PNG not really")
    result = {"preset": "ppo-420", "runs": []}
    seeds.check_outputs(tmp_path, overwrite=False)  # nothing there yet
    seeds.write_outputs(tmp_path, result)
    assert json.loads((tmp_path / "study.json").read_text()) == result
    assert (tmp_path / "study.png").read_bytes() == b"\x89PNG not really"
    with pytest.raises(ScaleError, match=r"study.json already exists; give --overwrite"):
        seeds.check_outputs(tmp_path, overwrite=False)
    with pytest.raises(FileRefused, match="--overwrite"):
        seeds.write_outputs(tmp_path, {"runs": [1]})
    assert json.loads((tmp_path / "study.json").read_text()) == result  # untouched
    seeds.check_outputs(tmp_path, overwrite=True)
    seeds.write_outputs(tmp_path, {"runs": [2]}, overwrite=True)
    assert json.loads((tmp_path / "study.json").read_text()) == {"runs": [2]}
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temporary left
    # never through a link, nor onto a device, even with --overwrite
    target = tmp_path / "elsewhere.json"
    target.write_text("keep")
    (tmp_path / "study.json").unlink()
    (tmp_path / "study.json").symlink_to(target)
    with pytest.raises(ScaleError, match="symbolic link"):
        seeds.check_outputs(tmp_path, overwrite=True)
    with pytest.raises(FileRefused, match="symbolic link"):
        seeds.write_outputs(tmp_path, result, overwrite=True)
    assert target.read_text() == "keep"
    (tmp_path / "study.json").unlink()
    (tmp_path / "study.png").unlink()
    (tmp_path / "study.png").symlink_to(os.devnull)
    with pytest.raises(ScaleError, match="study.png is a symbolic link"):
        seeds.check_outputs(tmp_path, overwrite=True)


@pytest.mark.ray
def test_a_seed_study_over_an_earlier_study_file_is_refused_before_ray(tmp_path, capsys):
    pytest.importorskip("ray")
    pytest.importorskip("optuna")
    from train.__main__ import main as train_main

    (tmp_path / "study.json").write_text("{}")
    assert train_main(["seeds", "ppo-420", "--seeds", "0", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "study.json already exists" in err and "--overwrite" in err


@pytest.mark.parametrize(
    "content, why",
    [
        (b"not json", "not valid JSON"),
        (b"[" * 100 + b"]" * 100, "nests deeper"),
        (b'{"trials": {"0": 1}}', "not a sweep's summary"),
        (b'{"trials": [{"trial": "zero"}]}', "not a sweep's summary"),
        (b'{"study": "other", "trials": []}', "study 'other', not 'ppo-420'"),
    ],
)
def test_a_bad_sweep_file_is_one_line(tmp_path, content, why):
    from train.scale import ScaleError
    from train.sweep import load_records

    (tmp_path / "sweep.json").write_bytes(content)
    with pytest.raises(ScaleError, match=why) as refused:
        load_records(tmp_path, "ppo-420")
    assert "\n" not in str(refused.value) and "--overwrite" in str(refused.value)


def test_the_sweep_file_is_never_read_or_written_through_a_link_a_fifo_or_a_device(tmp_path):
    from core.files import FileRefused
    from train.scale import ScaleError
    from train.sweep import load_records, save_records

    assert load_records(tmp_path, "s") == {}
    save_records(tmp_path, {3: {"trial": 3, "state": "finished"}}, "s")
    assert load_records(tmp_path, "s") == {3: {"trial": 3, "state": "finished"}}
    sweep = tmp_path / "sweep.json"
    saved = sweep.read_bytes()
    target = tmp_path / "target.json"
    target.write_bytes(saved)
    sweep.unlink()
    sweep.symlink_to(target)
    with pytest.raises(ScaleError, match="symbolic link"):
        load_records(tmp_path, "s")
    with pytest.raises(FileRefused, match="symbolic link"):
        save_records(tmp_path, {}, "s")
    assert target.read_bytes() == saved
    sweep.unlink()
    sweep.symlink_to(os.devnull)
    with pytest.raises(FileRefused, match="symbolic link"):
        save_records(tmp_path, {}, "s")
    sweep.unlink()
    os.mkfifo(sweep)
    with pytest.raises(ScaleError, match="FIFO"):  # refused at once, not waited on
        load_records(tmp_path, "s")


@pytest.mark.ray
def test_a_sweep_over_a_bad_or_foreign_sweep_file_is_refused_before_ray(tmp_path, capsys):
    pytest.importorskip("ray")
    pytest.importorskip("optuna")
    from train.__main__ import main as train_main

    (tmp_path / "sweep.json").write_text("{not json")
    assert train_main(["sweep", "ppo-420", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "sweep.json" in err and "not valid JSON" in err
    # another study's records: refused for a new study unless --overwrite
    (tmp_path / "sweep.json").write_text(json.dumps({"trials": [{"trial": 0}]}))
    assert train_main(["sweep", "ppo-420", "--out", str(tmp_path), "--study-name", "fresh"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "another study" in err and "--overwrite" in err
    assert json.loads((tmp_path / "sweep.json").read_text()) == {"trials": [{"trial": 0}]}


# --- the other programs: one line, after their clean-ups ---------------------------------


def _program_ends() -> dict[str, str]:
    """Each module of the project run as a program (``if __name__ == "__main__":``): the
    source of that block."""
    found = {}
    for layer in ("core", "envs", "agents", "games", "train", "play"):
        for path in sorted((ROOT / layer).rglob("*.py")):
            text = path.read_text()
            at = text.find('\nif __name__ == "__main__":')
            if at >= 0:
                found[str(path.relative_to(ROOT))] = text[at:]
    return found


def test_every_program_of_the_project_ends_through_core_cli():
    """A program that ends with ``sys.exit(main())`` prints a traceback on Ctrl-C or when
    its reader goes away (``| head``); each goes through one of core.cli's runners (or
    its own ``run()``, which does)."""
    ends = _program_ends()
    assert len(ends) >= 10, sorted(ends)  # the scan finds the programs
    runners = re.compile(r"^\s+(run_quietly|run_program|run_interruptible)\(main\b|^\s+run\(\)$", re.M)
    assert [path for path, block in ends.items() if not runners.search(block)] == []


def test_run_interruptible_runs_the_clean_ups_then_ends_in_one_line(tmp_path):
    (tmp_path / "cleans_up.py").write_text(
        "import sys, time\n"
        "from core.cli import run_interruptible\n"
        "def main():\n"
        "    try:\n"
        "        print('working', flush=True)\n"
        "        time.sleep(60)\n"
        "    finally:\n"
        "        open(sys.argv[1], 'w').write('cleaned up')\n"
        "    return 0\n"
        "run_interruptible(main)\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(tmp_path)])}
    for signum in (signal.SIGINT, signal.SIGTERM):
        mark = tmp_path / f"mark{signum}"
        process = subprocess.Popen(
            [sys.executable, "-m", "cleans_up", str(mark)],
            cwd=tmp_path,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        )
        assert process.stdout.readline() == "working\n"  # in main, inside its try
        process.send_signal(signum)
        code, out, err = finish(process)
        assert code == 128 + signum, (code, err)
        assert err.strip() == f"interrupted ({'Ctrl-C' if signum == signal.SIGINT else 'SIGTERM'})", err
        assert mark.read_text() == "cleaned up"


def _group_left(pgid: int) -> list[int]:
    """The processes still in process group ``pgid``."""
    left = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[2]) == pgid and fields[0] != "Z":
                left.append(int(entry.name))
    return left


@pytest.mark.slow
def test_ctrl_c_in_the_bench_ends_it_and_its_measure_in_one_line():
    """Ctrl-C in a terminal reaches the whole process group: the bench and the process of
    the measure in progress. Before, each printed a KeyboardInterrupt traceback."""
    process = subprocess.Popen(
        [sys.executable, "-m", "train.bench", "--seconds", "1"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # a process group of its own, as a terminal's job
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        assert process.stdout.readline().startswith("measurement")
        time.sleep(1.0)  # inside the first measure, in its own process
        os.killpg(process.pid, signal.SIGINT)
        code, out, err = finish(process)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
    assert code == 130, (code, err)
    assert err.strip() == "interrupted (Ctrl-C)", err
    deadline = time.monotonic() + 10
    while _group_left(process.pid) and time.monotonic() < deadline:  # multiprocessing's helper ends on its own
        time.sleep(0.1)
    assert _group_left(process.pid) == []
