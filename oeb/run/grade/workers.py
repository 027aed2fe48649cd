"""Warm grading workers: Ray actors that outlive a command, so a regrade attached to a running Ray
pays neither worker start-up nor the scorer's imports (docs/grading.md, "Warm grading workers").

Ray gives every job (every `oeb` command) worker processes of its own, and each imports the scorer
(numpy, scipy, pyarrow) before its first task: on a small regrade that costs more than the scoring.
So a command attached to a running Ray grades on detached actors in the `oeb` namespace, one per
CPU of each alive node, named by oeb's version and a digest of oeb's code: the first command
creates them, the next ones find them by name (`get_if_exists`, so two commands starting at once
share them). A changed or upgraded oeb uses workers of its own and retires the idle ones left by
another code. A worker removes itself after `OEB_WARM_MINUTES` (default 30) without a call;
`oeb grade --stop-workers` removes them at once, as `ray stop` does with everything.

The workers ask Ray for no CPU: idle, they block no other work on the cluster. Each grades one
batch at a time (a second command's batches wait their turn), with the storage settings and the
credentials the call brings, the credentials held for that batch only (a worker outlives the
command that started it, and must not keep its caller's secrets).
"""

from __future__ import annotations

import hashlib
import logging
import os
import resource
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import oeb
from oeb import storage
from oeb.errors import GradingError, UsageError
from oeb.run.cluster.session import (
    ADDRESS_VARIABLE,
    FORWARDED_PREFIXES,
    choose,
    session,
    warm_minutes,
    worker_env,
)

if TYPE_CHECKING:
    from oeb.dataset import Dataset
    from oeb.run.grade.task import Group

log = logging.getLogger(__name__)

NAMESPACE = "oeb"
"""The Ray namespace of the workers (detached actors are found by name within a namespace)."""
PREFIX = "grading-"
ATTEMPTS = 3
"""A batch whose worker died is graded again on another worker, at most this many times in all."""
HEAVY = 1 << 30
"""A worker whose memory peaked above this (a huge document's peak mostly stays with the process)
leaves once idle for `_SETTLE` seconds; the next command starts a fresh one."""
_SETTLE = 10.0
_STATE_TIMEOUT = 2.0


def code_digest() -> str:
    """SHA-256 of oeb's version and every source file of the package (690 kB: 2 ms), read afresh
    each time: a worker of another code (an upgrade, an edited scorer or grading module) is never used."""
    root = Path(oeb.__file__).parent
    digest = hashlib.sha256(oeb.__version__.encode())
    for path in sorted(root.rglob("*.py")):
        digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def _name(code: str, node: str, index: int) -> str:
    return f"{PREFIX}{oeb.__version__}-{code[:16]}-{node[:12]}-{index}"


def _code_of(name: str) -> str:
    """The code digest part of a worker's name ("" for a name that is not a worker's)."""
    parts = name.removeprefix(PREFIX).rsplit("-", 3)
    return parts[1] if name.startswith(PREFIX) and len(parts) == 4 else ""


