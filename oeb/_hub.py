"""`hf://datasets/<org>/<name>[@<revision>]` datasets: the commit a run pins, and its files.

Files come through huggingface_hub's own cache, one file at a time, and only those a run reads
(the reference downloads the whole snapshot), each download under the storage retry policy
(`oeb._retry`); pinning retries a busy Hub and asks the cache when the Hub cannot be reached.
Everything is fetched at the pinned commit, so a cached file is used with no request at all. The
endpoint, cache folder and offline switch are read from the environment at call time
(`HF_ENDPOINT`, `HF_HUB_CACHE`, `HF_HUB_OFFLINE`), not when huggingface_hub was imported, so a
process can point at another hub without restarting.

Folders inside a dataset repo (`hf://datasets/<org>/<name>/<path>`, where published runs live) are
named by `HubLocation`; `commit_of` pins one to a commit, so a report reads one version of it.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx2
from huggingface_hub import HfApi, constants, hf_hub_download
from huggingface_hub.errors import (
    EntryNotFoundError,
    LocalEntryNotFoundError,
    RepositoryNotFoundError,
    RevisionNotFoundError,
)
from huggingface_hub.utils.tqdm import tqdm as hub_tqdm

from oeb import _retry
from oeb._credentials import hub_token
from oeb.errors import DatasetNotFoundError, HubError, OebError, StorageNotFoundError

ACCEPTED_FORM = "hf://datasets/<org>/<name>[@<revision>]"
_ADDRESS = re.compile(r"hf://datasets/(?P<repo_id>[^/@\s]+/[^/@\s]+)(?:@(?P<revision>\S+))?")
_COMMIT = re.compile(r"[0-9a-f]{40}")
_DOWNLOAD_THREADS = 4
# huggingface_hub's transport (httpx2) raises its own errors, not OSError, for a refused connection.
_NETWORK_ERRORS = (OSError, httpx2.TransportError)


@dataclass(frozen=True)
class HubAddress:
    """A parsed `hf://` dataset address; `revision` is None when none was given (`main`)."""

    repo_id: str
    revision: str | None

    @property
    def url(self) -> str:
        """The address without its revision: what a run records as its dataset."""
        return f"hf://datasets/{self.repo_id}"


def parse_address(url: str) -> HubAddress:
    """The repository and revision of an `hf://datasets/<org>/<name>[@<revision>]` URL, or a `HubError`."""
    match = _ADDRESS.fullmatch(url.rstrip("/"))
    if match is None:
        raise HubError(f"{url} does not name a Hugging Face dataset; use {ACCEPTED_FORM}")
    return HubAddress(match["repo_id"], match["revision"])


class _Quiet(hub_tqdm):
    """No progress bar per file: a check reads hundreds of small gold files."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs["disable"] = True
        super().__init__(*args, **kwargs)  # type: ignore[no-untyped-call]  # tqdm's __init__ is unannotated


_HUB = "https://huggingface.co"  # huggingface_hub's default endpoint


def endpoint() -> str:
    """The Hub this process talks to now: `HF_ENDPOINT`, else huggingface.co."""
    # Not `constants.ENDPOINT`: huggingface_hub fixes that at its import, from the HF_ENDPOINT of then.
    return (os.environ.get("HF_ENDPOINT") or _HUB).rstrip("/")


def _cache_dir() -> Path:
    return Path(os.environ.get("HF_HUB_CACHE") or constants.HF_HUB_CACHE)


def _true(value: str) -> bool:
    """A boolean variable as huggingface_hub reads one."""
    return value.upper() in {"1", "ON", "YES", "TRUE"}


def _offline() -> bool:
    return constants.is_offline_mode() or _true(os.environ.get("HF_HUB_OFFLINE", ""))


