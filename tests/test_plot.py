"""``python -m train.plot``: the exact gap against steps and against wall-clock seconds,
for runs and seed studies, each group drawn as the median with its interquartile range.

* the median and IQR of known histories, interpolated onto the group's grid, are
  exactly what they must be; one run is its own line;
* run files group by name less ``-seedN`` (each seed once), a study is one group,
  ``--each-run`` and ``--gap`` choose what is drawn; the printed lines fit 80 columns;
* the shipped runs are drawn without touching docs/, an existing picture is kept
  without ``--force``, and every bad input (a file that is not a run or a study, a
  device, a FIFO, deep JSON, a run named like a formula, numbers no run records) is
  one ``error:`` line and exit code 2, or a picture with the names as text.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import numpy as np
import pytest

from train import plot

ROOT = Path(__file__).resolve().parent.parent
SHIPPED = ROOT / "checkpoints"
PNG = b"\x89PNG\r\n\x1a\n"
DEEP = b"[" * 200_000 + b"]" * 200_000


def _one_error_line(err: str) -> str:
    """The one ``error:`` line of ``err`` (argparse's usage lines may come before it), and no traceback."""
    assert "Traceback" not in err, err
    errors = [line for line in err.splitlines() if "error:" in line]
    assert len(errors) == 1, err
    assert err.rstrip("\n").splitlines()[-1] == errors[0], err
    return errors[0]


def _meta(path: Path, history: list[dict], **fields) -> Path:
    """A run's metadata file at ``path`` with this evaluation history."""
    meta = {"name": path.stem, "game": "420", "seed": 0, "eval_history": history}
    meta.update(fields)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(meta))
    return path


def _history(xs: list[float], gaps: list[float], key: str = "gap_pp") -> list[dict]:
    return [{key: g, "timesteps": x, "wall_seconds": x / 100} for x, g in zip(xs, gaps)]


def _study(folder: Path, runs: dict[str, list[dict]], preset: str = "ppo-420") -> Path:
    """A seed study's folder like ``python -m train seeds`` writes: study.json and a
    folder per run with its metadata."""
    folder.mkdir(parents=True, exist_ok=True)
    for seed, (name, history) in enumerate(runs.items()):
        _meta(folder / name / f"{name}.json", history, seed=seed, preset=preset)
    study = {"preset": preset, "game": "420", "runs": [{"name": name, "seed": i} for i, name in enumerate(runs)]}
    (folder / "study.json").write_text(json.dumps(study))
    return folder


# --- the median and the interquartile range ------------------------------------------------
def test_the_median_and_iqr_of_known_histories_are_exact():
    """Three runs on x = 0, 10, 20 (30): one ends early and is held at its last gap,
    one jumps to exactly 0 (drawn at FLOOR; halfway there on the log scale is the
    geometric mean), one is given out of order."""
    a = ([20, 0, 10], [2, 8, 4])  # out of order: sorted by x
    b = ([0, 10, 20, 30], [4, 2, 1, 0.5])
    c = ([0, 20], [2, 0])
    x, median, low, high = plot.band([a, b, c])
    floor, mid = plot.FLOOR, np.sqrt(2 * plot.FLOOR)  # c at 10: between 2 and FLOOR on the log scale
    np.testing.assert_array_equal(x, [0, 10, 20, 30])
    # at each x the three gaps, sorted: (a, b, c) = (8, 4, 2), (4, 2, mid), (2, 1, floor), (2, 0.5, floor)
    np.testing.assert_allclose(median, [4, 2, 1, 0.5], rtol=1e-12)
    np.testing.assert_allclose(low, [3, (mid + 2) / 2, (floor + 1) / 2, (floor + 0.5) / 2], rtol=1e-12)
    np.testing.assert_allclose(high, [6, 3, 1.5, 1.25], rtol=1e-12)


