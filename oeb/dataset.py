"""A dataset is a URL plus a manifest (docs/datasets.md): checked rows, their files, and the revision.

`open_dataset` runs the manifest checks (docs/datasets.md, checks 1-9) and returns the rows;
`check_dataset` adds the file checks (10 and 11) that `oeb check` and every plan run. The URL is a
folder, `file://`, `s3://bucket/prefix` (read through `oeb.storage`) or `hf://datasets/org/name[@revision]`
(read through the Hub's cache at a pinned commit, file by file).
"""

from __future__ import annotations

import hashlib
import io
import json
import logging
import os
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from oeb import _json, storage
from oeb._manifest import OTHER_SUITE, REQUIRED_COLUMNS, Row, is_goldless, normalised_manifest_path, rows_from_table
from oeb.errors import (
    DatasetNotFoundError,
    DatasetRefused,
    DocumentMissingError,
    GoldError,
    HubError,
    ManifestError,
    NoGold,
    OebError,
    StorageFormatError,
    StorageNotFoundError,
)

__all__ = [
    "DEFAULT_MANIFEST",
    "OTHER_SUITE",
    "REQUIRED_COLUMNS",
    "SAMPLE_DATASET",
    "Dataset",
    "Row",
    "check_dataset",
    "open_dataset",
]

SAMPLE_DATASET = str(Path(__file__).parent / "data" / "sample")
"""The small dataset shipped inside the package: the default of `oeb check`, usable offline."""

DEFAULT_MANIFEST = "manifest.parquet"
_GOLD_BATCH = 64
_PDF_BATCH = 16
_EXAMPLES_SHOWN = 3


class _Files(Protocol):
    """Where a dataset's files come from: storage under a URL, or a pinned Hub snapshot."""

    @property
    def root(self) -> str: ...

    @property
    def missing_fix(self) -> str: ...

    def listing(self) -> frozenset[str]: ...

    def read_many(self, paths: Sequence[str]) -> dict[str, bytes | OebError]: ...

    def local_path(self, path: str) -> Path: ...


@dataclass(frozen=True)
class _StorageFiles:
    """A dataset folder on local disk or object storage."""

    root: str
    missing_fix: str = "add the files, or fix doc_path in the manifest"

    def listing(self) -> frozenset[str]:
        return frozenset(storage.list_files(self.root))

    def read_many(self, paths: Sequence[str]) -> dict[str, bytes | OebError]:
        return dict(storage.read_many(self.root, paths))

    def local_path(self, path: str) -> Path:
        """The file itself on local disk; elsewhere a fresh copy under the user's cache folder."""
        url = storage.join(self.root, path)
        if storage.is_local(url):
            return storage.local_path(url)
        cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "oeb" / "documents"
        copy = cache / hashlib.sha256(self.root.encode()).hexdigest()[:16] / path
        storage.write_bytes(str(copy), storage.read_bytes(url))
        return copy