@dataclass(frozen=True)
class HubSnapshot:
    """One dataset at one pinned commit. `cached_only` is set when the Hub could not be asked
    (offline mode, or unreachable): then `files` holds only what the cache already has."""

    address: HubAddress
    commit: str
    files: frozenset[str]
    cached_only: bool

    @property
    def root(self) -> str:
        """The pinned address, for messages and for grading the same commit later."""
        return f"{self.address.url}@{self.commit}"

    def listing(self) -> frozenset[str]:
        """Every file of the pinned commit, from the one listing made when it was pinned."""
        return self.files

    @property
    def missing_fix(self) -> str:
        """What to do about files the manifest names that are not in `files`."""
        if self.cached_only:
            return (
                f"they are not in the Hugging Face cache ({_cache_dir()}) and the Hub cannot be asked; "
                "unset HF_HUB_OFFLINE or check the network, or pass a dataset folder"
            )
        return f"they are not in the dataset at commit {self.commit}; fix the manifest's paths"

    def local_path(self, path: str) -> Path:
        """The local copy of one file in the Hub's cache, downloaded unless already cached."""

        _retry.hub_timeouts()

        def download() -> str:
            return hf_hub_download(
                self.address.repo_id,
                path,
                repo_type="dataset",
                revision=self.commit,
                cache_dir=_cache_dir(),
                endpoint=endpoint(),
                local_files_only=self.cached_only,
                etag_timeout=_retry.timeout_seconds(),
                tqdm_class=_Quiet,
                token=hub_token(),
            )

        try:  # a busy or flaky Hub (5xx, 429, resets, timeouts) is asked again, as storage is (oeb._retry)
            return Path(_retry.call(download, "download", f"{self.root}/{path}"))
        except LocalEntryNotFoundError as error:
            raise HubError(f"cannot read {self.root}/{path}: {self.missing_fix}") from error
        except EntryNotFoundError as error:
            raise StorageNotFoundError(f"cannot read {self.root}/{path}: no such file in the dataset") from error
        except _NETWORK_ERRORS as error:
            raise HubError(
                f"cannot download {path} of {self.root} from {endpoint()} "
                f"({type(error).__name__}: {error}); check the network and your access (hf auth login)"
            ) from error

    def read_many(self, paths: Sequence[str]) -> dict[str, bytes | OebError]:
        """Download (or find cached) several files at once; a failure maps to its error."""

        def read(path: str) -> bytes | OebError:
            try:
                return self.local_path(path).read_bytes()
            except OebError as error:
                return error

        with ThreadPoolExecutor(max_workers=_DOWNLOAD_THREADS) as pool:
            return dict(zip(paths, pool.map(read, paths), strict=True))


def pin(address: HubAddress) -> HubSnapshot:
    """Ask the Hub which commit the address names and which files it holds (the pre-check).

    Offline, or when the Hub cannot be reached, the cache answers instead, if it knows the revision.
    """
    if _offline():
        return _cached_snapshot(address, "offline mode is on (HF_HUB_OFFLINE)")
    try:
        client = api()
        info = _retry.call(
            lambda: client.dataset_info(address.repo_id, revision=address.revision),
            "pin",
            address.url,
            answered_only=True,  # a Hub that cannot be reached: the cache answers
        )
    except RepositoryNotFoundError as error:
        raise DatasetNotFoundError(
            f"the Hub ({endpoint()}) shows no dataset {address.repo_id}: it does not exist, or it is "
            "private and no token on this machine can read it; check the name, or set HF_TOKEN"
        ) from error
    except RevisionNotFoundError as error:
        raise HubError(
            f"{address.url} has no revision {address.revision!r}; give a branch, tag or commit after '@'"
        ) from error
    except _NETWORK_ERRORS as error:
        return _cached_snapshot(address, f"the Hub cannot be reached at {endpoint()} ({type(error).__name__})")
    assert info.sha is not None
    _remember_revision(address, info.sha)
    files = frozenset(sibling.rfilename for sibling in info.siblings or ())
    return HubSnapshot(address, info.sha, files, cached_only=False)


def _repo_cache(address: HubAddress) -> Path:
    """The repo's folder in the Hub cache (its documented layout: refs/<revision>, snapshots/<commit>)."""
    return _cache_dir() / f"datasets--{address.repo_id.replace('/', '--')}"


