"""The dataset checks of docs/datasets.md: the catalogue of 29 broken (or oddly valid) variants of a
5-row dataset, and the order in which the checks run. Each refusal is one line naming what is wrong
and how to fix it."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from fixtures.datasets import IDS, Columns

from oeb.dataset import check_dataset
from oeb.errors import DatasetError, DocumentMissingError, GoldError, ManifestError

FIRST = IDS[0]


@dataclass(frozen=True)
class Variant:
    name: str
    change: Callable[[Path, Columns], None]
    refused: type[DatasetError] | None = None
    says: tuple[str, ...] = ()
    manifest: str = "manifest.parquet"


def cell(column: str, value: object, row: int = 0) -> Callable[[Path, Columns], None]:
    def change(_: Path, columns: Columns) -> None:
        columns[column][row] = value

    return change


def whole_column(column: str, values: list[object] | None) -> Callable[[Path, Columns], None]:
    def change(_: Path, columns: Columns) -> None:
        if values is None:
            del columns[column]
        else:
            columns[column] = values

    return change


def gold_file(content: str | None) -> Callable[[Path, Columns], None]:
    def change(folder: Path, _: Columns) -> None:
        path = folder / "gold" / f"{FIRST}.json"
        if content is None:
            path.unlink()
        else:
            path.write_text(content)

    return change


def no_rows(_: Path, columns: Columns) -> None:
    for values in columns.values():
        values.clear()


def duplicate_in_case(_: Path, columns: Columns) -> None:
    columns["doc_id"][1] = FIRST.upper()
    columns["gt_path"][1] = f"gold/{FIRST.upper()}.json"


def gold_elsewhere(folder: Path, columns: Columns) -> None:
    (folder / "truth" / "deep").mkdir(parents=True)
    (folder / "gold" / f"{FIRST}.json").rename(folder / "truth" / "deep" / f"{FIRST}.json")
    columns["gt_path"][0] = f"truth/deep/{FIRST}.json"


def document_in_root(folder: Path, columns: Columns) -> None:
    (folder / "pdfs" / f"{FIRST}.pdf").rename(folder / f"{FIRST}.pdf")
    columns["doc_path"][0] = f"{FIRST}.pdf"


def unchanged(_: Path, __: Columns) -> None:
    pass


SCHEMA_TEXT = json.dumps({"type": "object", "properties": {"total": {"type": "number"}}})
ROW_PATH = ("row 1", f"({FIRST})", "relative path")

VARIANTS = [
    Variant(
        "schema column missing",
        whole_column("schema", None),
        ManifestError,
        ("'schema'", "doc_id, doc_path, gt_path, schema", "doc_id, doc_path, gt_path, suite, source_id"),
    ),
    Variant("no rows", no_rows, ManifestError, ("names no rows",)),
    Variant("doc_id with a slash", cell("doc_id", "a/b"), ManifestError, ("row 1", "'a/b'", "one path component")),
    Variant("doc_id '..'", cell("doc_id", ".."), ManifestError, ("row 1", "'..'", "one path component")),
    Variant("doc_id empty", cell("doc_id", ""), ManifestError, ("row 1", "''", "one path component")),
    Variant("doc_id int 0", whole_column("doc_id", [0, 1, 2, 3, 4]), ManifestError, ("row 1", " 0 ", "file name")),
    Variant("ids differ only in case", duplicate_in_case, ManifestError, (FIRST, FIRST.upper(), "ignoring case")),
    Variant("doc_path absolute", cell("doc_path", "/etc/passwd.pdf"), ManifestError, (*ROW_PATH, "absolute")),
    Variant("doc_path with ..", cell("doc_path", "pdfs/../../x.pdf"), ManifestError, (*ROW_PATH, "'..'")),
    Variant("doc_path without suffix", cell("doc_path", f"pdfs/{FIRST}"), ManifestError, (*ROW_PATH, "suffix")),
    Variant("doc_path null", cell("doc_path", None), ManifestError, (*ROW_PATH, "None")),
    Variant(
        "doc_path names no file",
        cell("doc_path", "pdfs/nothing.pdf"),
        DocumentMissingError,
        ("1 document file missing", f"{FIRST}: /", "/pdfs/nothing.pdf"),
    ),
    Variant("gt_path for another id", cell("gt_path", "gold/other.json"), ManifestError, ("row 1", "gold/other.json")),
    Variant("gt_path not .json", cell("gt_path", f"gold/{FIRST}.txt"), ManifestError, (f"gold/{FIRST}.json",)),
    Variant("gt_path in another folder", gold_elsewhere),
    Variant("gold missing", gold_file(None), GoldError, (FIRST, "no such file", "field_matching")),
    Variant("gold a JSON list", gold_file("[1, 2]"), GoldError, (FIRST, "JSON list", "field_matching")),
    Variant("gold bad JSON", gold_file("{oops"), GoldError, (FIRST, "not JSON", f"gold/{FIRST}.json")),
    Variant("gold {}", gold_file("{}")),
    Variant("schema not JSON", cell("schema", b"{not json"), ManifestError, ("row 1", FIRST, "not JSON", "json.dumps")),
    Variant("schema null", cell("schema", b"null"), ManifestError, ("b'null'", "non-empty JSON object")),
    Variant("schema {}", cell("schema", b"{}"), ManifestError, ("b'{}'", "non-empty JSON object")),
    Variant("schema [1]", cell("schema", b"[1]"), ManifestError, ("b'[1]'", "non-empty JSON object")),
    Variant("schema column of strings", whole_column("schema", [SCHEMA_TEXT] * 5)),
    Variant(
        "suite an int",
        whole_column("suite", [3, 3, 3, 3, 3]),
        ManifestError,
        ("row 1", FIRST, "suite 3", "a string, or null"),
    ),
    Variant("suite blank", cell("suite", "  ")),
    Variant("no suite column", whole_column("suite", None)),
    Variant(
        "manifest not parquet",
        unchanged,
        ManifestError,
        (f"gold/{FIRST}.json", "not a parquet file"),
        manifest=f"gold/{FIRST}.json",
    ),
    Variant("document in the dataset root", document_in_root),
]


def test_the_catalogue_has_29_variants() -> None:
    assert len(VARIANTS) == 29


@pytest.mark.parametrize("variant", VARIANTS, ids=[variant.name for variant in VARIANTS])
def test_variant(variant: Variant, rewrite) -> None:
    folder = rewrite(variant.change)
    if variant.refused is None:
        assert len(check_dataset(str(folder), variant.manifest).rows) == 5
        return
    with pytest.raises(DatasetError) as caught:
        check_dataset(str(folder), variant.manifest)
    assert type(caught.value) is variant.refused
    message = str(caught.value)
    assert "\n" not in message
    for fragment in variant.says:
        assert fragment in message


def test_blank_null_and_missing_suites_are_other(rewrite) -> None:
    folder = rewrite(cell("suite", ""))
    assert check_dataset(str(folder)).suites() == {"other": 2, "tables": 1, "research": 1, "micro1": 1}


@pytest.mark.parametrize(
    ("changes", "first_refusal"),
    [
        ([cell("schema", b"null", row=0), cell("doc_path", "/abs.pdf", row=3)], "doc_path"),
        ([duplicate_in_case, cell("gt_path", "gold/x.json", row=4)], "gt_path"),
        ([cell("schema", b"[1]", row=0), duplicate_in_case], "ignoring case"),
        ([cell("suite", None), cell("schema", b"{}", row=2)], "b'{}'"),
        ([gold_file("[1]"), cell("doc_path", "pdfs/nothing.pdf", row=4)], "document file missing"),
    ],
    ids=["paths before schema", "paths before unique ids", "unique ids before schema", "schema", "files before gold"],
)
def test_checks_run_in_the_documented_order(rewrite, changes, first_refusal: str) -> None:
    def change_all(folder: Path, columns: Columns) -> None:
        for change in changes:
            change(folder, columns)

    with pytest.raises(DatasetError, match=first_refusal):
        check_dataset(str(rewrite(change_all)))


def test_every_missing_document_is_counted_and_three_are_shown(rewrite) -> None:
    def remove_all(folder: Path, _: Columns) -> None:
        for pdf in (folder / "pdfs").iterdir():
            pdf.unlink()

    with pytest.raises(DocumentMissingError) as caught:
        check_dataset(str(rewrite(remove_all)))
    assert str(caught.value).startswith("5 document files missing")
    assert "and 2 more" in str(caught.value)


def test_a_gold_with_a_byte_order_mark_is_accepted(rewrite) -> None:
    folder = rewrite(gold_file('\ufeff{"total": 2}'))
    dataset = check_dataset(str(folder))
    assert dataset.gold(dataset.rows[0]) == {"total": 2}


def test_extra_columns_are_kept_on_the_row(five_rows: Path) -> None:
    row = check_dataset(str(five_rows)).rows[2]
    assert (row.number, row.doc_id, row.extra) == (3, IDS[2], {"source_id": "src-2"})


def test_a_dataset_folder_that_does_not_exist_is_refused(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match=r"no dataset folder at .*nowhere; give a folder"):
        check_dataset(str(tmp_path / "nowhere"))


def test_a_missing_manifest_is_refused_explaining_manifests(five_rows: Path) -> None:
    with pytest.raises(ManifestError, match=r"no manifest at .*manifests/sample\.parquet; a manifest is a parquet"):
        check_dataset(str(five_rows), "manifests/sample.parquet")


def test_another_manifest_inside_the_dataset_is_used(five_rows: Path) -> None:
    row = {"doc_id": IDS[0], "doc_path": f"pdfs/{IDS[0]}.pdf", "gt_path": f"gold/{IDS[0]}.json", "schema": SCHEMA_TEXT}
    table = pa.Table.from_pylist([row])
    (five_rows / "manifests").mkdir()
    pq.write_table(table, five_rows / "manifests" / "sample.parquet")
    dataset = check_dataset(str(five_rows), "./manifests/sample.parquet")
    assert (dataset.manifest, len(dataset.rows)) == ("manifests/sample.parquet", 1)
