"""One system inside the predict stage's driver loop: its share of the run (`Job`), its state in
the loop (`SystemRun`, `BatchRun` for a system whose documents go as provider batches), the documents
it asks again (`Retries`) and its calls in flight (`Call`). The loop itself is `oeb.run.predict.stage`.
"""

from __future__ import annotations

import heapq
import itertools
import math
import time
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from oeb.batch.sender import Sender
from oeb.dataset import Dataset, Row
from oeb.errors import OebError, StorageOutage
from oeb.run.cluster.progress import RunProgress
from oeb.run.folder.run_folder import RunFolder
from oeb.run.plan.config import Config
from oeb.run.plan.spending import Spending
from oeb.run.predict.actors import Pool
from oeb.run.predict.limiter import StartSchedule
from oeb.run.predict.spill import Spill
from oeb.systems import Asking

_WAIT_SECONDS = 0.5
"""How long the driver loop waits for an answer when nothing is due to start sooner."""


class Retries:
    """Documents to ask again, each with its earlier attempts and the time (the driver's clock) it may
    start: a retry once its back-off is over, a document whose actor died at once."""

    def __init__(self) -> None:
        self._heap: list[tuple[float, int, Row, Asking | None]] = []
        self._order = itertools.count()

    def __len__(self) -> int:
        return len(self._heap)

    def add(self, row: Row, asking: Asking | None, not_before: float = -math.inf) -> None:
        """Ask `row` again once `not_before` has passed, passing `asking` back."""
        heapq.heappush(self._heap, (not_before, next(self._order), row, asking))

    def first(self) -> float:
        """When the earliest may start."""
        return self._heap[0][0]

    def last(self) -> float:
        """When the latest may start (-inf when every one may start now)."""
        return max(entry[0] for entry in self._heap)

    def pop(self) -> tuple[Row, Asking | None]:
        """The earliest retry."""
        _, _, row, asking = heapq.heappop(self._heap)
        return row, asking

    def clear(self) -> None:
        """Forget every retry (its document is left without a record, for a resume)."""
        self._heap.clear()


@dataclass(frozen=True)
class Job:
    """One system's share of a run: what to ask, where to save it, the jobs to collect, the budget."""

    label: str
    """The system's name in the progress and the leaderboard (unique in the run)."""
    config: Config
    dataset: Dataset
    rows: tuple[Row, ...]
    folder: RunFolder
    collect: dict[str, Asking] = field(default_factory=dict)
    """Documents among `rows` whose job an earlier process submitted: collected first, never bought again."""
    spending: Spending | None = None
    """The system's spend against its budget (None: no budget)."""


Saved = Callable[[Job, str, dict[str, Any]], None]
"""Called with (job, doc_id, record) once a record is saved: the grading that starts at once."""
Done = Callable[[Job, "Predicted"], None]
"""Called with (job, its predict stage) once a system has nothing left to ask and every record it got
is saved, while others may still be asking: its grading can finish now, not after the slowest."""


