"""A system's start schedule under 429s, on a fake clock: the pace halves (once per burst, never below
the floor), Retry-After holds every new start until it has passed, the pace climbs back a tenth of
the limit per quiet period up to the limit, and at no moment do starts come faster than the limit."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from oeb.run.limiter import AHEAD, SPACING, StartSchedule


class Clock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _schedule(limit: float | None, **knobs: float) -> tuple[StartSchedule, Clock]:
    clock = Clock()
    return StartSchedule(limit, clock=clock, **knobs), clock


def _run_for(schedule: StartSchedule, clock: Clock, seconds: float) -> list[float]:
    """Book every start the driver would book in `seconds` (it books as soon as `wait` allows)."""
    booked = []
    end = clock.now + seconds
    while clock.now < end:
        wait = schedule.wait()
        if wait:
            clock.now = min(end, clock.now + wait)
            continue
        booked.append(clock.now + schedule.book())
    return booked


def test_a_429_halves_the_pace_once_per_burst_never_below_the_floor() -> None:
    schedule, clock = _schedule(8.0, floor=0.5, quiet=100.0)
    assert (schedule.pace, schedule.limit) == (8.0, 8.0)
    for _ in range(5):  # five calls of one burst answer 429 together
        schedule.throttled(None)
    assert schedule.pace == 4.0 and schedule.throttles == 5
    for _ in range(6):
        clock.now += 1.0
        schedule.throttled(None)
    assert schedule.pace == 0.5  # 2, 1, 0.5, then held at the floor
    booked = _run_for(schedule, clock, 10.0)
    assert min(b - a for a, b in itertools.pairwise(booked)) >= SPACING / 0.5 - 1e-9


def test_retry_after_holds_every_new_start_until_it_has_passed() -> None:
    schedule, clock = _schedule(4.0)
    schedule.book()
    schedule.throttled(3.0)
    assert schedule.wait() == pytest.approx(3.0 - AHEAD)
    assert schedule.due(clock.now + 2.0)  # a retry whose back-off ends in the pause takes the first start after it
    clock.now += 3.0 - AHEAD
    assert schedule.book() == pytest.approx(AHEAD)  # booked no sooner than the pause's end
    schedule.throttled(0.5)  # a shorter Retry-After does not shorten the pause
    assert schedule.next_start >= clock.now + AHEAD


def test_the_pace_recovers_a_step_per_quiet_period_up_to_the_limit() -> None:
    schedule, clock = _schedule(10.0, quiet=5.0)
    schedule.throttled(None)
    assert schedule.pace == 5.0
    clock.now += 4.9
    assert schedule.pace == 5.0  # not quiet long enough
    clock.now += 0.1
    assert schedule.pace == 6.0
    clock.now += 2.0
    schedule.throttled(None)  # a 429 restarts the quiet period (and halves again)
    assert schedule.pace == 3.0
    clock.now += 4.0
    assert schedule.pace == 3.0
    clock.now += 1.0 + 5.0 * 20
    assert schedule.pace == 10.0  # never past the limit
    booked = _run_for(schedule, clock, 5.0)
    assert max(b - a for a, b in itertools.pairwise(booked)) == pytest.approx(SPACING / 10.0)  # at the limit


def test_with_no_limit_a_429_paces_from_the_last_second_then_lifts_again() -> None:
    schedule, clock = _schedule(None, quiet=1.0)
    for _ in range(20):
        schedule.book()
        clock.now += 0.05  # 20 starts in the last second
    schedule.throttled(None)
    assert schedule.pace == 10.0 and schedule.limit is None
    clock.now += 4.0
    assert schedule.pace == 18.0  # a tenth of the interrupted rate per quiet second
    clock.now += 1.0
    assert schedule.pace is None  # back to no cap
    assert schedule.book() == 0.0


EVENT = st.tuples(st.floats(0.0, 3.0), st.booleans(), st.none() | st.floats(0.0, 4.0))
"""Seconds the driver runs, then maybe a 429 with maybe a Retry-After."""


@settings(max_examples=200, deadline=None)
@given(limit=st.floats(0.5, 30.0), events=st.lists(EVENT, max_size=12))
def test_no_one_second_window_holds_more_starts_than_the_limit(limit: float, events: list) -> None:
    schedule, clock = _schedule(limit, quiet=1.0)
    booked: list[float] = []
    for seconds, throttled, retry_after in events:
        booked += _run_for(schedule, clock, seconds)
        if throttled:
            schedule.throttled(retry_after)
            if retry_after:  # nothing booked from now on starts before the pause's end
                assert schedule.next_start >= clock.now + retry_after
    booked += _run_for(schedule, clock, 2.0)
    assert booked == sorted(booked)
    assert all(b - a >= SPACING / limit - 1e-9 for a, b in itertools.pairwise(booked))
    assert schedule.floor <= (schedule.pace or 0.0) <= limit
