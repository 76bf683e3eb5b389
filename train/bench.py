"""python -m train.bench: speed figures, each next to a peer measured in the same run.

Every measurement runs in its own fresh process (so peak memory is its own),
one after another.  Figures are steps per second of wall time on this machine;
the ratios against the peers are the numbers to compare across machines.

Every registered game's batched env (``GameSpec.batched_env``) is measured in one
loop, against its random bot's exact policy table (``agents.bot_table``), with
the game's default options.  Pig's is also set against OpenSpiel's C++ ``pig``
on the same game (two players, the goal and faces of Pig's defaults) and the
same random-legal-move loop, counting decisions on both sides: a step of the
batched env is one decision of the agent's seat, and it also plays every die and
every move of the opponent's seat (from its table) up to the agent's next
decision; OpenSpiel's figure counts every decision of both seats (one
``apply_action`` each, from Python) and not its chance nodes (the dice).
"""

from __future__ import annotations

import argparse
import functools
import multiprocessing as mp
import resource
import sys
import time
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


def env_420_single(seconds: float) -> float:
    from games.dice420.env import Dice420Env

    from agents import make_agent

    return _single_env(Dice420Env(opponent=make_agent("420", "optimal")), _random_legal(), seconds)


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


N_ENVS = 1024  # games of a batched env


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


OPENSPIEL_GAME = "pig"  # the registered game that OpenSpiel's C++ pig plays


def openspiel_pig_params() -> dict[str, int]:
    """OpenSpiel's parameters for the registered game's defaults (two players)."""
    options = games.get(OPENSPIEL_GAME).check_options({})
    return {"players": 2, "winscore": options["goal"], "diceoutcomes": options["faces"]}


def env_pig(seconds: float):
    """OpenSpiel's C++ pig from Python, a uniformly random legal action at every
    decision and a uniform die at every chance node.  Decisions/s (both seats; chance
    nodes not counted); every node/s (chance nodes too: the bench's figure before it
    counted decisions) and decisions and nodes per game."""
    import numpy as np
    import pyspiel

    game = pyspiel.load_game("pig", openspiel_pig_params())
    rng = np.random.default_rng(0)
    state = game.new_initial_state()
    tally = {"nodes": 0, "decisions": 0, "games": 0}

    def run():
        nonlocal state
        nodes = decisions = 0
        while nodes < 1000:
            if state.is_terminal():
                state = game.new_initial_state()
                tally["games"] += 1
            if state.is_chance_node():
                outcomes = state.chance_outcomes()
                state.apply_action(outcomes[rng.integers(len(outcomes))][0])
            else:
                actions = state.legal_actions()
                state.apply_action(actions[rng.integers(len(actions))])
                decisions += 1
            nodes += 1
        tally["nodes"] += nodes
        tally["decisions"] += decisions
        return decisions

    rate = _timed(run, seconds)
    per_game = max(tally["games"], 1)
    return rate, {
        "nodes_per_s": rate * tally["nodes"] / max(tally["decisions"], 1),
        "decisions_per_game": tally["decisions"] / per_game,
        "nodes_per_game": tally["nodes"] / per_game,
    }


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
        value = MEASURES[name](arg)  # a rate, or (rate, notes): figures the summary uses
        queue.put((value, _peak_mb(), None))
    except ImportError as e:
        queue.put((None, _peak_mb(), f"not installed ({e.name})"))
    except Exception as e:  # report and go on with the other measurements
        queue.put((None, _peak_mb(), f"{type(e).__name__}: {e}"))


def batched_name(game: str) -> str:
    """The measurement of a registered game's batched env, as the table names it."""
    cls = games.get(game).batched_env.rpartition(":")[2]
    return f"{game} batched env ({cls} vs random, {N_ENVS} games)"


OPENSPIEL = "OpenSpiel pig (C++), decisions"
OPENSPIEL_NODES = "OpenSpiel pig (C++), every node"  # the peer the 420 and 421 envs keep

