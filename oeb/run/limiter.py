"""The rate limit of the run's system, kept by the driver.

The driver submits every attempt of the run, first attempts and retries alike, so one schedule there
bounds the attempts of every actor on every node, and a call costs no round trip to a limiter. A
retry takes the first start free once its back-off is over (`due`). Starts are booked 1% more than
1/per_second apart, so no one-second window holds more than `per_second` of them, even counted where
the calls really start (a few milliseconds off the booking: the time Ray takes to deliver a call
varies). A call is submitted with its start already booked, as a delay the actor waits out after
reading the document, so the pace does not depend on when the driver wakes. (The cap on calls at
once is the driver's count of calls submitted and not yet back, which always covers the vendor call
itself, and never a retry waiting out its back-off: see `predict_rows`.)
"""

from __future__ import annotations

import time

SPACING = 1.01
"""Starts are this many times 1/per_second apart: room for the delivery time of a call to vary."""
AHEAD = 1.0
"""How far ahead (seconds) the driver books starts: a driver busy saving a large record for this
long still loses no start."""


class StartSchedule:
    """Books start times for calls; keeps them so a run can show its rate."""

    def __init__(self, per_second: float | None) -> None:
        self.interval = SPACING / per_second if per_second else 0.0
        self.next_start = float("-inf")
        self.starts: list[float] = []

    def wait(self) -> float:
        """Seconds until a start may be booked (one at most `AHEAD` seconds away)."""
        return max(0.0, self.next_start - AHEAD - time.monotonic())

    def due(self, not_before: float) -> bool:
        """Whether a call that must not start before `not_before` (a retry's back-off) may take the next
        start: taking it no sooner leaves no gap in the schedule for fresh calls to lose."""
        return not_before <= max(time.monotonic(), self.next_start)

    def book(self) -> float:
        """Book the next start for a call submitted now; returns the seconds until it."""
        now = time.monotonic()
        start = max(now, self.next_start)
        self.next_start = start + self.interval
        self.starts.append(start)
        return start - now
