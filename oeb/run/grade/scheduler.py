"""The session's grading queue: which documents go together in a task, and where tasks run (on the
warm workers of a Ray the command is attached to, on tasks of its own on another Ray, or in this
process). Every grading of the session (`oeb.run.grade.stage.Grader`) puts its documents here; the
largest waiting document goes first, small ones are packed into tasks of bounded size, and only a few
tasks per CPU are in flight, so the order holds.
"""

from __future__ import annotations

import heapq
import itertools
import threading
import time
from collections.abc import Sequence
from typing import Any, Protocol

from oeb import storage
from oeb.dataset import Dataset
from oeb.run.cluster import session as cluster
from oeb.run.folder.run_folder import RunFolder
from oeb.run.grade import workers
from oeb.run.grade.task import Group, Item, dataset_of, grade_groups, put_once

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
_WAIT_SECONDS = 0.2
_LOOKAHEAD = 64
"""Documents of other folders set aside while packing one folder's batch, at most."""


class Grading(Protocol):
    """What the queue asks of a folder's grading (`oeb.run.grade.stage.Grader`): named here, so the
    queue below does not import the stage above it."""

    folder: RunFolder
    dataset: Dataset
    details: bool
    streaming: bool
    outstanding: int
    queued: int
    error: BaseException | None

    def take(self, results: list[dict[str, Any]], node: str) -> None: ...
    def fail(self, error: BaseException, items: int) -> None: ...
    def done(self, items: int) -> None: ...


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


Batch = list[tuple["Grading", list[Item]]]
"""One task's documents, by grading: gradings on one dataset with one details setting share tasks."""


class _Queue:
    """The session's scoring work, every grading's: largest first, a few tasks per CPU in flight,
    run by one thread that lives while there is work. While a run's answers stream in (gradings
    not finishing yet), a few small documents wait up to `HOLD_SECONDS` for more to share a task."""

    def __init__(self, executor: _Executor) -> None:
        self.executor = executor
        self.changed = threading.Condition()
        self._waiting: list[tuple[int, int, Grading, Item, float]] = []
        self._bytes = 0
        self._order = itertools.count()
        self._thread: threading.Thread | None = None
        self._closed = False

    def put(self, grader: Grading, items: Sequence[Item]) -> None:
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
        others: list[tuple[int, int, Grading, Item, float]] = []
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


def session_queue() -> _Queue:
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