@dataclass
class SystemRun:
    """One system inside the driver loop: its pool, start schedule, in-flight cap, queue and retries,
    spend, and why it stopped. Holds no record longer than it takes to save it."""

    job: Job
    pool: Pool
    schedule: StartSchedule
    queue: deque[Row]
    limit: int
    retries: Retries = field(default_factory=Retries)
    in_flight: int = 0
    peak: int = 0
    done: int = 0
    started: list[float] = field(default_factory=list)
    nodes: set[str] = field(default_factory=set)
    died: Counter[str] = field(default_factory=Counter)
    handles: set[str] = field(default_factory=set)
    """Documents whose job handle is written in the folder (removed once their record is saved)."""
    saving: int = 0
    """Records queued to the `Saver` and not yet taken back by the loop."""
    done_said: bool = False
    """Whether `Done` was called for this system."""
    stop: str | None = None
    bug: BaseException | None = None
    left: int | None = None
    """Documents never started because the budget was reached (None: it was not)."""
    shown_pace: float | None = None
    budget_note: str | None = None
    """The budget-reached line, held until the saves queued before it are shown (so it follows them)."""
    halted: bool = False
    outage: StorageOutage | None = None
    """The storage failure that stopped the system (its unsaved answers are in `spill`)."""
    spill: Spill | None = None

    def busy(self) -> bool:
        """Whether the system has anything left to ask or collect."""
        return bool(self.queue or self.retries or self.in_flight)

    def answered(self, progress: RunProgress) -> list[tuple[Row, dict[str, Any]]]:
        """Records that came back outside the actors' calls (a batch system's), to save."""
        return []

    def saved(self, doc_id: str) -> None:
        """The document's record is saved."""

    def may_start(self) -> bool:
        """Whether the budget lets one more fresh document start now; once it is reached for good,
        the documents never started are counted and dropped."""
        spending = self.job.spending
        if spending is None or not self.queue:
            return bool(self.queue)
        unanswered = self.in_flight + len(self.retries)
        if spending.may_start(unanswered):
            return True
        if not unanswered or spending.reached:
            self.left = len(self.queue)
            self.queue.clear()
        return False

    def fill(self, pending: dict[Any, Call]) -> None:
        """Submit what the system may start now: retries whose back-off is over first (a job to
        collect among them), then fresh documents the budget allows, while under its in-flight cap
        (plus the calls its actor may hold ahead, which the budget counts as in flight) and its
        schedule books a start."""
        while self.in_flight < self.limit + self.pool.ahead and not self.schedule.wait():
            if self.retries and self.schedule.due(self.retries.first()):
                row, asking = self.retries.pop()
            elif self.may_start():
                row, asking = self.queue.popleft(), None
            else:
                break
            self.call(pending, row, self.schedule.book(), asking)
        if not self.pool.ahead:  # else the actor counts the calls that started (`running`)
            self.peak = max(self.peak, self.in_flight)

    def call(self, pending: dict[Any, Call], row: Row, delay: float, asking: Asking | None) -> None:
        """Give one step at `row` to an actor of the system."""
        ref, index, actor = self.pool.submit(row, delay, asking, self.schedule.interval)
        pending[ref] = Call(self, row, index, actor, asking)
        self.in_flight += 1

    def wake(self) -> float:
        """Seconds until the system may start something (`_WAIT_SECONDS` when it waits for answers only)."""
        if self.in_flight >= self.limit + self.pool.ahead or not (self.queue or self.retries):
            return _WAIT_SECONDS
        spending = self.job.spending
        if self.queue and (spending is None or spending.may_start(self.in_flight + len(self.retries))):
            return self.schedule.wait()
        if not self.retries:  # the budget holds fresh starts until an answer comes back
            return _WAIT_SECONDS
        return max(self.schedule.wait(), self.retries.first() - time.monotonic())

    def halt(self) -> None:
        """Start nothing more: the calls in flight are still collected and saved (a job waiting to be
        collected again keeps its handle in the folder, for a resume); a call waiting at an actor for a
        slot comes back unasked."""
        self.queue.clear()
        self.retries.clear()
        if not self.halted:
            self.halted = True
            self.pool.halt()

    def stats(self) -> dict[str, Any]:
        """The booked starts (driver's clock), the actors' start times of the attempts that came back
        (each node's monotonic clock: comparable on one machine), the most calls in flight at once,
        the nodes that answered, the 429s met and what was spent."""
        spending = self.job.spending
        return {"starts": self.schedule.starts, "started": self.started, "peak_in_flight": self.peak,
                "nodes": sorted(self.nodes), "throttled": self.schedule.throttles,
                "spent": None if spending is None else spending.spent}  # fmt: skip


@dataclass
class BatchRun(SystemRun):
    """A system whose documents go as provider batches (`oeb.batch`): no actor asks anything; the
    batches' sender works on a thread of this process, and the loop saves what it answered."""

    sender: Sender | None = None

    def busy(self) -> bool:
        assert self.sender is not None
        if self.sender.busy():
            return True
        self.stop = self.stop or self.sender.stop  # the sender has ended: how it ended is the system's
        self.bug = self.bug or self.sender.bug
        if self.sender.outage is not None and self.outage is None:  # its batch files go to the spill folder
            self.outage = self.sender.outage
            self.spill = self.spill or Spill(self.job.folder.url, str(self.outage))
            for batch in self.sender.unsaved:
                self.spill.keep_batch(dict(batch))
        self.left = self.sender.left
        return False

    def fill(self, pending: dict[Any, Call]) -> None:
        assert self.sender is not None
        self.in_flight = self.sender.held
        self.peak = max(self.peak, self.in_flight)

    def wake(self) -> float:
        return _WAIT_SECONDS

    def answered(self, progress: RunProgress) -> list[tuple[Row, dict[str, Any]]]:
        assert self.sender is not None
        made, notes = self.sender.take()
        for note in notes:
            progress.note(self.job.label, note)
        return made

    def saved(self, doc_id: str) -> None:
        assert self.sender is not None
        self.sender.saved(doc_id)

    def halt(self) -> None:
        if self.sender is not None:
            self.sender.halt()
        self.halted = True

    def stats(self) -> dict[str, Any]:
        assert self.sender is not None
        return super().stats() | {"batches": self.sender.stats()}


@dataclass(frozen=True)
class Call:
    """A call in flight: its system, document, actor slot and actor, and the attempts before it."""

    system: SystemRun
    row: Row
    index: int
    actor: Any
    asking: Asking | None


@dataclass(frozen=True)
class Predicted:
    """One system's predict stage: its statistics, and why it ended early (a stop, its budget reached;
    None: every document asked)."""

    stats: dict[str, Any]
    stopped: OebError | None
