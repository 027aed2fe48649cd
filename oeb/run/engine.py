"""A run from end to end: plan (every check, no call), then predict and grade (docs/running.md).

`plan_runs` and `plan_resumes` read and check everything before anything is paid for or written, for
one system or several side by side (a config that cannot run is listed with its reason and the rest
go ahead); `execute` writes each run folder (config.yaml and settings.json first, before Ray starts,
so a kill at any moment leaves no folder or one `oeb resume` continues), predicts every system's
documents in one driver loop, grades each system's selection, and says per system how it ended.
Planning is `oeb.run.planning` (its names are also importable from here, as callers always did);
grading a folder again is `oeb.run.grade.regrade.grade_folder`.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import logging
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

from oeb import _retry, storage
from oeb.batch import files
from oeb.batch.files import BatchFile
from oeb.dataset import Row
from oeb.errors import NothingAnswered, OebError, StorageError
from oeb.gold.derivation import for_system, read_draft
from oeb.run.cluster.progress import RunProgress
from oeb.run.cluster.session import session, worker_env
from oeb.run.folder.run_folder import RunFolder
from oeb.run.grade.regrade import grade_folder, open_folder  # noqa: F401  (moved there; imported here by callers)
from oeb.run.grade.stage import Graded, Grader
from oeb.run.grade.ungraded import Ungraded
from oeb.run.planning import Plan as Plan
from oeb.run.planning import Plans as Plans
from oeb.run.planning import Refused as Refused
from oeb.run.planning import config_tree as config_tree
from oeb.run.planning import plan_resume as plan_resume
from oeb.run.planning import plan_resumes as plan_resumes
from oeb.run.planning import plan_run as plan_run
from oeb.run.planning import plan_runs as plan_runs
from oeb.run.planning import retryable, spending_of, still_to_ask
from oeb.run.predict import jobs, spill
from oeb.systems import Asking, reread

log = logging.getLogger(__name__)

EXIT_PRIORITY = (1, 75, 5, 4, 0)
"""A run of several systems exits with the first of these codes any system ended with (docs/running.md)."""


@dataclass(frozen=True)
class RunResult:
    """What a run gives back: the grading report, the limiter's statistics and where work ran."""

    report: dict[str, Any]
    predicted: dict[str, Any]
    graded_on: frozenset[str]


@dataclass(frozen=True)
class Ended:
    """How one system's run ended: graded (`result`), and the error it ends with, if any (a stop, a
    budget reached, nothing answered)."""

    plan: Plan
    result: RunResult | None
    error: OebError | None = None

    @property
    def exit_code(self) -> int:
        return 0 if self.error is None else self.error.exit_code


@dataclass(frozen=True)
class Outcome:
    """A whole run's end: each system's, and the configs refused at the plan."""

    ended: tuple[Ended, ...]
    refused: tuple[Refused, ...] = field(default=())

    @property
    def exit_code(self) -> int:
        """The highest-priority code among the systems (and 1 for a refused config), in the order 1 > 75 > 5 > 4 > 0."""
        codes = {ended.exit_code for ended in self.ended} | {1 for _ in self.refused}
        return next((code for code in EXIT_PRIORITY if code in codes), max(codes, default=0))

    def lines(self) -> list[str]:
        """One line per system that did not end cleanly, and per refused config."""
        return [f"{e.plan.folder.name}: {e.error}" for e in self.ended if e.error] + [r.line() for r in self.refused]


def execute(plan: Plan, *, details: bool = True, force_unlock: bool = False) -> RunResult:
    """Run one plan (`execute_all`), raising the error it ended with."""
    [ended] = execute_all([plan], details=details, force_unlock=force_unlock).ended
    if ended.error is not None:
        raise ended.error
    assert ended.result is not None
    return ended.result


