"""Nothing lost, nothing clobbered: every file a command writes, every file it reads.

* ``core.files``: a reader takes a regular file only (a device, a FIFO, a folder is
  refused at once, never read nor waited on), within a size and a depth limit; an
  output is written atomically, replaces an existing file only with ``--force``, and
  never goes through a link or to a device, a FIFO or a folder, not even with it.
* every command that writes a file (``python -m play export`` and ``tournament``,
  ``python -m train.plot``, ``python -m games.dice421.reply``) and every reader of a
  file named on a command line (reply tables, checkpoint metadata; run metadata and
  seed studies in tests/test_plot.py) holds to that, each refusal one ``error:`` line
  and exit code 2;
* Ctrl-C at any moment of ``python -m play`` is one line and exit status 130.
"""

from __future__ import annotations

import io
import os
import signal
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from core import files
from core.files import FileRefused

ROOT = Path(__file__).resolve().parent.parent
SHIPPED = ROOT / "checkpoints"
DEEP = b"[" * 200_000 + b"]" * 200_000


# Every test here ends within 60 s: a read that would block on a FIFO fails instead
# (pytest-timeout's SIGALRM interrupts the blocked read).
pytestmark = pytest.mark.timeout(60)


@pytest.fixture
def fifo(tmp_path) -> Path:
    path = tmp_path / "fifo.json"
    os.mkfifo(path)
    return path


def _is_char_device(path: str) -> bool:
    return stat.S_ISCHR(os.stat(path).st_mode)


def _one_error_line(err: str) -> str:
    """The one ``error:`` line of ``err`` (argparse's usage line may come before it), and no traceback."""
    assert "Traceback" not in err, err
    errors = [line for line in err.splitlines() if "error:" in line]
    assert len(errors) == 1, err
    assert err.rstrip("\n").splitlines()[-1] == errors[0], err
    return errors[0]


def _leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if ".tmp-" in p.name or ".building" in p.name)


# --- core.files: reading --------------------------------------------------------------------
def test_a_device_a_fifo_a_folder_are_refused_at_once(tmp_path, fifo):
    start = time.monotonic()
    for path, kind in (("/dev/zero", "character device"), (fifo, "FIFO"), (tmp_path, "folder")):
        with pytest.raises(FileRefused, match=f"is a {kind}, not a regular file") as e:
            files.read_regular(path, 1 << 20, "run file")
        assert "\n" not in str(e.value)
        with pytest.raises(FileRefused, match=kind):
            files.load_json(path)
    (tmp_path / "zero.json").symlink_to("/dev/zero")  # a link to a device is the device
    with pytest.raises(FileRefused, match="character device"):
        files.load_json(tmp_path / "zero.json")
    assert time.monotonic() - start < 5


def test_a_fifo_swapped_in_after_the_look_is_refused_without_blocking(tmp_path, monkeypatch, fifo):
    regular = os.stat(__file__)

    def looks_regular(path, *args, **kwargs):  # the name is a regular file when looked at, a FIFO when opened
        return regular

    monkeypatch.setattr(files.os, "stat", looks_regular)
    with pytest.raises(FileRefused, match="is a FIFO"):
        files.read_regular(fifo, 100)


def test_a_link_to_a_regular_file_is_read_and_a_big_or_missing_file_refused(tmp_path):
    (tmp_path / "run.json").write_text('{"a": [1, "]]]]"]}')
    (tmp_path / "link.json").symlink_to(tmp_path / "run.json")
    assert files.load_json(tmp_path / "link.json") == {"a": [1, "]]]]"]}
    (tmp_path / "big").write_bytes(b"x" * 101)
    with pytest.raises(FileRefused, match="larger than 100 bytes"):
        files.read_regular(tmp_path / "big", 100)
    assert files.read_regular(tmp_path / "big", 101) == b"x" * 101
    with pytest.raises(FileRefused, match="no such file"):
        files.read_regular(tmp_path / "none", 100)


