"""One training run, top to bottom: build the batched env, fit MaskablePPO,
evaluate exactly as it goes, save checkpoints, print the results.

A run holds a lock on its name while it trains and refuses to start over an
existing run unless told to ``resume`` or ``overwrite`` it.  ``--resume``
rebuilds the model from the preset and loads only tensors and plain values
into it (``train.checkpoint``): the weights, the optimizer state, the counters,
the random states, the evaluation history and the wall-clock seconds so far, so
a resumed run reads as one run.

Ctrl-C (SIGINT), and SIGTERM under ``python -m train`` (whose entry point turns
it into the same ``KeyboardInterrupt``, ``core.cli``), stop the training where it
is: the run is saved, evaluated and saved again with its figures (once, if its last
evaluation was exact at that step), as at its end, and its summary says it was
``interrupted``.  A signal during a save, or during that last
evaluation and save, waits for it (:class:`core.cli.SignalsHeld`); the first save
keeps the steps of a run killed outright during the evaluation.
"""

from __future__ import annotations
import inspect
import platform
import shlex
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import torch
from stable_baselines3.common.callbacks import BaseCallback, CallbackList, ProgressBarCallback

import agents
import games
from agents.ppo_agent import PPOAgent, json_bytes, policy_class_from, policy_kwargs_from
from core.cli import SignalsHeld, signal_label, stop_signal, stop_signals_done
from train import checkpoint
from train.checkpoint import RunError
from train.fast import BatchedMaskablePPO, EpisodeMonitor, check_hidden_dtype
from train.presets import (
    check_schedules,
    critic_learning_rate_schedule,
    ent_coef_schedule,
    epochs_schedule,
    gae_lambda_schedule,
    learning_rate_schedule,
    mixed_precision_schedule,
    q_advantage_schedule,
)
from train.config import DEFAULT_LOGDIR, RunConfig
from train.evaluation import (
    HISTORY_FIGURES,
    LOGGED_FIGURES,
    eval_opponents,
    evaluate,
    exact_options,
    format_table_figures,
    log_figures,
    log_figures_at,
    plays_live,
)
from train.aside import ExactAside
from train.selfplay import SelfPlay, SelfPlayCallback


