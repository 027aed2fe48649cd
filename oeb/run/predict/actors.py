"""The Ray actors that hold a system, and their pool: what runs away from the driver.

Each actor holds one adapter (rebuilt from its name and options) and answers several documents at
once on threads; a call reads its document, waits for its booked start, then makes one attempt
(`oeb.systems.predict_attempt`). A system's only actor is also given a call ahead of a free slot: it
starts the moment a slot frees, in the order the calls came, spaced from the actor's previous start
by the pace (`_Starts`); a job vendor's upload is made while it waits (the step's gate). A job
vendor's actor writes the job's handle into the run folder the moment the vendor answers
(`oeb.run.predict.jobs`), then collects the job in the same call. Without Ray the same actors answer
on threads of the driver's process (`LocalPool`); `Calls` hides which from the driver loop
(`oeb.run.predict.stage`). An actor that dies is replaced by its pool (`Pool.replace`).
"""

from __future__ import annotations

import concurrent.futures
import functools
import math
import os
import threading
import time
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from oeb import storage
from oeb.dataset import Dataset, Row
from oeb.errors import RunStopped, StorageOutage
from oeb.run.cluster.session import alive_nodes, pinned, spread, system_keys, worker_env
from oeb.run.plan.config import Config
from oeb.run.predict import jobs
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

_START_SECONDS = 120.0
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
        gold = (
            self.dataset.gold(row) if type(self.adapter).uses_gold and not self.dataset.goldless else None
        )  # mock simulates from the gold
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


def _why(death: BaseException) -> str:
    return " ".join(str(death).split())[:300]
