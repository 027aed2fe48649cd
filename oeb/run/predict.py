"""The predict stage on Ray: a pool of actors holding the system, one shared rate limiter, and the
driver saving each document's record the moment it comes back.

Each actor holds one adapter (rebuilt from its name and options) and answers several documents at
once on threads; every call first takes a start from the system's limiter. Retries and the time
budget are the systems layer's (`oeb.systems.predict`). The driver is the only writer of the run
folder. A `StopRun` ends the run after the calls already in flight are collected and saved (they
are paid for); Ctrl-C abandons the calls in flight and keeps what was saved.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import ray
from ray.exceptions import RayTaskError

from oeb.dataset import Dataset, Row
from oeb.errors import Interrupted, RunStopped
from oeb.run.cluster import spread, worker_env
from oeb.run.config import Config
from oeb.run.folder import RunFolder
from oeb.run.limiter import RateLimiter
from oeb.run.progress import PredictProgress
from oeb.systems import Question, ReadCrashed, StopRun, get, predict, question_schema

_WAIT_SECONDS = 0.5


@ray.remote(num_cpus=0)
class SystemActor:
    """One adapter of the run's system; each method call predicts one document."""

    def __init__(self, system: str, options: dict[str, Any], dataset: Dataset, limiter: Any) -> None:
        self.adapter = get(system, options)
        self.dataset = dataset
        self.limiter = limiter

    def predict(self, row: Row, timeout: float) -> dict[str, Any]:
        """The document's record, or the reason the run must stop (with the record to keep, if any),
        and the Ray node that asked."""
        node = ray.get_runtime_context().get_node_id()
        question = Question(self.dataset.document(row), question_schema(dict(row.schema)))
        ray.get(self.limiter.acquire.remote())
        try:
            return {"record": predict(self.adapter, question, timeout=timeout), "stop": None, "node": node}
        except ReadCrashed as crash:
            return {"record": crash.record, "stop": f"{type(crash).__name__}: {crash}", "node": node}
        except StopRun as stop:
            return {"record": None, "stop": f"{type(stop).__name__}: {stop}", "node": node}
        finally:
            ray.get(self.limiter.release.remote())


@dataclass
class Pool:
    """The actors of one system and their limiter; `load` counts calls given to each actor."""

    actors: list[Any]
    limiter: Any
    load: list[int] = field(default_factory=list)

    @classmethod
    def start(cls, config: Config, dataset: Dataset) -> Pool:
        limiter = RateLimiter.remote(config.ray.requests_per_second, config.ray.max_in_flight)
        count = config.actors()
        per_actor = math.ceil(config.in_flight() / count)
        dataset_ref = ray.put(dataset)
        # A reused Ray session (a test's, a notebook's) was started before the keys were set: hand
        # each actor the system's variables as they are now.
        env = {"env_vars": worker_env(config.adapter.keys, config.adapter.stand_ins)}
        actors = [
            SystemActor.options(max_concurrency=per_actor, scheduling_strategy=strategy, runtime_env=env).remote(
                config.system, config.adapter.options(), dataset_ref, limiter
            )
            for strategy in spread(count)
        ]
        return cls(actors, limiter, [0] * count)

    def submit(self, row: Row, timeout: float) -> tuple[Any, int]:
        index = self.load.index(min(self.load))
        self.load[index] += 1
        return self.actors[index].predict.remote(row, timeout), index

    def stop(self) -> None:
        for actor in [*self.actors, self.limiter]:
            ray.kill(actor)


def predict_rows(config: Config, dataset: Dataset, rows: Sequence[Row], folder: RunFolder) -> dict[str, Any]:
    """Predict `rows`, saving each record as it comes; returns the limiter's statistics (start
    times, peak calls in flight) and the nodes whose actors answered."""
    if not rows:
        return {"starts": [], "peak_in_flight": 0, "nodes": []}
    pool = Pool.start(config, dataset)
    queue = deque(rows)
    pending: dict[Any, tuple[Row, int]] = {}
    stop: str | None = None
    nodes: set[str] = set()
    bug: RayTaskError | None = None
    progress = PredictProgress(folder.name, len(rows))
    try:
        with progress:
            while queue or pending:
                while queue and len(pending) < config.in_flight():
                    row = queue.popleft()
                    ref, index = pool.submit(row, config.timeout)
                    pending[ref] = (row, index)
                progress.in_flight(len(pending))
                done, _ = ray.wait(list(pending), num_returns=1, timeout=_WAIT_SECONDS)
                for ref in done:
                    row, index = pending.pop(ref)
                    pool.load[index] -= 1
                    try:
                        outcome = ray.get(ref)
                    except RayTaskError as error:
                        bug, outcome = bug or error, {"record": None, "stop": None, "node": None}
                        queue.clear()
                    nodes.add(outcome["node"])
                    if outcome["record"] is not None:
                        folder.save(row.doc_id, outcome["record"])
                        progress.saved(row.doc_id, outcome["record"])
                    if outcome["stop"]:
                        stop = stop or outcome["stop"]
                        queue.clear()
        stats = ray.get(pool.limiter.stats.remote()) | {"nodes": sorted(n for n in nodes if n)}
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
