"""One writer per run folder: `oeb run`, `oeb resume` and `oeb grade` refuse a folder another live
process writes, on local disk and on s3:// (moto), naming the holder; a lock left by a killed
process never blocks the next command.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import pytest
from fixtures.fault_proxy import FaultProxy
from fixtures.services import S3_BUCKET

from oeb import storage
from oeb.cli import main
from oeb.dataset import SAMPLE_DATASET
from oeb.errors import LockExpired, LockLost, RunLocked
from oeb.run import engine
from oeb.run.folder import lock
from oeb.run.folder.lock import LOCK_NAME, Holder, hold, holder
from oeb.run.folder.run_folder import RunFolder
from oeb.run.plan.config import init_tree, load_config, to_yaml
from reliability.conftest import OebProcess
from reliability.test_storage_faults import proxy  # noqa: F401  (the fault proxy in front of moto)


@pytest.fixture
def url(folder_url: str) -> str:
    """The run folder whose lock a test takes: on disk, then on moto's S3."""
    return folder_url


def _refusal(url: str, command: str = "oeb grade") -> str:
    with pytest.raises(RunLocked) as refused, hold(url, command):
        pass
    return str(refused.value)


def _write_lock(url: str, host: str, heartbeat: float) -> None:
    """A lock object as another machine's oeb leaves it."""
    stranger = Holder("oeb resume", host, 4242, "2026-11-29T10:00:00+00:00", heartbeat, "elsewhere")
    storage.write_bytes(storage.join(url, LOCK_NAME), stranger.dumps())


