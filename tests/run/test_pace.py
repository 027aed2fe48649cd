"""A system's start schedule under 429s, on a fake clock: the pace halves (once per burst, never below
the floor), Retry-After holds every new start until it has passed, the pace climbs back a tenth of
the limit per quiet period up to the limit, and at no moment do starts come faster than the limit.
Then the same through a whole run against a real HTTP vendor answering a storm of 429s."""

from __future__ import annotations

import itertools
import json
import math
import threading

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from reliability.conftest import vendor_dataset
from systems.fake_vendor import FakeVendor, Reply, Request
from systems.vendors import ANSWER

from oeb.run import engine
from oeb.run.plan.config import check_tree, init_tree
from oeb.run.predict.limiter import AHEAD, SPACING, StartSchedule


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


STORM_RATE = 10.0
STORM_AFTER = 15
"""The vendor's storm begins at this request: every request in the next `STORM_SECONDS` answers 429."""
STORM_SECONDS = 0.5
RETRY_AFTER = 2.0


class Storm:
    """A vendor that answers well until its `STORM_AFTER`th request, then 429 with a Retry-After to
    every request for `STORM_SECONDS`, then well again; it keeps each request's arrival time."""

    def __init__(self) -> None:
        self.arrivals: list[float] = []
        self.throttled: list[float] = []
        self._lock = threading.Lock()

    def __call__(self, request: Request) -> Reply:
        with self._lock:
            self.arrivals.append(request.received)
            began = self.arrivals[STORM_AFTER - 1] if len(self.arrivals) >= STORM_AFTER else math.inf
            if began <= request.received < began + STORM_SECONDS:
                self.throttled.append(request.received)
                return Reply(429, {"message": "slow down"}, {"Retry-After": f"{RETRY_AFTER:g}"})
        return Reply(200, {"model": "mistral-ocr-2512", "pages": [], "document_annotation": json.dumps(ANSWER)})

    def between(self, start: float, end: float) -> int:
        return sum(start <= arrival < end for arrival in self.arrivals)


@pytest.mark.slow
def test_a_429_storm_slows_the_system_honours_retry_after_and_recovers(
    tmp_path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Counted by the vendor: after the first 429 no new request comes before Retry-After has passed
    (only those already booked, at most the documents in flight), then half the rate, then the pace
    climbs a step per quiet 5 s; never above the limit; every document answered in the end. The run
    is the engine's as `oeb run` makes it (Mistral's adapter, 120 documents: in this process, or on
    the Ray a test session has open)."""
    monkeypatch.setenv("MISTRAL_API_KEY", "sk-mistral-storm-test-key")
    ids = vendor_dataset(tmp_path / "data", 120)
    storm = Storm()
    with FakeVendor() as fake:
        fake.on("POST", "/v1/ocr", storm)
        tree = init_tree("mistral", str(tmp_path / "data"))
        tree["system"]["mistral"]["base_url"] = fake.url
        tree["ray"] = {
            "address": None,
            "actors": 1,
            "rate_limit": {"requests_per_second": STORM_RATE, "max_in_flight": 6},
        }
        result = engine.execute(engine.plan_run(check_tree(tree, where="storm"), str(tmp_path / "runs")))
    began = storm.throttled[0]
    assert result.predicted["throttled"] == len(storm.throttled) >= 1
    # Booked before the driver heard of the 429: at most the 6 in flight, arriving within a second.
    assert storm.between(began + 1.0, began + RETRY_AFTER - 0.2) == 0
    resumed = min(arrival for arrival in storm.arrivals if arrival >= began + 1.0)
    assert resumed >= began + RETRY_AFTER - 0.2
    halved = storm.between(resumed, resumed + 3.0)  # 5 starts/s until the first quiet period ends
    assert 11 <= halved <= 16  # 14.85 at 5 starts/s
    recovered = storm.between(began + 11.0, began + 15.0)  # 7 starts/s after two quiet periods
    assert recovered / 4.0 >= halved / 3.0 + 0.5  # 7 against 5 starts/s; a loaded machine lags both
    starts = sorted(result.predicted["starts"])  # booked: never more than the limit in a second
    assert all(sum(first <= start < first + 1.0 for start in starts) <= STORM_RATE for first in starts)
    for first in storm.arrivals:  # as the vendor saw them: calls booked ahead (at most the 6 in flight)
        assert storm.between(first, first + 1.0) <= STORM_RATE + 6  # may arrive together when threads lag
    records = [json.loads(path.read_text()) for path in (tmp_path / "runs").glob("*/records/*.json")]
    assert len(records) == len(ids) and all(record["error"] is None for record in records)
