"""The predict stage on Ray: per system a pool of actors holding it, and ONE driver loop for every
system of the run, booking each call's start (`oeb.run.predict.limiter`) and saving each document's record
the moment it comes back.

Each actor holds one adapter (rebuilt from its name and options) and answers several documents at
once on threads; a call reads its document, waits for its booked start, then makes one attempt
(`oeb.systems.predict_attempt`). A system's only actor is also given a call ahead of a free slot: it
starts the moment a slot frees, in the order the calls came, spaced from the actor's previous start
by the pace (`oeb.run.predict.actors`); a job vendor's upload is made while it waits (the step's gate).
Each system keeps its own start schedule, in-flight cap, retries and stop (`oeb.run.predict.system_run`); the driver
waits on the calls of all of them at once (one `ray.wait`), so ten systems run side by side in one
process and none waits for another. A job vendor's actor writes
the job's handle into the run folder the moment the vendor answers (`oeb.run.predict.jobs`), then collects
the job in the same call. A transient failure comes back as a `Retry`: the driver keeps it, holding
no slot of the system's in-flight cap, until its back-off is over, then books its start from the
same schedule (before any fresh document) and gives it to any actor of that system, so retries count
against the rate limit too. The time budget (counted from the first attempt) and the retry policy
stay the systems layer's. The driver is the only writer of records, and keeps a record only until it
is saved; the writes themselves run on threads of their own (`oeb.run.predict.saver`), so the loop never waits on a
disk or an object store. A `RunStopped` of one system (a 402, a refused key) ends that system after
its calls already in flight are collected and saved (they are paid for); its documents waiting for a
retry are left unasked, with no record, for a resume; the other systems go on. Ctrl-C abandons every
call in flight and keeps what was saved. Storage that fails for good (down past `storage.retry_s`, a
full or read-only disk) stops every system the same way, collecting the calls in flight: each answer
that cannot be saved, and each job handle an actor could not write, goes to the run's spill folder on
local disk (`oeb.run.predict.spill`), which `oeb resume` imports.

An actor that dies (its process killed, its node lost) is replaced, and the documents it was
answering are asked again (a retry with its earlier attempts, in the same budget): they have no
record, since only the driver saves; a document whose job handle is in the folder is collected, not
bought again. A call in flight at the death may have reached the vendor before its answer (a job
id, a completion) came back, so it can be billed twice; nothing tells oeb whether it did
(docs/crash-costs.md).
"""

from __future__ import annotations

import contextlib
import time
from collections import deque
from collections.abc import Sequence
from typing import Any

from oeb import _sigterm
from oeb.batch.sender import Sender
from oeb.dataset import Dataset, Row
from oeb.errors import BudgetReached, OebError, RunStopped, StorageOutage, StorageStopped
from oeb.run.cluster.progress import RunProgress
from oeb.run.cluster.session import uses_ray
from oeb.run.folder.run_folder import RunFolder
from oeb.run.plan.config import Config
from oeb.run.predict import jobs
from oeb.run.predict.actors import Calls, Pool
from oeb.run.predict.limiter import StartSchedule
from oeb.run.predict.saver import Saver
from oeb.run.predict.system_run import _WAIT_SECONDS, BatchRun, Call, Done, Job, Predicted, Saved, SystemRun
from oeb.systems.batches import Batches

TOO_MANY_REQUESTS = 429
ASKS_PER_DOCUMENT = 3
"""A document whose actor died this many times while answering it stops its system: it may be what
kills the actor (a crash in a local model), and asking again would only pay again."""


def predict_rows(config: Config, dataset: Dataset, rows: Sequence[Row], folder: RunFolder) -> dict[str, Any]:
    """Predict `rows` of one system, saving each record as it comes; its statistics (`SystemRun.stats`).
    Raises what ended it early (scripts/bench_run.py times the predict stage alone with it)."""
    [predicted] = predict_jobs([Job(config.adapter.label, config, dataset, tuple(rows), folder)])
    if predicted.stopped is not None:
        raise predicted.stopped
    return predicted.stats


def predict_jobs(
    jobs: Sequence[Job],
    progress: RunProgress | None = None,
    on_saved: Saved | None = None,
    on_done: Done | None = None,
) -> list[Predicted]:
    """Predict every job's rows side by side in one driver loop, saving each record as it comes and
    calling `on_saved(job, doc_id)` after, and `on_done(job, stage)` as each system ends (not for a
    system stopped by a bug); per job its statistics and its stop, if any. A bug in an adapter is
    raised once every system has stopped; Ctrl-C raises `Interrupted`, SIGTERM `Terminated`."""
    runs: list[SystemRun] = []
    calls = Calls(uses_ray())
    shown = progress or RunProgress([job.label for job in jobs], {job.label: len(job.rows) for job in jobs})
    try:
        for job in jobs:
            runs.append(_start(calls, job, runs))
        with contextlib.nullcontext() if progress else shown:
            _loop(calls, runs, shown, on_saved, on_done)
    except KeyboardInterrupt:
        resume = " ".join(job.folder.url for job in jobs)
        total = sum(len(job.rows) for job in jobs)
        raise _sigterm.stopped(
            f"{shown.done} of {total} documents saved, the calls in flight abandoned; "
            f"continue with: oeb resume {resume}"
        ) from None
    finally:
        for run in runs:
            if isinstance(run, BatchRun):  # its batches in flight stay written down, for a resume
                run.halt()
            run.pool.stop()
    bug = next((run.bug for run in runs if run.bug is not None), None)
    if bug is not None:
        raise bug
    return [Predicted(run.stats(), _stopped(run)) for run in runs]


