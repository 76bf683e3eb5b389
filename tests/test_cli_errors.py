"""What a person sees from the command lines: every bad option value is one
``error:`` line and exit code 2 (never a traceback), output piped into ``head``
ends quietly, every line the terminal games, matches and evaluations print fits
in 80 columns, and training's progress bar ends where the run does
(``python -m train.plot``'s own tests are in tests/test_plot.py)."""

from __future__ import annotations

import io
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from play.__main__ import main as play_main
from play.terminal import ScriptedInput
from train.__main__ import main as train_main

ROOT = Path(__file__).resolve().parent.parent
SHIPPED = ROOT / "checkpoints"
WIDTH = 80


# --- files that are not what an option wants --------------------------------------------
@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, str]:
    """Paths for bad values: a folder, a text file, a corrupt checkpoint, a checkpoint of
    the other game, a truncated one, a metadata file that is not JSON, a plain file where
    a folder is wanted, a path under a file."""
    root = tmp_path_factory.mktemp("bad")
    (root / "folder").mkdir()
    (root / "notes.txt").write_text("not a checkpoint\n")
    (root / "random.pt").write_bytes(os.urandom(512))  # no NAME.json next to it
    (root / "badjson.pt").write_bytes(os.urandom(512))
    (root / "badjson.json").write_text('{"format": "dice-arena-policy"')
    shutil.copy(SHIPPED / "ppo-420.json", root / "truncated.json")
    (root / "truncated.pt").write_bytes((SHIPPED / "ppo-420.pt").read_bytes()[:100])
    shutil.copy(SHIPPED / "ppo-421.pt", root / "game421.pt")
    shutil.copy(SHIPPED / "ppo-421.json", root / "game421.json")
    (root / "afile").write_text("x")
    return {
        "folder": str(root / "folder"),
        "text": str(root / "notes.txt"),
        "corrupt": str(root / "random.pt"),
        "badjson": str(root / "badjson.pt"),
        "truncated": str(root / "truncated.pt"),
        "other_game": str(root / "game421.pt"),
        "file": str(root / "afile"),
        "under_file": str(root / "afile" / "sub"),
        "root": str(root),
    }


def _fill(argv, files):
    return [a.format(**files) if "{" in a else a for a in argv]


def _one_error_line(err: str) -> str:
    """The one ``error:`` line of ``err`` (argparse's usage lines may come before it)."""
    assert "Traceback" not in err, err
    errors = [line for line in err.splitlines() if "error:" in line]
    assert len(errors) == 1, err
    assert err.rstrip("\n").splitlines()[-1] == errors[0], err
    return errors[0]


LONG = "a" * 300
AGENT_VALUES = [  # (value, what the message says)
    ("", "give a bot name or a checkpoint file"),
    ("   ", "give a bot name or a checkpoint file"),
    ("nosuchbot", "unknown agent 'nosuchbot'"),
    ("{folder}", "is a folder, not a checkpoint"),
    ("{text}", "not a checkpoint"),
    ("/dev/null", "not a checkpoint"),
    ("{corrupt}", "metadata file"),
    ("{badjson}", "not valid JSON"),
    ("{truncated}", "cannot read the weights"),
    ("{other_game}", "checkpoint for game 421, not 420"),
    (LONG * 20, "cannot look for a checkpoint there"),
]