class GradingWorker:
    """One warm worker (a Ray actor): the scorer imported once, then batches graded call by call."""

    def __init__(self, code: str, idle_seconds: float, heavy: int = HEAVY) -> None:
        mine = code_digest()
        if mine != code:
            raise GradingError(
                f"this Ray's workers run other oeb code ({mine[:16]}, not {code[:16]}); install the "
                "same oeb on every node, or set OEB_WARM_MINUTES=0"
            )
        import ray

        from oeb.run.grade.task import dataset_of, grade_groups  # the scorer, numpy, scipy, pyarrow: once

        self._grade, self._dataset_of = grade_groups, dataset_of
        self._node = ray.get_runtime_context().get_node_id()
        self._lock = threading.Lock()  # one batch at a time (`state` answers meanwhile)
        self._counting = threading.Lock()
        self._busy = 0
        self._calls = 0
        self._last = time.monotonic()
        self._idle = idle_seconds
        self._heavy, self._too_heavy = heavy, False
        threading.Thread(target=self._retire_when_idle, name="oeb-idle", daemon=True).start()

    def grade(
        self, dataset: list[Any], groups: list[Group], details: bool, env: dict[str, str], secrets: dict[str, Any]
    ) -> tuple[list[list[dict[str, Any]]], str]:
        """One batch with the calling command's storage settings and credentials (`secrets`, held for
        this batch only, then dropped: a warm worker outlives its caller), and the node that
        scored it (`dataset`: `put_once`'s boxed reference, read once per worker)."""
        with self._counting:
            self._busy += 1
        try:
            with self._lock:
                # the last caller's settings go; a credential in the node's own environment stays
                for name in [
                    n for n in os.environ if n.startswith(FORWARDED_PREFIXES) and not storage.is_credential(n)
                ]:
                    del os.environ[name]
                os.environ.update(env)
                with storage.holding(secrets):
                    return self._grade(self._dataset_of(dataset), groups, details), self._node
        finally:
            with self._counting:
                self._busy -= 1
                self._calls += 1
                self._last = time.monotonic()
            self._too_heavy = _peak_memory() > self._heavy

    def state(self) -> dict[str, Any]:
        """What a command retiring the workers of another code asks: busy now, idle for how long."""
        return {
            "pid": os.getpid(),
            "node": self._node,
            "busy": self._busy,
            "calls": self._calls,
            "idle_s": 0.0 if self._busy else time.monotonic() - self._last,
        }

    def _retire_when_idle(self) -> None:
        """Remove this worker once it has had no call for its idle time, or for a few seconds when
        a batch left it holding too much memory: its memory is freed."""
        import ray

        while True:
            time.sleep(max(1.0, min(5.0, self._idle / 4)))
            idle = time.monotonic() - self._last
            if not self._busy and (idle > self._idle or (self._too_heavy and idle > _SETTLE)):
                ray.kill(ray.get_runtime_context().current_actor, no_restart=True)
                return


def _peak_memory() -> int:
    """The most memory this process has held, in bytes (what a huge document's peak leaves with it)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak if sys.platform == "darwin" else peak * 1024  # macOS counts bytes, Linux kilobytes


@dataclass
class _Call:
    """A batch on its way: the call in flight now, the worker it went to, its attempts so far."""

    args: tuple[Any, ...]
    ref: Any = None
    worker: Any = None
    attempts: int = 0
    value: Any = None
    error: BaseException | None = field(default=None)


class Pool:
    """The warm workers of the Ray open now, as the grade stage's executor: a batch goes to the
    worker with the fewest calls in flight; one whose worker died goes to another."""

    def __init__(self, env: dict[str, str]) -> None:
        import ray

        self._ray = ray
        self._env, self._secrets = env, storage.credentials()
        self._actor = ray.remote(GradingWorker)
        self._idle = warm_minutes() * 60
        self._workers: list[Any] = []
        self._inflight: dict[int, int] = {}
        self._sent: dict[int, int] = {}
        self._datasets: dict[int, tuple[Dataset, Any]] = {}
        self._obtain()
        self.cpus = len(self._workers)
        self.slots = 2 * self.cpus

    def _obtain(self) -> None:
        """This code's workers, one per CPU of every alive node: found by name, else created (and
        the idle workers of another code retired). Says which."""
        code = code_digest()
        existing = {actor["name"] for actor in _named()}
        nodes = [
            (node["NodeID"], int(node["Resources"].get("CPU", 0)))
            for node in self._ray.nodes()  # type: ignore[no-untyped-call]
            if node.get("Alive")
        ]
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        names, workers = [], []
        for node, cpus in sorted(nodes):
            for index in range(cpus):
                name = _name(code, node, index)
                options = self._actor.options(
                    name=name,
                    namespace=NAMESPACE,
                    lifetime="detached",
                    get_if_exists=True,
                    num_cpus=0,
                    max_concurrency=2,  # `state` answers while a batch is graded
                    max_restarts=0,
                    scheduling_strategy=NodeAffinitySchedulingStrategy(node, soft=False),
                )
                workers.append(options.remote(code, self._idle))
                names.append(name)
        if not workers:
            raise GradingError(
                f"the Ray has no node with a CPU to grade on; check it with ray status, or unset {ADDRESS_VARIABLE}"
            )
        self._workers = workers
        self._inflight |= {id(worker): 0 for worker in workers}
        self._sent |= {id(worker): 0 for worker in workers}
        reused = sum(name in existing for name in names)
        retired = retire(keep=code)
        started = len(names) - reused
        log.info(
            "grading on %d warm workers (oeb %s, code %s): %s%s",
            len(names),
            oeb.__version__,
            code[:12],
            f"{reused} reused"
            if not started
            else f"{started} started, {reused} reused; they stay for the next "
            f"command ({self._idle / 60:g} min idle; oeb grade --stop-workers removes them)",
            f"; {retired} of another oeb retired" if retired else "",
        )

    def submit(self, dataset: Dataset, groups: list[Group], details: bool) -> _Call:
        """Send a batch to the least busy worker."""
        from oeb.run.grade.task import put_once

        call = _Call((put_once(self._datasets, dataset), groups, details, self._env, self._secrets))
        self._send(call)
        return call

    def _send(self, call: _Call) -> None:
        """To the worker with the fewest batches in flight, then the fewest sent: the work spreads over
        every worker (and node) even when batches come one at a time."""
        worker = min(self._workers, key=lambda worker: (self._inflight[id(worker)], self._sent[id(worker)]))
        call.worker, call.attempts = worker, call.attempts + 1
        self._inflight[id(worker)] += 1
        self._sent[id(worker)] += 1
        call.ref = worker.grade.remote(*call.args)

    def ready(self, handles: list[_Call]) -> list[_Call]:
        """The calls finished now (waiting briefly); a call whose worker died is sent again."""
        by_ref = {call.ref: call for call in handles}
        done, _ = self._ray.wait(list(by_ref), num_returns=1, timeout=0.2)
        finished = []
        for ref in done:
            call = by_ref[ref]
            self._inflight[id(call.worker)] = self._inflight.get(id(call.worker), 1) - 1
            try:
                call.value = self._ray.get(ref)
            except self._ray.exceptions.RayActorError as error:
                if error.actor_init_failed:  # the worker could not start (another oeb on the node, say)
                    call.error = GradingError(f"a grading worker could not start: {_last_line(error)}")
                elif call.attempts < ATTEMPTS:
                    self._lost(call.worker, error)
                    self._send(call)
                    continue
                else:
                    call.error = error
            except Exception as error:
                call.error = error
            finished.append(call)
        return finished

    def _lost(self, worker: Any, error: BaseException) -> None:
        """Stop sending to a dead worker; with none left, obtain the workers again (new ones)."""
        first = next(iter(str(error).strip().splitlines()), "")[:200]
        log.warning("a grading worker died (%s); its batch is graded again on another", first)
        self._workers = [other for other in self._workers if other is not worker]
        if not self._workers:
            self._obtain()

    def result(self, handle: _Call) -> tuple[list[list[dict[str, Any]]], str]:
        """A finished call's results (a list per group) and node, or its error."""
        if handle.error is not None:
            raise handle.error
        results, node = handle.value
        return results, node


