"""The grade stage: the incremental Grader against `grade`, in this process against on Ray (the same
bytes), the grading cache, provenance written and read back (local and s3://), `oeb grade` of a run
whose documents all failed, and where a session runs its work."""

from __future__ import annotations

import importlib.metadata
import json
import os
import re
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

import oeb
from oeb import storage
from oeb.cli import main
from oeb.dataset import SAMPLE_DATASET, Dataset, open_dataset
from oeb.errors import NothingAnswered
from oeb.run import engine
from oeb.run.cluster import session as cluster
from oeb.run.folder.run_folder import RunFolder
from oeb.run.grade import results, scheduler
from oeb.run.grade import stage as grade_stage
from oeb.run.grade.regrade import grade_folder
from oeb.run.grade.results import headline_line
from oeb.run.grade.stage import Grader, grade
from oeb.run.grade.task import scorer_digest
from run.conftest import mock_config

RESULTS = "field_matching"


def _answered(folder: Path) -> Path:
    """A run folder over the sample: every document answered from its gold (every third with a
    misread value), except one whose record failed."""
    dataset = open_dataset(SAMPLE_DATASET)
    (folder / "records").mkdir(parents=True)
    (folder / "predictions").mkdir()
    for n, (row, gold) in enumerate(dataset.golds()):
        if n == 4:
            record = {"id": row.doc_id, "output": None, "error": {"type": "Unreadable", "message": "not JSON"}}
        else:
            output = json.loads(json.dumps(gold))
            if n % 3 == 0:
                key = next(iter(output))
                output[key] = "misread"
            (folder / "predictions" / f"{row.doc_id}.json").write_text(json.dumps(output))
            record = {"id": row.doc_id, "output": output, "error": None, "cost": {"usd": 0.01}}
        (folder / "records" / f"{row.doc_id}.json").write_text(json.dumps(record))
    return folder


def _files(folder: Path) -> dict[str, Any]:
    """Every file grading wrote, as bytes; summary.json parsed, without the time it was graded."""
    files: dict[str, Any] = {}
    for path in sorted((folder / RESULTS).rglob("*")):
        if path.is_file():
            files[str(path.relative_to(folder))] = path.read_bytes()
    summary = json.loads(files.pop(f"{RESULTS}/summary.json"))
    summary["run"] = "*"
    del summary["provenance"]["graded_at"]
    files["summary"] = summary
    return files


def _incrementally(folder: Path, order: list[str], dataset: Dataset | None = None) -> Grader:
    dataset = dataset or open_dataset(SAMPLE_DATASET)
    grader = Grader(RunFolder(str(folder)), dataset, dataset.rows)
    for doc_id in order:
        grader.add(doc_id)
    return grader


@pytest.fixture
def in_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """Grading outside a session runs here even when a test's Ray is open."""
    monkeypatch.setattr(cluster, "_ray_open", lambda: False)


def test_the_incremental_grader_writes_what_grade_writes_and_uses_the_cache(tmp_path: Path, in_process) -> None:
    whole, added = _answered(tmp_path / "whole"), _answered(tmp_path / "added")
    dataset = open_dataset(SAMPLE_DATASET)
    graded = grade(RunFolder(str(whole)), dataset, dataset.rows)
    ids = [row.doc_id for row in dataset.rows]
    with _incrementally(added, ids[::-1][:7]) as grader:  # the rest at finish
        incremental = grader.finish()
    assert _files(added) == _files(whole)
    assert incremental.report["scorers"] == graded.report["scorers"] | {RESULTS: incremental.report["scorers"][RESULTS]}
    assert incremental.nodes == graded.nodes == {"process"}
    summary = graded.report["scorers"][RESULTS]
    assert (summary["rows"], summary["failed"]) == (12, 1)

    cache = {path.name: path.stat().st_mtime_ns for path in (added / RESULTS / "cache").iterdir()}
    with _incrementally(added, ids) as grader:
        assert grader.finish().report["scorers"][RESULTS]["headline"] == summary["headline"]
        assert grader.rescored == 0
    assert {path.name: path.stat().st_mtime_ns for path in (added / RESULTS / "cache").iterdir()} == cache


