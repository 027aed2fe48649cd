"""One document end to end through `predict`: retries inside one time limit, costs over attempts, what
is recorded and what stops the run. The adapters here are real (small) adapters, not mocks."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import pytest

from oeb.systems import (
    Adapter,
    Call,
    Cost,
    Deadline,
    DialectError,
    MissingKey,
    Question,
    ReadCrashed,
    RetryPolicy,
    SystemFailed,
    predict,
    reread,
)
from systems.conftest import FAST

SCHEMA = {"type": "object", "properties": {"a": {"type": "integer"}}}


def scripted(*steps: Any, key: str | None = None) -> Adapter:
    """An adapter whose attempts follow `steps`: a `Call`, a failure to raise, or a function of the deadline."""
    queue = list(steps)

    @dataclass(frozen=True)
    class Scripted(Adapter):
        name: ClassVar[str] = "scripted"
        keys: ClassVar[tuple[str, ...]] = (key,) if key else ()

        def extract(self, document: Path, schema: dict[str, Any], deadline: Deadline) -> Call:
            step = queue.pop(0)
            if isinstance(step, BaseException):
                raise step
            return step(deadline) if callable(step) else step

    return Scripted()


def ask(adapter: Adapter, timeout: float = 5.0, policy: RetryPolicy = FAST) -> dict[str, Any]:
    return predict(adapter, Question(Path("doc.pdf"), SCHEMA), timeout=timeout, policy=policy)


def answer(value: Any = None, usd: float | None = None) -> Call:
    return Call(raw={"extraction": {"a": 1} if value is None else value}, cost=Cost(usd=usd, source="cost"))


def test_costs_of_failed_attempts_are_added_to_the_answer() -> None:
    fail = SystemFailed("HTTP 500", status=500, cost=Cost(usd=0.001, source="cost"))
    record = ask(scripted(fail, SystemFailed("HTTP 500", status=500, cost=Cost(usd=0.001)), answer(usd=0.01)))
    assert (record["output"], record["cost"]["usd"], record["cost"]["attempts"]) == ({"a": 1}, 0.012, 3)


def test_non_transient_failures_are_not_retried() -> None:
    record = ask(scripted(SystemFailed("HTTP 404", status=404, body="no such job", job_id="j9"), answer()))
    assert record["error"]["type"] == "SystemFailed"
    assert (record["error"]["status"], record["cost"]["attempts"], record["raw"], record["job_id"]) == (
        404,
        1,
        "no such job",
        "j9",
    )


def test_a_budget_spent_on_backoff_becomes_a_timeout_naming_the_last_failure() -> None:
    steps = [SystemFailed("HTTP 503 upstream", status=503)] * 4
    record = ask(scripted(*steps), timeout=0.5, policy=RetryPolicy(backoff=0.3, multiplier=1, jitter=0))
    assert record["error"]["type"] == "SystemTimeout"
    assert "spent over 2 attempts" in record["error"]["message"]
    assert record["error"]["message"].endswith("HTTP 503 upstream")
    assert record["cost"]["attempts"] == 2


def test_a_retry_after_beyond_the_budget_gives_up_at_once() -> None:
    started = time.monotonic()
    record = ask(scripted(SystemFailed("HTTP 429", status=429, retry_after=60)), timeout=5)
    assert record["error"]["type"] == "SystemTimeout"
    assert time.monotonic() - started < 1


def test_an_answer_after_the_budget_is_a_timeout_that_keeps_the_answer() -> None:
    def slow(deadline: Deadline) -> Call:
        time.sleep(0.3)
        return answer()

    record = ask(scripted(slow), timeout=0.2)
    assert record["error"]["type"] == "SystemTimeout"
    assert "past the 0.2-second limit" in record["error"]["message"]
    assert (record["output"], record["raw"]) == (None, {"extraction": {"a": 1}})


def test_an_answer_without_extraction_is_unreadable_and_keeps_raw() -> None:
    record = ask(scripted(answer([], usd=0.5)))
    assert (record["error"]["type"], record["error"]["transient"]) == ("Unreadable", False)
    assert (record["raw"], record["cost"]["usd"]) == ({"extraction": []}, 0.5)


def test_a_crashing_reader_saves_an_unread_record_and_stops() -> None:
    @dataclass(frozen=True)
    class Buggy(Adapter):
        name: ClassVar[str] = "buggy"

        def extract(self, document: Path, schema: dict[str, Any], deadline: Deadline) -> Call:
            return Call(raw={"answer": {"a": 1}})

        def read(self, raw: Any) -> dict[str, Any]:
            return raw["extraction"]  # the bug: the vendor calls it "answer"

    with pytest.raises(ReadCrashed) as stopped:
        ask(Buggy())
    record = stopped.value.record
    assert (record["unread"], record["output"], record["raw"]) == (True, None, {"answer": {"a": 1}})

    @dataclass(frozen=True)
    class Fixed(Buggy):
        def read(self, raw: Any) -> dict[str, Any]:
            return raw["answer"]

    fixed = reread(Fixed(), record)
    assert (fixed["output"], fixed["error"], "unread" in fixed) == ({"a": 1}, None, False)


def test_an_adapter_bug_is_raised_with_a_note_naming_the_adapter() -> None:
    with pytest.raises(ZeroDivisionError) as bug:
        ask(scripted(ZeroDivisionError("oops")))
    assert any("Scripted" in note for note in bug.value.__notes__)


def test_a_raw_answer_that_is_not_json_is_a_bug() -> None:
    with pytest.raises(TypeError, match="plain JSON"):
        ask(scripted(Call(raw={"when": object()})))


def test_a_missing_key_stops_before_any_call(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SCRIPTED_KEY", raising=False)
    with pytest.raises(MissingKey, match="SCRIPTED_KEY"):
        ask(scripted(key="SCRIPTED_KEY"))


def test_a_dialect_error_is_recorded_with_the_original_schema() -> None:
    @dataclass(frozen=True)
    class Picky(Adapter):
        name: ClassVar[str] = "picky"

        def prepare_schema(self, schema: dict[str, Any]) -> dict[str, Any]:
            raise DialectError("picky cannot express integers")

    record = ask(Picky())
    assert (record["error"]["type"], record["sent"], record["cost"]["attempts"]) == ("DialectError", SCHEMA, 1)


def test_the_retry_schedule_grows_caps_jitters_and_honours_retry_after() -> None:
    policy = RetryPolicy(jitter=0)
    assert [policy.delay(n) for n in (1, 2, 3, 4)] == [20, 60, 120, 120]
    assert policy.delay(1, retry_after=45) == 45
    assert [RetryPolicy().poll_delay(n) for n in range(1, 8)] == [2, 4, 8, 16, 30, 30, 30]
    jittered = [RetryPolicy(jitter=0.1).delay(1) for _ in range(50)]
    assert all(20 <= d <= 22 for d in jittered) and len(set(jittered)) > 1


@pytest.mark.parametrize(
    ("status", "message", "body", "stops"),
    [
        (401, "unauthorized", None, True),
        (402, "payment required", None, True),
        (200, "Error: insufficient credits", None, True),
        (403, "forbidden", '{"code": "insufficient_quota"}', True),
        (200, "the job failed", "subscription has expired", False),  # a body only counts for error statuses
        (429, "slow down", None, False),
    ],
)
def test_account_failures_are_told_apart_by_status_and_wording(
    status: int, message: str, body: str | None, stops: bool
) -> None:
    assert SystemFailed(message, status=status, body=body).account_failure is stops
