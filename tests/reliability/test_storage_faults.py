"""Storage faults: a fault-injecting proxy in front of moto's S3, a full disk, storage gone for good.

The proxy (`fixtures.fault_proxy`) answers a fraction of the requests with 503 SlowDown or 500, resets
the connection before or after forwarding, stalls, or cuts an answer short. Real `python -m oeb`
processes run, resume, grade and report with the mock system through it; afterwards, read straight
from moto, every record, prediction and score must be there and whole, and the mock's call log must
show every document asked once. A run folder on a small tmpfs that fills mid-run, and storage that
never comes back, must stop the run as Ctrl-C does (exit 75) with the unsaved answers in the spill
folder, which `oeb resume` imports once storage is back.
"""

from __future__ import annotations

import errno
import json
import logging
import os
import re
import subprocess
import sys
import time
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from fixtures.fault_proxy import FaultProxy
from fixtures.services import S3_BUCKET

from oeb import _retry, storage
from oeb.dataset import SAMPLE_DATASET, open_dataset
from oeb.errors import DiskFull, StorageDown, StorageNotFoundError
from oeb.run.plan.config import init_tree, to_yaml
from oeb.run.predict import spill
from reliability.test_job_crashes import JobRun, job_run  # noqa: F401  (the job vendors' fixture)

IDS = sorted(row.doc_id for row in open_dataset(SAMPLE_DATASET, "manifest.parquet").rows)
CLI_DEADLINE = 240.0


# --- the policy's classification ---------------------------------------------------------------


def _client_error(code: str, status: int) -> Exception:
    from botocore.exceptions import ClientError

    return ClientError({"Error": {"Code": code, "Message": code}, "ResponseMetadata": {"HTTPStatusCode": status}}, "X")


def _wrapped(cause: Exception, outer: Exception) -> Exception:
    outer.__cause__ = cause  # as s3fs's translate_boto_error wraps botocore's answers
    return outer


def _transients() -> list[Exception]:
    import aiohttp
    import httpx2
    from botocore.exceptions import ConnectionClosedError, EndpointConnectionError, ReadTimeoutError

    return [
        _wrapped(_client_error("SlowDown", 503), OSError(errno.EBUSY, "Please reduce your request rate")),
        _wrapped(_client_error("InternalError", 500), OSError(errno.EREMOTEIO, "internal error")),
        _wrapped(_client_error("RequestTimeTooSkewed", 503), PermissionError("a 503 s3fs calls denied")),
        _client_error("ThrottlingException", 400),
        EndpointConnectionError(endpoint_url="http://127.0.0.1:9"),
        ConnectionClosedError(endpoint_url="http://127.0.0.1:9"),
        ReadTimeoutError(endpoint_url="http://127.0.0.1:9"),
        aiohttp.ClientPayloadError("Response payload is not completed"),
        aiohttp.ServerDisconnectedError(),
        httpx2.ConnectError("refused"),
        ConnectionResetError(errno.ECONNRESET, "reset"),
        TimeoutError("timed out"),
        _closed_unanswered(),
    ]


def _closed_unanswered() -> Exception:
    """A connection the server closed before any answer, as botocore raises it through aiohttp:
    `HTTPClientError` ("400, message='Bad status line'"), a status aiohttp's parser made up."""
    import aiohttp
    from aiohttp.http_exceptions import BadStatusLine
    from botocore.exceptions import HTTPClientError
    from yarl import URL

    request = aiohttp.RequestInfo(URL("http://127.0.0.1:9/b/k"), "GET", {}, URL("http://127.0.0.1:9/b/k"))  # type: ignore[arg-type]
    parsed = _wrapped(
        BadStatusLine(""), aiohttp.ClientResponseError(request, (), status=400, message="Bad status line")
    )
    return _wrapped(parsed, HTTPClientError(error=parsed))


def _permanents() -> list[Exception]:
    return [
        _wrapped(_client_error("AccessDenied", 403), PermissionError("Access Denied")),
        _wrapped(_client_error("NoSuchBucket", 404), FileNotFoundError("no bucket")),
        _wrapped(_client_error("PreconditionFailed", 412), OSError(errno.EINVAL, "condition")),
        FileNotFoundError(errno.ENOENT, "no such file"),
        ValueError("a bad path"),
    ]


