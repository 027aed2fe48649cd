"""The grade stage, shared by `oeb run`, `oeb resume` and `oeb grade` (docs/grading.md).

A `Grader` grades one folder. The run engine hands it each document as its record is saved
(`add`), so scoring overlaps predicting and the leaderboard is ready seconds after the last answer;
`finish` grades whatever was not handed over and writes the results. `grade` is a Grader given
nothing before `finish`.

The work goes through one queue per session, whichever folder it is from (several systems of a
run, every run of a regrade): the largest waiting document first, since the cost of scoring grows
with its size, small ones packed into tasks of bounded total size, from every folder on the same
dataset (a task costs more than a small document's scoring); only a few tasks per CPU are in
flight, so the order holds. On Ray each task asks for memory in proportion to what it scores; a
small job scores in this process, with the same code and the same files (`oeb.run.cluster`).
Results come back to the driver, the only writer: cache and details files as they arrive, then
scores.jsonl, scores.parquet, verdicts.parquet (in row order, whatever order tasks finished in)
and summary.json last.
"""

from __future__ import annotations

import heapq
import itertools
import json
import logging
import shutil
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, Protocol

from oeb import storage
from oeb.dataset import Dataset, Row
from oeb.errors import GradingError, OebError, StorageError, UnfinishedRun
from oeb.run import cluster, pages, workers
from oeb.run.folder import RunFolder
from oeb.run.grade_task import Group, Item, dataset_of, grade_groups, put_once, scorer_digest
from oeb.run.provenance import provenance
from oeb.run.results import SCORER, headline_line, jsonl, scores_table, summarize, total_cost, verdicts_parquet

log = logging.getLogger(__name__)

BATCH_BYTES = 1 << 20
"""A task scores at most this many bytes of gold and prediction, unless one document is larger."""
BATCH_DOCUMENTS = 16
"""A task takes at least this many small documents when they are waiting: a task costs its worker
about 8 ms of CPU, a small document 1 to 2 ms (docs/performance/scale.md)."""
HOLD_SECONDS = 0.5
"""While answers stream in, fewer than `BATCH_DOCUMENTS` documents wait at most this long for more."""
TASK_MEMORY_BASE = 64 << 20
TASK_MEMORY_PER_BYTE = 40
"""Peak memory of scoring is about 40 times the gold and prediction bytes (measured on the corpus)."""
VERDICTS_IN_MEMORY = 64 << 20
"""A grading holds its documents' verdict tables in memory up to this many bytes, the rest on disk."""
_WAIT_SECONDS = 0.2
_LOOKAHEAD = 64
"""Documents of other folders set aside while packing one folder's batch, at most."""
_SHOWN = 10


@dataclass(frozen=True)
class Graded:
    """What grading gives back: `report` is what `oeb grade` prints; `nodes` ran the scoring tasks
    ("process" when it ran here); `seconds` is each graded document's CPU time, `elapsed` its wall time."""

    report: dict[str, Any]
    nodes: frozenset[str]
    seconds: dict[str, float]
    elapsed: dict[str, float]


class _Executor(Protocol):
    """Runs batches: on Ray, or here."""

    cpus: int
    slots: int

    def submit(self, dataset: Dataset, groups: list[Group], details: bool) -> Any: ...
    def ready(self, handles: list[Any]) -> list[Any]: ...
    def result(self, handle: Any) -> tuple[list[list[dict[str, Any]]], str]: ...


class _InProcess:
    """Scores a batch when it is submitted, in the queue's thread: one at a time, on one core."""

    cpus = 1
    slots = 1

    def submit(self, dataset: Dataset, groups: list[Group], details: bool) -> Any:
        return [grade_groups(dataset, groups, details)]  # a list: a handle of its own identity

    def ready(self, handles: list[Any]) -> list[Any]:
        return handles

    def result(self, handle: Any) -> tuple[list[list[dict[str, Any]]], str]:
        return handle[0], "process"


