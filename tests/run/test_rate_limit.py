"""One schedule per system, kept by the driver for all its actors: starts never come faster than the
limit, and never more calls at once than allowed, while the limit is what sets the pace; the actors
start each call at its booked time."""

from __future__ import annotations

import itertools
import json

import pytest

from oeb.run import engine
from run.conftest import mock_config

pytestmark = pytest.mark.ray

PER_SECOND = 8.0
IN_FLIGHT = 3
JITTER = 0.05
"""How much closer than booked two calls may start at the actors: the booked delay runs from the
call's arrival, arrivals differ by the time Ray takes to deliver each call, and a thread on a busy
machine wakes late. Calls bunched together (started as they arrive) would be about 0 apart."""


def test_the_shared_limiter_never_exceeds_its_limits(ray_cluster, tmp_path, many_rows) -> None:
    config = mock_config(
        {
            "system.mock.latency": 0.2,
            "workers": 6,
            "ray.actors": 2,
            "ray.rate_limit": {"requests_per_second": PER_SECOND, "max_in_flight": IN_FLIGHT},
        },
        dataset=many_rows,
    )
    result = engine.execute(engine.plan_run(config, str(tmp_path)))
    starts = sorted(result.predicted["starts"])
    assert len(starts) == 40
    gaps = [later - earlier for earlier, later in itertools.pairwise(starts)]
    assert min(gaps) >= 1 / PER_SECOND - 1e-6
    for first in starts:  # no one-second window holds more starts than the limit
        assert sum(first <= start < first + 1 for start in starts) <= PER_SECOND
    assert result.predicted["peak_in_flight"] <= IN_FLIGHT
    started = sorted(result.predicted["started"])  # by the actors, on this machine's clock
    assert len(started) == 40
    assert min(later - earlier for earlier, later in itertools.pairwise(started)) >= 1 / PER_SECOND - JITTER
    rate = (len(starts) - 1) / (starts[-1] - starts[0])
    assert 0.9 * PER_SECOND <= rate <= PER_SECOND
    assert json.loads((tmp_path / result.report["run"] / "settings.json").read_text())["system"] == "mock"