def _start(calls: Calls, job: Job, started: list[SystemRun]) -> SystemRun:
    """A system's pool (none is needed for no rows); the dataset is shared with the systems started
    before on the same dataset."""
    shared = next((run.pool.dataset for run in started if run.job.dataset is job.dataset and run.pool.actors), None)
    url = job.folder.url
    batches = job.config.adapter.batching()
    if batches is not None:
        return _batch_run(job, batches)
    pool = calls.pool(job.config, job.dataset, shared, url) if job.rows else Pool(job.config, None, url)
    schedule = StartSchedule(job.config.ray.requests_per_second)
    run = SystemRun(
        job, pool, schedule, deque(row for row in job.rows if row.doc_id not in job.collect), job.config.in_flight()
    )
    for row in job.rows:
        if row.doc_id in job.collect:
            run.retries.add(row, job.collect[row.doc_id])
            run.handles.add(row.doc_id)
    return run


def _batch_run(job: Job, batches: Batches) -> BatchRun:
    """A batch system's run: its sender started on the documents to ask (and the batches in flight)."""
    adapter, spending = job.config.adapter, job.spending
    budget = None if spending is None else spending.limit.usd
    spent = 0.0 if spending is None else spending.recorded["usd"]
    poll = (getattr(adapter, "poll_interval", 30.0), getattr(adapter, "poll_max", 300.0))
    sender = Sender(adapter, batches, job.dataset, job.rows, job.folder.url, timeout=job.config.timeout,
                    budget_usd=budget, spent_usd=spent, poll=poll)  # fmt: skip
    run = BatchRun(job, Pool(job.config, None, job.folder.url), StartSchedule(None), deque(), len(job.rows),
                   sender=sender)  # fmt: skip
    sender.start()
    return run


def _loop(
    calls: Calls, runs: list[SystemRun], progress: RunProgress, on_saved: Saved | None, on_done: Done | None = None
) -> None:
    """The one driver loop: each system submits what it may, then one wait over every call in flight,
    then the saves that finished meanwhile are counted, shown and graded."""
    pending: dict[Any, Call] = {}
    saver = Saver()
    try:
        while any(run.busy() or run.saving for run in runs):
            for run in runs:
                run.fill(pending)
                for row, record in run.answered(progress):
                    _save(run, row, record, progress, saver)
                progress.in_flight(run.job.label, min(run.in_flight, run.limit))
                _show_retries(run, progress)
                _show_pace(run, progress)
            wait = min([_WAIT_SECONDS, *(run.wake() for run in runs if run.busy())])
            if pending:
                for ref in calls.wait(list(pending), wait):
                    _collect(calls, pending.pop(ref), ref, progress, saver)
                wait = 0.0
            for run, row, record in saver.finished(wait):
                try:  # once storage is down for good, grading waits for `oeb resume`
                    _saved(run, row, record, progress, on_saved if saver.outage is None else None)
                except StorageOutage as outage:  # grading's read of the folder: the record is saved
                    saver.failed(run, outage)
            _say_budget(runs, progress)
            if saver.outage is not None and not saver.handled:
                saver.handled = True
                _storage_failed(runs, saver.outage, progress)
            for run in runs:
                if not (run.done_said or run.busy() or run.saving or run.bug):
                    run.done_said = True
                    if on_done is not None:
                        on_done(run.job, Predicted(run.stats(), _stopped(run)))
    finally:
        saver.close()
    _say_budget(runs, progress)
    for run in runs:
        progress.in_flight(run.job.label, 0)
        progress.retrying(run.job.label, 0, None, None)


def _show_retries(run: SystemRun, progress: RunProgress) -> None:
    """The documents waiting out a back-off, and in how many seconds the first and the last may start."""
    if not run.retries:
        progress.retrying(run.job.label, 0, None, None)
        return
    now = time.monotonic()
    progress.retrying(
        run.job.label, len(run.retries), max(0.0, run.retries.first() - now), max(0.0, run.retries.last() - now)
    )


def _storage_failed(runs: list[SystemRun], outage: StorageOutage, progress: RunProgress) -> None:
    """Storage failed for good: every system stops starting, its calls in flight are collected into
    the spill folder (they are paid for)."""
    for run in runs:
        run.outage = run.outage or outage
        if not run.halted:
            run.halt()
            progress.note(
                run.job.label, f"storage failed; collecting the {run.in_flight} in flight into the spill folder"
            )


