"""Self-play at a table of three (421): the live batched env, its pool of bots and frozen
past versions of the learner, the evaluation at the table of two heuristics."""

import json
from dataclasses import replace

import numpy as np
import pytest
import torch

import agents
from games.dice421 import exactn as exact421n
from agents.ppo_agent import PPOAgent
from games.dice421.vecn import Vec421NEnv
from train import presets as P
from train.__main__ import main as train_main
from train.evaluation import table_figures
from train.run import RunConfig, build_model, make_env
from train.selfplay import SelfPlay

POT = 4  # small tables: the exact evaluation takes seconds


@pytest.fixture
def small3(monkeypatch):
    """ppo-421-3p at pot 4 (without exact3, which is made for pot 15) with a small network,
    rollouts of 32 x 32 steps and a snapshot every two rollouts."""
    base = P.PRESETS["ppo-421-3p"]
    small = replace(
        base,
        env={"n_players": 3, "pot": POT},
        n_envs=32,
        snapshot_every=2048,
        threads=1,
        exact_every=10**9,  # exact only at the end, unless --exact-every says otherwise
        exact_aside=False,  # in the run (the preset's process aside: where a test says so)
        pool={"cautious": 0.1, "greedy421": 0.1},
        policy={**base.policy, "net_arch": {"pi": [16], "vf": [16]}},
        ppo={**base.ppo, "n_steps": 32, "batch_size": 256, "n_epochs": 1},
    )
    monkeypatch.setitem(P.PRESETS, "ppo-421-3p", small)
    return small