class ExactEvalCallback(BaseCallback):
    """Every ``every`` steps: exact evaluation, TensorBoard ``eval/*`` tags, a checkpoint.

    Two-player runs that stop once optimal (``stop_when_optimal``), of a game whose
    solver offers ``count_suboptimal`` (a cheap table lookup), also count after every
    PPO update the decision states where the policy's choice is worse than the best
    (TensorBoard ``eval/suboptimal_choices``); at 0 the full evaluation confirms it
    and the run stops, without waiting for the next scheduled evaluation.
    """

    def __init__(
        self,
        config: RunConfig,
        started: float,
        history: list[dict[str, Any]] | None = None,
        self_play: SelfPlay | None = None,
    ):
        super().__init__()
        self.config = config
        self.self_play = self_play  # its pool is saved with each checkpoint
        self.every = config.eval_every or config.preset.eval_every
        self.exact_every = config.exact_every or config.preset.exact_every  # tables of more than two players
        self.next_eval = 0
        self.started = started  # a resumed run's start is moved back by its earlier seconds
        self.history: list[dict[str, Any]] = list(history or [])  # a resumed run's earlier evaluations
        solver = games.load(games.get(config.preset.game).exact)
        self.count_suboptimal = getattr(solver, "count_suboptimal", None)  # games with a cheap per-update check
        self.check_each_update = (
            self.count_suboptimal is not None and config.stop_when_optimal and config.preset.n_players == 2
        )  # the solver's check is heads-up
        self.rollout_started = False
        # the exact evaluations made aside (train.aside), and the steps sent there
        self.aside: ExactAside | None = None
        self.sent_aside: list[int] = []
        self.held_steps: list[int] = []  # points whose table figures wait to be logged (_log_held)

    def _on_training_start(self) -> None:
        # evaluate the starting policy too; a resumed run keeps its schedule
        last = self.history[-1]["timesteps"] if self.history else None
        self.next_eval = self.num_timesteps if last is None else max(self.num_timesteps, last + self.every)
        if self.config.exact_aside_on and self.config.preset.n_players > 2 and self.exact_every is not None:
            self.aside = ExactAside(self.config)

    def finish(self, cancel: bool = False, stopping: Callable[[], bool] = lambda: False) -> None:
        """After training: the exact evaluations made aside merged in (waiting for them, until
        ``stopping()``), or with ``cancel`` (an interrupted run) dropped: those points stay
        sampled, and their sampled figures reach TensorBoard."""
        if self.aside is None:
            return
        try:
            if not cancel:
                self._merge_aside(wait=True, stopping=stopping)
        finally:
            self.aside.close(cancel=True)  # nothing pending is waited for (any left: stopping)
            self.aside = None
            self._log_held()  # all of them: none is pending now

    def _merge_aside(self, wait: bool = False, stopping: Callable[[], bool] = lambda: False) -> None:
        """Exact figures made aside, in place of their point's sampled ones (history and
        TensorBoard at its step); where there are none, the sampled ones stay."""
        for step, figures in self.aside.done(wait, stopping):
            point = next(h for h in self.history if h["timesteps"] == step)
            if isinstance(figures, str):
                print(f"\nthe exact evaluation at {step:,} steps failed aside ({figures}); it stays sampled")
            elif "table_own_regret_pp" in figures:
                for key in [k for k in point if k.startswith("table_")]:
                    del point[key]
                point.update(figures)
            else:
                point.update(figures)  # why it has none (table_exact_refused), as a run here records it
        self._log_held()

    def _log_held(self) -> None:
        """The table figures held back (``held_steps``) to TensorBoard, in step order, up to
        the first point still pending aside.  TensorBoard keeps a
        tag's values in step order: a value at an earlier step drops the later ones, so no
        table figure is logged after a later step's."""
        while self.held_steps and self.held_steps[0] not in self._pending_aside():
            step = self.held_steps.pop(0)
            point = next(h for h in self.history if h["timesteps"] == step)
            log_figures_at(self.logger, {k: v for k, v in point.items() if k.startswith("table_")}, step)

    def _pending_aside(self) -> set[int]:
        """The steps whose exact figures have not come back from aside."""
        return {step for step, _, _ in self.aside.pending} if self.aside is not None else set()

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
        done = [h["timesteps"] for h in self.history if "table_own_regret_pp" in h] + self.sent_aside
        return self.num_timesteps >= max(done, default=0) + self.exact_every

    def _suboptimal_choices(self) -> int:
        count = self.count_suboptimal(PPOAgent.from_model(self.model, self.config.preset.game))
        self.logger.record("eval/suboptimal_choices", count)
        return count

    def _on_step(self) -> bool:
        if self.aside is not None and self.aside.pending and self.aside.pending[0][1].done():
            self._merge_aside()
        first_step, self.rollout_started = self.rollout_started, False
        due = self.num_timesteps >= self.next_eval
        if not due and first_step and self.check_each_update:
            due = self._suboptimal_choices() == 0
        if not due:
            return True
        self.next_eval = self.num_timesteps + self.every
        exact_now = self._exact_due()
        if exact_now and self.aside is not None:  # sampled here, exact aside
            self.aside.submit(self.model.policy, self.num_timesteps)
            self.sent_aside.append(self.num_timesteps)
            exact_now = False
        figures = evaluate(self.config, PPOAgent.from_model(self.model, self.config.preset.game), exact_now=exact_now)
        figures.update(timesteps=self.num_timesteps, wall_seconds=time.time() - self.started)
        self.history.append(figures)
        if self.held_steps or self.num_timesteps in self._pending_aside():
            # its table's figures wait for an exact point's made aside (_log_held)
            self.held_steps.append(self.num_timesteps)
            log_figures(
                self.logger, {k: v for k, v in figures.items() if not k.startswith("table_")}, self.num_timesteps
            )
        else:
            log_figures(self.logger, figures, self.num_timesteps)
        with SignalsHeld(reraise=True):  # a Ctrl-C (or SIGTERM) here stops the run once the checkpoint is written
            save_run(self.model, self.config, figures, self.history, self.self_play)
        if self.config.on_eval is not None:
            self.config.on_eval(figures)
        if self.config.stop_when_optimal and figures["optimal"]:
            print(
                f"\nexactly optimal in both seats at {self.num_timesteps} steps, {figures['wall_seconds']:.1f} s: "
                "stopping"
            )
            return False
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