PLAY_CASES = [
    # python -m play 420 / 421
    *((["420", "--opponent", v], m) for v, m in AGENT_VALUES),
    (["421", "--opponent", "{truncated}"], "checkpoint for game 420, not 421"),
    (["420", "--opponent", "greedy", "--opponent", "greedy"], "--opponent given 2 times for 2 players"),
    (["420", "--players", "3", "--opponent", "ppo-420"], "trained for 2 players"),
    (["421", "--players", "3", "--opponent", "optimal"], "two players only"),
    *((["420", "--players", v], "--players") for v in ("0", "1", "9", "-1", "x", "")),
    *((["421", "--players", v], "--players") for v in ("4", "1")),
    *((["420", "--seat", v], "--seat") for v in ("0", "3", "-1", "x", "", "purple")),
    *((["421", "--pot", v], "--pot") for v in ("0", "-1", "101", "5000", "x", "", "1.5")),
    (["420", "--pot", "5"], "unrecognized arguments: --pot"),
    *((["420", "--seed", v], "--seed") for v in ("-1", str(2**32), str(10**40), "x", "", "1.5")),
    *((["421", "--seed", v], "--seed") for v in ("-1", str(2**32))),
    *((["420", "--games", v], "--games") for v in ("0", "-1", "x", str(10**9))),
    # match
    *((["match", "420", "--agent", v, "--opponent", "random"], m) for v, m in AGENT_VALUES),
    (["match", "420", "--agent", "greedy", "--opponent", ""], "give a bot name"),
    (
        ["match", "420", "--agent", "greedy", "--opponent", "random", "--opponent2", ""],
        "--opponent2 '': give a bot name",
    ),
    (
        ["match", "420", "--agent", "greedy", "--opponent", "random", "--opponent2", "{folder}", "--players", "3"],
        "is a folder",
    ),
    (
        ["match", "420", "--agent", "greedy", "--opponent", "random", "--opponent2", "random", "--players", "2"],
        "needs --players 3",
    ),
    (["match", "420", "--agent", "ppo-420", "--opponent", "greedy", "--players", "3"], "trained for 2 players"),
    *(
        (["match", "420", "--agent", "greedy", "--opponent", "random", "--players", v], "--players")
        for v in ("0", "1", "9", "-3", "x", str(10**30))
    ),
    *(
        (["match", "421", "--agent", "heuristic", "--opponent", "random", "--pot", v], "--pot")
        for v in ("0", "101", "5000", "x")
    ),
    (["match", "420", "--agent", "greedy", "--opponent", "random", "--pot", "5"], "420 has no option pot"),
    *(
        (["match", "420", "--agent", "greedy", "--opponent", "random", "--games", v], "--games")
        for v in ("0", "-5", "x", str(10**9))
    ),
    *(
        (["match", "420", "--agent", "greedy", "--opponent", "random", "--seed", v], "--seed")
        for v in ("-1", str(2**32), "x")
    ),
    (["match", "422", "--agent", "greedy", "--opponent", "random"], "invalid choice"),
    (["match", "420", "--opponent", "random"], "--agent"),
    # evaluate
    *((["evaluate", "420", "--agent", v], m) for v, m in AGENT_VALUES),
    *((["evaluate", "420", "--agent", "greedy", "--games", v], "--games") for v in ("0", "-1", "x")),
    *((["evaluate", "420", "--agent", "greedy", "--seed", v], "--seed") for v in ("-1", str(2**32))),
    *((["evaluate", "421", "--agent", "heuristic", "--pot", v], "--pot") for v in ("0", "101")),
    (["evaluate", "420", "--agent", "greedy", "--pot", "5"], "420 has no option pot"),
    (["evaluate", "421", "--agent", "ppo-421", "--exact", "--pot", "20"], "trained for pot 15"),
    # export
    *((["export", "420", "--agent", v, "--out", "{root}/x.csv"], m) for v, m in AGENT_VALUES),
    (["export", "420", "--agent", "greedy", "--out", "{folder}"], "is a folder"),
    (["export", "420", "--agent", "greedy", "--out", ""], "--out ''"),
    (["export", "420", "--agent", "greedy", "--out", "{under_file}/x.csv"], "no folder"),
    (["export", "421", "--agent", "heuristic", "--out", "{root}/x.csv"], "invalid choice"),
    (["export", "420", "--agent", "greedy"], "--out"),
    # the command itself
    ([], "COMMAND"),
    (["422"], "invalid choice"),
]