def _collect(calls: Calls, call: Call, ref: Any, progress: RunProgress, saver: Saver) -> None:
    """Take one call's outcome: save its record, keep its retry, or note why its system stops."""
    run, row = call.system, call.row
    run.in_flight -= 1
    run.pool.load[call.index] -= 1
    try:
        outcome = calls.result(ref)
    except Exception as error:
        if calls.died(error):
            run.stop = run.stop or _ask_again(run, call, error)
        else:
            run.bug = run.bug or error
    else:
        run.nodes.add(outcome["node"])
        run.peak = max(run.peak, outcome["running"])
        if outcome["started"] is not None:  # else it waited for a slot until the system was halted
            run.started.append(outcome["started"])
        if (retry := outcome["retry"]) is not None:
            run.retries.add(row, retry.asking, time.monotonic() + retry.wait)
            if retry.status == TOO_MANY_REQUESTS:
                run.schedule.throttled(retry.retry_after)
                progress.throttled(run.job.label)
                _show_pace(run, progress)
        if outcome["outage"] is not None:  # the actor could not write its job's handle
            saver.failed(run, outcome["outage"])
            saver.spill(run).keep_job(row.doc_id, outcome["job"])
        if outcome["handle"]:
            run.handles.add(row.doc_id)  # written by the actor: removed once the record is saved
        if (record := outcome["record"]) is not None:
            _save(run, row, record, progress, saver)
        run.stop = run.stop or outcome["stop"]
    if (run.stop or run.bug) and not run.halted:
        left = run.queue or run.retries
        run.halt()
        if left:
            progress.note(run.job.label, f"stopped: {run.stop or 'a bug'}; collecting the {run.in_flight} in flight")


def _save(run: SystemRun, row: Row, record: dict[str, Any], progress: RunProgress, saver: Saver) -> None:
    """Queue a document's record to be saved (then its job handle forgotten), and count its cost at
    once: the budget decides the next start before the save is done."""
    saver.save(run, row, record, row.doc_id in run.handles)
    run.handles.discard(row.doc_id)
    spending = run.job.spending
    if spending is not None:
        spending.add(record)
        spent = spending.spent
        progress.spend(run.job.label, spent["usd"], spent["credits"])
        if spending.reached and run.queue:
            run.may_start()
            run.budget_note = f"budget reached ({spending.line()}); collecting the {run.in_flight} in flight"


def _say_budget(runs: list[SystemRun], progress: RunProgress) -> None:
    """A system's budget-reached line, once the documents whose cost reached it are shown saved."""
    for run in runs:
        if run.budget_note is not None and not run.saving:
            progress.note(run.job.label, run.budget_note)
            run.budget_note = None


def _saved(run: SystemRun, row: Row, record: dict[str, Any], progress: RunProgress, on_saved: Saved | None) -> None:
    """A document whose record is saved: count it, show it, grade it."""
    run.done += 1
    run.saved(row.doc_id)
    progress.saved(run.job.label, row.doc_id, record)
    if on_saved is not None:
        on_saved(run.job, row.doc_id, record)


def _show_pace(run: SystemRun, progress: RunProgress) -> None:
    """A `pace` event when the system's pace changed (lowered by 429s, or recovering)."""
    pace = run.schedule.pace
    if pace != run.shown_pace:
        run.shown_pace = pace
        progress.pace(run.job.label, pace, run.schedule.limit)


def _stopped(run: SystemRun) -> OebError | None:
    """Why the system ended before asking everything: a stop, or its budget reached."""
    url = run.job.folder.url
    if run.outage is not None:
        kept = run.spill.line() if run.spill is not None else "no answer was left unsaved"
        return StorageStopped(
            f"{run.job.folder.name} stopped: storage failed ({run.outage}); {run.done} documents saved, {kept}. "
            f"Once storage is back (space freed), continue with: oeb resume {url}"
        )
    if run.stop is not None:
        return RunStopped(
            f"{run.job.folder.name} stopped ({run.stop}); {run.done} documents saved. Fix the cause, then continue "
            f"with: oeb resume {url}"
        )
    spending = run.job.spending
    if run.left is None or spending is None:
        return None
    unit = "usd" if spending.limit.usd is not None else "credits"
    return BudgetReached(
        f"the budget was reached: {spending.line()}; {run.left} documents left unasked; continue with a larger "
        f"budget: oeb resume {url} --set budget.{unit}=<more>"
    )


def _ask_again(run: SystemRun, call: Call, death: Exception) -> str | None:
    """Ask a document whose actor died again at once, with the attempts it had before (replacing the
    actor once); the reason to stop the system instead, if any."""
    try:
        if run.pool.actors[call.index] is call.actor:
            run.pool.replace(call.index, death)
    except RunStopped as stop:
        return str(stop)
    doc_id = call.row.doc_id
    run.died[doc_id] += 1
    if run.died[doc_id] >= ASKS_PER_DOCUMENT:
        return f"the actor answering {doc_id} died {run.died[doc_id]} times while answering it"
    asking = call.asking
    if asking is None or asking.handle is None:  # it may have died just after writing a job's handle
        written = jobs.read(run.job.folder.url, doc_id) if run.job.config.adapter.submits else None
        if written is not None:
            asking = written
            run.handles.add(doc_id)
    run.retries.add(call.row, asking)
    return None
