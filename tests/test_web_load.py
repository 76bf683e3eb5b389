"""``python -m play.web.load`` (the web server under load): a few shared tables played at once
against an app in this process end, replay from their records to the same end, and no move
sent without the seat's token (or with a stale turn) is accepted; the report fits 80 columns."""

from __future__ import annotations

import asyncio
import io

import pytest

pytest.importorskip("fastapi", reason="the web extra is not installed (pip install -e '.[web]')")
httpx = pytest.importorskip("httpx")

from play.web import load  # noqa: E402
from play.web.app import create_app  # noqa: E402
from play.web.shared import Limits  # noqa: E402

BIG = 1e9


def test_percentile_is_nearest_rank():
    values = list(range(1, 101))
    assert [load.percentile(values, q) for q in (50, 90, 99, 100)] == [50, 90, 99, 100]
    assert load.percentile([], 50) == 0.0
    assert load.percentile([7.0], 99) == 7.0


def test_three_tables_at_once_end_replay_and_refuse_every_move_without_the_seats_token(tmp_path):
    db = tmp_path / "records.sqlite3"
    app = create_app(db, limits=Limits(create_burst=BIG, create_per_minute=BIG, move_burst=BIG, move_per_minute=BIG))
    run = load.Run(tables=3, seed=7, watch="poll", poll=0.01, timeout=60, bases=["http://load.test"])
    asyncio.run(load.play(run, transport=httpx.ASGITransport(app=app)))
    checks = load.check_records(run, str(db))
    out = io.StringIO()
    ok = load.report(run, checks, out, 250.0, str(db))
    text = out.getvalue()
    assert ok, text
    assert checks["over"] == checks["checked"] == checks["replayed"] == 3, text
    assert checks["lost"] == checks["extra"] == 0, text
    assert sum(t.accepted for t in run.items) == len(run.move_ms) > 0
    assert {kind: counts for kind, counts in run.bad.items()} == {kind: [3, 0, 0] for kind in load.BAD_KINDS}, text
    assert not run.errors, text
    assert all(len(line) <= load.WIDTH for line in text.splitlines()), text
    assert "0 accepted" in text and "3/3 replay" in text and "0 lost moves" in text


def test_a_stale_count_in_the_records_is_reported_as_lost(tmp_path):
    """The check itself: a table that was told of one more move than its record holds fails."""
    db = tmp_path / "records.sqlite3"
    app = create_app(db, limits=Limits(create_burst=BIG, create_per_minute=BIG, move_burst=BIG, move_per_minute=BIG))
    run = load.Run(tables=1, seed=3, watch="poll", poll=0.01, timeout=60, bases=["http://load.test"])
    asyncio.run(load.play(run, transport=httpx.ASGITransport(app=app)))
    run.items[0].accepted += 1
    checks = load.check_records(run, str(db))
    assert checks["lost"] == 1
    out = io.StringIO()
    assert not load.report(run, checks, out, 250.0, str(db))
    assert "FAILED" in out.getvalue()


@pytest.mark.slow
def test_the_command_starts_two_servers_on_one_file_and_plays(tmp_path):
    out = io.StringIO()
    code = load.main(["--tables", "4", "--workers", "2", "--db", str(tmp_path / "r.sqlite3")], out=out)
    text = out.getvalue()
    assert code == 0, text
    assert "2 x play.web.app" in text and "4/4 replay to their recorded end" in text, text
    assert all(len(line) <= load.WIDTH for line in text.splitlines()), text