@pytest.mark.parametrize("argv,message", PLAY_CASES, ids=[" ".join(a)[:60] for a, _ in PLAY_CASES])
def test_every_bad_play_option_is_one_error_line_and_exit_code_2(argv, message, files, capsys):
    out = io.StringIO()
    code = play_main(_fill(argv, files), input_fn=lambda prompt: "q", out=out)
    err = capsys.readouterr().err
    assert code == 2, (out.getvalue(), err)
    assert message in _one_error_line(err)
    assert out.getvalue() == ""  # nothing played, nothing printed but the error


TRAIN_CASES = [
    (["nosuchpreset"], "invalid choice"),
    *((["ppo-420", "--timesteps", v], "--timesteps") for v in ("0", "-1", "x", str(10**13))),
    *((["ppo-420", "--seed", v], "--seed") for v in ("-1", str(2**32), str(10**40), "x", "")),
    *((["ppo-420", "--n-envs", v], "--n-envs") for v in ("0", "-1", "1000000", "x")),
    *((["ppo-420", "--eval-every", v], "--eval-every") for v in ("0", "-1", "x")),
    (["ppo-420", "--name", ""], "--name"),
    (["ppo-420", "--name", LONG], "--name is 300 characters long"),
    (["ppo-420", "--name", "../up"], "--name"),
    (["ppo-420", "--name", ".hidden"], "--name"),
    (["ppo-420", "--checkpoint-dir", "{file}"], "--checkpoint-dir {file}: is a file"),
    (["ppo-420", "--checkpoint-dir", "{under_file}"], "--checkpoint-dir {under_file}: cannot write there"),
    (["ppo-420", "--checkpoint-dir", ""], "--checkpoint-dir"),
    (["ppo-420", "--logdir", "{file}"], "--logdir {file}: is a file"),
    (["ppo-420", "--logdir", "{under_file}"], "--logdir {under_file}: cannot write there"),
    (["ppo-420", "--logdir", ""], "--logdir"),
    (["ppo-420", "--resume", "--overwrite"], "not allowed with argument"),
    (["ppo-420", "--resume", "--name", "never-saved"], "no saved run"),
]


@pytest.mark.parametrize("argv,message", TRAIN_CASES, ids=[" ".join(a)[:60] for a, _ in TRAIN_CASES])
def test_every_bad_train_option_is_one_error_line_and_exit_code_2(argv, message, files, tmp_path, capsys):
    argv = _fill(argv, files)
    for flag in ("--checkpoint-dir", "--logdir"):  # never train into the project's own folders
        if flag not in argv:
            argv += [flag, str(tmp_path / flag.strip("-"))]
    try:
        code = train_main(argv)
    except SystemExit as e:  # argparse's own usage errors
        code = e.code
    err = capsys.readouterr().err
    assert code == 2, err
    assert message.format(**files) in _one_error_line(err)


BAD_PRESET_SETTINGS = [
    ({"lr_power": -1.0}, "preset ppo-420: lr_power is the learning rate fall's power, a positive number, got -1.0"),
    ({"critic_lr_power": 0.0}, "preset ppo-420: critic_lr_power is the critic's learning rate fall's power"),
    ({"critic_lr_power": 1.0, "lr_final": 1e-5}, "preset ppo-420: critic_lr_power needs the learning rate to fall"),
    ({"n_epochs_late": 0}, "preset ppo-420: n_epochs_late is a number of passes, at least 1, got 0"),
    ({"n_epochs_late": 2, "late_share": 1.5}, "preset ppo-420: late_share is a share of the run in (0, 1], got 1.5"),
    ({"q_advantage": 2.0}, "preset ppo-420: q_advantage and q_advantage_final are shares in 0..1"),
    ({"mixed_precision": "float16"}, "preset ppo-420: mixed_precision is 'float16' (known: bfloat16"),
    (
        {"mixed_precision": "bfloat16", "policy": {"class": "MlpPolicy"}},
        "preset ppo-420: mixed_precision needs a policy that computes its hidden layers in a dtype of its own "
        "(FastMlpPolicy and its kind), not MaskableActorCriticPolicy",
    ),
    ({"pool": {"heuristic": 1.5}}, "preset ppo-420: pool shares must be in 0..1"),
    ({"snapshots": 2}, "preset ppo-420: snapshots need a positive count, share and snapshot_every together"),
    ({"policy": {"class": "NoSuch"}}, "unknown policy class 'NoSuch' in preset ppo-420: policy.class"),
    ({"train_env": {"nope": 1}}, "preset ppo-420: train_env names 'nope', which the training env Vec420Env"),
]


