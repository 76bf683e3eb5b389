"""A training run's checkpoint files: names, the lock, saving, and what ``--resume`` reads.

A run named NAME keeps, in its checkpoint folder:

* ``NAME.pt``: the policy weights (what ``play`` reads, see ``agents.ppo_agent``);
* ``NAME.state``: what ``--resume`` needs besides the weights: the optimizer's
  state, the step and update counters, the wall-clock seconds so far, and the
  random states (torch, numpy, Python and the batched env's generator).  It is a
  ``torch.save`` of tensors and plain Python values only, read back with
  ``torch.load(weights_only=True)``: it cannot carry code;
* ``NAME.json``: the metadata, with the SHA-256 of the two files above
  (``weights_sha256``, ``state_sha256``) and the step they were saved at;
* ``NAME.lock``: held (``fcntl.flock``) while the run trains, so two runs of one
  name refuse to overwrite each other; it holds the process id of the run and is
  removed when the run ends (Ctrl-C and SIGTERM included).  The system drops the
  lock of a process that dies (``kill -9``, a crash) but leaves its file: the next
  run of the name takes it over and says so.

``--resume`` rebuilds the model from the preset and loads into it only the
weights and this state, after checking each (formats, shapes, finite values,
counters within bounds, preset/game/network equal to the preset's).  It never
reads ``NAME.zip`` (SB3's own format, written by earlier versions: loading one
unpickles whatever it holds).

Saving has one commit point, the rename of the new ``NAME.json``.  Every file
is first written to a temporary name in the same folder (``fsync``); the new
weights and state are renamed to ``.NAME.pending.pt`` / ``.NAME.pending.state``;
then the metadata is renamed into place (the commit); then the pending files
replace ``NAME.pt`` and ``NAME.state``.  A crash before the commit leaves the
previous checkpoint whole (its files are untouched); a crash after it leaves
the new one whole: the readers take a pending file whose SHA-256 is the one the
metadata names (``agents.ppo_agent.read_committed``), and the next run of the
name finishes the renames (:func:`clean_temporaries`).  Files of different
saves never pass the SHA-256 checks together.
"""

from __future__ import annotations

import fcntl
import json
import math
import os
import random
import re
import stat
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch

from agents.ppo_agent import (
    FORMAT,
    FORMAT_VERSION,
    CheckpointError,
    _fsync_dir,
    json_bytes,
    load_metadata,
    load_tensors,
    pending_path,
    policy_state,
    read_committed,
    read_regular_file,
    read_weights,
    sha256,
    tensor_bytes,
    weights_limit,
    write_temporary,
)
from core.preset import Preset

STATE_FORMAT = "dice-arena-train-state"
STATE_VERSION = 1
MAX_TIMESTEPS = 10**12  # steps, updates and episodes a saved run may count
MAX_THREADS = 256  # torch threads a run may ask for
MAX_WALL_SECONDS = 10**9
MAX_HISTORY = 100_000  # evaluations in a run's history
MAX_PENDING_BYTES = 1 << 30  # a pending weights or state file larger than this is not ours
NAME_PATTERN = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9._-]{0,99}")
PAUSE_ENV = "DICE_ARENA_TEST_SAVE_PAUSE"
OPTIMIZER_STATE_KEYS = ("step", "exp_avg", "exp_avg_sq", "max_exp_avg_sq")  # Adam's, per parameter


class RunError(Exception):
    """A run that cannot start or resume; its message is one line for the user (exit code 2)."""


def check_name(name: Any) -> str:
    """``name`` if it is a plain file stem: letters, digits, ``-``, ``_`` and ``.``,
    not starting with ``.``, at most 100 characters."""
    if not isinstance(name, str) or not NAME_PATTERN.fullmatch(name):
        raise RunError(
            f"--name {name!r} is not a plain run name: use 1 to 100 letters, digits, '-', '_' or '.', "
            "not starting with '.' (it names files in --checkpoint-dir and --logdir)"
        )
    return name


def run_files(folder: Path, name: str) -> dict[str, Path]:
    folder = Path(folder)
    return {
        kind: folder / f"{name}.{ext}"
        for kind, ext in (("weights", "pt"), ("meta", "json"), ("state", "state"), ("lock", "lock"), ("legacy", "zip"))
    }