def save_run(
    model, config: RunConfig, figures: dict[str, Any] | None = None, history=(), self_play: SelfPlay | None = None
) -> Path:
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
        # the steps asked (the schedules run over them) and the settings that shape learning:
        # enough, with the above, to train this run again from its preset
        "training": {"timesteps": config.timesteps, **config.preset.learning()},
        "versions": versions(),
    }
    wall = float((figures or {}).get("wall_seconds", 0.0))
    if figures is not None:
        meta["exact"] = {
            k: v for k, v in figures.items() if k.startswith(LOGGED_FIGURES) or k in ("optimal", "exact_table")
        }
        meta["wall_seconds"] = round(wall, 1)
    if history:
        meta["eval_history"] = [
            {
                k: round(v, 6)
                for k, v in h.items()
                if isinstance(v, (int, float)) and (k in ("timesteps", "wall_seconds") or k.startswith(HISTORY_FIGURES))
            }
            for h in history
        ]
    state = checkpoint.training_state(
        model, game=config.preset.game, preset=config.preset.name, seed=config.seed, wall_seconds=wall
    )
    if self_play is not None and self_play.active:
        state["self_play"] = self_play.state()
    return checkpoint.save(config.checkpoint_dir, config.name, model.policy, state, meta)


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


def train_env_class(preset):
    """The class of the preset's training env: the game's live env, its batched env, or
    None for Gymnasium envs in an SB3 DummyVecEnv (see :func:`make_env`); ``ValueError``
    (one line) for a ``train_env`` setting that env does not take."""
    spec = games.get(preset.game)
    if plays_live(preset):
        env_class = games.load(spec.live_env)
    elif preset.n_players in spec.batched_players:
        env_class = games.load(spec.batched_env)
    elif preset.train_env:
        raise ValueError(
            f"preset {preset.name}: train_env ({', '.join(preset.train_env)}) is for a game's batched or live "
            f"env, and {preset.game} at {preset.n_players} players trains on its Gymnasium env"
        )
    else:
        return None
    taken = inspect.signature(env_class).parameters
    unknown = [name for name in preset.train_env if name not in taken]
    if unknown:
        raise ValueError(
            f"preset {preset.name}: train_env names {', '.join(map(repr, unknown))}, "
            f"which the training env {env_class.__name__} does not take"
        )
    return env_class


def make_env(config: RunConfig):
    """The training env: the game's batched numpy env (``GameSpec.batched_env``) of
    ``n_envs`` games against the exact table of the preset's opponent, or its live env
    (``GameSpec.live_env``) against the opponent as a batch policy; player counts
    neither plays run ``n_envs`` Gymnasium envs in an SB3 DummyVecEnv."""
    preset = config.preset
    spec = games.get(preset.game)
    options = dict(preset.env)
    n_players = options.pop("n_players", 2)
    env_class = train_env_class(preset)
    if plays_live(preset):
        opponent = agents.live_opponent(preset.game, preset.opponent, n_players)
        return EpisodeMonitor(
            env_class(config.n_envs, opponent, n_players=n_players, seed=config.seed, **options, **preset.train_env)
        )
    if env_class is not None:
        opponent = agents.bot_table(preset.game, preset.opponent, **options)
        extra = {"n_players": n_players} if n_players != 2 else {}
        venv = env_class(config.n_envs, opponent, seed=config.seed, **options, **extra, **preset.train_env)
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
    schedule = learning_rate_schedule(config.preset)
    if schedule is not None:  # else the constant rate of ``ppo``
        ppo_kwargs["learning_rate"] = schedule
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
    critic_rate = critic_learning_rate_schedule(config.preset)
    if critic_rate is not None:
        model.split_critic_rate(critic_rate)
    model.gae_lambda_schedule = gae_lambda_schedule(config.preset)
    model.ent_coef_schedule = ent_coef_schedule(config.preset, config.timesteps)
    model.q_advantage_schedule = q_advantage_schedule(config.preset, config.timesteps)
    model.epochs_schedule = epochs_schedule(config.preset)
    precision = mixed_precision_schedule(config.preset)
    if precision is not None:
        check_hidden_dtype(model.policy, f"preset {config.preset.name}: mixed_precision")

        def hidden_dtype(left: float):
            name = precision(left)
            return None if name is None else getattr(torch, name)

        model.hidden_dtype_schedule = hidden_dtype
    return model


