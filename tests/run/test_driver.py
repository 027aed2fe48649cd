"""The driver without Ray (a small job runs in this process): a budget that stops the run and a
resume with a larger one, reuse of an earlier run's answers, a 429 slowing the system's pace, and
the end of a run on the command line. Counted on the vendor's side: the mock's call log."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from reliability.conftest import vendor_dataset

from oeb import storage
from oeb.cli import main
from oeb.dataset import SAMPLE_DATASET, open_dataset
from oeb.run import engine
from oeb.run.cluster.progress import RunProgress
from oeb.run.plan.config import init_tree, to_yaml
from oeb.run.predict.stage import predict_jobs
from oeb.run.predict.system_run import Job
from oeb.systems import RetryPolicy
from oeb.systems.mock import Mock

ROWS = len(open_dataset(SAMPLE_DATASET).rows)


@pytest.fixture(autouse=True)
def _no_ray(monkeypatch: pytest.MonkeyPatch) -> None:
    """These runs are small: they run in this process unless a Ray session is open already."""
    monkeypatch.delenv("OEB_RAY_ADDRESS", raising=False)


def _config(folder: Path, calls: Path, per_second: float | None = None, **options: Any) -> Path:
    tree = init_tree("mock", SAMPLE_DATASET)
    tree["system"]["mock"] |= {"calls_log": str(calls), **options}
    tree["workers"] = 1
    rate = {"requests_per_second": per_second, "max_in_flight": 0}
    tree["ray"] = {"address": None, "actors": 1, "rate_limit": rate}
    path = folder / "mock.yaml"
    path.write_text(to_yaml(tree))
    return path


def _calls(calls: Path) -> list[str]:
    return [line.split("\t")[0] for line in calls.read_text().splitlines()] if calls.exists() else []


def _folder(out: Path) -> Path:
    [folder] = [path for path in out.iterdir() if not path.name.startswith(".")]
    return folder


def test_a_budget_stops_starting_documents_and_a_larger_one_resumes(tmp_path: Path, capsys) -> None:
    calls, out = tmp_path / "calls.log", tmp_path / "runs"
    config = _config(tmp_path, calls, usd=0.01)
    code = main(["run", "--config", str(config), "--set", "budget.usd=0.035", "--out", str(out), "-y"])
    err = capsys.readouterr().err
    assert code == 4, err
    folder = _folder(out)
    assert len(_calls(calls)) == 3  # 3 x $0.01 fit in $0.035; a fourth could pass it
    events = [line.split("] ", 1)[1] for line in err.splitlines() if line.startswith("[")]
    said = next(n for n, line in enumerate(events) if "budget reached" in line)
    assert [line.split()[1] for line in events[:said]] == ["1/12", "2/12", "3/12"]  # after the saves it follows
    last = err.rstrip().splitlines()[-1]
    assert last.startswith("oeb run: the budget was reached: spent $0.03 of the $0.04 budget")
    assert f"{ROWS - 3} documents left" in last and f"oeb resume {folder} --set budget.usd=" in last
    assert not (folder / "field_matching" / "summary.json").exists()  # not graded: it waits for the resume

    code = main(["resume", str(folder), "--set", "budget.usd=1", "-y"])
    assert code == 0, capsys.readouterr().err
    assert sorted(_calls(calls)) == sorted(row.doc_id for row in open_dataset(SAMPLE_DATASET).rows)  # each once
    summary = json.loads((folder / "field_matching" / "summary.json").read_text())
    assert summary["rows"] == ROWS


def test_reused_answers_are_saved_from_the_earlier_run_and_never_asked(tmp_path: Path, capsys) -> None:
    calls = tmp_path / "calls.log"
    config = _config(tmp_path, calls, misread=0.2)
    first_out = tmp_path / "first"
    assert main(["run", "--config", str(config), "--set", "rows.limit=4", "--out", str(first_out), "-y"]) == 0
    earlier = _folder(first_out)
    asked = len(_calls(calls))

    plans = engine.plan_runs([str(config)], str(tmp_path / "second"), [], reuse=[str(first_out)])
    [plan] = plans.plans
    assert len(plan.reused) == 4 and any("4 answers will be reused" in line for line in plan.lines())
    outcome = engine.execute_all(plans.plans)
    assert outcome.exit_code == 0
    assert len(_calls(calls)) - asked == ROWS - 4  # only the documents the first run did not answer
    folder = Path(plan.folder.url)
    for doc_id in plan.reused:
        record = json.loads((folder / "records" / f"{doc_id}.json").read_text())
        before = json.loads((earlier / "records" / f"{doc_id}.json").read_text())
        assert record == before | {"reused_from": str(earlier)}
    capsys.readouterr()

    other = engine.plan_runs([str(config)], str(tmp_path / "third"), ["system.mock.seed=3"], reuse=[str(first_out)])
    assert other.plans[0].reused == {}  # another option: asked again


def test_a_reuse_that_is_not_a_run_is_refused_before_anything(tmp_path: Path, capsys) -> None:
    config = _config(tmp_path, tmp_path / "calls.log")
    out = tmp_path / "runs"
    code = main(["run", "--config", str(config), "--reuse", str(tmp_path / "nothing"), "--out", str(out), "-y"])
    err = capsys.readouterr().err
    assert code == 1 and err.count("\n") == 1 and "--reuse" in err
    assert not out.exists() and not (tmp_path / "calls.log").exists()


def test_a_429_slows_the_system_and_the_progress_shows_the_pace(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(Mock, "retry", RetryPolicy(backoff=0.2, jitter=0.0))  # not 20, 60, 120 s
    config = _config(tmp_path, tmp_path / "calls.log", 20.0, rate_limit=0.3, retry_after=0.05)
    [plan] = engine.plan_runs([str(config)], str(tmp_path / "runs")).plans
    plan.folder.launch(plan.config.plain(), plan.settings)
    stream = io.StringIO()
    progress = RunProgress([plan.label], {plan.label: len(plan.rows)}, stream, metrics=False)
    with progress:
        [predicted] = predict_jobs([Job(plan.label, plan.config, plan.dataset, plan.rows, plan.folder)], progress)
    assert predicted.stopped is None and predicted.stats["throttled"] > 0
    assert len(list((Path(plan.folder.url) / "records").glob("*.json"))) == ROWS
    shown = progress.systems[plan.label]
    assert shown.throttled == predicted.stats["throttled"] and shown.limit == 20.0
    assert "pace" in stream.getvalue()


def test_a_resume_of_100_records_lists_the_folder_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """One listing however many records (the scale benchmark resumes 620); a hundred already tell it
    from a listing per record, and each record set up costs a durable save (an fsync)."""
    dataset = tmp_path / "big"
    ids = vendor_dataset(dataset, 100)
    config = _config(tmp_path, tmp_path / "calls.log")
    [plan] = engine.plan_runs([str(config)], str(tmp_path / "runs"), [f"dataset={dataset}"]).plans
    plan.folder.launch(plan.config.plain(), plan.settings)
    record = {"error": None, "output": {"total": 1}, "cost": {"usd": None, "credits": None}}
    for doc_id in ids:
        plan.folder.save(doc_id, record)
    listed: list[str] = []
    list_files = storage.list_files

    def counted(url: str) -> dict[str, int]:
        listed.append(url)
        return list_files(url)

    monkeypatch.setattr(storage, "list_files", counted)
    resumed = engine.plan_resume(plan.folder.url)
    assert resumed.to_ask == () and len(resumed.rows) == 100
    assert [url for url in listed if url.startswith(plan.folder.url)] == [plan.folder.url]


def test_documents_waiting_out_a_back_off_reach_the_progress(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A 5xx's back-off is shown as documents waiting to retry (not as nothing in flight)."""
    monkeypatch.setattr(Mock, "retry", RetryPolicy(backoff=0.2, multiplier=1.0, jitter=0.0))  # not 20, 60, 120 s
    config = _config(tmp_path, tmp_path / "calls.log", server_error=0.5)
    [plan] = engine.plan_runs([str(config)], str(tmp_path / "runs"), ["rows.limit=6"]).plans
    plan.folder.launch(plan.config.plain(), plan.settings)
    seen: list[tuple[int, float | None]] = []

    class Watched(RunProgress):
        def retrying(self, system: str, waiting: int, first_in: float | None, last_in: float | None) -> None:
            seen.append((waiting, first_in))
            super().retrying(system, waiting, first_in, last_in)

    progress = Watched([plan.label], {plan.label: len(plan.rows)}, io.StringIO(), metrics=False)
    with progress:
        [predicted] = predict_jobs([Job(plan.label, plan.config, plan.dataset, plan.rows, plan.folder)], progress)
    assert predicted.stopped is None
    assert any(waiting > 0 and first_in is not None and 0 < first_in <= 0.2 for waiting, first_in in seen), seen
    assert seen[-1] == (0, None) and progress.systems[plan.label].retrying == 0
