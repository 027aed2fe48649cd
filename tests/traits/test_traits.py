"""Traits of generated PDFs with known pages, text layers (pages that are only an image) and
languages come out right; a damaged PDF gives unknown traits and one warning; the cache is used and
renewed; bucket edges and trait names are checked."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from oeb.dataset import open_dataset
from oeb.errors import UsageError
from oeb.traits import document_traits, parse_buckets, table
from oeb.traits.buckets import bucket, labels


def test_pdf_traits_are_the_known_ones(trait_dataset, trait_docs) -> None:
    traits = document_traits(open_dataset(trait_dataset))
    for doc_id, (_, expected) in trait_docs.items():
        got = {name: traits.values[doc_id][name] for name in expected}
        assert got == expected, doc_id


def test_gold_schema_and_manifest_traits(trait_dataset, trait_docs) -> None:
    traits = document_traits(open_dataset(trait_dataset), parse_buckets(["gold_values=2,5", "array_items=0,3"]))
    numbers = {doc_id: number for number, doc_id in enumerate(trait_docs)}
    for doc_id, values in traits.values.items():
        leaves = 1 + numbers[doc_id]
        assert values["gold_values"] == ("0-2" if leaves <= 2 else "3-5" if leaves <= 5 else "6+"), doc_id
        items = numbers[doc_id]
        assert values["array_items"] == ("0" if items == 0 else "1-3" if items <= 3 else "4+"), doc_id
        assert values["schema_depth"] == "3"  # object -> array -> object
        assert values["suite"] == "invoices"
    assert traits.values["de_1"]["region"] == "emea" and traits.values["scan_1"]["region"] == "unknown"
    assert traits.names[-1] == "region"
    assert traits.labels("pages") == ["1", "2-3", "4-10", "11+", "unknown"]


def test_a_damaged_pdf_is_unknown_and_named_once(trait_dataset) -> None:
    traits = document_traits(open_dataset(trait_dataset))
    assert traits.damaged == ("broken",)
    assert traits.warnings() == ["the PDF of broken cannot be read; its PDF traits are unknown"]
    assert traits.values["broken"]["language"] == "unknown"


def test_the_cache_is_read_the_second_time_and_renewed_when_a_file_changes(
    trait_dataset, tmp_path, monkeypatch
) -> None:
    dataset = tmp_path / "copy"
    shutil.copytree(trait_dataset, dataset)
    first = document_traits(open_dataset(str(dataset)))
    path = table.cache_path(open_dataset(str(dataset)))
    assert path.is_file() and path.name == "traits.parquet"
    calls: list[int] = []
    real = table.pdf_facts
    monkeypatch.setattr(table, "pdf_facts", lambda data, lock: calls.append(1) or real(data, lock))
    assert document_traits(open_dataset(str(dataset))) == first
    assert not calls  # from traits.parquet: no PDF read
    Path(dataset, "pdfs", "de_1.pdf").write_bytes(Path(dataset, "pdfs", "scan_1.pdf").read_bytes())
    renewed = document_traits(open_dataset(str(dataset)))
    assert calls and renewed.values["de_1"]["text_layer"] == "scanned"


def test_bucket_edges() -> None:
    edges = parse_buckets(["pages=2,5"])
    assert labels("pages", edges) == ["1-2", "3-5", "6+"]
    assert [bucket("pages", n, edges) for n in (1, 2, 3, 5, 6, None)] == ["1-2", "1-2", "3-5", "3-5", "6+", "unknown"]
    assert parse_buckets([], {"pages": [1, 2]})["pages"] == (1, 2)
    for bad, said in [
        ("pages=3,1", "strictly increasing"),
        ("pages=1,1", "strictly increasing"),
        ("pages=a,b", "whole numbers"),
        ("pages=0,2", "below 1"),
        ("color=1,2", "not a counted trait"),
        ("pages", "TRAIT=E1"),
    ]:
        with pytest.raises(UsageError, match=said):
            parse_buckets([bad])


def test_an_unknown_trait_names_those_there_are(trait_dataset) -> None:
    traits = document_traits(open_dataset(trait_dataset))
    with pytest.raises(UsageError, match=r"no trait 'colour'; the traits are pages, text_layer, .*, region"):
        traits.check("colour")
