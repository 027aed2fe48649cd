"""One real 2-node Ray cluster for the whole `tests/cluster` run, started with `ray start`, as
a real cluster is: a head (1 CPU, with the dashboard, so the Jobs API answers) and a worker (2 CPUs) on 127.0.0.2.

Starting a head takes 25-40 s on 2 cores, so every test of this folder shares the cluster. Every port
is explicit (the range 6391-6499 and worker ports 16000-16399 are this folder's). The nodes start
without the machine's AWS settings: what a job needs must reach it through its runtime env (the
endpoint, the region), except the credentials, which a cluster's nodes hold themselves (an instance
role, a mounted secret) and oeb never sends in a runtime env: the nodes get moto's.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

IP = "127.0.0.2"
HEAD = f"{IP}:6391"
_ATTEMPTS = 3
_RAY = str(Path(sys.executable).parent / "ray")
_HEAD_PORTS = {
    "port": int(HEAD.rsplit(":", 1)[1]),
    "ray-client-server-port": 6392,
    "dashboard-port": 6393,
    "node-manager-port": 6394,
    "object-manager-port": 6395,
    "dashboard-agent-listen-port": 6396,
    "dashboard-agent-grpc-port": 6397,
    "metrics-export-port": 6398,
    "runtime-env-agent-port": 6399,
    "min-worker-port": 16000,
    "max-worker-port": 16199,
}
_WORKER_PORTS = {
    "node-manager-port": 6401,
    "object-manager-port": 6402,
    "dashboard-agent-listen-port": 6403,
    "dashboard-agent-grpc-port": 6404,
    "metrics-export-port": 6405,
    "runtime-env-agent-port": 6406,
    "min-worker-port": 16200,
    "max-worker-port": 16399,
}


NODE_CREDENTIALS = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing"}
"""The nodes' own credentials (moto accepts any), as an instance role gives a real cluster's."""


@dataclass(frozen=True)
class Cluster:
    """Where the tests reach the cluster: `address` for ray.init, `dashboard` for the Jobs API."""

    address: str
    dashboard: str
    temp: Path


def _flags(ports: dict[str, int]) -> list[str]:
    return [f"--{name}={port}" for name, port in ports.items()]


def _start(args: list[str], log: Path, env: dict[str, str]) -> subprocess.Popen:
    with log.open("wb") as out:
        process = subprocess.Popen([_RAY, "start", "--block", *args], stdout=out, stderr=subprocess.STDOUT, env=env,
                                   process_group=0)  # fmt: skip
    deadline = time.monotonic() + 120
    while b"Ray runtime started" not in log.read_bytes():
        if process.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"ray start {' '.join(args)} failed:\n{log.read_text(errors='replace')[-2000:]}")
        time.sleep(0.2)
    return process


def _wait_for_nodes(address: str, count: int, cpus: int) -> None:
    """`ray start` returns before the worker has registered with the head and reported its CPUs (an
    actor placed on a node not yet ready goes elsewhere): wait until both have happened."""
    import ray

    ray.init(address=address, logging_level="ERROR", log_to_driver=False)
    try:
        deadline = time.monotonic() + 60
        while (
            sum(1 for node in ray.nodes() if node.get("Alive")) < count
            or ray.available_resources().get("CPU", 0) < cpus
        ):
            if time.monotonic() > deadline:
                raise RuntimeError(f"the {count} Ray nodes and their {cpus} CPUs were not ready within 60 s")
            time.sleep(0.5)
        time.sleep(2)
    finally:
        ray.shutdown()


def _stop(process: subprocess.Popen) -> None:
    for sig, wait in ((signal.SIGTERM, 30), (signal.SIGKILL, 5)):
        try:
            os.killpg(process.pid, sig)
            process.wait(timeout=wait)
            return
        except ProcessLookupError:
            return
        except subprocess.TimeoutExpired:
            continue


def _sweep(tag: str) -> None:
    """Kill what the cluster left behind (workers have their own process groups)."""
    marker = f"OEB_RAY_FIXTURE_TAG={tag}".encode()
    pids = []
    for environ in Path("/proc").glob("[0-9]*/environ"):
        try:
            if marker in environ.read_bytes():
                pids.append(int(environ.parent.name))
        except OSError:
            continue
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, sig)
        time.sleep(1)


@pytest.fixture(scope="session")
def two_nodes() -> Iterator[Cluster]:
    tag = uuid.uuid4().hex
    temp = Path(tempfile.mkdtemp(prefix="oebc"))
    env = {
        name: value
        for name, value in os.environ.items()
        if name != "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER" and not name.startswith("AWS_")
    }
    env |= NODE_CREDENTIALS | {
        "RAY_AUTH_MODE": "disabled",
        "RAY_USAGE_STATS_ENABLED": "0",
        "RAY_GRACEFUL_SHUTDOWN_DRAIN_TIMEOUT_S": "0",
        "RAY_ENABLE_UV_RUN_RUNTIME_ENV": "0",
        "OEB_RAY_FIXTURE_TAG": tag,
    }
    processes: list[subprocess.Popen] = []
    try:
        with pytest.MonkeyPatch.context() as patch:
            patch.setenv("RAY_AUTH_MODE", "disabled")
            processes = _start_cluster(temp, env, tag)
            yield Cluster(HEAD, f"http://{IP}:{_HEAD_PORTS['dashboard-port']}", temp)
    finally:
        _stop_cluster(processes, tag)
        shutil.rmtree(temp, ignore_errors=True)


def _start_cluster(temp: Path, env: dict[str, str], tag: str) -> list[subprocess.Popen]:
    """The head, then the worker, both ready; started again when a node misses Ray's fixed 30 s to
    register, which happens on a loaded 2-core machine."""
    head_args = ["--head", "--num-cpus=1", f"--temp-dir={temp}", "--include-dashboard=true", f"--dashboard-host={IP}",
                 *_flags(_HEAD_PORTS), f"--node-ip-address={IP}"]  # fmt: skip
    worker_args = [f"--address={HEAD}", "--num-cpus=2", *_flags(_WORKER_PORTS), f"--node-ip-address={IP}"]
    for attempt in range(1, _ATTEMPTS + 1):
        processes: list[subprocess.Popen] = []
        try:
            processes.append(_start(head_args, temp / "head.log", env))
            processes.append(_start(worker_args, temp / "worker.log", env))
            _wait_for_nodes(HEAD, 2, cpus=3)
            return processes
        except RuntimeError:
            _stop_cluster(processes, tag)
            if attempt == _ATTEMPTS:
                raise
    raise AssertionError("unreachable")


def _stop_cluster(processes: list[subprocess.Popen], tag: str) -> None:
    for process in reversed(processes):
        _stop(process)
    _sweep(tag)
