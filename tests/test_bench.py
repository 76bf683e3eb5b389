"""python -m train.bench: every environment measurement runs and reports a rate; the
batched Pig env is printed next to OpenSpiel's pig with their ratio."""

import pytest

from train import bench


def _rate(value):
    return value[0] if isinstance(value, tuple) else value


@pytest.mark.parametrize("name", [n for n in bench.MEASURES if not n.startswith(("train", "OpenSpiel"))])
def test_environment_measurements_run(name):
    rate = _rate(bench.MEASURES[name](0.2))
    assert rate > 0  # a figure, not a speed target: speed is measured by the command, not by tests


def test_every_registered_batched_env_is_measured():
    import games

    for name in games.names():
        if games.get(name).batched_env:
            assert bench.batched_name(name) in bench.MEASURES


class _Queue:
    def put(self, item):
        self.item = item


def _in_process(name, arg):
    """``bench.measure`` without a fresh process (the same ``_child``: errors reported alike)."""
    queue = _Queue()
    bench._child(name, arg, queue)
    return queue.item


def _run(monkeypatch, capsys, openspiel):
    monkeypatch.setattr(bench, "measure", _in_process)
    monkeypatch.setitem(bench.MEASURES, bench.OPENSPIEL, openspiel)  # open_spiel not needed
    assert bench.main(["--seconds", "0.1", "--only", "pig"]) == 0
    out = capsys.readouterr().out
    assert all(len(line) <= bench.WIDTH for line in out.splitlines()), out
    return out


def test_pig_is_printed_next_to_openspiel(monkeypatch, capsys):
    notes = {"nodes_per_s": 150.0, "decisions_per_game": 121.0, "nodes_per_game": 181.0}
    out = _run(monkeypatch, capsys, lambda seconds: (100.0, notes))
    ours = bench.batched_name("pig")
    line = next(line for line in out.splitlines() if line.startswith(ours))
    rate = float(line[len(ours) :].split()[0].replace(",", ""))
    assert rate > 0
    assert f"{bench.OPENSPIEL_NODES:<52}          150" in out  # the old figure, kept for 420 and 421
    ratio = next(line for line in out.splitlines() if line.startswith(f"batched pig env / {bench.OPENSPIEL}: "))
    # the ratio is of the unrounded rate; the line shows it rounded to whole decisions a second
    assert ratio.endswith("x") and abs(float(ratio.split()[-1][:-1]) - rate / 100.0) <= 0.051
    assert "decisions/game: OpenSpiel 121.0 (both seats), ours " in out
    assert "goal 100, 6 faces" in out
    assert "420 " not in out  # --only: the other measurements were not run


def test_pig_without_openspiel(monkeypatch, capsys):
    def missing(seconds):
        raise ImportError("No module named 'pyspiel'", name="pyspiel")

    out = _run(monkeypatch, capsys, missing)
    assert bench.batched_name("pig") in out
    assert "(not installed (pyspiel))" in out
    assert "batched pig env / " not in out  # no ratio without its peer


def test_only_refuses_what_matches_nothing():
    with pytest.raises(SystemExit):
        bench.main(["--only", "no such measurement"])