def test_one_run_is_its_own_line_and_the_grid_starts_where_every_run_has_begun():
    x, median, low, high = plot.band([([1, 2, 4], [5.0, 0.0, 0.25])])
    np.testing.assert_array_equal(x, [1, 2, 4])
    np.testing.assert_allclose(median, [5.0, plot.FLOOR, 0.25], rtol=1e-12)
    assert median[1] == plot.FLOOR  # exactly: the title's "gap 0" points sit there
    np.testing.assert_array_equal(low, median)
    np.testing.assert_array_equal(high, median)
    # a run that starts later: the grid begins at its first x (5), where both are defined
    x, median, _, _ = plot.band([([0, 10], [1.0, 1.0]), ([5, 20], [3.0, 3.0])])
    np.testing.assert_array_equal(x, [5, 10, 20])
    np.testing.assert_allclose(median, [2.0, 2.0, 2.0], rtol=1e-12)


def test_a_grid_of_too_many_points_is_evenly_spaced(monkeypatch):
    monkeypatch.setattr(plot, "MAX_GRID", 5)
    x, median, _, _ = plot.band([([0, 1, 2, 3, 4, 5, 6, 7], [1, 2, 4, 8, 16, 32, 64, 128]), ([0.5, 8], [1, 1])])
    np.testing.assert_allclose(x, [0.5, 2.375, 4.25, 6.125, 8])
    # the first run at x: 2 ** x (exact on the log scale), held at 128 after 7; the second run is 1
    np.testing.assert_allclose(median, (np.exp2(np.minimum(x, 7)) + 1) / 2, rtol=1e-12)


# --- groups, gaps, the picture and the lines printed ---------------------------------------
def test_a_study_and_run_files_draw_the_median_iqr_and_print_80_columns(tmp_path, capsys):
    study = _study(
        tmp_path / "ppo-420-study",
        {
            "ppo-420-seed0": _history([0, 100, 200], [8, 4, 2], "gap_pp_red"),
            "ppo-420-seed1": _history([0, 100, 200], [4, 2, 0], "gap_pp_red"),
            "ppo-420-seed2": _history([0, 100, 200], [6, 3, 1], "gap_pp_red"),
        },
    )
    runs = tmp_path / "runs"
    for seed in (0, 1):  # two seeds of one name: one group; a long name and long figures
        _meta(
            runs / f"a-much-longer-name-of-a-run-seed{seed}.json",
            _history([0, 50], [1, 1.23e-5 + 1.27e-5 * seed]),
            seed=seed,
        )
    out = tmp_path / "gap.png"
    inputs = [study, runs / "a-much-longer-name-of-a-run-seed0.json", runs / "a-much-longer-name-of-a-run-seed1.json"]
    assert plot.main([*map(str, inputs), "--out", str(out)]) == 0
    assert out.read_bytes()[:8] == PNG and out.stat().st_size > 10_000
    lines = capsys.readouterr().out.splitlines()
    assert lines == [
        " " * 56 + "gap at the end (pp)",
        "curve                                   runs    steps   median  IQR",
        "ppo-420-study (420, mean of seats)         3   0.00 M        1  0.5 to 1.5",
        "a-much-longer-name-of-a-run (420,…     2   0.00 M 1.87e-05  1.55e-05 to 2.18e-05",
        f"wrote {out}",
    ]
    assert max(map(len, lines[:-1])) == len(lines[3]) == 80  # the label gives way to long figures
    # the same curves, as arrays: the study's against steps and against seconds
    _, found = plot.plot_curves([study / "study.json"], tmp_path / "again.png")
    [curve] = found
    assert curve.runs == 3 and curve.label == "ppo-420-study (420, mean of seats)"
    x, median, low, high = curve.steps
    np.testing.assert_array_equal(x, [0, 100, 200])
    np.testing.assert_allclose(median, [6, 3, 1], rtol=1e-12)
    np.testing.assert_allclose(low, [5, 2.5, (plot.FLOOR + 1) / 2], rtol=1e-12)
    np.testing.assert_allclose(high, [7, 3.5, 1.5], rtol=1e-12)
    seconds = curve.seconds
    np.testing.assert_array_equal(seconds[0], [0, 1, 2])
    for by_steps, by_time in zip(curve.steps[1:], seconds[1:]):
        np.testing.assert_array_equal(by_steps, by_time)


