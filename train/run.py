"""One training run, top to bottom: build the batched env, fit MaskablePPO,
evaluate exactly as it goes, save checkpoints, print the results.

A run holds a lock on its name while it trains and refuses to start over an
existing run unless told to ``resume`` or ``overwrite`` it.  ``--resume``
rebuilds the model from the preset and loads only tensors and plain values
into it (``train.checkpoint``): the weights, the optimizer state, the counters,
the random states, the evaluation history and the wall-clock seconds so far, so
a resumed run reads as one run.  A Ctrl-C during a save waits for the save.
"""

from __future__ import annotations

import platform
import shlex
import signal
import sys
import threading
import time
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable

import numpy as np
import torch
from stable_baselines3.common.callbacks import BaseCallback, CallbackList, ProgressBarCallback

import agents
import games
from agents.base import pp
from agents.ppo_agent import (CheckpointError, PPOAgent, build_policy, check_weights, policy_class_from,
                              policy_kwargs_from, policy_state)
from train import checkpoint
from train.checkpoint import RunError
from train.fast import BatchedMaskablePPO, EpisodeMonitor
from train.presets import Preset, gae_lambda_schedule, pool_weights

# the exact figures logged to TensorBoard (eval/KEY) and kept in a checkpoint's metadata
LOGGED_FIGURES = ("vs_", "gap_", "suboptimal_", "exploitability_", "regret_", "table_")
# figures of every evaluation kept in a checkpoint's metadata (eval_history)
HISTORY_FIGURES = ("gap_pp", "table_")
TABLE_GAMES = 20_480  # sampled games per evaluation of a run at a table of more than two players
DEFAULT_LOGDIR = Path("runs")  # python -m train's --logdir default (a continue-with command leaves it out)


@dataclass
class RunConfig:
    preset: Preset
    timesteps: int
    seed: int | None  # None: the saved run's when resuming, else 0
    n_envs: int
    logdir: Path
    checkpoint_dir: Path
    name: str
    resume: bool = False
    overwrite: bool = False  # replace an existing run of this name
    eval_every: int | None = None
    stop_when_optimal: bool = True
    progress_bar: bool = True
    torch_threads: int | None = None  # None: the preset's, or the saved run's when resuming
    # called with the figures of each evaluation during training, once its checkpoint is
    # saved (python -m train sweep reports the exact gap to Ray Tune with it)
    on_eval: Callable[[dict[str, Any]], None] | None = None


def exact_options(preset: Preset) -> dict[str, Any]:
    """The game options the exact evaluation takes (the env's, less the player count)."""
    return {k: v for k, v in preset.env.items() if k != "n_players"}


def eval_opponents(preset: Preset) -> tuple[str, ...]:
    """The bots an agent is measured against: the optimal one first, then the others."""
    others = tuple(b for b in games.get(preset.game).bots_for(2) if b != "optimal")
    return ("optimal", *others)


def plays_live(preset: Preset) -> bool:
    """Whether the preset trains in the game's live env (other seats asked as batch policies)."""
    return preset.n_players in games.get(preset.game).live_players


def table_versus(preset: Preset) -> tuple[str, ...]:
    """The bots at the other seats of the table a run of more than two players is measured
    at: the game's suggested bot (421: ``heuristic``) in every other seat."""
    return (games.get(preset.game).suggested_bot,) * (preset.n_players - 1)


def table_key(preset: Preset) -> str:
    """The figure of that table: ``table_vs_A_B``."""
    return "table_vs_" + "_".join(table_versus(preset))


def table_bots(preset: Preset) -> tuple[str, ...]:
    """The bots an exact evaluation of a run of more than two players puts in every other
    seat, one table each: the measured table's (``table_versus``), then every other bot of
    the game that plays that table (its size and options) but ``random``."""
    bots = games.get(preset.game).bots_for(preset.n_players)
    options = tuple(sorted(exact_options(preset).items()))
    return tuple(b for b in dict.fromkeys((table_versus(preset)[0], *(b for b in bots if b != "random")))
                 if _bot_table(preset.game, b, preset.n_players, options) is not None)


