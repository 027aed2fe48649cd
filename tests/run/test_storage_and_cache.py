"""A run folder on S3 (moto), graded again by `oeb grade`; and the grading cache, which re-scores a
document only when its prediction (or gold, schema, scorer) changed."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest

from oeb import storage
from oeb.cli import main
from oeb.run import engine
from run.conftest import mock_config

pytestmark = pytest.mark.ray


def test_a_run_folder_on_s3_is_written_and_graded_again(ray_cluster, s3_env, capsys) -> None:
    out = f"s3://oeb-tests/runs-{uuid.uuid4().hex[:8]}"
    config = mock_config({"rows.limit": 4, "system.mock.misread": 0.2})
    result = engine.execute(engine.plan_run(config, out))
    folder = f"{out}/{result.report['run']}"
    files = storage.list_files(folder)
    ids = [line["id"] for line in storage.read_jsonl(f"{folder}/field_matching/scores.jsonl")]
    assert len(ids) == 4
    for doc_id in ids:
        for path in (f"records/{doc_id}.json", f"predictions/{doc_id}.json", f"field_matching/cache/{doc_id}.json"):
            assert path in files
    index = {"config.yaml", "settings.json", "field_matching/summary.json", "field_matching/verdicts.parquet"}
    assert index <= set(files)

    assert main(["grade", folder]) == 0
    out, err = capsys.readouterr()
    regraded = json.loads(out)
    for report in (regraded, result.report):
        del report["scorers"]["field_matching"]["provenance"]["graded_at"]
    assert regraded == result.report
    assert "leaderboard · field_matching" in err and "mock" in err


def _cache_times(folder: Path) -> dict[str, int]:
    return {path.name: path.stat().st_mtime_ns for path in (folder / "field_matching" / "cache").iterdir()}


def test_only_a_changed_document_is_scored_again(ray_cluster, tmp_path) -> None:
    result = engine.execute(engine.plan_run(mock_config({"system.mock.misread": 0.1}), str(tmp_path)))
    folder = tmp_path / result.report["run"]
    first = _cache_times(folder)

    engine.grade_folder(str(folder))
    assert _cache_times(folder) == first  # nothing changed, nothing re-scored

    changed = "short__invoice_4417"
    prediction = folder / "predictions" / f"{changed}.json"
    answer = json.loads(prediction.read_text())
    answer["currency"] = "nonsense"
    prediction.write_text(json.dumps(answer))
    graded = engine.grade_folder(str(folder))
    after = _cache_times(folder)
    assert [name for name in after if after[name] != first[name]] == [f"{changed}.json"]
    line = next(x for x in map(json.loads, (folder / "field_matching" / "scores.jsonl").open()) if x["id"] == changed)
    assert line["misread"] >= 1 and graded.report["scorers"]["field_matching"]["rows"] == 12
