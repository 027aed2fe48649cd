"""The predict stage on Ray: a pool of actors holding the system, and the driver booking each call's
start (`oeb.run.limiter`) and saving each document's record the moment it comes back.

Each actor holds one adapter (rebuilt from its name and options) and answers several documents at
once on threads; a call reads its document, waits for its booked start, then makes one attempt
(`oeb.systems.predict_attempt`). A transient failure comes back as a `Retry`: the driver keeps it,
holding no slot of `max_in_flight`, until its back-off is over, then books its start from the same
schedule (before any fresh document) and gives it to any actor, so retries count against the rate
limit too. The time budget (counted from the first attempt) and the retry policy stay the systems
layer's. The driver is the only writer of the run folder. A `RunStopped` ends the run after the calls
already in flight are collected and saved (they are paid for); documents waiting for a retry are
left unasked, with no record, for a resume. Ctrl-C abandons the calls in flight and keeps what was
saved.

An actor that dies (its process killed, its node lost) is replaced, and the documents it was
answering are asked again (a retry with its earlier attempts, in the same budget): they have no
record, since only the driver saves. A call in flight at the death may have reached the vendor, so
it can be billed twice; nothing tells oeb whether it did.
"""

from __future__ import annotations

import heapq
import itertools
import math
import os
import time
from collections import Counter, deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import ray
from ray.exceptions import GetTimeoutError, RayActorError, RayTaskError

from oeb.dataset import Dataset, Row
from oeb.errors import Interrupted, RunStopped
from oeb.run.cluster import alive_nodes, pinned, spread, system_keys, worker_env
from oeb.run.config import Config
from oeb.run.folder import RunFolder
from oeb.run.limiter import StartSchedule
from oeb.run.progress import PredictProgress
from oeb.systems import Asking, Question, ReadCrashed, Retry, get, predict_attempt, question_schema

_WAIT_SECONDS = 0.5
_START_SECONDS = 120.0
ASKS_PER_DOCUMENT = 3
"""A document whose actor died this many times while answering it stops the run: it may be what
kills the actor (a crash in a local model), and asking again would only pay again."""
REPLACEMENTS_PER_ACTOR = 3
"""More actor deaths than this many per actor stop the run: the actors cannot live, whatever the document."""


@ray.remote(num_cpus=0)
class SystemActor:
    """One adapter of the run's system; each method call predicts one document."""

    def __init__(self, system: str, options: dict[str, Any], dataset: Dataset) -> None:
        self.adapter = get(system, options)
        self.dataset = dataset

    def take_env(self, env: dict[str, str]) -> None:
        """Take the driver's storage settings and the system's API keys as they are now (a reused
        Ray session predates them). They come in a call, not in the actor's runtime environment,
        which Ray writes to its logs in plain text."""
        os.environ.update(env)

    def predict(self, row: Row, timeout: float, delay: float, asking: Asking | None = None) -> dict[str, Any]:
        """One attempt at the document: its record, a `Retry` for the driver to book, or the reason the
        run must stop (with the record to keep, if any), and the Ray node that asked. The attempt starts
        `delay` seconds after the call arrived (its booked start); `asking` carries earlier attempts."""
        arrived = time.monotonic()
        node = ray.get_runtime_context().get_node_id()
        question = Question(self.dataset.document(row), question_schema(dict(row.schema)))
        time.sleep(max(0.0, delay - (time.monotonic() - arrived)))
        outcome = {"record": None, "retry": None, "stop": None, "node": node, "started": time.monotonic()}
        try:
            answer = predict_attempt(self.adapter, question, timeout=timeout, asking=asking)
            outcome["retry" if isinstance(answer, Retry) else "record"] = answer
        except ReadCrashed as crash:
            outcome |= {"record": crash.record, "stop": f"{type(crash).__name__}: {crash}"}
        except RunStopped as stop:
            outcome["stop"] = f"{type(stop).__name__}: {stop}"
        return outcome


@dataclass
class Pool:
    """The actors of one system, each pinned to a node; `load` counts calls given to each actor."""

    config: Config
    dataset: Any
    actors: list[Any] = field(default_factory=list)
    nodes: list[str] = field(default_factory=list)
    load: list[int] = field(default_factory=list)
    replaced: int = 0

    @classmethod
    def start(cls, config: Config, dataset: Dataset) -> Pool:
        pool = cls(config, ray.put(dataset))
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
        try:
            env = worker_env() | system_keys(self.config.adapter.keys, self.config.adapter.stand_ins)
            ray.get([actor.take_env.remote(env) for actor in actors], timeout=_START_SECONDS)
        except GetTimeoutError:
            raise RunStopped(
                f"the actors of {self.config.system} did not start within {_START_SECONDS:g} s; check the "
                "cluster (ray status)"
            ) from None
        except RayActorError as death:
            raise RunStopped(f"the actors of {self.config.system} cannot start ({_why(death)})") from None

    def _actor(self, node: str) -> Any:
        config = self.config
        per_actor = math.ceil(config.in_flight() / config.actors())
        options = {"max_concurrency": per_actor, "scheduling_strategy": pinned(node)}
        return SystemActor.options(**options).remote(config.system, config.adapter.options(), self.dataset)

    def submit(self, row: Row, delay: float, asking: Asking | None) -> tuple[Any, int, Any]:
        """The call's reference, the actor's slot and the actor (to tell a replaced actor's calls)."""
        index = self.load.index(min(self.load))
        self.load[index] += 1
        actor = self.actors[index]
        return actor.predict.remote(row, self.config.timeout, delay, asking), index, actor

    def replace(self, index: int, death: RayActorError) -> None:
        """A new actor in the dead one's place: on its node while the node lives, else on the alive
        node with the fewest actors."""
        if death.actor_init_failed:
            raise RunStopped(f"the actors of {self.config.system} cannot start ({_why(death)})")
        if self.replaced >= REPLACEMENTS_PER_ACTOR * len(self.actors):
            raise RunStopped(f"the actors of {self.config.system} died {self.replaced + 1} times (last: {_why(death)})")
        self.replaced += 1
        ray.kill(self.actors[index], no_restart=True)
        alive = alive_nodes()
        if self.nodes[index] not in alive:
            used = Counter(node for node in self.nodes if node in alive)
            self.nodes[index] = min(alive, key=lambda node: used[node])
        self.actors[index] = self._actor(self.nodes[index])
        self._ready([self.actors[index]])

    def stop(self) -> None:
        for actor in self.actors:
            ray.kill(actor)


