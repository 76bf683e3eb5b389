"""The exact evaluations of a run at a table of more than two players, made aside: in a
process of their own, on a spare core, while the run trains on (``python -m train PRESET
--exact-aside``).

At an exact point the run saves the network's weights to a temporary file (tensors only,
read back with ``weights_only``) and goes on with the sampled figures of that point; the
process builds the same network from them and measures its tables (``exact_tables``, the
figures the run would have measured itself, to the bit).  Once they are done the run
merges them into that point's history and logs them to TensorBoard at its step.  Training
is untouched: the same seed gives the same run, aside or not.  At the end the run waits
for what is pending; when it is interrupted it drops it (those points stay sampled)."""

from __future__ import annotations

import multiprocessing
import os
import shutil
import signal
import tempfile
from collections.abc import Callable
from concurrent import futures
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import replace
from pathlib import Path
from typing import Any

import torch

from agents.ppo_agent import policy_state
from train.config import RunConfig


def exact_figures(config: RunConfig, weights: str) -> dict[str, Any]:
    """In the process aside: ``exact_tables`` of the preset's network with ``weights``, or
    ``table_exact_refused`` saying why there are none (as ``table_figures`` records it)."""
    from agents.ppo_agent import PPOAgent, build_policy
    from train.evaluation import exact_tables

    torch.set_num_threads(1)
    preset = config.preset
    policy = build_policy(preset.game, preset.policy, preset.env, where=f"preset {preset.name}")
    policy.load_state_dict(torch.load(weights, weights_only=True))
    try:
        return exact_tables(config, PPOAgent(policy, preset.game, config.name), final=False)
    except ValueError as e:
        return {"table_exact_refused": str(e)}


def _ignore_interrupts() -> None:
    """The process aside leaves Ctrl-C to the run, which stops it (``ExactAside.close``)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


class ExactAside:
    """One process for a run's exact evaluations; ``submit`` a network at a step, collect
    the figures with ``done``, ``close`` at the end."""

    def __init__(self, config: RunConfig):
        self.pool = self._start()
        self.folder = Path(tempfile.mkdtemp(prefix="dice-arena-exact-"))
        self.config = replace(config, on_eval=None)  # what the process needs: the preset and the name
        self.pending: list[tuple[int, Future, Path]] = []

    @staticmethod
    def _start() -> ProcessPoolExecutor:
        # spawn: a forked child of a process whose torch threads have started may hang
        return ProcessPoolExecutor(
            max_workers=1, mp_context=multiprocessing.get_context("spawn"), initializer=_ignore_interrupts
        )

    def submit(self, policy: torch.nn.Module, step: int) -> None:
        path = self.folder / f"{step}.pt"
        part = path.with_suffix(".part")
        torch.save(policy_state(policy), part)
        os.replace(part, path)
        try:
            future = self.pool.submit(exact_figures, self.config, str(path))
        except BrokenProcessPool:  # the process died (killed, out of memory): a new one
            self.pool.shutdown(wait=False, cancel_futures=True)
            self.pool = self._start()
            future = self.pool.submit(exact_figures, self.config, str(path))
        self.pending.append((step, future, path))

    def done(
        self, wait: bool = False, stopping: Callable[[], bool] = lambda: False
    ) -> list[tuple[int, dict[str, Any] | str]]:
        """The evaluations finished (all of them with ``wait``, unless ``stopping()`` says
        to stop waiting), in order: (step, figures), or (step, why) for one that failed."""
        out: list[tuple[int, dict[str, Any] | str]] = []
        while self.pending:
            step, future, path = self.pending[0]
            while wait and not future.done() and not stopping():
                futures.wait([future], timeout=0.2)
            if not future.done():
                break
            self.pending.pop(0)
            try:
                out.append((step, future.result()))
            except Exception as e:  # the process died, or the evaluation raised: it stays sampled
                out.append((step, f"{type(e).__name__}: {e}".splitlines()[0]))
            path.unlink(missing_ok=True)
        return out

    def close(self, cancel: bool = False) -> None:
        """Stop the process (dropping what is pending with ``cancel``) and remove the weights."""
        processes = list((getattr(self.pool, "_processes", None) or {}).values())  # shutdown forgets them
        self.pool.shutdown(wait=not cancel, cancel_futures=cancel)
        if cancel:  # the evaluation in hand is dropped too
            for process in processes:
                process.terminate()
                process.join(5)
        self.pending.clear()
        shutil.rmtree(self.folder, ignore_errors=True)