def test_runs_group_by_name_less_seed_and_each_seed_once(tmp_path):
    def run(stem, seed, game="420"):
        return _meta(tmp_path / f"{stem}.json", _history([0, 1], [1, 1]), seed=seed, game=game)

    seeds = [run("p-seed0", 0), run("p-seed1", 1), run("p-seed2", 2)]
    other_game = run("q-seed0", 0, game="pig")
    groups = plot.group_runs(*plot.read_inputs([*seeds, other_game]))
    assert [(g.label, g.game, len(g.runs)) for g in groups] == [("p", "420", 3), ("q-seed0", "pig", 1)]
    # a run of the same seed (a copy of a run): nothing is grouped, each is labelled by its file
    (tmp_path / "b").mkdir()
    copy = Path(shutil.copy(seeds[0], tmp_path / "b" / "p-seed0.json"))
    before = run("p-before", 0)
    groups = plot.group_runs(*plot.read_inputs([seeds[0], copy, seeds[1]]))
    assert [(g.label, len(g.runs)) for g in groups] == [
        (f"{tmp_path.name}/p-seed0", 1),
        ("b/p-seed0", 1),
        ("p-seed1", 1),
    ]
    assert [len(g.runs) for g in plot.group_runs(*plot.read_inputs([seeds[0], before]))] == [1, 1]
    # --each-run: every run alone
    groups = plot.group_runs(*plot.read_inputs(seeds), each_run=True)
    assert [g.label for g in groups] == ["p-seed0", "p-seed1", "p-seed2"]
    # the same file twice, or a study's run given again, is refused
    with pytest.raises(plot.PlotError, match="given twice"):
        plot.read_inputs([seeds[0], tmp_path / "." / "p-seed0.json"])
    study = _study(tmp_path / "s", {"r-seed0": _history([0, 1], [1, 1])})
    with pytest.raises(plot.PlotError, match="given twice"):
        plot.read_inputs([study, study / "r-seed0" / "r-seed0.json"])


def test_gap_chooses_the_whole_game_the_worst_seat_or_each(tmp_path):
    history = [
        {"gap_pp_first": 3.0, "gap_pp_second": 1.0, "gap_pp": 2.5, "timesteps": 0, "wall_seconds": 0},
        {"gap_pp_first": 0.0, "gap_pp_second": 2.0, "gap_pp": 1.0, "timesteps": 10, "wall_seconds": 1},
    ]
    pig = plot.read_run(_meta(tmp_path / "pig.json", history, game="pig"))
    seats_only = plot.read_run(
        _meta(tmp_path / "420.json", [{k: v for k, v in h.items() if k != "gap_pp"} for h in history])
    )
    assert plot.curves(pig, "game") == [("whole game", [2.5, 1.0])]
    assert plot.curves(seats_only, "game") == [("mean of seats", [2.0, 1.0])]
    assert plot.curves(pig, "worst") == plot.curves(seats_only, "worst") == [("worst seat", [3.0, 2.0])]
    assert plot.curves(pig, "each") == [("as First", [3.0, 0.0]), ("as Second", [1.0, 2.0]), ("whole game", [2.5, 1.0])]
    no_seats = plot.read_run(_meta(tmp_path / "421.json", _history([0, 1], [4.0, 2.0]), game="421"))
    assert plot.curves(no_seats, "worst") == [("whole game", [4.0, 2.0])]
    _, found = plot.plot_curves([tmp_path / "pig.json"], tmp_path / "each.png", how="each")
    assert [c.label for c in found] == ["pig (pig, as First)", "pig (pig, as Second)", "pig (pig, whole game)"]


