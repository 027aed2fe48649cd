"""`oeb report --grounding`: per run with citations, how often its citations point where the gold
value is printed, crossed with its verdicts (docs/grounding.md; the categories and figures are
`oeb.grounding.verdicts`'). The evidence is oeb's locator on the dataset's PDFs, read once per
document for every run; each figure has a 95% bootstrap interval over documents.
"""

from __future__ import annotations

import hashlib
import logging
import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa  # type: ignore[import-untyped]
import pyarrow.parquet as pq  # type: ignore[import-untyped]

from oeb import storage
from oeb.grounding.adjudicated import with_entries
from oeb.grounding.cite import SCHEMA, address_of, leaves
from oeb.grounding.located import Job, locate_all
from oeb.grounding.verdicts import CATEGORIES, IOU, Box, Cited, Evidence, Tally, f1, ratio, tally
from oeb.locate import label_of
from oeb.report.confidence import invalid, read_grounding
from oeb.report.fields import fold, regraded_into
from oeb.report.paired import RESAMPLES, document_draws
from oeb.report.runs import Run
from oeb.run.grade.results import SCORER

if TYPE_CHECKING:
    from oeb.dataset import Dataset, Row
    from oeb.gold.entries import Adjudications

log = logging.getLogger("oeb.report")
LEVELS = ("box", "page")
FIGURES = ("precision", "recall", "f1")


def document_evidence(dataset: Dataset, doc_id: str) -> dict[str, Evidence]:
    """Each gold value's printed places in one document, by address as the verdicts write it (none
    for a document that is not a readable PDF: every value of it is unverifiable)."""
    return documents_evidence(dataset, [doc_id]).get(doc_id, {})


def documents_evidence(dataset: Dataset, doc_ids: Sequence[str]) -> dict[str, dict[str, Evidence]]:
    """Each document's evidence, located afresh (`oeb.grounding.located`: a process per core when
    there are many); a document that is no readable PDF has none."""
    rows = {row.doc_id: row for row in dataset.rows}
    wanted = [rows[doc_id] for doc_id in doc_ids if doc_id in rows and rows[doc_id].doc_path.lower().endswith(".pdf")]
    evidence: dict[str, dict[str, Evidence]] = {doc_id: {} for doc_id in doc_ids}
    evidence.update(locate_all(_jobs(dataset, wanted), len(wanted)))
    return evidence


_READ_AHEAD = 64
"""Documents read from the dataset at once for locating (their PDFs and golds)."""


def _jobs(dataset: Dataset, rows: Sequence[Row]) -> Iterator[Job]:
    for start in range(0, len(rows), _READ_AHEAD):
        batch = rows[start : start + _READ_AHEAD]
        contents = dataset.contents([row.doc_path for row in batch])
        for row, gold in dataset.golds(batch):
            data = contents.get(row.doc_path)
            if isinstance(data, bytes):
                values = [(address_of(path), value) for path, value in leaves(gold)]
                yield row.doc_id, data, values, {fold(address): label_of(address) for address, _ in values}


EVIDENCE_VERSION = "3"
"""Changed whenever what the evidence means or how it is found changes: older caches are not used."""
_EVIDENCE_SCHEMA = pa.schema([SCHEMA.field(name) for name in ("doc_id", "address", "page", "x0", "y0", "x1", "y1")])
"""The evidence cache: grounding.parquet's place columns, one row per printed place (page null: none)."""


def evidence_cache(dataset: Dataset) -> Path:
    """Where a dataset version's located evidence is kept: beside the document traits' cache, under
    the same key (this code's version, the dataset's identity, its files' sizes and times)."""
    from oeb.traits.table import cache_folder, cache_key

    key = hashlib.sha256(f"{EVIDENCE_VERSION}|{cache_key(dataset)}".encode()).hexdigest()[:32]
    return cache_folder().parent / "grounding" / key / "evidence.parquet"


