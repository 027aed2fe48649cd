"""Asking one system about one document: the time limit, retries, job handles, what stops a run,
and the record that results (docs/running.md). `oeb predict` calls `predict`, which sleeps out each
back-off; the run engine calls `predict_attempt` once per step, in whatever worker it likes, waits
out the back-offs itself so that retries take their starts from its rate limit, and writes a job
vendor's handle into the run folder between submitting and collecting, so a crash loses no paid job
(docs/crash-costs.md). Both follow the same rules.
"""

from __future__ import annotations

import copy
import dataclasses
import errno
import functools
import time
from collections.abc import Callable
from typing import Any, cast

from oeb.errors import OebError
from oeb.systems._options import is_plain
from oeb.systems.base import Adapter, Call, Cost, Deadline, Question, RetryPolicy
from oeb.systems.errors import (
    AccountFailure,
    ConnectionRefused,
    DialectError,
    JobLost,
    NotStarted,
    ReadCrashed,
    SystemFailed,
    SystemTimeout,
    SystemUnreachable,
    Unreadable,
)
from oeb.systems.records import make_record, redact


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


def _refusal(adapter: Adapter) -> ConnectionRefused:
    return ConnectionRefused(
        f"{adapter.label} could not connect: the connection was refused. If it calls a server you "
        "run, start it (or pass its base_url) and resume"
    )


def stop_if_fatal(adapter: Adapter, error: SystemFailed) -> None:
    """Raise instead of recording when the run as a whole cannot go on."""
    if _refused(error):
        raise _refusal(adapter) from error
    if error.account_failure:
        message = redact(error.message, adapter.secrets())
        keys = " or ".join(adapter.key_names()) or "its key"
        raise AccountFailure(
            f"{adapter.label}: the vendor refused the account ({' '.join(message[:500].split())}). Fix the "
            f"account: check {keys} (the key, its permissions, its credits) and resume"
        ) from None


_FAILURES = {
    cls.__name__: cls for cls in (SystemFailed, SystemTimeout, SystemUnreachable, Unreadable, DialectError, JobLost)
}
_LOST_STATUSES = frozenset({404, 410})
"""What a vendor answers about a job it no longer knows: not found, gone."""


def _failure_json(failure: SystemFailed) -> dict[str, Any]:
    return {
        "type": type(failure).__name__,
        "message": failure.message,
        "status": failure.status,
        "body": failure.body,
        "sent": failure.sent,
        "job_id": failure.job_id,
        "retry_after": failure.retry_after,
    }


@dataclasses.dataclass(frozen=True)
class Asking:
    """Where one document's asking stands between two attempts. Picklable and plain-JSON-able
    (`to_json`), and its start is on the wall clock, so the next attempt may run in another process,
    on another node or after a resume and still spend the same time limit."""

    started: float
    """When the first attempt started (`time.time()`): the time limit counts from here."""
    attempts: int = 0
    cost: Cost = dataclasses.field(default_factory=Cost)
    """What every attempt so far cost."""
    failure: SystemFailed | None = None
    """The last attempt's failure, named if the time is spent before the next attempt starts."""
    handle: dict[str, Any] | None = None
    """A job vendor's submitted job, still to collect (plain JSON)."""
    resubmitted: str | None = None
    """Why the document was submitted again (its job was lost, its handle unreadable)."""
    submitted: float | None = None
    """When the vendor took the job of `handle` (`time.time()`): its first poll waits one poll
    interval from here, since a job just submitted is never done (None: unknown, poll at once)."""

    @classmethod
    def unreadable(cls, reason: str) -> Asking:
        """A fresh asking for a document whose saved handle cannot be read: it is submitted again and
        its record says `resubmitted` with `reason`. The time limit starts now (the first start is lost)."""
        return cls(started=time.time(), resubmitted=f"the saved job handle could not be read: {reason}")

    def to_json(self) -> dict[str, Any]:
        """Plain JSON, for a run folder's `jobs/<id>.json`; `from_json` reads it back."""
        return {
            "started": self.started,
            "attempts": self.attempts,
            "cost": dataclasses.asdict(self.cost),
            "failure": None if self.failure is None else _failure_json(self.failure),
            "handle": self.handle,
            "resubmitted": self.resubmitted,
            "submitted": self.submitted,
        }

    @classmethod
    def from_json(cls, value: Any) -> Asking:
        """The asking `to_json` wrote; an `OebError` naming what is wrong for anything else."""
        if not isinstance(value, dict):
            raise OebError(f"a saved asking is a JSON object, not {type(value).__name__}")
        try:
            started, attempts = value["started"], value.get("attempts", 0)
            if not _is_time(started):
                raise TypeError(f"started is {started!r}, not a time")
            if not isinstance(attempts, int) or isinstance(attempts, bool) or attempts < 0:
                raise TypeError(f"attempts is {attempts!r}, not a count")
            handle, resubmitted = value.get("handle"), value.get("resubmitted")
            if handle is not None and not (isinstance(handle, dict) and is_plain(handle)):
                raise TypeError(f"handle is {type(handle).__name__}, not a JSON object")
            if resubmitted is not None and not isinstance(resubmitted, str):
                raise TypeError("resubmitted is not text")
            submitted = value.get("submitted")
            if submitted is not None and not _is_time(submitted):
                raise TypeError(f"submitted is {submitted!r}, not a time")
            cost = Cost(**(value.get("cost") or {}))
            saved = value.get("failure")
            failure = None
            if saved is not None:
                failure = _FAILURES.get(saved["type"], SystemFailed)(
                    str(saved["message"]),
                    **{k: saved.get(k) for k in ("status", "body", "sent", "job_id", "retry_after")},
                )
        except (KeyError, TypeError, ValueError) as error:
            raise OebError(f"a saved asking cannot be read ({error})") from None
        return cls(float(started), attempts, cost, failure, handle, resubmitted, submitted)