def _table_history() -> list[dict]:
    """A three-player run's history: sampled entries (no regret) and exact ones."""
    sampled = {"table_vs_heuristic_heuristic": 0.6, "table_se_pp": 0.3}
    exact = [(2.0, 3.0, 1.0), (0.5, 0.25, 0.125)]  # measured table, own table, another table
    history = [{**sampled, "timesteps": 0, "wall_seconds": 1}]
    for i, (measured, own, other) in enumerate(exact):
        history.append({**sampled, "timesteps": 10 * i + 5, "wall_seconds": 10 * i + 2})
        history.append(
            {
                "table_own_regret_pp": own,
                "table_vs_heuristic_heuristic": 0.66,
                "table_regret_vs_heuristic_heuristic_pp": measured,
                "table_vs_cautious_cautious": 0.7,
                "table_regret_vs_cautious_cautious_pp": other,
                "table_regret_pp": measured,
                "timesteps": 10 * i + 10,
                "wall_seconds": 10 * i + 8,
            }
        )
    return history


def test_a_run_at_a_table_of_three_draws_its_exact_regrets(tmp_path, capsys):
    final = {"table_regret_pp": 0.25, "table_own_regret_pp": 0.5, "table_vs_heuristic_heuristic": 0.67}
    path = _meta(tmp_path / "ppo-421-3p.json", _table_history(), game="421", timesteps=30, wall_seconds=40, exact=final)
    run = plot.read_run(path)
    assert [h["timesteps"] for h in run.history] == [10, 20, 30]  # the exact entries, then the final one
    measured, own = [2.0, 0.5, 0.25], [3.0, 0.25, 0.5]
    assert plot.curves(run, "game") == [("with heuristic x2", measured)]
    assert plot.curves(run, "each") == [("with heuristic x2", measured), ("at its own table", own)]
    assert plot.curves(run, "worst") == [("worst table", [3.0, 0.5, 0.5])]
    assert plot.main([str(path), "--gap", "each", "--out", str(tmp_path / "3p.png")]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].strip() == "regret at the end (pp)"
    assert out[2].split() == ["ppo-421-3p", "(421,", "with", "heuristic", "x2)", "1", "0.00", "M", "0.25"]
    assert out[3].split() == ["ppo-421-3p", "(421,", "at", "its", "own", "table)", "1", "0.00", "M", "0.5"]
    assert (tmp_path / "3p.png").read_bytes().startswith(PNG)
    sampled_only = _meta(tmp_path / "sampled.json", [h for h in _table_history() if "table_regret_pp" not in h])
    assert plot.main([str(sampled_only), "--out", str(tmp_path / "s.png")]) == 2
    assert "an exact table_regret_pp" in _one_error_line(capsys.readouterr().err)


def test_a_table_run_exact_only_at_its_end_is_its_final_point(tmp_path, capsys):
    sampled = [h for h in _table_history() if "table_regret_pp" not in h]
    final = {"table_regret_pp": 0.5, "table_own_regret_pp": 0.75, "table_regret_vs_heuristic_heuristic_pp": 0.5}
    path = _meta(tmp_path / "short.json", sampled, game="421", timesteps=30, wall_seconds=40, exact=final)
    run = plot.read_run(path)
    assert [h["timesteps"] for h in run.history] == [30]
    assert plot.curves(run, "each") == [("with heuristic x2", [0.5]), ("at its own table", [0.75])]


def test_runs_of_two_and_of_three_players_under_one_name_are_refused_in_one_line(tmp_path, capsys):
    _meta(tmp_path / "x-seed0.json", _history([0, 10], [2.0, 1.0]), game="421", seed=0)
    _meta(tmp_path / "x-seed1.json", _table_history(), game="421", seed=1)
    inputs = [str(tmp_path / "x-seed0.json"), str(tmp_path / "x-seed1.json")]
    assert plot.main([*inputs, "--out", str(tmp_path / "x.png")]) == 2
    assert "the runs of x record different gaps" in _one_error_line(capsys.readouterr().err)
    assert not (tmp_path / "x.png").exists()
    assert plot.main([*inputs, "--each-run", "--out", str(tmp_path / "x.png")]) == 0


