"""Sending one system's documents as provider batches, on one thread of the driver's process.

The thread cuts the documents waiting into batches (each within the provider's published limits on
requests and bytes, and within the budget: a batch's worst case at the batch price must fit what is
left of `budget.usd` once the records and the batches in flight are counted), sends each, and writes
its file the moment the provider accepts it. It then polls every batch in flight, each first
`poll_interval` after it was sent and then at doubling intervals up to `poll_max`, sleeping in
between. An ended batch's results become records by custom id; a request without a result (the
batch expired or was cancelled first) or with a transient error (429, 5xx, an unusable answer) goes
back to the queue for a later batch, counted as an attempt, up to the retry policy's retries.
The driver takes the records (`take`), saves them and says so (`saved`); a batch's file is removed
once each of its documents is saved or held by a later batch.

A batch's file is first written as an intent, before its create is sent. A create with no answer (a
reset, a timeout, a 5xx: the provider may have taken it) is looked up in the provider's batch list
by the intent's tag and adopted when found; only a batch the provider does not hold is sent again.
A lookup that fails stops the system with the intent kept (its worst case counted against the
budget), and the resume looks it up first. A batch whose file the run folder cannot take is handed
to the driver (`unsaved`) for the spill folder, and the system stops as on a storage outage.
A batch that fails as a whole records the provider's reason on each of its documents; a refused
account or a provider limit stops the system instead, as on the direct path.
"""

from __future__ import annotations

import dataclasses
import json
import math
import queue
import threading
import time
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from oeb.batch import files, intents
from oeb.dataset import Dataset, Row
from oeb.errors import RunStopped, StorageError, StorageOutage
from oeb.systems import (
    Adapter,
    Asking,
    Call,
    Cost,
    Deadline,
    Question,
    ReadCrashed,
    RetryPolicy,
    SystemFailed,
    question_schema,
    settle,
    stop_if_fatal,
)
from oeb.systems.batches import Batches

CALL_SECONDS = 3600.0
"""The time limit of one batch request (an upload and create, a poll, a download): generous, since
an upload may be 256 MB."""
LOST = frozenset({404, 410})


@dataclass
class Live:
    """A batch in flight (or ended, with documents not yet saved)."""

    file: files.BatchFile
    wait: float
    next_poll: float
    state: str = "sent"
    ended: bool = False
    open: set[str] = field(default_factory=set)
    """Documents of the batch not yet saved nor held by a later batch."""
    spent: float | None = None
    """What its answers cost so far (None: no figure)."""
    failures: int = 0
    """Polls failed in a row."""

    def line(self, now: float) -> str:
        return files.describe(self.file, self.state, self.spent, now)


def worst_case(adapter: Adapter, batches: Batches, dataset: Dataset, rows: Sequence[Row]) -> float:
    """The most `rows` may cost in batches (each answer at its output cap, at the batch price);
    the batches must be priced (`Batches.priced`)."""
    pages = dataset.page_counts(rows)
    total = 0.0
    for row in rows:
        schema = adapter.prepare_schema(question_schema(dict(row.schema)))
        total += batches.worst_usd(pages[row.doc_id], dataset.document(row), schema) or 0.0
    return total


@dataclass(frozen=True)
class Request:
    """A document ready to go into a batch: its entry as sent and what it may cost."""

    row: Row
    asking: Asking
    custom_id: str
    entry: dict[str, Any]
    size: int
    worst: float | None


