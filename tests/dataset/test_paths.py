"""Paths from a manifest never leave the dataset: traversal attempts are refused, and every path
that is accepted resolves under the dataset root."""

from __future__ import annotations

import posixpath
from pathlib import Path

import pyarrow as pa
import pytest
from fixtures.datasets import IDS, valid_columns, write_manifest
from hypothesis import given
from hypothesis import strategies as st

from oeb._manifest import is_file_name, normalised_manifest_path, rows_from_table
from oeb.dataset import check_dataset, open_dataset
from oeb.errors import ManifestError

ROOT = "/data/oebdata"


def one_row(**cells: object) -> pa.Table:
    row = {"doc_id": IDS[0], "doc_path": "pdfs/a.pdf", "gt_path": f"gold/{IDS[0]}.json", "schema": '{"a": 1}'}
    return pa.Table.from_pylist([row | cells])


@pytest.mark.parametrize(
    "doc_path",
    ["../outside.pdf", "pdfs/../../outside.pdf", "pdfs/../inside-but-dotted.pdf", "/etc/passwd.pdf", "//host/x.pdf"],
)
def test_document_paths_leaving_or_climbing_are_refused(doc_path: str) -> None:
    with pytest.raises(ManifestError, match="doc_path"):
        rows_from_table(one_row(doc_path=doc_path), "m.parquet")


@pytest.mark.parametrize("gt_path", [f"../gold/{IDS[0]}.json", f"/gold/{IDS[0]}.json", f"a/../{IDS[0]}.json"])
def test_gold_paths_leaving_or_climbing_are_refused(gt_path: str) -> None:
    with pytest.raises(ManifestError, match="gt_path"):
        rows_from_table(one_row(gt_path=gt_path), "m.parquet")


@pytest.mark.parametrize("manifest", ["../manifest.parquet", "/tmp/manifest.parquet", "a/../../m.parquet", ""])
def test_manifests_outside_the_dataset_are_refused(manifest: str, five_rows: Path) -> None:
    with pytest.raises(ManifestError, match=r"e\.g\. manifests/sample\.parquet"):
        open_dataset(str(five_rows), manifest)


def test_manifest_paths_are_normalised_to_posix_form() -> None:
    assert normalised_manifest_path("./manifests//sample.parquet") == "manifests/sample.parquet"


@pytest.mark.parametrize("doc_id", ["a/b", "..", ".", "", "/abs", "x/", 0, None])
def test_ids_that_are_not_one_path_component_are_refused(doc_id: object) -> None:
    assert not is_file_name(doc_id)


@pytest.mark.parametrize("doc_id", ["research__[zhao25] a survey of LLMs", "a.b", "...", " x ", "ü"])
def test_ids_with_spaces_brackets_dots_and_unicode_are_file_names(doc_id: str) -> None:
    assert is_file_name(doc_id)


def test_an_id_with_brackets_reads_its_files(five_rows: Path) -> None:
    dataset = check_dataset(str(five_rows))
    row = dataset.rows[2]
    assert row.doc_id == "research__[demo25] a survey"
    assert dataset.gold(row) == {"total": 1.5, "items": [{"a": row.doc_id}]}
    assert dataset.document(row).read_bytes().startswith(b"%PDF")


path_parts = st.sampled_from(["pdfs", "gold", ".", "..", "", "a b", "[x]", "deep", "ü", "~", "..."])


@given(parts=st.lists(path_parts, min_size=1, max_size=5), suffix=st.sampled_from([".pdf", ".png", "", ".json"]))
def test_every_accepted_document_path_resolves_inside_the_dataset(parts: list[str], suffix: str) -> None:
    doc_path = "/".join(parts) + suffix
    try:
        (row,) = rows_from_table(one_row(doc_path=doc_path), "m.parquet")
    except ManifestError:
        return
    resolved = posixpath.normpath(posixpath.join(ROOT, row.doc_path))
    assert resolved.startswith(ROOT + "/")
    assert ".." not in row.doc_path.split("/")


@given(doc_id=st.text(min_size=1, max_size=12))
def test_every_accepted_id_names_a_file_directly_in_a_folder(doc_id: str) -> None:
    if is_file_name(doc_id):
        assert posixpath.dirname(posixpath.join("records", doc_id + ".json")) == "records"


def test_rows_keep_normalised_paths(five_rows: Path) -> None:
    columns = valid_columns()
    columns["doc_path"][0] = f"./pdfs//{IDS[0]}.pdf"
    write_manifest(five_rows, columns)
    assert open_dataset(str(five_rows)).rows[0].doc_path == f"pdfs/{IDS[0]}.pdf"