def test_a_name_that_does_not_print_is_shown_on_one_line(tmp_path, capsys):
    run = _meta(tmp_path / "r.json", _history([0, 1], [1, 1]), name="a\nb\x1b[31mc")
    assert plot.main([str(run), "--out", str(tmp_path / "out.png")]) == 0
    assert capsys.readouterr().out.splitlines()[2].startswith("a?b?[31mc (420, whole game)  ")


def test_a_history_without_step_counts_is_drawn_against_seconds_only(tmp_path, capsys):
    run = _meta(tmp_path / "r.json", [{"gap_pp": 1.0, "wall_seconds": 1.0}, {"gap_pp": 0.5, "wall_seconds": 2.0}])
    assert plot.main([str(run), "--out", str(tmp_path / "out.png")]) == 0
    assert capsys.readouterr().out.splitlines()[2] == "r (420, whole game)                        1               0.5"
    assert (tmp_path / "out.png").read_bytes()[:8] == PNG


@pytest.mark.slow
def test_plot_draws_both_shipped_runs_and_never_overwrites_by_default(tmp_path, monkeypatch, capsys):
    docs_png = ROOT / "docs" / "gap-vs-time.png"
    before = docs_png.stat().st_mtime_ns if docs_png.exists() else None
    monkeypatch.chdir(tmp_path)
    for run in ("ppo-421", "ppo-420"):
        out = tmp_path / f"{run}.png"
        assert plot.main([str(SHIPPED / f"{run}.json"), "--out", str(out)]) == 0
        assert out.stat().st_size > 10_000 and out.read_bytes()[:8] == PNG
    _, _, history, keys = plot.read_history(SHIPPED / "ppo-421.json")
    assert keys == ["gap_pp"] and len(history) > 2
    # the run's final evaluation is its last point
    meta = json.loads((SHIPPED / "ppo-421.json").read_text())
    assert len(history) == len(meta["eval_history"]) + 1
    assert history[-1] == {
        "timesteps": meta["timesteps"],
        "wall_seconds": meta["wall_seconds"],
        "gap_pp": meta["exact"]["gap_pp"],
    }
    assert plot.read_history(SHIPPED / "ppo-420.json")[3] == ["gap_pp_red", "gap_pp_blue"]
    # two runs of one name are told apart by their files
    shutil.copy(SHIPPED / "ppo-421.json", tmp_path / "ppo-421-before.json")
    runs = [tmp_path / "ppo-421-before.json", SHIPPED / "ppo-421.json", SHIPPED / "ppo-420.json"]
    assert [name for name, *_ in plot.read_runs(runs)] == ["ppo-421-before", "ppo-421", "ppo-420"]
    assert [c.label for c in plot.plot_curves(runs, tmp_path / "three.png")[1]] == [
        "ppo-421-before (421, whole game)",
        "ppo-421 (421, whole game)",
        "ppo-420 (420, mean of seats)",
    ]
    # the default --out is in the current folder, and an existing file is kept without --force
    both = [str(SHIPPED / "ppo-420.json"), str(SHIPPED / "ppo-421.json")]
    capsys.readouterr()
    assert plot.main(both) == 0 and (tmp_path / "gap-vs-time.png").exists()
    printed = capsys.readouterr().out.splitlines()
    steps, gap = meta["timesteps"] / 1e6, meta["exact"]["gap_pp"]
    assert printed[2:] == [
        "ppo-420 (420, mean of seats)               1   0.72 M        0",
        f"ppo-421 (421, whole game)                  1  {steps:5.2f} M{gap:>9.3g}",
        "wrote gap-vs-time.png",
    ]
    assert plot.main(both) == 2
    assert "already exists; give --force" in _one_error_line(capsys.readouterr().err)
    assert plot.main([*both, "--force"]) == 0
    assert (docs_png.stat().st_mtime_ns if docs_png.exists() else None) == before


