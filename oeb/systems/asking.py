"""Asking one system about one document: the time budget, retries, what stops a run, and the
record that results (HARNESS.md 3.3 and 3.5). `oeb predict` calls `predict`, which sleeps out each
back-off; the run engine calls `predict_attempt` once per attempt, in whatever worker it likes, and
waits out the back-offs itself so that retries take their starts from its rate limit. Both follow
the same rules.
"""

from __future__ import annotations

import copy
import dataclasses
import datetime
import errno
import functools
import importlib.metadata
import json
import time
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


@dataclasses.dataclass(frozen=True)
class Asking:
    """Where one document's asking stands between two attempts. Picklable, and its start is on the
    wall clock, so the next attempt may run in another process or on another node and still spend the
    same budget (HARNESS.md 3.3.1)."""

    started: float
    """When the first attempt started (`time.time()`): the budget counts from here."""
    attempts: int = 0
    cost: Cost = dataclasses.field(default_factory=Cost)
    """What every attempt so far cost."""
    failure: SystemFailed | None = None
    """The last attempt's failure, named if the budget is spent before the next attempt starts."""


@dataclasses.dataclass(frozen=True)
class Retry:
    """A transient failure worth asking again about: after `wait` seconds, passing `asking` back."""

    wait: float
    asking: Asking


def _spent(budget: Budget, attempts: int, failure: SystemFailed) -> SystemTimeout:
    spent = SystemTimeout(
        f"the {budget.seconds:g}-second budget was spent over {attempts} attempts; last failure: {failure.message}",
        body=failure.body,
        sent=failure.sent,
        job_id=failure.job_id,
    )
    spent.__cause__ = failure
    return spent


def _ask(
    adapter: Adapter, question: Question, budget: Budget, asking: Asking
) -> tuple[Call | None, SystemFailed | None, Asking] | Retry:
    """The next attempt, unless the budget was spent waiting for it: the answer or the final failure
    (with the attempts and their summed cost), or a `Retry` when a transient failure leaves budget
    for its back-off."""
    if asking.failure is not None and budget.expired():
        return None, _spent(budget, asking.attempts, asking.failure), asking
    attempt = asking.attempts + 1
    budget.attempt = attempt
    try:
        answer = adapter.call(question, budget)
    except SystemFailed as failure:
        _stop(adapter, failure)
        asking = Asking(asking.started, attempt, asking.cost + (failure.cost or Cost()), failure)
        if not failure.transient or attempt > budget.policy.retries:
            return None, failure, asking
        wait = budget.policy.delay(attempt, failure.retry_after)
        if wait >= budget.remaining():
            return None, _spent(budget, attempt, failure), asking
        return Retry(wait, asking)
    except Exception as bug:
        if _refused(bug):
            raise _refusal(adapter) from bug
        bug.add_note(f"(in {type(adapter).__name__} while predicting {question.document})")
        raise
    if not isinstance(answer, Call):
        raise TypeError(f"{type(adapter).__name__}.call returned {type(answer).__name__}, not a Call")
    if not is_plain(answer.raw):
        raise TypeError(f"{type(adapter).__name__} returned a raw answer that is not plain JSON")
    return answer, None, dataclasses.replace(asking, attempts=attempt, cost=asking.cost + answer.cost)


def _cost(cost: Cost, wall_s: float, attempts: int) -> dict[str, Any]:
    return {**dataclasses.asdict(cost), "wall_s": round(wall_s, 1), "attempts": attempts}


def _redacted(asking: Asking, secrets: list[str]) -> Asking:
    """`asking` with no key in its failure's message, body or schema, to be handed out of this layer."""
    if asking.failure is None:
        return asking
    clean = copy.copy(asking.failure)
    clean.args = (_redact(clean.message, secrets),)
    clean.body, clean.sent = _redact(clean.body, secrets), _redact(clean.sent, secrets)
    return dataclasses.replace(asking, failure=clean)


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
    Transient failures are retried per `policy` (default: the adapter's) inside the one budget,
    sleeping out each back-off here.
    Raises a `RunStopped` for a missing key, an account failure, a refused connection or a crashed
    reader (`ReadCrashed.record` is then the unread record to save); any other exception is a bug.
    The schema is sent as given: apply `question_schema` first to ask what a run asks.
    """
    outcome = predict_attempt(adapter, question, timeout=timeout, policy=policy)
    while isinstance(outcome, Retry):
        time.sleep(outcome.wait)
        outcome = predict_attempt(adapter, question, timeout=timeout, policy=policy, asking=outcome.asking)
    return outcome


def predict_attempt(
    adapter: Adapter,
    question: Question,
    *,
    timeout: float = 1800.0,
    policy: RetryPolicy | None = None,
    asking: Asking | None = None,
) -> dict[str, Any] | Retry:
    """One attempt of `predict`: the record, or a `Retry` to wait out and pass back as `asking`.

    For a caller that schedules attempts itself (the run engine books each retry's start against
    its rate limit, then runs it in any worker). The budget counts from the first attempt's start,
    waits included: an attempt resumed after it is spent ends as `SystemTimeout` with no call. Raises
    as `predict` does; the `Retry` holds no key.
    """
    adapter.check_keys()
    secrets = adapter.secrets()
    now = time.time()
    asking = asking or Asking(started=now)
    budget = Budget(timeout, policy=policy or adapter.retry, spent=now - asking.started)
    outcome = _ask(adapter, question, budget, asking)
    if isinstance(outcome, Retry):
        return Retry(outcome.wait, _redacted(outcome.asking, secrets))
    answer, failure, asking = outcome
    cost, attempts = asking.cost, asking.attempts
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