def existing_files(folder: Path, name: str) -> list[Path]:
    """The files of a run called ``name`` already in ``folder`` (links included)."""
    files = run_files(folder, name)
    return [files[k] for k in ("weights", "meta", "state", "legacy") if os.path.lexists(files[k])]


def clean_temporaries(folder: Path, name: str) -> None:
    """Finish or undo a killed save of run ``name``: pending files that the committed
    metadata names are renamed into place, other pending files and the temporary
    files (``.NAME.tmp-HEX.EXT``) are removed.  Called with the run's lock held."""
    files = run_files(folder, name)
    try:
        meta = load_metadata(files["weights"]) if os.path.lexists(files["meta"]) else {}
    except CheckpointError:
        meta = {}  # a broken metadata file is reported by whoever reads the run
    renamed = False
    for kind, key in (("weights", "weights_sha256"), ("state", "state_sha256")):
        pending = pending_path(files[kind])
        if not os.path.lexists(pending):
            continue
        try:
            committed = sha256(read_regular_file(pending, MAX_PENDING_BYTES, "pending file")) == meta.get(key)
        except CheckpointError:
            committed = False
        if committed:
            os.replace(pending, files[kind])
        else:
            pending.unlink()
        renamed = True
    if renamed:
        _fsync_dir(Path(folder))
    pattern = re.compile(re.escape(f".{name}.tmp-") + r"[0-9a-f]{16}\.(pt|state|json)")
    try:
        entries = list(os.scandir(folder))
    except FileNotFoundError:
        return
    for entry in entries:
        if pattern.fullmatch(entry.name) and entry.is_file(follow_symlinks=False):
            try:
                os.unlink(entry.path)
            except FileNotFoundError:
                pass


class RunLock:
    """An exclusive ``fcntl.flock`` on ``NAME.lock`` while a run trains (not waiting:
    a run already holding it is reported).  The file is removed on release."""

    def __init__(self, folder: Path, name: str):
        self.path = run_files(folder, name)["lock"]
        self.name = name
        self.fd: int | None = None

    def acquire(self) -> RunLock:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        flags = os.O_RDWR | os.O_CREAT | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
        while True:
            existed = os.path.lexists(self.path)
            try:
                fd = os.open(self.path, flags, 0o666)
            except OSError as e:
                raise RunError(f"cannot lock run {self.name!r}: {self.path}: {e.strerror}") from None
            if not stat.S_ISREG(os.fstat(fd).st_mode):  # a FIFO or a device at that name: never ours
                os.close(fd)
                raise RunError(
                    f"cannot lock run {self.name!r}: {self.path} is not a regular file; "
                    "remove it or pick another --name"
                )
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                raise RunError(
                    f"run {self.name!r} is already training ({self.path} is locked by another process); "
                    "wait for it to end or pick another --name"
                ) from None
            try:  # the file we locked may have been removed by the run that released it: lock the new one
                on_disk = os.stat(self.path, follow_symlinks=False)
            except FileNotFoundError:
                on_disk = None
            mine = os.fstat(fd)
            if on_disk is not None and (on_disk.st_ino, on_disk.st_dev) == (mine.st_ino, mine.st_dev):
                break
            os.close(fd)
        if existed:
            self._take_over(fd)
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        self.fd = fd
        return self

    def _take_over(self, fd: int) -> None:
        """Say that the lock file was left by a process that no longer holds it (nobody
        did, or we could not have locked it).  A file without a process id is one a
        starting run has just made, before writing it: nothing to say."""
        try:
            text = os.pread(fd, 32, 0).decode("ascii").strip()
        except (OSError, UnicodeDecodeError):
            return
        if not text.isdigit() or not 0 < int(text) < 2**31:
            return
        pid = int(text)
        try:
            os.kill(pid, 0)
            why = f"process {pid} no longer holds it"  # alive, so the number was given to another process
        except ProcessLookupError:
            why = f"process {pid} is gone"
        except OSError:
            why = f"process {pid} no longer holds it"
        print(f"taking over the stale lock of run {self.name} ({why})", file=sys.stderr, flush=True)

    def release(self) -> None:
        if self.fd is not None:
            try:
                self.path.unlink()
            except FileNotFoundError:
                pass
            os.close(self.fd)
            self.fd = None

    def __enter__(self) -> RunLock:
        return self.acquire()

    def __exit__(self, *exc) -> None:
        self.release()