def test_a_study_of_the_shipped_run_copied_as_three_seeds(tmp_path, capsys):
    """Real histories: ppo-420's, as three seeds of a study (the second and third
    slower by 10% and 20% of the steps)."""
    meta = json.loads((SHIPPED / "ppo-420.json").read_text())
    folder = tmp_path / "ppo-420-study"
    names = []
    for seed in range(3):
        name = f"ppo-420-seed{seed}"
        copy = dict(meta, name=name, seed=seed, timesteps=int(meta["timesteps"] * (1 + seed / 10)))
        copy["eval_history"] = [dict(h, timesteps=int(h["timesteps"] * (1 + seed / 10))) for h in meta["eval_history"]]
        (folder / name).mkdir(parents=True)
        (folder / name / f"{name}.json").write_text(json.dumps(copy))
        names.append(name)
    (folder / "study.json").write_text(
        json.dumps({"preset": "ppo-420", "game": "420", "runs": [{"name": n} for n in names]})
    )
    assert plot.main([str(folder), "--out", str(tmp_path / "study.png")]) == 0
    assert (
        capsys.readouterr().out.splitlines()[2]
        == "ppo-420-study (420, mean of seats)         3   0.87 M        0  0 to 0"
    )
    [curve] = plot.plot_curves([folder / "study.json"], tmp_path / "again.png")[1]
    x, median, _, _ = curve.steps
    assert x[0] == int(1024 * 1.2) and x[-1] == int(meta["timesteps"] * 1.2) and median[-1] == plot.FLOOR
    x, median, low, high = curve.seconds  # the same seconds: the three runs' own first gap
    assert x[0] == meta["eval_history"][0]["wall_seconds"] and median[0] == low[0] == high[0]
    assert median[0] == pytest.approx(
        (meta["eval_history"][0]["gap_pp_red"] + meta["eval_history"][0]["gap_pp_blue"]) / 2
    )


# --- bad input: one error line, exit code 2, no picture -------------------------------------------
@pytest.mark.timeout(60)  # a read that would block on a FIFO fails instead
@pytest.mark.parametrize(
    "case,message",
    [
        ("missing", "no such file"),
        ("folder", "is a folder"),
        ("weights", "not valid JSON"),
        ("no_history", "has no evaluation history"),
        ("no_gap", "no gap_pp"),
        ("big", "larger than 1,048,576 bytes"),
        ("study_missing_run", "r-seed1.json: no such file (a run of the seed study"),
        ("study_bad_name", "each with a plain name"),
        ("study_no_runs", "must list its runs"),
        ("study_fifo", "the seed study is a FIFO"),
    ],
)
def test_plot_refuses_a_file_that_is_not_a_run_in_one_line(case, message, tmp_path, capsys):
    (tmp_path / "meta.json").write_text(json.dumps({"name": "x", "game": "420"}))
    (tmp_path / "odd.json").write_text(json.dumps({"eval_history": [{"wall_seconds": 1.0, "gap": 2}]}))
    _meta(tmp_path / "big.json", _history([0, 1], [1, 1]), padding="x" * (1 << 20))
    missing = _study(tmp_path / "s1", {"r-seed0": _history([0, 1], [1, 1]), "r-seed1": _history([0, 1], [1, 1])})
    (missing / "r-seed1" / "r-seed1.json").unlink()
    (tmp_path / "s2").mkdir()
    (tmp_path / "s2" / "study.json").write_text(json.dumps({"runs": [{"name": "../meta"}]}))
    (tmp_path / "s3").mkdir()
    (tmp_path / "s3" / "study.json").write_text(json.dumps({"preset": "ppo-420", "runs": []}))
    (tmp_path / "s4").mkdir()
    os.mkfifo(tmp_path / "s4" / "study.json")
    path = {
        "missing": tmp_path / "nothing.json",
        "folder": tmp_path,
        "weights": SHIPPED / "ppo-420.pt",
        "no_history": tmp_path / "meta.json",
        "no_gap": tmp_path / "odd.json",
        "big": tmp_path / "big.json",
        "study_missing_run": missing,
        "study_bad_name": tmp_path / "s2" / "study.json",
        "study_no_runs": tmp_path / "s3",
        "study_fifo": tmp_path / "s4",
    }[case]
    assert plot.main([str(path), "--out", str(tmp_path / "out.png")]) == 2
    assert message in _one_error_line(capsys.readouterr().err)
    assert not (tmp_path / "out.png").exists()


