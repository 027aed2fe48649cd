"""A system's only actor is given one call beyond its in-flight cap (`oeb.run.predict.AHEAD`): that
call waits at the actor for a slot, starts the moment one frees but never sooner than one interval of
the pace after the actor's previous start, and never starts once its system was halted."""

from __future__ import annotations

import threading
import time

from oeb.run.predict import _Starts

INTERVAL = 0.05


def _take_later(starts: _Starts, not_before: float) -> tuple[threading.Thread, list[tuple[int | None, float]]]:
    taken: list[tuple[int | None, float]] = []
    thread = threading.Thread(target=lambda: taken.append((starts.take(not_before, INTERVAL), time.monotonic())))
    thread.start()
    return thread, taken


def test_a_call_waits_for_a_free_slot_and_starts_when_it_frees() -> None:
    starts = _Starts(2)
    now = time.monotonic()
    assert starts.take(now, INTERVAL) == 1
    assert starts.take(now, INTERVAL) == 2  # its booked start passed: it waits out the interval
    thread, taken = _take_later(starts, now)
    time.sleep(0.3)
    assert not taken  # both slots busy: the vendor never sees three at once
    freed = time.monotonic()
    starts.give_back()
    thread.join(5)
    [(running, at)] = taken
    assert running == 2 and 0 <= at - freed < 0.5


def test_starts_keep_the_pace_whenever_the_calls_were_booked() -> None:
    starts = _Starts(3)
    now = time.monotonic()
    for _ in range(3):
        starts.take(now, INTERVAL)  # all booked for now, as calls given ahead would be
    assert time.monotonic() - now >= 2 * INTERVAL  # the third started two intervals after the first


def test_a_waiting_call_of_a_halted_system_never_starts() -> None:
    starts = _Starts(1)
    starts.take(time.monotonic(), 0.0)
    thread, taken = _take_later(starts, time.monotonic())
    starts.halted.set()
    thread.join(5)
    assert [running for running, _ in taken] == [None]
    starts.give_back()
    assert starts.take(time.monotonic(), 0.0) is None  # nothing starts after the halt, slot free or not
