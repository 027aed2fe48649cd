"""Warm grading workers (`oeb.run.grade.workers`) on the shared local Ray: the same bytes as grading in
this process and on tasks, reused by the next grading, a batch whose worker dies graded again
elsewhere, the workers of another code retired, idle workers gone by themselves, `--stop-workers`."""

from __future__ import annotations

import importlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from oeb.cli import main
from oeb.dataset import SAMPLE_DATASET, open_dataset
from oeb.errors import UsageError
from oeb.run.cluster import session as cluster
from oeb.run.folder.run_folder import RunFolder
from oeb.run.grade import workers
from oeb.run.grade.regrade import grade_folder
from oeb.run.grade.stage import grade
from oeb.run.grade.task import Item
from run.test_grading import RESULTS, _answered, _files

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
bench: Any = importlib.import_module("bench_fixed_costs")  # scripts are no package: loaded by path


def _named() -> list[str]:
    return sorted(actor["name"] for actor in workers._named())


def _pids() -> set[int]:
    import ray

    handles = [ray.get_actor(name, namespace=workers.NAMESPACE) for name in _named()]
    return {state["pid"] for state in ray.get([handle.state.remote() for handle in handles])}


@pytest.fixture
def warm(ray_cluster: None, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Sessions grade on warm workers of the test's Ray (as a command attached to a running Ray
    does); none are left afterwards."""
    monkeypatch.setattr(cluster, "choose", lambda *_, **__: cluster.Where("open", warm=True))
    workers.retire(busy=True)
    yield
    workers.retire(busy=True)


def _grade(folder: Path, where: cluster.Where, monkeypatch: pytest.MonkeyPatch) -> frozenset[str]:
    """Grade `folder` in the session `where` (in this process, or on tasks of the test's Ray)."""
    with monkeypatch.context() as patch:
        patch.setattr(cluster, "choose", lambda *_, **__: where)
        return grade_folder(str(folder)).nodes


@pytest.mark.ray
def test_warm_workers_write_the_same_bytes_as_this_process_and_tasks_and_are_reused(
    warm: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    here, tasks, first = (_answered(tmp_path / name) for name in ("here", "tasks", "warm"))
    assert _grade(here, cluster.Where("process"), monkeypatch) == {"process"}
    on_tasks = _grade(tasks, cluster.Where("open"), monkeypatch)
    assert _named() == []  # tasks of its own
    with caplog.at_level("INFO", logger="oeb"):
        on_workers = grade_folder(str(first)).nodes
    assert on_tasks and on_workers and "process" not in on_tasks | on_workers
    assert _files(first) == _files(tasks) == _files(here)
    assert len(_named()) == 2  # one per CPU of the test's Ray
    assert any("grading on 2 warm workers" in line and "2 started, 0 reused" in line for line in caplog.messages)
    pids = _pids()

    caplog.clear()
    shutil.rmtree(first / RESULTS)  # scored again, by the same processes
    with caplog.at_level("INFO", logger="oeb"):
        grade_folder(str(first))
    assert _files(first) == _files(here)
    assert any(line.endswith("2 reused") for line in caplog.messages)
    assert _pids() == pids


@pytest.mark.ray
def test_a_batch_whose_worker_dies_is_graded_again_on_another(warm: None, tmp_path: Path) -> None:
    import ray

    folder = _answered(tmp_path / "run")
    dataset = open_dataset(SAMPLE_DATASET)
    row = dataset.rows[0]
    size = (folder / "predictions" / f"{row.doc_id}.json").stat().st_size
    pool = workers.Pool({})
    call = pool.submit(dataset, [(str(folder), [Item(row, size, False)])], False)
    ray.kill(call.worker, no_restart=True)  # dies with the batch queued or running
    finished: list[workers._Call] = []
    while not finished:
        finished = pool.ready([call])
    [results], node = pool.result(call)
    assert call.attempts == 2 and node and [result["id"] for result in results] == [row.doc_id]
    assert results[0]["line"]["status"] == "scored"


@pytest.mark.ray
def test_workers_of_another_code_are_retired_and_idle_ones_leave_by_themselves(
    warm: None, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    import ray

    node = ray.get_runtime_context().get_node_id()
    stale = workers._name("f" * 64, node, 0)
    actor = ray.remote(workers.GradingWorker).options(name=stale, namespace=workers.NAMESPACE, lifetime="detached")
    ray.get(actor.remote(workers.code_digest(), 600).state.remote())
    with caplog.at_level("INFO", logger="oeb"):
        workers.Pool({})
    assert stale not in _named() and len(_named()) == 2
    assert any(line.endswith("1 of another oeb retired") for line in caplog.messages)

    workers.retire(busy=True)
    monkeypatch.setenv(cluster.WARM_VARIABLE, "0.02")  # 1.2 s
    workers.Pool({})
    assert len(_named()) == 2
    deadline = time.monotonic() + 60
    while _named() and time.monotonic() < deadline:
        time.sleep(0.5)
    assert _named() == []


@pytest.mark.ray
def test_two_commands_starting_at_once_share_one_set_of_workers(warm: None, tmp_path: Path) -> None:
    folder = _answered(tmp_path / "run")
    dataset = open_dataset(SAMPLE_DATASET)
    rows = [row for n, row in enumerate(dataset.rows) if n != 4]  # the fifth has no prediction
    items = [Item(row, (folder / "predictions" / f"{row.doc_id}.json").stat().st_size, False) for row in rows]

    def command(batches: list[list[Item]]) -> list[str]:
        pool = workers.Pool({})  # both look the workers up, and start them, at the same moment
        calls = [pool.submit(dataset, [(str(folder), batch)], False) for batch in batches]
        graded: list[str] = []
        while len(graded) < len(calls):
            for call in pool.ready([call for call in calls if call.value is None and call.error is None]):
                graded += [result["id"] for result in pool.result(call)[0][0]]
        return graded

    with ThreadPoolExecutor(2) as both:
        firsts = both.submit(command, [[item] for item in items[::2]])
        seconds = both.submit(command, [[item] for item in items[1::2]])
        graded = firsts.result(timeout=600) + seconds.result(timeout=600)
    assert sorted(graded) == sorted(row.doc_id for row in rows)
    assert len(_named()) == 2


@pytest.mark.ray
def test_a_worker_whose_memory_peaked_leaves_once_idle(warm: None, tmp_path: Path) -> None:
    import ray

    folder = _answered(tmp_path / "run")
    dataset = open_dataset(SAMPLE_DATASET)
    row = dataset.rows[0]
    node = ray.get_runtime_context().get_node_id()
    options = {"name": workers._name(workers.code_digest(), node, 0), "namespace": workers.NAMESPACE}
    worker = ray.remote(workers.GradingWorker).options(lifetime="detached", **options)
    heavy = worker.remote(workers.code_digest(), 600, heavy=1)  # any peak is too much
    ray.get(heavy.grade.remote([ray.put(dataset)], [(str(folder), [Item(row, 1, False)])], False, {}, {}))
    assert len(_named()) == 1
    deadline = time.monotonic() + 60
    while _named() and time.monotonic() < deadline:
        time.sleep(0.5)
    assert _named() == [] and time.monotonic() < deadline


@pytest.mark.ray
def test_stop_workers_removes_them(warm: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    dataset = open_dataset(SAMPLE_DATASET)
    folder = _answered(tmp_path / "run")
    with cluster.session(None, {}, documents=12):
        grade(RunFolder(str(folder)), dataset, dataset.rows)
    assert len(_named()) == 2
    assert main(["grade", "--stop-workers"]) == 0
    assert _named() == []
    assert "removed 2 warm grading workers" in capsys.readouterr().err


def test_warm_workers_are_for_a_named_ray_and_refuse_a_bad_idle_time(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(cluster, "_ray_open", lambda: False)
    monkeypatch.delenv(cluster.ADDRESS_VARIABLE, raising=False)
    monkeypatch.delenv(cluster.WARM_VARIABLE, raising=False)
    assert cluster.choose("auto", documents=1).warm
    assert not cluster.choose("local", documents=1).warm and not cluster.choose(None, documents=1).warm
    monkeypatch.setenv(cluster.WARM_VARIABLE, "0")  # off: a command attached to a Ray grades on tasks of its own
    assert not cluster.choose("auto", documents=1).warm
    for bad in ("soon", "-1", "nan"):
        monkeypatch.setenv(cluster.WARM_VARIABLE, bad)
        with pytest.raises(UsageError, match=f"{cluster.WARM_VARIABLE}={bad} is not a number of minutes"):
            cluster.choose("auto", documents=1)

    assert main(["grade", "--stop-workers"]) == 2  # no Ray named: nothing to stop
    assert main(["grade"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err == [
        "oeb grade: --stop-workers removes the warm workers of a running Ray; name it with --address auto (or "
        "host:port) or OEB_RAY_ADDRESS",
        "oeb grade: give the folder to grade (or --stop-workers to remove the warm grading workers)",
    ]


@pytest.mark.slow
def test_commands_attached_to_a_running_ray_reuse_the_workers_the_first_started(tmp_path: Path) -> None:
    """Across processes, as a user runs them: `ray start --head`, then `oeb grade` twice and
    `oeb grade --stop-workers`, each a command of its own."""
    here = _answered(tmp_path / "here")
    shutil.rmtree(here / "records")
    attached = tmp_path / "attached"
    shutil.copytree(here, attached)
    temp = Path(tempfile.mkdtemp(prefix="oebwarm"))  # short: Ray's unix sockets live under it
    head, address = bench.ray_head(temp, port=6621)
    try:
        env = {name: value for name, value in os.environ.items() if not name.startswith("RAY_")}  # a user's shell
        env[cluster.ADDRESS_VARIABLE] = address
        oeb = [sys.executable, "-c", "import sys; from oeb.cli import main; sys.exit(main())"]
        grade_command = [*oeb, "grade", str(attached), "--partial"]
        said = []
        for _ in range(2):
            shutil.rmtree(attached / RESULTS, ignore_errors=True)
            done = subprocess.run(grade_command, env=env, capture_output=True, text=True, timeout=600, check=False)
            assert done.returncode == 0, done.stderr[-3000:]
            said.append([line for line in done.stderr.splitlines() if "warm workers" in line])
        assert said[0][0].startswith("grading on 2 warm workers") and "2 started, 0 reused" in said[0][0]
        assert said[1] == [said[0][0].split(": ")[0] + ": 2 reused"]
        stop = subprocess.run([*oeb, "grade", "--stop-workers"], env=env, capture_output=True, text=True, timeout=600)
        assert stop.returncode == 0 and f"removed 2 warm grading workers from the Ray at {address}" in stop.stderr
    finally:
        os.killpg(head.pid, signal.SIGTERM)
        head.wait(60)
        shutil.rmtree(temp, ignore_errors=True)
    env = {**os.environ, cluster.ADDRESS_VARIABLE: ""}
    done = subprocess.run([*oeb, "grade", str(here), "--partial"], env=env, capture_output=True, timeout=600)
    assert done.returncode == 0
    assert _files(attached) == _files(here)