def _last_line(error: BaseException) -> str:
    """The last line of an error Ray relays: the worker's own exception and message."""
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    return lines[-1][:300] if lines else type(error).__name__


def _named() -> list[dict[str, str]]:
    """The warm workers' names in the Ray open now (every oeb version's)."""
    import ray.util

    actors: list[Any] = ray.util.list_named_actors(all_namespaces=True)  # dicts, with all_namespaces
    return [actor for actor in actors if actor["namespace"] == NAMESPACE and actor["name"].startswith(PREFIX)]


def retire(*, keep: str | None = None, busy: bool = False) -> int:
    """Remove warm workers from the Ray open now and return how many: all but those of code `keep`;
    one grading a batch only with `busy` (its command grades that batch again elsewhere)."""
    import ray

    removed = 0
    for actor in _named():
        if keep is not None and _code_of(actor["name"]) == keep[:16]:
            continue
        try:
            handle = ray.get_actor(actor["name"], namespace=NAMESPACE)
            state: Any = {} if busy else ray.get(handle.state.remote(), timeout=_STATE_TIMEOUT)
            if state.get("busy"):
                continue
            ray.kill(handle, no_restart=True)
        except (ValueError, ray.exceptions.RayError):
            continue  # gone already, or not answering: its own idle time removes it
        removed += 1
    return removed


def stop(address: str | None) -> int:
    """`oeb grade --stop-workers`: remove every warm worker (of any oeb) from the Ray named by
    `address` or `OEB_RAY_ADDRESS`, busy or not; the number removed."""
    where = choose(address, documents=0)
    if where.kind not in ("attached", "open"):
        raise UsageError(
            f"--stop-workers removes the warm workers of a running Ray; name it with --address auto (or host:port) "
            f"or {ADDRESS_VARIABLE}"
        )
    with session(address, worker_env(), documents=0):
        removed = retire(busy=True)
    log.info("removed %d warm grading workers from the Ray at %s", removed, where.address or "open here")
    return removed
