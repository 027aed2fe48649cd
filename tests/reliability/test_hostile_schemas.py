"""Hostile JSON Schemas: recursive, dangling, external or malformed `$ref`s, and schemas nested too deeply.

`oeb score` refuses each on one line naming the reference (or the nesting) and the fix. In a dataset,
the same schema is refused by `oeb check` and by the plan of `oeb run`, before any call: a run whose
answers could never be graded is not started. Should one reach grading anyway, grading stops naming
the row and writes nothing (the dataset is at fault, not the document's answer).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fixtures.datasets import IDS, Columns

from oeb import _manifest
from oeb.dataset import open_dataset
from oeb.run.grade.task import Item, grade_batch
from reliability.conftest import assert_refused, oeb_cli


def deep_schema(levels: int) -> dict:
    """A schema nesting `levels` objects: twice as many JSON levels (`properties`, then the name)."""
    schema: dict = {"type": "string"}
    for _ in range(levels):
        schema = {"type": "object", "properties": {"a": schema}}
    return schema


def with_property(node: dict, **defs: dict) -> dict:
    return {"type": "object", "properties": {"a": node}, **({"$defs": defs} if defs else {})}


RECURSIVE = {"type": "object", "properties": {"next": {"$ref": "#/$defs/Node"}}}
UNRESOLVABLE = "cannot be resolved: only local references of the form '#/$defs/Name'"
SCHEMAS = {
    "recursive $ref": (
        with_property({"$ref": "#/$defs/Node"}, Node=RECURSIVE),
        ("the schema is recursive ($ref #/$defs/Node -> #/$defs/Node)", "flatten the recursion"),
    ),
    "$ref to itself": (with_property({"$ref": "#/properties/a"}), ("recursive", "#/properties/a")),
    "dangling $ref": (with_property({"$ref": "#/$defs/Missing"}), ("'#/$defs/Missing'", UNRESOLVABLE)),
    "external $ref": (with_property({"$ref": "https://example.com/s.json"}), ("'https://example.com/s.json'",)),
    "$ref to the root": (with_property({"$ref": "#"}), ("$ref '#' cannot be resolved",)),
    "$ref not a string": (with_property({"$ref": 5}), ("$ref 5 cannot be resolved", "inline the referenced schema")),
    "nested 900 deep": (deep_schema(450), ("nests too deeply to score",)),
}


@pytest.mark.parametrize(("schema", "says"), SCHEMAS.values(), ids=SCHEMAS.keys())
def test_score_refuses_the_schema_naming_the_reference(
    capsys, tmp_path: Path, schema: dict, says: tuple[str, ...]
) -> None:
    for name, value in (("pred", {"a": "x"}), ("gold", {"a": "x"}), ("schema", schema)):
        (tmp_path / f"{name}.json").write_text(json.dumps(value))
    outcome = oeb_cli(capsys, "score", *(f"--{n}={tmp_path / n}.json" for n in ("pred", "gold", "schema")))
    assert_refused(outcome, *says)


@pytest.mark.parametrize(("schema", "says"), SCHEMAS.values(), ids=SCHEMAS.keys())
def test_check_refuses_the_dataset_naming_the_row(capsys, rewrite, schema: dict, says: tuple[str, ...]) -> None:
    def change(_: Path, columns: Columns) -> None:
        columns["schema"][2] = json.dumps(schema).encode()

    outcome = oeb_cli(capsys, "check", "--dataset", str(rewrite(change)))
    assert_refused(outcome, f"manifest.parquet row 3 ({IDS[2]})", *says)


def test_grading_stops_on_a_schema_the_scorer_refuses_instead_of_failing_the_document(
    monkeypatch, rewrite, tmp_path: Path
) -> None:
    """A dataset that got past the check (as one made before it would): grading names the schema's
    fault, never blaming the answer, and the grade stage turns this into one line that writes nothing."""
    schema, _ = SCHEMAS["recursive $ref"]

    def change(_: Path, columns: Columns) -> None:
        columns["schema"][0] = json.dumps(schema).encode()

    folder = rewrite(change)
    monkeypatch.setattr(_manifest, "resolve_schema", lambda schema: None)  # the check as it was before
    dataset = open_dataset(str(folder))
    row = dataset.rows[0]
    (tmp_path / "predictions").mkdir()
    (tmp_path / "predictions" / f"{row.doc_id}.json").write_text(json.dumps({"a": {"next": None}}))
    [result] = grade_batch(dataset, str(tmp_path), [Item(row, 1, has_details=False)], details=True)
    assert "line" not in result
    assert result["fatal"].startswith("SchemaError: the schema is recursive")