@lru_cache(maxsize=32)
def _bot_table(game: str, name: str, n_players: int, options: tuple) -> Any:
    """A bot as tables of ``n_players`` ask it (``exact_n.prepared``), kept for the whole
    process: a 421 bot's table fills as it is asked, once for every evaluation.  None for
    a bot that cannot sit at such a table (exact3 at another pot)."""
    bot = agents.make_agent(game, name, seed=0)
    try:
        if hasattr(bot, "check_table"):
            bot.check_table(n_players, **dict(options))
    except ValueError:
        return None
    return games.load(games.get(game).exact_n).prepared(bot, n_players)


def exact_tables(config: RunConfig, agent) -> dict[str, Any]:
    """``agent`` measured exactly at its own table (itself in every seat, which by symmetry
    is every seat's regret: ``table_own_regret_pp``) and at the table of each of
    ``table_bots`` in every other seat (``table_vs_A_A`` its P(not losing),
    ``table_regret_vs_A_A_pp`` what the best reply there gets more).  ``ValueError``
    when the game's exact module cannot tabulate the agent once for all tables (420 with
    an agent that looks at other hands)."""
    preset, spec = config.preset, games.get(config.preset.game)
    solver, options, n = games.load(spec.exact_n), exact_options(preset), preset.n_players
    mine = solver.prepared(agent, n)
    value, best = solver.seat_figures([mine] * n, 0, **options)
    figures = {"table_own_regret_pp": pp(best - value)}
    for bot in table_bots(preset):
        other = _bot_table(preset.game, bot, n, tuple(sorted(options.items())))
        value, best = solver.seat_figures([mine, *[other] * (n - 1)], 0, **options)
        key = "_".join([bot] * (n - 1))
        figures[f"table_vs_{key}"], figures[f"table_regret_vs_{key}_pp"] = value, pp(best - value)
    measured = table_key(preset).removeprefix("table_vs_")
    figures["table_regret_pp"] = figures[f"table_regret_vs_{measured}_pp"]
    return {**figures, "optimal": False, "exact_table": True}