# --- saving -------------------------------------------------------------------------------

_saves = 0


def _pause_if_asked(stage: str) -> None:
    """Test hook: with ``DICE_ARENA_TEST_SAVE_PAUSE=N`` in the environment, the Nth save
    of this process stops after writing the weights' temporary file (stage
    ``written``; ``N@committed``: right after the metadata is committed), says so on
    stderr and waits to be killed (``tests/test_checkpoints.py`` kills a run there)."""
    global _saves
    if stage == "written":
        _saves += 1
    asked = os.environ.get(PAUSE_ENV, "")
    if asked in (str(_saves), f"{_saves}@{stage}") and (stage == "written") == ("@" not in asked):
        print(f"{PAUSE_ENV}: save {_saves} paused", file=sys.stderr, flush=True)
        while True:
            time.sleep(60)


def env_generator(env) -> np.random.Generator | None:
    """The numpy generator of a batched env (``BatchedVecEnv.rng``) under its wrappers, if any."""
    while env is not None:
        rng = getattr(env, "rng", None) if "rng" in vars(env) else None
        if isinstance(rng, np.random.Generator):
            return rng
        env = vars(env).get("venv")
    return None


def training_state(model, *, game: str, preset: str, seed: int, wall_seconds: float) -> dict[str, Any]:
    """Everything ``--resume`` restores besides the weights: tensors and plain values only."""
    np_state = np.random.get_state()
    py_state = random.getstate()
    rng = env_generator(model.get_env())
    return {
        "format": STATE_FORMAT,
        "format_version": STATE_VERSION,
        "game": game,
        "preset": preset,
        "seed": int(seed),
        "num_timesteps": int(model.num_timesteps),
        "n_updates": int(model._n_updates),
        "episode_num": int(model._episode_num),
        "wall_seconds": float(wall_seconds),
        "optimizer": model.policy.optimizer.state_dict(),
        "rng": {
            "torch": torch.get_rng_state(),
            "numpy": {
                "keys": torch.from_numpy(np_state[1].astype(np.int64)),
                "pos": int(np_state[2]),
                "has_gauss": int(np_state[3]),
                "cached_gaussian": float(np_state[4]),
            },
            "python": {"version": int(py_state[0]), "state": [int(v) for v in py_state[1]], "gauss_next": py_state[2]},
            "env": dict(rng.bit_generator.state) if rng is not None else None,
        },
    }


