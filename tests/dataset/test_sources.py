"""One dataset reads the same from a folder, a file:// URL, an S3 prefix and the Hub."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from fixtures.datasets import publish, upload

from oeb.dataset import SAMPLE_DATASET, Dataset, check_dataset

SOURCES = ["folder", "file url", "s3", "hub"]


@pytest.fixture(params=SOURCES)
def sample_url(request: pytest.FixtureRequest) -> str:
    """The bundled sample dataset, copied to the source under test."""
    name = uuid.uuid4().hex[:8]
    if request.param == "folder":
        return SAMPLE_DATASET
    if request.param == "file url":
        return f"file://{SAMPLE_DATASET}"
    if request.param == "s3":
        request.getfixturevalue("s3_env")
        cache = request.getfixturevalue("tmp_path") / "cache"
        request.getfixturevalue("monkeypatch").setenv("XDG_CACHE_HOME", str(cache))  # local copies of documents
        return upload(Path(SAMPLE_DATASET), f"s3://oeb-tests/datasets/{name}")
    return publish(request.getfixturevalue("fake_hub"), Path(SAMPLE_DATASET), f"acme/sample-{name}")


@pytest.fixture(scope="module")
def reference() -> Dataset:
    return check_dataset(SAMPLE_DATASET)


def test_rows_golds_and_documents_are_identical(sample_url: str, reference: Dataset) -> None:
    dataset = check_dataset(sample_url)
    assert dataset.rows == reference.rows
    assert list(dataset.golds()) == list(reference.golds())
    row = dataset.rows[7]
    assert dataset.document(row).read_bytes() == reference.document(row).read_bytes()
    assert dataset.suites() == {"invoices": 4, "tables": 3, "research": 3, "forms": 2}


def test_each_source_records_what_a_run_must_pin(sample_url: str) -> None:
    dataset = check_dataset(sample_url)
    if sample_url.startswith("hf://"):
        assert dataset.settings() == {"dataset": sample_url, "manifest": "manifest.parquet",
                                      "dataset_commit": dataset.commit}  # fmt: skip
        assert dataset.commit is not None and len(dataset.commit) == 40
    elif sample_url.startswith("s3://"):
        assert dataset.settings() == {"dataset": sample_url, "manifest": "manifest.parquet"}
    else:
        assert dataset.settings() == {"dataset": str(Path(SAMPLE_DATASET).resolve()), "manifest": "manifest.parquet"}
