"""Crash safety: `oeb run` and `oeb resume` SIGKILLed at random points of predict and of grade, on a
local run folder and on s3:// (moto), then resumed until the run finishes.

One run per storage is killed again and again, each kill landing in a fresh `oeb resume`. After
every kill the folder is checked: every file whole (JSON, JSON Lines, parquet and YAML parse), every
record beside its prediction, no record ever rewritten. At the end the mock's call log shows that no
document was asked after its answer was saved, and the scores equal those of an uninterrupted run.
The processes are real `python -m oeb` subprocesses joining the tests' in-process Ray
(`ray_cluster`), so each costs seconds, not a Ray start. `OEB_CRASH_KILLS=N` kills N times per
storage instead of 6 (4 in predict, 2 in grade; each CI run draws a new seed, so the kill points
vary from run to run); `OEB_CRASH_SEED` replays a loop.
"""

from __future__ import annotations

import io
import json
import os
import random
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import yaml
from fixtures.services import S3_BUCKET

from oeb import storage
from oeb.dataset import SAMPLE_DATASET, open_dataset
from oeb.run import engine
from oeb.run.folder.lock import LOCK_NAME
from oeb.run.plan.config import init_tree, load_config, to_yaml
from reliability.conftest import OebProcess

pytestmark = pytest.mark.slow

KILLS = int(os.environ.get("OEB_CRASH_KILLS", "6"))
SEED = int(os.environ.get("OEB_CRASH_SEED", str(random.randrange(1 << 30))))
LATENCY = 0.3
SCORED = "documents scored"
NOTHING_TO_PREDICT = "nothing to predict"
DEADLINE = 180.0


def _config(folder: Path, calls: Path, address: str | None) -> Path:
    tree = init_tree("mock", SAMPLE_DATASET)
    tree["workers"] = 2
    tree["system"]["mock"] |= {"latency": LATENCY, "misread": 0.05, "unfound": 0.03, "invented_item": 0.05}
    tree["system"]["mock"] |= {"usd": 0.01, "calls_log": str(calls)}
    tree["ray"] = {"address": address, "actors": 1, "rate_limit": {"requests_per_second": None, "max_in_flight": 0}}
    path = folder / "mock.yaml"
    path.write_text(to_yaml(tree))
    return path


def _records(url: str) -> int:
    return sum(1 for path in storage.list_files(url) if path.startswith("records/") and path.endswith(".json"))


def _wait(condition, process: OebProcess) -> bool:
    """Poll `condition` until it holds (True) or the process ends first (False)."""
    deadline = time.monotonic() + DEADLINE
    while not condition():
        if not process.running():
            return False
        assert time.monotonic() < deadline, f"nothing happened in {DEADLINE:g} s: {process.stderr()[-2000:]}"
        time.sleep(0.03)
    return True


