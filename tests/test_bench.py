"""python -m train.bench: every environment measurement reports the steps it made over
the time it measured; the batched Pig env is printed next to OpenSpiel's pig with their
ratio.  Speed is measured by the command, not by tests: here the bench's clock is one
that moves on by a fixed time per decision made, so each figure is known exactly."""

import types

import pytest

from games.pig import bench as pig_bench
from train import bench

SECONDS = 0.2
SINGLE_TICK = SECONDS / bench.WINDOWS / 150  # seconds per step of a single env: one call (200 steps) a window
BATCHED_TICK = SECONDS / bench.WINDOWS / (3 * bench.N_ENVS)  # per decision of a batched env: 3 steps a window


class WorkClock:
    """Replaces ``bench.time``: ``perf_counter`` reads the work done so far, each step of a
    single env ``SINGLE_TICK`` seconds and each game's decision in a step of a batched env
    ``BATCHED_TICK``.  Steps and finished games are counted where the envs are stepped,
    apart from the bench's own counts."""

    def __init__(self, monkeypatch):
        self.now, self.ticks, self.decisions, self.games = 0.0, set(), 0, 0
        monkeypatch.setattr(bench, "time", types.SimpleNamespace(perf_counter=lambda: self.now))
        single, batched = bench._single_env, bench._batched_env

        def single_env(env, choose, seconds):
            self._count(env, SINGLE_TICK, lambda out: 1, lambda out: 0)
            return single(env, choose, seconds)

        def batched_env(venv, seconds, tally=None):
            self._count(venv, BATCHED_TICK, lambda out: venv.num_envs, lambda out: int(out[2].sum()))
            return batched(venv, seconds, tally)

        monkeypatch.setattr(bench, "_single_env", single_env)
        monkeypatch.setattr(bench, "_batched_env", batched_env)

    def _count(self, env, tick, decisions_of, games_of):
        step = env.step

        def counting_step(action):
            out = step(action)
            decisions = decisions_of(out)
            self.decisions += decisions
            self.games += games_of(out)
            self.now += tick * decisions
            return out

        env.step = counting_step
        self.ticks.add(tick)

    def rate(self) -> float:
        """The steps per second of the clock: 1 / the tick of the measurement."""
        (tick,) = self.ticks
        return 1.0 / tick


def _rate(value):
    return value[0] if isinstance(value, tuple) else value


ENVIRONMENTS = [n for n in bench.MEASURES if n not in bench.PLAN.steps and n not in pig_bench.PEERS]


@pytest.mark.parametrize("name", ENVIRONMENTS)
def test_environment_measurements_report_the_steps_they_made_over_the_time_they_took(name, monkeypatch):
    clock = WorkClock(monkeypatch)
    value = bench.MEASURES[name](SECONDS)
    assert _rate(value) == pytest.approx(clock.rate(), rel=1e-9)  # a step miscounted would move it
    assert clock.now == pytest.approx(clock.decisions / clock.rate(), rel=1e-9)
    assert clock.now >= SECONDS * (1 - 1e-9)  # every window ran its time
    if isinstance(value, tuple):  # a batched env's decisions per finished game, over all windows
        assert clock.games > 0 and value[1]["steps_per_game"] == clock.decisions / clock.games


def test_every_registered_batched_env_and_what_each_game_declares_is_measured():
    import games

    for name in games.names():
        spec = games.get(name)
        if spec.batched_env:
            assert bench.batched_name(name) in ENVIRONMENTS
        declared = games.load(spec.bench) if spec.bench else None
        for label, (single, _), (batched, _) in getattr(declared, "ENVS", ()):
            assert f"{label} single env ({single})" in ENVIRONMENTS
            assert f"{label} batched env ({batched}, {bench.N_ENVS} games)" in ENVIRONMENTS
        for peer in getattr(declared, "PEERS", {}):
            assert peer in bench.MEASURES
        if getattr(declared, "TRAINING", None):
            assert f"train {declared.TRAINING[0]} preset (batched)" in bench.PLAN.steps
    assert {"420", "421", "421 3p"} <= {label for label, _, _ in bench.PLAN.pairs}
    assert bench.PLAN.shared == {pig_bench.OPENSPIEL_NODES: (pig_bench.OPENSPIEL, "nodes_per_s")}


class _Queue:
    def put(self, item):
        self.item = item


def _in_process(name, arg):
    """``bench.measure`` without a fresh process (the same ``_child``: errors reported alike)."""
    queue = _Queue()
    bench._child(name, arg, queue)
    return queue.item


def _run(monkeypatch, capsys, openspiel):
    monkeypatch.setattr(bench, "measure", _in_process)
    monkeypatch.setitem(bench.MEASURES, pig_bench.OPENSPIEL, openspiel)  # open_spiel not needed
    assert bench.main(["--seconds", "0.1", "--only", "pig"]) == 0
    out = capsys.readouterr().out
    assert all(len(line) <= bench.WIDTH for line in out.splitlines()), out
    return out


