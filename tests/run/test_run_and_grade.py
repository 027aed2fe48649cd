"""A whole run on a real local Ray: records and predictions saved, every selected document graded,
and the summary's numbers recomputed independently from the files with `oeb.score`."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pyarrow.parquet as pq
import pytest

import oeb
from oeb.dataset import SAMPLE_DATASET, open_dataset
from oeb.run import engine
from oeb.run.grade.results import verdict_json
from oeb.run.grade.task import scorer_digest
from run.conftest import mock_config

pytestmark = pytest.mark.ray
SCORER = scorer_digest()

DAMAGED = {
    "system.mock.misread": 0.1,
    "system.mock.unfound": 0.05,
    "system.mock.invented_item": 0.2,
    "system.mock.malformed": 0.25,
    "system.mock.usd": 0.01,
}


@pytest.fixture(scope="module")
def finished(ray_cluster, tmp_path_factory) -> tuple[engine.Plan, engine.RunResult]:
    plan = engine.plan_run(mock_config(DAMAGED), str(tmp_path_factory.mktemp("runs")))
    return plan, engine.execute(plan)


def _lines(folder: Path) -> list[dict]:
    return [json.loads(line) for line in (folder / "field_matching" / "scores.jsonl").read_text().splitlines()]


def test_every_document_has_a_record_and_each_success_its_prediction(finished) -> None:
    plan, _ = finished
    folder = Path(plan.folder.url)
    ids = [row.doc_id for row in plan.rows]
    records = {doc_id: json.loads((folder / "records" / f"{doc_id}.json").read_text()) for doc_id in ids}
    successes = {doc_id for doc_id, record in records.items() if record["error"] is None}
    assert {p.stem for p in (folder / "predictions").glob("*.json")} == successes
    assert 0 < len(successes) < len(ids)  # malformed answers fail some documents
    for doc_id in successes:
        assert json.loads((folder / "predictions" / f"{doc_id}.json").read_text()) == records[doc_id]["output"]
    settings = json.loads((folder / "settings.json").read_text())
    assert list(settings) == [
        "run", "system", "options", "dataset", "manifest", "task", "rows", "timeout_s", "started", "launch",
    ]  # fmt: skip
    assert (settings["run"], settings["dataset"], settings["rows"]) == (folder.name, str(Path(SAMPLE_DATASET)), {})


def test_scores_are_the_scorers_and_the_summary_averages_them(finished) -> None:
    plan, result = finished
    folder = Path(plan.folder.url)
    dataset = open_dataset(SAMPLE_DATASET)
    lines = _lines(folder)
    assert [line["id"] for line in lines] == [row.doc_id for row in dataset.rows]
    accuracies, failed = [], 0
    for row, line in zip(dataset.rows, lines, strict=True):
        prediction = folder / "predictions" / f"{row.doc_id}.json"
        if line["status"] == "failed":
            failed += 1
            assert not prediction.exists() and line["error"].startswith("Unreadable: ")
            continue
        expected = oeb.score(json.loads(prediction.read_text()), dataset.gold(row), dict(row.schema), verdicts=True)
        details = [json.loads(x) for x in (folder / "field_matching" / "details" / f"{row.doc_id}.jsonl").open()]
        assert details == [verdict_json(v) for v in expected.pop("verdicts")]
        assert line == {"id": row.doc_id, "status": "scored", "row": {"suite": row.suite}, **expected, "scorer": SCORER}
        accuracies.append(expected["accuracy"])
    summary = json.loads((folder / "field_matching" / "summary.json").read_text())
    assert summary == result.report["scorers"]["field_matching"]
    assert (summary["rows"], summary["failed"]) == (len(lines), failed)
    assert summary["coverage"] == pytest.approx(len(accuracies) / len(lines))
    assert summary["scored"]["accuracy"] == pytest.approx(sum(accuracies) / len(accuracies))
    assert summary["headline"] == pytest.approx(sum(accuracies) / len(lines))
    assert result.report["cost"]["usd"] == pytest.approx(0.01 * len(lines))


def test_the_parquet_files_hold_the_same_lines_and_verdicts(finished) -> None:
    plan, _ = finished
    results = Path(plan.folder.url) / "field_matching"
    lines = _lines(Path(plan.folder.url))
    scores = pq.read_table(results / "scores.parquet").to_pylist()
    assert [(s["id"], s["status"], s["accuracy"]) for s in scores] == [
        (line["id"], line["status"], line.get("accuracy")) for line in lines
    ]
    verdicts = Counter(pq.read_table(results / "verdicts.parquet").column("result").to_pylist())
    scored = [line for line in lines if line["status"] == "scored"]
    assert verdicts == Counter({kind: sum(line[kind] for line in scored) for kind in oeb.RESULTS})