def prepare(config: RunConfig) -> tuple[RunConfig, dict[str, Any] | None]:
    """Check the run can start (name free, or the saved run to resume valid); the
    config with its seed settled and the saved metadata when resuming.  Call it
    holding the run's lock."""
    spec = games.get(config.preset.game)
    try:
        json_bytes(config.preset.learning())  # what the run's metadata records, at every save
    except (TypeError, ValueError) as e:
        raise RunError(
            f"preset {config.preset.name}: a setting cannot be saved in a checkpoint's metadata: {e}"
        ) from None
    missing = [
        what
        for what, offered in (
            ("exact solver (GameSpec.exact)", spec.exact),
            ("batched env (GameSpec.batched_env)", spec.batched_env or spec.live_env),
        )
        if not offered
    ]
    if missing:
        raise RunError(
            f"{spec.name} offers no {' and no '.join(missing)}: python -m train needs both, "
            "to step many games at once and to measure its runs exactly"
        )
    try:  # every setting the run builds from, before anything is built: one line for a bad one
        check_schedules(config.preset, config.timesteps)
        policy_class = policy_class_from(config.preset.policy, f"preset {config.preset.name}")
        if mixed_precision_schedule(config.preset) is not None:
            check_hidden_dtype(policy_class, f"preset {config.preset.name}: mixed_precision")
        policy_kwargs_from(config.preset.policy, f"preset {config.preset.name}")
        train_env_class(config.preset)
    except ValueError as e:  # CheckpointError, the policy's, is one
        raise RunError(str(e)) from None
    checkpoint.clean_temporaries(config.checkpoint_dir, config.name)
    if not config.resume:
        existing = checkpoint.existing_files(config.checkpoint_dir, config.name)
        if existing and not config.overwrite:
            raise RunError(
                f"{existing[0]} already exists: a run named {config.name!r} was saved there; continue it "
                "with --resume, replace it with --overwrite, or pick another --name"
            )
        return replace(
            config,
            seed=0 if config.seed is None else config.seed,
            torch_threads=config.torch_threads or config.preset.threads,
        ), None
    meta = checkpoint.read_saved_meta(config.checkpoint_dir, config.name, config.preset)
    if config.seed is not None and config.seed != meta["seed"]:
        raise RunError(
            f"--resume: run {config.name!r} was trained with --seed {meta['seed']}, not {config.seed}; "
            f"leave --seed out to continue it"
        )
    threads = meta.get("threads", 1)  # runs saved before threads were recorded used one
    if isinstance(threads, bool) or not isinstance(threads, int) or not 1 <= threads <= checkpoint.MAX_THREADS:
        raise RunError(
            f"--resume: {config.checkpoint_dir / config.name}.json: threads is {threads!r}; "
            f"it must be a whole number from 1 to {checkpoint.MAX_THREADS}"
        )
    if config.torch_threads is not None and config.torch_threads != threads:
        raise RunError(
            f"--resume: run {config.name!r} was trained with --threads {threads}, not "
            f"{config.torch_threads} (a run repeats exactly only with the same count); "
            f"leave --threads out to continue it"
        )
    return replace(config, seed=meta["seed"], torch_threads=threads), meta


def train(config: RunConfig) -> dict[str, Any]:
    """Train, evaluate and save one run (see the module docstring); raises ``RunError``
    (one line) for a name, saved run or lock that does not allow it."""
    checkpoint.check_name(config.name)
    if config.resume and not config.checkpoint_dir.is_dir():
        raise RunError(
            f"--resume: no saved run at {config.checkpoint_dir / config.name}.json "
            f"(no folder {config.checkpoint_dir}; train once without --resume first)"
        )
    lock = checkpoint.RunLock(config.checkpoint_dir, config.name)
    with lock:
        config, meta = prepare(config)
        torch.set_num_threads(config.torch_threads)
        return _train(config, meta, lock.release)


