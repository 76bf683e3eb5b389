"""python -m train.bench: speed figures, each next to a peer measured in the same run.

Every measurement runs in its own fresh process (so peak memory is its own),
one after another.  Figures are steps per second of wall time on this machine;
the ratios against the peers are the numbers to compare across machines.

Every registered game's batched env (``GameSpec.batched_env``) is measured in one
loop, against its random bot's exact policy table (``agents.bot_table``), with
the game's default options.  What else a game measures it declares in its own
folder, in the module its ``GameSpec.bench`` names (``games/dice420/bench.py``):

* ``ENVS``: ``(label, (what, maker), (what, maker of n games))``: its Gymnasium
  env and its batched env of ``N_ENVS`` games, each stepped with random legal
  moves; the batched one is set against the single one, Gymnasium's Blackjack
  and every shared peer figure, the single one against Blackjack;
* ``TRAINING``: ``(preset, bot)``: that preset's training, next to a plain
  MaskablePPO (SB3's defaults) on 8 of the game's Gymnasium envs against the bot;
* ``PEERS``: other programs playing the game, ``name -> fn(seconds, timed)`` giving
  ``(rate, notes)`` (``timed``: the bench's best-window clock); ``SHARED_PEERS``:
  ``figure -> (peer, note)``, a figure of a peer's notes, printed under it, that
  every game's batched env is set against;
* ``summary(results, notes, ours)``: the game's own lines on its batched env
  against the random bot (the measurement ``ours``) and its peers.
"""

from __future__ import annotations

import argparse
import functools
import multiprocessing as mp
import resource
import signal
import time
from dataclasses import dataclass, field
from typing import Any, Callable

import games

WIDTH = 80  # every line of the output fits


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


WINDOWS = 5  # an environment's figure is its best rate over this many windows


def _timed(fn: Callable[[], int], seconds: float) -> float:
    """Run ``fn`` (which returns steps done) for ``seconds`` in all, cut into ``WINDOWS``
    windows; the steps per second of the best window.  On a shared machine a slow
    window is other work getting the core; the best one is the code's own speed
    (``timeit`` reports its best repeat for the same reason)."""
    best = 0.0
    for _ in range(WINDOWS):
        steps, start = 0, time.perf_counter()
        while time.perf_counter() - start < seconds / WINDOWS:
            steps += fn()
        best = max(best, steps / (time.perf_counter() - start))
    return best


# --- environment stepping -----------------------------------------------------
def _single_env(env, choose, seconds: float) -> float:
    """Steps/s of one Gymnasium env, actions from ``choose(env)``, resetting at episode ends."""
    env.reset(seed=0)

    def run():
        for _ in range(200):
            _, _, term, trunc, _ = env.step(choose(env))
            if term or trunc:
                env.reset()
        return 200

    return _timed(run, seconds)


def _random_legal(seed: int = 0):
    import numpy as np

    rng = np.random.default_rng(seed)
    return lambda env: int(rng.choice(np.flatnonzero(env.action_masks())))


def _batched_env(venv, seconds: float, tally: dict | None = None) -> float:
    """Steps/s of a batched env, a random legal action per game (vectorised).  ``tally``
    gets the steps played and the games finished (all windows)."""
    import numpy as np

    venv.reset()
    rng = np.random.default_rng(0)
    tally = {} if tally is None else tally
    tally.update(steps=0, games=0)

    def run():
        masks = venv.action_masks()
        scores = np.where(masks, rng.random(masks.shape), -1.0)
        _, _, dones, _ = venv.step(scores.argmax(axis=1))
        tally["steps"] += venv.num_envs
        tally["games"] += int(np.count_nonzero(dones))
        return venv.num_envs

    return _timed(run, seconds)


N_ENVS = 1024  # games of a batched env
BLACKJACK = "Blackjack-v1 (gymnasium)"  # a peer of every game's envs, from Gymnasium itself


def env_blackjack(seconds: float) -> float:
    import gymnasium as gym

    env = gym.make("Blackjack-v1")
    env.action_space.seed(0)
    return _single_env(env, lambda e: e.action_space.sample(), seconds)


def env_single(make: Callable[[], Any], seconds: float) -> float:
    """Steps/s of a game's Gymnasium env (``make()``), random legal moves."""
    return _single_env(make(), _random_legal(), seconds)


def env_batched_of(make: Callable[[int], Any], seconds: float, n_envs: int = N_ENVS) -> float:
    """Steps/s of a game's batched env of ``n_envs`` games (``make(n_envs)``), random legal moves."""
    return _batched_env(make(n_envs), seconds)


def env_batched(game: str, seconds: float, n_envs: int = N_ENVS):
    """Agent steps/s of a registered game's batched env against the game's random bot
    (its exact policy table), default options; and its agent steps per finished game."""
    import agents

    spec = games.get(game)
    options = spec.check_options({})
    venv = games.load(spec.batched_env)(n_envs, agents.bot_table(spec.name, "random", **options), seed=0, **options)
    tally: dict = {}
    rate = _batched_env(venv, seconds, tally)
    return rate, {"steps_per_game": tally["steps"] / max(tally["games"], 1)}