@dataclass
class Lineage:
    """One run killed again and again; what every check so far has seen."""

    out: str
    config: Path
    calls: Path
    logs: Path
    rows: int
    url: str = ""
    saved: dict[str, bytes] = field(default_factory=dict)
    """Each record as first seen after a kill: it must never change."""
    seen_at: dict[str, float] = field(default_factory=dict)
    """When each record was first seen: no call for its document may come later."""
    kills: list[str] = field(default_factory=list)
    temporaries: int = 0
    processes: int = 0

    def start(self) -> OebProcess:
        self.processes += 1
        log = self.logs / f"{self.processes:03d}.log"
        if not self.url:
            return OebProcess.start(["run", "--config", str(self.config), "--out", self.out, "-y"], log)
        return OebProcess.start(["resume", self.url, "-y"], log)

    def find_folder(self, process: OebProcess) -> None:
        """The folder `oeb run` made under `out` (its name is random)."""
        if not self.url:
            _wait(lambda: any(path.endswith("settings.json") for path in storage.list_files(self.out)), process)
            name = next(path for path in storage.list_files(self.out) if path.endswith("settings.json"))
            self.url = storage.join(self.out, name.split("/")[0])

    def check(self) -> None:
        """Every file whole; every record beside its prediction and never rewritten."""
        contents = storage.read_many(self.url, list(storage.list_files(self.url)))
        for path, data in contents.items():
            assert not isinstance(data, Exception), data
            name = path.rsplit("/", 1)[-1]
            if name.startswith(".") and name.endswith(".tmp"):
                self.temporaries += 1  # a write cut short before its rename: never seen under its name
            elif path.endswith(".json"):
                json.loads(data)
            elif path.endswith(".jsonl"):
                [json.loads(line) for line in data.splitlines() if line.strip()]
            elif path.endswith(".parquet"):
                pq.read_table(io.BytesIO(data))
            elif path.endswith(".yaml"):
                yaml.safe_load(data)
            else:
                assert name == LOCK_NAME, f"unexpected file {path}"
        for path, data in contents.items():
            if not (path.startswith("records/") and path.endswith(".json")):
                continue
            doc_id = path.removeprefix("records/").removesuffix(".json")
            record = json.loads(data)
            assert record["error"] is None, record["error"]
            assert json.loads(contents[f"predictions/{doc_id}.json"]) == record["output"]
            if doc_id in self.saved:
                assert self.saved[doc_id] == data, f"the record of {doc_id} was written again"
            else:
                self.saved[doc_id], self.seen_at[doc_id] = data, time.time()

    def kill_in_predict(self, rng: random.Random, wanted: int) -> None:
        process = self.start()
        self.find_folder(process)
        target = min(self.rows - 1, max(wanted, len(self.saved) + 1))
        reached = _wait(lambda: _records(self.url) >= target, process)
        assert reached, f"the process ended before {target} records: {process.stderr()[-2000:]}"
        time.sleep(rng.uniform(0, LATENCY))
        self._kill(process)

    def kill_in_grade(self, rng: random.Random, grading: float) -> bool:
        """Kill a resume `grading` seconds at most into grading; False when it finished first."""
        process = self.start()
        self.find_folder(process)
        had_work = len(self.saved) < self.rows
        started = _wait(
            lambda: (_records(self.url) == self.rows) if had_work else NOTHING_TO_PREDICT in process.stderr(),
            process,
        )
        assert started, f"the process ended before grading: {process.stderr()[-2000:]}"
        time.sleep(rng.uniform(0, grading))
        if not process.running():
            self.kills.append("none: finished first")
            self.check()
            return False
        return self._kill(process) != "after grade"

    def _kill(self, process: OebProcess) -> str:
        process.kill()
        self.check()
        phase = "predict" if len(self.saved) < self.rows else "grade"
        self.kills.append(phase if phase == "predict" or SCORED not in process.stderr() else "after grade")
        return self.kills[-1]

    def finish(self) -> dict[str, bytes]:
        process = self.start()
        assert process.finish(DEADLINE) == 0, process.stderr()[-3000:]
        self.check()
        files = storage.list_files(self.url)
        assert LOCK_NAME not in files and not any(path.endswith(".tmp") for path in files), sorted(files)
        return {name: storage.read_bytes(storage.join(self.url, "field_matching", name)) for name in RESULTS}

    def landed(self) -> int:
        return sum(kill in ("predict", "grade") for kill in self.kills)

    def asked_again(self) -> list[str]:
        """Calls made for a document after its answer was seen saved."""
        lines = [line.split("\t") for line in self.calls.read_text().splitlines()]
        return [doc for doc, at in lines if doc in self.seen_at and float(at) > self.seen_at[doc]]

    def calls_made(self) -> int:
        return len(self.calls.read_text().splitlines())


RESULTS = ("scores.jsonl", "summary.json")


def _same_scores(got: dict[str, bytes], expected: dict[str, bytes]) -> None:
    assert got["scores.jsonl"] == expected["scores.jsonl"]
    summaries = [json.loads(results["summary.json"]) for results in (got, expected)]
    for summary in summaries:
        summary.pop("run")
        summary["provenance"].pop("graded_at")  # when each was graded; everything else must agree
    assert summaries[0] == summaries[1]


def _kill_loop(lineage: Lineage, rng: random.Random, kills: int) -> dict[str, bytes]:
    """Kills in predict at increasing record counts, then in grade until `kills` landed in one or the
    other; the grade window shrinks when a kill comes too late and grows when it lands (the machine's
    speed varies)."""
    in_predict = max(1, round(kills * 0.6))
    for wanted in sorted(rng.sample(range(1, lineage.rows), min(in_predict, lineage.rows - 1))):
        lineage.kill_in_predict(rng, wanted)
    window, attempts = 2.0, 0
    while lineage.landed() < kills:
        attempts += 1
        assert attempts <= 3 * kills, f"kills landed too late to be in grade: {lineage.kills}"
        window *= 1.3 if lineage.kill_in_grade(rng, window) else 0.5
    return lineage.finish()


def _lineage(tmp_path: Path, name: str, out: str, address: str | None) -> Lineage:
    folder = tmp_path / name
    (folder / "logs").mkdir(parents=True)
    calls = folder / "calls.log"
    rows = len(open_dataset(SAMPLE_DATASET).rows)
    return Lineage(out, _config(folder, calls, address), calls, folder / "logs", rows)