def argv(root, name, timesteps, *extra):
    return [
        "ppo-421-3p",
        "--timesteps",
        str(timesteps),
        "--eval-every",
        "2048",
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


def test_the_shipped_preset_plays_three_players_against_a_distribution():
    preset = P.PRESETS["ppo-421-3p"]
    assert preset.env["n_players"] == 3 and preset.opponent == "heuristic"
    assert sum(P.pool_weights(preset)) == pytest.approx(1.0)
    # exact every 1 M steps, as the two-player runs, made aside on the other core (the start
    # is sampled; --exact-every and --no-exact-aside change it)
    assert (preset.eval_every, preset.exact_every, preset.exact_aside) == (1_000_000, 1_000_000, True)
    assert preset.threads == 1  # the machine's other core is the process aside's


def test_the_continue_command_keeps_a_choice_of_aside_against_the_presets(tmp_path):
    """A run's own --exact-aside / --no-exact-aside reaches its continue command only where it
    differs from its preset's default, which the resumed run takes up again."""
    from train.run import continue_command

    preset = P.PRESETS["ppo-421-3p"]
    for flag, expected in ((None, []), (True, []), (False, ["--no-exact-aside"])):
        config = RunConfig(preset, preset.timesteps, 0, preset.n_envs, tmp_path, tmp_path, "r", exact_aside=flag)
        assert config.exact_aside_on is (preset.exact_aside if flag is None else flag)
        assert [p for p in continue_command(config).split() if "aside" in p] == expected
    other = replace(preset, exact_aside=False)
    config = RunConfig(other, other.timesteps, 0, other.n_envs, tmp_path, tmp_path, "r", exact_aside=True)
    assert [p for p in continue_command(config).split() if "aside" in p] == ["--exact-aside"]


def test_snapshots_are_frozen_copies_of_the_learner(small3, tmp_path):
    config = RunConfig(small3, timesteps=4096, seed=3, n_envs=32, logdir=tmp_path, checkpoint_dir=tmp_path, name="s3")
    env = make_env(config)
    assert isinstance(env.venv, Vec421NEnv) and env.venv.n_players == 3
    model = build_model(config, env)
    self_play = SelfPlay(config)
    assert self_play.update(model)
    venv = env.venv
    assert [p.name for p in venv._pool[:3]] == ["heuristic", "cautious", "greedy421"] and len(venv._pool) == 7
    venv.reset()
    rows = np.flatnonzero(~venv.decided)
    obs, masks = venv._obs(rows), venv.action_masks()[rows]
    before = venv._pool[3].agent.action_probs(obs, masks)
    assert np.array_equal(before, PPOAgent.from_model(model, "421").action_probs(obs, masks))
    model.learn(4096)  # long enough to change the network
    learner = PPOAgent.from_model(model, "421").action_probs(obs, masks)
    assert not np.array_equal(learner, before)
    assert np.array_equal(venv._pool[3].agent.action_probs(obs, masks), before)  # the snapshot did not move
    # every other seat draws its own pool member
    assert len({tuple(r) for r in venv.opp_index[:, :].tolist()}) > 1
    env.close()


def _callback_with_a_point_pending_aside(config, tmp_path, monkeypatch):
    """An ExactEvalCallback whose exact point at step 100 is still pending aside (a future
    that never finishes) and whose later sampled point 200 is held behind it; the table
    figures it logs are recorded instead of written."""
    from concurrent.futures import Future
    from types import SimpleNamespace

    import train.run as run
    from train.aside import ExactAside

    logged: list[tuple[int, dict]] = []
    monkeypatch.setattr(run, "log_figures_at", lambda logger, figures, step: logged.append((step, figures)))
    callback = run.ExactEvalCallback(config, started=0.0)
    callback.model = SimpleNamespace(logger=None)
    callback.history = [{"timesteps": s, "table_own_regret_pp": s / 100, "win_rate": 0.3} for s in (100, 200)]
    callback.held_steps = [100, 200]
    aside = ExactAside.__new__(ExactAside)  # the real bookkeeping, without a process
    stopped: list[dict] = []
    aside.pool = SimpleNamespace(shutdown=lambda **how: stopped.append(how))
    aside.folder = tmp_path / "aside"
    aside.folder.mkdir()
    (aside.folder / "100.pt").write_bytes(b"weights")
    aside.pending = [(100, Future(), aside.folder / "100.pt")]
    callback.aside = aside
    return callback, logged, stopped


def test_an_interrupted_run_logs_its_pending_points_sampled_figures_in_step_order(small3, tmp_path, monkeypatch):
    """Ctrl-C with an exact point pending aside: the process is stopped at once, the point
    keeps its sampled figures, and they and the points held behind it reach TensorBoard
    in step order."""
    config = RunConfig(small3, timesteps=0, seed=3, n_envs=32, logdir=tmp_path, checkpoint_dir=tmp_path, name="x")
    callback, logged, stopped = _callback_with_a_point_pending_aside(config, tmp_path, monkeypatch)
    callback._log_held()
    assert logged == []  # nothing is logged past the pending point
    folder = callback.aside.folder
    callback.finish(cancel=True)
    assert stopped == [{"wait": False, "cancel_futures": True}] and not folder.exists()
    assert logged == [(100, {"table_own_regret_pp": 1.0}), (200, {"table_own_regret_pp": 2.0})]
    assert callback.aside is None and callback.held_steps == []


@pytest.mark.timeout(30)
def test_a_ctrl_c_while_the_end_waits_for_aside_stops_the_wait(small3, tmp_path, monkeypatch):
    """At the end a run waits for its points pending aside, unless told to stop (a Ctrl-C):
    then it stops waiting at once and the points stay sampled."""
    config = RunConfig(small3, timesteps=0, seed=3, n_envs=32, logdir=tmp_path, checkpoint_dir=tmp_path, name="x")
    callback, logged, stopped = _callback_with_a_point_pending_aside(config, tmp_path, monkeypatch)
    asked = []
    callback.finish(cancel=False, stopping=lambda: asked.append(1) or len(asked) > 2)
    assert len(asked) == 3  # waited 0.2 s at a time until told to stop
    assert stopped == [{"wait": False, "cancel_futures": True}]
    assert [step for step, _ in logged] == [100, 200]
    assert callback.history[0]["table_own_regret_pp"] == 1.0  # still the sampled figure


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_exact_evaluations_made_aside_are_the_ones_the_run_makes_itself(small3, tmp_path, monkeypatch):
    """Exact points aside (the preset's default, as ppo-421-3p's): the same run as with
    --no-exact-aside, with the same exact figures at the same steps in its metadata and in
    TensorBoard (made in a process of their own as training goes on)."""
    from train.aside import ExactAside

    monkeypatch.setitem(P.PRESETS, "ppo-421-3p", replace(small3, exact_aside=True))

    sent = []
    submit = ExactAside.submit
    monkeypatch.setattr(
        ExactAside, "submit", lambda self, policy, step: sent.append(step) or submit(self, policy, step)
    )
    # the figures come back only at the end, as from tables slower than the run's points
    done = ExactAside.done
    monkeypatch.setattr(ExactAside, "done", lambda self, wait=False, *args: done(self, True, *args) if wait else [])
    import train.run as run

    saved_at_wait = []  # the steps saved when the end starts waiting for points aside
    finish = run.ExactEvalCallback.finish

    def finishing(self, cancel=False, stopping=lambda: False):
        if not cancel and self.aside is not None and self.aside.pending:
            saved_at_wait.append(json.loads((tmp_path / "ck" / f"{self.config.name}.json").read_text())["timesteps"])
        return finish(self, cancel, stopping)

    monkeypatch.setattr(run.ExactEvalCallback, "finish", finishing)
    for name, extra in (("here", ("--no-exact-aside",)), ("aside", ())):
        assert train_main(argv(tmp_path, name, 10240, "--exact-every", "4096", *extra)) == 0
    assert len(sent) == 2  # the aside run's two exact points during training, sampled ones between
    here, aside = (json.loads((tmp_path / "ck" / f"{n}.json").read_text()) for n in ("here", "aside"))
    assert saved_at_wait == [aside["timesteps"]]  # a run killed while it waits keeps every step

    def points(meta):
        return [{k: v for k, v in h.items() if k != "wall_seconds"} for h in meta["eval_history"]]

    assert points(aside) == points(here)
    assert sum("table_own_regret_pp" in h for h in points(here)) == 2  # two exact points during the run
    assert aside["exact"] == here["exact"] and aside["weights_sha256"] == here["weights_sha256"]
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    logged = {}
    for name in ("here", "aside"):
        (events,) = (tmp_path / "runs").glob(f"{name}_*/events.out.tfevents.*")
        acc = EventAccumulator(str(events))
        acc.Reload()
        logged[name] = {
            tag: sorted((e.step, e.value) for e in acc.Scalars(tag))
            for tag in acc.Tags()["scalars"]
            if tag.startswith("eval/table_")
        }
    assert logged["aside"] == logged["here"] and len(logged["here"]["eval/table_own_regret_pp"]) == 3
    # and in the file each tag's steps rise: TensorBoard drops a tag's later steps at an earlier one
    from tensorboard.backend.event_processing.event_file_loader import LegacyEventFileLoader

    (events,) = (tmp_path / "runs").glob("aside_*/events.out.tfevents.*")
    steps: dict[str, list[int]] = {}
    for event in LegacyEventFileLoader(str(events)).Load():
        for value in event.summary.value:
            steps.setdefault(value.tag, []).append(event.step)
    assert steps["eval/table_vs_heuristic_heuristic"] == sorted(set(steps["eval/table_vs_heuristic_heuristic"]))
    assert all(s == sorted(set(s)) for tag, s in steps.items() if tag.startswith("eval/")), steps


@pytest.mark.timeout(120)
def test_a_process_aside_that_dies_leaves_its_point_sampled_and_the_next_gets_a_new_one(small3, tmp_path):
    """A process aside killed (out of memory, say) fails its evaluation in one line; the
    next one is sent to a new process instead of stopping the run."""
    import os
    import signal

    from train.aside import ExactAside

    config = RunConfig(small3, timesteps=0, seed=3, n_envs=32, logdir=tmp_path, checkpoint_dir=tmp_path, name="x")
    model = build_model(config, make_env(config))
    aside = ExactAside(config)
    try:
        aside.submit(model.policy, 100)
        for process in list(aside.pool._processes.values()):
            os.kill(process.pid, signal.SIGKILL)
        ((step, why),) = aside.done(wait=True)
        assert step == 100 and why.startswith("BrokenProcessPool") and "\n" not in why
        aside.submit(model.policy, 200)  # a new process
        ((step, figures),) = aside.done(wait=True)
        assert step == 200 and "table_own_regret_pp" in figures
    finally:
        aside.close(cancel=True)
    assert not aside.folder.exists()


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_a_three_player_run_reports_its_exact_tables_and_resumes(small3, tmp_path, capsys):
    assert train_main(argv(tmp_path, "s3", 4096, "--exact-every", "2048")) == 0
    out = capsys.readouterr().out
    assert "P(not losing), 3 players, pot 4 (exact; fair share 0.6667)" in out
    meta = json.loads((tmp_path / "ck" / "s3.json").read_text())
    agent = agents.make_agent("421", str(tmp_path / "ck" / "s3.pt"))
    mine = exact421n.AgentTable(agent)  # the network asked once, for every table below
    figures = meta["exact"]
    # every bot that plays pot 4 (not exact3, made for pot 15), each in both other seats
    for name in ("heuristic", "greedy421", "cautious"):
        bot = exact421n.AgentTable(agents.make_agent("421", name))
        exact = exact421n.evaluate_table([mine, bot, bot], pot=POT).not_losing[0]
        best = exact421n.best_reply([mine, bot, bot], 0, pot=POT).value
        assert figures[f"table_vs_{name}_{name}"] == pytest.approx(exact, abs=1e-12)
        assert figures[f"table_regret_vs_{name}_{name}_pp"] == pytest.approx(100 * (best - exact), abs=1e-9)
        assert f"  with {name} and {name}: {exact:.6f}   (regret " in out
    assert figures["table_regret_pp"] == figures["table_regret_vs_heuristic_heuristic_pp"]
    assert not any("exact3" in key for key in figures)
    own = (
        exact421n.best_reply([mine] * 3, 0, pot=POT).value - exact421n.evaluate_table([mine] * 3, pot=POT).not_losing[0]
    )
    assert figures["table_own_regret_pp"] == pytest.approx(100 * own, abs=1e-9)
    assert "at its own table (itself in every seat): regret" in out
    # during training: sampled, and exact once --exact-every steps have passed (not in the
    # last rollout, whose evaluation the final one makes exact)
    history = meta["eval_history"]
    assert history[0]["timesteps"] == 32 and "table_se_pp" in history[0] and "table_own_regret_pp" not in history[0]
    assert [h["timesteps"] >= 2048 for h in history if "table_own_regret_pp" in h] == [True]
    assert all(h["timesteps"] + 1024 <= 4096 for h in history if "table_own_regret_pp" in h)
    # at the measured table only, during the run (each other table is a best reply more)
    (during,) = [h for h in history if "table_own_regret_pp" in h]
    assert [k for k in during if k.startswith("table_regret_vs_")] == ["table_regret_vs_heuristic_heuristic_pp"]
    # TensorBoard has them over time, the final evaluation last
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    (events,) = (tmp_path / "runs").rglob("events.out.tfevents.*")
    acc = EventAccumulator(str(events))
    acc.Reload()
    own = [(e.step, e.value) for e in acc.Scalars("eval/table_own_regret_pp")]
    assert [step for step, _ in own] == [h["timesteps"] for h in history if "table_own_regret_pp" in h] + [4096]
    assert own[-1][1] == pytest.approx(figures["table_own_regret_pp"], rel=1e-6)
    assert "eval/table_regret_vs_cautious_cautious_pp" in acc.Tags()["scalars"]
    # the sampled figure agrees with the exact one
    config = RunConfig(small3, timesteps=0, seed=3, n_envs=32, logdir=tmp_path, checkpoint_dir=tmp_path, name="x")
    sampled = table_figures(config, agent, exact=False)
    exact = figures["table_vs_heuristic_heuristic"]
    assert abs(sampled["table_vs_heuristic_heuristic"] - exact) < 4 * sampled["table_se_pp"] / 100
    state = torch.load(tmp_path / "ck" / "s3.state", weights_only=True)
    assert len(state["self_play"]["snapshots"]) == 4
    assert train_main(argv(tmp_path, "s3", 6144, "--resume")) == 0
    assert "resuming" in capsys.readouterr().out
    assert json.loads((tmp_path / "ck" / "s3.json").read_text())["timesteps"] == 6144


@pytest.fixture
def small420(monkeypatch):
    """ppo-420-4p with a small network, rollouts of 32 x 32 steps and a snapshot every two."""
    base = P.PRESETS["ppo-420-4p"]
    small = replace(
        base,
        n_envs=32,
        snapshot_every=2048,
        threads=1,
        policy={**base.policy, "net_arch": {"pi": [16], "vf": [16]}},
        ppo={**base.ppo, "n_steps": 32, "batch_size": 256, "n_epochs": 1},
    )
    monkeypatch.setitem(P.PRESETS, "ppo-420-4p", small)
    return small


@pytest.mark.slow
def test_a_four_player_420_run_plays_its_pool_and_says_why_its_figure_is_sampled(small420, tmp_path, capsys):
    config = RunConfig(small420, timesteps=4096, seed=3, n_envs=32, logdir=tmp_path, checkpoint_dir=tmp_path, name="f")
    env = make_env(config)
    model = build_model(config, env)
    self_play = SelfPlay(config)
    assert self_play.update(model)
    venv = env.venv
    assert venv.n_players == 4 and len(venv._pool) == 3 + 4
    # the bots play from their own hand: tables; the snapshots are asked live
    assert all(isinstance(m, tuple) for m in venv._pool[:3]) and all(callable(m) for m in venv._pool[3:])
    env.close()
    args = [
        "ppo-420-4p",
        "--timesteps",
        "2048",
        "--eval-every",
        "100000",
        "--seed",
        "3",
        "--logdir",
        str(tmp_path / "runs"),
        "--checkpoint-dir",
        str(tmp_path / "ck"),
        "--name",
        "f4",
        "--no-progress-bar",
    ]
    assert train_main(args) == 0
    out = capsys.readouterr().out
    assert "P(not losing), 4 players (sampled, 20,480 games; fair share 0.7500)" in out
    assert "no exact figure:" in out and "up to 3 players" in out
    meta = json.loads((tmp_path / "ck" / "f4.json").read_text())
    assert meta["exact"]["exact_table"] is False and 0 < meta["exact"]["table_vs_optimal_optimal_optimal"] < 1


@pytest.mark.slow
def test_exact_tables_of_420_at_three_players_are_the_solvers(tmp_path):
    from games.dice420 import reply as reply420
    from train.evaluation import exact_tables, table_bots

    preset = P.PRESETS["ppo-420-3p"]
    assert table_bots(preset) == ("optimal", "greedy", "foundation")
    config = RunConfig(preset, timesteps=0, seed=0, n_envs=32, logdir=tmp_path, checkpoint_dir=tmp_path, name="t")
    greedy = agents.make_agent("420", "greedy")
    figures = exact_tables(config, greedy)
    for name in table_bots(preset):
        bot = agents.make_agent("420", name)
        value, best = reply420.seat_figures([greedy, bot, bot], 0)
        assert figures[f"table_vs_{name}_{name}"] == pytest.approx(value, abs=1e-12)
        assert figures[f"table_regret_vs_{name}_{name}_pp"] == pytest.approx(100 * (best - value), abs=1e-9)
    value, best = reply420.seat_figures([greedy] * 3, 0)
    assert figures["table_own_regret_pp"] == pytest.approx(100 * (best - value), abs=1e-9)
    assert round(figures["table_own_regret_pp"], 4) == 0.1112  # the README's table of the bots
    assert figures["table_regret_pp"] == figures["table_regret_vs_optimal_optimal_pp"]
    assert exact_tables(config, agents.make_agent("420", "optimal"))["table_own_regret_pp"] == 0.0


def test_the_shipped_three_player_bot_plays_by_name_with_its_exact_figures():
    """ppo-421-3p, by name: the preset's run, its exact figures in its metadata.  (Recomputing
    them takes about 4 minutes, too long for the suite: python -m play evaluate 421 --players 3
    --agent ppo-421-3p --opponent heuristic --exact gives them; docs/results.md.)"""
    agent = agents.make_agent("421", "ppo-421-3p")
    meta = agent.metadata
    assert (meta["name"], meta["preset"], meta["env"]) == ("ppo-421-3p", "ppo-421-3p", {"n_players": 3, "pot": 15})
    preset = P.PRESETS["ppo-421-3p"]
    assert (meta["timesteps"] >= preset.timesteps, meta["threads"], meta["policy"]) == (
        True,
        preset.threads,
        preset.policy,
    )
    figures = meta["exact"]
    assert (
        figures["exact_table"] is True
        and figures["table_regret_pp"] == figures["table_regret_vs_heuristic_heuristic_pp"]
    )
    for bot in ("heuristic", "greedy421", "cautious", "exact3"):
        assert 0 < figures[f"table_regret_vs_{bot}_{bot}_pp"] < 1 and 0.6 < figures[f"table_vs_{bot}_{bot}"] < 0.8
    assert 0 < figures["table_own_regret_pp"] < 1
