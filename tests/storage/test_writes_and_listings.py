"""Atomic writes (a reader sees the old file or the new one, never part of one) and listings made
with one call, however many files a folder holds."""

from __future__ import annotations

import threading
import uuid
from pathlib import Path

import pytest

from oeb import storage
from oeb.errors import StorageError


def test_a_reader_never_sees_half_a_file(tmp_path: Path) -> None:
    url = str(tmp_path / "records" / "doc.json")
    versions = [bytes([65 + n]) * 2_000_000 for n in range(4)]
    storage.write_bytes(url, versions[0])
    seen: set[bytes] = set()
    done = threading.Event()

    def read_until_done() -> None:
        while not done.is_set():
            seen.add(Path(url).read_bytes())

    reader = threading.Thread(target=read_until_done)
    reader.start()
    for _ in range(3):
        for version in versions:
            storage.write_bytes(url, version)
    done.set()
    reader.join()
    assert seen <= set(versions)


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path: Path) -> None:
    url = str(tmp_path / "settings.json")
    storage.write_json(url, {"v": 1})
    with pytest.raises(TypeError):
        storage.write_json(url, {"v": object()})
    (tmp_path / "blocker").write_text("a file, not a folder")
    with pytest.raises(StorageError, match=r"cannot write .*blocker/x\.json"):
        storage.write_json(str(tmp_path / "blocker" / "x.json"), {})
    assert storage.read_json(url) == {"v": 1}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["blocker", "settings.json"]


def test_a_local_listing_is_recursive_and_relative(tmp_path: Path) -> None:
    for name in ["a.json", "records/b c.json", "field_matching/details/[d].jsonl"]:
        storage.write_text(str(tmp_path / name), "12345")
    assert storage.list_files(str(tmp_path)) == {
        "a.json": 5,
        "records/b c.json": 5,
        "field_matching/details/[d].jsonl": 5,
    }
    assert storage.list_files(str(tmp_path / "nothing")) == {}


def test_an_s3_listing_takes_one_request_however_many_files(s3_env) -> None:
    folder = f"s3://oeb-tests/listing/{uuid.uuid4().hex[:8]}"
    names = [f"records/doc {n}.json" for n in range(60)]
    for name in names:
        storage.write_bytes(storage.join(folder, name), b"{}")
    fs = storage.filesystem(folder)[0]
    calls: list[str] = []
    fs.s3.meta.events.register("before-call.s3", lambda model, **_: calls.append(model.name))
    assert storage.list_files(folder) == dict.fromkeys(names, 2)
    assert 1 <= calls.count("ListObjectsV2") <= 2 and len(calls) <= 3, calls


def test_a_written_file_has_the_mode_a_new_file_would_have(tmp_path) -> None:
    """Atomic writes go through a 0600 temporary file; the result must be readable like any new file."""
    import os

    from oeb import storage

    storage.write_json(str(tmp_path / "record.json"), {"a": 1})
    (tmp_path / "plain.json").write_text("{}")
    assert (tmp_path / "record.json").stat().st_mode & 0o777 == (tmp_path / "plain.json").stat().st_mode & 0o777
    assert os.access(tmp_path / "record.json", os.R_OK)
