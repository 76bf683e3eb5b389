"""python -m train.bench: speed figures, each next to a peer measured in the same run.

Every measurement runs in its own fresh process (so peak memory is its own),
one after another.  Figures are steps per second of wall time on this machine;
the ratios against the peers are the numbers to compare across machines.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import resource
import sys
import time
from typing import Callable


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


def env_420_single(seconds: float) -> float:
    from games.dice420.env import Dice420Env

    from agents import make_agent

    return _single_env(Dice420Env(opponent=make_agent("420", "optimal")), _random_legal(), seconds)


def _batched_env(venv, seconds: float) -> float:
    """Steps/s of a batched env, a random legal action per game (vectorised)."""
    import numpy as np

    venv.reset()
    rng = np.random.default_rng(0)

    def run():
        masks = venv.action_masks()
        scores = np.where(masks, rng.random(masks.shape), -1.0)
        venv.step(scores.argmax(axis=1))
        return venv.num_envs

    return _timed(run, seconds)


def env_420_batched(seconds: float, n_envs: int = 1024) -> float:
    from games.dice420 import solver as solver420
    from games.dice420.vec import Vec420Env

    return _batched_env(Vec420Env(n_envs, solver420.solve().policy, seed=0), seconds)


def env_421_single(seconds: float) -> float:
    from agents import make_agent
    from games.dice421.env import Dice421Env

    return _single_env(Dice421Env(opponent=make_agent("421", "optimal"), n_players=2), _random_legal(), seconds)


def env_421_batched(seconds: float, n_envs: int = 1024) -> float:
    from agents import bot_table
    from games.dice421.vec import Vec421Env

    return _batched_env(Vec421Env(n_envs, bot_table("421", "optimal", pot=15), seed=0), seconds)


def env_421_three_single(seconds: float) -> float:
    from agents import make_agent
    from games.dice421.env import Dice421Env

    return _single_env(Dice421Env(opponent=make_agent("421", "greedy421"), n_players=3), _random_legal(), seconds)


def env_421_three_batched(seconds: float, n_envs: int = 1024) -> float:
    from agents import batch_policy
    from games.dice421.vecn import Vec421NEnv

    return _batched_env(Vec421NEnv(n_envs, batch_policy("421", "greedy421"), n_players=3, seed=0), seconds)


def env_blackjack(seconds: float) -> float:
    import gymnasium as gym

    env = gym.make("Blackjack-v1")
    env.action_space.seed(0)
    return _single_env(env, lambda e: e.action_space.sample(), seconds)


def env_pig(seconds: float) -> float:
    import numpy as np
    import pyspiel

    game = pyspiel.load_game("pig")
    rng = np.random.default_rng(0)
    state = game.new_initial_state()

    def run():
        nonlocal state
        steps = 0
        while steps < 1000:
            if state.is_terminal():
                state = game.new_initial_state()
            if state.is_chance_node():
                outcomes = state.chance_outcomes()
                state.apply_action(outcomes[rng.integers(len(outcomes))][0])
            else:
                actions = state.legal_actions()
                state.apply_action(actions[rng.integers(len(actions))])
            steps += 1
        return steps

    return _timed(run, seconds)


# --- training throughput --------------------------------------------------------
def train_preset(timesteps: int) -> float:
    from pathlib import Path
    from tempfile import TemporaryDirectory

    from train.presets import PRESETS
    from train.run import RunConfig, build_model, make_env
    import torch

    torch.set_num_threads(1)
    preset = PRESETS["ppo-420"]
    with TemporaryDirectory() as tmp:
        config = RunConfig(preset, timesteps, 0, preset.n_envs, Path(tmp), Path(tmp), "bench")
        model = build_model(config, make_env(config))
        start = time.perf_counter()
        model.learn(timesteps)
        return model.num_timesteps / (time.perf_counter() - start)


def train_plain(timesteps: int) -> float:
    import torch
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.vec_env import DummyVecEnv

    from games.dice420.env import Dice420Env

    torch.set_num_threads(1)
    from agents import make_agent

    env = DummyVecEnv([lambda: Dice420Env(opponent=make_agent("420", "optimal")) for _ in range(8)])
    model = MaskablePPO("MlpPolicy", env, seed=0, device="cpu")
    start = time.perf_counter()
    model.learn(timesteps)
    return model.num_timesteps / (time.perf_counter() - start)


def _child(name: str, arg, queue) -> None:
    try:
        value = MEASURES[name](arg)
        queue.put((value, _peak_mb(), None))
    except ImportError as e:
        queue.put((None, _peak_mb(), f"not installed ({e.name})"))
    except Exception as e:  # report and go on with the other measurements
        queue.put((None, _peak_mb(), f"{type(e).__name__}: {e}"))


MEASURES = {
    "420 single env (Dice420-v0)": env_420_single,
    "420 batched env (Vec420Env, 1024 games)": env_420_batched,
    "421 single env (Dice421-v0, vs optimal)": env_421_single,
    "421 batched env (Vec421Env, 1024 games)": env_421_batched,
    "421 3p single env (Dice421-v0, vs greedy421)": env_421_three_single,
    "421 3p batched (Vec421NEnv, 1024 games)": env_421_three_batched,
    "Blackjack-v1 (gymnasium)": env_blackjack,
    "OpenSpiel pig (C++)": env_pig,
    "train ppo-420 preset (batched)": train_preset,
    "train plain MaskablePPO (DummyVecEnv x8, defaults)": train_plain,
}


def measure(name: str, arg):
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    proc = ctx.Process(target=_child, args=(name, arg, queue))
    proc.start()
    result = queue.get()
    proc.join()
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m train.bench", description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=5.0,
                        help=f"seconds per environment measurement, the best of {WINDOWS} windows (default 5)")
    parser.add_argument("--train-steps", type=int, default=262_144, help="timesteps for the preset's training measurement")
    parser.add_argument("--plain-steps", type=int, default=16_384, help="timesteps for the plain MaskablePPO measurement")
    args = parser.parse_args(argv)
    args_for = {
        "train ppo-420 preset (batched)": args.train_steps,
        "train plain MaskablePPO (DummyVecEnv x8, defaults)": args.plain_steps,
    }
    results = {}
    print(f"{'measurement':<52} {'steps/s':>12} {'peak MB':>9}")
    for name in MEASURES:
        value, peak, error = measure(name, args_for.get(name, args.seconds))
        results[name] = value
        shown = f"{value:>12,.0f}" if value is not None else f"{'-':>12}"
        print(f"{name:<52} {shown} {peak:>9.0f}" + (f"   ({error})" if error else ""), flush=True)
    print()
    batched = results["420 batched env (Vec420Env, 1024 games)"]
    single = results["420 single env (Dice420-v0)"]
    for peer in ("420 single env (Dice420-v0)", "Blackjack-v1 (gymnasium)", "OpenSpiel pig (C++)"):
        if batched and results.get(peer):
            print(f"batched 420 env / {peer}: {batched / results[peer]:.1f}x")
    batched421 = results["421 batched env (Vec421Env, 1024 games)"]
    for peer in ("421 single env (Dice421-v0, vs optimal)", "Blackjack-v1 (gymnasium)", "OpenSpiel pig (C++)"):
        if batched421 and results.get(peer):
            print(f"batched 421 env / {peer}: {batched421 / results[peer]:.1f}x")
    three, three_single = (results["421 3p batched (Vec421NEnv, 1024 games)"],
                           results["421 3p single env (Dice421-v0, vs greedy421)"])
    if three and three_single:
        print(f"batched 3-player 421 env / single 3-player env: {three / three_single:.1f}x")
    if single and results.get("Blackjack-v1 (gymnasium)"):
        print(f"single 420 env / Blackjack-v1: {single / results['Blackjack-v1 (gymnasium)']:.2f}x")
    preset, plain = results["train ppo-420 preset (batched)"], results["train plain MaskablePPO (DummyVecEnv x8, defaults)"]
    if preset and plain:
        print(f"training throughput, ppo-420 preset / plain MaskablePPO: {preset / plain:.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