@pytest.mark.parametrize("settings,message", BAD_PRESET_SETTINGS, ids=["+".join(s) for s, _ in BAD_PRESET_SETTINGS])
def test_a_preset_setting_a_run_cannot_take_is_one_error_line_before_anything_is_written(
    settings, message, tmp_path, capsys, monkeypatch
):
    import dataclasses

    import train.__main__ as cli

    monkeypatch.setitem(cli.PRESETS, "ppo-420", dataclasses.replace(cli.PRESETS["ppo-420"], **settings))
    code = train_main(["ppo-420", "--checkpoint-dir", str(tmp_path / "ck"), "--logdir", str(tmp_path / "runs")])
    err = capsys.readouterr().err
    assert code == 2, err
    assert message in _one_error_line(err)
    assert list((tmp_path / "ck").iterdir()) == []  # no lock, checkpoint or metadata left
    assert list((tmp_path / "runs").iterdir()) == []  # no TensorBoard run


# --- a trained bot used at another pot ---------------------------------------------------
def test_a_bot_trained_for_another_pot_is_named_in_one_warning_line(capsys):
    argv = ["match", "421", "--agent", "ppo-421", "--opponent", "random", "--pot", "20", "--games", "2", "--seed", "1"]
    out = io.StringIO()
    assert play_main(argv, out=out) == 0
    err = capsys.readouterr().err.splitlines()
    assert err == ["warning: ppo-421 was trained for pot 15; here it plays at pot 20 and may play worse"]
    assert "pot 20" in out.getvalue()
    # the terminal game warns once for two opponents that are the same bot, before the game starts
    assert (
        play_main(
            ["421", "--players", "3", "--opponent", "ppo-421", "--pot", "9", "--seed", "1"],
            input_fn=lambda prompt: "q",
            out=io.StringIO(),
        )
        == 0
    )
    assert capsys.readouterr().err.count("warning: ppo-421 was trained for pot 15") == 1
    # at its own pot, nothing
    assert play_main(["421", "--opponent", "ppo-421", "--seed", "1"], input_fn=lambda p: "q", out=io.StringIO()) == 0
    assert capsys.readouterr().err == ""


def test_a_checkpoint_is_named_by_its_file_stem_at_the_table(capsys):
    argv = [
        "match",
        "420",
        "--agent",
        str(SHIPPED / "ppo-420.pt"),
        "--opponent",
        "greedy",
        "--games",
        "2",
        "--seed",
        "1",
    ]
    out = io.StringIO()
    assert play_main(argv, out=out) == 0
    assert out.getvalue().startswith("420 match: ppo-420 vs greedy, 2 games")