def _grade_task(
    dataset: list[Any], groups: list[Group], details: bool, secrets: dict[str, Any]
) -> tuple[list[list[dict[str, Any]]], str]:
    """One batch on a Ray worker (`dataset`: `put_once`'s boxed reference; `secrets`: the driver's
    storage credentials, held for the batch only), and the node that scored it."""
    import ray

    with storage.holding(secrets):
        return grade_groups(dataset_of(dataset), groups, details), ray.get_runtime_context().get_node_id()


class _OnRay:
    """Scoring tasks on the Ray session open now."""

    def __init__(self) -> None:
        import ray

        self._ray = ray
        self.cpus = max(1, int(ray.cluster_resources().get("CPU", 1)))  # type: ignore[no-untyped-call]
        self.slots = 2 * self.cpus
        alive = [node for node in ray.nodes() if node.get("Alive")]  # type: ignore[no-untyped-call]
        nodes = [node["Resources"].get("memory", 0) for node in alive]
        largest = int(max(nodes, default=0))
        # Just over half the largest node's memory: a huge document never asks for more than exists,
        # and two of them never share a node.
        self._cap = largest // 2 + 1 if largest else TASK_MEMORY_BASE
        # A worker that dies (killed, out of memory) has its task run again: same scores.
        self._task = ray.remote(max_retries=3)(_grade_task)
        self._datasets: dict[int, tuple[Dataset, Any]] = {}
        self._secrets = storage.credentials()

    def submit(self, dataset: Dataset, groups: list[Group], details: bool) -> Any:
        size = sum(item.size for _, items in groups for item in items)
        memory = min(self._cap, TASK_MEMORY_BASE + TASK_MEMORY_PER_BYTE * size)
        options = self._task.options(num_cpus=1, memory=memory, scheduling_strategy="SPREAD")
        return options.remote(put_once(self._datasets, dataset), groups, details, self._secrets)

    def ready(self, handles: list[Any]) -> list[Any]:
        done, _ = self._ray.wait(handles, num_returns=1, timeout=_WAIT_SECONDS)
        return list(done)

    def result(self, handle: Any) -> tuple[list[list[dict[str, Any]]], str]:
        results, node = self._ray.get(handle)
        return results, node


Batch = list[tuple["Grader", list[Item]]]
"""One task's documents, by grading: gradings on one dataset with one details setting share tasks."""