def execute_all(
    plans: Sequence[Plan], *, details: bool = True, force_unlock: bool = False, refused: Sequence[Refused] = ()
) -> Outcome:
    """Write each run folder, predict what the plans list side by side (one driver loop), grading each
    document as soon as its record is saved, then finish each system's grading; hold every folder's
    lock throughout (`force_unlock` takes an s3:// lock whose holder seems alive). A system that
    stops or reaches its budget is not graded (its folder waits for `oeb resume`); the others go on.
    New folders get config.yaml and settings.json before anything else starts."""
    from oeb.run.predict.stage import predict_jobs  # Ray actors: imported only when a run goes ahead
    from oeb.run.predict.system_run import Job, Predicted

    chosen = [plan.config.retry_s for plan in plans if plan.config.retry_s is not None]
    if chosen:  # before the first write; Ray workers get it with the driver's OEB_* variables
        _retry.set_retry_seconds(max(chosen))
    for plan in plans:
        if not plan.resumed:
            _launch(plan)
    with contextlib.ExitStack() as held:
        for plan in plans:
            command = "oeb resume" if plan.resumed else "oeb run"
            held.enter_context(plan.folder.locked(command, force=force_unlock))
        documents = sum(len(plan.rows) for plan in plans)
        held.enter_context(session(plans[0].config.ray.address, worker_env(), documents=documents))
        graders: dict[str, Grader | Ungraded] = {  # under the dataset's own adjudication file, when it has one
            plan.label: (  # (docs/adjudication.md); a gold-less dataset's answers wait for gold
                Ungraded(plan.folder, plan.dataset, plan.rows)
                if plan.dataset.goldless
                else held.enter_context(_grader(plan, details))
            )
            for plan in plans
        }
        work = []
        for plan in plans:
            to_ask = _reused(plan, _prepared(plan), graders[plan.label])
            work.append(
                Job(plan.label, plan.config, plan.dataset, to_ask, plan.folder, _collect(plan), spending_of(plan))
            )
        progress = held.enter_context(RunProgress([job.label for job in work], {j.label: len(j.rows) for j in work}))

        def saved(job: Job, doc_id: str, record: dict[str, Any]) -> None:
            graders[job.label].add(doc_id, record)
            _show_grading(progress, graders.values())

        # A system that is done finishes its grading at once, on a thread, while the others still ask:
        # only the last system's finish is left after the last answer. Left before the graders: a
        # failed run waits for the finishes under way.
        finishing = held.enter_context(concurrent.futures.ThreadPoolExecutor(2, thread_name_prefix="oeb-finish"))
        finished: dict[str, concurrent.futures.Future[Graded]] = {}

        def done(job: Job, stage: Predicted) -> None:
            if stage.stopped is None:
                finished[job.label] = finishing.submit(graders[job.label].finish)

        predicted = predict_jobs(work, progress, on_saved=saved, on_done=done)
        ended = []
        for plan, stage in zip(plans, predicted, strict=True):
            if stage.stopped is not None:
                graders[plan.label].abandon(stage.stopped)
                ended.append(Ended(plan, None, stage.stopped))
                continue
            future = finished.get(plan.label)
            graded = future.result() if future is not None else graders[plan.label].finish()
            _show_grading(progress, graders.values())
            result = RunResult(graded.report, stage.stats, graded.nodes)
            ended.append(Ended(plan, result, _nothing_answered(plan, graded.report)))
    return Outcome(tuple(ended), tuple(refused))


def _grader(plan: Plan, details: bool) -> Grader:
    """A plan's grading, under its dataset's adjudication file and, on a drafted gold, without the
    values this system helped decide (`oeb.gold.derivation`)."""
    draft = read_draft(plan.dataset)
    settings = plan.folder.settings() or {}
    adjudications = for_system(plan.adjudications, draft, settings)
    return Grader(plan.folder, plan.dataset, plan.rows, details=details, adjudications=adjudications, draft=draft)


def _show_grading(progress: RunProgress, graders: Iterable[Grader | Ungraded]) -> None:
    """The grading queue in the live view: documents handed to grading and not scored yet, and scored."""
    waiting = sum(grader.outstanding for grader in graders)
    scored = sum(grader.queued - grader.outstanding for grader in graders)
    progress.grading(waiting, 0, scored)


def _reused(plan: Plan, to_ask: tuple[Row, ...], grader: Grader | Ungraded) -> tuple[Row, ...]:
    """Save the answers the plan reuses (each read from its earlier run and saved with `reused_from`,
    one at a time), hand them to grading; the documents still to ask. One that can no longer be read
    is asked."""
    if not plan.reused:
        return to_ask
    left = []
    for row in to_ask:
        url = plan.reused.get(row.doc_id)
        try:
            record = None if url is None else storage.read_json(RunFolder(url).record_url(row.doc_id))
        except StorageError as error:
            log.warning(
                "%s: the answer to reuse for %s cannot be read (%s); it is asked", plan.label, row.doc_id, error
            )
            record = None
        if not isinstance(record, dict):
            left.append(row)
            continue
        plan.folder.save(row.doc_id, record | {"reused_from": url})
        grader.add(row.doc_id, record)
    log.info("%s: %d answers reused from earlier runs", plan.folder.name, len(to_ask) - len(left))
    return tuple(left)