@pytest.mark.timeout(60)  # a read that would block on the FIFO fails instead
@pytest.mark.parametrize(
    "case,message",
    [("device", "character device"), ("fifo", "FIFO"), ("deep", "nests deeper"), ("truncated", "not valid JSON")],
)
def test_train_plot_reads_a_run_file_only(case, message, tmp_path, capsys):
    bad = tmp_path / f"{case}.json"
    if case == "device":
        bad.symlink_to("/dev/zero")
    elif case == "fifo":
        os.mkfifo(bad)
    elif case == "deep":
        bad.write_bytes(DEEP)
    else:
        data = (SHIPPED / "ppo-420.json").read_bytes()
        bad.write_bytes(data[: len(data) // 2])
    assert plot.main([str(bad), "--out", str(tmp_path / "out.png")]) == 2
    assert message in _one_error_line(capsys.readouterr().err)
    assert not (tmp_path / "out.png").exists()


def test_a_bad_gap_choice_is_one_error_line(tmp_path, capsys):
    with pytest.raises(SystemExit) as e:
        plot.main([str(SHIPPED / "ppo-420.json"), "--gap", "best", "--out", str(tmp_path / "out.png")])
    assert e.value.code == 2 and "invalid choice: 'best'" in _one_error_line(capsys.readouterr().err)
    with pytest.raises(plot.PlotError, match="--gap 'best'"):
        plot.plot([SHIPPED / "ppo-420.json"], tmp_path / "out.png", how="best")
    assert not (tmp_path / "out.png").exists()


# --- what a hostile tester found (tests/test_hostile.py, moved here) --------------------------
def _run_file(path: Path, **fields) -> Path:
    meta = {"name": "run", "game": "420", "eval_history": [{"gap_pp": 1.0, "wall_seconds": 1.0}]}
    meta.update(fields)
    path.write_text(json.dumps(meta) if "raw" not in fields else fields["raw"])
    return path


@pytest.mark.parametrize(
    "fields",
    [
        {"name": "$\\frac{$"},
        {"name": "$\\undefinedcommand$"},
        {"game": "$^^^$"},
        {"eval_history": [{"gap_pp_$\\x$": 1.0, "gap_pp": 2.0, "wall_seconds": 1.0}]},
    ],
    ids=["bad-formula-name", "unknown-symbol-name", "formula-game", "formula-seat"],
)
def test_a_run_named_like_a_formula_is_drawn_with_its_name_as_text(tmp_path, fields):
    """matplotlib reads $...$ as mathematics: a bad formula in a run's name failed the
    drawing with a traceback; names are drawn as plain text."""
    out = plot.plot([_run_file(tmp_path / "run.json", **fields)], tmp_path / "out.png", how="each")
    assert out.read_bytes().startswith(b"\x89PNG")


@pytest.mark.parametrize(
    "raw",
    [
        '{"eval_history": [{"gap_pp": 1' + "0" * 400 + ', "wall_seconds": 1}]}',
        '{"eval_history": [{"gap_pp": -5, "wall_seconds": -1e308}, {"gap_pp": 0, "wall_seconds": 1e308}]}',
    ],
    ids=["int-too-large-for-a-float", "extreme-floats"],
)
def test_numbers_no_run_records_are_one_line(tmp_path, raw, capsys):
    """An int too large for a float raised OverflowError, and wall times of +-1e308 failed
    matplotlib's layout (ValueError): both tracebacks; now one error line, exit 2."""
    path = tmp_path / "run.json"
    path.write_text(raw)
    assert plot.main([str(path), "--out", str(tmp_path / "out.png")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("python -m train.plot: error: ") and "no gap_pp" in err[0]
    assert not (tmp_path / "out.png").exists()
