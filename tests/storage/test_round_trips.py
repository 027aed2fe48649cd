"""Every helper reads back what it wrote, on local disk and on S3 (moto), and says which URL failed."""

from __future__ import annotations

import uuid
from pathlib import Path

import pyarrow as pa
import pytest

from oeb import storage
from oeb.errors import StorageFormatError, StorageNotFoundError

VALUE = {"id": "research__[zhao25] a survey", "text": "Müller — 東京", "n": [1, 2.5, None, True]}


@pytest.fixture(params=["local", "file url", "s3"])
def folder(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """An empty folder URL on the storage under test."""
    if request.param == "local":
        return str(tmp_path)
    if request.param == "file url":
        return f"file://{tmp_path}"
    request.getfixturevalue("s3_env")
    return f"s3://oeb-tests/runs/{uuid.uuid4().hex[:8]}"


def test_json_is_written_as_run_files_are(folder: str) -> None:
    url = storage.join(folder, "records", "research__[zhao25] a survey.json")
    storage.write_json(url, VALUE)
    assert storage.read_json(url) == VALUE
    text = storage.read_text(url)
    assert text.endswith("}\n") and "Müller" in text and '\n  "id"' in text


def test_jsonl_keeps_one_value_per_line(folder: str) -> None:
    url = storage.join(folder, "field_matching/scores.jsonl")
    storage.write_jsonl(url, [VALUE, {"b": 2}, 3])
    assert storage.read_jsonl(url) == [VALUE, {"b": 2}, 3]
    assert storage.read_text(url).splitlines()[1] == '{"b": 2}'


def test_parquet_round_trips_a_binary_column(folder: str) -> None:
    table = pa.table({"doc_id": ["a", "b"], "schema": pa.array([b"{}", b'{"x": 1}'], type=pa.binary())})
    url = storage.join(folder, "manifest.parquet")
    storage.write_parquet(url, table)
    assert storage.read_parquet(url).equals(table)
    assert storage.read_parquet(url, columns=["doc_id"]).column_names == ["doc_id"]


def test_read_many_reports_each_missing_file_by_name(folder: str) -> None:
    storage.write_bytes(storage.join(folder, "gold/a [1].json"), b"{}")
    read = storage.read_many(folder, ["gold/a [1].json", "gold/none.json"])
    assert read["gold/a [1].json"] == b"{}"
    missing = read["gold/none.json"]
    assert isinstance(missing, StorageNotFoundError)
    assert "gold/none.json" in str(missing)


def test_missing_files_name_the_url(folder: str) -> None:
    url = storage.join(folder, "settings.json")
    with pytest.raises(StorageNotFoundError, match=r"cannot read .*settings\.json: no such file"):
        storage.read_json(url)
    assert not storage.exists(url)


def test_bad_content_names_the_url_and_the_problem(folder: str) -> None:
    storage.write_text(storage.join(folder, "bad.json"), "{oops")
    storage.write_text(storage.join(folder, "bad.jsonl"), '{"a": 1}\n[\n')
    with pytest.raises(StorageFormatError, match=r"bad\.json is not JSON"):
        storage.read_json(storage.join(folder, "bad.json"))
    with pytest.raises(StorageFormatError, match=r"bad\.jsonl line 2 is not JSON"):
        storage.read_jsonl(storage.join(folder, "bad.jsonl"))
    with pytest.raises(StorageFormatError, match=r"bad\.json is not a parquet file") as refused:
        storage.read_parquet(storage.join(folder, "bad.json"))
    assert "\n" not in str(refused.value)  # one line, though Arrow's message spans several


def test_a_parquet_file_without_a_column_asked_names_the_column(folder: str) -> None:
    import pyarrow as pa

    url = storage.join(folder, "short.parquet")
    storage.write_parquet(url, pa.table({"doc_id": ["a"], "foo": [1]}))
    with pytest.raises(StorageFormatError, match=r"short\.parquet has no column address, page;") as refused:
        storage.read_parquet(url, ["doc_id", "address", "page"])
    assert "\n" not in str(refused.value)
