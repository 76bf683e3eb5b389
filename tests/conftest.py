"""Shared pytest configuration.

Hypothesis profiles for the property-based tests (``tests/test_fuzz.py``):

* ``ci`` (the default): few examples, derandomized, so a run in CI is quick and
  always tries the same cases;
* ``long``: many random examples, to hunt for bugs locally:
  ``pytest tests/test_fuzz.py --hypothesis-profile=long`` (or set
  ``HYPOTHESIS_PROFILE=long``).

One thread per process for torch and the BLAS libraries: ``make test`` runs the tests
in parallel (pytest-xdist, a process per core), and a process that spins several threads
next to another one waits on them (a network's table took minutes instead of seconds).
Training sets its own count (``--threads``, the preset's), as it does outside tests; the
programs the tests start inherit the environment variables.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import torch  # noqa: E402  (after the variables: its thread pool reads them)
from hypothesis import HealthCheck, settings  # noqa: E402

torch.set_num_threads(1)

settings.register_profile(
    "ci",
    max_examples=12,
    deadline=None,
    derandomize=True,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile(
    "long",
    max_examples=1000,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.load_profile(os.getenv("HYPOTHESIS_PROFILE", "ci"))