@dataclass(frozen=True)
class Dataset:
    """An opened dataset whose manifest passed its checks.

    `url` is the dataset as given; `identity` and `commit` are what a run records (`settings()`):
    a local folder as its resolved path, an S3 URL as given, a Hub dataset without its revision plus
    the commit it resolved to. Files are read at `location` (for the Hub: the pinned commit).
    """

    url: str
    manifest: str
    identity: str
    commit: str | None
    location: str
    rows: tuple[Row, ...]
    _files: _Files = field(repr=False, compare=False)
    _pages: dict[str, int | None] = field(default_factory=dict, repr=False, compare=False)
    """Page counts already read, by doc_path: the plan's estimate and every system's grading of one
    run share them, so each PDF is read once per run, not once per system."""
    goldless: bool = False
    """The manifest names no gold (`oeb dataset init`): runs predict, grading waits for a drafted gold."""

    def no_gold(self) -> NoGold:
        """The one line saying this dataset has no gold yet, and what to run next."""
        return NoGold(
            f"{self.url} has no gold yet (a gold-less dataset); run two or more systems over it, then draft "
            "the gold from their answers: oeb gold draft RUN RUN ... --out DATASET (docs/own-documents.md)"
        )

    def settings(self) -> dict[str, str]:
        """The settings.json keys naming the dataset: `dataset`, `manifest`, for the Hub `dataset_commit`."""
        named = {"dataset": self.identity, "manifest": self.manifest}
        return named | ({"dataset_commit": self.commit} if self.commit else {})

    def suites(self) -> dict[str, int]:
        """Rows per suite, in order of first appearance."""
        return dict(Counter(row.suite for row in self.rows))

    def document_url(self, row: Row) -> str:
        """Where the row's document is, as a URL under the dataset (for messages naming a missing one)."""
        return storage.join(self.location, row.doc_path)

    def gold_url(self, row: Row) -> str:
        """Where the row's gold file is, as a URL under the dataset (for messages naming it)."""
        return storage.join(self.location, row.gt_path)

    def document(self, row: Row) -> Path:
        """A local file holding the row's document, for a system that uploads a file."""
        return self._files.local_path(row.doc_path)

    def page_counts(self, rows: Sequence[Row]) -> dict[str, int | None]:
        """Each row's PDF page count by doc_id, read in concurrent batches; None where it cannot be
        known (no such file, not a `.pdf`, a PDF pypdf cannot read), so a broken document stops nothing.
        Each PDF is read once per opened dataset (a run's snapshot of it)."""
        unread = [row for row in rows if row.doc_path not in self._pages]
        for start in range(0, len(unread), _PDF_BATCH):
            batch = unread[start : start + _PDF_BATCH]
            contents = self._files.read_many([row.doc_path for row in batch if row.doc_path.lower().endswith(".pdf")])
            for row in batch:
                content = contents.get(row.doc_path)
                self._pages[row.doc_path] = _pdf_pages(content) if isinstance(content, bytes) else None
        return {row.doc_id: self._pages[row.doc_path] for row in rows}

    def page_sizes(self, rows: Sequence[Row]) -> dict[str, list[tuple[float, float]] | None]:
        """Each row's PDF page sizes (points, as displayed) by doc_id; None where it cannot be known."""
        sizes: dict[str, list[tuple[float, float]] | None] = {}
        for start in range(0, len(rows), _PDF_BATCH):
            batch = rows[start : start + _PDF_BATCH]
            contents = self.contents([row.doc_path for row in batch if row.doc_path.lower().endswith(".pdf")])
            for row in batch:
                content = contents.get(row.doc_path)
                sizes[row.doc_id] = _pdf_sizes(content) if isinstance(content, bytes) else None
        return sizes

    def contents(self, paths: Sequence[str]) -> dict[str, bytes | OebError]:
        """The bytes of files of the dataset by path, read concurrently; an error in place of each one
        that cannot be read (the document traits read PDFs and golds this way)."""
        return self._files.read_many(paths)

    def missing_documents(self, rows: Sequence[Row] | None = None) -> tuple[Row, ...]:
        """The rows (all by default) whose document file does not exist; one listing of the dataset."""
        present = self._files.listing()
        return tuple(row for row in (self.rows if rows is None else rows) if row.doc_path not in present)

    def check_documents(self, rows: Sequence[Row] | None = None) -> None:
        """Step 10: refuse when any of the rows (all by default) has no document file."""
        missing = self.missing_documents(rows)
        if missing:
            examples = ", ".join(f"{row.doc_id}: {self.document_url(row)}" for row in missing[:_EXAMPLES_SHOWN])
            more = f" and {len(missing) - _EXAMPLES_SHOWN} more" if len(missing) > _EXAMPLES_SHOWN else ""
            count = f"{len(missing)} document file{'s' if len(missing) > 1 else ''}"
            raise DocumentMissingError(f"{count} missing ({examples}{more}); {self._files.missing_fix}")

    def golds(self, rows: Sequence[Row] | None = None) -> Iterator[tuple[Row, dict[str, Any]]]:
        """The gold extraction of each row (all by default), read in concurrent batches."""
        rows = self.rows if rows is None else rows
        if self.goldless:
            raise self.no_gold()
        for start in range(0, len(rows), _GOLD_BATCH):
            batch = rows[start : start + _GOLD_BATCH]
            contents = self._files.read_many([row.gt_path for row in batch])
            for row in batch:
                yield row, self._gold(row, contents[row.gt_path])

    def gold(self, row: Row) -> dict[str, Any]:
        """One row's gold extraction."""
        if self.goldless:
            raise self.no_gold()
        return self._gold(row, self._files.read_many([row.gt_path])[row.gt_path])

    def check_golds(self) -> None:
        """Step 11: every row's gold, even when a run selects a few, reads as a JSON object (a gold-less
        dataset has none to read)."""
        if self.goldless:
            return
        for _ in self.golds():
            pass

    def _gold(self, row: Row, content: bytes | OebError) -> dict[str, Any]:
        """Parse a gold file; a BOM is accepted (the reference refuses it, see the README)."""
        if isinstance(content, StorageNotFoundError):
            raise self._gold_error(row, "no such file")
        if isinstance(content, OebError):
            raise content
        try:
            gold = _json.loads(content.decode("utf-8-sig"))
        except UnicodeDecodeError as error:
            raise self._gold_error(row, f"not UTF-8 ({error})") from error
        except json.JSONDecodeError as error:
            raise self._gold_error(row, f"not JSON ({error})") from error
        if not isinstance(gold, dict):
            kind = "list" if isinstance(gold, list) else type(gold).__name__
            raise self._gold_error(row, f"it holds a JSON {kind} where a JSON object, the extraction, is required")
        return gold

    def _gold_error(self, row: Row, reason: str) -> GoldError:
        return GoldError(
            f"the gold of {row.doc_id} ({self.gold_url(row)}) cannot be read: {reason}; field_matching reads "
            "each gold as a JSON object, so fix the file (or this dataset holds another kind of gold)"
        )