def test_pig_is_printed_next_to_openspiel(monkeypatch, capsys):
    notes = {"nodes_per_s": 150.0, "decisions_per_game": 121.0, "nodes_per_game": 181.0}
    WorkClock(monkeypatch)
    out = _run(monkeypatch, capsys, lambda seconds: (100.0, notes))
    ours = bench.batched_name("pig")
    line = next(line for line in out.splitlines() if line.startswith(ours))
    rate = float(line[len(ours) :].split()[0].replace(",", ""))
    assert rate == round(1 / BATCHED_TICK)  # the batched env's steps over the clock's time, to the step
    assert f"{pig_bench.OPENSPIEL_NODES:<52}          150" in out  # the old figure, kept for 420 and 421
    ratio = next(line for line in out.splitlines() if line.startswith(f"batched pig env / {pig_bench.OPENSPIEL}: "))
    # the ratio is of the unrounded rate; the line shows it rounded to whole decisions a second
    assert ratio.endswith("x") and abs(float(ratio.split()[-1][:-1]) - rate / 100.0) <= 0.051
    assert "decisions/game: OpenSpiel 121.0 (both seats), ours " in out
    assert "goal 100, 6 faces" in out
    assert "420 " not in out  # --only: the other measurements were not run


def test_pig_without_openspiel(monkeypatch, capsys):
    def missing(seconds):
        raise ImportError("No module named 'pyspiel'", name="pyspiel")

    out = _run(monkeypatch, capsys, missing)
    assert bench.batched_name("pig") in out
    assert "(not installed (pyspiel))" in out
    assert "batched pig env / " not in out  # no ratio without its peer


def test_only_refuses_what_matches_nothing():
    with pytest.raises(SystemExit):
        bench.main(["--only", "no such measurement"])


def test_a_games_peer_is_timed_by_the_bench_clock(monkeypatch):
    """OpenSpiel's pig (Pig's peer, declared in its folder) run through the bench: here a stand-in
    for pyspiel whose games alternate a die and a decision (3 each), every decision a fixed time."""
    import sys

    tick, clock = 1e-4, types.SimpleNamespace(now=0.0)
    monkeypatch.setattr(bench, "time", types.SimpleNamespace(perf_counter=lambda: clock.now))

    class State:
        nodes = 0

        def is_terminal(self):
            return self.nodes == 6

        def is_chance_node(self):
            return self.nodes % 2 == 0

        def chance_outcomes(self):
            return [(0, 0.5), (1, 0.5)]

        def legal_actions(self):
            return [0, 1]

        def apply_action(self, action):
            clock.now += 0.0 if self.is_chance_node() else tick
            self.nodes += 1

    loaded = []
    game = types.SimpleNamespace(new_initial_state=State)
    fake = types.SimpleNamespace(load_game=lambda name, params: loaded.append((name, params)) or game)
    monkeypatch.setitem(sys.modules, "pyspiel", fake)
    rate, notes = bench.MEASURES[pig_bench.OPENSPIEL](SECONDS)
    assert loaded == [("pig", {"players": 2, "winscore": 100, "diceoutcomes": 6})]
    assert rate == pytest.approx(1 / tick, rel=1e-9) and notes["nodes_per_s"] == pytest.approx(2 / tick, rel=1e-9)
    assert notes["decisions_per_game"] == pytest.approx(3, rel=1e-2) and notes["nodes_per_game"] == pytest.approx(
        6, rel=1e-2
    )


def test_a_presets_training_reports_its_share_of_time_in_ppo_updates(monkeypatch):
    """train_preset's share: the time inside the model's updates over the whole of learn(),
    on a clock that moves on 3 s for each update and 1 s for each rollout collected."""
    from train.fast import BatchedMaskablePPO

    clock = types.SimpleNamespace(now=0.0, updates=0, rollouts=0)
    monkeypatch.setattr(bench, "time", types.SimpleNamespace(perf_counter=lambda: clock.now))
    update, collect = BatchedMaskablePPO.train, BatchedMaskablePPO.collect_rollouts

    def slow_update(self):
        clock.now += 3.0
        clock.updates += 1
        return update(self)

    def slow_collect(self, *args, **kwargs):
        clock.now += 1.0
        clock.rollouts += 1
        return collect(self, *args, **kwargs)

    monkeypatch.setattr(BatchedMaskablePPO, "train", slow_update)
    monkeypatch.setattr(BatchedMaskablePPO, "collect_rollouts", slow_collect)
    preset = bench.PLAN.trainings[0][0]
    rate, notes = bench.train_preset(preset, 1)  # one rollout, one update
    assert (clock.updates, clock.rollouts) == (1, 1)
    assert notes[bench.UPDATE_SHARE] == 0.75
    lines = bench.summary_lines({}, {f"train {preset} preset (batched)": notes})
    assert f"{preset} training: 75% of its time in PPO updates, 25% in rollouts" in lines


def test_a_plain_training_measurement_leaves_no_folder_in_the_temporary_folder(monkeypatch, tmp_path):
    """SB3's model makes an empty ``SB3-date-time`` folder in the system's temporary folder
    each time it learns without a logger of its own; the bench's plain MaskablePPO has one
    that logs nothing."""
    import tempfile

    from sb3_contrib import MaskablePPO

    monkeypatch.delenv("SB3_LOGDIR", raising=False)  # tests/conftest.py sets it
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    collected = []  # learn() sets its logger up, then stops at its first rollout
    monkeypatch.setattr(MaskablePPO, "collect_rollouts", lambda *args, **kwargs: collected.append(1) or False)
    _, _, plain = bench.PLAN.trainings[0]
    bench.MEASURES[plain](1)
    assert collected == [1]
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith("SB3-")] == []