def _train(config: RunConfig, meta: dict[str, Any] | None, release=lambda: None) -> dict[str, Any]:
    """The run, from its env to its saved checkpoint; ``release`` (the lock's) is called
    once it is saved, while signals still wait, and from then on a signal ends the
    program at once in one line (``core.cli.stop_signals_done``): nothing is left to save."""
    started = time.time()
    env = make_env(config)
    model = build_model(config, env)
    history: list[dict[str, Any]] = []
    self_play = SelfPlay(config)
    if meta is not None:
        saved = checkpoint.restore(
            model, env, config.checkpoint_dir, config.name, meta, snapshots=config.preset.snapshots
        )
        started -= saved.wall_seconds
        history = saved.history
        if self_play.active:
            self_play.restore(model, saved.self_play, str(config.checkpoint_dir / f"{config.name}.state"))
        print(
            f"resuming {config.checkpoint_dir / config.name} at {saved.num_timesteps} steps "
            f"({saved.wall_seconds:.1f} s so far)"
        )
    remaining = config.timesteps - model.num_timesteps
    callback = ExactEvalCallback(config, started, history, self_play)
    callbacks = [SelfPlayCallback(self_play), callback] if self_play.active else [callback]
    bar = StepsBar() if config.progress_bar else None
    interrupted = learned = False
    held = SignalsHeld(
        reraise=False, message="still evaluating and saving the run; it ends once the checkpoint is written"
    )

    def save_progress() -> None:
        """The run as it is, without final figures: saved before a wait of minutes."""
        save_run(model, config, {"wall_seconds": time.time() - started}, callback.history, self_play)

    with held:  # from here to the end a signal waits (it stops the run all the same)
        if remaining > 0:
            try:
                with held.released():  # while PPO learns, a signal stops it where it is
                    model.learn(
                        remaining,
                        callback=CallbackList([*callbacks, bar] if bar is not None else callbacks),
                        tb_log_name=config.name,
                        reset_num_timesteps=meta is None,
                    )
                learned = True
            except KeyboardInterrupt:
                interrupted = True
            finally:
                if bar is not None:
                    bar.close()  # before anything else is printed: the bar is not drawn again after the summary
                cancel = not learned or held.caught is not None
                try:
                    if not cancel and callback.aside is not None and callback.aside.pending:
                        # saved first: the exact points still being made aside can take minutes
                        save_progress()
                except BaseException:
                    cancel = True  # a save that failed: the points aside are not waited for
                    raise
                finally:
                    callback.finish(cancel=cancel, stopping=lambda: held.caught is not None)
        if interrupted:
            print(f"\ninterrupted at {model.num_timesteps} steps ({signal_label(stop_signal())}); saving", flush=True)
        wall = time.time() - started
        last = callback.history[-1] if callback.history else {}
        if last.get("timesteps") == model.num_timesteps and "table_own_regret_pp" in last:
            final = dict(last)  # the last evaluation was exact, of this very network
        else:
            # saved first: at a table of more players the final evaluation takes minutes, and
            # a run killed during it (a second signal waits for it, SIGKILL does not) keeps
            # every step; the save after it adds the final figures
            save_progress()
            if config.preset.n_players > 2:
                print(f"saved; exact evaluation at the tables of {config.preset.n_players} players", flush=True)
            final = evaluate(config, PPOAgent.from_model(model, config.preset.game), final=True)
        final.update(timesteps=int(model.num_timesteps), wall_seconds=wall)
        if remaining > 0 and last.get("timesteps") != model.num_timesteps:
            log_figures(model.logger, final, model.num_timesteps)  # the run's last point in TensorBoard
        base = save_run(model, config, final, callback.history, self_play)
        env.close()
        interrupted = interrupted or held.caught is not None
        summary = {"final": final, "history": callback.history, "checkpoint": str(base), "interrupted": interrupted}
        print_results(config, summary)
        if interrupted:
            print(f"continue with: {continue_command(config)}", flush=True)
        release()
        stop_signals_done(f"interrupted as it ended: run {config.name} is saved")
    summary["interrupted"] = interrupted or held.caught is not None
    return summary


def continue_command(config: RunConfig) -> str:
    """The command that resumes this run with the same settings."""
    preset = config.preset
    parts = [
        "python",
        "-m",
        "train",
        preset.name,
        "--name",
        config.name,
        "--checkpoint-dir",
        str(config.checkpoint_dir),
    ]
    if config.logdir != DEFAULT_LOGDIR:
        parts += ["--logdir", str(config.logdir)]
    if config.timesteps != preset.timesteps:
        parts += ["--timesteps", str(config.timesteps)]
    if config.n_envs != preset.n_envs:
        parts += ["--n-envs", str(config.n_envs)]
    if config.eval_every is not None:
        parts += ["--eval-every", str(config.eval_every)]
    if config.exact_every is not None:
        parts += ["--exact-every", str(config.exact_every)]
    if config.exact_aside is not None and config.exact_aside != preset.exact_aside:
        parts.append("--exact-aside" if config.exact_aside else "--no-exact-aside")
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
    print(
        f"run {config.name}: {steps:,} steps in {final['wall_seconds']:.1f} s "
        f"({steps / max(final['wall_seconds'], 1e-9):,.0f} steps/s)"
    )
    print(f"saved {summary['checkpoint']}.pt/.json/.state")
    print()
    if config.preset.n_players > 2:
        for line in format_table_figures(config, final):
            print(line)
        return
    solver = games.load(games.get(config.preset.game).exact)
    for line in solver.format_figures(
        config.name, final, eval_opponents(config.preset), **exact_options(config.preset)
    ):
        print(line)