MEASURES = {
    "420 single env (Dice420-v0)": env_420_single,
    "420 batched env (Vec420Env, 1024 games)": env_420_batched,
    "421 single env (Dice421-v0, vs optimal)": env_421_single,
    "421 batched env (Vec421Env, 1024 games)": env_421_batched,
    "421 3p single env (Dice421-v0, vs greedy421)": env_421_three_single,
    "421 3p batched (Vec421NEnv, 1024 games)": env_421_three_batched,
    "Blackjack-v1 (gymnasium)": env_blackjack,
    **{
        batched_name(name): functools.partial(env_batched, name)
        for name in games.names()
        if games.get(name).batched_env and "random" in games.get(name).bots
    },
    OPENSPIEL: env_pig,
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


def _line(text: str) -> None:
    print(text if len(text) <= WIDTH else text[: WIDTH - 3] + "...", flush=True)


def openspiel_lines(results: dict[str, Any], notes: dict[str, dict]) -> list[str]:
    """The registered game's batched env against OpenSpiel's pig: the ratio of decisions/s,
    what each side counts, and what the rules' one difference changes (decisions/game)."""
    ours_name = batched_name(OPENSPIEL_GAME) if OPENSPIEL_GAME in games.names() else None
    ours, theirs = results.get(ours_name), results.get(OPENSPIEL)
    if not (ours and theirs):
        return []
    mine, os_notes = notes.get(ours_name, {}), notes.get(OPENSPIEL, {})
    p = openspiel_pig_params()
    lines = [
        f"batched {OPENSPIEL_GAME} env / {OPENSPIEL}: {ours / theirs:.1f}x",
        f"  same game: {p['players']} players, goal {p['winscore']}, {p['diceoutcomes']} faces; "
        "a random legal move per decision",
        "  ours: a step is one decision of the agent's seat, with every die and the",
        "  opponent's moves (its table) up to the next; OpenSpiel: one decision of",
        f"  either seat; its chance nodes (dice) are not counted ({os_notes.get('nodes_per_game', 0):.0f} nodes/game)",
    ]
    if mine.get("steps_per_game") and os_notes.get("decisions_per_game"):
        lines.append(
            f"  decisions/game: OpenSpiel {os_notes['decisions_per_game']:.1f} (both seats), "
            f"ours {mine['steps_per_game']:.1f} (agent's)"
        )
    lines += [
        "  OpenSpiel asks at turn total 0 (a hold there passes) and ends on a hold;",
        "  ours rolls that roll itself and ends on reaching the goal: fewer decisions",
    ]
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
        "--train-steps", type=int, default=262_144, help="timesteps for the preset's training measurement"
    )
    parser.add_argument(
        "--plain-steps", type=int, default=16_384, help="timesteps for the plain MaskablePPO measurement"
    )
    parser.add_argument(
        "--only",
        action="append",
        metavar="TEXT",
        help="only the measurements whose name contains TEXT (any case; repeat for more), "
        "e.g. --only pig for the Pig envs and OpenSpiel's pig (a quick run)",
    )
    args = parser.parse_args(argv)
    args_for = {
        "train ppo-420 preset (batched)": args.train_steps,
        "train plain MaskablePPO (DummyVecEnv x8, defaults)": args.plain_steps,
    }
    chosen = [n for n in MEASURES if not args.only or any(t.lower() in n.lower() for t in args.only)]
    if not chosen:
        parser.error(f"no measurement matches --only {' '.join(args.only)}")
    results: dict[str, Any] = {}
    notes: dict[str, dict] = {}
    _line(f"{'measurement':<52} {'steps/s':>12} {'peak MB':>9}")
    for name in chosen:
        value, peak, error = measure(name, args_for.get(name, args.seconds))
        if isinstance(value, tuple):
            value, notes[name] = value
        results[name] = value
        shown = f"{value:>12,.0f}" if value is not None else f"{'-':>12}"
        _line(f"{name:<52} {shown} {peak:>9.0f}")
        if error:
            _line(f"    ({error})")
        if name == OPENSPIEL and value is not None:  # the old figure, from the same run
            results[OPENSPIEL_NODES] = notes[name]["nodes_per_s"]
            _line(f"{OPENSPIEL_NODES:<52} {results[OPENSPIEL_NODES]:>12,.0f} {'':>9}")
    print()
    batched = results.get("420 batched env (Vec420Env, 1024 games)")
    single = results.get("420 single env (Dice420-v0)")
    for peer in ("420 single env (Dice420-v0)", "Blackjack-v1 (gymnasium)", OPENSPIEL_NODES):
        if batched and results.get(peer):
            _line(f"batched 420 env / {peer}: {batched / results[peer]:.1f}x")
    batched421 = results.get("421 batched env (Vec421Env, 1024 games)")
    for peer in ("421 single env (Dice421-v0, vs optimal)", "Blackjack-v1 (gymnasium)", OPENSPIEL_NODES):
        if batched421 and results.get(peer):
            _line(f"batched 421 env / {peer}: {batched421 / results[peer]:.1f}x")
    three, three_single = (
        results.get("421 3p batched (Vec421NEnv, 1024 games)"),
        results.get("421 3p single env (Dice421-v0, vs greedy421)"),
    )
    if three and three_single:
        _line(f"batched 3-player 421 env / single 3-player env: {three / three_single:.1f}x")
    if single and results.get("Blackjack-v1 (gymnasium)"):
        _line(f"single 420 env / Blackjack-v1: {single / results['Blackjack-v1 (gymnasium)']:.2f}x")
    for line in openspiel_lines(results, notes):
        _line(line)
    preset = results.get("train ppo-420 preset (batched)")
    plain = results.get("train plain MaskablePPO (DummyVecEnv x8, defaults)")
    if preset and plain:
        _line(f"training throughput, ppo-420 preset / plain MaskablePPO: {preset / plain:.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