@pytest.mark.ray
def test_killed_runs_resume_to_the_scores_of_an_uninterrupted_run(tmp_path, ray_address, s3_env) -> None:
    print(f"OEB_CRASH_SEED={SEED} OEB_CRASH_KILLS={KILLS}")
    baseline = _lineage(tmp_path, "baseline", str(tmp_path / "baseline" / "runs"), ray_address)
    plan = engine.plan_run(load_config(str(baseline.config)), baseline.out)  # uninterrupted, in this process
    engine.execute(plan)
    expected = {name: storage.read_bytes(plan.folder.path("field_matching", name)) for name in RESULTS}

    lineages = {
        "local": _lineage(tmp_path, "local", str(tmp_path / "local" / "runs"), ray_address),
        "s3": _lineage(tmp_path, "s3", f"s3://{S3_BUCKET}/crash-{uuid.uuid4().hex[:8]}", ray_address),
    }
    rng = random.Random(SEED)
    seeds = {kind: rng.randrange(1 << 30) for kind in lineages}
    with ThreadPoolExecutor(len(lineages)) as pool:
        futures = {
            kind: pool.submit(_kill_loop, lineage, random.Random(seeds[kind]), KILLS)
            for kind, lineage in lineages.items()
        }
        finals = {kind: future.result() for kind, future in futures.items()}

    for kind, lineage in lineages.items():
        print(
            f"{kind}: {lineage.processes} processes, kills {lineage.kills}, {lineage.calls_made()} calls for "
            f"{lineage.rows} documents, {lineage.temporaries} temporary files seen after kills"
        )
    for kind, lineage in lineages.items():
        assert lineage.landed() >= KILLS and "predict" in lineage.kills and "grade" in lineage.kills
        assert lineage.asked_again() == []
        _same_scores(finals[kind], expected)


def _new(out: Path, before: set[Path], pattern: str) -> bool:
    """Whether `pattern` matches under an entry of `out` that was not there `before`."""
    top, _, rest = pattern.partition("/")
    fresh = [path for path in out.iterdir() if path not in before] if out.exists() else []
    return any(path.match(top) and (not rest or any(path.glob(rest))) for path in fresh)


START_UP_KILLS = {
    "early in the imports": "",
    "as the new folder appears under --out (hidden until whole)": "*",
    "as the run folder appears": "mock-*",
    "as the lock is taken": f"mock-*/{LOCK_NAME}",
    "as the first record is saved": "mock-*/records/*.json",
}
"""Where `oeb run` is killed: as soon as the pattern matches in the folder it is making (polled every
few milliseconds), the first one after a second."""


def test_a_kill_during_start_up_leaves_no_folder_or_one_that_resume_continues(tmp_path) -> None:
    """SIGKILL at points of start-up (the imports, the folder's first files, the lock, the first
    record): every folder left under --out is one `oeb resume` plans, and resuming one finishes it.
    The run is small, so it runs without Ray: no Ray start to wait for."""
    lineage = _lineage(tmp_path, "start-up", str(tmp_path / "start-up" / "runs"), None)
    out = Path(lineage.out)
    for n, (point, pattern) in enumerate(START_UP_KILLS.items()):
        before = set(out.iterdir()) if out.exists() else set()
        process = OebProcess.start(
            ["run", "--config", str(lineage.config), "--out", lineage.out, "-y"], lineage.logs / f"kill-{n}.log"
        )
        deadline = time.monotonic() + (1.0 if not pattern else DEADLINE)
        while not (pattern and _new(out, before, pattern)) and process.running() and time.monotonic() < deadline:
            time.sleep(0.002)
        assert not pattern or _new(out, before, pattern), f"{point}: never reached: {process.stderr()[-2000:]}"
        process.kill()
    folders = sorted(path for path in out.iterdir() if not path.name.startswith("."))
    for folder in folders:
        files = {path.name for path in folder.iterdir()}
        assert {"config.yaml", "settings.json"} <= files, (folder.name, sorted(files))
        plan = engine.plan_resume(str(folder))  # refuses a folder it cannot continue
        assert plan.rows and plan.folder.url == str(folder)
    assert len(folders) >= 3  # the kills from the run folder's appearance on each left one
    lineage.url = str(folders[0])
    assert lineage.start().finish(DEADLINE) == 0
    summary = json.loads((folders[0] / "field_matching" / "summary.json").read_text())
    assert summary["rows"] == lineage.rows
