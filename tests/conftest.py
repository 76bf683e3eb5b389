"""Shared pytest configuration.

Hypothesis profiles for the property-based tests (``tests/test_fuzz.py``):

* ``ci`` (the default): few examples, derandomized, so a run in CI is quick and
  always tries the same cases;
* ``long``: many random examples, to hunt for bugs locally:
  ``pytest tests/test_fuzz.py --hypothesis-profile=long`` (or set
  ``HYPOTHESIS_PROFILE=long``).
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

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