# --- output piped into head ------------------------------------------------------------
@pytest.mark.parametrize(
    "command",
    [
        ["play", "420", "--opponent", "greedy", "--seed", "1"],
        ["play", "match", "420", "--agent", "greedy", "--opponent", "random", "--games", "4", "--seed", "1"],
        ["play", "--help"],
        ["train", "--help"],
        [
            "train",
            "ppo-420",
            "--timesteps",
            "2048",
            "--n-envs",
            "32",
            "--eval-every",
            "100000",
            "--no-progress-bar",
            "--checkpoint-dir",
            "{tmp}/ck",
            "--logdir",
            "{tmp}/runs",
        ],
    ],
)
@pytest.mark.slow
def test_a_reader_that_goes_away_ends_the_program_quietly(command, tmp_path):
    read, write = os.pipe()
    os.close(read)  # like `| head -1` once head has exited: every write fails with EPIPE
    try:
        done = subprocess.run(
            [sys.executable, "-m", *(c.format(tmp=tmp_path) for c in command)],
            cwd=ROOT,
            stdin=subprocess.DEVNULL,
            stdout=write,
            stderr=subprocess.PIPE,
            text=True,
            timeout=300,
        )
    finally:
        os.close(write)
    assert done.stderr == ""  # no BrokenPipeError traceback, no "Exception ignored"
    assert done.returncode == (0 if "--help" in command else 1)  # argparse drops a help it cannot write


# --- 80 columns ---------------------------------------------------------------------------
class Person:
    """Types what a person might: help, the legal moves, nonsense, illegal moves, then plays
    on ("all"; the leader of a 421 round sometimes stops), echoing like a terminal."""

    def __init__(self, out, opening=("?", "legal", "xyz", "1 1 1 1 1", "keep 9", "9", "")):
        self.out, self.script, self.asked = out, list(opening), 0

    def __call__(self, prompt: str) -> str:
        self.asked += 1
        if self.asked > 2000:
            raise EOFError
        answer = self.script.pop(0) if self.script else ("s" if "Stop" in prompt and self.asked % 3 == 0 else "all")
        print(prompt + answer, file=self.out)
        return answer


def _wide_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if len(line) > WIDTH]


GAMES = [
    ["420", "--opponent", "foundation"],
    ["420", "--players", "5", "--opponent", "foundation"],
    ["420", "--players", "8", "--opponent", "foundation", "--seat", "8"],
    ["421", "--opponent", "greedy421", "--pot", "100"],
    ["421", "--players", "3", "--opponent", "heuristic", "--opponent", "greedy421"],
    ["421", "--players", "3", "--opponent", "cautious", "--pot", "30", "--games", "2"],
]


@pytest.mark.parametrize("argv", GAMES, ids=[" ".join(a) for a in GAMES])
def test_every_line_of_the_terminal_games_fits_in_80_columns(argv):
    seen = ""
    for seed in range(4):
        out = io.StringIO()
        assert play_main([*argv, "--seed", str(seed)], input_fn=Person(out), out=out, err=out) == 0
        assert _wide_lines(out.getvalue()) == []
        seen += out.getvalue()
    assert "Legal moves with" in seen and "How to play" in seen and "I could not read 'xyz'" in seen
    if argv[0] == "421":  # the long lines of 421: exchanges, RAMPO, stops, the follower's turn
        for words in ("gives", "RAMPO", "the others must make exactly", "so you must make exactly"):
            assert words in seen
    else:
        assert "may be kept (R3)" in seen and "is over 20" in seen


@pytest.mark.parametrize(
    "argv",
    [
        ["421", "--opponent", "heuristic"],
        ["421", "--players", "3", "--opponent", "cautious"],
        ["420", "--opponent", "greedy"],
        ["420", "--players", "7", "--opponent", "foundation"],
    ],
)
def test_the_hints_sit_on_their_own_lines_and_the_prompts_leave_room_to_type(argv):
    for seed in range(10):  # a game in which the person is asked a few times
        out = io.StringIO()
        typed = ScriptedInput(["?", "legal", "all", "all", "all", "q"], out)
        assert play_main([*argv, "--seed", str(seed)], input_fn=typed, out=out) == 0
        if len(typed.prompts) > 2:
            break
    assert len(typed.prompts) > 2
    first, *later = typed.prompts
    assert first.count("\n") >= 1 and '"q" quits' in first  # the long hint, before the first question
    assert all('"q" quits' not in prompt for prompt in later)
    assert all(len(prompt.splitlines()[-1]) <= 64 for prompt in typed.prompts)  # 16 columns left to type in
    assert _wide_lines(out.getvalue()) == []


