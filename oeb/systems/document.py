"""Asking one system about one document: the time budget, retries, what stops a run, and the
record that results (HARNESS.md 3.3 and 3.5). The run engine calls `predict` once per document, in
whatever worker it likes; `oeb predict` calls it too, so both follow the same rules.
"""

from __future__ import annotations

import dataclasses
import datetime
import errno
import functools
import importlib.metadata
import json
import traceback
from collections.abc import Iterator
from typing import Any

from oeb.systems._options import is_plain
from oeb.systems.base import Adapter, Budget, Call, Cost, Question, RetryPolicy
from oeb.systems.errors import (
    AccountFailure,
    ConnectionRefused,
    ReadCrashed,
    SystemFailed,
    SystemTimeout,
    Unreadable,
)

CAP = 4000


def _cap(text: str) -> str:
    if len(text) <= CAP:
        return text
    return f"{text[:CAP]}... [{len(text) - CAP} more characters]"


def _refused(error: BaseException) -> bool:
    """Whether a refused connection is anywhere in the chain (by type or errno, never by text)."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, ConnectionRefusedError) or getattr(current, "errno", None) == errno.ECONNREFUSED:
            return True
        current = current.__cause__ or current.__context__
    return False


@functools.cache
def _package(module: str) -> str | None:
    """`"<distribution> <version>"` of the installed package a module comes from."""
    top = module.split(".")[0]

    def candidates() -> Iterator[str]:
        yield top  # most distributions are named after their module; the scan below is slow
        yield from importlib.metadata.packages_distributions().get(top, [])

    for name in candidates():
        try:
            dist = importlib.metadata.distribution(name)
        except importlib.metadata.PackageNotFoundError:
            continue
        return f"{dist.metadata['Name']} {dist.version}"
    return None


MIN_SECRET = 8
"""Shorter values (a dummy `x`) would match ordinary text and corrupt records; real keys are longer."""


def _redact(value: Any, secrets: list[str]) -> Any:
    """`value` with every secret replaced, wherever it hides (messages, bodies, tracebacks)."""
    secrets = [s for s in secrets if len(s) >= MIN_SECRET]
    if not secrets:
        return value
    text = json.dumps(value, ensure_ascii=False)
    for secret in secrets:
        text = text.replace(json.dumps(secret, ensure_ascii=False)[1:-1], "[redacted]")
    return json.loads(text)


def _refusal(adapter: Adapter) -> ConnectionRefused:
    return ConnectionRefused(
        f"{adapter.label} could not connect: the connection was refused. If it calls a server you "
        "run, start it (or pass its base_url) and resume"
    )


def _stop(adapter: Adapter, error: SystemFailed) -> None:
    """Raise instead of recording when the run as a whole cannot go on."""
    if _refused(error):
        raise _refusal(adapter) from error
    if error.account_failure:
        message = _redact(error.message, adapter.secrets())
        raise AccountFailure(
            f"{adapter.label}: the vendor refused the account ({message[:500]}). Fix the account "
            "(its key, its credits) and resume"
        ) from None


def _error(failure: SystemFailed) -> dict[str, Any]:
    return {
        "type": type(failure).__name__,
        "status": failure.status,
        "transient": failure.transient,
        "message": _cap(failure.message),
        "traceback": _cap("".join(traceback.format_exception(failure))),
    }


def _ask(adapter: Adapter, question: Question, budget: Budget) -> tuple[Call | None, SystemFailed | None, Cost, int]:
    """Attempts until an answer, a final failure, or the budget is spent; returns the answer or
    failure, the summed cost of every attempt, and the number of attempts."""
    policy = budget.policy
    cost = Cost()
    attempt = 0
    while True:
        attempt += 1
        budget.attempt = attempt
        try:
            answer = adapter.call(question, budget)
        except SystemFailed as failure:
            _stop(adapter, failure)
            cost = cost + (failure.cost or Cost())
            if not failure.transient or attempt > policy.retries:
                return None, failure, cost, attempt
            wait = policy.delay(attempt, failure.retry_after)
            if wait >= budget.remaining():
                spent = SystemTimeout(
                    f"the {budget.seconds:g}-second budget was spent over {attempt} attempts; "
                    f"last failure: {failure.message}",
                    body=failure.body,
                    sent=failure.sent,
                    job_id=failure.job_id,
                )
                spent.__cause__ = failure
                return None, spent, cost, attempt
            budget.sleep(wait)
        except Exception as bug:
            if _refused(bug):
                raise _refusal(adapter) from bug
            bug.add_note(f"(in {type(adapter).__name__} while predicting {question.document})")
            raise
        else:
            if not isinstance(answer, Call):
                raise TypeError(f"{type(adapter).__name__}.call returned {type(answer).__name__}, not a Call")
            if not is_plain(answer.raw):
                raise TypeError(f"{type(adapter).__name__} returned a raw answer that is not plain JSON")
            return answer, None, cost + answer.cost, attempt


def _cost(cost: Cost, wall_s: float, attempts: int) -> dict[str, Any]:
    return {**dataclasses.asdict(cost), "wall_s": round(wall_s, 1), "attempts": attempts}


def predict(
    adapter: Adapter,
    question: Question,
    *,
    timeout: float = 1800.0,
    policy: RetryPolicy | None = None,
) -> dict[str, Any]:
    """Ask `adapter` about one document within `timeout` seconds; return its record.

    The record (HARNESS.md 3.5: `system, options, package, output, raw, sent, error, cost, job_id,
    timeout_s, captured_at`) has `output` set on success and `error` set on a recorded failure.
    Transient failures are retried per `policy` (default: the adapter's) inside the one budget.
    Raises a `StopRun` for a missing key, an account failure, a refused connection or a crashed
    reader (`ReadCrashed.record` is then the unread record to save); any other exception is a bug.
    The schema is sent as given: apply `question_schema` first to ask what a run asks.
    """
    adapter.check_keys()
    secrets = adapter.secrets()
    budget = Budget(timeout, policy=policy or adapter.retry)
    answer, failure, cost, attempts = _ask(adapter, question, budget)
    wall_s = budget.elapsed()
    output = None
    if answer is not None:
        if budget.expired():
            failure = SystemTimeout(
                f"answered after {wall_s:.1f} s, past the {budget.seconds:g}-second budget",
                job_id=answer.job_id,
            )
        else:
            try:
                output = adapter.read(answer.raw)
            except SystemFailed as unreadable:
                failure = Unreadable(unreadable.message)
                failure.__cause__ = unreadable
            except Exception as bug:
                record = _record(adapter, answer, None, None, cost, wall_s, attempts, timeout)
                record["unread"] = True
                bug.add_note(f"(in {type(adapter).__name__}.read; the answer is saved and read again on resume)")
                message = _redact(f"{type(bug).__name__}: {bug}", secrets)  # a reader may quote the raw answer
                raise ReadCrashed(
                    f"{adapter.label} could not read its answer for {question.document.name} "
                    f"({message}); the answer is kept and will be read again on resume",
                    _redact(record, secrets),
                ) from bug
            if not is_plain(output):
                raise TypeError(f"{type(adapter).__name__}.read returned something that is not plain JSON")
    record = _record(adapter, answer, failure, output, cost, wall_s, attempts, timeout)
    return _redact(record, secrets)


def _record(
    adapter: Adapter,
    answer: Call | None,
    failure: SystemFailed | None,
    output: dict[str, Any] | None,
    cost: Cost,
    wall_s: float,
    attempts: int,
    timeout: float,
) -> dict[str, Any]:
    """The record: what came back (the answer, else the failure's body) and how it went."""
    origin = answer or failure
    raw = answer.raw if answer is not None else origin.body
    return {
        "system": adapter.name,
        "options": adapter.options(),
        "package": _package(type(adapter).__module__),
        "output": output if failure is None else None,
        "raw": raw,
        "sent": origin.sent,
        "error": _error(failure) if failure is not None else None,
        "cost": _cost(cost, wall_s, attempts),
        "job_id": origin.job_id,
        "timeout_s": timeout,
        "captured_at": datetime.datetime.now().strftime("%Y-%m-%dT%H:%M:%S"),
    }


def reread(adapter: Adapter, record: dict[str, Any]) -> dict[str, Any]:
    """The record re-read from its stored `raw` with no new call (after a reader was fixed).

    Only answered records change: an unread one, a success, or an `Unreadable` failure.
    """
    error = record.get("error")
    if error is not None and error.get("type") != "Unreadable":
        return record
    updated = {k: v for k, v in record.items() if k != "unread"}
    try:
        updated["output"], updated["error"] = adapter.read(record["raw"]), None
    except SystemFailed as unreadable:
        failure = Unreadable(unreadable.message)
        updated["output"], updated["error"] = None, _error(failure)
    return updated