def test_transient_faults_are_told_from_permanent_ones() -> None:
    assert [_retry.fault(error) for error in _transients()] == ["transient"] * len(_transients())
    assert [_retry.fault(error) for error in _permanents()] == [None] * len(_permanents())
    assert _retry.fault(OSError(errno.ENOSPC, "No space left on device")) == "full"
    assert _retry.fault(OSError(errno.EROFS, "Read-only file system")) == "full"


def test_a_transient_fault_is_retried_with_capped_jittered_back_off(monkeypatch) -> None:
    pauses: list[float] = []
    monkeypatch.setattr(_retry.time, "sleep", pauses.append)
    monkeypatch.setenv(_retry.RETRY_ENV, "600")
    failures = iter([ConnectionResetError()] * 12)

    def attempt() -> str:
        error = next(failures, None)
        if error is not None:
            raise error
        return "done"

    assert _retry.call(attempt, "read", "s3://b/k") == "done"
    assert len(pauses) == 12
    assert all(
        0 <= pause <= min(_retry.MAX_WAIT_S, _retry.FIRST_WAIT_S * 2 ** (n + 1)) for n, pause in enumerate(pauses)
    )
    assert len(set(pauses)) == 12  # jittered


def test_a_permanent_fault_and_a_full_disk_fail_at_once(monkeypatch, tmp_path) -> None:
    monkeypatch.setenv(_retry.RETRY_ENV, "600")
    calls = Counter[str]()

    def denied() -> None:
        calls["denied"] += 1
        raise _wrapped(_client_error("AccessDenied", 403), PermissionError("Access Denied"))

    with pytest.raises(PermissionError):
        _retry.call(denied, "read", "s3://b/k")
    with pytest.raises(DiskFull, match=r"cannot write .*x\.json: .*disk is full or read-only"):
        storage.retried(str(tmp_path / "x.json"), "write", _raise(OSError(errno.ENOSPC, "No space left on device")))
    assert calls["denied"] == 1


def _raise(error: Exception) -> Any:
    def attempt() -> None:
        raise error

    return attempt


# --- oeb.storage through the proxy ----------------------------------------------------------------