FOLDER_SCHEMES = ("file", "local", "s3", "hf")
"""Where a dataset a run folder names may be: on this machine, on S3, on the Hub. Never a URL to fetch."""


def named_by_folder(dataset: Any, folder: str, flag: str = "--dataset URL") -> str:
    """The dataset a run folder's settings name, refused in one line (`DatasetRefused`) unless it is
    a local path, an s3:// prefix or an hf:// address: a folder from a stranger must not make oeb
    fetch a URL of its choice (`flag` is how the user names the dataset instead)."""
    scheme, separator, _ = dataset.partition("://") if isinstance(dataset, str) else ("", "", "")
    if not isinstance(dataset, str) or not dataset or (separator and scheme.lower() not in FOLDER_SCHEMES):
        raise DatasetRefused(
            f"{folder} names the dataset {dataset!r}, which oeb does not open on a run folder's word (only a "
            f"local folder, s3:// or hf://); if you trust it, name it yourself: {flag}"
        )
    return dataset


def open_dataset(url: str, manifest: str = DEFAULT_MANIFEST) -> Dataset:
    """Open a dataset and check its manifest (docs/datasets.md, checks 1-9); no document is read."""
    manifest = normalised_manifest_path(manifest)
    if url.startswith("hf://"):
        return _open_hub(url, manifest)
    files = _StorageFiles(str(storage.local_path(url)) if storage.is_local(url) else url.rstrip("/"))
    if not storage.is_dir(files.root):
        raise DatasetNotFoundError(
            f"no dataset folder at {files.root}; give a folder, an s3:// prefix or {_hub_form()}"
        )
    manifest_url = storage.join(files.root, manifest)
    try:
        table = storage.read_parquet(manifest_url)
    except StorageNotFoundError as error:
        raise _missing_manifest(manifest_url) from error
    except StorageFormatError as error:
        raise ManifestError(f"{error}; a manifest is a parquet file") from error
    identity = str(Path(files.root).resolve()) if storage.is_local(url) else files.root
    rows = rows_from_table(table, manifest_url)
    return Dataset(url, manifest, identity, None, files.root, rows, files, goldless=is_goldless(table))


def check_dataset(url: str, manifest: str = DEFAULT_MANIFEST) -> Dataset:
    """Every check of docs/datasets.md, in order: the manifest, then every document file, then every gold."""
    dataset = open_dataset(url, manifest)
    dataset.check_documents()
    dataset.check_golds()
    return dataset


def _hub_form() -> str:
    from oeb import _hub  # huggingface_hub costs about a second to import: only for Hub datasets

    return _hub.ACCEPTED_FORM


def _open_hub(url: str, manifest: str) -> Dataset:
    from oeb import _hub

    snapshot = _hub.pin(_hub.parse_address(url))
    if manifest not in snapshot.files:
        if snapshot.cached_only:
            raise HubError(f"the manifest {manifest} of {snapshot.root} cannot be read: {snapshot.missing_fix}")
        raise _missing_manifest(f"{snapshot.root}/{manifest}")
    manifest_url = f"{snapshot.root}/{manifest}"
    try:
        table = storage.read_parquet(str(snapshot.local_path(manifest)))
    except StorageFormatError as error:
        raise ManifestError(f"{manifest_url} is not a parquet file; a manifest is a parquet file") from error
    rows = rows_from_table(table, manifest_url)
    return Dataset(
        url, manifest, snapshot.address.url, snapshot.commit, snapshot.root, rows, snapshot, goldless=is_goldless(table)
    )


def _pdf_pages(data: bytes) -> int | None:
    """The number of pages pypdf finds (the page tree, not the declared /Count); None if it finds none."""
    import pypdf  # here: importing it takes about a second, and only grading a priced run counts pages

    logging.getLogger("pypdf").setLevel(logging.ERROR)  # its warnings about sloppy PDFs mean nothing here
    try:
        return len(pypdf.PdfReader(io.BytesIO(data)).pages) or None
    except Exception:  # a third-party parser on whatever file a dataset holds: unreadable means unknown
        return None


def _pdf_sizes(data: bytes) -> list[tuple[float, float]] | None:
    """Each page's displayed width and height in points (crop box, rotation applied); None if unreadable."""
    import pypdf

    logging.getLogger("pypdf").setLevel(logging.ERROR)
    try:
        sizes = []
        for page in pypdf.PdfReader(io.BytesIO(data)).pages:
            width, height = float(page.cropbox.width), float(page.cropbox.height)
            sizes.append((height, width) if (page.rotation or 0) % 180 else (width, height))
        return sizes or None
    except Exception:  # a third-party parser on whatever file a dataset holds: unreadable means unknown
        return None


def _missing_manifest(manifest_url: str) -> ManifestError:
    return ManifestError(
        f"no manifest at {manifest_url}; a manifest is a parquet file inside the dataset with one row per "
        f"document and the columns {', '.join(REQUIRED_COLUMNS)} (pick another --manifest or dataset)"
    )
