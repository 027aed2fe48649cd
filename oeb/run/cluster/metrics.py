"""A run's progress as Ray metrics, so a benchmark on a cluster shows on its Ray dashboard and in the
Prometheus/Grafana that scrapes it (docs/live.md lists the names as Prometheus shows them).

The driver records them as the run's events come (`oeb.run.cluster.progress.RunProgress`); Ray's metrics
agent on the driver's node exports them, tagged by system. They exist only while Ray is in use: a run
without Ray records none, and importing this module does not import Ray.
"""

from __future__ import annotations

import sys
from typing import Any

PREFIX = "oeb_"
GRADING_BOUNDARIES = [0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0]
"""Seconds; a document's grading takes from milliseconds to minutes (a table of thousands of rows)."""

COUNTERS = {
    "documents_done": "documents whose record was saved (failed ones included)",
    "documents_failed": "documents saved with an error",
    "requests_started": "attempts started at the system (first attempts, retries, collections)",
    "throttled": "answers of HTTP 429 (rate limited) from the system",
}
GAUGES = {
    "in_flight": "documents being asked now",
    "pace": "starts per second the limiter allows now",
    "spend_usd": "dollars spent so far, as the records report them",
    "spend_credits": "vendor credits spent so far, as the records report them",
}
GRADING_GAUGES = {
    "grading_queued": "documents answered and waiting to be graded",
    "grading_running": "documents being graded",
}


def ray_in_use() -> bool:
    """Whether this process is connected to Ray (without importing Ray when nothing has)."""
    ray = sys.modules.get("ray")
    return ray is not None and bool(ray.is_initialized())


class RunMetrics:
    """The metrics of one run; every method takes the system (a run's label) it is about."""

    def __init__(self) -> None:
        from ray.util import metrics

        system = ("system",)
        self._counters = {name: metrics.Counter(PREFIX + name, text, system) for name, text in COUNTERS.items()}
        self._gauges = {name: metrics.Gauge(PREFIX + name, text, system) for name, text in GAUGES.items()}
        self._grading = {name: metrics.Gauge(PREFIX + name, text) for name, text in GRADING_GAUGES.items()}
        self._grading_seconds = metrics.Histogram(
            PREFIX + "grading_seconds", "seconds one document's grading took", GRADING_BOUNDARIES, system
        )

    @classmethod
    def if_ray(cls) -> RunMetrics | None:
        """Metrics when Ray is in use, else None."""
        return cls() if ray_in_use() else None

    def count(self, name: str, system: str, value: float = 1.0) -> None:
        """Add `value` to the counter `name` (a key of COUNTERS)."""
        self._counters[name].inc(value, {"system": system})

    def set(self, name: str, system: str, value: float) -> None:
        """Set the gauge `name` (a key of GAUGES)."""
        self._gauges[name].set(value, {"system": system})

    def grading(self, queued: int, running: int) -> None:
        """The grading queue of the whole run."""
        self._grading["grading_queued"].set(queued)
        self._grading["grading_running"].set(running)

    def graded(self, system: str, seconds: float) -> None:
        """One document of `system` was graded in `seconds`."""
        self._grading_seconds.observe(seconds, {"system": system})

    def metrics(self) -> dict[str, Any]:
        """Every metric object by its name (for tests and for tools that read them)."""
        found: dict[str, Any] = self._counters | self._gauges | self._grading
        return {PREFIX + name: metric for name, metric in (found | {"grading_seconds": self._grading_seconds}).items()}
