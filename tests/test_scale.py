"""Seed studies and sweeps on Ray (python -m train seeds / sweep): tiny runs on a
local Ray of 2 CPUs started here; the statistics; the search spaces; no Ray."""

import json
import os
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from train import presets as P
from train.__main__ import main as train_main
from train.scale import bootstrap_ci, distribution, iqm

TINY = ["--timesteps", "1024", "--n-envs", "16", "--eval-every", "1024"]


@pytest.fixture(scope="module")
def local_ray():
    ray = pytest.importorskip("ray")
    pytest.importorskip("ray.tune")
    pytest.importorskip("optuna")
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level="ERROR")
    yield ray
    ray.shutdown()


@pytest.fixture
def tiny_preset(monkeypatch):
    """ppo-420 with a tiny network and a two-setting search space (the workers get the
    preset with their task, so replacing it here reaches them)."""
    base = P.PRESETS["ppo-420"]
    tiny = replace(
        base,
        policy={**base.policy, "net_arch": {"pi": [16], "vf": [16]}, "features_extractor_kwargs": {"features_dim": 32}},
        ppo={**base.ppo, "batch_size": 512},
        search={"learning_rate": P.Range(1e-3, 1e-2, log=True), P.WIDTH: P.Choice((8, 16))},
    )
    monkeypatch.setitem(P.PRESETS, "ppo-420", tiny)
    return tiny


def meta_of(folder: Path, name: str) -> dict:
    return json.loads((folder / f"{name}.json").read_text())