def table_figures(config: RunConfig, agent, exact: bool, final: bool = False) -> dict[str, Any]:
    """A run of more than two players, measured at the table of ``table_versus``:
    ``table_vs_A_B`` its P(not losing), sampled over ``TABLE_GAMES`` games (``table_se_pp``
    its standard error), or with ``exact`` every figure of ``exact_tables``.  Where those
    cannot be had, the ``final`` evaluation still tries the measured table alone over the
    full state (420 with three players and an agent that looks at other hands: minutes);
    failing that (four players), the sampled figure stands in, with
    ``table_exact_refused`` saying why."""
    preset, spec = config.preset, games.get(config.preset.game)
    options, versus, key = exact_options(preset), table_versus(preset), table_key(preset)
    refused = None
    if exact:
        try:
            return exact_tables(config, agent)
        except ValueError as e:
            refused = str(e)
    if exact and final:
        solver = games.load(spec.exact_n)
        others = [agents.make_agent(preset.game, name, seed=0) for name in versus]
        try:
            value, best = solver.seat_figures([agent, *others], 0, **options)
            return {key: value, "table_regret_pp": pp(best - value), "optimal": False, "exact_table": True}
        except ValueError as e:
            refused = str(e)
    env = games.load(spec.live_env)(2048, agents.live_opponent(preset.game, versus[0], preset.n_players),
                                    n_players=preset.n_players, seed=0, **options)
    policy = agents.batch_policy(preset.game, agent)
    per_slot = -(-TABLE_GAMES // env.num_envs)
    finished, wins = np.zeros(env.num_envs, dtype=np.int64), np.zeros(env.num_envs)
    env.reset()
    while (finished < per_slot).any():
        live = np.flatnonzero(~env.decided)
        actions = np.zeros(env.num_envs, dtype=np.int64)
        actions[live] = policy(env._obs(live), env.action_masks()[live], env.rng)
        _, rewards, dones, _ = env.step(actions)
        counted = dones & (finished < per_slot)  # each slot's first games only: no bias to short games
        wins += counted * (rewards > 0)
        finished += dones
    p, n = wins.sum() / (per_slot * env.num_envs), per_slot * env.num_envs
    figures = {key: float(p), "table_se_pp": float(100 * np.sqrt(p * (1 - p) / n)), "optimal": False,
               "exact_table": False}
    return figures if refused is None else {**figures, "table_exact_refused": refused}


def evaluate(config: RunConfig, agent, final: bool = False, exact_now: bool = False) -> dict[str, Any]:
    """Exact figures of ``agent`` by the game's solver (``GameSpec.exact``); at a table of
    more than two players, ``table_figures`` (exact at the end of the run, and during it
    where ``exact_now``: every ``Preset.exact_every`` steps)."""
    preset = config.preset
    if preset.n_players > 2:
        return table_figures(config, agent, exact=final or exact_now, final=final)
    options = exact_options(preset)
    tables = {name: agents.bot_table(preset.game, name, **options) for name in eval_opponents(preset)}
    return games.load(games.get(preset.game).exact).exact_figures(agent, tables, **options)


def log_figures(logger, figures: dict[str, Any], step: int) -> None:
    """An evaluation's figures to TensorBoard, ``eval/KEY`` (the numbers of ``LOGGED_FIGURES``)."""
    for key, value in figures.items():
        if key.startswith(LOGGED_FIGURES) and isinstance(value, (int, float)):  # not a refusal's words
            logger.record(f"eval/{key}", value)
    logger.record("eval/wall_seconds", figures["wall_seconds"])
    logger.dump(step)


class ExactEvalCallback(BaseCallback):
    """Every ``every`` steps: exact evaluation, TensorBoard ``eval/*`` tags, a checkpoint.

    420 runs that stop once optimal also count, after every PPO update, the
    decision states where the policy's choice is worse than the best
    (``solver420.suboptimal_choices``, a table lookup; TensorBoard
    ``eval/suboptimal_choices``); at 0 the full evaluation confirms it and the
    run stops, without waiting for the next scheduled evaluation.
    """

    def __init__(self, config: RunConfig, started: float, history: list[dict[str, Any]] | None = None,
                 self_play: SelfPlay | None = None):
        super().__init__()
        self.config = config
        self.self_play = self_play  # its pool is saved with each checkpoint
        self.every = config.eval_every or config.preset.eval_every
        self.exact_every = config.preset.exact_every  # tables of more than two players
        self.next_eval = 0
        self.started = started  # a resumed run's start is moved back by its earlier seconds
        self.history: list[dict[str, Any]] = list(history or [])  # a resumed run's earlier evaluations
        solver = games.load(games.get(config.preset.game).exact)
        self.count_suboptimal = getattr(solver, "count_suboptimal", None)  # games with a cheap per-update check
        self.check_each_update = (self.count_suboptimal is not None and config.stop_when_optimal
                                  and config.preset.n_players == 2)  # the solver's check is heads-up
        self.rollout_started = False

    def _on_training_start(self) -> None:
        # evaluate the starting policy too; a resumed run keeps its schedule
        last = self.history[-1]["timesteps"] if self.history else None
        self.next_eval = self.num_timesteps if last is None else max(self.num_timesteps, last + self.every)

    def _on_rollout_start(self) -> None:
        self.rollout_started = True

    def _exact_due(self) -> bool:
        """Whether this evaluation of a table of more than two players is exact: every one
        without ``exact_every``, else the first at least ``exact_every`` steps after the
        last exact one or the start (resumed runs count from their history)."""
        if self.exact_every is None:
            return True
        if self.num_timesteps + self.model.n_steps * self.model.n_envs > self.config.timesteps:
            return False  # the last rollout: the final evaluation is exact
        done = [h["timesteps"] for h in self.history if "table_own_regret_pp" in h]
        return self.num_timesteps >= (done[-1] if done else 0) + self.exact_every

    def _suboptimal_choices(self) -> int:
        count = self.count_suboptimal(PPOAgent.from_model(self.model, self.config.preset.game))
        self.logger.record("eval/suboptimal_choices", count)
        return count

    def _on_step(self) -> bool:
        first_step, self.rollout_started = self.rollout_started, False
        due = self.num_timesteps >= self.next_eval
        if not due and first_step and self.check_each_update:
            due = self._suboptimal_choices() == 0
        if not due:
            return True
        self.next_eval = self.num_timesteps + self.every
        figures = evaluate(self.config, PPOAgent.from_model(self.model, self.config.preset.game),
                           exact_now=self._exact_due())
        figures.update(timesteps=self.num_timesteps, wall_seconds=time.time() - self.started)
        self.history.append(figures)
        log_figures(self.logger, figures, self.num_timesteps)
        with SigintHeld(reraise=True):  # a Ctrl-C here stops the run once the checkpoint is written
            save_run(self.model, self.config, figures, self.history, self.self_play)
        if self.config.on_eval is not None:
            self.config.on_eval(figures)
        if self.config.stop_when_optimal and figures["optimal"]:
            print(f"\nexactly optimal in both seats at {self.num_timesteps} steps, {figures['wall_seconds']:.1f} s: stopping")
            return False
        return True


class SelfPlay:
    """The opponent pool of a self-play preset (``Preset.pool``, ``Preset.snapshots``).

    The env plays a pool of tables: the preset's ``opponent``, its ``pool`` bots, then
    ``snapshots`` frozen past versions of the learner, each game drawing one in
    proportion to ``pool_weights``.  The first rollout fills every snapshot place
    with the starting learner (the games already begun then, the env's first, play
    ``opponent``); then, before the first rollout after each ``snapshot_every``
    steps, the learner as it is replaces the oldest snapshot, in its place, so only
    the games that drew that place change opponent.  A snapshot is the learner's
    exact policy table at that moment (what the solver evaluates), or in a live env
    (``plays_live``) a frozen copy of its network asked as a batch policy; its
    weights go into the training state, so ``--resume`` plays on against the same
    past versions.  In a live env every other seat draws its own pool member."""

    def __init__(self, config: RunConfig):
        preset = config.preset
        self.config = config
        self.weights = pool_weights(preset)
        options = exact_options(preset)
        self.live = plays_live(preset)
        form = ((lambda name: agents.live_opponent(preset.game, name, preset.n_players)) if self.live
                else (lambda name: agents.bot_table(preset.game, name, **options)))
        self.fixed = [form(name) for name in (preset.opponent, *preset.pool)] if self.weights else []
        self.snapshots: list[dict[str, torch.Tensor]] = []  # the learner's past weights, one per place
        self.tables: list[Any] = []  # their policy tables
        self.oldest = 0  # the place the next snapshot goes to
        self.taken = 0  # snapshots taken so far
        self.next_at = 0  # the step count at which the next snapshot is due

    @property
    def active(self) -> bool:
        return bool(self.weights)

    def _table(self, agent) -> Any:
        """A snapshot in the form the env plays it (``agent`` must not change after)."""
        if self.live:
            return agents.BatchPolicy(agent)
        solver = games.load(games.get(self.config.preset.game).exact)
        return solver.policy_table(agent, **exact_options(self.config.preset))

    def _frozen(self, weights: dict[str, torch.Tensor]) -> PPOAgent:
        policy = build_policy(self.config.preset.game, self.config.preset.policy, self.config.preset.env)
        policy.load_state_dict(weights)
        return PPOAgent(policy, self.config.preset.game)

    def _push(self, model) -> None:
        model.get_env().env_method("set_opponent", [*self.fixed, *self.tables], weights=self.weights)

    def update(self, model) -> bool:
        """Take a snapshot if one is due and give the env the new pool (a pool of bots
        only is given once); whether a snapshot was taken."""
        preset = self.config.preset
        if model.num_timesteps < self.next_at or (self.taken and not preset.snapshots):
            return False
        if preset.snapshots:
            weights = {k: v.clone() for k, v in policy_state(model.policy).items()}  # not the live tensors
            table = self._table(self._frozen(weights) if self.live else PPOAgent.from_model(model, preset.game))
            if not self.snapshots:  # the start: every place holds the starting learner
                self.snapshots, self.tables = [weights] * preset.snapshots, [table] * preset.snapshots
            else:
                self.snapshots[self.oldest], self.tables[self.oldest] = weights, table
                self.oldest = (self.oldest + 1) % preset.snapshots
        self.taken += 1
        self.next_at = model.num_timesteps + preset.snapshot_every
        self._push(model)
        return bool(preset.snapshots)

    def state(self) -> dict[str, Any]:
        return {"snapshots": list(self.snapshots), "oldest": self.oldest, "taken": self.taken,
                "next_at": int(self.next_at)}

    def restore(self, model, saved: Any, where: str) -> None:
        """The pool of a resumed run, from its training state (checked: one line if wrong)."""
        preset = self.config.preset

        def count(key: str, high: int) -> bool:
            value = saved.get(key)
            return not isinstance(value, bool) and isinstance(value, int) and 0 <= value <= high

        if not isinstance(saved, dict) or not isinstance(saved.get("snapshots"), list) \
                or len(saved["snapshots"]) not in (0, preset.snapshots) \
                or not (count("next_at", checkpoint.MAX_TIMESTEPS) and count("taken", checkpoint.MAX_TIMESTEPS)
                        and count("oldest", max(preset.snapshots - 1, 0))) \
                or (preset.snapshots and bool(saved["snapshots"]) != bool(saved["taken"])):
            raise RunError(f"--resume: {where}: self_play is not the pool of {preset.snapshots} snapshots "
                           f"the preset {preset.name} keeps")
        tables = []
        for i, weights in enumerate(saved["snapshots"]):
            policy = build_policy(preset.game, preset.policy, preset.env)
            try:
                policy.load_state_dict(check_weights(weights, policy, f"{where}: self_play snapshot {i}"))
            except CheckpointError as e:
                raise RunError(f"--resume: {e}") from None
            tables.append(self._table(PPOAgent(policy, preset.game)))
        self.snapshots, self.tables = list(saved["snapshots"]), tables
        self.oldest, self.taken, self.next_at = saved["oldest"], saved["taken"], saved["next_at"]
        if self.taken:
            self._push(model)


class SelfPlayCallback(BaseCallback):
    """Before each rollout: a new snapshot of the learner in the pool when one is due
    (TensorBoard ``train/snapshots``: how many have been taken)."""

    def __init__(self, self_play: SelfPlay):
        super().__init__()
        self.self_play = self_play

    def _on_rollout_start(self) -> None:
        if self.self_play.update(self.model):
            self.logger.record("train/snapshots", self.self_play.taken)

    def _on_step(self) -> bool:
        return True


def versions() -> dict[str, str]:
    import gymnasium
    import sb3_contrib
    import stable_baselines3

    return {
        "python": platform.python_version(),
        "torch": torch.__version__,
        "gymnasium": gymnasium.__version__,
        "stable_baselines3": stable_baselines3.__version__,
        "sb3_contrib": sb3_contrib.__version__,
        "numpy": np.__version__,
    }


def save_run(model, config: RunConfig, figures: dict[str, Any] | None = None, history=(),
             self_play: SelfPlay | None = None) -> Path:
    """Write NAME.pt + NAME.json (for playing) and NAME.state (for --resume), atomically."""
    meta = {
        "name": config.name,
        "game": config.preset.game,
        "preset": config.preset.name,
        "timesteps": int(model.num_timesteps),
        "seed": config.seed,
        "n_envs": config.n_envs,
        "opponent": config.preset.opponent,
        "policy": config.preset.policy,
        "env": config.preset.env,
        "threads": config.torch_threads,
        "versions": versions(),
    }
    wall = float((figures or {}).get("wall_seconds", 0.0))
    if figures is not None:
        meta["exact"] = {k: v for k, v in figures.items()
                         if k.startswith(LOGGED_FIGURES) or k in ("optimal", "exact_table")}
        meta["wall_seconds"] = round(wall, 1)
    if history:
        meta["eval_history"] = [
            {k: round(v, 6) for k, v in h.items()
             if isinstance(v, (int, float)) and (k in ("timesteps", "wall_seconds") or k.startswith(HISTORY_FIGURES))}
            for h in history
        ]
    state = checkpoint.training_state(model, game=config.preset.game, preset=config.preset.name, seed=config.seed,
                                      wall_seconds=wall)
    if self_play is not None and self_play.active:
        state["self_play"] = self_play.state()
    return checkpoint.save(config.checkpoint_dir, config.name, model.policy, state, meta)


class SigintHeld:
    """While the block runs, Ctrl-C (SIGINT) is noted with one line instead of
    interrupting it; on leaving, ``reraise`` turns a noted Ctrl-C into the
    ``KeyboardInterrupt`` it would have been.  Only in the main thread (the
    only one Python delivers signals to)."""

    def __init__(self, reraise: bool, message: str = "Ctrl-C: finishing the checkpoint first"):
        self.reraise = reraise
        self.message = message
        self.caught = False
        self.previous: Any = None
        self.installed = False

    def _note(self, signum, frame) -> None:
        self.caught = True
        print(f"\n{self.message}", file=sys.stderr, flush=True)

    def __enter__(self) -> SigintHeld:
        if threading.current_thread() is threading.main_thread():
            self.previous = signal.signal(signal.SIGINT, self._note)
            self.installed = True
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if self.installed:
            signal.signal(signal.SIGINT, self.previous if self.previous is not None else signal.SIG_DFL)
            self.installed = False
        if self.reraise and self.caught and exc_type is None:
            raise KeyboardInterrupt


class StepsBar(ProgressBarCallback):
    """SB3's progress bar, counting to the steps the run will really make.

    PPO collects whole rollouts of ``n_envs x n_steps`` steps, so a run asked
    for 200,000 steps in rollouts of 16,384 makes 212,992: that is the bar's
    total, and it never counts past it, so it ends where the summary's step
    count does.  :meth:`close` ends the bar at once (on Ctrl-C, before the run
    prints its summary; SB3 closes it only when training ends normally)."""

    def _on_training_start(self) -> None:
        import warnings

        from stable_baselines3.common.callbacks import tqdm

        remaining = max(self.locals["total_timesteps"] - self.model.num_timesteps, 0)
        rollout = self.model.n_steps * self.training_env.num_envs
        with warnings.catch_warnings():  # tqdm's "rich is experimental", which SB3 silences too
            warnings.simplefilter("ignore")
            self.pbar = tqdm(total=-(-remaining // rollout) * rollout)

    def _on_step(self) -> bool:
        self.pbar.update(min(self.training_env.num_envs, self.pbar.total - self.pbar.n))
        return True

    def close(self) -> None:
        bar = getattr(self, "pbar", None)
        if bar is not None:
            bar.close()  # a second close does nothing


def make_env(config: RunConfig):
    """The training env: the game's batched numpy env (``GameSpec.batched_env``) of
    ``n_envs`` games against the exact table of the preset's opponent, or its live env
    (``GameSpec.live_env``) against the opponent as a batch policy; player counts
    neither plays run ``n_envs`` Gymnasium envs in an SB3 DummyVecEnv."""
    preset = config.preset
    spec = games.get(preset.game)
    options = dict(preset.env)
    n_players = options.pop("n_players", 2)
    if plays_live(preset):
        opponent = agents.live_opponent(preset.game, preset.opponent, n_players)
        return EpisodeMonitor(games.load(spec.live_env)(config.n_envs, opponent, n_players=n_players,
                                                        seed=config.seed, **options))
    if n_players in spec.batched_players:
        opponent = agents.bot_table(preset.game, preset.opponent, **options)
        extra = {"n_players": n_players} if n_players != 2 else {}
        venv = games.load(spec.batched_env)(config.n_envs, opponent, seed=config.seed, **options, **extra)
        return EpisodeMonitor(venv)
    import gymnasium as gym
    from stable_baselines3.common.monitor import Monitor
    from stable_baselines3.common.vec_env import DummyVecEnv

    def make():
        opponent = agents.make_agent(preset.game, preset.opponent)
        return Monitor(gym.make(spec.env_id, opponent=opponent, n_players=n_players, **options).unwrapped)

    venv = DummyVecEnv([make] * config.n_envs)
    venv.seed(config.seed)
    return venv


def build_model(config: RunConfig, env) -> BatchedMaskablePPO:
    """The preset's MaskablePPO (``BatchedMaskablePPO``: same algorithm, leaner rollout loop)
    on ``env``, freshly initialised from ``config.seed``.  Resuming builds this too and
    then loads the saved run into it (``checkpoint.restore``)."""
    ppo_kwargs = dict(config.preset.ppo)
    if config.preset.lr_final is not None:
        start, end = ppo_kwargs["learning_rate"], config.preset.lr_final
        ppo_kwargs["learning_rate"] = lambda progress_remaining: end + (start - end) * progress_remaining
    model = BatchedMaskablePPO(
        policy_class_from(config.preset.policy, f"preset {config.preset.name}"),
        env,
        policy_kwargs=policy_kwargs_from(config.preset.policy, f"preset {config.preset.name}"),
        tensorboard_log=str(config.logdir),
        seed=0 if config.seed is None else config.seed,
        device="cpu",
        verbose=0,
        **ppo_kwargs,
    )
    model.gae_lambda_schedule = gae_lambda_schedule(config.preset)
    return model


def prepare(config: RunConfig) -> tuple[RunConfig, dict[str, Any] | None]:
    """Check the run can start (name free, or the saved run to resume valid); the
    config with its seed settled and the saved metadata when resuming.  Call it
    holding the run's lock."""
    checkpoint.clean_temporaries(config.checkpoint_dir, config.name)
    if not config.resume:
        existing = checkpoint.existing_files(config.checkpoint_dir, config.name)
        if existing and not config.overwrite:
            raise RunError(f"{existing[0]} already exists: a run named {config.name!r} was saved there; continue it "
                           "with --resume, replace it with --overwrite, or pick another --name")
        return replace(config, seed=0 if config.seed is None else config.seed,
                       torch_threads=config.torch_threads or config.preset.threads), None
    meta = checkpoint.read_saved_meta(config.checkpoint_dir, config.name, config.preset)
    if config.seed is not None and config.seed != meta["seed"]:
        raise RunError(f"--resume: run {config.name!r} was trained with --seed {meta['seed']}, not {config.seed}; "
                       f"leave --seed out to continue it")
    threads = meta.get("threads", 1)  # runs saved before threads were recorded used one
    if isinstance(threads, bool) or not isinstance(threads, int) or not 1 <= threads <= checkpoint.MAX_THREADS:
        raise RunError(f"--resume: {config.checkpoint_dir / config.name}.json: threads is {threads!r}; "
                       f"it must be a whole number from 1 to {checkpoint.MAX_THREADS}")
    if config.torch_threads is not None and config.torch_threads != threads:
        raise RunError(f"--resume: run {config.name!r} was trained with --threads {threads}, not "
                       f"{config.torch_threads} (a run repeats exactly only with the same count); "
                       f"leave --threads out to continue it")
    return replace(config, seed=meta["seed"], torch_threads=threads), meta


def train(config: RunConfig) -> dict[str, Any]:
    """Train, evaluate and save one run (see the module docstring); raises ``RunError``
    (one line) for a name, saved run or lock that does not allow it."""
    checkpoint.check_name(config.name)
    if config.resume and not config.checkpoint_dir.is_dir():
        raise RunError(f"--resume: no saved run at {config.checkpoint_dir / config.name}.json "
                       f"(no folder {config.checkpoint_dir}; train once without --resume first)")
    with checkpoint.RunLock(config.checkpoint_dir, config.name):
        config, meta = prepare(config)
        torch.set_num_threads(config.torch_threads)
        return _train(config, meta)


def _train(config: RunConfig, meta: dict[str, Any] | None) -> dict[str, Any]:
    started = time.time()
    env = make_env(config)
    model = build_model(config, env)
    history: list[dict[str, Any]] = []
    self_play = SelfPlay(config)
    if meta is not None:
        saved = checkpoint.restore(model, env, config.checkpoint_dir, config.name, meta,
                                   snapshots=config.preset.snapshots)
        started -= saved.wall_seconds
        history = saved.history
        if self_play.active:
            self_play.restore(model, saved.self_play, str(config.checkpoint_dir / f"{config.name}.state"))
        print(f"resuming {config.checkpoint_dir / config.name} at {saved.num_timesteps} steps "
              f"({saved.wall_seconds:.1f} s so far)")
    remaining = config.timesteps - model.num_timesteps
    callback = ExactEvalCallback(config, started, history, self_play)
    callbacks = [SelfPlayCallback(self_play), callback] if self_play.active else [callback]
    bar = StepsBar() if config.progress_bar else None
    interrupted = False
    if remaining > 0:
        try:
            model.learn(
                remaining,
                callback=CallbackList([*callbacks, bar] if bar is not None else callbacks),
                tb_log_name=config.name,
                reset_num_timesteps=meta is None,
            )
        except KeyboardInterrupt:
            interrupted = True
        finally:
            if bar is not None:
                bar.close()  # before anything else is printed: the bar is not drawn again after the summary
    with SigintHeld(reraise=False, message="Ctrl-C: still evaluating and saving the run; it ends once the checkpoint is written"):
        if interrupted:
            print(f"\ninterrupted at {model.num_timesteps} steps; saving")
        wall = time.time() - started
        last = callback.history[-1] if callback.history else {}
        if last.get("timesteps") == model.num_timesteps and "table_own_regret_pp" in last:
            final = dict(last)  # the last evaluation was exact, of this very network
        else:
            if config.preset.n_players > 2:
                print(f"exact evaluation at the tables of {config.preset.n_players} players")
            final = evaluate(config, PPOAgent.from_model(model, config.preset.game), final=True)
        final.update(timesteps=int(model.num_timesteps), wall_seconds=wall)
        if remaining > 0 and last.get("timesteps") != model.num_timesteps:
            log_figures(model.logger, final, model.num_timesteps)  # the run's last point in TensorBoard
        base = save_run(model, config, final, callback.history, self_play)
    env.close()
    summary = {"final": final, "history": callback.history, "checkpoint": str(base), "interrupted": interrupted}
    print_results(config, summary)
    if interrupted:
        print(f"continue with: {continue_command(config)}")
    return summary


def continue_command(config: RunConfig) -> str:
    """The command that resumes this run with the same settings."""
    preset = config.preset
    parts = ["python", "-m", "train", preset.name, "--name", config.name, "--checkpoint-dir", str(config.checkpoint_dir)]
    if config.logdir != DEFAULT_LOGDIR:
        parts += ["--logdir", str(config.logdir)]
    if config.timesteps != preset.timesteps:
        parts += ["--timesteps", str(config.timesteps)]
    if config.n_envs != preset.n_envs:
        parts += ["--n-envs", str(config.n_envs)]
    if config.eval_every is not None:
        parts += ["--eval-every", str(config.eval_every)]
    if config.torch_threads != preset.threads:
        parts += ["--threads", str(config.torch_threads)]
    if preset.stop_when_optimal and not config.stop_when_optimal:
        parts.append("--no-early-stop")
    if not config.progress_bar:
        parts.append("--no-progress-bar")
    return " ".join(shlex.quote(p) for p in [*parts, "--resume"])


def print_results(config: RunConfig, summary: dict[str, Any]) -> None:
    final = summary["final"]
    steps = final["timesteps"]
    print()
    print(f"run {config.name}: {steps:,} steps in {final['wall_seconds']:.1f} s "
          f"({steps / max(final['wall_seconds'], 1e-9):,.0f} steps/s)")
    print(f"saved {summary['checkpoint']}.pt/.json/.state")
    print()
    if config.preset.n_players > 2:
        for line in format_table_figures(config, final):
            print(line)
        return
    solver = games.load(games.get(config.preset.game).exact)
    for line in solver.format_figures(config.name, final, eval_opponents(config.preset), **exact_options(config.preset)):
        print(line)


def format_table_figures(config: RunConfig, figures: dict[str, Any]) -> list[str]:
    """The results of a run of more than two players, from ``table_figures``."""
    preset = config.preset
    n = preset.n_players
    how = "exact" if figures.get("exact_table") else f"sampled, {TABLE_GAMES:,} games"
    options = "".join(f", {k} {v}" for k, v in exact_options(preset).items())
    lines = [f"P(not losing), {n} players{options} ({how}; fair share {(n - 1) / n:.4f})"]
    for bot in table_bots(preset):
        key = "_".join([bot] * (n - 1))
        if f"table_vs_{key}" not in figures:
            continue
        regret = figures.get(f"table_regret_vs_{key}_pp", figures.get("table_regret_pp"))  # or the measured table's
        lines.append(f"  with {' and '.join([bot] * (n - 1))}: {figures[f'table_vs_{key}']:.6f}"
                     + (f"   (regret {regret:.4f} pp)" if regret is not None else
                        f"   (+/- {figures['table_se_pp']:.2f} pp)"))
    if "table_own_regret_pp" in figures:
        lines.append(f"  at its own table (itself in every seat): regret {figures['table_own_regret_pp']:.4f} pp")
    if "table_exact_refused" in figures:
        lines.append(f"  no exact figure: {figures['table_exact_refused']}")
    return lines