@pytest.fixture
def proxy(s3_env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> Any:
    """The fault proxy in front of the tests' moto; `AWS_ENDPOINT_URL` points at it in this process."""
    import s3fs

    with FaultProxy(s3_env["AWS_ENDPOINT_URL"], stall_s=0.8, seed=int(os.environ.get("OEB_FAULT_SEED", "7"))) as p:
        monkeypatch.setenv("AWS_ENDPOINT_URL", p.url)
        monkeypatch.setenv(_retry.TIMEOUT_ENV, "0.5")
        monkeypatch.setenv(_retry.RETRY_ENV, "60")
        s3fs.S3FileSystem.clear_instance_cache()
        yield p
    s3fs.S3FileSystem.clear_instance_cache()


@pytest.mark.parametrize("rate", [0.15, 0.4])
def test_every_storage_call_survives_transient_faults(proxy: FaultProxy, rate: float) -> None:
    proxy.rate = rate
    base = f"s3://{S3_BUCKET}/faults-{uuid.uuid4().hex[:8]}"
    values = {f"r/{n:02d}.json": {"n": n, "pad": "x" * 3000} for n in range(10)}
    for path, value in values.items():
        storage.write_json(storage.join(base, path), value)
    assert storage.list_files(base).keys() == values.keys()
    read = storage.read_many(base, sorted(values))
    assert {path: json.loads(data) for path, data in read.items() if isinstance(data, bytes)} == values
    storage.remove(storage.join(base, "r/00.json"))
    assert not storage.exists(storage.join(base, "r/00.json"))
    assert proxy.failed() > 0, "the proxy injected no fault: the test proves nothing"


def test_a_missing_file_fails_at_once_through_a_faulty_proxy(proxy: FaultProxy) -> None:
    proxy.rate, proxy.kinds = 0.3, ("503", "reset")
    started = time.monotonic()
    with pytest.raises(StorageNotFoundError, match="no such file"):
        storage.read_bytes(f"s3://{S3_BUCKET}/nothing-{uuid.uuid4().hex}.json")
    assert time.monotonic() - started < 10


def test_storage_that_never_comes_back_fails_within_retry_s_saying_so(proxy: FaultProxy, monkeypatch) -> None:
    monkeypatch.setenv(_retry.RETRY_ENV, "3")
    monkeypatch.setattr(_retry, "_last_notice", -float("inf"))
    monkeypatch.setattr(_retry.random, "uniform", lambda low, high: high / 2)  # waits 0.1, 0.2, 0.4, 0.8 s ...
    # The first failure past 0.5 s speaks, however fast the proxy answers (at the default 2 s, a fast
    # proxy's failures can step from 1.5 s straight past the 3 s budget, saying nothing).
    monkeypatch.setattr(_retry, "NOTICE_AFTER_S", 0.5)
    proxy.down = True
    started = time.monotonic()
    url = f"s3://{S3_BUCKET}/down.json"
    notices: list[str] = []
    heard = logging.Handler(logging.WARNING)
    heard.emit = lambda record: notices.append(record.getMessage())  # type: ignore[method-assign]
    # Heard on the logger itself (an in-process CLI test may have cut the 'oeb' logger's propagation),
    # with any `logging.disable` a library of an earlier test left lifted.
    monkeypatch.setattr(logging.root.manager, "disable", logging.NOTSET)
    logging.getLogger("oeb.storage").addHandler(heard)
    try:
        with pytest.raises(StorageDown) as raised:
            storage.write_json(url, {})
    finally:
        logging.getLogger("oeb.storage").removeHandler(heard)
    took = time.monotonic() - started
    assert 3 <= took < 8
    message = str(raised.value)
    assert re.match(
        rf"cannot write {url}: the storage kept failing for [34] s \(\d+ attempts; storage.retry_s is 3\)", message
    )
    assert "last: 503 SlowDown" in message
    assert len(notices) == 1 and re.match(rf"storage: cannot write {url} for [0-2] s so far", notices[0]), notices


# --- oeb run, resume, grade and report through the proxy -------------------------------------------


def _config(folder: Path, calls: Path, latency: float = 0.05, retry_s: float | None = 60) -> Path:
    tree = init_tree("mock", SAMPLE_DATASET)
    tree["workers"] = 2
    tree["system"]["mock"] |= {"latency": latency, "misread": 0.05, "usd": 0.01, "calls_log": str(calls)}
    tree["ray"] = {"address": None, "actors": 1, "rate_limit": {"requests_per_second": None, "max_in_flight": 0}}
    tree["storage"] = {"retry_s": retry_s}
    path = folder / "mock.yaml"
    path.write_text(to_yaml(tree))
    return path


def _env(endpoint: str, spill_dir: Path, retry_s: str = "60") -> dict[str, str]:
    env = dict(os.environ)
    env |= {"AWS_ENDPOINT_URL": endpoint, _retry.TIMEOUT_ENV: "1", _retry.RETRY_ENV: retry_s}
    env |= {spill.SPILL_ENV: str(spill_dir), "OEB_RAY_ADDRESS": ""}
    return env


def _oeb(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "oeb", *args], env=env, capture_output=True, text=True, timeout=CLI_DEADLINE,
        stdin=subprocess.DEVNULL,
    )  # fmt: skip


def _asked(calls: Path) -> Counter[str]:
    return Counter(line.split("\t")[0] for line in calls.read_text().splitlines()) if calls.exists() else Counter()


def _run_folder(out: str) -> str:
    runs = {path.split("/")[0] for path in storage.list_files(out) if path.endswith("settings.json")}
    assert len(runs) == 1, runs
    return storage.join(out, runs.pop())


def _assert_whole(run: str) -> None:
    """Every record and prediction parses, every document has one score line, nothing stray is left."""
    files = storage.list_files(run)
    records = {doc_id: storage.read_json(storage.join(run, "records", f"{doc_id}.json")) for doc_id in IDS}
    for doc_id, record in records.items():
        assert record["doc_id"] == doc_id if "doc_id" in record else True
        if record.get("error") is None:
            assert storage.read_json(storage.join(run, "predictions", f"{doc_id}.json")) == record["output"]
    lines = storage.read_jsonl(storage.join(run, "field_matching", "scores.jsonl"))
    assert sorted(line["id"] for line in lines) == IDS
    stray = [path for path in files if path.endswith(".tmp") or path.startswith("jobs/") or path == ".oeb-lock"]
    assert stray == []