class Retries:
    """Documents to ask again, each with its earlier attempts and the time (the driver's clock) it may
    start: a retry once its back-off is over, a document whose actor died at once."""

    def __init__(self) -> None:
        self._heap: list[tuple[float, int, Row, Asking | None]] = []
        self._order = itertools.count()

    def __len__(self) -> int:
        return len(self._heap)

    def add(self, row: Row, asking: Asking | None, not_before: float = -math.inf) -> None:
        heapq.heappush(self._heap, (not_before, next(self._order), row, asking))

    def first(self) -> float:
        """When the earliest may start."""
        return self._heap[0][0]

    def pop(self) -> tuple[Row, Asking | None]:
        _, _, row, asking = heapq.heappop(self._heap)
        return row, asking

    def clear(self) -> None:
        self._heap.clear()


def predict_rows(config: Config, dataset: Dataset, rows: Sequence[Row], folder: RunFolder) -> dict[str, Any]:
    """Predict `rows`, saving each record as it comes; returns the booked start times of every attempt
    (`starts`, the driver's clock), when the actors started the attempts that came back (`started`,
    each node's monotonic clock: comparable on one machine), the most calls in flight at once and the
    nodes that answered."""
    if not rows:
        return {"starts": [], "started": [], "peak_in_flight": 0, "nodes": []}
    pool = Pool.start(config, dataset)
    schedule = StartSchedule(config.ray.requests_per_second)
    limit = config.in_flight()
    queue = deque(rows)
    retries = Retries()
    pending: dict[Any, tuple[Row, int, Any, Asking | None]] = {}
    died: Counter[str] = Counter()
    started: list[float] = []
    peak = 0
    stop: str | None = None
    nodes: set[str] = set()
    bug: RayTaskError | None = None
    progress = PredictProgress(folder.name, len(rows))
    try:
        with progress:
            while queue or retries or pending:
                while len(pending) < limit and not schedule.wait():
                    if retries and schedule.due(retries.first()):
                        row, asking = retries.pop()
                    elif queue:
                        row, asking = queue.popleft(), None
                    else:
                        break
                    ref, index, actor = pool.submit(row, schedule.book(), asking)
                    pending[ref] = (row, index, actor, asking)
                peak = max(peak, len(pending))
                progress.in_flight(len(pending))
                wait = _WAIT_SECONDS
                if len(pending) < limit and (queue or retries):
                    wait = schedule.wait() if queue else max(schedule.wait(), retries.first() - time.monotonic())
                wait = min(wait, _WAIT_SECONDS)
                if not pending:
                    time.sleep(wait)
                    continue
                done, _ = ray.wait(list(pending), num_returns=1, timeout=wait)
                for ref in done:
                    row, index, actor, asking = pending.pop(ref)
                    pool.load[index] -= 1
                    try:
                        outcome = ray.get(ref)
                    except RayActorError as death:
                        stop = stop or _ask_again(pool, index, actor, death, row, asking, died, retries)
                        continue
                    except RayTaskError as error:
                        bug = bug or error
                        continue
                    nodes.add(outcome["node"])
                    started.append(outcome["started"])
                    if (retry := outcome["retry"]) is not None:
                        retries.add(row, retry.asking, time.monotonic() + retry.wait)
                    if outcome["record"] is not None:
                        folder.save(row.doc_id, outcome["record"])
                        progress.saved(row.doc_id, outcome["record"])
                    stop = stop or outcome["stop"]
                if stop or bug:
                    queue.clear()
                    retries.clear()
        stats = {"starts": schedule.starts, "started": started, "peak_in_flight": peak, "nodes": sorted(nodes)}
    except KeyboardInterrupt:
        raise Interrupted(
            f"interrupted: {progress.done} of {len(rows)} documents saved, the calls in flight abandoned; "
            f"continue with: oeb resume {folder.url}"
        ) from None
    finally:
        pool.stop()
    if bug is not None:
        raise bug
    if stop is not None:
        raise RunStopped(
            f"the run stopped ({stop}); {progress.done} documents saved. Fix the cause, then continue with: "
            f"oeb resume {folder.url}"
        )
    return stats


def _ask_again(
    pool: Pool,
    index: int,
    actor: Any,
    death: RayActorError,
    row: Row,
    asking: Asking | None,
    died: Counter[str],
    retries: Retries,
) -> str | None:
    """Ask a document whose actor died again at once, with the attempts it had before (replacing the
    actor once); the reason to stop the run instead, if any."""
    try:
        if pool.actors[index] is actor:
            pool.replace(index, death)
    except RunStopped as stop:
        return str(stop)
    died[row.doc_id] += 1
    if died[row.doc_id] >= ASKS_PER_DOCUMENT:
        return f"the actor answering {row.doc_id} died {died[row.doc_id]} times while answering it"
    retries.add(row, asking)
    return None


def _why(death: RayActorError) -> str:
    return " ".join(str(death).split())[:300]
