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
import time

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import pytest  # noqa: E402
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


@pytest.fixture(autouse=True, scope="session")
def sb3_logs_in_pytest_tmp(tmp_path_factory):
    """A model that learns without a log folder of its own makes an empty one in the
    system's temporary folder (SB3's ``SB3-date-time``), one per ``learn``: here they go
    in one folder of pytest's instead (the programs the tests start inherit it)."""
    os.environ["SB3_LOGDIR"] = str(tmp_path_factory.mktemp("sb3-logs"))


# ------------------------------------------------------------------ PostgreSQL records
# The web tests that take the ``records_db`` fixture run on a SQLite file and on a
# PostgreSQL database: a new database per test on the server that
# ``DICE_ARENA_TEST_POSTGRES`` names (a URL whose role may create databases; .ci/run
# starts Debian's PostgreSQL and sets it).  Without it those tests skip on PostgreSQL;
# with it, a server that cannot be reached fails them.
POSTGRES_VAR = "DICE_ARENA_TEST_POSTGRES"


def postgres_database():
    """A new, empty PostgreSQL database for one test (its URL), dropped after it."""
    import secrets
    from urllib.parse import urlsplit, urlunsplit

    url = os.environ.get(POSTGRES_VAR, "").strip()
    if not url:
        pytest.skip(f"PostgreSQL: set {POSTGRES_VAR}=postgresql://user:password@host/db (as .ci/run does)")
    psycopg = pytest.importorskip("psycopg", reason="PostgreSQL records need psycopg (the postgres extra)")
    name = "dice_arena_test_" + secrets.token_hex(6)
    with psycopg.connect(url, autocommit=True, connect_timeout=10) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    parts = urlsplit(url)
    try:
        yield urlunsplit(parts._replace(path="/" + name))
    finally:
        # FORCE ends the test's connections left open; a role without pg_signal_backend
        # (.ci/run grants it) may not end an autovacuum worker there: it is gone in a moment
        for attempt in range(20):
            try:
                with psycopg.connect(url, autocommit=True, connect_timeout=10) as admin:
                    admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
                break
            except psycopg.errors.InsufficientPrivilege:
                if attempt == 19:
                    raise
                time.sleep(0.25)


@pytest.fixture(params=["sqlite", "postgresql"])
def records_db(request, tmp_path):
    """The records of a web test: a SQLite file, then a PostgreSQL database."""
    if request.param == "sqlite":
        yield tmp_path / "records.sqlite3"
    else:
        yield from postgres_database()