@pytest.mark.slow
@pytest.mark.parametrize("rate", [0.15, 0.4])
def test_run_grade_and_report_through_faults_lose_nothing(proxy: FaultProxy, tmp_path: Path, rate: float) -> None:
    proxy.rate = rate
    if rate > 0.2:  # stalls cost a timeout each: the busier case has every other kind (and stays lean)
        proxy.kinds = tuple(kind for kind in proxy.kinds if kind != "stall")
    calls = tmp_path / "calls.log"
    out = f"s3://{S3_BUCKET}/runs-{uuid.uuid4().hex[:8]}"
    env = _env(proxy.url, tmp_path / "spill")
    ran = _oeb(["run", "--config", str(_config(tmp_path, calls)), "--out", out, "-y"], env)
    assert ran.returncode == 0, ran.stderr[-3000:]
    run = _run_folder(out)
    graded = _oeb(["grade", run], env)
    assert graded.returncode == 0, graded.stderr[-3000:]
    report = _oeb(["report", run, "--out", str(tmp_path / "report.md")], env)
    assert report.returncode == 0, report.stderr[-3000:]
    with proxy.lock:
        proxy.rate = 0.0
    _assert_whole(run)
    assert _asked(calls) == Counter({doc_id: 1 for doc_id in IDS})
    assert (
        json.loads(graded.stdout)["scorers"] == json.loads(ran.stdout)["scorers"]
        if ran.stdout.startswith("{")
        else True
    )
    assert (tmp_path / "report.md").read_text().strip()
    assert proxy.failed() >= 5, f"only {proxy.failed()} faults in {proxy.total()} requests"
    print(f"rate {rate}: {proxy.failed()} of {proxy.total()} requests failed ({dict(proxy.faults)})")


@pytest.mark.slow
def test_storage_that_stays_down_stops_the_run_keeping_answers_and_resume_finishes(
    proxy: FaultProxy, tmp_path: Path, s3_env: dict[str, str]
) -> None:
    proxy.rate, proxy.kinds = 0.1, ("503", "reset", "reset_after")
    calls = tmp_path / "calls.log"
    out = f"s3://{S3_BUCKET}/down-{uuid.uuid4().hex[:8]}"
    spill_dir = tmp_path / "spill"
    env = _env(proxy.url, spill_dir)
    config = _config(tmp_path, calls, latency=0.6, retry_s=3)
    with (tmp_path / "run.err").open("w") as err:
        process = subprocess.Popen(
            [sys.executable, "-m", "oeb", "run", "--config", str(config), "--out", out, "-y"],
            env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err,
        )  # fmt: skip
    deadline = time.monotonic() + CLI_DEADLINE
    while sum(_asked(calls).values()) < 3:
        assert process.poll() is None and time.monotonic() < deadline, (tmp_path / "run.err").read_text()[-3000:]
        time.sleep(0.05)
    proxy.down = True
    down_at = time.monotonic()
    code = process.wait(timeout=CLI_DEADLINE)
    stopped_after = time.monotonic() - down_at
    err = (tmp_path / "run.err").read_text()
    assert code == 75, err[-3000:]
    run = next(line for line in err.splitlines() if line.startswith("oeb run:"))
    assert "storage failed" in run and "continue with: oeb resume s3://" in run and str(spill_dir) in run
    assert stopped_after < 3 + 30, f"stopped {stopped_after:.0f} s after storage went down"
    [kept] = list(spill_dir.iterdir())
    spilled = sorted(path.stem for path in (kept / "records").glob("*.json"))
    assert spilled, "nothing was kept in the spill folder"

    proxy.down = False
    url = run.split("oeb resume ")[-1].strip()
    resumed = _oeb(["resume", url, "-y"], env)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert f"saved {len(spilled)} answers, 0 job handles and 0 provider batches from the spill folder {kept}" in (
        resumed.stderr
    )
    with proxy.lock:
        proxy.rate = 0.0
    _assert_whole(url)
    assert _asked(calls) == Counter({doc_id: 1 for doc_id in IDS}), "a document was bought twice"
    assert not kept.exists(), "the spill folder was not removed once imported"


