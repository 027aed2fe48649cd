"""A system's only actor is given one call beyond its in-flight cap (`oeb.run.predict.actors.AHEAD`): that
call waits at the actor for a slot, starts the moment one frees but never sooner than one interval of
the pace after the actor's previous start, and never starts once its system was halted. A job
vendor that uploads first makes its upload while the call waits (`Deadline.start`)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from systems.fake_vendor import FakeVendor, Reply
from systems.vendors import ANSWER

from oeb.dataset import SAMPLE_DATASET, open_dataset
from oeb.run.predict.actors import LOCAL_NODE, SystemActor, _Starts

INTERVAL = 0.05


def _take(starts: _Starts, not_before: float, interval: float = INTERVAL) -> int | None:
    return starts.take(starts.line_up(), not_before, interval)


def _take_later(
    starts: _Starts, not_before: float, ticket: threading.Event | None = None
) -> tuple[threading.Thread, list[tuple[int | None, float]]]:
    taken: list[tuple[int | None, float]] = []
    ticket = ticket or starts.line_up()
    thread = threading.Thread(
        target=lambda: taken.append((starts.take(ticket, not_before, INTERVAL), time.monotonic()))
    )
    thread.start()
    return thread, taken


def test_a_call_waits_for_a_free_slot_and_starts_when_it_frees() -> None:
    starts = _Starts(2)
    now = time.monotonic()
    assert _take(starts, now) == 1
    assert _take(starts, now) == 2  # its booked start passed: it waits out the interval
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
        _take(starts, now)  # all booked for now, as calls given ahead would be
    assert time.monotonic() - now >= 2 * INTERVAL  # the third started two intervals after the first


def test_a_call_that_waited_for_a_slot_spaces_the_next_from_its_real_start() -> None:
    starts = _Starts(1)
    booked = time.monotonic()
    _take(starts, booked)
    later, taken = _take_later(starts, booked)  # booked long ago, it waits for the slot
    time.sleep(0.3)
    freed = time.monotonic()  # the waiting call starts at this or later
    starts.give_back()
    later.join(5)
    assert [running for running, _ in taken] == [1]
    starts.give_back()
    assert _take(starts, booked) is not None  # booked as early, free at once: it still keeps the pace
    assert time.monotonic() - freed >= INTERVAL


def test_calls_start_in_the_order_they_arrived() -> None:
    starts = _Starts(1)
    first, second = starts.line_up(), starts.line_up()
    thread, taken = _take_later(starts, time.monotonic(), second)  # ready first, but second in line
    time.sleep(0.2)
    assert not taken  # a slot is free, yet the first in line has not taken it
    assert starts.take(first, time.monotonic(), 0.0) == 1
    starts.give_back()
    thread.join(5)
    assert [running for running, _ in taken] == [1]


def test_a_call_that_leaves_the_line_lets_the_next_go() -> None:
    starts = _Starts(1)
    first = starts.line_up()
    thread, taken = _take_later(starts, time.monotonic())
    starts.leave(first)  # its upload failed: it never starts
    thread.join(5)
    assert [running for running, _ in taken] == [1]


def test_a_waiting_call_of_a_halted_system_never_starts() -> None:
    starts = _Starts(1)
    _take(starts, time.monotonic(), 0.0)
    thread, taken = _take_later(starts, time.monotonic())
    starts.halt()
    thread.join(5)
    assert [running for running, _ in taken] == [None]
    starts.give_back()
    assert _take(starts, time.monotonic(), 0.0) is None  # nothing starts after the halt, slot free or not


def _extend_fake(fake: FakeVendor) -> None:
    """Extend's protocol; each run is polled "processing" about 0.6 s before it is done."""
    fake.on("POST", "/files/upload", Reply(200, {"object": "file", "id": "file_1"}))
    fake.on("POST", "/extract_runs", Reply(200, {"object": "extract_run", "id": "exr_1", "status": "PROCESSING"}))
    done = {"id": "exr_1", "status": "PROCESSED", "output": {"value": ANSWER}, "usage": {"totalCredits": 16}}
    processing = Reply(200, {"id": "exr_1", "status": "PROCESSING"})
    fake.on("GET", "/extract_runs/exr_1", *[processing] * 30, Reply(200, done))


def _waited(condition: Callable[[], bool], seconds: float = 5.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "the fake never saw the request"
        time.sleep(0.005)


@pytest.fixture
def actor(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[SystemActor, FakeVendor, list[str]]]:
    """A system's only actor with one slot, asking Extend's protocol on 127.0.0.1."""
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setenv("EXTEND_API_KEY", "sk-test")
    dataset = open_dataset(SAMPLE_DATASET)
    with FakeVendor() as fake:
        _extend_fake(fake)
        options = {"base_url": fake.url, "poll_interval": 0.02}
        yield (
            SystemActor("extend", options, dataset, str(tmp_path), LOCAL_NODE, 1),
            fake,
            [row.doc_id for row in dataset.rows[:2]],
        )


def _in_thread(actor: SystemActor, doc_id: str) -> tuple[threading.Thread, list[dict[str, Any]]]:
    outcomes: list[dict[str, Any]] = []
    thread = threading.Thread(target=lambda: outcomes.append(actor.predict(doc_id, 30.0, 0.0)))
    thread.start()
    return thread, outcomes


def test_a_call_given_ahead_uploads_while_it_waits_for_the_slot(
    actor: tuple[SystemActor, FakeVendor, list[str]],
) -> None:
    system, fake, (first, second) = actor
    running, _ = _in_thread(system, first)
    _waited(lambda: len(fake.sent("POST", "/extract_runs")) == 1)  # the first holds the only slot
    ahead, outcomes = _in_thread(system, second)
    running.join(10)
    ahead.join(10)
    [outcome] = outcomes
    assert outcome["record"]["output"] == ANSWER
    sent = [(r.method, r.path) for r in fake.sent()]
    uploads = [i for i, request in enumerate(sent) if request == ("POST", "/files/upload")]
    runs = [i for i, request in enumerate(sent) if request == ("POST", "/extract_runs")]
    first_done = sent.index(("GET", "/extract_runs/exr_1")) + 30  # the first run's 31st poll saw it done
    assert uploads[1] < first_done < runs[1]  # uploaded during the first job; its own job only after it


def test_a_call_given_ahead_of_a_halted_system_uploads_but_buys_nothing(
    actor: tuple[SystemActor, FakeVendor, list[str]],
) -> None:
    system, fake, (first, second) = actor
    running, _ = _in_thread(system, first)
    _waited(lambda: len(fake.sent("POST", "/extract_runs")) == 1)
    ahead, outcomes = _in_thread(system, second)
    _waited(lambda: len(fake.sent("POST", "/files/upload")) == 2)
    system.halt()
    ahead.join(10)
    [outcome] = outcomes
    assert outcome["started"] is None and outcome["record"] is None and outcome["retry"] is None
    running.join(10)
    assert len(fake.sent("POST", "/extract_runs")) == 1
