"""A run on a real 2-node cluster started with `ray start` (ENVIRONMENT.md 3.5): the system's actors
and the grading tasks land on both nodes.

Run it alone (`pytest -m cluster -p no:xdist tests/cluster`): the in-process Ray of the other tests
would otherwise already be connected, and its loopback variable must not reach `ray start`.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from oeb.dataset import SAMPLE_DATASET
from oeb.run import engine
from oeb.run.config import check_tree, init_tree

pytestmark = pytest.mark.cluster

HEAD = "127.0.0.2:6391"
_RAY = str(Path(sys.executable).parent / "ray")


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


@pytest.fixture
def two_nodes(monkeypatch) -> Iterator[str]:
    tag = uuid.uuid4().hex
    temp = Path(tempfile.mkdtemp(prefix="oebc"))
    env = {k: v for k, v in os.environ.items() if k != "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"}
    env |= {
        "RAY_AUTH_MODE": "disabled",
        "RAY_USAGE_STATS_ENABLED": "0",
        "RAY_GRACEFUL_SHUTDOWN_DRAIN_TIMEOUT_S": "0",
        "OEB_RAY_FIXTURE_TAG": tag,
    }
    common = ["--node-ip-address=127.0.0.2"]
    head_args = ["--head", "--port=6391", "--num-cpus=1", f"--temp-dir={temp}", "--include-dashboard=false",
                 "--ray-client-server-port=6392"]  # fmt: skip
    processes = []
    try:
        processes.append(_start([*head_args, *common], temp / "head.log", env))
        processes.append(_start([f"--address={HEAD}", "--num-cpus=2", *common], temp / "worker.log", env))
        monkeypatch.setenv("RAY_AUTH_MODE", "disabled")
        _wait_for_nodes(HEAD, 2, cpus=3)
        yield HEAD
    finally:
        for process in reversed(processes):
            _stop(process)
        _sweep(tag)


def test_actors_and_grading_tasks_run_on_both_nodes(two_nodes, tmp_path) -> None:
    tree = init_tree("mock", SAMPLE_DATASET)
    tree["workers"] = 4
    tree["system"]["mock"]["latency"] = 0.2
    tree["ray"] = {"address": two_nodes, "actors": 2, "rate_limit": {"requests_per_second": None, "max_in_flight": 0}}
    result = engine.execute(engine.plan_run(check_tree(tree, where="test"), str(tmp_path)))
    assert len(result.predicted["nodes"]) == 2
    assert len(result.graded_on) == 2
    assert result.report["scorers"]["field_matching"]["headline"] == 1.0
