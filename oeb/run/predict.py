"""The predict stage on Ray: per system a pool of actors holding it, and ONE driver loop for every
system of the run, booking each call's start (`oeb.run.limiter`) and saving each document's record
the moment it comes back.

Each actor holds one adapter (rebuilt from its name and options) and answers several documents at
once on threads; a call reads its document, waits for its booked start, then makes one attempt
(`oeb.systems.predict_attempt`). A system's only actor is also given a call ahead of a free slot: it
starts the moment a slot frees, in the order the calls came, spaced from the actor's previous start
by the pace (`_Starts`); a job vendor's upload is made while it waits (the step's gate).
Each system keeps its own start schedule, in-flight cap, retries and stop (`SystemRun`); the driver
waits on the calls of all of them at once (one `ray.wait`), so ten systems run side by side in one
process and none waits for another. A job vendor's actor writes
the job's handle into the run folder the moment the vendor answers (`oeb.run.jobs`), then collects
the job in the same call. A transient failure comes back as a `Retry`: the driver keeps it, holding
no slot of the system's in-flight cap, until its back-off is over, then books its start from the
same schedule (before any fresh document) and gives it to any actor of that system, so retries count
against the rate limit too. The time budget (counted from the first attempt) and the retry policy
stay the systems layer's. The driver is the only writer of records, and keeps a record only until it
is saved; the writes themselves run on threads of their own (`Saver`), so the loop never waits on a
disk or an object store. A `RunStopped` of one system (a 402, a refused key) ends that system after
its calls already in flight are collected and saved (they are paid for); its documents waiting for a
retry are left unasked, with no record, for a resume; the other systems go on. Ctrl-C abandons every
call in flight and keeps what was saved. Storage that fails for good (down past `storage.retry_s`, a
full or read-only disk) stops every system the same way, collecting the calls in flight: each answer
that cannot be saved, and each job handle an actor could not write, goes to the run's spill folder on
local disk (`oeb.run.spill`), which `oeb resume` imports.

An actor that dies (its process killed, its node lost) is replaced, and the documents it was
answering are asked again (a retry with its earlier attempts, in the same budget): they have no
record, since only the driver saves; a document whose job handle is in the folder is collected, not
bought again. A call in flight at the death may have reached the vendor before its answer (a job
id, a completion) came back, so it can be billed twice; nothing tells oeb whether it did
(docs/crash-costs.md).
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import functools
import heapq
import itertools
import math
import os
import queue
import threading
import time
from collections import Counter, deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from oeb import _sigterm, storage
from oeb.batch.sender import Sender
from oeb.dataset import Dataset, Row
from oeb.errors import BudgetReached, OebError, RunStopped, StorageOutage, StorageStopped
from oeb.run import jobs
from oeb.run.cluster import alive_nodes, pinned, spread, system_keys, uses_ray, worker_env
from oeb.run.config import Config
from oeb.run.folder import RunFolder
from oeb.run.limiter import StartSchedule
from oeb.run.progress import RunProgress
from oeb.run.spending import Spending
from oeb.run.spill import Spill
from oeb.systems import (
    Asking,
    NotStarted,
    Question,
    ReadCrashed,
    Retry,
    Submitted,
    get,
    predict_attempt,
    question_schema,
)
from oeb.systems.batches import Batches

TOO_MANY_REQUESTS = 429
_WAIT_SECONDS = 0.5
_START_SECONDS = 120.0
ASKS_PER_DOCUMENT = 3
"""A document whose actor died this many times while answering it stops its system: it may be what
kills the actor (a crash in a local model), and asking again would only pay again."""
REPLACEMENTS_PER_ACTOR = 3
"""More actor deaths than this many per actor stop the system: the actors cannot live, whatever the document."""
AHEAD = 1
"""Calls a system's only actor holds beyond its in-flight cap, each waiting for a slot: the next
document starts the moment one frees, not after its answer went to the driver and a new call came
back (docs/performance/scale.md: 30 to 60 ms a document under load)."""


class _Starts:
    """An actor's share of its system's in-flight cap, and the spacing of its starts. Calls line up
    as they arrive and start in that order (the driver's), each once a slot is free, at its booked
    time and one interval of the pace after the actor's previous start; a call that waits in line
    (given ahead) does not start at all once the system is halted. Only the head of the line is
    woken, and only when it may go: a wake-up costs the thread that frees a slot the interpreter's
    lock for a switch interval."""

    def __init__(self, slots: int) -> None:
        self._slots = slots
        self._lock = threading.Lock()
        self._line: deque[threading.Event] = deque()
        self._last = -math.inf
        self._running = 0
        self._halted = False

    def line_up(self) -> threading.Event:
        """A call arrived: its place in line (its ticket, set when its turn has come)."""
        ticket = threading.Event()
        with self._lock:
            self._line.append(ticket)
            self._next()
        return ticket

    def take(self, ticket: threading.Event, not_before: float, interval: float) -> int | None:
        """Wait for the call's turn, a slot and the start; how many calls run with this one, or None
        once halted (the call has then left the line)."""
        ticket.wait()
        with self._lock:
            self._line.remove(ticket)
            if self._halted:
                return None
            start = max(not_before, self._last + interval, time.monotonic())
            self._last = start  # when it really starts: a call that waited for a slot starts late
            self._running += 1
            running = self._running
            self._next()
        time.sleep(max(0.0, start - time.monotonic()))
        return running

    def leave(self, ticket: threading.Event) -> None:
        """The call ended without starting (its upload failed, say): the next in line may go."""
        with self._lock:
            if ticket in self._line:
                self._line.remove(ticket)
                self._next()

    def give_back(self) -> None:
        """The call ended: its slot is free."""
        with self._lock:
            self._running -= 1
            self._next()

    def halt(self) -> None:
        """The system stopped: no call in line starts."""
        with self._lock:
            self._halted = True
            for ticket in self._line:
                ticket.set()

    def _next(self) -> None:
        """Let the head of the line go if a slot is free (the lock held)."""
        if self._line and self._running < self._slots:
            self._line[0].set()


class SystemActor:
    """One adapter of a system; each `predict` call predicts one document. On Ray it is an actor
    (`_remote_actor`); without Ray the same class answers on threads of the driver's process."""

    def __init__(
        self,
        system: str,
        options: dict[str, Any],
        dataset: Dataset,
        folder_url: str,
        node: str | None = None,
        slots: int | None = None,
    ) -> None:
        self.adapter = get(system, options)
        self.starts = _Starts(slots) if slots else None
        """With `slots` (a system's only actor, given calls ahead): at most that many of its calls
        asking the vendor at once, its starts spaced by the actor. Without, each call starts at its
        booked time and the driver's count is the cap."""
        self.dataset = dataset
        self.rows = {row.doc_id: row for row in dataset.rows}
        """The dataset's rows by doc_id: a call names its document, it does not carry its schema."""
        self.folder_url = folder_url
        """The run folder, whose jobs/ holds the handles of the jobs this actor submits."""
        self.node = node or _ray().get_runtime_context().get_node_id()

    def take_env(self, env: dict[str, str], keys: dict[str, str], secrets: dict[str, Any]) -> None:
        """Take the driver's storage settings, and the system's API keys and storage credentials, as
        they are now (a reused Ray session predates them). They come in a call, not in the actor's
        runtime environment, which Ray writes to its logs in plain text; the credentials are held in
        memory for the run (`oeb.storage.hold`), which ends with the actor."""
        os.environ.update(env | keys)
        storage.hold(secrets)

    def halt(self) -> None:
        """The system stopped: calls waiting for a slot return without asking (`started` None)."""
        if self.starts is not None:
            self.starts.halt()

    def predict(
        self, doc_id: str, timeout: float, delay: float, asking: Asking | None = None, interval: float = 0.0
    ) -> dict[str, Any]:
        """One step at the document: its record, a `Retry` for the driver to book, or the reason the
        system must stop (with the record to keep, if any), the node that asked and how many of the
        actor's calls were asking then (`running`). The step starts `delay` seconds after the call
        arrived (its booked start); on a system's only actor, also once a slot is free and `interval`
        after the actor's previous start. `asking` carries earlier attempts (and a job's handle to
        collect). A job the vendor takes has its handle written into the run folder at once (`handle`
        says so: the driver removes it once the record is saved), then is collected in the same call:
        a death from then on loses no job."""
        arrived = time.monotonic()
        row = self.rows[doc_id]
        gold = self.dataset.gold(row) if type(self.adapter).uses_gold else None  # mock simulates from the gold
        question = Question(self.dataset.document(row), question_schema(dict(row.schema)), gold)
        outcome: dict[str, Any] = {"record": None, "retry": None, "handle": asking is not None and bool(asking.handle)}
        outcome |= {"stop": None, "node": self.node, "started": None, "running": 0, "outage": None, "job": None}
        if self.starts is None:
            time.sleep(max(0.0, arrived + delay - time.monotonic()))
            outcome["started"] = time.monotonic()
            self._ask(row, question, timeout, asking, outcome)
            return outcome
        starts, ticket = self.starts, self.starts.line_up()

        def gate() -> None:  # a job's upload is made before it: it overlaps the wait for a slot
            running = starts.take(ticket, arrived + delay, interval)
            if running is None:
                raise NotStarted(f"{self.adapter.label} was stopped while {doc_id} waited for a slot")
            outcome.update(started=time.monotonic(), running=running)

        time.sleep(max(0.0, arrived + delay - time.monotonic()))
        try:
            self._ask(row, question, timeout, asking, outcome, gate)
        except NotStarted:
            pass
        finally:
            if outcome["started"] is None:
                starts.leave(ticket)
            else:
                starts.give_back()
        return outcome

    def _ask(
        self,
        row: Row,
        question: Question,
        timeout: float,
        asking: Asking | None,
        outcome: dict[str, Any],
        gate: Callable[[], None] | None = None,
    ) -> None:
        """The step itself, its results put into `outcome`; `gate` waits for a slot before the paid request."""
        try:
            answer = predict_attempt(self.adapter, question, timeout=timeout, asking=asking, gate=gate)
            while isinstance(answer, Submitted):  # again only for a job the vendor lost, at most once
                try:
                    jobs.write(self.folder_url, row.doc_id, answer.asking.to_json())
                except StorageOutage as outage:  # the driver keeps the handle in the spill folder
                    outcome |= {"outage": outage, "job": answer.asking.to_json()}
                    return
                outcome["handle"] = True
                answer = predict_attempt(self.adapter, question, timeout=timeout, asking=answer.asking)
            outcome["retry" if isinstance(answer, Retry) else "record"] = answer
        except ReadCrashed as crash:
            outcome |= {"record": crash.record, "stop": f"{type(crash).__name__}: {crash}"}
        except RunStopped as stop:
            outcome["stop"] = f"{type(stop).__name__}: {stop}"


def _ray() -> Any:
    """Ray, imported when a run uses it (importing it costs seconds a run without Ray need not pay)."""
    import ray

    return ray


@functools.cache
def _remote_actor() -> Any:
    """`SystemActor` as a Ray actor class (it takes no CPU: it waits on vendors)."""
    return _ray().remote(num_cpus=0)(SystemActor)


LOCAL_NODE = "this process"
"""The node the records of a run without Ray come from."""


@dataclass
class Pool:
    """The actors of one system, each pinned to a node; `load` counts calls given to each actor;
    `ahead` calls beyond the cap wait at the actor for a slot (`AHEAD` with one actor, else none:
    the actor spaces its own starts, which paces the system only when it is the only one)."""

    config: Config
    dataset: Any
    folder_url: str
    actors: list[Any] = field(default_factory=list)
    nodes: list[str] = field(default_factory=list)
    load: list[int] = field(default_factory=list)
    replaced: int = 0

    @property
    def ahead(self) -> int:
        """Calls beyond the system's cap its actors may hold: `AHEAD` for a system's only actor."""
        return AHEAD if self.config.actors() == 1 else 0

    def slots(self) -> int:
        """Each actor's share of the system's in-flight cap."""
        return math.ceil(self.config.in_flight() / self.config.actors())

    def actor_slots(self) -> int | None:
        """What an actor is built with: its slots when it spaces its own starts (given calls ahead)."""
        return self.slots() if self.ahead else None

    @classmethod
    def start(cls, config: Config, dataset: Any, folder_url: str) -> Pool:
        """The system's actors, started and holding its keys (`dataset`: the dataset's object reference),
        writing job handles into the run folder at `folder_url`."""
        pool = cls(config, dataset, folder_url)
        for node in spread(config.actors()):
            pool.actors.append(pool._actor(node))
            pool.nodes.append(node)
            pool.load.append(0)
        try:
            pool._ready(pool.actors)
        except BaseException:
            pool.stop()
            raise
        return pool

    def _ready(self, actors: list[Any]) -> None:
        """Wait until `actors` have started. A call sent to an actor still starting would wait in
        its queue and start late, beside calls booked after it: the pace would break."""
        from ray.exceptions import GetTimeoutError, RayActorError

        try:
            keys = system_keys(self.config.adapter.key_names(), self.config.adapter.stand_ins)
            secrets = storage.credentials()
            _ray().get([actor.take_env.remote(worker_env(), keys, secrets) for actor in actors], timeout=_START_SECONDS)
        except GetTimeoutError:
            raise RunStopped(
                f"the actors of {self.config.system} did not start within {_START_SECONDS:g} s; check the "
                "cluster (ray status)"
            ) from None
        except RayActorError as death:
            raise RunStopped(f"the actors of {self.config.system} cannot start ({_why(death)})") from None

    def _actor(self, node: str) -> Any:
        config = self.config
        # a thread per slot, and with calls given ahead one per such call and one for `halt`
        threads = self.slots() + (self.ahead + 1 if self.ahead else 0)
        options = {"max_concurrency": threads, "scheduling_strategy": pinned(node)}
        actor = _remote_actor().options(**options)
        adapter = config.adapter.options()
        return actor.remote(config.system, adapter, self.dataset, self.folder_url, None, self.actor_slots())

    def slot(self) -> tuple[int, Any]:
        """The least loaded actor, and its slot, now counted one call busier."""
        index = self.load.index(min(self.load))
        self.load[index] += 1
        return index, self.actors[index]

    def submit(self, row: Row, delay: float, asking: Asking | None, interval: float) -> tuple[Any, int, Any]:
        """The call's reference, the actor's slot and the actor (to tell a replaced actor's calls)."""
        index, actor = self.slot()
        return actor.predict.remote(row.doc_id, self.config.timeout, delay, asking, interval), index, actor

    def replace(self, index: int, death: Exception) -> None:
        """A new actor in the dead one's place: on its node while the node lives, else on the alive
        node with the fewest actors."""
        if getattr(death, "actor_init_failed", False):
            raise RunStopped(f"the actors of {self.config.system} cannot start ({_why(death)})")
        if self.replaced >= REPLACEMENTS_PER_ACTOR * len(self.actors):
            raise RunStopped(f"the actors of {self.config.system} died {self.replaced + 1} times (last: {_why(death)})")
        self.replaced += 1
        _ray().kill(self.actors[index], no_restart=True)
        alive = alive_nodes()
        if self.nodes[index] not in alive:
            used = Counter(node for node in self.nodes if node in alive)
            self.nodes[index] = min(alive, key=lambda node: used[node])
        self.actors[index] = self._actor(self.nodes[index])
        self._ready([self.actors[index]])

    def halt(self) -> None:
        """No call waiting at an actor for a slot may start (the system stopped)."""
        for actor in self.actors:
            actor.halt.remote()

    def stop(self) -> None:
        """Kill every actor (their calls in flight are abandoned)."""
        for actor in self.actors:
            _ray().kill(actor)


@dataclass
class LocalPool(Pool):
    """The same actors without Ray: `SystemActor`s in this process, each call on a thread of its own
    (daemon threads: Ctrl-C abandons the calls in flight, as on Ray). The driver's in-flight cap
    bounds the threads."""

    @classmethod
    def start(cls, config: Config, dataset: Any, folder_url: str) -> Pool:
        pool = cls(config, dataset, folder_url)
        for _ in range(config.actors()):
            options = config.adapter.options()
            pool.actors.append(SystemActor(config.system, options, dataset, folder_url, LOCAL_NODE, pool.actor_slots()))
            pool.nodes.append(LOCAL_NODE)
            pool.load.append(0)
        return pool

    def submit(self, row: Row, delay: float, asking: Asking | None, interval: float) -> tuple[Any, int, Any]:
        index, actor = self.slot()
        future: concurrent.futures.Future[dict[str, Any]] = concurrent.futures.Future()

        def call() -> None:
            try:
                future.set_result(actor.predict(row.doc_id, self.config.timeout, delay, asking, interval))
            except BaseException as bug:  # a bug in an adapter: raised by the driver when it takes the result
                future.set_exception(bug)

        threading.Thread(target=call, name=f"oeb-{self.config.system}", daemon=True).start()
        return future, index, actor

    def replace(self, index: int, death: Exception) -> None:
        raise RunStopped(f"{self.config.system} failed in this process ({_why(death)})")

    def halt(self) -> None:
        for actor in self.actors:
            actor.halt()

    def stop(self) -> None:
        """Nothing to stop: threads still running end with the process."""


@dataclass(frozen=True)
class Calls:
    """Where calls run: on Ray (references, `ray.wait`) or on threads here (futures). The driver
    loop is the same for both."""

    on_ray: bool

    def pool(self, config: Config, dataset: Dataset, shared: Any, folder_url: str) -> Pool:
        """A system's started pool; `shared` is the dataset as another system of the run holds it."""
        if not self.on_ray:
            return LocalPool.start(config, dataset, folder_url)
        return Pool.start(config, shared if shared is not None else _ray().put(dataset), folder_url)

    def wait(self, pending: list[Any], timeout: float) -> list[Any]:
        """The calls among `pending` that have ended, waiting at most `timeout` seconds for one: every
        one that has ended by then, so the loop takes a burst of answers in one turn, not one a turn."""
        if self.on_ray:
            ray = _ray()
            done, rest = ray.wait(pending, num_returns=1, timeout=timeout)
            if done and rest:
                more, _ = ray.wait(rest, num_returns=len(rest), timeout=0)
                done += more
            return list(done)
        finished, _ = concurrent.futures.wait(pending, timeout=timeout, return_when=concurrent.futures.FIRST_COMPLETED)
        return list(finished)

    def result(self, ref: Any) -> dict[str, Any]:
        """A call's outcome; raises what killed its actor or the adapter's bug."""
        if self.on_ray:
            outcome: dict[str, Any] = _ray().get(ref)
            return outcome
        return ref.result()  # type: ignore[no-any-return]

    def died(self, error: BaseException) -> bool:
        """Whether `error` is an actor's death (asked again), not a bug."""
        if not self.on_ray:
            return False
        from ray.exceptions import RayActorError

        return isinstance(error, RayActorError)


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


class Saver:
    """Saves records on threads of their own: each save is two atomic writes with an fsync (or two
    PUTs) and a job handle's removal, and on the driver loop they held up every system's next start
    (in a ten-system run they were most of the loop's time). A document's files keep their order on
    one thread (prediction, record, then its handle removed); the loop takes the finished saves
    (`finished`) to count, show and grade them. Closing waits for the saves queued: paid answers."""

    THREADS = 2

    def __init__(self) -> None:
        self._pool = concurrent.futures.ThreadPoolExecutor(self.THREADS, thread_name_prefix="oeb-save")
        self._done: queue.SimpleQueue[tuple[SystemRun, Row, dict[str, Any], BaseException | None, bool]]
        self._done = queue.SimpleQueue()
        self.outage: StorageOutage | None = None
        """The storage failure that stopped saving: every save after it goes to the spill folder."""
        self.handled = False
        """Whether the loop has stopped the systems for the outage."""

    def save(self, run: SystemRun, row: Row, record: dict[str, Any], handle: bool) -> None:
        """Queue the document's record (and, with `handle`, its job handle's removal after it)."""
        run.saving += 1
        self._pool.submit(self._write, run, row, record, handle)

    def _write(self, run: SystemRun, row: Row, record: dict[str, Any], handle: bool) -> None:
        error, outage = None, self.outage  # storage down for good: no save is tried, it could only wait again
        if outage is None:
            try:
                run.job.folder.save(row.doc_id, record)
                if handle:
                    jobs.remove(run.job.folder.url, row.doc_id)
            except StorageOutage as failure:
                outage = failure
            except BaseException as failure:  # raised by the loop when it takes this save
                error = failure
        if outage is not None:
            self.failed(run, outage)
            self.spill(run).keep(row.doc_id, record)  # a record even local disk refuses is counted lost
        self._done.put((run, row, record, error, outage is not None))

    def failed(self, run: SystemRun, outage: StorageOutage) -> None:
        """Storage failed for good: the first outage is the run's cause."""
        self.outage = self.outage or outage
        run.outage = run.outage or self.outage

    def spill(self, run: SystemRun) -> Spill:
        """The system's spill folder (made on first use)."""
        if run.spill is None:
            run.spill = Spill(run.job.folder.url, str(self.outage))
        return run.spill

    def finished(self, timeout: float = 0.0) -> list[tuple[SystemRun, Row, dict[str, Any]]]:
        """The saves done since the last call (waiting up to `timeout` seconds for one), without those
        that went to the spill folder; raises a save's failure (a lost lock, a bug), which ends the run
        as it always did."""
        done: list[tuple[SystemRun, Row, dict[str, Any], BaseException | None, bool]] = []
        try:
            done.append(self._done.get(timeout=timeout) if timeout > 0 else self._done.get_nowait())
            while True:
                done.append(self._done.get_nowait())
        except queue.Empty:
            pass
        for run, _, _, error, _ in done:
            run.saving -= 1
            if error is not None:
                raise error
        return [(run, row, record) for run, row, record, _, spilled in done if not spilled]

    def close(self) -> None:
        self._pool.shutdown(wait=True)


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
                _show_pace(run, progress)
            wait = min([_WAIT_SECONDS, *(run.wake() for run in runs if run.busy())])
            if pending:
                for ref in calls.wait(list(pending), wait):
                    _collect(calls, pending.pop(ref), ref, progress, saver)
                wait = 0.0
            for run, row, record in saver.finished(wait):
                _saved(run, row, record, progress, on_saved)
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
    for run in runs:
        progress.in_flight(run.job.label, 0)


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
            progress.note(
                run.job.label, f"budget reached ({spending.line()}); collecting the {run.in_flight} in flight"
            )


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


def _why(death: BaseException) -> str:
    return " ".join(str(death).split())[:300]
