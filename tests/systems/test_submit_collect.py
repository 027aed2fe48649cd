"""A job vendor's document in two halves, as the run engine asks it: `predict_attempt` submits and
hands back the job's handle, the handle crosses JSON (a run folder's jobs/<id>.json) and maybe a
crash, and a later `predict_attempt` collects it without paying again. A job the vendor forgot, or a
handle that cannot be read, is submitted again once and the record says so. Real adapters against
the fake vendors on 127.0.0.1."""

from __future__ import annotations

import dataclasses
import json
import time
from pathlib import Path
from typing import Any

import pytest

from oeb.dataset import SAMPLE_DATASET, open_dataset
from oeb.errors import OebError
from oeb.systems import (
    Adapter,
    Asking,
    Call,
    Deadline,
    Price,
    Question,
    Retry,
    Submitted,
    adapter_class,
    get,
    names,
    predict,
    predict_attempt,
    question_schema,
)
from systems import gold_vendors
from systems.conftest import FAST, KEY
from systems.fake_vendor import FakeVendor, Reply
from systems.vendors import ANSWER, SCHEMA, VENDORS, Vendor

JOBS = [v for v in VENDORS if v.polls]
SYNCHRONOUS = [v for v in VENDORS if not v.polls]


each_job_vendor = pytest.mark.parametrize("vendor", JOBS, indirect=True, ids=str)
"""The conftest's `vendor` (its happy path installed, its key set), for the job vendors only."""


def adapter(vendor: Vendor, fake: FakeVendor) -> Adapter:
    return get(vendor.system, vendor.options(fake.url))


def step(system: Adapter, pdf: Path, asking: Asking | None = None, timeout: float = 5.0) -> Any:
    """One step, its asking carried through JSON as through a jobs file."""
    if asking is not None:
        asking = Asking.from_json(json.loads(json.dumps(asking.to_json())))
    question = Question(pdf, question_schema(SCHEMA))
    return predict_attempt(system, question, timeout=timeout, policy=FAST, asking=asking)


def submitted(outcome: Any) -> Submitted:
    assert isinstance(outcome, Submitted), outcome
    return outcome


def test_job_vendors_declare_they_submit_and_the_others_do_not() -> None:
    submitting = {name for name in names() if adapter_class(name).submits}
    assert submitting == {"datalab", "reducto", "extend", "llamaextract", "azure-cu"}
    assert not adapter_class("openai/gpt-5.6-sol").submits


@each_job_vendor
def test_a_job_vendor_submits_once_then_collects_from_the_handle_alone(
    vendor: Vendor, fake: FakeVendor, pdf: Path
) -> None:
    first = submitted(step(adapter(vendor, fake), pdf))
    assert first.asking.handle == first.handle and json.loads(json.dumps(first.handle)) == first.handle
    assert len(fake.sent(*vendor.submit)) == 1
    assert not fake.sent(*vendor.finish)  # nothing polled before the handle could be written down
    assert KEY not in json.dumps(first.asking.to_json())
    record = step(adapter(vendor, fake), pdf, first.asking)  # a fresh adapter: another process
    assert isinstance(record, dict), record
    assert (record["output"], record["error"], record["cost"]["attempts"]) == (ANSWER, None, 1)
    assert "resubmitted" not in record
    assert len(fake.sent(*vendor.submit)) == 1  # collected, not bought again


@each_job_vendor
def test_a_job_the_vendor_forgot_is_submitted_again_once_and_the_record_says_so(
    vendor: Vendor, fake: FakeVendor, pdf: Path
) -> None:
    first = submitted(step(adapter(vendor, fake), pdf))
    fake.first(*vendor.finish, Reply(404, {"error": "no such job"}))
    again = submitted(step(adapter(vendor, fake), pdf, first.asking))
    assert again.asking.resubmitted == "the vendor no longer knows the job (HTTP 404)"
    assert len(fake.sent(*vendor.submit)) == 2
    record = step(adapter(vendor, fake), pdf, again.asking)
    assert (record["output"], record["resubmitted"]) == (ANSWER, "the vendor no longer knows the job (HTTP 404)")


