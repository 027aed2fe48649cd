"""When a job vendor's job is first polled: one poll interval after the vendor took it (a job just
submitted is never done, so a poll at once only costs a request), but at once for a job submitted
long ago (collected after a crash or a resume) or whose submit time was never saved."""

from __future__ import annotations

import dataclasses
import json
import time
from pathlib import Path

import pytest

from oeb.systems import Asking, get
from systems.fake_vendor import FakeVendor
from systems.test_submit_collect import each_job_vendor, step, submitted
from systems.vendors import ANSWER, Vendor

INTERVAL = 0.4


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
