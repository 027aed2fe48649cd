"""What a URL means: local or not, joining, unknown and read-only protocols, S3 settings from the
environment."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
import s3fs

from oeb import storage
from oeb.errors import StorageAccessError, StorageURLError


@pytest.mark.parametrize(
    ("url", "local"), [("runs/x", True), ("/data/x", True), ("file:///data/x", True), ("s3://b/x", False)]
)
def test_only_paths_and_file_urls_are_local(url: str, local: bool) -> None:
    assert storage.is_local(url) is local


def test_join_adds_relative_parts_once() -> None:
    assert storage.join("s3://b/runs/", "records", "/a b.json") == "s3://b/runs/records/a b.json"
    assert storage.join("/data", "gold/x.json") == "/data/gold/x.json"


def test_local_path_of_a_file_url(tmp_path: Path) -> None:
    assert storage.local_path(f"file://{tmp_path}/a.json") == tmp_path / "a.json"
    with pytest.raises(StorageURLError, match="s3://b/a is not on local disk"):
        storage.local_path("s3://b/a")


def test_an_unknown_protocol_is_refused_naming_the_url() -> None:
    with pytest.raises(StorageURLError, match=r"nosuch://x/y: oeb cannot use the nosuch:// protocol"):
        storage.read_bytes("nosuch://x/y")


def test_hub_urls_are_read_only() -> None:
    with pytest.raises(StorageURLError, match=r"hf:// is read-only"):
        storage.write_json("hf://datasets/acme/docs/x.json", {})


def test_the_s3_endpoint_is_read_from_the_environment_at_each_call(s3_env, monkeypatch) -> None:
    url = f"s3://oeb-tests/env/{uuid.uuid4().hex[:8]}.json"
    storage.write_json(url, {"a": 1})
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:9")
    monkeypatch.setenv("AWS_MAX_ATTEMPTS", "1")
    s3fs.S3FileSystem.clear_instance_cache()
    with pytest.raises(StorageAccessError, match=r"cannot read s3://oeb-tests/env/.*AWS_ENDPOINT_URL"):
        storage.read_json(url)
    monkeypatch.setenv("AWS_ENDPOINT_URL", s3_env["AWS_ENDPOINT_URL"])
    assert storage.read_json(url) == {"a": 1}


def test_a_missing_bucket_is_not_found(s3_env) -> None:
    assert not storage.exists("s3://no-such-bucket-here/x.json")
    assert storage.list_files("s3://no-such-bucket-here/runs") == {}


def test_hub_files_are_read_and_listed_through_hffilesystem(fake_hub) -> None:
    repo = fake_hub.repo(f"acme/files-{uuid.uuid4().hex[:8]}")
    (repo / "gold").mkdir(parents=True)
    (repo / "gold" / "a [1].json").write_text('{"a": 1}')
    url = "hf://datasets/" + repo.relative_to(fake_hub.root / "datasets").as_posix()
    assert storage.read_json(f"{url}/gold/a [1].json") == {"a": 1}
    assert storage.list_files(url) == {"gold/a [1].json": 8}
    assert storage.read_many(url, ["gold/a [1].json"]) == {"gold/a [1].json": b'{"a": 1}'}