class _Queue:
    """The session's scoring work, every Grader's: largest first, a few tasks per CPU in flight,
    run by one thread that lives while there is work. While a run's answers stream in (gradings
    not finishing yet), a few small documents wait up to `HOLD_SECONDS` for more to share a task."""

    def __init__(self, executor: _Executor) -> None:
        self.executor = executor
        self.changed = threading.Condition()
        self._waiting: list[tuple[int, int, Grader, Item, float]] = []
        self._bytes = 0
        self._order = itertools.count()
        self._thread: threading.Thread | None = None
        self._closed = False

    def put(self, grader: Grader, items: Sequence[Item]) -> None:
        """Queue `items` of `grader`; they are submitted as soon as a slot is free."""
        with self.changed:
            now = time.monotonic()
            for item in items:
                heapq.heappush(self._waiting, (-item.size, next(self._order), grader, item, now))
                self._bytes += item.size
                grader.outstanding += 1
                grader.queued += 1
            if self._thread is None and self._waiting:
                self._thread = threading.Thread(target=self._run, name="oeb-grading", daemon=True)
                self._thread.start()
            self.changed.notify_all()

    def close(self) -> None:
        """The session shuts Ray down (`cluster.before_shutdown`): what waits is dropped and the tasks
        in flight are no longer waited for (their gradings have finished, or were abandoned by a stop
        or Ctrl-C). On Ray the thread is waited for, at most one wait for results, so it never calls
        Ray after its shutdown; one scoring in this process is left to end with it (a daemon)."""
        with self.changed:
            self._closed = True
            self._waiting.clear()
            self._bytes = 0
            thread = self._thread
            self.changed.notify_all()
        if thread is not None and not isinstance(self.executor, _InProcess):
            thread.join()

    def _hold(self) -> float:
        """Seconds the waiting documents may still wait for company: none once enough wait, one has
        waited `HOLD_SECONDS`, or one belongs to a grading that is finishing (nothing more will come)."""
        if len(self._waiting) >= BATCH_DOCUMENTS or any(not entry[2].streaming for entry in self._waiting):
            return 0.0
        oldest = min(entry[4] for entry in self._waiting)
        return max(0.0, oldest + HOLD_SECONDS - time.monotonic())

    def _batch(self) -> Batch | None:
        """The largest waiting document, with smaller ones of gradings on its dataset packed up to
        the budget, which spreads the work waiting over the CPUs. While its grading is streaming in,
        a small one takes at least `BATCH_DOCUMENTS` if that many wait: answers come a few at a time,
        and a task each would cost more than their scoring."""
        while self._waiting:
            _, _, grader, first, _ = heapq.heappop(self._waiting)
            self._bytes -= first.size
            if grader.error is None:
                break
            grader.done(1)
        else:
            return None
        budget = max(1, min(BATCH_BYTES, self._bytes // (4 * self.executor.cpus)))
        small = grader.streaming and first.size * BATCH_DOCUMENTS <= BATCH_BYTES
        groups, count, used = {grader: [first]}, 1, first.size
        others: list[tuple[int, int, Grader, Item, float]] = []
        while self._waiting and len(others) < _LOOKAHEAD:
            size = self._waiting[0][3].size
            if used + size > budget and not (small and count < BATCH_DOCUMENTS):
                break
            entry = heapq.heappop(self._waiting)
            self._bytes -= size
            mate = entry[2]
            if mate.dataset is grader.dataset and mate.details == grader.details:
                groups.setdefault(mate, []).append(entry[3])
                count, used = count + 1, used + size
            else:
                others.append(entry)
        for entry in others:
            heapq.heappush(self._waiting, entry)
            self._bytes += entry[3].size
        return list(groups.items())

    def _run(self) -> None:
        pending: dict[int, tuple[Any, Batch]] = {}  # by id: an in-process handle is a list
        while True:
            with self.changed:
                if self._closed:
                    self._thread = None
                    return
                chosen: list[Batch] = []
                hold = 0.0
                while len(pending) + len(chosen) < self.executor.slots and self._waiting:
                    hold = self._hold()
                    if hold > 0 or (batch := self._batch()) is None:
                        break
                    chosen.append(batch)
                if not chosen and not pending:
                    if self._waiting and hold > 0:
                        self.changed.wait(hold)
                        continue
                    self._thread = None
                    return
            for batch in chosen:
                first = batch[0][0]
                try:
                    groups = [(grader.folder.url, items) for grader, items in batch]
                    handle = self.executor.submit(first.dataset, groups, first.details)
                except Exception as error:
                    _fail(batch, error)
                    continue
                pending[id(handle)] = (handle, batch)
            if not pending:
                continue
            try:
                finished = self.executor.ready([handle for handle, _ in pending.values()])
            except Exception as error:  # Ray itself failed: every grading in flight stops
                for _, batch in pending.values():
                    _fail(batch, error)
                pending.clear()
                continue
            for handle in finished:
                _, batch = pending.pop(id(handle))
                try:
                    results, node = self.executor.result(handle)
                except Exception as error:
                    _fail(batch, error)
                    continue
                for (grader, items), graded in zip(batch, results, strict=True):
                    try:
                        grader.take(graded, node)
                    except Exception as error:
                        grader.fail(error, 0)
                    grader.done(len(items))


def _fail(batch: Batch, error: BaseException) -> None:
    """A task that could not run stops the grading of each of its folders."""
    for grader, items in batch:
        grader.fail(error, len(items))


_session_queue: list[tuple[cluster.Where | None, _Queue]] = []


def _queue() -> _Queue:
    """The queue of the session open now (a new one for each session): on the warm workers of a Ray
    the command is attached to, on tasks of its own on another Ray, else in this process."""
    where = cluster.current()
    if _session_queue and where is not None and _session_queue[0][0] is where:
        return _session_queue[0][1]
    executor: _Executor
    if where is not None and where.warm:
        executor = workers.Pool(cluster.worker_env())
    else:
        executor = _OnRay() if cluster.uses_ray() else _InProcess()
    queue = _Queue(executor)
    _session_queue[:] = [(where, queue)]
    if where is not None:
        cluster.before_shutdown(where, queue.close)
    return queue


class _Verdicts:
    """Each document's verdict table until the end, when verdicts.parquet is written from them in
    row order (the same bytes whichever way the tasks ran): in memory up to `VERDICTS_IN_MEMORY`
    bytes, then in temporary Arrow files, so a huge run does not hold every verdict."""

    def __init__(self) -> None:
        self._folder: Path | None = None
        self._tables: dict[str, Any] = {}
        self._held = 0

    def put(self, doc_id: str, table: Any) -> None:
        import pyarrow as pa  # type: ignore[import-untyped]

        if self._held + table.nbytes <= VERDICTS_IN_MEMORY:
            self._held += table.nbytes
            self._tables[doc_id] = table
            return
        if self._folder is None:
            self._folder = Path(tempfile.mkdtemp(prefix="oeb-verdicts-"))
        path = self._folder / f"{len(self._tables)}.arrow"
        with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_file(sink, table.schema) as writer:
            writer.write_table(table)
        self._tables[doc_id] = path

    def parquet(self, order: Sequence[str]) -> bytes:
        return verdicts_parquet(self._tables[doc_id] for doc_id in order if doc_id in self._tables)

    def discard(self) -> None:
        self._tables, self._held = {}, 0
        if self._folder is not None:
            shutil.rmtree(self._folder, ignore_errors=True)
            self._folder = None


class Grader:
    """One folder's grading: documents handed over as they are saved (`add`), the rest at `finish`.

    Use it as a context manager, so a run that stops or fails leaves no temporary files: leaving
    the block without `finish` (a system that stopped) or by an exception abandons the grading
    (what was scored stays in the cache).
    """

    def __init__(
        self,
        folder: RunFolder,
        dataset: Dataset,
        rows: Sequence[Row],
        *,
        details: bool = True,
        partial: bool = False,
        brought: bool = False,
    ) -> None:
        self.folder, self.dataset, self.rows = folder, dataset, tuple(rows)
        self.details, self.partial, self.brought = details, partial, brought
        self.outstanding = 0
        self.error: BaseException | None = None
        self.lines: dict[str, dict[str, Any]] = {}
        """Each document's line in scores.jsonl (results, failed records), as they become known."""
        self.seconds: dict[str, float] = {}
        self.elapsed: dict[str, float] = {}
        self.nodes: set[str] = set()
        self.rescored = 0
        self.records: dict[str, dict[str, Any]] | None = None
        self.finished = False
        self.unfinished: list[str] = []
        self.queued = 0
        self.streaming = True
        """Documents may still come (`add` during a run); false once `plan` queued the rest."""
        self._listing: dict[str, int] = {}
        self._rows = {row.doc_id: row for row in self.rows}
        self._added: dict[str, dict[str, Any]] = {}
        """The documents handed over by `add`, each with its record's cost (all that `finish` needs of it)."""
        self._known: tuple[dict[str, int], dict[str, int]] | None = None
        self._verdicts = _Verdicts()
        self._queue = _queue()

    def __enter__(self) -> Grader:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        if error is not None or not self.finished:
            self.abandon(error)

    def add(self, doc_id: str, record: dict[str, Any] | None = None) -> None:
        """Grade a document whose record (and prediction) was just saved: its scoring is queued now.
        `record` saves reading it back; a document not in the rows, or added before, is ignored."""
        row = self._rows.get(doc_id)
        if row is None or doc_id in self._added or self.error is not None:
            return
        if record is None:
            record = storage.read_json(self.folder.record_url(doc_id))
        if record.get("unread"):
            return  # read again at the end
        self._added[doc_id] = {"cost": record.get("cost")}
        if record.get("error"):
            self.lines[doc_id] = _failed_line(row, _error_text(record["error"]))
            return
        listing, golds = self._sizes()
        size = len(json.dumps(record.get("output"), ensure_ascii=False).encode()) + golds.get(row.gt_path, 0)
        has_details = f"{SCORER}/details/{doc_id}.jsonl" in listing
        self._queue.put(self, [Item(row, size, has_details)])

    def _sizes(self) -> tuple[dict[str, int], dict[str, int]]:
        """The folder's files as they were at the first `add`, and the gold sizes (one listing each)."""
        if self._known is None:
            self._known = (self.folder.listing(), _gold_sizes(self.dataset))
        return self._known

    def take(self, results: list[dict[str, Any]], node: str) -> None:
        """A task's results, written as they arrive (called by the queue's thread)."""
        self.nodes.add(node)
        for result in results:
            if self.error is not None:
                return
            doc_id = result["id"]
            if "fatal" in result:
                self.error = GradingError(
                    f"the scorer refused {doc_id} ({result['fatal']}); fix its gold or schema in the dataset, "
                    "then grade again (scores.jsonl and summary.json are unchanged)"
                )
                return
            self.lines[doc_id] = result["line"]
            self.seconds[doc_id] = result["seconds"]
            self.elapsed[doc_id] = result["elapsed"]
            files = self.folder.path(SCORER)
            if result.get("cache") is not None:
                self.rescored += 1
                storage.write_bytes(storage.join(files, "cache", f"{doc_id}.json"), result["cache"])
            if result.get("details") is not None:
                storage.write_bytes(storage.join(files, "details", f"{doc_id}.jsonl"), result["details"])
            if result.get("verdicts") is not None:
                self._verdicts.put(doc_id, result["verdicts"])

    def fail(self, error: BaseException, items: int) -> None:
        """A task that could not run or whose results could not be written stops this grading."""
        if self.error is None:
            self.error = error if isinstance(error, OebError) else _task_failed(error)
        self.done(items)

    def done(self, items: int) -> None:
        """`items` documents of this grading left the queue."""
        with self._queue.changed:
            self.outstanding -= items
            self._queue.changed.notify_all()

    def abandon(self, error: BaseException | None = None) -> None:
        """Stop at once: documents still queued are dropped, results still coming are ignored, the
        temporary verdicts removed (the cache files written so far stay: they are right)."""
        if self.error is None:
            self.error = error or GradingError("grading abandoned")
        self._verdicts.discard()

    def _wait(self) -> None:
        with self._queue.changed:
            while self.outstanding > 0:
                self._queue.changed.wait()

    def plan(self) -> None:
        """Queue every document not handed over yet (checks first: an unfinished folder is refused
        unless `partial`, a brought folder naming none of the rows is refused)."""
        listing = self.folder.listing()
        self._listing = listing
        ids = [row.doc_id for row in self.rows]
        _warn_strays(self.folder, listing, {row.doc_id for row in self.dataset.rows})
        if self.brought and not any(f"predictions/{doc_id}.json" in listing for doc_id in ids):
            raise UnfinishedRun(
                f"none of the files in {self.folder.path('predictions')} names one of the {len(ids)} rows graded "
                f"(e.g. {ids[0]}.json is expected); is the dataset right?"
            )
        # the records handed over are not read again: ten systems of 620 documents would read 6,200
        # records after the last answer
        self.records = self._added | self.folder.records([i for i in ids if i not in self._added], listing)
        _restore_predictions(self.folder, self.records, listing)
        golds = self._sizes()[1] if self._known is not None else _gold_sizes(self.dataset)
        items, self.unfinished = [], []
        for row in self.rows:
            if row.doc_id in self._added:
                continue
            record = self.records.get(row.doc_id)
            prediction = f"predictions/{row.doc_id}.json"
            if record is not None and record.get("error"):
                self.lines[row.doc_id] = _failed_line(row, _error_text(record["error"]))
            elif prediction in listing and not (record or {}).get("unread"):
                has_details = f"{SCORER}/details/{row.doc_id}.jsonl" in listing
                items.append(Item(row, listing[prediction] + golds.get(row.gt_path, 0), has_details))
            else:
                self.unfinished.append(row.doc_id)
        if self.unfinished and not self.partial:
            raise _unfinished_error(self.folder, self.unfinished, self.brought)
        for doc_id in self.unfinished:
            row = self._rows[doc_id]
            self.lines[doc_id] = _failed_line(row, f"no prediction: predictions/{doc_id}.json does not exist")
        self.streaming = False
        self._queue.put(self, items)

    def finish(self) -> Graded:
        """Grade what was not added, wait for every document, then write scores.jsonl,
        scores.parquet, verdicts.parquet, documents.json and summary.json last."""
        try:
            if self.records is None:
                self.plan()
            self._wait()
            if self.error is not None:
                raise self.error
            graded = self._write()
            self.finished = True
            return graded
        except BaseException as error:
            self.abandon(error)
            raise
        finally:
            self._verdicts.discard()

    def _write(self) -> Graded:
        folder, rows, records = self.folder, self.rows, self.records or {}
        digest = scorer_digest()
        ordered = [self.lines[row.doc_id] | {"scorer": digest} for row in rows]
        scored = {line["id"] for line in ordered if line["status"] == "scored"}
        _tidy_details(folder, self._listing, scored, self.details)
        partial_info = None
        if self.partial and self.unfinished:
            unread = [doc_id for doc_id in self.unfinished if (records.get(doc_id) or {}).get("unread")]
            partial_info = {
                "no_answer": len(self.unfinished) - len(unread),
                "not_scored": len(unread),
                "e.g.": self.unfinished[:10],
            }
        summary = summarize(ordered, folder.name, partial_info)
        summary["provenance"] = provenance(self.dataset, digest)
        results = folder.path(SCORER)
        storage.write_bytes(storage.join(results, "scores.jsonl"), jsonl(ordered))
        storage.write_parquet(storage.join(results, "scores.parquet"), scores_table(ordered))
        storage.write_bytes(storage.join(results, "verdicts.parquet"), self._verdicts.parquet([r.doc_id for r in rows]))
        pages.write(folder.url, self.dataset, rows, records)  # paths and page counts for reports
        storage.write_json(storage.join(results, "summary.json"), summary)
        cost = total_cost(records[row.doc_id] for row in rows if row.doc_id in records)
        log.info("%s", scored_line(folder.name, ordered, self.rescored))
        log.info("%s", headline_line(summary, cost))
        cluster.timing("documents (their CPU)", sum(self.seconds.values()))
        report = {"run": folder.name, "cost": cost, "scorers": {SCORER: summary}}
        return Graded(report, frozenset(self.nodes), self.seconds, self.elapsed)


FAILED_NAMED = 3
"""How many failed documents the grading line names before it counts the rest."""
_REASON_SHOWN = 160


def scored_line(name: str, lines: list[dict[str, Any]], rescored: int) -> str:
    """`12 documents scored, 11 of them from the cache`, then the failed documents: the first few by
    name with their reason, the rest counted (scores.jsonl has every one)."""
    scored = sum(1 for line in lines if line["status"] == "scored")
    text = f"{name}: {scored} documents scored, {max(0, scored - rescored)} of them from the cache"
    failed = [line for line in lines if line["status"] != "scored"]
    if not failed:
        return text
    named = "; ".join(
        f"{line['id']} ({' '.join(str(line.get('error') or 'no reason recorded').split())[:_REASON_SHOWN]})"
        for line in failed[:FAILED_NAMED]
    )
    more = f"; and {len(failed) - FAILED_NAMED} more" if len(failed) > FAILED_NAMED else ""
    return f"{text}; {len(failed)} failed: {named}{more} (all in {SCORER}/scores.jsonl)"


def grade(
    folder: RunFolder,
    dataset: Dataset,
    rows: Sequence[Row],
    *,
    partial: bool = False,
    details: bool = True,
    brought: bool = False,
) -> Graded:
    """Grade the run's `rows`: the report `oeb grade` prints (run, cost, the scorer's summary)."""
    return Grader(folder, dataset, rows, details=details, partial=partial, brought=brought).finish()


def _task_failed(error: BaseException) -> GradingError:
    """What went wrong outside oeb (Ray, a worker lost for good), as one line."""
    first = next(iter(str(error).strip().splitlines()), "")[:300]
    return GradingError(
        f"a grading task failed ({type(error).__name__}: {first}); grade again: the documents scored so far "
        "come from the cache (scores.jsonl and summary.json are unchanged)"
    )


def _gold_sizes(dataset: Dataset) -> dict[str, int]:
    """Gold file sizes from one listing of the dataset (none when it cannot be listed, e.g. the Hub)."""
    try:
        return storage.list_files(dataset.location)
    except StorageError:
        return {}


def _unfinished_error(folder: RunFolder, unfinished: list[str], brought: bool) -> UnfinishedRun:
    more = f" and {len(unfinished) - _SHOWN} more" if len(unfinished) > _SHOWN else ""
    ids = ", ".join(unfinished[:_SHOWN]) + more
    if brought:
        return UnfinishedRun(
            f"{len(unfinished)} rows have no file in {folder.path('predictions')} ({ids}); add their "
            "predictions, or grade with --partial to count them as failed"
        )
    return UnfinishedRun(
        f"{folder.url} is not finished, so it has no headline yet: {len(unfinished)} rows never predicted or "
        f"answered but not yet read ({ids}); run oeb resume {folder.url} to predict them, or grade with "
        "--partial to count them as failed"
    )


def _failed_line(row: Row, error: str) -> dict[str, Any]:
    return {"id": row.doc_id, "status": "failed", "row": {"suite": row.suite}, "error": error}


def _error_text(error: dict[str, Any]) -> str:
    """A record's error as a failed line gives it."""
    return f"{error.get('type')}: {error.get('message')}"


def _warn_strays(folder: RunFolder, listing: dict[str, int], known: set[str]) -> None:
    strays = sorted(
        path.removeprefix("predictions/")
        for path in listing
        if path.startswith("predictions/") and path.removeprefix("predictions/").removesuffix(".json") not in known
    )
    if strays:
        log.warning(
            "%s: %d files match no row of the manifest and are ignored (%s)",
            folder.path("predictions"),
            len(strays),
            ", ".join(strays[:3]),
        )


def _restore_predictions(folder: RunFolder, records: dict[str, dict[str, Any]], listing: dict[str, int]) -> None:
    """Rewrite the prediction of a successful record whose prediction file was lost."""
    lost = [
        doc_id
        for doc_id, record in records.items()
        if record.get("error") is None
        and not record.get("unread")
        and record.get("output") is not None
        and f"predictions/{doc_id}.json" not in listing
    ]
    for doc_id in lost:
        storage.write_json(folder.prediction_url(doc_id), records[doc_id]["output"])
        listing[f"predictions/{doc_id}.json"] = len(json.dumps(records[doc_id]["output"]))
    if lost:
        log.info("%s: restored %d lost predictions from their records (%s)", folder.name, len(lost), lost[0])


def _tidy_details(folder: RunFolder, listing: dict[str, int], scored: set[str], details: bool) -> None:
    """Leave details only for documents scored now; `--no-details` removes the folder."""
    prefix = f"{SCORER}/details/"
    if not details:
        storage.remove(folder.path(SCORER, "details"))
        return
    for path in listing:
        if path.startswith(prefix) and path.removeprefix(prefix).removesuffix(".jsonl") not in scored:
            storage.remove(folder.path(path))
