"""Where results are published: a folder of a Hub dataset repo, or any writable storage URL (`s3://`).

Both answer the same three questions: the URL to read a published file back at, which of the files to
publish are there already with the same bytes, and how to write the rest. On the Hub the comparison
uses the repo's own listing (git blob ids, and LFS sha256 for LFS files), read at the commit the
publish started from, and the rest goes up in one commit (`HfApi.create_commit`) whose parent is that
commit, so a push in between is refused rather than overwritten. On other storage each file of the
same size is read back and compared, and the files are written one by one through `oeb.storage`,
the card last, so a reader never sees a card naming a folder not yet written.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol

from oeb import _hub, _retry, storage
from oeb.errors import PublishError, StorageError, StorageNotFoundError

CARD = "README.md"
RESULTS = "results.json"


class Destination(Protocol):
    """A place to publish to."""

    @property
    def address(self) -> str:
        """The destination's URL as readers give it (a Hub revision as given, not pinned)."""
        ...

    def location(self, path: str) -> str:
        """The URL a published file or folder is read back at (on the Hub: at the commit the publish began from)."""
        ...

    def unchanged(self, files: Mapping[str, bytes]) -> set[str]:
        """The paths (relative to the destination) already published with exactly these bytes."""
        ...

    def write(self, files: Mapping[str, bytes], message: str) -> str:
        """Publish the files; what was made (the Hub commit, or the folder written)."""
        ...


def open_destination(url: str) -> Destination:
    """The destination a URL names: `hf://datasets/ORG/NAME[/PATH][@REVISION]`, or a writable storage URL."""
    if url.startswith("hf://"):
        try:
            return HubDestination.open(url)
        except StorageNotFoundError as error:
            raise PublishError(
                f"{error}; create the dataset first (hf repos create ORG/NAME --repo-type dataset), then publish"
            ) from error
    if url.split("://", 1)[0] in ("http", "https"):
        raise PublishError(f"{url}: oeb publishes to hf://datasets/ORG/NAME[/PATH] or a writable URL such as s3://")
    return StorageDestination(url.rstrip("/"))


def _git_blob(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


@dataclass(frozen=True)
class HubDestination:
    """A folder of a Hub dataset repo, at the commit its revision named when the publish began."""

    url: str
    where: _hub.HubLocation
    commit: str

    @classmethod
    def open(cls, url: str) -> HubDestination:
        where = _hub.parse_location(url)
        return cls(url, where, _hub.commit_of(where))

    @property
    def address(self) -> str:
        return self.where.url()

    def _in_repo(self, path: str) -> str:
        return "/".join(part for part in (self.where.path, path) if part)

    def location(self, path: str) -> str:
        return storage.join(self.where.url(self.commit), path)

    def unchanged(self, files: Mapping[str, bytes]) -> set[str]:
        from huggingface_hub import RepoFile
        from huggingface_hub.errors import EntryNotFoundError

        listed: dict[str, RepoFile] = {}
        client = _hub.api()
        try:
            entries = _retry.call(
                lambda: list(client.list_repo_tree(
                    self.where.repo_id, path_in_repo=self.where.path or None, recursive=True, repo_type="dataset",
                    revision=self.commit,
                )),
                "list",
                self.where.url(self.commit),
            )  # fmt: skip
            listed = {entry.path: entry for entry in entries if isinstance(entry, RepoFile)}
        except EntryNotFoundError:
            pass  # the folder is not there yet: nothing is published in it
        same = set()
        for path, data in files.items():
            entry = listed.get(self._in_repo(path))
            if entry is None or entry.size != len(data):
                continue
            if entry.lfs is not None:
                if entry.lfs.sha256 == hashlib.sha256(data).hexdigest():
                    same.add(path)
            elif entry.blob_id == _git_blob(data):
                same.add(path)
        return same

    def write(self, files: Mapping[str, bytes], message: str) -> str:
        from huggingface_hub import CommitOperationAdd
        from huggingface_hub.errors import HfHubHTTPError

        operations = [
            CommitOperationAdd(path_in_repo=self._in_repo(path), path_or_fileobj=data) for path, data in files.items()
        ]
        client = _hub.api()
        try:  # a commit sent again after a lost answer meets its own parent moved: refused, never doubled
            info = _retry.call(
                lambda: client.create_commit(
                    self.where.repo_id, operations, commit_message=message, repo_type="dataset",
                    revision=self.where.revision, parent_commit=self.commit,
                ),
                "commit to",
                self.where.url(),
            )  # fmt: skip
        except HfHubHTTPError as error:
            status = error.response.status_code if error.response is not None else None
            fix = (
                "set HF_TOKEN to a token that may write to it (or hf auth login)"
                if status in (401, 403)
                else "someone pushed meanwhile: publish again"
                if status in (409, 412)
                else "check the destination and try again"
            )
            first = str(error).splitlines()[0] if str(error) else type(error).__name__
            raise PublishError(f"the Hub refused the commit to {self.url} ({first}); {fix}") from error
        except OSError as error:
            raise PublishError(f"cannot reach the Hub to publish to {self.url} ({error}); check the network") from error
        return str(info.oid)


@dataclass(frozen=True)
class StorageDestination:
    """A folder on any storage oeb can write (`s3://`, a local folder)."""

    url: str

    @property
    def address(self) -> str:
        return self.url

    def location(self, path: str) -> str:
        return storage.join(self.url, path)

    def unchanged(self, files: Mapping[str, bytes]) -> set[str]:
        listed = storage.list_files(self.url)
        candidates = [path for path, data in files.items() if listed.get(path) == len(data)]
        found = storage.read_many(self.url, candidates)
        return {path for path, data in found.items() if not isinstance(data, StorageError) and data == files[path]}

    def write(self, files: Mapping[str, bytes], message: str) -> str:
        last = (CARD, RESULTS)
        for path in sorted(files, key=lambda path: (path in last, path)):
            storage.write_bytes(storage.join(self.url, path), files[path])
        return self.url
