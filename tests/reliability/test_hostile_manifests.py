"""Hostile datasets: manifests and gold files that are broken or built to escape the dataset.

Each is refused by `oeb check` and by `oeb run` (while planning, before any call) with one line that
names the manifest row or file and the fix, a non-zero exit and no traceback; a refused run writes
nothing and leaves the run folders already under `--out` byte for byte as they were.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from fixtures.datasets import IDS, Columns

from oeb.run.plan.config import init_tree, to_yaml
from reliability.conftest import assert_refused, oeb_cli, snapshot

FIRST = IDS[0]
DEEP = "[" * 10_000 + "]" * 10_000
LONG_INT = '{"total": ' + "9" * 5_000 + "}"
Change = Callable[[Path, Columns], None]


def cell(column: str, value: object) -> Change:
    def change(_: Path, columns: Columns) -> None:
        columns[column][0] = value

    return change


def doc_id(value: str) -> Change:
    """The first row's id, with its gold path following it (so only the id is wrong)."""

    def change(_: Path, columns: Columns) -> None:
        columns["doc_id"][0] = value
        columns["gt_path"][0] = f"gold/{value}.json"

    return change


def drop(column: str) -> Change:
    def change(_: Path, columns: Columns) -> None:
        del columns[column]

    return change


def gold(content: bytes) -> Change:
    def change(folder: Path, _: Columns) -> None:
        (folder / "gold" / f"{FIRST}.json").write_bytes(content)

    return change


def same_id_in_other_case(_: Path, columns: Columns) -> None:
    columns["doc_id"][3] = FIRST.upper()
    columns["gt_path"][3] = f"gold/{FIRST.upper()}.json"


ROW = ("manifest.parquet row 1",)
FIX_ID = ("not a file name", "use an id like")
FIX_DOC = ("doc_path", "not a relative path to a file inside the dataset", "use e.g. pdfs/")
FIX_GOLD = ("gt_path", "use e.g. gold/")
GOLD = (f"the gold of {FIRST}", f"gold/{FIRST}.json", "fix the file")
SCHEMA = (FIRST, "schema", "the schema column holds the JSON Schema as text")

HOSTILE = {
    "column missing": (drop("gt_path"), ("has no column 'gt_path'", "needs the columns doc_id, doc_path, gt_path")),
    "ids equal ignoring case": (
        same_id_in_other_case,
        (FIRST, FIRST.upper(), "make every doc_id unique ignoring case"),
    ),
    "id with a slash": (doc_id("a/b"), (*ROW, "'a/b'", *FIX_ID)),
    "id '..'": (doc_id(".."), (*ROW, "'..'", *FIX_ID)),
    "id with a NUL": (doc_id("a\x00b"), (*ROW, r"'a\x00b'", *FIX_ID, "no control characters")),
    "id with a newline": (doc_id("a\nb"), (*ROW, r"'a\nb'", *FIX_ID, "no control characters")),
    "doc_path absolute": (cell("doc_path", "/etc/passwd.pdf"), (*ROW, FIRST, "it is absolute", *FIX_DOC)),
    "doc_path escaping": (cell("doc_path", "pdfs/../../x.pdf"), (*ROW, "contains '..'", *FIX_DOC)),
    "doc_path with a newline": (cell("doc_path", "pdfs/a\nb.pdf"), (*ROW, "control character", *FIX_DOC)),
    "gt_path absolute": (cell("gt_path", f"/tmp/{FIRST}.json"), (*ROW, "it is absolute", *FIX_GOLD)),
    "gt_path escaping": (cell("gt_path", f"../../{FIRST}.json"), (*ROW, "contains '..'", *FIX_GOLD)),
    "schema not JSON": (cell("schema", b"{oops"), (*ROW, *SCHEMA, "not JSON")),
    "schema a list": (cell("schema", b"[1]"), (*ROW, FIRST, "b'[1]'", "must be the JSON Schema of the extraction")),
    "schema null": (cell("schema", b"null"), (*ROW, "b'null'", "not a non-empty JSON object")),
    "schema a number": (cell("schema", b"3"), (*ROW, "b'3'", "not a non-empty JSON object")),
    "schema nested 10,000 deep": (cell("schema", DEEP.encode()), (*ROW, *SCHEMA, "too deep to read")),
    "schema with a 5,000-digit number": (cell("schema", LONG_INT.encode()), (*ROW, *SCHEMA, "4300 digits")),
    "gold not JSON": (gold(b"{oops"), (*GOLD, "not JSON")),
    "gold a list": (gold(b"[1, 2]"), (*GOLD, "JSON list")),
    "gold not UTF-8": (gold(b"\xff\xfe\x00{"), (*GOLD, "not UTF-8")),
    "gold nested 10,000 deep": (gold(DEEP.encode()), (*GOLD, "too deep to read")),
    "gold with a 5,000-digit number": (gold(LONG_INT.encode()), (*GOLD, "4300 digits")),
}


@pytest.fixture
def out(tmp_path: Path) -> Path:
    """A runs folder already holding a finished run's files, which no refusal may touch."""
    run = tmp_path / "runs" / "mock-20261129-200002-ead8"
    (run / "records").mkdir(parents=True)
    (run / "predictions").mkdir()
    (run / "records" / f"{FIRST}.json").write_text(json.dumps({"id": FIRST, "output": {"total": 1.5}}))
    (run / "predictions" / f"{FIRST}.json").write_text(json.dumps({"total": 1.5}))
    return tmp_path / "runs"


@pytest.mark.parametrize(("change", "says"), HOSTILE.values(), ids=HOSTILE.keys())
def test_check_refuses_on_one_line(capsys, rewrite, change: Change, says: tuple[str, ...]) -> None:
    assert_refused(oeb_cli(capsys, "check", "--dataset", str(rewrite(change))), *says)


@pytest.mark.parametrize(("change", "says"), HOSTILE.values(), ids=HOSTILE.keys())
def test_a_run_refuses_before_any_call_and_keeps_saved_runs(
    capsys, rewrite, out: Path, tmp_path: Path, change: Change, says: tuple[str, ...]
) -> None:
    config = tmp_path / "mock.yaml"
    config.write_text(to_yaml(init_tree("mock", str(rewrite(change)))))
    before = snapshot(out)
    assert_refused(oeb_cli(capsys, "run", "--config", str(config), "--out", str(out), "-y"), *says)
    assert snapshot(out) == before


@pytest.mark.parametrize(
    ("manifest", "says"),
    [
        ("../manifest.parquet", ("manifest '../manifest.parquet'", "contains '..'", "give it relative to the dataset")),
        ("/etc/passwd", ("manifest '/etc/passwd'", "it is absolute", "give it relative to the dataset")),
        (f"gold/{FIRST}.json", (f"gold/{FIRST}.json is not a parquet file", "a manifest is a parquet file")),
    ],
)
def test_a_manifest_outside_the_dataset_or_not_parquet_is_refused(
    capsys, five_rows: Path, manifest: str, says: tuple[str, ...]
) -> None:
    assert_refused(oeb_cli(capsys, "check", "--dataset", str(five_rows), "--manifest", manifest), *says)


@pytest.mark.parametrize("content", [b"", b"PAR1", b"\x00" * 64, b"PAR1" + b"\xff" * 100 + b"PAR1"])
def test_a_corrupt_manifest_file_is_refused(capsys, five_rows: Path, content: bytes) -> None:
    (five_rows / "manifest.parquet").write_bytes(content)
    assert_refused(oeb_cli(capsys, "check", "--dataset", str(five_rows)), "manifest.parquet", "not a parquet file")