def evidence_of(dataset: Dataset, doc_ids: Sequence[str]) -> dict[str, dict[str, Evidence]]:
    """Each document's evidence, from the cache where it holds the document, else located (with the
    text layer read once) and added to the cache; a cache that cannot be read or written is skipped."""
    path = evidence_cache(dataset)
    found: dict[str, dict[str, list[tuple[int, Box]]]] = {}
    try:
        table = pq.read_table(path, schema=_EVIDENCE_SCHEMA)
        for doc_id, address, page, *box in zip(*(column.to_pylist() for column in table.columns), strict=True):
            places = found.setdefault(doc_id, {}).setdefault(address, [])
            if page is not None:
                places.append((page, tuple(box)))
    except (OSError, ValueError, TypeError, pa.ArrowException):
        found = {}
    evidence = {doc_id: {a: Evidence(tuple(p)) for a, p in by.items()} for doc_id, by in found.items()}
    missing = [doc_id for doc_id in doc_ids if doc_id not in evidence]
    if not missing:
        return evidence
    evidence.update(documents_evidence(dataset, missing))
    rows: list[tuple[Any, ...]] = [
        (doc_id, address, page, *box)
        for doc_id, by in evidence.items()
        for address, held in by.items()
        for page, box in held.places
    ]
    rows += [
        (doc_id, address, None, None, None, None, None)
        for doc_id, by in evidence.items()
        for address, held in by.items()
        if not held.places
    ]
    columns = list(zip(*rows, strict=True)) if rows else [()] * len(_EVIDENCE_SCHEMA)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(f".evidence-{os.getpid()}.parquet")
        pq.write_table(pa.Table.from_arrays([list(column) for column in columns], schema=_EVIDENCE_SCHEMA), partial)
        partial.replace(path)
    except OSError as error:  # a read-only home: the figures are still right, only not kept
        log.warning("oeb: the located evidence could not be cached at %s (%s)", path, error)
    return evidence


def _cited(run: Run) -> dict[tuple[str, str], Cited] | None:
    table = read_grounding(run, ["doc_id", "address", "page", "x0", "y0", "x1", "y1"])
    if table is None or table["page"].null_count == table.num_rows:
        return None
    cited = {}
    for row in table.to_pylist():
        if row["page"] is None:
            continue
        box = None if row["x0"] is None else (row["x0"], row["y0"], row["x1"], row["y1"])
        cited[(row["doc_id"], row["address"])] = Cited(row["page"], box)
    return cited


def cites_values(run: Run) -> bool:
    """Whether the run's system cited a page for any value (its grounding.parquet says so)."""
    return _cited(run) is not None


class _Counted:
    """A cited run's tallies per scored document, then its figures' bootstrap draws: each block of
    draws (`add`) is shared by every run with as many documents, drawn once for all of them."""

    def __init__(self, run: Run, documents: list[str], tallies: list[Tally]) -> None:
        self.run, self.documents, self.tallies = run, documents, tallies
        self.total = Tally()
        for one in tallies:
            self.total.categories.update(one.categories)
            for name in ("unverifiable", "cited", "right_box", "right_page", "gold"):
                setattr(self.total, name, getattr(self.total, name) + getattr(one, name))
        self.vectors = {
            name: np.asarray([getattr(t, name) for t in tallies], dtype=np.float64)
            for name in ("cited", "gold", "right_box", "right_page")
        }
        self.draws: dict[tuple[str, str], list[Any]] = {(level, name): [] for level in LEVELS for name in FIGURES}

    def add(self, block: Any) -> None:
        """One block of draws (rows: how often each document was drawn, as float64): each figure
        computed on each row."""
        cited, gold = block @ self.vectors["cited"], block @ self.vectors["gold"]
        for level in LEVELS:
            right = block @ self.vectors[f"right_{level}"]
            precision, recall = right / np.maximum(cited, 1), right / np.maximum(gold, 1)
            self.draws[(level, "precision")].append(precision)
            self.draws[(level, "recall")].append(recall)
            both = precision + recall
            f1_draw = np.where(both > 0, 2 * precision * recall / np.maximum(both, 1e-12), 0.0)
            self.draws[(level, "f1")].append(f1_draw)

    def _interval(self, level: str, name: str) -> list[float | None]:
        kept = self.draws[(level, name)]
        needed = {"precision": self.total.cited, "recall": self.total.gold, "f1": 1}[name]
        if not kept or not needed:
            return [None, None]
        low, high = np.percentile(np.concatenate(kept), [2.5, 97.5])
        return [float(low), float(high)]

    def figures(self, threshold: float) -> dict[str, Any]:
        total = self.total
        levels: dict[str, Any] = {}
        for level in LEVELS:
            right = getattr(total, f"right_{level}")
            precision, recall = ratio(right, total.cited), ratio(right, total.gold)
            values = {"precision": precision, "recall": recall, "f1": f1(precision, recall)}
            levels[level] = {name: {"value": values[name], "ci95": self._interval(level, name)} for name in FIGURES}
        return {
            "label": self.run.label,
            "folder": self.run.url,
            "cited": True,
            "iou": threshold,
            "documents": len(self.documents),
            "verifiable": total.gold,
            "unverifiable": total.unverifiable,
            "cited_values": total.cited,
            **levels,
            "categories": {name: total.categories.get(name, 0) for name in CATEGORIES},
            **invalid(self.run),
        }


