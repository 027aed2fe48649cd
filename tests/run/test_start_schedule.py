"""The driver's schedule of starts, as a retry uses it: a retry takes the first start free once its
back-off is over, never one before, and never leaves a gap that fresh calls would lose."""

from __future__ import annotations

import time

from oeb.run.predict.limiter import StartSchedule


def test_a_retry_is_due_at_the_first_free_start_after_its_back_off() -> None:
    schedule = StartSchedule(10.0)  # a start every 0.101 s
    assert schedule.book() == 0.0
    booked = schedule.next_start
    assert not schedule.due(booked + 5.0)  # mid back-off: it takes no start (and holds no call)
    assert schedule.due(booked - 0.05)  # over before the next free start: that start is its own
    schedule.book()
    assert schedule.starts[1] >= booked  # the free start, 0.101 s after the first


def test_with_no_limit_a_retry_is_due_when_its_back_off_is_over() -> None:
    schedule = StartSchedule(None)
    schedule.book()
    now = time.monotonic()
    assert schedule.due(now) and not schedule.due(now + 1.0)