def peer(measure: Callable[[float, Callable], Any], seconds: float):
    """A game's peer (another program playing it), timed by the bench's best window."""
    return measure(seconds, _timed)


# --- training throughput --------------------------------------------------------
UPDATE_SHARE = "share of the time in PPO updates"  # train_preset's note


def train_preset(preset_name: str, timesteps: int) -> tuple[float, dict[str, float]]:
    """The preset's training steps per second on one thread, and the share of that time
    spent in PPO's updates (``model.train``) rather than in collecting rollouts: which of
    the two a faster network or a faster env would cut."""
    from pathlib import Path
    from tempfile import TemporaryDirectory

    from train.presets import PRESETS
    from train.run import RunConfig, build_model, make_env
    import torch

    torch.set_num_threads(1)
    preset = PRESETS[preset_name]
    with TemporaryDirectory() as tmp:
        config = RunConfig(preset, timesteps, 0, preset.n_envs, Path(tmp), Path(tmp), "bench")
        model = build_model(config, make_env(config))
        updating = [0.0]
        update = model.train

        def timed_update() -> None:
            began = time.perf_counter()
            update()
            updating[0] += time.perf_counter() - began

        model.train = timed_update
        start = time.perf_counter()
        model.learn(timesteps)
        seconds = time.perf_counter() - start
        return model.num_timesteps / seconds, {UPDATE_SHARE: updating[0] / seconds}


def train_plain(game: str, bot: str, timesteps: int) -> float:
    """Plain MaskablePPO (SB3's defaults) on 8 of the game's Gymnasium envs against ``bot``."""
    import torch
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.logger import Logger
    from stable_baselines3.common.vec_env import DummyVecEnv

    from agents import make_agent

    torch.set_num_threads(1)
    spec = games.get(game)
    env_class = games.load(spec.env)
    env = DummyVecEnv([lambda: env_class(opponent=make_agent(spec.name, bot)) for _ in range(8)])
    model = MaskablePPO("MlpPolicy", env, seed=0, device="cpu")
    model.set_logger(Logger(None, []))  # nothing logged: no SB3-date-time folder in /tmp
    start = time.perf_counter()
    model.learn(timesteps)
    return model.num_timesteps / (time.perf_counter() - start)


# --- what is measured: the games' declarations -------------------------------------
def batched_name(game: str) -> str:
    """The measurement of a registered game's batched env, as the table names it."""
    cls = games.get(game).batched_env.rpartition(":")[2]
    return f"{game} batched env ({cls} vs random, {N_ENVS} games)"


@dataclass
class Plan:
    """Every measurement by name (each a function of one argument: seconds, or timesteps for
    training), and what the summary sets against what."""

    measures: dict[str, Callable[[Any], Any]] = field(default_factory=dict)
    steps: dict[str, str] = field(default_factory=dict)  # training measurement -> its timesteps option
    pairs: list[tuple[str, str, str]] = field(default_factory=list)  # label, single env, batched env
    shared: dict[str, tuple[str, str]] = field(default_factory=dict)  # figure -> (peer, its note)
    summaries: list[tuple[Callable, str]] = field(default_factory=list)  # a game's summary, its batched env
    trainings: list[tuple[str, str, str]] = field(default_factory=list)  # preset, its measurement, plain's


def plan() -> Plan:
    """The measurements of every registered game (its batched env against its random bot
    and what its ``GameSpec.bench`` module declares), Blackjack's, and their order."""
    found = Plan()
    benches = {name: games.load(games.get(name).bench) for name in games.names() if games.get(name).bench}
    for module in benches.values():
        for label, (single_what, single), (batched_what, batched) in getattr(module, "ENVS", ()):
            single_env_name = f"{label} single env ({single_what})"
            batched_env_name = f"{label} batched env ({batched_what}, {N_ENVS} games)"
            found.measures[single_env_name] = functools.partial(env_single, single)
            found.measures[batched_env_name] = functools.partial(env_batched_of, batched)
            found.pairs.append((label, single_env_name, batched_env_name))
    found.measures[BLACKJACK] = env_blackjack
    for name in games.names():
        spec = games.get(name)
        if spec.batched_env and "random" in spec.bots:
            found.measures[batched_name(name)] = functools.partial(env_batched, name)
    for name, module in benches.items():
        for peer_name, measure in getattr(module, "PEERS", {}).items():
            found.measures[peer_name] = functools.partial(peer, measure)
        found.shared.update(getattr(module, "SHARED_PEERS", {}))
        if hasattr(module, "summary"):
            found.summaries.append((module.summary, batched_name(name)))
    for name, module in benches.items():
        if getattr(module, "TRAINING", None):
            preset, bot = module.TRAINING
            mine, plain = (
                f"train {preset} preset (batched)",
                f"train plain MaskablePPO (defaults, 8 x {games.get(name).env_id})",
            )
            found.measures[mine] = functools.partial(train_preset, preset)
            found.measures[plain] = functools.partial(train_plain, name, bot)
            found.steps.update({mine: "train_steps", plain: "plain_steps"})
            found.trainings.append((preset, mine, plain))
    return found