@pytest.mark.ray
@pytest.mark.timeout(600)
def test_seed_study_runs_each_seed_as_an_ordinary_run(local_ray, tiny_preset, tmp_path, capsys):
    out = tmp_path / "study"
    assert train_main(["seeds", "ppo-420", "--seeds", "0-1", *TINY, "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    study = json.loads((out / "study.json").read_text())
    assert study["seeds"] == [0, 1] and study["ray"]["cpus"] == 2 and study["ray"]["cpus_per_trial"] == 1
    assert (out / "study.png").stat().st_size > 0
    for run in study["runs"]:
        folder = out / run["name"]
        assert run["name"] == f"ppo-420-seed{run['seed']}"
        assert {p.name for p in folder.iterdir() if p.is_file()} == {
            f"{run['name']}.{e}" for e in ("pt", "json", "state")
        }
        assert any(folder.rglob("events.out.tfevents.*"))  # its TensorBoard log
        meta = meta_of(folder, run["name"])
        assert meta["seed"] == run["seed"] and meta["timesteps"] == run["steps"] >= 1024
        assert run["gap_pp"] == pytest.approx((meta["exact"]["gap_pp_red"] + meta["exact"]["gap_pp_blue"]) / 2)
        assert run["steps_to_optimum"] is None and not run["optimal"]  # 1,024 steps are far too few
        assert f"{run['gap_pp']:.4f}" in printed
    gaps = [r["gap_pp"] for r in study["runs"]]
    stats = study["distribution"]["gap_pp"]
    assert stats["median"] == pytest.approx(sum(gaps) / 2) and stats["iqm"] == pytest.approx(sum(gaps) / 2)
    assert stats["worst"] == max(gaps) and min(gaps) <= stats["ci95_low"] <= stats["ci95_high"] <= max(gaps)
    assert study["distribution"]["steps_to_optimum"]["worst"] is None and study["reached_optimum"] == 0
    # seed 1 of the study is the run python -m train makes with --seed 1: same figures, same weights
    alone = tmp_path / "alone"
    assert (
        train_main(
            [
                "ppo-420",
                "--seed",
                "1",
                *TINY,
                "--checkpoint-dir",
                str(alone),
                "--logdir",
                str(alone),
                "--name",
                "ppo-420-seed1",
                "--no-progress-bar",
            ]
        )
        == 0
    )
    ours, theirs = meta_of(out / "ppo-420-seed1", "ppo-420-seed1"), meta_of(alone, "ppo-420-seed1")
    assert ours["exact"] == theirs["exact"] and ours["weights_sha256"] == theirs["weights_sha256"]
    capsys.readouterr()
    # a second study over the same runs is refused in one line, unless --overwrite
    assert train_main(["seeds", "ppo-420", "--seeds", "1", *TINY, "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "ppo-420-seed1" in err and "--overwrite" in err


@pytest.mark.ray
@pytest.mark.timeout(600)
def test_sweep_reports_trials_and_resumes_from_its_storage(local_ray, tiny_preset, tmp_path, capsys):
    import optuna

    from train.sweep import OWN_SETTINGS

    out = tmp_path / "sweep"
    args = ["sweep", "ppo-420", *TINY, "--out", str(out)]
    assert train_main([*args, "--trials", "2"]) == 0
    first = json.loads((out / "sweep.json").read_text())
    trials = {t["trial"]: t for t in first["trials"]}
    assert sorted(trials) == [0, 1] and all(t["state"] == "finished" for t in trials.values())
    # the study starts with the preset's own settings
    assert trials[0]["preset_settings"] and trials[0]["settings"] == {"learning_rate": 3e-3, "width": 16}
    for t in trials.values():  # each trial is an ordinary run in its own folder, its score its exact gap
        folder, name = Path(t["folder"]), f"ppo-420-trial{t['trial']}"
        meta = meta_of(folder, name)
        assert meta["policy"]["net_arch"] == {"pi": [t["settings"]["width"]], "vf": [t["settings"]["width"]]}
        assert (
            t["score"] == t["gap_pp"] == pytest.approx((meta["exact"]["gap_pp_red"] + meta["exact"]["gap_pp_blue"]) / 2)
        )
        assert t["timesteps"] == meta["timesteps"] and any(folder.rglob("events.out.tfevents.*"))
    best = min(trials.values(), key=lambda t: t["score"])
    assert first["best"]["trial"] == best["trial"]
    printed = capsys.readouterr().out
    entry = printed[printed.index("Preset(\n") : printed.rindex(")") + 1]
    assert eval(entry, vars(P)) == P.with_settings(tiny_preset, best["settings"], "ppo-420-tuned")
    # a session cut off mid-trial leaves it running in the storage; resuming fails it and runs
    # the trials still missing, with settings not drawn before
    storage = f"sqlite:///{(out / 'optuna.db').resolve()}"
    study = optuna.load_study(study_name="ppo-420", storage=storage)
    study.ask()
    before = (Path(trials[1]["folder"]) / "ppo-420-trial1.pt").stat().st_mtime_ns
    assert train_main([*args, "--trials", "3"]) == 0
    states = {t.number: t.state for t in optuna.load_study(study_name="ppo-420", storage=storage).trials}
    assert states == {
        0: optuna.trial.TrialState.COMPLETE,
        1: optuna.trial.TrialState.COMPLETE,
        2: optuna.trial.TrialState.FAIL,
        3: optuna.trial.TrialState.COMPLETE,
    }
    second = {t["trial"]: t for t in json.loads((out / "sweep.json").read_text())["trials"]}
    assert second[3]["state"] == "finished" and second[3]["settings"] != second[1]["settings"]
    assert sorted(p.name for p in (out / "trials").iterdir()) == ["ppo-420-trial0", "ppo-420-trial1", "ppo-420-trial3"]
    assert (Path(trials[1]["folder"]) / "ppo-420-trial1.pt").stat().st_mtime_ns == before  # not run again
    assert [t.user_attrs.get(OWN_SETTINGS, False) for t in study.trials] == [True, False, False, False]
    # all done: a third call runs nothing
    capsys.readouterr()
    assert train_main([*args, "--trials", "3"]) == 0
    assert "3 trials done, --trials 3: nothing to run" in capsys.readouterr().out


def test_without_ray_the_commands_say_how_to_install_it(monkeypatch, tmp_path, capsys):
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray: ImportError
    for command in ("seeds", "sweep"):
        assert train_main([command, "ppo-420", "--out", str(tmp_path / command)]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and 'pip install -e ".[scale]"' in err


def test_statistics_of_a_distribution():
    values = np.array([8.0, 1, 7, 2, 6, 3, 5, 4])
    assert iqm(values) == (3 + 4 + 5 + 6) / 4  # the lowest and highest quarter set aside
    assert iqm(np.array([2.0, 9])) == 5.5  # too few runs to set any aside
    low, high = bootstrap_ci(values)
    assert 1 <= low < iqm(values) < high <= 8 and (low, high) == bootstrap_ci(values)  # seeded
    assert bootstrap_ci(np.array([3.0, 3, 3])) == (3.0, 3.0)
    # a run that never reached the optimum counts as infinite, and is written as None
    stats = distribution([1.0, None, 2.0])
    assert stats["median"] == 2.0 and stats["worst"] is None and stats["ci95_high"] is None
    assert stats["iqm"] is None  # three runs: nothing set aside, the mean is infinite
    assert distribution([4.0])["ci95_low"] == 4.0 and not any(v is None for v in distribution([4.0]).values())


@pytest.mark.parametrize("name", sorted(P.PRESETS))
def test_search_spaces_hold_their_presets_own_settings(name):
    preset = P.PRESETS[name]
    assert preset.search, f"{name} declares nothing to search"
    for key, dim in preset.search.items():
        value = P.setting(preset, key)
        if isinstance(dim, P.Choice):
            assert value in dim.options, (key, value)
        else:
            assert dim.low <= value <= dim.high and (not dim.log or dim.low > 0), (key, value)
            assert isinstance(value, int) == dim.integer, key
    changed = P.with_settings(preset, {key: P.setting(preset, key) for key in preset.search}, "same")
    assert replace(changed, name=name) == preset  # putting its own settings back changes nothing
    wider = P.with_settings(preset, {P.WIDTH: 7})
    assert {w for layers in wider.policy["net_arch"].values() for w in layers} == {7}
    assert eval(P.preset_source(wider), vars(P)) == wider
    with pytest.raises(ValueError, match="gamma_typo"):
        P.with_settings(preset, {"gamma_typo": 1.0})