class Sender:
    """One system's batches: start it, then take records until `busy` is false."""

    def __init__(
        self,
        adapter: Adapter,
        batches: Batches,
        dataset: Dataset,
        rows: Sequence[Row],
        folder_url: str,
        *,
        timeout: float,
        budget_usd: float | None = None,
        spent_usd: float = 0.0,
        poll: tuple[float, float] = (30.0, 300.0),
        policy: RetryPolicy | None = None,
    ) -> None:
        self.adapter = adapter
        self.batches = batches
        self.dataset = dataset
        self.rows = {row.doc_id: row for row in rows}
        self.folder_url = folder_url
        self.timeout = timeout
        self.budget = budget_usd
        self.spent = spent_usd
        self.poll_interval, self.poll_max = poll
        self.policy = policy or adapter.retry
        self.queue: deque[tuple[Row, Asking]] = deque()
        self.live: list[Live] = []
        self.every: list[Live] = []
        """Every batch of this run, ended or not (for the statistics)."""
        self.records: queue.SimpleQueue[tuple[Row, dict[str, Any]]] = queue.SimpleQueue()
        self.notes: queue.SimpleQueue[str] = queue.SimpleQueue()
        self.stop: str | None = None
        self.bug: BaseException | None = None
        self.outage: StorageOutage | None = None
        """The storage failure that stopped the sender (a batch file could not be written or removed)."""
        self.unsaved: list[files.BatchFile] = []
        """Batches the provider accepted whose files the run folder could not take: for the spill folder."""
        self.intents: list[files.BatchFile] = []
        """Batches an earlier process sent without an answer: looked up before anything is sent."""
        self.left: int | None = None
        """Documents never sent because the budget could not pay for them."""
        self._lock = threading.Lock()
        self._halt = threading.Event()
        self._pages: dict[str, int | None] = {}
        self._unsent = 0
        """Creates refused in a row for now (429, 5xx, no connection)."""
        self._thread = threading.Thread(target=self._run, name="oeb-batches", daemon=True)
        self._adopt(rows)

    def _adopt(self, rows: Sequence[Row]) -> None:
        """Take the batches an earlier process left in the folder: a document a batch holds is
        collected from it (the latest batch holding it), never sent again; the rest wait to be sent."""
        holder: dict[str, str] = {}
        found = files.live(self.folder_url)
        self.intents = [batch for batch in found if files.intent(batch)]
        found = [batch for batch in found if not files.intent(batch)]
        for batch in found:
            for held in batch["documents"].values():
                holder[held["doc_id"]] = batch["name"]
        now = time.time()
        for batch in found:
            mine = {held["doc_id"] for held in batch["documents"].values()}
            open_ = {doc_id for doc_id in mine if doc_id in self.rows and holder[doc_id] == batch["name"]}
            if not open_:
                files.remove(self.folder_url, batch["name"])
                continue
            self.live.append(Live(batch, self.poll_interval, now, state="collecting", open=open_))
        self.every = list(self.live)
        held_now = {doc_id for live in self.live for doc_id in live.open}
        held_now |= {held["doc_id"] for batch in self.intents for held in batch["documents"].values()}
        self.queue.extend((row, Asking(started=now)) for row in rows if row.doc_id not in held_now)

    @property
    def held(self) -> int:
        """Documents in batches not yet answered."""
        with self._lock:
            return sum(len(live.open) for live in self.live if not live.ended)

    def start(self) -> None:
        if self.budget is not None and self.queue:
            self._pages = self.dataset.page_counts([row for row, _ in self.queue])
        self._thread.start()

    def busy(self) -> bool:
        return self._thread.is_alive() or not self.records.empty()

    def halt(self) -> None:
        """Send nothing more; batches in flight stay written down for a resume."""
        self._halt.set()

    def take(self) -> tuple[list[tuple[Row, dict[str, Any]]], list[str]]:
        """The records made since the last call, and the live view's notes."""
        made, notes = [], []
        while not self.records.empty():
            made.append(self.records.get_nowait())
        while not self.notes.empty():
            notes.append(self.notes.get_nowait())
        return made, notes

    def saved(self, doc_id: str) -> None:
        """The document's record is saved: a batch with nothing left open is forgotten."""
        with self._lock:
            done = [live for live in self.live if doc_id in live.open]
            for live in done:
                live.open.discard(doc_id)
        for live in done:
            self._forget_if_done(live)

    def stats(self) -> list[dict[str, Any]]:
        """Every batch of the run: its id, requests, last state, when it was sent, its spend and worst case."""
        with self._lock:
            return [
                {"batch_id": live.file["handle"]["batch_id"], "requests": live.file["requests"], "state": live.state,
                 "sent": live.file["sent"], "spent_usd": live.spent, "worst_usd": live.file["worst_usd"]}
                for live in self.every
            ]  # fmt: skip

    def _forget_if_done(self, live: Live) -> None:
        with self._lock:
            if not (live.ended and not live.open) or live not in self.live:
                return
            self.live.remove(live)
        files.remove(self.folder_url, live.file["name"])

    # The thread.

    def _run(self) -> None:
        try:
            for batch in self.intents:
                self._resolve(batch)
            while not self._halt.is_set():
                self._send()
                if not self.live:
                    if not self.queue:
                        return
                    if self._unsent == 0:  # nothing in flight, and the budget pays for none of them
                        self.left = len(self.queue)
                        self.queue.clear()
                        return
                    continue  # the provider refused the last create for now: send again
                polls = [live for live in self.live if not live.ended]
                if not polls:  # ended, waiting for the driver to save their records
                    self._halt.wait(0.2)
                    continue
                due = min(live.next_poll for live in polls)
                if self._halt.wait(max(0.0, due - time.time())):
                    return
                for live in polls:
                    if live.next_poll <= time.time():
                        self._poll(live)
        except RunStopped as stop:
            self.stop = f"{type(stop).__name__}: {stop}"
        except StorageError as error:
            self.outage = error if isinstance(error, StorageOutage) else StorageOutage(str(error))
        except BaseException as bug:
            self.bug = bug

    def _outstanding(self) -> float:
        """The worst case of the batches not yet answered, at the batch price."""
        with self._lock:
            return math.fsum(live.file["worst_usd"] or 0.0 for live in self.live if not live.ended)

    def _request(self, row: Row, asking: Asking, custom_id: str) -> Request:
        question = self._question(row)
        schema = self.adapter.prepare_schema(question.schema)
        entry = self.batches.entry(custom_id, question.document, schema)
        size = len(json.dumps(entry)) + 1
        worst = self.batches.worst_usd(self._pages.get(row.doc_id), question.document, schema)
        return Request(row, asking, custom_id, entry, size, worst)

    def _question(self, row: Row) -> Question:
        return Question(self.dataset.document(row), question_schema(dict(row.schema)))

    def _custom_id(self, row: Row, taken: set[str]) -> str:
        """The document id where the provider allows it, else `doc-<n>` (the file maps it back)."""
        custom_id = self.batches.custom_id(row.doc_id)
        n = len(taken)
        while custom_id is None or custom_id in taken:
            n += 1
            custom_id = f"doc-{n}"
        taken.add(custom_id)
        return custom_id

    def _send(self) -> None:
        """Send what waits, batch after batch, while the limits and the budget allow."""
        limits = self.batches.limits
        while self.queue and not self._halt.is_set():
            batch: list[Request] = []
            size, worst, taken = 0, 0.0, set[str]()
            while self.queue and len(batch) < limits.requests:
                row, asking = self.queue[0]
                request = self._request(row, asking, self._custom_id(row, taken))
                if request.size > limits.bytes:
                    self.queue.popleft()
                    self._too_large(request)
                    continue
                if size + request.size > limits.bytes:
                    break
                if self.budget is not None:
                    cost = request.worst if request.worst is not None else math.inf
                    if self.spent + self._outstanding() + worst + cost > self.budget * (1 + 1e-9):
                        break
                    worst += cost
                self.queue.popleft()
                batch.append(request)
                size += request.size
            if not batch:
                return  # the budget holds the rest until batches in flight are answered
            if not self._create(batch, size):
                return

    def _create(self, batch: list[Request], size: int) -> bool:
        """Send one batch, its intent written first; False when it must wait (the provider is unavailable)."""
        sent = intents.new(self.batches.provider, size, [(r.custom_id, r.row.doc_id, r.asking, r.worst) for r in batch])
        name = sent["name"]
        try:
            files.write(self.folder_url, sent)
        except StorageError:
            self.queue.extendleft((r.row, r.asking) for r in reversed(batch))
            raise
        deadline = Deadline(CALL_SECONDS, policy=self.policy)
        try:
            handle = self.batches.create([request.entry for request in batch], sent["tag"], deadline)
        except SystemFailed as failure:
            try:  # a refused connection or account: the provider took nothing
                stop_if_fatal(self.adapter, failure)
            except RunStopped:
                files.remove(self.folder_url, name)
                raise
            found = self._look_up(sent, failure) if failure.transient or failure.status is None else None
            if found is None:
                files.remove(self.folder_url, name)
                return self._refused_create(batch, failure)
            handle = found
            self.notes.put(f"the answer to a batch create was lost ({failure.message[:200]}); the provider holds it: "
                           f"batch {handle['batch_id']}, collected, not sent again")  # fmt: skip
        self._unsent = 0
        sent["handle"] = handle
        self._accepted(sent, {r.row.doc_id for r in batch})
        return True

    def _refused_create(self, batch: list[Request], failure: SystemFailed) -> bool:
        """A create the provider did not take: stop for the account, wait for an outage, else fail each request."""
        stop_if_fatal(self.adapter, failure)
        if failure.transient or failure.status is None:
            self._unsent += 1
            if self._unsent >= self.policy.poll_failures:
                raise RunStopped(
                    f"{self.adapter.label}: {self._unsent} batches in a row could not be sent (last: "
                    f"{failure.message[:300]}); check the provider, then resume"
                ) from None
            self.queue.extendleft((r.row, r.asking) for r in reversed(batch))
            self.notes.put(f"the batch could not be sent ({failure.message[:200]}); trying again")
            self._halt.wait(self.policy.poll_delay(self._unsent))
            return False
        self._unsent = 0
        for request in batch:  # the provider refused the batch itself: each request fails
            self._settle(request.row, request.asking, failure, None)
        return True

    def _look_up(self, sent: files.BatchFile, lost: SystemFailed | None) -> dict[str, Any] | None:
        known = frozenset(str(live.file["handle"]["batch_id"]) for live in self.every)
        deadline = Deadline(CALL_SECONDS, policy=self.policy)
        return intents.look_up(self.adapter, self.batches, sent, lost, known, deadline)

    def _resolve(self, sent: files.BatchFile) -> None:
        """An intent an earlier process left: adopt the batch the provider holds, else send its documents again."""
        held = {custom_id: held for custom_id, held in sent["documents"].items() if held["doc_id"] in self.rows}
        handle = self._look_up(sent, None) if held else None
        if handle is None:
            files.remove(self.folder_url, sent["name"])
            self.queue.extend((self.rows[h["doc_id"]], Asking.from_json(h["asking"])) for h in held.values())
            return
        sent["handle"] = handle
        self.notes.put(f"batch {handle['batch_id']} found for an unanswered create: collected, not sent again")
        self._accepted(sent, {h["doc_id"] for h in held.values()})

    def _accepted(self, sent: files.BatchFile, docs: set[str]) -> None:
        """Write a batch the provider holds down and poll it; a run folder that cannot take the file
        hands it to the driver for the spill folder, and the system stops."""
        try:
            files.write(self.folder_url, sent)
        except StorageError:
            self.unsaved.append(sent)
            self._halt.set()
            raise
        live = Live(sent, self.poll_interval, time.time() + self.poll_interval, open=docs)
        with self._lock:
            self.live.append(live)
            self.every.append(live)
            earlier = [old for old in self.live if old is not live and old.open & live.open]
            for old in earlier:
                old.open -= live.open
        for old in earlier:
            self._forget_if_done(old)
        self.notes.put(live.line(time.time()))

    def _too_large(self, request: Request) -> None:
        limit = self.batches.limits.bytes
        failure = SystemFailed(
            f"the request is {request.size:,} bytes, more than one {self.batches.provider} batch takes "
            f"({limit:,} bytes); ask this document without batch: true",
            status=413,
        )
        self._settle(request.row, request.asking, failure, None)

    def _poll(self, live: Live) -> None:
        deadline = Deadline(CALL_SECONDS, policy=self.policy)
        handle = live.file["handle"]
        try:
            status = self.batches.status(handle, deadline)
            if status.failure is not None:
                self._failed(live, status.state, status.failure)
                return
            results = self.batches.results(handle, deadline) if status.ended else None
        except SystemFailed as failure:
            stop_if_fatal(self.adapter, failure)
            if failure.status in LOST:  # the provider no longer knows it: its documents are sent again
                self._ended(live, f"lost (HTTP {failure.status})", {})
                return
            live.failures += 1
            if live.failures >= self.policy.poll_failures:  # it stays written down: a resume polls it again
                raise RunStopped(
                    f"{self.adapter.label}: batch {handle['batch_id']} could not be polled {live.failures} times in "
                    f"a row (last: {failure.message[:300]}); check the provider, then resume"
                ) from None
            self.notes.put(f"batch {handle['batch_id']}: a poll failed ({failure.message[:200]}); polling on")
            self._later(live)
            return
        live.failures = 0
        if results is None:
            if status.state != live.state:
                live.state = status.state
                self.notes.put(live.line(time.time()))
            self._later(live)
            return
        self._ended(live, status.state, results)

    def _failed(self, live: Live, state: str, failure: SystemFailed) -> None:
        """A batch that failed as a whole: a refused account or a provider limit stops the system (its
        documents asked on resume, as on the direct path); any other reason is each document's error,
        never sent again in this run."""
        if failure.account_failure or failure.status == 429:
            with self._lock:
                live.ended, live.open = True, set()
            self._forget_if_done(live)
            stop_if_fatal(self.adapter, failure)
            raise RunStopped(
                f"{self.adapter.label}: the provider refused a batch for a limit ({failure.message[:400]}); "
                "resume once the limit allows"
            )
        batch_id = str(live.file["handle"]["batch_id"])
        for held in live.file["documents"].values():
            if held["doc_id"] in live.open:
                each = SystemFailed(failure.message, status=failure.status, body=failure.body)
                self._settle(self.rows[held["doc_id"]], Asking.from_json(held["asking"]), each, batch_id)
        with self._lock:
            live.ended = True
            live.state = state
        self.notes.put(live.line(time.time()))
        self._forget_if_done(live)

    def _later(self, live: Live) -> None:
        """The next poll, twice as far off as the last (at most `poll_max`)."""
        live.wait = min(self.poll_max, live.wait * 2)
        live.next_poll = time.time() + live.wait

    def _ended(self, live: Live, state: str, results: dict[str, Call | SystemFailed]) -> None:
        """Record what the batch answered; send again what it did not and what may still succeed."""
        batch_id = str(live.file["handle"]["batch_id"])
        for custom_id, held in live.file["documents"].items():
            doc_id = held["doc_id"]
            if doc_id not in live.open:
                continue
            asking = Asking.from_json(held["asking"])
            result = results.get(custom_id) or SystemFailed(
                f"batch {batch_id} ended ({state}) without answering this request", status=503
            )
            if isinstance(result, SystemFailed) and result.transient and asking.attempts < self.policy.retries:
                cost = asking.cost + (result.cost or Cost())
                again = dataclasses.replace(asking, attempts=asking.attempts + 1, cost=cost, failure=result)
                self.queue.append((self.rows[doc_id], again))
                continue
            spent = self._settle(self.rows[doc_id], asking, result, batch_id)
            if spent is not None:
                live.spent = (live.spent or 0.0) + spent
        with self._lock:
            live.ended = True
            live.state = state
        self.notes.put(live.line(time.time()))
        self._forget_if_done(live)

    def _settle(self, row: Row, asking: Asking, result: Call | SystemFailed, batch_id: str | None) -> float | None:
        """Make the document's record and hand it to the driver; what it cost in dollars."""
        question = self._question(row)
        sent = self.adapter.prepare_schema(question.schema)
        result.sent = sent
        try:
            record = settle(self.adapter, question, asking, result, timeout=self.timeout, batch_id=batch_id)
        except ReadCrashed as crash:
            record = crash.record | ({} if batch_id is None else {"batch_id": batch_id})
            self.stop = self.stop or f"{type(crash).__name__}: {crash}"
            self._halt.set()
        usd = (record.get("cost") or {}).get("usd")
        if isinstance(usd, int | float):
            with self._lock:
                self.spent += usd
        self.records.put((row, record))
        return usd if isinstance(usd, int | float) else None
