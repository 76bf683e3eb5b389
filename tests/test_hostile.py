"""What a hostile tester of the "nothing lost" work found, each case as it was reported:
a FIFO at a run's lock, checkpoint weights that are not dense or come with a foreign
pickle protocol, an output name that is blank or a folder's, a reply table with no
decision rows, and a signal as ``python -m train`` ends.  (The run files that failed
``python -m train.plot``'s drawing are tested in tests/test_plot.py.)"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

from core.files import FileRefused, check_output

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("name", ["   ", "newdir.csv/", f"somewhere{os.sep}"], ids=["blank", "slash", "sep"])
def test_an_output_named_blank_or_like_a_folder_is_refused(tmp_path, monkeypatch, name):
    """--out '   ' wrote a file named three spaces, and --out new.csv/ a file new.csv."""
    monkeypatch.chdir(tmp_path)
    with pytest.raises(FileRefused, match="give the name of the PNG file"):
        check_output(name, True, "PNG file")
    assert list(tmp_path.iterdir()) == []


def test_a_fifo_at_a_runs_lock_is_refused_in_one_line(tmp_path):
    """A FIFO named NAME.lock: os.ftruncate raised OSError (a traceback); now one line."""
    from train.checkpoint import RunError, RunLock

    os.mkfifo(tmp_path / "r1.lock")
    with pytest.raises(RunError, match=r"r1\.lock is not a regular file"):
        RunLock(tmp_path, "r1").acquire()
    assert (tmp_path / "r1.lock").is_fifo()  # left as it was


def test_weights_that_are_not_dense_are_refused_naming_the_file():
    """A sparse tensor got through to torch.isfinite, whose error named no file."""
    from agents.ppo_agent import CheckpointError, check_weights

    policy = torch.nn.Linear(3, 2)
    state = {k: v.to_sparse() if k == "weight" else v for k, v in policy.state_dict().items()}
    with pytest.raises(CheckpointError, match=r"^w\.pt: tensor 'weight' is torch\.sparse_coo, not a dense tensor$"):
        check_weights(state, policy, "w.pt")


def test_a_pickle_in_place_of_weights_is_one_line_without_torchs_warning(recwarn):
    """torch warned about the pickle protocol (two more lines on stderr) before refusing."""
    import pickle  # to make the hostile file only: nothing here reads a pickle

    from agents.ppo_agent import CheckpointError, load_tensors

    data = pickle.dumps({"weight": [1.0]}, protocol=4)
    with pytest.raises(CheckpointError, match="^cannot read the weights: "):
        load_tensors(data, "the weights")
    assert [str(w.message) for w in recwarn] == []


@pytest.mark.slow
def test_a_reply_table_without_follower_rows_is_written_and_read_back(tmp_path):
    """At pot 1 the best reply has no follower rows: the builder wrote a file the loader
    refused ("rows must hold 1..65536 rows, got 0")."""
    out = tmp_path / "rp1.npz"
    done = subprocess.run(
        [sys.executable, "-m", "games.dice421.reply", "--pot", "1", "--no-figures", "--out", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    from play import load_agent

    agent = load_agent("421", str(out), 0, option="--agent")  # as python -m play reads it
    agent.check_table(3, pot=1)


@pytest.mark.slow
@pytest.mark.parametrize("delay", [0.0, 0.01, 0.03])
def test_a_signal_as_train_ends_leaves_the_run_saved_and_says_so(tmp_path, delay):
    """A signal in the moments after train printed its results raised KeyboardInterrupt
    into torch's clean-up at exit (a traceback), or said "nothing was saved" of a saved
    run.  Sent right after the last line of the results: the run is saved, no lock is
    left, and the program says nothing false and shows no traceback."""
    ck = tmp_path / "ck"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-u",
            "-m",
            "train",
            "ppo-420",
            "--timesteps",
            "3000",
            "--no-progress-bar",
            "--checkpoint-dir",
            str(ck),
            "--logdir",
            str(tmp_path / "runs"),
            "--name",
            "r1",
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        for line in proc.stdout:
            if "decision states" in line or "exactly optimal" in line:  # the results' last line
                break
        time.sleep(delay)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    # 0: it had ended; 130: it said so in one line; -SIGINT: Python was tearing down (its own
    # handlers gone), so the signal ended it as a shell reports it, 130, with the run saved
    assert proc.returncode in (0, 130, -signal.SIGINT), err
    assert "Traceback" not in err and "nothing was saved" not in err, err
    said = {  # while the run saves, the signal waits for it; once saved, it ends the program at once
        "Ctrl-C: still evaluating and saving the run; it ends once the checkpoint is written",
        "interrupted as it ended: run r1 is saved (Ctrl-C)",
    }
    assert proc.returncode != 130 or err.strip().splitlines()[-1] in said, err
    assert sorted(p.name for p in ck.iterdir()) == ["r1.json", "r1.pt", "r1.state"]


def test_an_empty_records_path_is_refused_not_read_as_the_default(tmp_path, monkeypatch, capsys):
    """play web --db "" opened the default records file in the user's home folder."""
    pytest.importorskip("fastapi")
    from play.web import cli

    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    args = cli.argparse.Namespace(db="", host="127.0.0.1", port=0)
    assert cli.run(args) == 2
    assert capsys.readouterr().err.strip() == (
        "python -m play web: error: --db '': give the path of the records file (or leave --db out)"
    )
    assert list(tmp_path.iterdir()) == []
