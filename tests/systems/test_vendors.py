"""Every vendor adapter, driven against its fake server through the whole predict path: the same
scenarios for all, so a behaviour that differs between vendors shows up as one failing case."""

from __future__ import annotations

import hashlib
import json

import pytest

from oeb.systems import AccountFailure, ConnectionRefused, question_schema
from systems.conftest import KEY, PDF, Ask
from systems.fake_vendor import FakeVendor, Reply, Request, closed_url
from systems.vendors import ANSWER, SCHEMA, Vendor

NO_RETRY = {"x-should-retry": "false"}  # the OpenAI SDK would otherwise retry on its own


def test_answer_is_recorded_with_output_cost_and_one_attempt(vendor: Vendor, fake: FakeVendor, ask: Ask) -> None:
    record = ask(vendor)
    assert record["error"] is None
    assert record["output"] == ANSWER
    assert record["cost"]["attempts"] == 1
    assert {k: record["cost"][k] for k in vendor.cost} == vendor.cost
    assert list(record) == [
        "system", "options", "package", "question", "output", "raw", "sent", "error", "cost", "job_id", "timeout_s",
        "captured_at",
    ]  # fmt: skip
    assert record["package"].startswith("oeb ")
    assert record["question"] == {
        "pdf_sha256": hashlib.sha256(PDF).hexdigest(),
        "schema_sha256": hashlib.sha256(
            json.dumps(question_schema(SCHEMA), sort_keys=True, separators=(",", ":")).encode()
        ).hexdigest(),
        "adapter": record["package"],
    }


def test_polls_until_the_job_is_done(vendor: Vendor, fake: FakeVendor, ask: Ask) -> None:
    if not vendor.polls:
        pytest.skip("answers in one request")
    record = ask(vendor)
    assert record["error"] is None
    assert len(fake.sent(*vendor.finish)) == 2


def test_429_is_retried_after_its_retry_after(vendor: Vendor, fake: FakeVendor, ask: Ask) -> None:
    fake.first(*vendor.submit, Reply(429, {"error": "slow down"}, {"Retry-After": "0.2", **NO_RETRY}))
    record = ask(vendor)
    assert record["error"] is None
    assert record["cost"]["attempts"] == 2
    assert len(fake.sent(*vendor.submit)) == 2
    assert record["cost"]["wall_s"] >= 0.2


def test_5xx_then_success_is_a_success_on_attempt_2(vendor: Vendor, fake: FakeVendor, ask: Ask) -> None:
    fake.first(*vendor.submit, Reply(503, "upstream unavailable", NO_RETRY))
    record = ask(vendor)
    assert (record["error"], record["output"], record["cost"]["attempts"]) == (None, ANSWER, 2)


def test_persistent_5xx_is_recorded_transient_after_all_attempts(vendor: Vendor, fake: FakeVendor, ask: Ask) -> None:
    fake.on(*vendor.submit, Reply(502, "bad gateway", NO_RETRY))
    record = ask(vendor)
    assert record["error"]["type"] == "SystemFailed"
    assert (record["error"]["status"], record["error"]["transient"], record["cost"]["attempts"]) == (502, True, 4)
    assert record["raw"] == ("bad gateway" if vendor.error_bodies else None)
    assert record["output"] is None


def test_a_failed_poll_is_retried_without_resubmitting(vendor: Vendor, fake: FakeVendor, ask: Ask) -> None:
    if not vendor.polls:
        pytest.skip("answers in one request")
    fake.first(*vendor.finish, Reply(503, "busy"), Reply(200, {"status": "still"}), Reply(500, "oops"))
    record = ask(vendor)
    assert record["error"] is None
    assert record["cost"]["attempts"] == 1
    assert len(fake.sent(*vendor.submit)) == 1  # the paid job was never abandoned


def test_401_stops_the_run_without_a_record(vendor: Vendor, fake: FakeVendor, ask: Ask) -> None:
    fake.first(*vendor.submit, Reply(401, {"error": {"message": f"invalid key {KEY}"}}, NO_RETRY))
    with pytest.raises(AccountFailure) as stopped:
        ask(vendor)
    assert "fix the account" in str(stopped.value).lower()
    assert KEY not in str(stopped.value)


def test_a_refusal_is_final_and_recorded(vendor: Vendor, fake: FakeVendor, ask: Ask) -> None:
    fake.first(*vendor.submit, Reply(400, {"error": "schema rejected"}, NO_RETRY))
    record = ask(vendor)
    assert (record["error"]["type"], record["error"]["status"], record["error"]["transient"]) == (
        "SystemFailed",
        400,
        False,
    )
    assert record["cost"]["attempts"] == 1
    assert record["sent"] is not None  # what was sent is kept on failures too


def test_a_failed_job_is_recorded_as_the_vendor_reported_it(vendor: Vendor, fake: FakeVendor, ask: Ask) -> None:
    fake.on(*vendor.finish, vendor.failed)
    record = ask(vendor)
    assert (record["error"]["type"], record["error"]["status"]) == vendor.failed_as
    assert record["output"] is None
    assert record["cost"]["attempts"] == 1


def test_a_malformed_answer_is_recorded_not_raised(vendor: Vendor, fake: FakeVendor, ask: Ask) -> None:
    fake.on(*vendor.finish, vendor.malformed)
    record = ask(vendor)
    assert record["error"]["type"] == vendor.malformed_as
    assert record["error"]["transient"] is False
    assert record["output"] is None


def test_a_slow_answer_past_the_budget_is_a_timeout(vendor: Vendor, fake: FakeVendor, ask: Ask) -> None:
    fake.first(*vendor.submit, Reply(200, {}, delay=0.8))
    record = ask(vendor, timeout=0.3)
    assert record["error"]["type"] == "SystemTimeout"
    assert record["output"] is None
    assert record["cost"]["wall_s"] < 2.5


def test_a_job_that_never_finishes_times_out_naming_it(vendor: Vendor, fake: FakeVendor, ask: Ask) -> None:
    if not vendor.polls:
        pytest.skip("answers in one request")
    fake.on(*vendor.finish, Reply(200, {"status": "processing", "state": "Pending"}))
    record = ask(vendor, timeout=0.3)
    assert record["error"]["type"] == "SystemTimeout"
    assert "0.3-second" in record["error"]["message"]
    assert "polls" in record["error"]["message"]
    assert record["job_id"] is None


def test_a_reset_connection_is_unreachable(vendor: Vendor, fake: FakeVendor, ask: Ask) -> None:
    fake.on(*vendor.submit, Reply(reset=True))
    record = ask(vendor)
    assert record["error"]["type"] == "SystemUnreachable"


def test_a_refused_connection_stops_the_run(vendor: Vendor, fake: FakeVendor, ask: Ask) -> None:
    with pytest.raises(ConnectionRefused, match="start it"):
        ask(vendor, **vendor.options(closed_url()))


def test_the_api_key_is_in_no_record(vendor: Vendor, fake: FakeVendor, ask: Ask) -> None:
    """The sentinel key reaches the vendor, but no record or message holds it, even when the
    vendor echoes the request headers back in an error body."""

    def echoing(request: Request) -> Reply:
        return Reply(400, {"headers": request.headers}, NO_RETRY)

    fake.first(*vendor.submit, echoing)
    failed = ask(vendor)
    succeeded = ask(vendor)
    assert any(KEY in json.dumps(r.headers) for r in fake.requests)
    for record in (failed, succeeded):
        assert KEY not in json.dumps(record)
    if vendor.error_bodies:
        assert "[redacted]" in json.dumps(failed["raw"])