@pytest.fixture
def small_disk(tmp_path: Path) -> Any:
    """An 8 MiB tmpfs mounted under tmp_path (root only), most of it taken by a filler file."""
    mount = tmp_path / "disk"
    mount.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", str(mount)], capture_output=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode().strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


@pytest.mark.slow
@pytest.mark.must_run  # under CI=true a refused tmpfs mount fails the run
def test_a_disk_that_fills_mid_run_stops_it_and_resume_buys_nothing_twice(small_disk: Path, tmp_path: Path) -> None:
    calls = tmp_path / "calls.log"
    filler = small_disk / "filler"
    free = os.statvfs(small_disk).f_bavail * os.statvfs(small_disk).f_frsize
    filler.write_bytes(b"\0" * (free - 16 * 4096))  # room for config, settings and a few records
    spill_dir = tmp_path / "spill"
    env = _env("http://127.0.0.1:9", spill_dir)
    config = _config(tmp_path, calls, latency=0.05)
    ran = _oeb(["run", "--config", str(config), "--out", str(small_disk / "runs"), "-y"], env)
    assert ran.returncode == 75, ran.stderr[-3000:]
    line = next(line for line in ran.stderr.splitlines() if line.startswith("oeb run:"))
    assert "No space left on device" in line and "continue with: oeb resume" in line
    url = line.split("oeb resume ")[-1].strip()
    saved = {path for path in storage.list_files(url) if path.startswith("records/")}
    [kept] = list(spill_dir.iterdir())
    spilled = {path.stem for path in (kept / "records").glob("*.json")}
    assert saved and spilled, (saved, spilled)

    filler.unlink()
    resumed = _oeb(["resume", url, "-y"], env)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    _assert_whole(url)
    assert _asked(calls) == Counter({doc_id: 1 for doc_id in IDS}), "a document was bought twice"


# --- Hub reads through the proxy ---------------------------------------------------------------------


def test_a_hub_dataset_is_read_whole_through_a_flaky_hub(fake_hub, tmp_path: Path, monkeypatch) -> None:
    from fixtures.datasets import publish

    url = publish(fake_hub, Path(SAMPLE_DATASET), f"acme/flaky-{uuid.uuid4().hex[:8]}")
    expected = open_dataset(url, "manifest.parquet")
    golds = {row.doc_id: expected.gold(row) for row in expected.rows}
    with FaultProxy(fake_hub.endpoint, rate=0.3, kinds=("503", "500", "reset", "truncate"), seed=3) as proxy:
        monkeypatch.setenv("HF_ENDPOINT", proxy.url)
        monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "cache"))  # every file downloaded again
        monkeypatch.setenv(_retry.RETRY_ENV, "60")
        dataset = open_dataset(f"{url}@{expected.commit}", "manifest.parquet")
        assert {row.doc_id: dataset.gold(row) for row in dataset.rows} == golds
        assert all(dataset.document(row).read_bytes().startswith(b"%PDF") for row in dataset.rows)
    assert proxy.failed() > 0, "the proxy injected no fault: the test proves nothing"


def test_a_hub_that_accepts_and_never_answers_is_asked_again_within_the_timeout(
    fake_hub, tmp_path: Path, monkeypatch
) -> None:
    """Pinning (`dataset_info`), listing a published folder (`list_repo_tree`) and reading a file each
    meet a stalled first request: cut at the storage timeout and tried again, never a wait forever."""
    from fixtures.datasets import publish

    from oeb import _hub
    from oeb.publish.destination import HubDestination

    url = publish(fake_hub, Path(SAMPLE_DATASET), f"acme/stalled-{uuid.uuid4().hex[:8]}")
    with FaultProxy(fake_hub.endpoint, stall_s=60, seed=3) as proxy:
        monkeypatch.setenv("HF_ENDPOINT", proxy.url)
        monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "cache"))
        monkeypatch.setenv(_retry.TIMEOUT_ENV, "0.5")
        monkeypatch.setenv(_retry.RETRY_ENV, "30")
        location = _hub.parse_location(url)
        started = time.monotonic()
        proxy.scripted = ["stall"]
        commit = _hub.commit_of(location)
        proxy.scripted = ["stall"]
        manifest = storage.read_bytes(storage.join(location.url(commit), "manifest.parquet"))
        proxy.scripted = ["stall"]
        assert HubDestination(url, location, commit).unchanged({"manifest.parquet": manifest}) == {"manifest.parquet"}
        assert manifest.startswith(b"PAR1")
        assert time.monotonic() - started < 15, "a stalled Hub request was waited out"
    assert proxy.faults["stall"] == 3


