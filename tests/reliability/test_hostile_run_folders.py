"""Hostile graded run folders given to `oeb report` and `oeb compare`: settings.json, scores.jsonl and
records that are not JSON, not the shape `oeb grade` writes, or nested 10,000 deep.

A folder whose settings or scores cannot be read is refused with one line naming the file and the fix;
a record that cannot be read reports no cost, as an unreadable record counts as none elsewhere. The
folders are never written to.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reliability.conftest import assert_refused, oeb_cli, snapshot

DEEP = "[" * 10_000 + "]" * 10_000
LINE = {"id": "a", "status": "scored", "row": {"suite": "invoices"}, "accuracy": 1.0, "total": 1, "matched": 1}
LINE |= {"misread": 0, "unfound": 0, "fabricated": 0, "invented_item": 0, "invented_field": 0}
SETTINGS = {"run": "r", "system": "mock", "options": {"seed": 0}, "dataset": "/d", "manifest": "manifest.parquet"}


def graded(folder: Path, seed: int) -> Path:
    (folder / "field_matching").mkdir(parents=True)
    (folder / "records").mkdir()
    (folder / "settings.json").write_text(json.dumps(SETTINGS | {"run": folder.name, "options": {"seed": seed}}))
    (folder / "field_matching" / "scores.jsonl").write_text(json.dumps(LINE) + "\n")
    (folder / "records" / "a.json").write_text(json.dumps({"id": "a", "error": None, "cost": {"usd": 0.5}}))
    return folder


@pytest.fixture
def runs(tmp_path: Path) -> tuple[Path, Path]:
    return graded(tmp_path / "one", 0), graded(tmp_path / "two", 1)


BROKEN = {
    "settings.json a list": ("settings.json", b"[]", ("settings.json is not a JSON object", "restore it")),
    "settings.json not JSON": ("settings.json", b"{oops", ("settings.json is not JSON",)),
    "settings.json nested 10,000 deep": ("settings.json", DEEP.encode(), ("settings.json is not JSON", "too deep")),
    "a scores line not an object": ("field_matching/scores.jsonl", b"[1]\n", ("scores.jsonl line 1", "oeb grade")),
    "a scores line without an id": (
        "field_matching/scores.jsonl",
        json.dumps({k: v for k, v in LINE.items() if k != "id"}).encode(),
        ("scores.jsonl line 1 is not an object with an id", "grade the run again"),
    ),
    "a scored line without counts": (
        "field_matching/scores.jsonl",
        json.dumps({"id": "a", "status": "scored", "accuracy": "high"}).encode(),
        ("line 1 of a is scored but lacks its accuracy",),
    ),
    "a scores line nested 10,000 deep": ("field_matching/scores.jsonl", DEEP.encode(), ("line 1 is not JSON",)),
}


@pytest.mark.parametrize(("path", "content", "says"), BROKEN.values(), ids=BROKEN.keys())
def test_report_and_compare_refuse_a_folder_they_cannot_read(
    capsys, runs: tuple[Path, Path], path: str, content: bytes, says: tuple[str, ...]
) -> None:
    one, two = runs
    (one / path).write_bytes(content)
    before = snapshot(one)
    assert_refused(oeb_cli(capsys, "report", str(one), str(two)), str(one), *says)
    assert_refused(oeb_cli(capsys, "compare", str(two), str(one)), str(one), *says)
    assert snapshot(one) == before


@pytest.mark.parametrize(
    "record", [b"{oops", b"[1]", DEEP.encode(), b'{"cost": 5}', b'{"cost": {"usd": "lots"}}', b'{"cost": [0.5]}']
)
def test_a_record_that_cannot_be_read_reports_no_cost(capsys, runs: tuple[Path, Path], record: bytes) -> None:
    one, two = runs
    (one / "records" / "a.json").write_bytes(record)
    outcome = oeb_cli(capsys, "report", str(one), str(two), "--format", "json")
    assert outcome.code == 0, outcome.err
    assert "Traceback" not in outcome.err
    costs = {row["run"]: row["cost"]["usd"] for row in json.loads(outcome.out)["rows"]}
    assert costs["one"] is None and costs["two"]["per_doc"] == 0.5