TABLES = [
    ["match", "420", "--agent", "foundation", "--opponent", "greedy", "--games", "20"],
    ["match", "420", "--players", "8", "--agent", "foundation", "--opponent", "greedy", "--games", "16"],
    ["match", "421", "--agent", "greedy421", "--opponent", "heuristic", "--opponent2", "cautious", "--games", "12"],
    ["evaluate", "420", "--agent", "all", "--exact"],
    ["evaluate", "420", "--agent", "foundation", "--games", "10"],
    ["evaluate", "421", "--agent", "greedy421", "--games", "4"],
    ["evaluate", "421", "--agent", "heuristic", "--exact", "--pot", "5"],
]


@pytest.mark.parametrize("argv", TABLES, ids=[" ".join(a[:4]) for a in TABLES])
def test_match_and_evaluate_tables_fit_in_80_columns(argv, capsys):
    out = io.StringIO()
    assert play_main([*argv, "--seed", "1"] if "--exact" not in argv else argv, out=out) == 0
    assert out.getvalue().strip() and _wide_lines(out.getvalue()) == []
    assert _wide_lines(capsys.readouterr().err) == []


# --- training's progress bar ---------------------------------------------------------------
def _train_argv(tmp_path, *extra):
    return [
        "ppo-420",
        "--timesteps",
        "5000",
        "--n-envs",
        "32",
        "--eval-every",
        "100000",
        "--seed",
        "1",
        "--checkpoint-dir",
        str(tmp_path / "ck"),
        "--logdir",
        str(tmp_path / "runs"),
        *extra,
    ]


@pytest.mark.slow
def test_the_progress_bar_ends_at_the_steps_the_run_makes(tmp_path, capsys):
    # rollouts of 32 games x 64 steps = 2,048 steps: asked for 5,000, the run makes 6,144
    assert train_main(_train_argv(tmp_path)) == 0
    text = capsys.readouterr().out
    assert "6,144/6,144" in text and "/5,000" not in text
    assert "run ppo-420-seed1: 6,144 steps" in text


def test_ctrl_c_closes_the_progress_bar_before_the_summary(tmp_path, capsys, monkeypatch):
    from train import run

    real = run.ExactEvalCallback._on_step

    def ctrl_c_at_4096(self):
        if self.num_timesteps >= 4096:
            raise KeyboardInterrupt
        return real(self)

    monkeypatch.setattr(run.ExactEvalCallback, "_on_step", ctrl_c_at_4096)
    assert train_main(_train_argv(tmp_path, "--timesteps", "100000")) == 130
    lines = capsys.readouterr().out.splitlines()
    bars = [i for i, line in enumerate(lines) if re.search(r"\d%.*[\d,]+/[\d,]+", line)]
    interrupted = next(i for i, line in enumerate(lines) if line.startswith("interrupted at"))
    assert bars and max(bars) < interrupted  # drawn once, before the run reports and saves
    assert lines[-1].startswith("continue with: python -m train ppo-420")


@pytest.mark.parametrize("argv", [[], ["420"], ["421"], ["match"], ["evaluate"], ["export"], ["train"], ["plot"]])
def test_every_help_fits_in_80_columns(argv, monkeypatch, capsys):
    from train import plot

    monkeypatch.setenv("COLUMNS", "80")  # argparse wraps its own text to the terminal's width
    run = {"train": train_main, "plot": plot.main}.get(argv[0] if argv else "", play_main)
    try:
        code = run([*(argv if run is play_main else []), "--help"])
    except SystemExit as e:
        code = e.code
    text = capsys.readouterr().out
    assert code == 0 and "usage:" in text
    assert _wide_lines(text) == []