def _is_time(value: Any) -> bool:
    """Whether a saved value is a Unix time (a number; JSON's true and false are not)."""
    return isinstance(value, int | float) and not isinstance(value, bool)


@dataclasses.dataclass(frozen=True)
class Retry:
    """A transient failure worth asking again about: after `wait` seconds, passing `asking` back.

    `status` is the failure's HTTP status (429 for rate limiting) and `retry_after` the vendor's
    `Retry-After` seconds (None if it sent none), so the caller can slow the whole system down."""

    wait: float
    asking: Asking
    status: int | None = None
    retry_after: float | None = None


@dataclasses.dataclass(frozen=True)
class Submitted:
    """A job vendor took the document: write `handle` down, then pass `asking` (which holds it) to
    `predict_attempt` to collect the answer, here or in any other process."""

    handle: dict[str, Any]
    asking: Asking


def _spent(deadline: Deadline, attempts: int, failure: SystemFailed) -> SystemTimeout:
    spent = SystemTimeout(
        f"the {deadline.seconds:g}-second limit was spent over {attempts} attempts; last failure: {failure.message}",
        body=failure.body,
        sent=failure.sent,
        job_id=failure.job_id,
    )
    spent.__cause__ = failure
    return spent


Step = tuple[Call | None, SystemFailed | None, Asking] | Retry | Submitted


def _lost(failure: SystemFailed) -> str | None:
    """Why a failed collect means the vendor no longer has the job, or None."""
    if isinstance(failure, JobLost):
        return failure.message
    if failure.status in _LOST_STATUSES:
        return f"the vendor no longer knows the job (HTTP {failure.status})"
    return None


