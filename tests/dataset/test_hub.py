"""`hf://` datasets through the real huggingface_hub against the fake hub: addresses, the pinned
commit, downloading only what is read, the cache when offline or unreachable, and the errors."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from fixtures.datasets import publish
from fixtures.fake_hub import FakeHub

from oeb._hub import parse_address
from oeb.dataset import SAMPLE_DATASET, check_dataset, open_dataset
from oeb.errors import DatasetNotFoundError, DocumentMissingError, HubError, ManifestError


@pytest.fixture
def hub_url(fake_hub: FakeHub) -> str:
    """The sample dataset published under a fresh name (nothing of it cached yet)."""
    return publish(fake_hub, Path(SAMPLE_DATASET), f"acme/sample-{uuid.uuid4().hex[:8]}")


def repo_id(url: str) -> str:
    return url.removeprefix("hf://datasets/")


@pytest.mark.parametrize(
    ("url", "repo", "revision"),
    [
        ("hf://datasets/acme/docs", "acme/docs", None),
        ("hf://datasets/acme/docs/", "acme/docs", None),
        ("hf://datasets/acme/docs@main", "acme/docs", "main"),
        ("hf://datasets/acme/docs@refs/pr/1", "acme/docs", "refs/pr/1"),
    ],
)
def test_accepted_addresses(url: str, repo: str, revision: str | None) -> None:
    address = parse_address(url)
    assert (address.repo_id, address.revision, address.url) == (repo, revision, "hf://datasets/acme/docs")


@pytest.mark.parametrize(
    "url", ["hf://datasets/x", "hf://models/x/y", "hf://datasets/acme/docs@", "hf://datasets/a/b/c", "hf://"]
)
def test_other_hf_addresses_are_refused_showing_the_accepted_form(url: str) -> None:
    with pytest.raises(HubError, match=r"use hf://datasets/<org>/<name>\[@<revision>\]"):
        open_dataset(url)


def test_the_commit_is_pinned_and_the_dataset_recorded_without_revision(fake_hub: FakeHub, hub_url: str) -> None:
    dataset = check_dataset(hub_url + "@main")
    assert dataset.identity == hub_url
    assert dataset.commit == fake_hub.commit(repo_id(hub_url))
    assert dataset.location == f"{hub_url}@{dataset.commit}"
    assert dataset.settings()["dataset_commit"] == dataset.commit


def test_a_check_downloads_the_manifest_and_golds_but_no_document(fake_hub: FakeHub, hub_url: str) -> None:
    fake_hub.requests.clear()
    dataset = check_dataset(hub_url)
    downloads = [request for request in fake_hub.requests if request.startswith("GET /datasets/")]
    assert len(downloads) == 1 + len(dataset.rows)
    assert not any("/pdfs/" in request for request in fake_hub.requests)
    fake_hub.requests.clear()
    dataset.document(dataset.rows[0])
    assert [r for r in fake_hub.requests if r.startswith("GET")] == [
        f"GET /datasets/{repo_id(hub_url)}/resolve/{dataset.commit}/pdfs/short__invoice_4417.pdf"
    ]


def test_files_already_cached_are_not_downloaded_again(fake_hub: FakeHub, hub_url: str) -> None:
    commit = check_dataset(hub_url).commit
    fake_hub.requests.clear()
    check_dataset(f"{hub_url}@{commit}")
    assert fake_hub.requests == [f"GET /api/datasets/{repo_id(hub_url)}/revision/{commit}"]


def test_a_new_commit_on_main_is_seen(fake_hub: FakeHub, hub_url: str) -> None:
    before = open_dataset(hub_url).commit
    (fake_hub.repo(repo_id(hub_url)) / "gold" / "short__invoice_4417.json").write_text('{"total": 0}')
    after = open_dataset(hub_url)
    assert after.commit != before
    assert after.gold(after.rows[0]) == {"total": 0}


def test_offline_the_cache_answers(hub_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    online = check_dataset(hub_url)
    for row in online.rows:
        online.document(row)  # as a run would have
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    for url in (hub_url, f"{hub_url}@{online.commit}"):
        offline = check_dataset(url)
        assert (offline.commit, offline.rows) == (online.commit, online.rows)
        assert list(offline.golds()) == list(online.golds())


def test_offline_documents_that_were_never_downloaded_are_missing(
    hub_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    open_dataset(hub_url).check_golds()
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(DocumentMissingError, match=r"not in the Hugging Face cache.*unset HF_HUB_OFFLINE"):
        check_dataset(hub_url)


def test_offline_without_a_cached_copy_is_refused(hub_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(HubError, match=r"not in the Hugging Face cache .* offline mode is on"):
        open_dataset(hub_url)


def test_an_unreachable_hub_falls_back_to_the_cache(hub_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    commit = check_dataset(hub_url).commit
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")
    assert open_dataset(hub_url).commit == commit
    with pytest.raises(HubError, match=r"the Hub cannot be reached at http://127\.0\.0\.1:9"):
        open_dataset("hf://datasets/acme/never-cached")


def test_an_unknown_dataset_is_refused_mentioning_tokens(fake_hub: FakeHub) -> None:
    with pytest.raises(DatasetNotFoundError, match=r"shows no dataset acme/nothing.*HF_TOKEN"):
        open_dataset("hf://datasets/acme/nothing")


def test_an_unknown_revision_is_refused(hub_url: str) -> None:
    with pytest.raises(HubError, match="has no revision 'v9'"):
        open_dataset(hub_url + "@v9")


def test_a_manifest_missing_at_the_revision_is_refused(hub_url: str) -> None:
    with pytest.raises(ManifestError, match=r"no manifest at .*@[0-9a-f]{40}/manifests/sample\.parquet"):
        open_dataset(hub_url, "manifests/sample.parquet")
