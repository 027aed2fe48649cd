"""Where the work of a command runs: in this process, on a private local Ray, or on a running Ray.

Starting a local Ray costs 10-20 s here, more than grading or predicting a small job takes, so a
job of at most `SMALL_JOB` documents runs in this process unless the user names a Ray
(`ray.address` in the config, `--address`, or the variable `OEB_RAY_ADDRESS`): `auto` attaches to
the Ray already running on this machine (`ray start --head`), `host:port` or `ray://host:port` to a
cluster, `local` always starts a private local Ray. The figures behind `SMALL_JOB` are in
docs/performance/fixed-costs.md; docs/grading.md ("Where work runs") says what each choice sets up.

A private local Ray keeps token authentication on (Ray's default for a new cluster) and says so
explicitly, so Ray has nothing to warn about; it starts without the dashboard and logs nothing to
the console. When a test (or a notebook) has already connected to Ray, that session is used as it
is and left running. Workers of a cluster oeb joins do not share the driver's environment, so the
storage settings a worker needs (the `AWS_*`, `HF_*` and `OEB_*` variables that are not secret:
endpoint, region, profile name) travel in the job's runtime environment. Nothing secret does: Ray
writes every runtime environment in plain text to a log file on each node (`runtime_env_agent.log`),
and job metadata and actor names to others. So the system's API keys and the storage credentials are
handed over as the values of a call's arguments, which Ray keeps in memory and writes to no file: the
run's actors take them once (`oeb.run.predict.actors.SystemActor.take_env`), a grading task or a warm worker
with each batch, which it holds in memory only while it grades it (`oeb.storage.holding`). Not through
Ray's object store: an object there can be spilled to disk, and a warm worker reading the same
reference batch after batch once waited for it forever on a two-node cluster.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from oeb import _sigterm
from oeb.errors import RayUnavailable, UsageError

if TYPE_CHECKING:  # Ray is imported only when a command uses it (importing it costs about 2 s)
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

log = logging.getLogger(__name__)

ADDRESS_VARIABLE = "OEB_RAY_ADDRESS"
"""The Ray every oeb command uses when its config or command line names none."""
TIMINGS_VARIABLE = "OEB_TIMINGS"
"""Set, oeb prints `oeb timing: PHASE WALL CPU` lines on stderr (scripts/bench_fixed_costs.py)."""
SMALL_JOB = 200
"""Jobs of at most this many documents run in this process when no Ray is named: a local Ray's
start-up and shutdown (18-27 s on 2 cores) is more than it would save them (figures in
docs/performance/fixed-costs.md)."""
SMALL_WORK = 16 << 20
"""...and, when the bytes to score are known beforehand (`oeb grade`), of at most this many: about
40 s of scoring on one core, which two cores of a local Ray do not finish sooner counting its 18-27 s
of start-up and shutdown."""
WARM_VARIABLE = "OEB_WARM_MINUTES"
"""Minutes a warm grading worker waits for its next call before it removes itself; 0: none."""
WARM_MINUTES = 30.0
_AUTH_MODE = "RAY_AUTH_MODE"
FORWARDED_PREFIXES = ("AWS_", "HF_", "OEB_")
"""The variables workers get from the driver: storage settings (never a system's API key)."""


@dataclass(frozen=True)
class Where:
    """Where a session runs work: `kind` is "process" (no Ray), "local" (a private local Ray started
    for the command), "attached" (a Ray named by an address) or "open" (a session this process had
    already opened); `address` is the one given, `source` where it came from; `warm`: grading runs
    on warm workers that outlive the command (`oeb.run.grade.workers`), not on tasks of its own."""

    kind: str
    address: str | None = None
    source: str | None = None
    warm: bool = False

    def place(self) -> str:
        """Where, in a few words (a plan's line)."""
        places = {"process": "in this process (no Ray)", "local": "on a local Ray", "open": "on the Ray session open"}
        return places.get(self.kind, f"on the Ray at {self.address}")

    def line(self, documents: int) -> str:
        """The one line oeb prints about which Ray it uses, and why."""
        if self.kind == "process":
            return (
                f"work runs in this process, without Ray ({documents} documents; a job of more than {SMALL_JOB}, "
                f"or of more than {SMALL_WORK >> 20} MB to score, starts a local Ray; ray.address or "
                f"{ADDRESS_VARIABLE} names one to use)"
            )
        if self.kind == "local":
            return "work runs on a private local Ray started for this command (token authentication, no dashboard)"
        if self.kind == "open":
            return "work runs on the Ray session this process has open"
        return f"work runs on the Ray at {self.address} (from {self.source})"


_current: list[Where] = []
_before_shutdown: dict[int, list[Callable[[], None]]] = {}
"""By session (the id of its `Where`): what to run before it shuts its Ray down."""


def uses_ray() -> bool:
    """Whether work runs on Ray: inside a `session`, as it decided; outside one, whether this
    process has Ray open."""
    return _current[-1].kind != "process" if _current else _ray_open()


def current() -> Where | None:
    """The innermost open `session`, if any."""
    return _current[-1] if _current else None


def before_shutdown(where: Where, callback: Callable[[], None]) -> None:
    """Run `callback` before the session `where` shuts its Ray down (a thread still waiting on Ray
    must stop first: Ray ends the process when one calls it after its shutdown). A session that
    shuts nothing down (no Ray, or a Ray this process had open already) never calls it."""
    callbacks = _before_shutdown.get(id(where))
    if callbacks is not None:
        callbacks.append(callback)


def _ray_open() -> bool:
    """Whether this process is connected to Ray already, without importing Ray to ask."""
    ray = sys.modules.get("ray")
    return ray is not None and bool(ray.is_initialized())


def choose(address: str | None, *, documents: int, work: int | None = None) -> Where:
    """Where a job of `documents` (and `work` bytes to score, when known) runs, given the address
    from the config or command line (None: the `OEB_RAY_ADDRESS` variable, else this process for a
    small job and a private local Ray for a larger one)."""
    if _ray_open():
        return Where("open")
    source = "ray.address" if address else None
    if not address and os.environ.get(ADDRESS_VARIABLE):
        address, source = os.environ[ADDRESS_VARIABLE].strip(), ADDRESS_VARIABLE
    if address == "local":
        return Where("local", address, source)
    if address:
        return Where("attached", address, source, warm=warm_minutes() > 0 and not _temporary_code())
    small = documents <= SMALL_JOB and (work is None or work <= SMALL_WORK)
    return Where("process") if small else Where("local")


def _temporary_code() -> bool:
    """Whether oeb runs from a Ray job's package (`working_dir`, `py_modules`: the Jobs API, as
    `scripts/submit.py` and `make bench` on a cluster send it). Ray deletes that package when the job
    ends, so no worker may outlive the command: such a run grades on tasks of its own. (Warm workers
    started from it lost files while the job still ran: "No such file" on oeb/__main__.py.)"""
    import oeb

    return any(part.startswith("_ray_pkg_") for part in Path(oeb.__file__).resolve().parts)


def warm_minutes() -> float:
    """How long warm grading workers stay idle (`OEB_WARM_MINUTES`, default 30; 0: none, a command
    attached to a Ray grades on tasks of its own); a bad value is refused in one line."""
    text = os.environ.get(WARM_VARIABLE, "").strip()
    if not text:
        return WARM_MINUTES
    try:
        minutes = float(text)
    except ValueError:
        minutes = -1.0
    if not minutes >= 0:  # also refuses nan
        raise UsageError(f"{WARM_VARIABLE}={text} is not a number of minutes; set it to 30, say, or 0 for none")
    return minutes


@contextlib.contextmanager
def session(address: str | None, env: dict[str, str], *, documents: int, work: int | None = None) -> Iterator[Where]:
    """Where the work of a job of `documents` (`work` bytes to score, when known) runs (see
    `choose`), for the length of the block: a Ray started here is shut down at the end, one
    attached to is left running. Logs one line saying which."""
    where = choose(address, documents=documents, work=work)
    log.info("%s", where.line(documents))
    shuts_down = where.kind in ("local", "attached")
    with timed("session start"):
        if shuts_down:
            _init(where, env)
    _current.append(where)
    if shuts_down:
        _before_shutdown[id(where)] = []
    try:
        yield where
    finally:
        _current.pop()
        if shuts_down:
            import ray

            for callback in reversed(_before_shutdown.pop(id(where))):
                callback()
            with timed("session end"):
                ray.shutdown()


def _init(where: Where, env: dict[str, str]) -> None:
    """Start or join Ray quietly: its INFO lines and the workers' output stay off the console."""
    # Read by Ray when it is imported: no usage reports, and no `uv run` wrapped around every worker
    # (Ray's uv hook would re-resolve the environment and ship the working directory to each worker).
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    os.environ.setdefault("RAY_ENABLE_UV_RUN_RUNTIME_ENV", "0")
    import ray

    quiet = {"log_to_driver": False, "logging_level": logging.WARNING}
    try:
        with _sigterm.kept():  # the CLI's handler stops a run as Ctrl-C does
            if where.kind == "local":
                _keep_token_auth()
                ray.init(address="local", include_dashboard=False, **quiet)  # type: ignore[arg-type]
            else:
                _use_existing_token(where.address)
                ray.init(address=where.address, runtime_env={"env_vars": env}, **quiet)  # type: ignore[arg-type]
    except Exception as error:  # Ray raises a bare Exception when its node does not start in time
        ray.shutdown()
        what = "a local Ray" if where.kind == "local" else f"the Ray at {where.address} (from {where.source})"
        message = " ".join(str(error).split())[:300]
        raise RayUnavailable(
            f"cannot start or reach {what} ({message}); check ray.address in the config or {ADDRESS_VARIABLE} "
            "(unset runs small jobs without Ray and starts a local Ray for larger ones) and that the cluster is "
            "up (ray status)"
        ) from None


def _keep_token_auth() -> None:
    """A new local Ray turns token authentication on by default and warns that it did; saying so
    explicitly keeps the protection and leaves nothing to warn about (a user's own RAY_AUTH_MODE wins)."""
    if _AUTH_MODE not in os.environ:
        _token_mode()


def _use_existing_token(address: str | None) -> None:
    """Attaching to a Ray running on this machine (`auto`, or its address): use the machine's Ray
    token if there is one, as Ray itself does for `auto`, without Ray's warning that it did. The
    token is never sent to a Ray elsewhere unless the user sets RAY_AUTH_MODE."""
    if _AUTH_MODE in os.environ or not address or not _on_this_machine(address):
        return
    from ray._raylet import AuthenticationTokenLoader  # type: ignore[attr-defined]

    if AuthenticationTokenLoader.instance().has_token(ignore_auth_mode=True):
        _token_mode()


def _on_this_machine(address: str) -> bool:
    """Whether `address` (`auto`, `host:port`) names a Ray on this machine."""
    if address == "auto":
        return True
    if "://" in address:
        return False
    import ray.util

    host = address.rsplit(":", 1)[0].strip("[]")
    here = ray.util.get_node_ip_address()  # type: ignore[no-untyped-call]
    return host in ("localhost", "::1", here) or host.startswith("127.")


def _token_mode() -> None:
    """Token authentication for this process and the Ray processes it starts. Ray read its mode
    when it was imported, so it reads it again (as Ray does when it turns the mode on itself)."""
    from ray._raylet import Config  # type: ignore[attr-defined]

    os.environ[_AUTH_MODE] = "token"
    Config.initialize("")


@contextlib.contextmanager
def timed(phase: str) -> Iterator[None]:
    """Time a phase of a command; printed only when `OEB_TIMINGS` is set."""
    if not os.environ.get(TIMINGS_VARIABLE):
        yield
        return
    started, cpu = time.perf_counter(), time.process_time()
    try:
        yield
    finally:
        timing(phase, time.perf_counter() - started, time.process_time() - cpu)


def timing(phase: str, seconds: float, cpu: float | None = None) -> None:
    """Print `oeb timing: PHASE WALL CPU` (CPU: this process's, all threads; `-` if not measured)
    when `OEB_TIMINGS` is set. On a busy machine the CPU seconds say more than the wall."""
    if os.environ.get(TIMINGS_VARIABLE):
        shown = "-" if cpu is None else f"{cpu:.3f}"
        print(f"oeb timing: {phase} {seconds:.3f} {shown}", file=sys.stderr)


def worker_env() -> dict[str, str]:
    """The driver's variables that workers need to reach storage, none secret (never a credential,
    which `storage.credentials` gives to be handed in a call, nor a system's API key)."""
    from oeb import storage  # fsspec and pyarrow: not for `import oeb` (which loads this module)

    return {
        name: value
        for name, value in os.environ.items()
        if value and name.startswith(FORWARDED_PREFIXES) and not storage.is_credential(name)
    }


def system_keys(keys: Sequence[str], stand_ins: Mapping[str, str]) -> dict[str, str]:
    """The system's key variables set in the driver now (`keys` and their `stand_ins`, as an
    adapter class declares them)."""
    names = {name for key in keys for name in (key, stand_ins.get(key)) if name}
    return {name: os.environ[name] for name in sorted(names) if os.environ.get(name)}


def alive_nodes() -> list[str]:
    """The IDs of the Ray nodes alive now, sorted."""
    import ray

    return sorted(node["NodeID"] for node in ray.nodes() if node.get("Alive"))  # type: ignore[no-untyped-call]


def spread(count: int) -> list[str]:
    """Nodes for `count` actors, round-robin over the alive nodes."""
    nodes = alive_nodes()
    return [nodes[i % len(nodes)] for i in range(count)]


def pinned(node: str) -> NodeAffinitySchedulingStrategy:
    """Place an actor on `node` and nowhere else.

    The affinity is strict: with a soft one Ray may put an actor beside another when its node is
    briefly busy, and a run would quietly use one machine. The actors need no CPU, so any alive
    node can take them; the run replaces an actor that dies (`oeb.run.predict.actors.Pool.replace`).
    """
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    return NodeAffinitySchedulingStrategy(node, soft=False)