@pytest.mark.ray
def test_graders_on_ray_side_by_side_write_the_same_bytes_as_in_this_process(
    ray_cluster, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    here = _answered(tmp_path / "here")
    with monkeypatch.context() as patch:
        patch.setattr(cluster, "_ray_open", lambda: False)
        grade_folder(str(here))
    first, second = _answered(tmp_path / "first"), _answered(tmp_path / "second")
    ids = [row.doc_id for row in open_dataset(SAMPLE_DATASET).rows]
    with cluster.session(None, {}, documents=24) as where:
        assert where.kind == "open" and cluster.uses_ray()
        with _incrementally(first, ids) as a, _incrementally(second, ids[::-1]) as b:
            graded = [a.finish(), b.finish()]
    assert all(result.nodes and "process" not in result.nodes for result in graded)
    assert _files(first) == _files(second) == _files(here)


def test_grading_names_the_failed_documents_and_counts_the_cache_right(tmp_path: Path, in_process, capsys) -> None:
    """Two predictions corrupted after a first grading: the line names them (and the record that
    failed) with their reasons, and counts as from the cache only the documents scored from it."""
    folder = _answered(tmp_path / "mine")
    dataset = open_dataset(SAMPLE_DATASET)
    grade(RunFolder(str(folder)), dataset, dataset.rows)
    broken = sorted((folder / "predictions").iterdir())[:2]
    for path in broken:
        path.write_text("{not json")
    capsys.readouterr()
    assert main(["grade", str(folder)]) == 0
    [line] = [message for message in capsys.readouterr().err.splitlines() if "documents scored" in message]
    assert line.startswith("mine: 9 documents scored, 9 of them from the cache; 3 failed: ")
    for path in broken:
        assert f"{path.stem} (the prediction file predictions/{path.name} is not JSON" in line
    assert "(Unreadable: not JSON)" in line and line.endswith(f"(all in {RESULTS}/scores.jsonl)")


@pytest.mark.ray
def test_oeb_grade_grades_a_run_whose_documents_all_failed(ray_cluster, tmp_path: Path, capsys) -> None:
    plan = engine.plan_run(mock_config({"rows.limit": 3, "system.mock.malformed": 1.0}), str(tmp_path))
    with pytest.raises(NothingAnswered):  # graded, then refused as a result
        engine.execute(plan)
    folder = Path(plan.folder.url)
    assert not (folder / "predictions").exists()
    written = json.loads((folder / RESULTS / "summary.json").read_text())
    capsys.readouterr()

    assert main(["grade", str(folder)]) == 0
    report = json.loads(capsys.readouterr().out)
    summary = report["scorers"][RESULTS]
    assert (summary["headline"], summary["rows"], summary["failed"], summary["scored"]) == (0.0, 3, 3, None)
    del summary["provenance"]["graded_at"], written["provenance"]["graded_at"]
    assert summary == written
    lines = storage.read_jsonl(str(folder / RESULTS / "scores.jsonl"))
    assert [line["status"] for line in lines] == ["failed"] * 3


@pytest.mark.parametrize("where", ["local", "s3"])
def test_provenance_is_written_and_read_back(where: str, tmp_path: Path, s3_env, in_process) -> None:
    made = _answered(tmp_path / "mine")
    shutil.rmtree(made / "records")
    folder = str(made)
    if where == "s3":
        folder = f"s3://oeb-tests/brought-{uuid.uuid4().hex[:8]}/mine"
        for path in sorted((made / "predictions").iterdir()):
            storage.write_bytes(f"{folder}/predictions/{path.name}", path.read_bytes())
    graded = grade_folder(folder, dataset=SAMPLE_DATASET, partial=True)

    summary = storage.read_json(f"{folder}/{RESULTS}/summary.json")
    provenance = summary["provenance"]
    assert summary == graded.report["scorers"][RESULTS]
    assert list(provenance) == [
        "oeb", "scorer", "git", "python", "packages", "platform", "dataset", "dataset_commit", "manifest",
        "manifest_sha256", "graded_at",
    ]  # fmt: skip
    dataset = open_dataset(SAMPLE_DATASET)
    assert provenance["oeb"] == oeb.__version__ == importlib.metadata.version("oeb")
    assert provenance["scorer"] == scorer_digest()
    assert (provenance["dataset"], provenance["dataset_commit"], provenance["manifest"]) == (
        dataset.identity,
        None,
        "manifest.parquet",
    )
    assert provenance["git"] is None or set(provenance["git"]) == {"commit", "dirty"}
    assert {"numpy", "scipy", "pyarrow", "ray", "httpx", "openai"} <= set(provenance["packages"])
    assert len(provenance["manifest_sha256"]) == 64
    lines = storage.read_jsonl(f"{folder}/{RESULTS}/scores.jsonl")
    assert len(lines) == 12 and {line["scorer"] for line in lines} == {scorer_digest()}
    table = storage.read_parquet(f"{folder}/{RESULTS}/scores.parquet")
    assert table.column("scorer").to_pylist() == [scorer_digest()] * 12


class _Recording(scheduler._InProcess):
    """Grades here, noting each task's documents by folder."""

    def __init__(self) -> None:
        self.tasks: list[list[tuple[str, int]]] = []

    def submit(self, dataset: Any, groups: list[Any], details: bool) -> Any:
        self.tasks.append([(Path(folder).name, len(items)) for folder, items in groups])
        return super().submit(dataset, groups, details)


@pytest.fixture
def recording(monkeypatch: pytest.MonkeyPatch) -> _Recording:
    """A grading queue of its own whose tasks are noted; a batch is held only by its count."""
    executor = _Recording()
    queue = scheduler._Queue(executor)
    monkeypatch.setattr(grade_stage, "session_queue", lambda: queue)
    monkeypatch.setattr(scheduler, "HOLD_SECONDS", 60.0)
    return executor


def test_answers_of_several_runs_on_one_dataset_share_tasks(tmp_path: Path, recording: _Recording) -> None:
    whole = _answered(tmp_path / "whole")
    dataset = open_dataset(SAMPLE_DATASET)
    grade(RunFolder(str(whole)), dataset, dataset.rows)
    recording.tasks.clear()
    first, second = _answered(tmp_path / "first"), _answered(tmp_path / "second")
    ids = [row.doc_id for row in dataset.rows]
    with _incrementally(first, ids, dataset) as a, _incrementally(second, ids, dataset) as b:  # 11 answered each
        # The queue's thread takes its first batch while both still stream; `finish` before it woke
        # would flush everything waiting by size instead (a race this test used to lose now and then).
        deadline = time.monotonic() + 10
        while not recording.tasks and time.monotonic() < deadline:
            time.sleep(0.01)
        a.finish(), b.finish()
    sizes = [sum(n for _, n in task) for task in recording.tasks]
    assert sizes[0] == scheduler.BATCH_DOCUMENTS and sum(sizes) == 22  # the rest spread at the end
    assert {name for name, _ in recording.tasks[0]} == {"first", "second"}
    assert _files(first) == _files(second) == _files(whole)


def test_a_document_streaming_in_alone_waits_only_a_moment(
    tmp_path: Path, recording: _Recording, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(scheduler, "HOLD_SECONDS", 0.05)
    folder = _answered(tmp_path / "run")
    with _incrementally(folder, [row.doc_id for row in open_dataset(SAMPLE_DATASET).rows[:2]]) as grader:
        deadline = time.monotonic() + 10
        while grader.outstanding and time.monotonic() < deadline:
            time.sleep(0.01)
        assert grader.outstanding == 0 and recording.tasks  # graded before `finish`
        grader.finish()


def test_verdicts_spilled_to_disk_or_held_give_the_same_table(
    tmp_path: Path, in_process, monkeypatch: pytest.MonkeyPatch
) -> None:
    held, spilled = _answered(tmp_path / "held"), _answered(tmp_path / "spilled")
    dataset = open_dataset(SAMPLE_DATASET)
    grade(RunFolder(str(held)), dataset, dataset.rows)
    monkeypatch.setattr(grade_stage, "VERDICTS_IN_MEMORY", 0)
    monkeypatch.setattr(results, "ROW_GROUP_ROWS", 50)
    grade(RunFolder(str(spilled)), dataset, dataset.rows)
    one, many = (pq.ParquetFile(folder / RESULTS / "verdicts.parquet") for folder in (held, spilled))
    assert one.metadata.num_row_groups == 1 < many.metadata.num_row_groups
    assert one.read().equals(many.read())


def test_the_verdicts_are_in_row_order(tmp_path: Path, in_process) -> None:
    folder = _answered(tmp_path / "run")
    dataset = open_dataset(SAMPLE_DATASET)
    grade(RunFolder(str(folder)), dataset, dataset.rows)
    ids = pq.read_table(folder / RESULTS / "verdicts.parquet").column("id").to_pylist()
    assert list(dict.fromkeys(ids)) == [row.doc_id for n, row in enumerate(dataset.rows) if n != 4]


def test_a_session_runs_small_jobs_here_and_uses_the_ray_it_is_told(monkeypatch: pytest.MonkeyPatch, caplog) -> None:
    monkeypatch.setattr(cluster, "_ray_open", lambda: False)
    monkeypatch.delenv(cluster.ADDRESS_VARIABLE, raising=False)
    monkeypatch.delenv(cluster.WARM_VARIABLE, raising=False)
    assert cluster.choose(None, documents=cluster.SMALL_JOB).kind == "process"
    assert cluster.choose(None, documents=cluster.SMALL_JOB + 1).kind == "local"
    assert cluster.choose("local", documents=1).kind == "local"
    assert cluster.choose("ray://head:10001", documents=1) == cluster.Where(
        "attached", "ray://head:10001", "ray.address", warm=True
    )
    monkeypatch.setenv(cluster.ADDRESS_VARIABLE, "auto")
    assert cluster.choose(None, documents=1) == cluster.Where("attached", "auto", cluster.ADDRESS_VARIABLE, warm=True)
    assert cluster.choose("10.0.0.1:6379", documents=1).address == "10.0.0.1:6379"  # the config wins
    monkeypatch.delenv(cluster.ADDRESS_VARIABLE)
    here = [cluster._on_this_machine(address) for address in ("auto", "127.0.0.1:6379", "localhost:6379")]
    elsewhere = [cluster._on_this_machine(address) for address in ("10.255.255.1:6379", "ray://head:10001")]
    assert all(here) and not any(elsewhere)  # the machine's Ray token is offered to its own Ray only
    with caplog.at_level("INFO", logger="oeb"), cluster.session(None, {}, documents=3) as where:
        assert where.kind == "process" and not cluster.uses_ray()
    assert caplog.messages == [where.line(3)]


@pytest.mark.slow
def test_oeb_grade_on_a_private_local_ray_prints_only_oebs_lines(tmp_path: Path) -> None:
    folder = _answered(tmp_path / "mine")
    shutil.rmtree(folder / "records")
    env = {name: value for name, value in os.environ.items() if not name.startswith("RAY_")}  # a user's shell
    env |= {cluster.ADDRESS_VARIABLE: "local", "HOME": str(tmp_path)}  # Ray's token goes to HOME/.ray
    command = [sys.executable, "-c", "import sys; from oeb.cli import main; sys.exit(main())", "grade", str(folder)]
    done = subprocess.run([*command, "--partial"], env=env, capture_output=True, text=True, timeout=600, check=False)

    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout)
    summary = report["scorers"][RESULTS]
    before_tables = done.stderr.split("leaderboard")[0].splitlines()
    assert before_tables == [
        cluster.Where("local", "local", cluster.ADDRESS_VARIABLE).line(12),
        "mine: 11 documents scored, 0 of them from the cache; 1 failed: long__real_ofac_ssi_mini (no prediction: "
        f"predictions/long__real_ofac_ssi_mini.json does not exist) (all in {RESULTS}/scores.jsonl)",
        headline_line(summary, report["cost"]),
    ]
    assert not re.search(r"WARNING|INFO|Token|RAY_|\.py:\d+", done.stdout + done.stderr)
    assert (tmp_path / ".ray" / "auth_token").exists()  # token authentication kept


def _run_folder(folder: Path, *, failed: bool = False) -> Path:
    """A run folder over the sample as `oeb run` leaves it (settings.json, records, predictions);
    `failed`: every document failed, so there is no predictions/."""
    _answered(folder)
    dataset = open_dataset(SAMPLE_DATASET)
    if failed:
        shutil.rmtree(folder / "predictions")
        for row in dataset.rows:
            error = {"type": "Unreadable", "message": "not JSON"}
            (folder / "records" / f"{row.doc_id}.json").write_text(json.dumps({"id": row.doc_id, "error": error}))
    settings = {"run": folder.name, "system": "mock", "options": {}, **dataset.settings(), "task": "extract"}
    (folder / "settings.json").write_text(json.dumps(settings | {"rows": {}}))
    return folder


def test_a_prefix_of_runs_is_regraded_together_and_an_unfinished_run_skipped(
    tmp_path: Path, capsys, in_process
) -> None:
    runs = tmp_path / "runs"
    _run_folder(runs / "a")
    _run_folder(runs / "deeper" / "failed", failed=True)
    unfinished = _run_folder(runs / "unfinished")
    (unfinished / "records" / "short__invoice_4417.json").unlink()
    (unfinished / "predictions" / "short__invoice_4417.json").unlink()

    assert main(["grade", str(runs)]) == 1  # a run was skipped
    printed = json.loads(capsys.readouterr().out)
    headlines = {report["run"]: report["scorers"][RESULTS]["headline"] for report in printed["runs"]}
    assert headlines["failed"] == 0.0 and 0 < headlines["a"] < 1 and set(headlines) == {"a", "failed"}
    assert list(printed["skipped"]) == [str(unfinished)] and "oeb resume" in printed["skipped"][str(unfinished)]
    assert not (unfinished / RESULTS).exists()

    assert main(["grade", str(runs / "deeper" / "failed")]) == 0  # a run folder, not a prefix
    summary = json.loads(capsys.readouterr().out)["scorers"][RESULTS]
    assert (summary["headline"], summary["failed"], summary["scored"]) == (0.0, 12, None)


def test_oeb_version_and_import_oeb_load_neither_the_verbs_nor_the_scorer_nor_ray() -> None:
    probe = (
        "import sys, oeb, oeb.cli\n"
        "try:\n    oeb.cli.main(['--version'])\nexcept SystemExit:\n    pass\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('ray', 'numpy', 'scipy', 'pyarrow')"
        " or m.startswith(('oeb.cli.', 'oeb.scoring', 'oeb.run.predict'))))"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=120)
    assert done.stdout.splitlines() == [f"oeb {oeb.__version__}", "[]"]