def _ask(adapter: Adapter, question: Question, deadline: Deadline, asking: Asking) -> Step:
    """The next step, unless the time was spent waiting for it: a synchronous call, a job's submit or
    its collect. Returns the answer or the final failure (with the attempts and their summed cost), a
    `Submitted` job, or a `Retry` when a transient failure leaves time for its back-off."""
    if asking.failure is not None and deadline.expired():
        return None, _spent(deadline, asking.attempts, asking.failure), asking
    collecting = asking.handle is not None and type(adapter).submits
    # Collecting a job just submitted is the same attempt; collecting again after a failure is another.
    attempt = asking.attempts if collecting and asking.failure is None else asking.attempts + 1
    deadline.attempt = max(attempt, 1)
    deadline.submitted = asking.submitted if collecting else None
    try:
        if not (type(adapter).uploads_first and not collecting):
            deadline.start()
        if collecting:
            assert asking.handle is not None
            answer = adapter.collect_question(question, asking.handle, deadline)
        elif type(adapter).submits:
            handle = adapter.submit_question(question, deadline)
            if not (isinstance(handle, dict) and is_plain(handle)):
                raise TypeError(f"{type(adapter).__name__}.submit returned a handle that is not a JSON object")
            if not deadline.begun:
                raise TypeError(f"{type(adapter).__name__} uploads first but its submit never called deadline.start()")
            taken = dataclasses.replace(asking, attempts=attempt, failure=None, handle=handle, submitted=time.time())
            return Submitted(handle, taken)
        else:
            answer = adapter.call(question, deadline)
    except SystemFailed as failure:
        stop_if_fatal(adapter, failure)
        cost = asking.cost + (failure.cost or Cost())
        reason = _lost(failure) if collecting else None
        if reason is not None and asking.resubmitted is None and not deadline.expired():
            fresh = dataclasses.replace(asking, cost=cost, failure=None, handle=None, resubmitted=reason)
            return _ask(adapter, question, deadline, fresh)  # submits again at once, once
        # A job whose polls failed for a while may still be running: keep its handle to collect again.
        keep = asking.handle if collecting and failure.transient else None
        submitted = asking.submitted if keep is not None else None
        asking = Asking(asking.started, max(attempt, 1), cost, failure, keep, asking.resubmitted, submitted)
        if not failure.transient or attempt > deadline.policy.retries:
            return None, failure, asking
        wait = deadline.policy.delay(attempt, failure.retry_after)
        if wait >= deadline.remaining():
            return None, _spent(deadline, attempt, failure), asking
        return Retry(wait, asking, failure.status, failure.retry_after)
    except NotStarted:
        raise
    except Exception as bug:
        if _refused(bug):
            raise _refusal(adapter) from bug
        bug.add_note(f"(in {type(adapter).__name__} while predicting {question.document})")
        raise
    if not isinstance(answer, Call):
        raise TypeError(f"{type(adapter).__name__}.call returned {type(answer).__name__}, not a Call")
    if not is_plain(answer.raw):
        raise TypeError(f"{type(adapter).__name__} returned a raw answer that is not plain JSON")
    settled = dataclasses.replace(
        asking, attempts=max(attempt, 1), cost=asking.cost + answer.cost, handle=None, submitted=None
    )
    return answer, None, settled


def _later(outcome: Step, seconds: float) -> Step:
    """`outcome` with its asking's start `seconds` later."""
    if isinstance(outcome, Retry | Submitted):
        return dataclasses.replace(outcome, asking=_started_later(outcome.asking, seconds))
    answer, failure, asking = outcome
    return answer, failure, _started_later(asking, seconds)


def _started_later(asking: Asking, seconds: float) -> Asking:
    return dataclasses.replace(asking, started=asking.started + seconds)


def _redacted(asking: Asking, secrets: list[str]) -> Asking:
    """`asking` with no key in its failure's message, body or schema, nor in its handle, to be handed
    out of this layer."""
    handle = None if asking.handle is None else redact(asking.handle, secrets)
    if asking.failure is None:
        return dataclasses.replace(asking, handle=handle)
    clean = copy.copy(asking.failure)
    clean.args = (redact(clean.message, secrets),)
    clean.body, clean.sent = redact(clean.body, secrets), redact(clean.sent, secrets)
    return dataclasses.replace(asking, failure=clean, handle=handle)