def _collect(plan: Plan) -> dict[str, Asking]:
    """The jobs to collect: each pending document's saved asking; an unreadable handle becomes a
    fresh asking that submits again and records why."""
    collect = {}
    asked = {row.doc_id for row in plan.to_ask}
    for doc_id, saved in plan.pending.items():
        if doc_id not in asked:
            continue
        if isinstance(saved, str):
            log.warning("%s: %s; it is submitted again", plan.folder.name, saved)
            collect[doc_id] = Asking.unreadable(saved)
        else:
            collect[doc_id] = Asking.from_json(saved)
    return collect


def _launch(plan: Plan) -> None:
    """A new run's folder with config.yaml and settings.json (`RunFolder.launch`), before the lock,
    Ray or any call: a kill at any moment leaves no folder, or one that `oeb resume` continues."""
    plan.folder.launch(config_tree(plan.config, plan.dataset), plan.settings)


def _prepared(plan: Plan) -> tuple[Row, ...]:
    """What to ask, under the folder's lock: a resume writes its config and settings again (a resume
    may change timeout, workers, the ray block and the budget), reads its unread answers again and
    reads the records again (a process that wrote the folder between the plan and the lock saved
    answers that must not be paid for twice)."""
    folder = plan.folder
    if not plan.resumed:
        return plan.to_ask
    folder.write_config(config_tree(plan.config, plan.dataset))
    folder.write_settings(plan.settings)
    _import_spill(plan)
    for doc_id, record in plan.unread.items():
        folder.save(doc_id, reread(plan.config.adapter, record))
    records = folder.records([row.doc_id for row in plan.to_ask], folder.listing())
    to_ask = still_to_ask(plan.to_ask, records, plan.retry_failed)
    asked = {row.doc_id for row in to_ask}
    for doc_id in plan.pending:
        if doc_id not in asked:  # its record was saved, the kill came before the handle was removed
            jobs.remove(folder.url, doc_id)
    done = len(plan.rows) - len(to_ask)
    if done:
        rest = f"{len(to_ask)} to predict" if to_ask else "nothing to predict"
        log.info("%s: %d of %d rows were done in an earlier run; %s", folder.name, done, len(plan.rows), rest)
    return to_ask


def _import_spill(plan: Plan) -> None:
    """Save what the spill folder kept into the run folder (a record the folder has already wins),
    write back its job handles, then remove it: from here the run folder holds everything."""
    spilled, folder = plan.spilled, plan.folder
    if not spilled:
        return
    saved = folder.records(spilled.records, folder.listing())
    for doc_id, record in spilled.records.items():
        if doc_id not in saved:
            folder.save(doc_id, record)
    for doc_id, asking in spilled.jobs.items():
        if doc_id not in saved and doc_id not in spilled.records:
            jobs.write(folder.url, doc_id, asking)
    for batch in spilled.batches.values():  # its documents saved meanwhile are skipped when it is collected
        files.write(folder.url, cast(BatchFile, batch))
    spill.clear(folder.url)
    log.info(
        "%s: saved %d answers, %d job handles and %d provider batches from the spill folder %s",
        folder.name,
        len(spilled.records),
        len(spilled.jobs),
        len(spilled.batches),
        spilled.path,
    )


def _nothing_answered(plan: Plan, report: dict[str, Any]) -> NothingAnswered | None:
    """The end of a run whose every document failed: a broken set-up, not a result. Names the most
    common error (type and one message) with its count."""
    summary = report["scorers"].get("field_matching") or {
        "rows": report["rows"],
        "failed": report["rows"] - report["answered"],
    }
    if summary["rows"] == 0 or summary["failed"] < summary["rows"]:
        return None
    folder = plan.folder
    records = folder.records([row.doc_id for row in plan.rows], folder.listing())
    kinds: Counter[str] = Counter()
    example: dict[str, dict[str, Any]] = {}
    for record in records.values():
        kind = str((record.get("error") or {}).get("type"))
        kinds[kind] += 1
        example.setdefault(kind, record)
    rows = summary["rows"]
    if not kinds:
        return NothingAnswered(f"no document was answered ({rows} of {rows} failed); check the config (oeb check)")
    kind, count = kinds.most_common(1)[0]
    message = " ".join(str((example[kind].get("error") or {}).get("message", "")).split())[:200]
    then = f"oeb resume {folder.url} --retry-failed" if retryable(example[kind]) else "run again"
    return NothingAnswered(
        f"no document was answered ({summary['failed']} of {rows} failed); most common error: {kind}: {message} "
        f"({count} of {rows}); fix the set-up (oeb check tests the config, key and endpoint), then {then}"
    )
