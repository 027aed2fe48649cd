"""When a job vendor's job is polled: first one poll interval after the vendor took it (a job just
submitted is never done, so a poll at once only costs a request), but at once for a job submitted
long ago (collected after a crash or a resume) or whose submit time was never saved; then one
interval apart, start to start, however long each poll takes."""

from __future__ import annotations

import dataclasses
import json
import time
from pathlib import Path
from typing import Any

import pytest

from oeb.systems import Asking, get
from systems.fake_vendor import FakeVendor, Request
from systems.test_submit_collect import each_job_vendor, step, submitted
from systems.vendors import ANSWER, Vendor

INTERVAL = 0.25


@each_job_vendor
def test_a_job_just_submitted_is_first_polled_one_interval_after_its_submit(
    vendor: Vendor, fake: FakeVendor, pdf: Path
) -> None:
    system = get(vendor.system, vendor.options(fake.url) | {"poll_interval": INTERVAL})
    first = submitted(step(system, pdf))
    assert first.asking.submitted is not None
    record = step(system, pdf, first.asking)
    assert record["output"] == ANSWER
    took = fake.sent(*vendor.submit)[0].received
    assert fake.sent(*vendor.finish)[0].received - took >= INTERVAL


@pytest.mark.slow  # two 1-s polls per vendor
@each_job_vendor
def test_a_job_submitted_long_ago_or_at_an_unknown_time_is_polled_at_once(
    vendor: Vendor, fake: FakeVendor, pdf: Path
) -> None:
    system = get(vendor.system, vendor.options(fake.url) | {"poll_interval": 1.0})
    long_ago = dataclasses.replace(submitted(step(system, pdf)).asking, submitted=time.time() - 60)
    unknown = json.loads(json.dumps(submitted(step(system, pdf)).asking.to_json()))
    del unknown["submitted"]  # a jobs file written before the submit time was kept
    for asking in (long_ago, Asking.from_json(unknown)):
        asked = time.monotonic()
        record = step(system, pdf, asking)
        assert (record["output"], record["error"]) == (ANSWER, None)
        polled = min(request.received for request in fake.sent(*vendor.finish) if request.received >= asked)
        assert polled - asked < 0.5  # at once, not after the 1-s interval


@pytest.mark.slow  # four polls of an interval each per vendor
@each_job_vendor
def test_polls_start_one_interval_apart_however_long_each_takes(vendor: Vendor, fake: FakeVendor, pdf: Path) -> None:
    running = fake.routes[vendor.finish][0]

    def slow(request: Request) -> Any:
        time.sleep(0.2)  # the vendor takes most of an interval to answer each poll
        return running(request) if callable(running) else running

    fake.routes[vendor.finish][:1] = [slow, slow, slow]
    system = get(vendor.system, vendor.options(fake.url) | {"poll_interval": INTERVAL})
    record = step(system, pdf, submitted(step(system, pdf)).asking)
    assert record["output"] == ANSWER
    polls = [request.received for request in fake.sent(*vendor.finish)]
    assert len(polls) == 4
    # Timed where the fake receives each poll, against the schedule start to start: a loaded machine
    # delays one receipt and the next comes sooner, so single gaps are not checked. Poll k comes no
    # sooner than k intervals after the first, and the three gaps end well before the 3 x (0.25 + 0.2)
    # = 1.35 s that polls one interval after each answer would take.
    since_first = [later - polls[0] for later in polls[1:]]
    assert all(since >= k * INTERVAL - 0.06 for k, since in enumerate(since_first, 1)), since_first
    assert since_first[-1] < 3 * INTERVAL + 0.3, since_first
