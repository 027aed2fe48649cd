"""The rate limit of one system, kept by the driver, and how it gives way when the vendor says 429.

The driver submits every attempt of a system, first attempts and retries alike, so one schedule there
bounds the attempts of every actor on every node, and a call costs no round trip to a limiter. A
retry takes the first start free once its back-off is over (`due`). Starts are booked 1% more than
1/pace apart, so no one-second window holds more than the pace (never above the configured limit),
even counted where the calls really start (a few milliseconds off the booking: the time Ray takes to
deliver a call varies). A call is submitted with its start already booked, as a delay the actor waits
out after reading the document, so the pace does not depend on when the driver wakes.

A 429 (`throttled`) halves the pace, never below `floor`, at most once per `hold` seconds (the calls of
one burst answer 429 together: one decrease for them all); a Retry-After moves the next free start
past it, so no start is booked before it has passed (starts booked earlier, at most `AHEAD` seconds'
worth, keep their times). After `quiet` seconds without a 429 the pace rises by a tenth of the limit,
and again after each further quiet period, up to the limit (docs/money.md, "429 storms"). With no
limit configured, a 429 sets a pace (half the starts of the last second) that recovers up to that
rate and then lifts again.
"""

from __future__ import annotations

import bisect
import math
import time
from collections.abc import Callable

SPACING = 1.01
"""Starts are this many times 1/pace apart: room for the delivery time of a call to vary."""
AHEAD = 1.0
"""How far ahead (seconds) the driver books starts: a driver busy saving a large record for this
long still loses no start."""
DECREASE = 0.5
"""A 429 multiplies the pace by this."""
STEPS = 10
"""Recovery adds 1/STEPS of the limit per quiet period: from the floor to the limit in STEPS periods."""
FLOOR = 0.1
"""The slowest pace a 429 leads to (starts/s): one start every ten seconds still learns when the
vendor is ready again. Never above the limit itself."""
QUIET = 5.0
"""Seconds without a 429 before the pace rises one step."""
HOLD = 1.0
"""Seconds after a decrease in which further 429s (of calls booked at the old pace) change nothing."""


class StartSchedule:
    """Books start times for calls at the current pace; keeps them so a run can show its rate."""

    def __init__(
        self,
        per_second: float | None,
        *,
        clock: Callable[[], float] = time.monotonic,
        floor: float = FLOOR,
        quiet: float = QUIET,
        hold: float = HOLD,
    ) -> None:
        self.limit = per_second
        """The configured starts per second (None: no cap)."""
        self.clock = clock
        self.floor = min(floor, per_second) if per_second else floor
        self.quiet = quiet
        self.hold = hold
        self._pace = per_second
        self._ceiling = per_second
        """Where recovery stops: the limit, or with none the rate the first 429 interrupted."""
        self._decreased = -math.inf
        self._quiet_since = -math.inf
        """The last 429 or recovery step: the next step comes `quiet` seconds after it."""
        self.next_start = -math.inf
        self.paused_until = -math.inf
        self.starts: list[float] = []
        self.throttles = 0
        """429s reported so far."""

    @property
    def pace(self) -> float | None:
        """The starts per second allowed now (None: no cap), after any recovery due by now."""
        self._recover(self.clock())
        return self._pace

    @property
    def interval(self) -> float:
        """Seconds between two booked starts at the current pace."""
        return SPACING / self._pace if self._pace else 0.0

    def wait(self) -> float:
        """Seconds until a start may be booked (one at most `AHEAD` seconds away)."""
        now = self.clock()
        self._recover(now)
        return max(0.0, self.next_start - AHEAD - now)

    def due(self, not_before: float) -> bool:
        """Whether a call that must not start before `not_before` (a retry's back-off) may take the next
        start: taking it no sooner leaves no gap in the schedule for fresh calls to lose."""
        return not_before <= max(self.clock(), self.next_start)

    def book(self) -> float:
        """Book the next start for a call submitted now; returns the seconds until it."""
        now = self.clock()
        self._recover(now)
        start = max(now, self.next_start)
        self.next_start = start + self.interval
        self.starts.append(start)
        return start - now

    def throttled(self, retry_after: float | None = None) -> None:
        """The vendor answered 429: slow down (once per `hold`), and book nothing before `retry_after`
        seconds from now have passed."""
        now = self.clock()
        self.throttles += 1
        if retry_after is not None and retry_after > 0:
            self.paused_until = max(self.paused_until, now + retry_after)
            self.next_start = max(self.next_start, self.paused_until)
        self._recover(now)
        self._quiet_since = now
        if now - self._decreased < self.hold:
            return
        if self._pace is None:  # no limit: start from what the last second held
            recent = len(self.starts) - bisect.bisect_left(self.starts, now - 1.0)
            self._ceiling = self._pace = max(float(recent), self.floor)
        self._pace, self._decreased = max(self.floor, self._pace * DECREASE), now
        if self.starts:  # the next start one interval of the new pace after the last one
            self.next_start = max(self.next_start, self.starts[-1] + self.interval)

    def _recover(self, now: float) -> None:
        """Add one step per quiet period passed since the last 429 or step, up to the ceiling."""
        if self._pace is None or self._ceiling is None or self._pace >= self._ceiling:
            return
        periods = math.floor((now - self._quiet_since) / self.quiet)
        if periods < 1:
            return
        pace = min(self._ceiling, self._pace + periods * self._ceiling / STEPS)
        self._pace, self._quiet_since = pace, self._quiet_since + periods * self.quiet
        if pace >= self._ceiling and self.limit is None:
            self._pace = self._ceiling = None