@each_job_vendor
def test_a_job_lost_twice_is_recorded_not_bought_a_third_time(vendor: Vendor, fake: FakeVendor, pdf: Path) -> None:
    first = submitted(step(adapter(vendor, fake), pdf))
    fake.on(*vendor.finish, Reply(410, {"error": "expired"}))
    again = submitted(step(adapter(vendor, fake), pdf, first.asking))
    record = step(adapter(vendor, fake), pdf, again.asking)
    assert isinstance(record, dict)
    assert (record["error"]["status"], record["resubmitted"]) == (410, "the vendor no longer knows the job (HTTP 410)")
    assert len(fake.sent(*vendor.submit)) == 2


@each_job_vendor
def test_a_handle_that_cannot_be_used_is_submitted_again(vendor: Vendor, fake: FakeVendor, pdf: Path) -> None:
    first = submitted(step(adapter(vendor, fake), pdf))
    broken = dataclasses.replace(first.asking, handle={"unexpected": 1})
    again = submitted(step(adapter(vendor, fake), pdf, broken))
    assert again.asking.resubmitted is not None and "job handle holds no" in again.asking.resubmitted
    record = step(adapter(vendor, fake), pdf, again.asking)
    assert record["output"] == ANSWER and "job handle holds no" in record["resubmitted"]


@each_job_vendor
def test_an_unreadable_jobs_file_asks_again_recorded_as_resubmitted(
    vendor: Vendor, fake: FakeVendor, pdf: Path
) -> None:
    fresh = submitted(step(adapter(vendor, fake), pdf, Asking.unreadable("jobs/doc.json is not JSON")))
    record = step(adapter(vendor, fake), pdf, fresh.asking)
    assert record["output"] == ANSWER
    assert record["resubmitted"] == "the saved job handle could not be read: jobs/doc.json is not JSON"


@each_job_vendor
def test_the_time_limit_counts_from_the_original_submit(vendor: Vendor, fake: FakeVendor, pdf: Path) -> None:
    first = submitted(step(adapter(vendor, fake), pdf, timeout=5.0))
    late = dataclasses.replace(first.asking, started=time.time() - 6.0)  # a crash and a resume took 6 s
    record = step(adapter(vendor, fake), pdf, late, timeout=5.0)
    assert isinstance(record, dict) and record["error"]["type"] == "SystemTimeout"
    assert not fake.sent(*vendor.finish) and len(fake.sent(*vendor.submit)) == 1


@each_job_vendor
def test_a_failed_submit_comes_back_as_a_retry_with_its_status_and_retry_after(
    vendor: Vendor, fake: FakeVendor, pdf: Path
) -> None:
    fake.first(*vendor.submit, Reply(429, {"error": "slow down"}, {"Retry-After": "0.5"}))
    retry = step(adapter(vendor, fake), pdf)
    assert isinstance(retry, Retry)
    assert (retry.status, retry.retry_after, retry.wait, retry.asking.handle) == (429, 0.5, 0.5, None)
    assert isinstance(step(adapter(vendor, fake), pdf, retry.asking), Submitted)


@each_job_vendor
def test_polls_that_keep_failing_hand_back_a_retry_that_keeps_the_handle(
    vendor: Vendor, fake: FakeVendor, pdf: Path
) -> None:
    first = submitted(step(adapter(vendor, fake), pdf))
    fake.first(*vendor.finish, *[Reply(503, "unavailable")] * FAST.poll_failures)
    retry = step(adapter(vendor, fake), pdf, first.asking)
    assert isinstance(retry, Retry) and retry.status == 503
    assert retry.asking.handle == first.handle  # the job may still run: collect it again, do not buy another
    record = step(adapter(vendor, fake), pdf, retry.asking)
    assert record["output"] == ANSWER and record["cost"]["attempts"] == 2
    assert len(fake.sent(*vendor.submit)) == 1


@pytest.mark.parametrize("vendor", SYNCHRONOUS, indirect=True, ids=str)
def test_a_synchronous_vendor_answers_in_one_step(vendor: Vendor, fake: FakeVendor, pdf: Path) -> None:
    record = step(adapter(vendor, fake), pdf)
    assert isinstance(record, dict) and record["output"] == ANSWER


