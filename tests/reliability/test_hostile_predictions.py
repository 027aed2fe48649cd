"""Hostile predictions: files that are not JSON, not an object, 50 MB, nested 10,000 deep, full of NaN
and Infinity, or holding numbers of 400 and 5,000 digits.

Grading treats a prediction as one document's answer: one that cannot be read or scored fails that
document (a `failed` line in scores.jsonl saying why, as the reference does for a file that is not
JSON) and grading goes on; everything valid JSON can hold (NaN, Infinity, 400-digit numbers, 50 MB)
is scored as the reference scores it. `oeb score` refuses what it cannot read on one line.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from oeb.dataset import SAMPLE_DATASET, open_dataset
from oeb.run import engine
from oeb.run.grade.task import Item, grade_batch
from oeb.run.plan.config import init_tree, load_config, to_yaml
from reliability.conftest import assert_refused, oeb_cli, snapshot

SCHEMA = {"type": "object", "properties": {"total": {"type": "number"}, "items": {"type": "array"}}}
GOLD = {"total": 1.5, "items": [{"a": "x"}]}


def nested(levels: int) -> bytes:
    return ('{"total": 1.5, "items": ' + "[" * levels + '"x"' + "]" * levels + "}").encode()


def padded(size: int) -> bytes:
    """A valid prediction of `size` bytes, most of them whitespace between its values."""
    head, tail = b'{"total": 1.5,', b'"items": [{"a": "x"}]}'
    return head + b" " * (size - len(head) - len(tail)) + tail


FIFTY_MB = 50 * 1024 * 1024
# What grading makes of each prediction file: scored, or failed with these words in the error.
PREDICTIONS = {
    "not JSON": (b"{'total': 1.5}", "is not JSON: Expecting property name"),
    "empty": (b"", "is empty"),
    "not UTF-8": (b'{"total": "\xff"}', "is not UTF-8 text"),
    "a list": (b"[1, 2]", "is not a JSON object"),
    "a string": (b'"1.5"', "is not a JSON object"),
    "nested 10,000 deep": (nested(10_000), "is not JSON: nested more than about 1000 levels deep"),
    "nested 900 deep": (nested(900), "the prediction cannot be scored: a document or the schema nests too deeply"),
    "a 5,000-digit number": (b'{"total": ' + b"9" * 5_000 + b"}", "is not JSON: holds an integer longer than 4300"),
    "NaN and Infinity": (b'{"total": NaN, "items": [{"a": Infinity}, -Infinity]}', None),
    "a 400-digit number": (b'{"total": ' + b"9" * 400 + b"}", None),
    "a 400-digit float": (b'{"total": 1' + b"0" * 400 + b".5}", None),
    "50 MB": (padded(FIFTY_MB), None),
}


@pytest.fixture
def dataset(five_rows: Path):
    for gold in (five_rows / "gold").iterdir():
        gold.write_text(json.dumps(GOLD))
    return open_dataset(str(five_rows))


@pytest.mark.parametrize(("content", "error"), PREDICTIONS.values(), ids=PREDICTIONS.keys())
def test_grading_fails_only_the_document_whose_prediction_is_hostile(
    dataset, tmp_path: Path, content: bytes, error: str | None
) -> None:
    hostile, fine = dataset.rows[:2]
    (tmp_path / "predictions").mkdir()
    (tmp_path / "predictions" / f"{hostile.doc_id}.json").write_bytes(content)
    (tmp_path / "predictions" / f"{fine.doc_id}.json").write_text(json.dumps(GOLD))
    items = [Item(row, 1, has_details=False) for row in (hostile, fine)]
    first, second = (result["line"] for result in grade_batch(dataset, str(tmp_path), items, details=True))
    assert second["status"] == "scored" and second["accuracy"] == 1.0
    if error is None:
        assert first["status"] == "scored", first
    else:
        assert first["status"] == "failed" and error in first["error"], first
        assert "\n" not in first["error"]


@pytest.mark.parametrize(
    ("content", "says"),
    [
        (b"{'total': 1.5}", ("--pred", "not valid JSON", "fix the file")),
        (b"[1, 2]", ("--pred", "holds JSON list", "it must hold a JSON object")),
        (b"\xff\xfe\x00", ("--pred", "not UTF-8 text", "save the file as UTF-8 JSON")),
        (nested(10_000), ("--pred", "nested more than about 1000 levels deep")),
        (nested(900), ("nests too deeply to score", "flatten the structure")),
        (b'{"total": ' + b"9" * 5_000 + b"}", ("--pred", "integer longer than 4300 digits")),
    ],
    ids=["not JSON", "a list", "not UTF-8", "nested 10,000 deep", "nested 900 deep", "a 5,000-digit number"],
)
def test_score_refuses_a_prediction_it_cannot_read_or_score(
    capsys, tmp_path: Path, content: bytes, says: tuple[str, ...]
) -> None:
    (tmp_path / "pred.json").write_bytes(content)
    (tmp_path / "gold.json").write_text(json.dumps(GOLD))
    (tmp_path / "schema.json").write_text(json.dumps(SCHEMA))
    files = ("--pred", "pred.json", "--gold", "gold.json", "--schema", "schema.json")
    outcome = oeb_cli(capsys, "score", *(str(tmp_path / part) if part.endswith(".json") else part for part in files))
    assert_refused(outcome, *says)
    assert outcome.out == ""


@pytest.mark.parametrize(
    ("content", "accuracy"),
    [
        (b'{"total": NaN, "items": [{"a": "x"}]}', 0.5),
        (b'{"total": Infinity, "items": [{"a": "x"}]}', 0.5),
        (b'{"total": ' + b"9" * 400 + b', "items": [{"a": "x"}]}', 0.5),
        (padded(FIFTY_MB), 1.0),
    ],
    ids=["NaN", "Infinity", "a 400-digit number", "50 MB"],
)
def test_score_scores_whatever_json_can_hold(capsys, tmp_path: Path, content: bytes, accuracy: float) -> None:
    for name, data in (("pred", content), ("gold", json.dumps(GOLD).encode()), ("schema", json.dumps(SCHEMA).encode())):
        (tmp_path / f"{name}.json").write_bytes(data)
    outcome = oeb_cli(capsys, "score", *(f"--{n}={tmp_path / n}.json" for n in ("pred", "gold", "schema")))
    assert outcome.code == 0 and json.loads(outcome.out)["accuracy"] == accuracy


@pytest.mark.ray
def test_oeb_grade_scores_a_run_with_hostile_predictions_and_keeps_every_saved_file(
    capsys, ray_cluster, tmp_path: Path
) -> None:
    config = tmp_path / "mock.yaml"
    config.write_text(to_yaml(init_tree("mock", SAMPLE_DATASET)))
    plan = engine.plan_run(load_config(str(config)), str(tmp_path / "runs"))
    plan.folder.write_config(plan.config.plain())
    plan.folder.write_settings(plan.settings)
    folder = Path(plan.folder.url)
    (folder / "records").mkdir()
    (folder / "predictions").mkdir()
    dataset = open_dataset(SAMPLE_DATASET)
    kinds = list(PREDICTIONS.items())
    for row, (_, (content, _)) in zip(dataset.rows, kinds, strict=True):
        record = {"id": row.doc_id, "output": {}, "error": None, "cost": {"usd": None, "credits": None}}
        (folder / "records" / f"{row.doc_id}.json").write_text(json.dumps(record))
        (folder / "predictions" / f"{row.doc_id}.json").write_bytes(content)
    saved = snapshot(folder)
    outcome = oeb_cli(capsys, "grade", str(folder))
    assert outcome.code == 0, outcome.err
    assert "Traceback" not in outcome.err
    lines = [json.loads(line) for line in (folder / "field_matching" / "scores.jsonl").read_text().splitlines()]
    for line, (name, (_, error)) in zip(lines, kinds, strict=True):
        assert line["status"] == ("scored" if error is None else "failed"), (name, line)
        if error is not None:
            assert error in line["error"], (name, line["error"])
    assert {path: data for path, data in snapshot(folder).items() if path in saved} == saved