def save(folder: Path, name: str, policy, state: dict[str, Any], metadata: dict[str, Any]) -> Path:
    """Write NAME.pt, NAME.state and NAME.json (last), each through a temporary file."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    files = run_files(folder, name)
    weights = tensor_bytes(policy_state(policy))
    state_data = tensor_bytes(state)
    meta = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        **metadata,
        "weights_sha256": sha256(weights),
        "state_sha256": sha256(state_data),
    }
    written: list[Path] = []
    try:
        written.append(write_temporary(files["weights"], weights))
        _pause_if_asked("written")
        written.append(write_temporary(files["state"], state_data))
        written.append(write_temporary(files["meta"], json_bytes(meta)))
    except BaseException:
        for temp in written:
            temp.unlink(missing_ok=True)
        raise
    temp_weights, temp_state, temp_meta = written
    # Renames replace a link at the final name, never write through it.
    os.replace(temp_weights, pending_path(files["weights"]))
    os.replace(temp_state, pending_path(files["state"]))
    _fsync_dir(folder)
    os.replace(temp_meta, files["meta"])  # the commit point
    _fsync_dir(folder)
    _pause_if_asked("committed")
    os.replace(pending_path(files["weights"]), files["weights"])
    os.replace(pending_path(files["state"]), files["state"])
    _fsync_dir(folder)
    return folder / name


# --- resuming -----------------------------------------------------------------------------


@dataclass
class SavedRun:
    meta: dict[str, Any]
    num_timesteps: int
    wall_seconds: float
    history: list[dict[str, Any]] = field(default_factory=list)
    self_play: Any = None  # a self-play run's pool (train.selfplay.SelfPlay.state)


def _count(value: Any, where: str, high: int = MAX_TIMESTEPS) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= high:
        raise RunError(f"{where} is {value!r}; it must be a whole number from 0 to {high:,}")
    return value


def _seconds(value: Any, where: str) -> float:
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or not math.isfinite(value)
        or not 0 <= value <= MAX_WALL_SECONDS
    ):
        raise RunError(f"{where} is {value!r}; it must be a number of seconds from 0 to {MAX_WALL_SECONDS:,}")
    return float(value)


def _history(value: Any, meta_path: Path, steps: int) -> list[dict[str, Any]]:
    if value is None:
        return []
    if not isinstance(value, list) or len(value) > MAX_HISTORY:
        raise RunError(f"{meta_path}: eval_history is not a list of at most {MAX_HISTORY:,} evaluations")
    history = []
    for i, entry in enumerate(value):
        where = f"{meta_path}: eval_history[{i}]"
        if not isinstance(entry, dict) or not all(
            isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in entry.values()
        ):
            raise RunError(f"{where} is not an object of finite numbers")
        _count(entry.get("timesteps"), f"{where}.timesteps", steps)
        _seconds(entry.get("wall_seconds"), f"{where}.wall_seconds")
        history.append(dict(entry))
    return history


_UNSET = object()


def _first_change(saved: Any, now: Any, name: str) -> tuple[str, Any, Any] | None:
    """The first setting (``a.b`` for nested ones) whose value differs between ``saved`` and
    ``now``, with both values, or None."""
    if isinstance(saved, dict) and isinstance(now, dict):
        for key in [*now, *(k for k in saved if k not in now)]:
            found = _first_change(saved.get(key, _UNSET), now.get(key, _UNSET), f"{name}.{key}" if name else key)
            if found is not None:
                return found
        return None
    return None if saved == now else (name, saved, now)


def _shown(value: Any) -> str:
    return "unset" if value is _UNSET else repr(value) if len(repr(value)) <= 60 else repr(value)[:57] + "..."


def read_saved_meta(folder: Path, name: str, preset) -> dict[str, Any]:
    """The metadata of the run to resume, checked against ``preset`` (before anything is built)."""
    files = run_files(folder, name)
    if not os.path.lexists(files["meta"]) and not os.path.lexists(files["state"]):
        if os.path.lexists(files["legacy"]):
            raise RunError(
                f"--resume: {files['legacy']} is SB3's format from an earlier version, which --resume no longer "
                "reads (loading it can run code): start a new run, or --overwrite this one"
            )
        raise RunError(f"--resume: no saved run at {folder / name}.json (train once without --resume first)")
    if not os.path.lexists(files["state"]):
        raise RunError(
            f"--resume: {files['state']} is missing: {files['meta']} is a playable checkpoint "
            "without the training state --resume needs"
        )
    try:
        meta = load_metadata(files["weights"])
    except CheckpointError as e:
        raise RunError(f"--resume: {e}") from None
    where = files["meta"]
    for key, want in (("game", preset.game), ("preset", preset.name)):
        if meta.get(key) != want:
            raise RunError(f"--resume: {where}: {key} is {meta.get(key)!r}, but preset {preset.name} is {key} {want!r}")
    if meta.get("policy") != preset.policy:
        raise RunError(
            f"--resume: {where}: policy differs from the network of preset {preset.name}: {meta.get('policy')!r}"
        )
    if meta.get("env", {}) != preset.env:
        raise RunError(f"--resume: {where}: env is {meta.get('env')!r}, but preset {preset.name} plays {preset.env!r}")
    saved = meta.get("training")  # runs saved before it was recorded have none
    if saved is not None:
        if not isinstance(saved, dict):
            raise RunError(f"--resume: {where}: training is {_shown(saved)}, not an object of settings")
        now = json.loads(json_bytes(preset.learning()))  # as saved: tuples become lists
        # a setting added to Preset.learning() since the run was saved: its default then
        known = {**json.loads(json_bytes(Preset.defaults())), **saved}
        change = _first_change({key: known[key] for key in now}, now, "")
        if change is not None:
            name, was, has = change
            raise RunError(
                f"--resume: {where}: {name} was {_shown(was)}, preset {preset.name} now has {_shown(has)}; a run "
                "continues only with the settings it was trained with: put that value back in the preset, or start "
                "afresh with --overwrite or another --name"
            )
    seed = meta.get("seed")
    if isinstance(seed, bool) or not isinstance(seed, int) or abs(seed) >= 2**32:
        raise RunError(f"--resume: {where}: seed is {seed!r}, not a 32-bit whole number")
    _count(meta.get("timesteps"), f"--resume: {where}: timesteps")
    for key in ("weights_sha256", "state_sha256"):
        if not isinstance(meta.get(key), str):
            raise RunError(f"--resume: {where}: {key} is missing; this checkpoint was not saved by a training run")
    return meta


def _restore_optimizer(optimizer: torch.optim.Optimizer, saved: Any, where: str) -> None:
    current = optimizer.state_dict()
    if (
        not isinstance(saved, dict)
        or not isinstance(saved.get("state"), dict)
        or not isinstance(saved.get("param_groups"), list)
    ):
        raise RunError(f"{where}: optimizer is not an optimizer state (state, param_groups)")
    if [g.get("params") if isinstance(g, dict) else None for g in saved["param_groups"]] != [
        g["params"] for g in current["param_groups"]
    ]:
        raise RunError(f"{where}: optimizer.param_groups does not match the network of the preset")
    params = [p for group in optimizer.param_groups for p in group["params"]]
    state = {}
    for index, entry in saved["state"].items():
        if (
            isinstance(index, bool)
            or not isinstance(index, int)
            or not 0 <= index < len(params)
            or not isinstance(entry, dict)
        ):
            raise RunError(f"{where}: optimizer.state has an entry {index!r} for no parameter of the network")
        for key, value in entry.items():
            field_name = f"optimizer.state[{index}].{key}"
            if key not in OPTIMIZER_STATE_KEYS:
                raise RunError(f"{where}: {field_name} is not an Adam state (known: {', '.join(OPTIMIZER_STATE_KEYS)})")
            if (
                not isinstance(value, torch.Tensor)
                or not value.is_floating_point()
                or not bool(torch.isfinite(value).all())
            ):
                raise RunError(f"{where}: {field_name} is not a tensor of finite numbers")
            want = () if key == "step" else tuple(params[index].shape)
            if tuple(value.shape) != want:
                raise RunError(f"{where}: {field_name} has shape {tuple(value.shape)}, the network needs {want}")
            if key == "step" and not 0 <= float(value) <= MAX_TIMESTEPS:
                raise RunError(f"{where}: {field_name} is {float(value)}, out of range")
        state[index] = entry
    optimizer.load_state_dict({"state": state, "param_groups": current["param_groups"]})


def _restore_random_states(rng: Any, env, where: str) -> None:
    if not isinstance(rng, dict):
        raise RunError(f"{where}: rng is not an object of random states")
    try:
        field_name = "rng.torch"
        t = rng["torch"]
        if not isinstance(t, torch.Tensor) or t.dtype != torch.uint8 or t.shape != torch.get_rng_state().shape:
            raise ValueError("not torch's generator state")
        field_name = "rng.numpy"
        n = rng["numpy"]
        keys = n["keys"]
        if not isinstance(keys, torch.Tensor) or keys.shape != (624,) or bool(((keys < 0) | (keys >= 2**32)).any()):
            raise ValueError("keys are not 624 32-bit numbers")
        numpy_state = (
            "MT19937",
            keys.numpy().astype(np.uint32),
            _count(n["pos"], "pos", 624),
            _count(n["has_gauss"], "has_gauss", 1),
            float(n["cached_gaussian"]),
        )
        field_name = "rng.python"
        p = rng["python"]
        python_state = (int(p["version"]), tuple(int(v) for v in p["state"]), p["gauss_next"])
        if len(python_state[1]) != 625 or not (python_state[2] is None or isinstance(python_state[2], float)):
            raise ValueError("not Python's generator state")
        field_name = "rng.env"
        generator = env_generator(env)
        env_state = rng["env"]
        if generator is not None and env_state is not None:
            if (
                not isinstance(env_state, dict)
                or env_state.get("bit_generator") != generator.bit_generator.state["bit_generator"]
            ):
                raise ValueError("not the env generator's state")
        # All read and checked: set them.
        field_name = "rng.torch"
        torch.set_rng_state(t)
        field_name = "rng.numpy"
        np.random.set_state(numpy_state)
        field_name = "rng.python"
        random.setstate(python_state)
        if generator is not None and env_state is not None:
            field_name = "rng.env"
            generator.bit_generator.state = env_state
            inner = env
            while inner is not None and "venv" in vars(inner):
                inner = inner.venv
            inner._reset_seeds()  # the next reset() deals from the restored generator, not from --seed
    except RunError as e:
        raise RunError(f"{where}: {field_name}: {e}") from None
    except (KeyError, TypeError, ValueError, RuntimeError, OverflowError) as e:
        raise RunError(
            f"{where}: {field_name} is not a valid random state ({type(e).__name__}: {str(e)[:100]})"
        ) from None


def restore(model, env, folder: Path, name: str, meta: dict[str, Any], snapshots: int = 0) -> SavedRun:
    """Load NAME.pt's weights and NAME.state into ``model`` (freshly built from the preset).
    ``snapshots``: the past versions of the learner a self-play state holds (their weights
    are returned unchecked in ``SavedRun.self_play``, for ``train.selfplay.SelfPlay``)."""
    files = run_files(folder, name)
    where = str(files["state"])
    try:
        weights = read_weights(files["weights"], model.policy, meta["weights_sha256"], files["meta"])
        limit = (3 + snapshots) * weights_limit(model.policy)
        data = read_committed(files["state"], limit, "training state file", meta["state_sha256"])
    except CheckpointError as e:
        raise RunError(f"--resume: {e}") from None
    if sha256(data) != meta["state_sha256"]:
        raise RunError(
            f"--resume: {where} is not the training state {files['meta']} describes "
            "(state_sha256 differs): the checkpoint was not saved completely"
        )
    try:
        state = load_tensors(data, where)
    except CheckpointError as e:
        raise RunError(f"--resume: {e}") from None
    if (
        not isinstance(state, dict)
        or state.get("format") != STATE_FORMAT
        or state.get("format_version") != STATE_VERSION
    ):
        raise RunError(f"--resume: {where} is not a dice-arena training state (format {STATE_FORMAT} {STATE_VERSION})")
    for key in ("game", "preset", "seed"):
        if state.get(key) != meta.get(key):
            raise RunError(
                f"--resume: {where}: {key} is {state.get(key)!r}, but {files['meta']} says {meta.get(key)!r}"
            )
    steps = _count(state.get("num_timesteps"), f"--resume: {where}: num_timesteps")
    if steps != meta["timesteps"]:
        raise RunError(
            f"--resume: {where}: num_timesteps is {steps}, but {files['meta']} is the checkpoint of step "
            f"{meta['timesteps']}"
        )
    n_updates = _count(state.get("n_updates"), f"--resume: {where}: n_updates")
    episodes = _count(state.get("episode_num"), f"--resume: {where}: episode_num")
    wall = _seconds(state.get("wall_seconds"), f"--resume: {where}: wall_seconds")
    history = _history(meta.get("eval_history"), files["meta"], steps)
    _restore_optimizer(model.policy.optimizer, state.get("optimizer"), f"--resume: {where}")
    _restore_random_states(state.get("rng"), env, f"--resume: {where}")
    model.policy.load_state_dict(weights)
    model.num_timesteps = steps
    model._n_updates = n_updates
    model._episode_num = episodes
    return SavedRun(
        meta=meta, num_timesteps=steps, wall_seconds=wall, history=history, self_play=state.get("self_play")
    )
