"""The offline systems: `mock` answers from the gold with seeded damage and faults; `replay` answers
with saved predictions or a run folder's records. Both run with no key and no network."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest
from fixtures.datasets import publish, upload
from fixtures.fake_hub import FakeHub
from fixtures.services import S3_BUCKET

from oeb import storage
from oeb.systems import Question, get, predict
from systems.conftest import FAST, PDF

GOLD = {
    "invoice": "A-1",
    "total": 2.5,
    "paid": True,
    "note": None,
    "lines": [{"sku": "x1", "qty": 2}, {"sku": "x2", "qty": 1}],
}


@pytest.fixture
def dataset(tmp_path: Path) -> Path:
    """The dataset layout: pdfs/<id>.pdf beside gold/<id>.json."""
    (tmp_path / "pdfs").mkdir()
    (tmp_path / "gold").mkdir()
    for doc_id in ("inv_1", "inv_2"):
        (tmp_path / "pdfs" / f"{doc_id}.pdf").write_bytes(PDF)
        (tmp_path / "gold" / f"{doc_id}.json").write_text(json.dumps(GOLD))
    return tmp_path


def run(dataset: Path, system: str = "mock", doc_id: str = "inv_1", **options: Any) -> dict[str, Any]:
    """Predict with tiny back-offs for `mock`; `replay` keeps its own policy (it never retries)."""
    question = Question(dataset / "pdfs" / f"{doc_id}.pdf", {"type": "object"})
    return predict(get(system, options), question, timeout=5, policy=FAST if system == "mock" else None)


def test_mock_without_damage_answers_the_gold_found_beside_the_documents(dataset: Path) -> None:
    record = run(dataset, usd=0.01)
    assert (record["output"], record["cost"]["usd"], record["error"]) == (GOLD, 0.01, None)
    assert record["raw"]["simulated"] is True


def test_mock_damage_is_reproducible_per_seed_and_document(dataset: Path) -> None:
    damaged = {"misread": 0.5, "unfound": 0.2}
    first, again = run(dataset, seed=3, **damaged), run(dataset, seed=3, **damaged)
    assert first["output"] == again["output"] != GOLD
    assert run(dataset, seed=4, **damaged)["output"] != first["output"]


@pytest.mark.parametrize(
    ("rate", "check"),
    [
        ("misread", lambda out: out["invoice"] != "A-1" and out["paid"] is False and out["total"] != 2.5),
        ("unfound", lambda out: out["invoice"] is None and out["lines"][0] == {"sku": None, "qty": None}),
        ("fabricated", lambda out: out["note"] is not None and out["invoice"] == "A-1"),
        ("invented_item", lambda out: len(out["lines"]) == 3 and out["lines"][2] not in GOLD["lines"]),
        ("invented_field", lambda out: any(k.startswith("invented_") for k in out)),
    ],
)
def test_each_kind_of_damage_shows_at_rate_one(dataset: Path, rate: str, check: Any) -> None:
    assert check(run(dataset, **{rate: 1.0})["output"])


def test_mock_faults_go_through_the_same_retry_rules(dataset: Path) -> None:
    limited = run(dataset, rate_limit=1.0, retry_after=0.0)
    assert (limited["error"]["status"], limited["error"]["transient"], limited["cost"]["attempts"]) == (429, True, 4)
    assert run(dataset, server_error=1.0)["error"]["status"] == 503
    assert run(dataset, malformed=1.0)["error"]["type"] == "Unreadable"
    timeout = predict(get("mock", {"timeout": 1.0}), Question(dataset / "pdfs" / "inv_1.pdf", {}), timeout=0.2)
    assert timeout["error"]["type"] == "SystemTimeout"


def test_a_fault_at_half_rate_clears_on_some_retry(dataset: Path) -> None:
    outcomes = [run(dataset, doc_id=d, seed=s, server_error=0.5) for d in ("inv_1", "inv_2") for s in range(4)]
    assert any(r["error"] is None and r["cost"]["attempts"] > 1 for r in outcomes)


def test_mock_latency_past_the_budget_is_a_timeout(dataset: Path) -> None:
    record = predict(get("mock", {"latency": 1.0}), Question(dataset / "pdfs" / "inv_1.pdf", {}), timeout=0.2)
    assert record["error"]["type"] == "SystemTimeout"


def test_mock_without_gold_fails_the_document_saying_where_it_looked(dataset: Path, tmp_path: Path) -> None:
    record = run(dataset, gold=str(tmp_path / "nowhere"))
    assert record["error"]["type"] == "SystemFailed"
    assert "nowhere" in record["error"]["message"] and "'gold'" in record["error"]["message"]


def test_replay_answers_from_a_folder_of_predictions(dataset: Path) -> None:
    record = run(dataset, "replay", source=str(dataset / "gold"))
    assert record["output"] == GOLD


def test_replay_of_a_run_folder_replays_answers_costs_and_failures(dataset: Path, tmp_path: Path) -> None:
    source = tmp_path / "run"
    (source / "records").mkdir(parents=True)
    success = run(dataset, usd=0.25)
    failure = run(dataset, "mock", doc_id="inv_2", server_error=1.0)
    (source / "records" / "inv_1.json").write_text(json.dumps(success))
    (source / "records" / "inv_2.json").write_text(json.dumps(failure))
    replayed = run(dataset, "replay", source=str(source))
    assert (replayed["output"], replayed["cost"]["usd"], replayed["job_id"]) == (GOLD, 0.25, "mock-inv_1")
    failed = run(dataset, "replay", doc_id="inv_2", source=str(source))
    assert (failed["error"]["type"], failed["error"]["status"], failed["cost"]["attempts"]) == ("SystemFailed", 503, 1)


def test_replay_without_an_answer_fails_the_document(dataset: Path, tmp_path: Path) -> None:
    record = run(dataset, "replay", source=str(tmp_path / "empty"))
    assert "no saved answer for inv_1" in record["error"]["message"]


def test_mock_answers_from_the_gold_the_run_hands_it_not_from_a_file(tmp_path: Path) -> None:
    pdf = tmp_path / "cache" / "a1b2" / "inv_9.pdf"  # as a remote dataset's cached document: no gold beside it
    pdf.parent.mkdir(parents=True)
    pdf.write_bytes(PDF)
    record = predict(get("mock"), Question(pdf, {"type": "object"}, GOLD), timeout=5, policy=FAST)
    assert (record["output"], record["error"]) == (GOLD, None)
    assert record["sent"] == {"type": "object"}


def _mock_run(dataset: str, out: str, tmp_path: Path) -> list[dict[str, Any]]:
    """`oeb run` of mock (as `oeb init mock` writes it) on `dataset`, a small run answered in this
    process; the records."""
    from oeb.cli import main
    from oeb.run.plan.config import init_tree, to_yaml

    tree = init_tree("mock", dataset)
    tree["ray"] = {"address": None, "actors": 1, "rate_limit": {"requests_per_second": None, "max_in_flight": 0}}
    config = tmp_path / "mock.yaml"
    config.write_text(to_yaml(tree))
    assert main(["run", "--config", str(config), "-y", "--out", out]) == 0
    files = storage.list_files(out)
    return [storage.read_json(storage.join(out, path)) for path in sorted(files) if "/records/" in path]


def test_mock_runs_on_a_dataset_in_s3(s3_env: dict[str, str], five_rows: Path, tmp_path: Path) -> None:
    url = upload(five_rows, f"s3://{S3_BUCKET}/mock-ds-{uuid.uuid4().hex}")
    records = _mock_run(url, f"s3://{S3_BUCKET}/mock-runs-{uuid.uuid4().hex}", tmp_path)
    assert len(records) == 5
    assert all(r["error"] is None and r["output"]["total"] == 1.5 for r in records), records


def test_mock_runs_on_a_dataset_on_the_hub(fake_hub: FakeHub, five_rows: Path, tmp_path: Path) -> None:
    url = publish(fake_hub, five_rows, f"org/mock-ds-{uuid.uuid4().hex[:8]}")
    records = _mock_run(url, str(tmp_path / "runs"), tmp_path)
    assert len(records) == 5
    assert all(r["error"] is None and r["output"]["total"] == 1.5 for r in records), records


def test_mock_misreads_vary_with_the_seed(tmp_path: Path) -> None:
    """Two differently seeded mocks rarely agree on a wrong value (else `oeb audit` would take their
    agreement for a finding about the gold)."""
    (tmp_path / "pdfs").mkdir()
    (tmp_path / "gold").mkdir()
    gold = {"rows": [{"code": f"A-{n:03d}", "qty": n, "price": n * 1.25, "unit": "EA"} for n in range(1, 101)]}
    (tmp_path / "pdfs" / "big.pdf").write_bytes(PDF)
    (tmp_path / "gold" / "big.json").write_text(json.dumps(gold))
    first, second = (run(tmp_path, doc_id="big", seed=seed, misread=1.0)["output"]["rows"] for seed in (1, 2))
    pairs = [(a[key], b[key]) for a, b in zip(first, second, strict=True) for key in a]
    same = sum(a == b for a, b in pairs)
    assert same <= 0.05 * len(pairs), f"{same} of {len(pairs)} misreads agree across seeds"


def test_mock_fabricates_the_schema_fields_the_gold_leaves_out(dataset: Path) -> None:
    schema = {
        "type": "object",
        "properties": {
            "invoice": {"type": "string"},
            "po": {"type": "string"},
            "due": {"type": "string", "format": "date"},
            "lines": {"type": "array", "items": {"type": "object", "properties": {"lot": {"type": "integer"}}}},
        },
    }
    question = Question(dataset / "pdfs" / "inv_1.pdf", schema)
    out = predict(get("mock", {"fabricated": 1.0}), question, timeout=5, policy=FAST)["output"]
    assert out["invoice"] == "A-1" and isinstance(out["po"], str) and out["po"]
    assert len(out["due"]) == 10 and out["due"][4] == "-"
    assert all(isinstance(line["lot"], int) for line in out["lines"])
    assert out["note"] is not None  # a gold null too