@pytest.mark.parametrize(
    ("saved", "why"),
    [
        ([], "a JSON object"),
        ({"attempts": 1}, "'started'"),
        ({"started": "yesterday"}, "not a time"),
        ({"started": 1.0, "attempts": -1}, "not a count"),
        ({"started": 1.0, "handle": "j1"}, "handle is str"),
        ({"started": 1.0, "failure": {"message": "x"}}, "'type'"),
    ],
)
def test_a_saved_asking_that_is_not_one_is_refused_in_one_line(saved: Any, why: str) -> None:
    with pytest.raises(OebError, match=why) as refused:
        Asking.from_json(saved)
    assert "\n" not in str(refused.value)


def test_an_asking_survives_json_whole() -> None:
    handed = Asking(started=12.5, attempts=2, handle={"job_id": "j1"}, resubmitted="lost")
    assert Asking.from_json(json.loads(json.dumps(handed.to_json()))) == handed


def test_every_system_states_a_price_or_none_with_its_source() -> None:
    for name in [*names(), "openai/gpt-5.6-sol"]:
        price = adapter_class(name).price
        assert price is None or (isinstance(price, Price) and price.source)
    assert get("datalab", {"mode": "accurate"}).published_price() != get("datalab").published_price()
    assert get("mock", {"usd": 0.02}).published_price() == Price(usd_per_document=0.02, source="mock's usd option")


def test_the_gold_fakes_play_the_job_protocols_hard_cases(fake: FakeVendor, monkeypatch: pytest.MonkeyPatch) -> None:
    """What the crash tests rely on: 429 with Retry-After on demand, jobs counted per document,
    N seconds per job, a forgotten job answering 404."""
    monkeypatch.setenv("DATALAB_API_KEY", KEY)
    dataset = open_dataset(SAMPLE_DATASET)
    vendor = gold_vendors.Datalab(fake, dataset, KEY)
    vendor.job_seconds = 0.3
    row = dataset.rows[0]
    question = Question(dataset.document(row), question_schema(dict(row.schema)))
    system = get("datalab", {"base_url": fake.url, "poll_interval": 0.05})
    vendor.throttle(1, 2.5)
    throttled = predict_attempt(system, question, timeout=10.0, policy=FAST)
    assert isinstance(throttled, Retry) and (throttled.status, throttled.retry_after) == (429, 2.5)
    first = submitted(predict_attempt(system, question, timeout=10.0, policy=FAST, asking=throttled.asking))
    assert vendor.forget(row.doc_id) == {row.doc_id}
    again = submitted(predict_attempt(system, question, timeout=10.0, policy=FAST, asking=first.asking))
    started = time.monotonic()
    record = predict_attempt(system, question, timeout=10.0, policy=FAST, asking=again.asking)
    assert isinstance(record, dict) and record["output"] == dataset.gold(row)
    assert time.monotonic() - started >= 0.25 and dict(vendor.created) == {row.doc_id: 2}
    assert record["resubmitted"] == "the vendor no longer knows the job (HTTP 404)"


def test_a_plugin_that_defines_submit_and_collect_is_a_job_vendor(pdf: Path) -> None:
    @dataclasses.dataclass(frozen=True)
    class Queue(Adapter):
        def submit(self, document: Path, schema: dict[str, Any], deadline: Deadline) -> dict[str, Any]:
            return {"ticket": document.name}

        def collect(self, handle: dict[str, Any], deadline: Deadline) -> Call:
            return Call(raw={"extraction": {"ticket": handle["ticket"]}}, job_id=handle["ticket"])

    assert Queue.submits
    first = submitted(step(Queue(), pdf))
    record = step(Queue(), pdf, first.asking)
    assert (record["output"], record["job_id"]) == ({"ticket": pdf.name}, pdf.name)
    assert predict(Queue(), Question(pdf, SCHEMA), timeout=5.0)["output"] == {"ticket": pdf.name}