class TestHeld:
    def test_a_second_holder_is_refused_naming_the_first(self, url: str) -> None:
        with hold(url, "oeb resume"):
            message = _refusal(url)
        assert f"is being written by oeb resume on host {socket.gethostname()}, pid {os.getpid()}, since" in message
        assert "wait for it to finish" in message and "\n" not in message

    def test_a_released_lock_leaves_no_file_and_is_free(self, url: str) -> None:
        with hold(url, "oeb resume"):
            assert holder(url).pid == os.getpid()
        assert holder(url) is None and LOCK_NAME not in storage.list_files(url)
        with hold(url, "oeb grade"):
            pass

    def test_of_takers_racing_exactly_one_wins(self, url: str) -> None:
        takers = 6
        start, done = threading.Barrier(takers), threading.Barrier(takers)
        outcomes: list[str] = []

        def take() -> None:
            start.wait()
            try:
                with hold(url, "oeb resume"):
                    outcomes.append("won")
                    done.wait()
            except RunLocked:
                outcomes.append("refused")
                done.wait()

        threads = [threading.Thread(target=take) for _ in range(takers)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert sorted(outcomes) == ["refused"] * (takers - 1) + ["won"]


def test_a_lock_left_by_a_killed_process_blocks_nothing(url: str) -> None:
    code = "import sys, time; from oeb.run.folder.lock import hold; "
    code += "held = hold(sys.argv[1], 'oeb resume'); held.__enter__(); "
    code += "print('held', flush=True); time.sleep(600)"
    child = subprocess.Popen([sys.executable, "-c", code, url], stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline() == "held\n"
        assert holder(url).pid == child.pid
        assert f"pid {child.pid}" in _refusal(url)
    finally:
        child.kill()
        child.wait()
    assert LOCK_NAME in storage.list_files(url)  # SIGKILL: nothing released it
    assert holder(url) is None
    with hold(url, "oeb resume"):
        assert holder(url).pid == os.getpid()


@pytest.mark.usefixtures("s3_env")
class TestObjectStorage:
    """What only s3:// needs: no kernel knows the holder is gone, so heartbeats tell."""

    @pytest.fixture
    def url(self) -> str:
        return f"s3://{S3_BUCKET}/locks/{uuid.uuid4().hex[:8]}"

    def test_a_holder_on_another_host_without_heartbeat_for_too_long_is_taken_over(self, url: str) -> None:
        _write_lock(url, "elsewhere", time.time() - lock.STALE_SECONDS - 1)
        assert holder(url) is None
        with hold(url, "oeb resume"):
            assert holder(url).host == socket.gethostname()

    def test_a_live_holder_on_another_host_is_refused_unless_forced(self, url: str) -> None:
        _write_lock(url, "elsewhere", time.time())
        message = _refusal(url)
        assert "oeb resume on host elsewhere, pid 4242" in message and "--force-unlock" in message
        with hold(url, "oeb resume", force=True):
            assert holder(url).host == socket.gethostname()

    def test_a_holder_whose_lock_was_taken_over_stops_writing(self, url: str, monkeypatch) -> None:
        monkeypatch.setattr(lock, "HEARTBEAT_SECONDS", 0.1)
        folder = RunFolder(url)
        with folder.locked("oeb resume"):
            with hold(url, "oeb resume", force=True):
                deadline = time.monotonic() + 10
                while not folder.lock.lost and time.monotonic() < deadline:
                    time.sleep(0.05)
            with pytest.raises(LockLost, match="taken over by another process"):
                folder.save("doc", {"error": None, "output": {"a": 1}})
        assert not storage.exists(folder.record_url("doc"))

    def test_a_holder_cut_off_past_the_stale_limit_stops_saving(
        self,
        url: str,
        proxy: FaultProxy,  # noqa: F811
        s3_env: dict[str, str],
        monkeypatch,
    ) -> None:
        """Two processes across an outage: this one holds the lock through the fault proxy, which then
        answers it nothing but 503s for longer than STALE_SECONDS; another process (straight to moto)
        takes the stale lock over and saves. When storage answers this one again, it saves nothing: its
        save raises `LockExpired`, a storage outage (a run stops with exit 75, its answer spilled)."""
        monkeypatch.setattr(lock, "STALE_SECONDS", 1.0)
        monkeypatch.setattr(lock, "HEARTBEAT_SECONDS", 0.1)
        taker = (
            "import sys; from oeb.run.folder import lock; from oeb.run.folder.run_folder import RunFolder; "
            "lock.STALE_SECONDS = 1.0; "
            "folder = RunFolder(sys.argv[1])\nwith folder.locked('oeb resume'): "
            "folder.save('doc', {'error': None, 'output': {'by': 'the taker'}})"
        )
        folder = RunFolder(url)
        with folder.locked("oeb resume"):
            proxy.down = True
            time.sleep(1.2)
            env = os.environ | {"AWS_ENDPOINT_URL": s3_env["AWS_ENDPOINT_URL"]}
            subprocess.run([sys.executable, "-c", taker, url], env=env, check=True, timeout=120)
            proxy.down = False
            with pytest.raises(LockExpired, match="was not renewed for over 1 s"):
                folder.save("doc", {"error": None, "output": {"by": "the one cut off"}})
        assert storage.read_json(folder.prediction_url("doc")) == {"by": "the taker"}

    def test_the_heartbeat_renews_the_lock(self, url: str, monkeypatch) -> None:
        monkeypatch.setattr(lock, "HEARTBEAT_SECONDS", 0.1)
        with hold(url, "oeb resume"):
            first = holder(url).heartbeat
            time.sleep(0.5)
            assert holder(url).heartbeat > first


class TestCommands:
    """The verbs refuse before planning further, Ray or any write."""

    @pytest.fixture
    def run(self, url: str) -> str:
        storage.write_text(storage.join(url, "config.yaml"), to_yaml(init_tree("mock", SAMPLE_DATASET)))
        storage.write_json(storage.join(url, "predictions", "short__invoice_4417.json"), {})
        return url

    @pytest.mark.parametrize("verb", [["resume", "-y"], ["grade"]])
    def test_a_folder_being_written_is_refused_in_one_line(self, run: str, verb: list[str], capsys) -> None:
        with hold(run, "oeb resume"):
            before = storage.list_files(run)
            code = main([verb[0], run, *verb[1:]])
            after = storage.list_files(run)
        err = capsys.readouterr().err
        assert code == 1 and err.count("\n") == 1
        assert err.startswith(f"oeb {verb[0]}: {RunFolder(run).url} is being written by oeb resume on host")
        assert after == before


@pytest.mark.ray
@pytest.mark.slow
def test_two_resumes_at_once_the_second_refuses(tmp_path: Path, ray_address: str) -> None:
    tree = init_tree("mock", SAMPLE_DATASET)
    tree["workers"] = 2
    tree["system"]["mock"]["latency"] = 0.5
    tree["ray"] = {"address": ray_address, "actors": 1, "rate_limit": {"requests_per_second": None, "max_in_flight": 0}}
    (tmp_path / "mock.yaml").write_text(to_yaml(tree))
    plan = engine.plan_run(load_config(str(tmp_path / "mock.yaml")), str(tmp_path / "runs"))
    engine.execute(plan)
    folder = Path(plan.folder.url)
    for doc_id in sorted(row.doc_id for row in plan.rows)[:8]:  # left for the resumes: 2 s of work at least
        (folder / "records" / f"{doc_id}.json").unlink()
    shutil.rmtree(folder / "field_matching")

    first = OebProcess.start(["resume", str(folder), "-y"], tmp_path / "first.log")
    deadline = time.monotonic() + 120
    while (holder(str(folder)) or Holder("", "", 0, "", 0, "")).pid != first.popen.pid:
        assert first.running() and time.monotonic() < deadline, first.stderr()
        time.sleep(0.05)
    second = OebProcess.start(["resume", str(folder), "-y"], tmp_path / "second.log")
    assert second.finish() == 1
    [line] = second.stderr().splitlines()
    pid = first.popen.pid
    assert line.startswith(
        f"oeb resume: {folder} is being written by oeb resume on host {socket.gethostname()}, pid {pid}"
    )
    assert first.finish() == 0, first.stderr()
    assert len(list((folder / "records").glob("*.json"))) == len(plan.rows)
    assert json.loads((folder / "field_matching" / "summary.json").read_text())["failed"] == 0


def test_the_holder_removes_the_temporary_files_of_writes_cut_short(tmp_path: Path) -> None:
    folder = RunFolder(str(tmp_path / "run"))
    storage.write_json(folder.record_url("a"), {"error": None})
    cut_short = [Path(folder.url, "records", ".b.json.x1y2.tmp"), Path(folder.url, "field_matching", ".s.json.z.tmp")]
    for path in cut_short:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text('{"half')
    with folder.locked("oeb resume"):
        assert sorted(storage.list_files(folder.url)) == [LOCK_NAME, "records/a.json"]