def test_a_lock_whose_put_was_stored_but_whose_answer_was_lost_is_held(proxy: FaultProxy) -> None:
    from oeb.run.folder.lock import LOCK_NAME, hold

    url = f"s3://{S3_BUCKET}/lock-{uuid.uuid4().hex[:8]}"
    proxy.scripted = ["reset_after"]  # the If-None-Match PUT reaches the store; its answer never comes
    with hold(url, "oeb run") as lock:
        lock.check()
        assert storage.exists(storage.join(url, LOCK_NAME))
    assert proxy.faults["reset_after"] == 1
    assert not storage.exists(storage.join(url, LOCK_NAME))


def test_a_lock_whose_release_meets_throttling_and_a_closed_connection_is_released(proxy: FaultProxy) -> None:
    from oeb.run.folder.lock import LOCK_NAME, hold

    url = f"s3://{S3_BUCKET}/lock-{uuid.uuid4().hex[:8]}"
    with hold(url, "oeb grade") as lock:
        lock.check()
        proxy.scripted = ["503", "close", "reset_after"]  # the DELETE: throttled, unanswered, done unheard
    assert proxy.faults == {"503": 1, "close": 1, "reset_after": 1}
    assert not storage.exists(storage.join(url, LOCK_NAME)), "the lock was left behind"


def test_answers_no_disk_takes_are_counted_and_their_job_handles_printed(tmp_path: Path, monkeypatch, caplog) -> None:
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("")
    monkeypatch.setenv(spill.SPILL_ENV, str(blocked))
    kept = spill.Spill("s3://b/runs/r", "cause")
    with caplog.at_level("WARNING"):
        assert not kept.keep("doc_1", {"error": None})
        assert not kept.keep_job("doc_2", {"handle": {"job_id": "J-42"}})
    assert kept.lost == ["doc_1", "doc_2"]
    assert "could not be kept anywhere" in kept.line()
    assert any(
        '"job_id": "J-42"' in record.getMessage() and "doc_2" in record.getMessage() for record in caplog.records
    )


@pytest.mark.slow
def test_job_handles_storage_cannot_take_are_spilled_and_collected_by_resume(
    job_run: Any,  # noqa: F811
    proxy: FaultProxy,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(_retry.RETRY_ENV, "2")
    monkeypatch.setenv(spill.SPILL_ENV, str(tmp_path / "spill"))
    run: JobRun = job_run("reducto", f"s3://{S3_BUCKET}/jobs-{uuid.uuid4().hex[:8]}")
    start = run.vendor.start

    def storage_goes_down(document: Any) -> str:  # the vendor takes the job; its handle cannot be written
        proxy.down = True
        return start(document)

    monkeypatch.setattr(run.vendor, "start", storage_goes_down)
    process = run.start()
    assert process.finish(timeout=CLI_DEADLINE) == 75, process.stderr()[-3000:]
    [kept] = list((tmp_path / "spill").iterdir())
    handles = sorted(path.stem for path in (kept / "jobs").glob("*.json"))
    assert handles and set(handles) == set(run.vendor.created), (handles, dict(run.vendor.created))
    assert f"{len(handles)} vendor job handles not saved are kept in {kept}" in process.stderr()

    proxy.down = False
    assert run.folder(), "the run folder was not made before storage went down"
    monkeypatch.setattr(run.vendor, "start", start)
    run.finish()
    run.check_every_answer()  # one job per document: the spilled ones were collected, not bought again
    assert not kept.exists()