def _counted(
    run: Run, cited: dict[tuple[str, str], Cited], evidence: dict[str, dict[str, Evidence]], threshold: float
) -> _Counted:
    """The run's tallies per scored document."""
    verdicts = regraded_into(
        run, storage.read_parquet(storage.join(run.url, SCORER, "verdicts.parquet"), ["id", "address", "result"])
    )  # under the gold the report reads the run under, as `--by field` counts it
    documents = [line["id"] for line in run.lines if line.get("status") == "scored"]
    rows: dict[str, list[tuple[str, Cited | None, Evidence | None]]] = {doc_id: [] for doc_id in documents}
    for doc_id, address, result in zip(*(verdicts[k].to_pylist() for k in ("id", "address", "result")), strict=True):
        if doc_id in rows:
            rows[doc_id].append((result, cited.get((doc_id, address)), evidence.get(doc_id, {}).get(address)))
    return _Counted(run, documents, [tally(rows[doc_id], threshold) for doc_id in documents])


def _bootstrap(counted: Sequence[_Counted]) -> None:
    """Every run's draws: the documents drawn with replacement `RESAMPLES` times (seeded, so the
    same for every run with as many documents: drawn once for all of them)."""
    by_size: dict[int, list[_Counted]] = {}
    for one in counted:
        by_size.setdefault(len(one.documents), []).append(one)
    for size, group in by_size.items():
        for block in document_draws(size, RESAMPLES, (1 << 22) // max(1, size)):
            cells = block.astype(np.float64)  # once, not at every product
            for one in group:
                one.add(cells)


def grounding(
    runs: list[Run], dataset: Dataset, threshold: float = IOU, adjudications: Adjudications | None = None
) -> dict[str, Any]:
    """Every run's figures, the evidence located once per document for all of them (an adjudication
    file's evidence boxes in place of the located places: `oeb.grounding.adjudicated`)."""
    cites = [_cited(run) for run in runs]
    wanted = sorted(
        {doc_id for run, cited in zip(runs, cites, strict=True) if cited is not None for doc_id in run.doc_ids}
    )
    evidence = with_entries(evidence_of(dataset, wanted), adjudications.entries if adjudications else ())
    counted = [
        None if cited is None else _counted(run, cited, evidence, threshold)
        for run, cited in zip(runs, cites, strict=True)
    ]
    _bootstrap([one for one in counted if one is not None])
    return {
        "iou": threshold,
        "runs": [
            {"label": run.label, "folder": run.url, "cited": False} if one is None else one.figures(threshold)
            for run, one in zip(runs, counted, strict=True)
        ],
    }
