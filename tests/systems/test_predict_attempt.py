"""One document asked one attempt at a time (`predict_attempt`), as the run engine asks it: each
attempt may run in another process, the back-offs are waited out by the caller, and still there is
one deadline from the first attempt, one attempt count and one summed cost. Every `Asking` crosses a
pickle here, as it crosses Ray between the actors and the driver."""

from __future__ import annotations

import dataclasses
import pickle
import time
from pathlib import Path
from typing import Any

import pytest

from oeb.systems import Asking, Call, Cost, Deadline, Question, Retry, RetryPolicy, SystemFailed, predict_attempt
from oeb.systems.base import Adapter
from systems.conftest import FAST
from systems.test_predict import SCHEMA, answer, scripted

QUESTION = Question(Path("doc.pdf"), SCHEMA)


def attempt(adapter: Adapter, asking: Asking | None = None, timeout: float = 5.0) -> dict[str, Any] | Retry:
    """One attempt, its `Asking` carried through a pickle as between two Ray processes."""
    if asking is not None:
        asking = pickle.loads(pickle.dumps(asking))
    return predict_attempt(adapter, QUESTION, timeout=timeout, policy=FAST, asking=asking)


def retry(outcome: dict[str, Any] | Retry) -> Retry:
    assert isinstance(outcome, Retry), outcome
    return outcome


def test_a_transient_failure_is_handed_back_with_its_wait_attempts_and_cost() -> None:
    limited = SystemFailed("HTTP 429", status=429, retry_after=7.0, cost=Cost(usd=0.001, source="cost"))
    handed = retry(attempt(scripted(limited, answer()), timeout=10.0))
    assert handed.wait == 7.0  # Retry-After over the policy's 0.01 s
    assert (handed.status, handed.retry_after) == (429, 7.0)  # for the caller to slow the whole system
    assert (handed.asking.attempts, handed.asking.cost.usd) == (1, 0.001)
    assert handed.asking.failure is not None and handed.asking.failure.status == 429


def test_costs_and_attempts_are_summed_over_resumed_attempts() -> None:
    fail = SystemFailed("HTTP 500", status=500, cost=Cost(usd=0.001, source="cost"))
    adapter = scripted(fail, fail, answer(usd=0.01))
    first = retry(attempt(adapter))
    second = retry(attempt(adapter, first.asking))
    record = attempt(adapter, second.asking)
    assert isinstance(record, dict)
    assert (record["output"], record["cost"]["usd"], record["cost"]["attempts"]) == ({"a": 1}, 0.012, 3)


def test_the_budget_counts_from_the_first_attempt_across_resumed_attempts() -> None:
    remaining: list[float] = []

    def measured(deadline: Deadline) -> Call:
        remaining.append(deadline.remaining())
        return answer()

    adapter = scripted(SystemFailed("HTTP 503", status=503), measured)
    handed = retry(attempt(adapter, timeout=10.0))
    earlier = dataclasses.replace(handed.asking, started=handed.asking.started - 4.0)  # 4 s waited elsewhere
    record = attempt(adapter, earlier, timeout=10.0)
    assert isinstance(record, dict)
    assert 5.5 < remaining[0] <= 6.0
    assert record["cost"]["wall_s"] >= 4.0


def test_an_attempt_resumed_after_the_budget_is_spent_is_a_timeout_with_no_call() -> None:
    fail = SystemFailed("HTTP 502 bad gateway", status=502, body="<html>bad gateway</html>", cost=Cost(usd=0.002))
    adapter = scripted(fail, answer())
    handed = retry(attempt(adapter, timeout=2.0))
    late = dataclasses.replace(handed.asking, started=time.time() - 2.5)  # the wait outlived the deadline
    record = attempt(adapter, late, timeout=2.0)
    assert isinstance(record, dict)
    assert record["error"]["type"] == "SystemTimeout"
    assert record["error"]["message"].endswith("spent over 1 attempts; last failure: HTTP 502 bad gateway")
    assert (record["cost"]["attempts"], record["cost"]["usd"], record["raw"]) == (1, 0.002, "<html>bad gateway</html>")
    assert record["output"] is None
    in_time = attempt(adapter, handed.asking, timeout=2.0)  # the answer is still the adapter's next step:
    assert isinstance(in_time, dict) and in_time["output"] == {"a": 1}  # the late attempt made no call


def test_a_back_off_longer_than_what_remains_ends_at_once_as_before() -> None:
    adapter = scripted(SystemFailed("HTTP 429", status=429, retry_after=60))
    record = attempt(adapter, timeout=5.0)
    assert isinstance(record, dict) and record["error"]["type"] == "SystemTimeout"
    assert "spent over 1 attempts" in record["error"]["message"]


def test_the_last_attempt_is_recorded_not_handed_back() -> None:
    policy = RetryPolicy(retries=1, backoff=0.01, jitter=0)
    fail = SystemFailed("HTTP 503", status=503)
    adapter = scripted(fail, fail)
    first = predict_attempt(adapter, QUESTION, timeout=5.0, policy=policy)
    assert isinstance(first, Retry)
    record = predict_attempt(adapter, QUESTION, timeout=5.0, policy=policy, asking=first.asking)
    assert isinstance(record, dict)
    assert (record["error"]["status"], record["error"]["transient"], record["cost"]["attempts"]) == (503, True, 2)


def test_a_handed_back_retry_holds_no_key(monkeypatch: pytest.MonkeyPatch) -> None:
    secret = "sk-resumable-0123456789"
    monkeypatch.setenv("SCRIPTED_KEY", secret)
    echoed = SystemFailed(f"HTTP 503 for key {secret}", status=503, body={"echo": secret}, job_id="j1")
    handed = retry(attempt(scripted(echoed, key="SCRIPTED_KEY")))
    assert secret not in repr(pickle.dumps(handed))
    failure = handed.asking.failure
    assert failure is not None
    assert (failure.message, failure.body, failure.status, failure.job_id) == (
        "HTTP 503 for key [redacted]",
        {"echo": "[redacted]"},
        503,
        "j1",
    )