def _remember_revision(address: HubAddress, commit: str) -> None:
    """Record which commit the revision named, so an offline run can find the cached snapshot.

    Files are downloaded by commit, and then huggingface_hub itself writes no ref.
    """
    revision = address.revision or "main"
    if revision == commit:
        return
    ref = _repo_cache(address) / "refs" / revision
    ref.parent.mkdir(parents=True, exist_ok=True)
    ref.write_text(commit)


def _cached_snapshot(address: HubAddress, reason: str) -> HubSnapshot:
    revision = address.revision or "main"
    ref = _repo_cache(address) / "refs" / revision
    commit = revision if _COMMIT.fullmatch(revision) else (ref.read_text().strip() if ref.is_file() else None)
    snapshot = _repo_cache(address) / "snapshots" / (commit or "-")
    if commit is None or not snapshot.is_dir():
        raise HubError(
            f"{address.url}@{revision} is not in the Hugging Face cache ({_cache_dir()}) and {reason}; "
            "unset HF_HUB_OFFLINE or check the network and HF_ENDPOINT, or pass a dataset folder"
        )
    files = frozenset(path.relative_to(snapshot).as_posix() for path in snapshot.rglob("*") if path.is_file())
    return HubSnapshot(address, commit, files, cached_only=True)


_LOCATION = re.compile(
    r"hf://datasets/(?P<repo_id>[^/@\s]+/[^/@\s]+)(?:@(?P<before>[^/@\s]+))?(?:/(?P<path>[^@]*?))?/?(?:@(?P<after>[^/@\s]+))?/?"
)


@dataclass(frozen=True)
class HubLocation:
    """A folder in a Hub dataset repo: `hf://datasets/<org>/<name>[/<path>][@<revision>]` (the revision
    may also come right after the name, as huggingface_hub's file system writes it)."""

    repo_id: str
    path: str
    revision: str | None

    def url(self, revision: str | None = None) -> str:
        """The folder's URL in the form fsspec's `HfFileSystem` reads, at `revision` (else its own)."""
        at = revision or self.revision
        return f"hf://datasets/{self.repo_id}{'@' + at if at else ''}{'/' + self.path if self.path else ''}"


def parse_location(url: str) -> HubLocation:
    """The repo, folder and revision an `hf://datasets/...` URL names, or a `HubError`."""
    match = _LOCATION.fullmatch(url.strip())
    if match is None or (match["before"] and match["after"]):
        raise HubError(
            f"{url} does not name a folder of a Hugging Face dataset; use hf://datasets/ORG/NAME[/PATH][@REVISION]"
        )
    return HubLocation(match["repo_id"], (match["path"] or "").strip("/"), match["before"] or match["after"])


def api() -> HfApi:
    """huggingface_hub's client for the endpoint in the environment now (`HF_ENDPOINT`). Its choice
    of upload protocol follows `HF_HUB_DISABLE_XET` as set now too: huggingface_hub reads that
    variable once, at import, and keeps it in its `constants`."""
    constants.HF_HUB_DISABLE_XET = _true(os.environ.get("HF_HUB_DISABLE_XET", ""))
    _retry.hub_timeouts()
    return HfApi(endpoint=endpoint(), token=hub_token())


def commit_of(location: HubLocation) -> str:
    """The commit the location's revision names now (`main` when none): reading at it reads one commit."""
    client = api()
    try:
        info = _retry.call(
            lambda: client.dataset_info(location.repo_id, revision=location.revision), "pin", location.url()
        )
    except RepositoryNotFoundError as error:
        raise StorageNotFoundError(
            f"the Hub ({endpoint()}) shows no dataset {location.repo_id}: check the name, "
            "or set HF_TOKEN for a private one"
        ) from error
    except RevisionNotFoundError as error:
        raise StorageNotFoundError(
            f"hf://datasets/{location.repo_id} has no revision {location.revision!r}; give a branch, tag or commit"
        ) from error
    except _NETWORK_ERRORS as error:
        raise HubError(
            f"cannot reach the Hub at {endpoint()} ({type(error).__name__}: {error}); check the network and HF_ENDPOINT"
        ) from error
    assert info.sha is not None
    return info.sha
