"""python -m train.bench: every environment measurement runs and reports a rate."""

import pytest

from train import bench


@pytest.mark.parametrize("name", [n for n in bench.MEASURES if not n.startswith(("train", "OpenSpiel"))])
def test_environment_measurements_run(name):
    rate = bench.MEASURES[name](0.2)
    assert rate > 0  # a figure, not a speed target: speed is measured by the command, not by tests