PLAN = plan()
MEASURES = PLAN.measures


def _child(name: str, arg, queue) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a Ctrl-C is the parent's to answer: it ends this one
    try:
        value = MEASURES[name](arg)  # a rate, or (rate, notes): figures the summary uses
        queue.put((value, _peak_mb(), None))
    except ImportError as e:
        queue.put((None, _peak_mb(), f"not installed ({e.name})"))
    except Exception as e:  # report and go on with the other measurements
        queue.put((None, _peak_mb(), f"{type(e).__name__}: {e}"))


def measure(name: str, arg):
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    proc = ctx.Process(target=_child, args=(name, arg, queue))
    proc.start()
    try:
        result = queue.get()
    except BaseException:  # Ctrl-C or SIGTERM: the measure in progress ends with the program
        proc.terminate()
        proc.join()
        raise
    proc.join()
    return result


def _line(text: str) -> None:
    print(text if len(text) <= WIDTH else text[: WIDTH - 3] + "...", flush=True)


def summary_lines(results: dict[str, Any], notes: dict[str, dict]) -> list[str]:
    """Each game's batched env over its single env, over Blackjack and over the shared peers;
    its single env over Blackjack; the games' own lines; each preset's training over plain
    MaskablePPO's.  A ratio whose two figures were not both measured is left out."""
    lines = []
    blackjack = results.get(BLACKJACK)
    for label, single_env_name, batched_env_name in PLAN.pairs:
        single, batched = results.get(single_env_name), results.get(batched_env_name)
        if batched and single:
            lines.append(f"batched {label} env / single {label} env: {batched / single:.1f}x")
        for peer_name in (BLACKJACK, *PLAN.shared):
            if batched and results.get(peer_name):
                lines.append(f"batched {label} env / {peer_name}: {batched / results[peer_name]:.1f}x")
        if single and blackjack:
            lines.append(f"single {label} env / {BLACKJACK.split()[0]}: {single / blackjack:.2f}x")
    for summary, ours in PLAN.summaries:
        lines += summary(results, notes, ours)
    for preset, mine, plain in PLAN.trainings:
        if results.get(mine) and results.get(plain):
            lines.append(
                f"training throughput, {preset} preset / plain MaskablePPO: {results[mine] / results[plain]:.1f}x"
            )
        if UPDATE_SHARE in notes.get(mine, {}):
            share = notes[mine][UPDATE_SHARE]
            lines.append(f"{preset} training: {share:.0%} of its time in PPO updates, {1 - share:.0%} in rollouts")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m train.bench", description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--seconds",
        type=float,
        default=5.0,
        help=f"seconds per environment measurement, the best of {WINDOWS} windows (default 5)",
    )
    parser.add_argument(
        "--train-steps", type=int, default=262_144, help="timesteps for each preset's training measurement"
    )
    parser.add_argument(
        "--plain-steps", type=int, default=16_384, help="timesteps for each plain MaskablePPO measurement"
    )
    parser.add_argument(
        "--only",
        action="append",
        metavar="TEXT",
        help="only the measurements whose name contains TEXT (any case; repeat for more), "
        "e.g. --only GAME for the measurements that name a game (a quick run)",
    )
    args = parser.parse_args(argv)
    chosen = [n for n in MEASURES if not args.only or any(t.lower() in n.lower() for t in args.only)]
    if not chosen:
        parser.error(f"no measurement matches --only {' '.join(args.only)}")
    results: dict[str, Any] = {}
    notes: dict[str, dict] = {}
    _line(f"{'measurement':<52} {'steps/s':>12} {'peak MB':>9}")
    for name in chosen:
        value, peak, error = measure(name, getattr(args, PLAN.steps.get(name, "seconds")))
        if isinstance(value, tuple):
            value, notes[name] = value
        results[name] = value
        shown = f"{value:>12,.0f}" if value is not None else f"{'-':>12}"
        _line(f"{name:<52} {shown} {peak:>9.0f}")
        if error:
            _line(f"    ({error})")
        for figure, (peer_name, note) in PLAN.shared.items():  # a figure of the same run
            if name == peer_name and value is not None:
                results[figure] = notes[name][note]
                _line(f"{figure:<52} {results[figure]:>12,.0f} {'':>9}")
    print()
    for line in summary_lines(results, notes):
        _line(line)
    return 0


if __name__ == "__main__":
    from core.cli import run_interruptible

    run_interruptible(main)