def test_deep_or_truncated_json_is_one_line(tmp_path):
    (tmp_path / "deep.json").write_bytes(DEEP)
    with pytest.raises(FileRefused, match="nests deeper than 64 levels") as e:
        files.load_json(tmp_path / "deep.json")
    assert "\n" not in str(e.value)
    with pytest.raises(FileRefused, match="nests deeper than 3"):
        files.parse_json(b'{"a": [[[1]]]}', "x", max_depth=3)
    assert files.parse_json(b'{"a": [["[[[[["]]}', "x", max_depth=3) == {"a": [["[[[[["]]}
    meta = (SHIPPED / "ppo-420.json").read_bytes()
    (tmp_path / "cut.json").write_bytes(meta[: len(meta) // 2])
    with pytest.raises(FileRefused, match="not valid JSON") as e:
        files.load_json(tmp_path / "cut.json")
    assert "\n" not in str(e.value)
    for bad in (b"", b"\xff\xfe", b'"\\', b'["\\"' * 1000):
        with pytest.raises(FileRefused):
            files.parse_json(bad, "x")


def test_the_depth_scan_is_linear_on_strings_that_never_end():
    start = time.monotonic()
    assert files.json_depth(b'["' + b'\\"' * 2_000_000) == 1
    assert files.json_depth(b'"' * 2_000_001 + b"[[") == 0  # the last string runs to the end
    assert files.json_depth(b"[" * 100, stop=10) == 11
    assert time.monotonic() - start < 5


# --- core.files: writing --------------------------------------------------------------------
def test_an_output_is_new_or_replaced_with_force_only(tmp_path):
    path = tmp_path / "out.csv"
    files.write_output(path, "one")
    with pytest.raises(FileRefused, match="already exists; give --force to replace it") as e:
        files.write_output(path, "two")
    assert "\n" not in str(e.value) and path.read_text() == "one"
    with pytest.raises(FileRefused, match="give --overwrite"):
        files.write_output(path, "two", flag="--overwrite")
    files.write_output(path, "two", force=True)
    umask = os.umask(0)
    os.umask(umask)
    assert path.read_text() == "two" and path.stat().st_mode & 0o777 == 0o666 & ~umask
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.csv"]


def test_a_link_a_device_a_fifo_a_folder_are_never_written(tmp_path, fifo):
    target = tmp_path / "precious"
    target.write_text("keep")
    (tmp_path / "link.csv").symlink_to(target)
    (tmp_path / "null.csv").symlink_to("/dev/null")
    cases = (
        (tmp_path / "link.csv", "symbolic link"),
        (tmp_path / "null.csv", "symbolic link"),
        ("/dev/null", "character device"),
        (fifo, "FIFO"),
        (tmp_path, "folder"),
    )
    for path, kind in cases:
        for force in (False, True):
            with pytest.raises(FileRefused, match=f"is a {kind}; refusing to write") as e:
                files.write_output(path, "x", force=force)
            assert "\n" not in str(e.value)
    assert target.read_text() == "keep" and (tmp_path / "link.csv").is_symlink() and _is_char_device("/dev/null")
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    for path, why in (
        (tmp_path / "none" / "x.csv", "there is no folder"),
        (target / "x.csv", "is not a folder"),
        ("", "give the name of the file"),
    ):
        with pytest.raises(FileRefused, match=why):
            files.check_output(path, force=True)
    assert _leftovers(tmp_path) == []


def test_what_appears_while_the_output_is_written_is_not_replaced(tmp_path):
    path = tmp_path / "out.json"
    with pytest.raises(FileRefused, match="already exists"):
        with files.output_file(path) as f:
            f.write(b"new")
            path.write_text("theirs")  # another program made the file meanwhile
    assert path.read_text() == "theirs"
    target = tmp_path / "precious"
    target.write_text("keep")
    path.unlink()
    with pytest.raises(FileRefused, match="symbolic link"):
        with files.output_file(path, force=True) as f:
            f.write(b"new")
            path.symlink_to(target)  # a link swapped in meanwhile
    assert target.read_text() == "keep"
    path.unlink()
    with pytest.raises(RuntimeError):
        with files.output_file(path) as f:
            f.write(b"half")
            raise RuntimeError("the command failed half-way")
    assert not path.exists() and _leftovers(tmp_path) == []


# --- each command that writes a file ------------------------------------------------------------
def _export(path, force, capsys):
    from play.__main__ import main

    out = io.StringIO()
    code = main(["export", "420", "--agent", "greedy", "--out", str(path), *force], out=out, err=sys.stderr)
    return code, capsys.readouterr().err


def _tournament(path, force, capsys):
    from play.__main__ import main

    out, err = io.StringIO(), io.StringIO()
    code = main(
        ["tournament", "420", "--agents", "greedy,random", "--games", "1", "--seed", "1", "--out", str(path), *force],
        out=out,
        err=err,
    )
    return code, err.getvalue()


def _plot(path, force, capsys):
    from train import plot

    code = plot.main([str(SHIPPED / "ppo-420.json"), "--out", str(path), *force])
    return code, capsys.readouterr().err


def _reply(path, force, capsys):
    from games.dice421 import reply

    code = reply.main(["--pot", "2", "--no-figures", "--out", str(path), *force])
    return code, capsys.readouterr().err


WRITERS = {  # command -> (run it, the name of its output, the files it writes beside it)
    "export": (_export, "policy.csv", ()),
    "tournament": (_tournament, "t.json", (".csv",)),
    "plot": (_plot, "gap.png", ()),
    "reply": (_reply, "exact.npz", (".json",)),
}


@pytest.mark.parametrize("command", WRITERS)
def test_a_command_replaces_an_existing_output_only_with_force(command, tmp_path, capsys):
    run, name, beside = WRITERS[command]
    path = tmp_path / name
    for written in [path] + [path.with_suffix(s) for s in beside]:  # each file it writes, alone
        written.write_text("old")
        code, err = run(path, [], capsys)
        assert code == 2 and "already exists; give --force" in _one_error_line(err)
        assert written.read_text() == "old"
        written.unlink()
    path.write_text("old")
    code, err = run(path, ["--force"], capsys)
    assert code == 0, err
    assert path.read_bytes() != b"old" and path.stat().st_size > 100
    assert all(path.with_suffix(s).exists() for s in beside)
    assert _leftovers(tmp_path) == []


@pytest.mark.parametrize("command", WRITERS)
def test_a_command_never_writes_through_a_link_or_to_a_device(command, tmp_path, capsys, fifo):
    run, name, beside = WRITERS[command]
    target = tmp_path / "precious"
    target.write_text("keep")
    path = tmp_path / name
    path.symlink_to(target)
    for force in ([], ["--force"]):
        code, err = run(path, force, capsys)
        assert code == 2 and "is a symbolic link; refusing" in _one_error_line(err)
    assert target.read_text() == "keep" and path.is_symlink()
    path.unlink()
    path.symlink_to("/dev/null")
    code, err = run(path, ["--force"], capsys)
    assert code == 2 and "symbolic link" in _one_error_line(err)
    path.unlink()
    if not beside:  # a name of any suffix: the device itself, and a FIFO
        for device, kind in (("/dev/null", "character device"), (fifo, "FIFO")):
            code, err = run(device, ["--force"], capsys)
            assert code == 2 and f"is a {kind}; refusing" in _one_error_line(err)
    else:  # the file beside it is never a device or a link either
        os.mkfifo(path.with_suffix(beside[0]))
        code, err = run(path, ["--force"], capsys)
        assert code == 2 and "is a FIFO; refusing" in _one_error_line(err)
        assert not path.exists()
    assert _is_char_device("/dev/null") and stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert _leftovers(tmp_path) == []


# --- each reader of a file named on a command line ------------------------------------------------
def _bad_files(tmp_path: Path, good: Path) -> dict[str, Path]:
    """A device, a FIFO, deep JSON and a truncated copy of ``good``, each under ``good``'s suffix."""
    suffix = good.suffix
    made = {
        "device": tmp_path / f"zero{suffix}",
        "fifo": tmp_path / f"fifo{suffix}",
        "deep": tmp_path / f"deep{suffix}",
        "truncated": tmp_path / f"cut{suffix}",
    }
    made["device"].symlink_to("/dev/zero")
    os.mkfifo(made["fifo"])
    made["deep"].write_bytes(DEEP)
    data = good.read_bytes()
    made["truncated"].write_bytes(data[: len(data) // 2])
    return made


READER_MESSAGES = {"device": "character device", "fifo": "FIFO", "deep": "nests deeper", "truncated": "not valid JSON"}


@pytest.mark.parametrize("case", ["device", "fifo", "truncated", "deep"])
def test_a_reply_table_is_read_from_a_regular_file_only(case, tmp_path):
    from games.dice421 import reply

    bad = _bad_files(tmp_path, SHIPPED / "exact3.npz")
    if case == "deep":  # deep JSON where a reply file keeps it: its metadata
        import numpy as np

        with np.load(SHIPPED / "exact3.npz", allow_pickle=False) as z:
            arrays = {k: z[k] for k in z.files}
        arrays["metadata"] = np.frombuffer(DEEP[:20_000] + DEEP[-20_000:], dtype=np.uint8)
        bad["deep"].unlink()
        np.savez(bad["deep"], **arrays)
    why = {
        "device": "character device",
        "fifo": "FIFO",
        "truncated": "not a readable reply file",
        "deep": "nests deeper",
    }[case]
    with pytest.raises(reply.ReplyFileError, match=why) as e:
        reply.load(bad[case])
    assert "\n" not in str(e.value)


@pytest.mark.parametrize("case", READER_MESSAGES)
def test_checkpoint_metadata_is_read_from_a_regular_file_only(case, tmp_path, capsys):
    from play.__main__ import main

    bad = _bad_files(tmp_path, SHIPPED / "ppo-420.json")[case]
    weights = bad.with_suffix(".pt")
    weights.write_bytes((SHIPPED / "ppo-420.pt").read_bytes())
    out = io.StringIO()
    code = main(["match", "420", "--agent", str(weights), "--opponent", "random", "--games", "1"], out=out)
    assert code == 2 and out.getvalue() == ""
    assert READER_MESSAGES[case] in _one_error_line(capsys.readouterr().err)


def test_checkpoint_weights_are_read_from_a_regular_file_only(tmp_path, capsys):
    from play.__main__ import main

    (tmp_path / "w.json").write_bytes((SHIPPED / "ppo-420.json").read_bytes())
    os.mkfifo(tmp_path / "w.pt")
    assert (
        main(
            ["match", "420", "--agent", str(tmp_path / "w.pt"), "--opponent", "random", "--games", "1"],
            out=io.StringIO(),
        )
        == 2
    )
    assert "FIFO" in _one_error_line(capsys.readouterr().err)


# --- Ctrl-C ----------------------------------------------------------------------------------------
def _sigint_default() -> None:
    """In the child before it runs Python: SIGINT as a foreground program has it (a shell
    starts a background job with SIGINT ignored, which Python then leaves ignored)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _interrupt(argv: list[str], delay: float) -> tuple[int, str]:
    """Run ``python -X importtime -m play ARGV``, send it SIGINT ``delay`` seconds after the
    interpreter has started (its ``site`` import done: before that no code of ours runs);
    its exit status and what it wrote on stderr but the import times."""
    proc = subprocess.Popen(
        [sys.executable, "-X", "importtime", "-m", "play", *argv],
        cwd=ROOT,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        preexec_fn=_sigint_default,  # a test run in the background (SIGINT ignored) still tests Ctrl-C
    )
    lines: list[bytes] = []
    started = threading.Event()

    def drain():
        for line in proc.stderr:
            lines.append(line)
            if line.rstrip().endswith(b"| site"):
                started.set()
        started.set()

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    assert started.wait(30)
    time.sleep(delay)
    still_running = proc.poll() is None
    proc.send_signal(signal.SIGINT)
    try:
        code = proc.wait(30)
    finally:
        if proc.poll() is None:  # never leave it running: it plays ten million games
            proc.kill()
            proc.wait()
    reader.join(10)
    assert still_running, "the command ended before the signal"
    err = b"".join(line for line in lines if not line.startswith(b"import time:")).decode()
    return code, err


@pytest.mark.parametrize("delay", [0.05, 0.3, 1.0])
def test_ctrl_c_at_any_moment_of_python_m_play_is_one_line_and_130(delay):
    code, err = _interrupt(["evaluate", "420", "--agent", "greedy", "--games", "10000000", "--seed", "1"], delay)
    assert code == 130, err
    assert "Traceback" not in err and err.strip() == "Interrupted.", err


def test_a_ctrl_c_caught_after_it_left_code_run_by_exec_still_ends_python_m_with_130(tmp_path):
    """A Ctrl-C during an import can land in code that ``exec`` runs (``dataclasses``
    makes its methods so); CPython then marks it as not handled although ``main`` caught
    it, and ``python -m`` would end the program by SIGINT (-2 to a caller), not with the
    status 130 it returned.  ``core.cli.run_quietly`` keeps the status: the same program
    every time, where the test above meets that moment only now and then."""
    (tmp_path / "caught_in_exec.py").write_text(
        "from core.cli import run_quietly\n"
        "def main():\n"
        "    try:\n"
        "        exec('raise KeyboardInterrupt')\n"
        "    except KeyboardInterrupt:\n"
        "        return 130\n"
        "run_quietly(main)\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(tmp_path)])}
    done = subprocess.run([sys.executable, "-m", "caught_in_exec"], cwd=tmp_path, env=env, capture_output=True)
    assert done.returncode == 130, done.stderr.decode()