def predict(
    adapter: Adapter,
    question: Question,
    *,
    timeout: float = 1800.0,
    policy: RetryPolicy | None = None,
) -> dict[str, Any]:
    """Ask `adapter` about one document within `timeout` seconds; return its record.

    The record (`system, options, package, question, output, raw, sent, error, cost, job_id,
    timeout_s, captured_at`, and `resubmitted` when a lost job was submitted again) has `output` set
    on success and `error` set on a recorded failure. Transient failures are retried per `policy`
    (default: the adapter's) inside the one time limit, sleeping out each back-off here; a job
    vendor's job is submitted, then collected, in this process.
    Raises a `RunStopped` for a missing key, an account failure, a refused connection or a crashed
    reader (`ReadCrashed.record` is then the unread record to save); any other exception is a bug.
    The schema is sent as given: apply `question_schema` first to ask what a run asks.
    """
    outcome = predict_attempt(adapter, question, timeout=timeout, policy=policy)
    while not isinstance(outcome, dict):
        if isinstance(outcome, Retry):
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
    gate: Callable[[], None] | None = None,
) -> dict[str, Any] | Retry | Submitted:
    """One step of `predict`: the record, a `Retry` to wait out, or a job vendor's `Submitted` job;
    pass the `asking` of either back to go on.

    For a caller that schedules attempts itself (the run engine books each retry's start against
    its rate limit, writes each handle into the run folder before collecting it, then runs each step
    in any worker). Without a handle, a job vendor only submits; with one (`asking.handle`), it
    collects that job, and a job the vendor no longer knows (404, 410, `JobLost`) is submitted again
    at once and recorded as `resubmitted`. The time limit counts from the first attempt's start,
    waits, crashes and resumes included: an attempt resumed after it is spent ends as
    `SystemTimeout` with no call. `gate` is the caller's wait for a slot, made right before the
    step's paid request (after a job's upload) and not counted in the limit; it raises `NotStarted`
    to end the step unasked. Raises as `predict` does; what it hands back holds no key.
    """
    adapter.check_keys()
    secrets = adapter.secrets()
    now = time.time()
    asking = asking or Asking(started=now)
    deadline = Deadline(timeout, policy=policy or adapter.retry, spent=now - asking.started)
    deadline.gate = gate
    outcome = _ask(adapter, question, deadline, asking)
    if deadline.waited:  # the wait at the gate is not the document's time: later attempts skip it too
        outcome = _later(outcome, deadline.waited)
    if isinstance(outcome, Retry):
        return dataclasses.replace(outcome, asking=_redacted(outcome.asking, secrets))
    if isinstance(outcome, Submitted):
        clean = _redacted(outcome.asking, secrets)
        assert clean.handle is not None
        return Submitted(clean.handle, clean)
    answer, failure, asking = outcome
    wall_s = deadline.elapsed()
    if answer is not None and deadline.expired():
        failure = SystemTimeout(
            f"answered after {wall_s:.1f} s, past the {deadline.seconds:g}-second limit", job_id=answer.job_id
        )
    return _settled(adapter, question, asking, answer, failure, wall_s=wall_s, timeout=timeout)


def settle(
    adapter: Adapter,
    question: Question,
    asking: Asking,
    answer: Call | SystemFailed,
    *,
    timeout: float,
    batch_id: str | None,
) -> dict[str, Any]:
    """The record of a document answered in batch `batch_id` (`answer` its result, with the schema sent and
    the batch price), read as `predict_attempt` reads an answer; its attempts and their cost are
    `asking`'s plus this one. Raises `ReadCrashed` as `predict_attempt` does."""
    asking = dataclasses.replace(asking, attempts=asking.attempts + 1, cost=asking.cost + (answer.cost or Cost()))
    wall_s = time.time() - asking.started
    called, failed = (answer, None) if isinstance(answer, Call) else (None, answer)
    record = _settled(adapter, question, asking, called, failed, wall_s=wall_s, timeout=timeout)
    if batch_id is not None:  # None: it never went into a batch (too large for one)
        record["batch_id"] = batch_id
    return record


def _settled(
    adapter: Adapter,
    question: Question,
    asking: Asking,
    answer: Call | None,
    failure: SystemFailed | None,
    *,
    wall_s: float,
    timeout: float,
) -> dict[str, Any]:
    """The record of an attempt that ended: the answer read (unless a failure is already known),
    every key redacted; `ReadCrashed` with the unread record when the reader crashes."""
    secrets = adapter.secrets()
    output = None
    made = functools.partial(
        make_record,
        adapter,
        question,
        cost=asking.cost,
        wall_s=wall_s,
        timeout=timeout,
        attempts=asking.attempts,
        resubmitted=asking.resubmitted,
    )
    if answer is not None and failure is None:
        try:
            output = adapter.read(answer.raw)
        except SystemFailed as unreadable:
            failure = Unreadable(unreadable.message)
            failure.__cause__ = unreadable
        except Exception as bug:
            record = made(answer, None, None)
            record["unread"] = True
            bug.add_note(f"(in {type(adapter).__name__}.read; the answer is saved and read again on resume)")
            message = redact(f"{type(bug).__name__}: {bug}", secrets)  # a reader may quote the raw answer
            raise ReadCrashed(
                f"{adapter.label} could not read its answer for {question.document.name} "
                f"({message}); the answer is kept and will be read again on resume",
                redact(record, secrets),
            ) from bug
        if not is_plain(output):
            raise TypeError(f"{type(adapter).__name__}.read returned something that is not plain JSON")
    record = made(answer, failure, output)
    return cast(dict[str, Any], redact(record, secrets))
