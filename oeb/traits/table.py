"""The traits of a dataset's documents, computed once per dataset version and cached as
`traits.parquet`.

The cache holds the raw facts (`oeb.traits.document.Facts`), not the buckets, so other bucket edges
never need the PDFs again. It sits under the user's cache folder (`$XDG_CACHE_HOME/oeb/traits`, else
`~/.cache/oeb/traits`), one folder per key: the digest of `VERSION` (this code's), the dataset's
identity, manifest and commit, the manifest's bytes and, for a local folder, each document's and
gold's size and modification time (a Hub dataset's commit already names its files). A cache file that
cannot be read is computed again.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa  # type: ignore[import-untyped]
import pyarrow.parquet as pq  # type: ignore[import-untyped]

from oeb import _json, storage
from oeb.errors import OebError, StorageError
from oeb.traits import buckets
from oeb.traits.document import PDFIUM, Facts, largest_array, leaves, pdf_facts, schema_depth
from oeb.traits.language import UNKNOWN

if TYPE_CHECKING:
    from oeb.dataset import Dataset

log = logging.getLogger(__name__)

VERSION = "1"
"""Changed whenever what a fact means or how it is read changes: older caches are then not used."""
BUILTIN = ("pages", "text_layer", "language", "gold_values", "array_items", "schema_depth", "suite")
DIGITAL_SHARE, SCANNED_SHARE = 0.9, 0.1
"""A document is `digital` when at least 90 % of its pages read carry a text layer, `scanned` when at
most 10 % do, else `mixed`."""
_BATCH = 32
_SCHEMA = pa.schema(
    [
        ("doc_id", pa.string()),
        ("pages", pa.int64()),
        ("text_pages", pa.int64()),
        ("read_pages", pa.int64()),
        ("language", pa.string()),
        ("gold_values", pa.int64()),
        ("array_items", pa.int64()),
        ("schema_depth", pa.int64()),
        ("damaged", pa.bool_()),
    ]
)


def text_layer(facts: Facts) -> str:
    """`digital`, `scanned` or `mixed` from the share of pages read that carry a text layer."""
    if facts.text_pages is None or not facts.read_pages:
        return UNKNOWN
    share = facts.text_pages / facts.read_pages
    return "digital" if share >= DIGITAL_SHARE else "scanned" if share <= SCANNED_SHARE else "mixed"


@dataclass(frozen=True)
class Traits:
    """Per document (by id) its label for each trait, the traits in order (the built-in ones, then the
    manifest's own columns), the bucket edges used and the documents whose PDF could not be read."""

    values: dict[str, dict[str, str]]
    names: tuple[str, ...]
    edges: dict[str, tuple[int, ...]]
    damaged: tuple[str, ...]

    def check(self, trait: str) -> None:
        """A one-line UsageError naming the traits there are, for one there is not."""
        if trait not in self.names:
            from oeb.errors import UsageError

            raise UsageError(f"no trait {trait!r}; the traits are {', '.join(self.names)}")

    def labels(self, trait: str) -> list[str]:
        """The trait's possible values in order: a counted trait's buckets (every one, empty or not),
        another's values seen among the documents, sorted; `unknown` last when a document has it."""
        seen = {values[trait] for values in self.values.values()}
        ordered = buckets.labels(trait, self.edges) if trait in buckets.COUNTED else sorted(seen - {UNKNOWN})
        return [*ordered, *([UNKNOWN] if UNKNOWN in seen else [])]

    def warnings(self) -> list[str]:
        """One line per damaged PDF."""
        return [f"the PDF of {doc_id} cannot be read; its PDF traits are unknown" for doc_id in self.damaged]


def document_traits(
    dataset: Dataset,
    edges: Mapping[str, tuple[int, ...]] | None = None,
    *,
    cached: bool = True,
    pdfium: AbstractContextManager[Any] = PDFIUM,
) -> Traits:
    """Every document's traits: the facts from the cache (or computed and cached), bucketed by `edges`
    (`buckets.parse`), with the manifest's suite and its own columns. `pdfium`: the lock every PDFium
    call holds (a caller that uses PDFium in other threads gives its own)."""
    edges = dict(edges or buckets.DEFAULT_EDGES)
    facts = _cached_facts(dataset, pdfium) if cached else _facts(dataset, pdfium)
    extra = [name for name in dict.fromkeys(k for row in dataset.rows for k in row.extra) if name not in BUILTIN]
    values: dict[str, dict[str, str]] = {}
    for row in dataset.rows:
        fact = facts[row.doc_id]
        values[row.doc_id] = {
            "pages": buckets.bucket("pages", fact.pages, edges),
            "text_layer": text_layer(fact),
            "language": fact.language,
            "gold_values": buckets.bucket("gold_values", fact.gold_values, edges),
            "array_items": buckets.bucket("array_items", fact.array_items, edges),
            "schema_depth": buckets.bucket("schema_depth", fact.schema_depth, edges),
            "suite": row.suite,
            **{name: _label(row.extra.get(name)) for name in extra},
        }
    damaged = tuple(row.doc_id for row in dataset.rows if facts[row.doc_id].damaged)
    return Traits(values, (*BUILTIN, *extra), edges, damaged)


def _label(value: Any) -> str:
    """A manifest cell as a trait value: text as it is, other values as JSON, null as `unknown`."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return UNKNOWN
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)


def _facts(dataset: Dataset, pdfium: AbstractContextManager[Any] = PDFIUM) -> dict[str, Facts]:
    """Read every document and gold (in concurrent batches) and compute its facts."""
    result: dict[str, Facts] = {}
    rows = dataset.rows
    for start in range(0, len(rows), _BATCH):
        batch = rows[start : start + _BATCH]
        pdfs = [row.doc_path for row in batch if row.doc_path.lower().endswith(".pdf")]
        contents = dataset.contents([*pdfs, *(row.gt_path for row in batch)])
        for row in batch:
            data = contents.get(row.doc_path)
            pages, text_pages, read, language, damaged = pdf_facts(data if isinstance(data, bytes) else None, pdfium)
            gold = _gold(contents.get(row.gt_path))
            result[row.doc_id] = Facts(
                pages=pages,
                text_pages=text_pages,
                read_pages=read,
                language=language,
                gold_values=None if gold is None else leaves(gold),
                array_items=None if gold is None else largest_array(gold),
                schema_depth=schema_depth(row.schema),
                damaged=damaged,
            )
    return result


def _gold(content: bytes | OebError | None) -> Any:
    """A gold file's JSON value, None when there is none or it is not JSON (a dataset without gold)."""
    if not isinstance(content, bytes):
        return None
    try:
        return _json.loads(content.decode("utf-8-sig"))
    except ValueError:
        return None


def cache_folder() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "oeb" / "traits"


def cache_key(dataset: Dataset) -> str:
    """The digest naming a dataset version's cached facts (see the module's docstring)."""
    parts: list[Any] = [VERSION, dataset.identity, dataset.manifest, dataset.commit]
    if dataset.commit is None:
        try:
            manifest = storage.read_bytes(storage.join(dataset.location, dataset.manifest))
            parts.append(hashlib.sha256(manifest).hexdigest())
        except StorageError:
            parts.append(None)
        if storage.is_local(dataset.location):
            parts.append(_stats(Path(dataset.location), [p for r in dataset.rows for p in (r.doc_path, r.gt_path)]))
    return hashlib.sha256(json.dumps(parts).encode()).hexdigest()[:32]


def _stats(root: Path, paths: Sequence[str]) -> list[Any]:
    result: list[Any] = []
    for path in paths:
        try:
            stat = (root / path).stat()
            result.append([path, stat.st_size, stat.st_mtime_ns])
        except OSError:
            result.append([path, None])
    return result


def cache_path(dataset: Dataset) -> Path:
    return cache_folder() / cache_key(dataset) / "traits.parquet"


def _cached_facts(dataset: Dataset, pdfium: AbstractContextManager[Any]) -> dict[str, Facts]:
    """The facts from traits.parquet when it holds every document, else computed and written there."""
    path = cache_path(dataset)
    ids = {row.doc_id for row in dataset.rows}
    try:
        table = pq.read_table(path, schema=_SCHEMA)
        facts = {record.pop("doc_id"): Facts(**record) for record in table.to_pylist()}
        if ids <= facts.keys():
            return facts
    except (OSError, ValueError, TypeError, pa.ArrowException):
        pass  # missing or unreadable: computed again below
    facts = _facts(dataset, pdfium)
    table = pa.Table.from_pylist([{"doc_id": doc_id, **vars(fact)} for doc_id, fact in facts.items()], _SCHEMA)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(f".traits-{os.getpid()}.parquet")
        pq.write_table(table, partial)
        partial.replace(path)
    except OSError as error:  # a read-only home: the traits are still right, only not kept
        log.warning("oeb: the document traits could not be cached at %s (%s)", path, error)
    return facts
