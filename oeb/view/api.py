"""What `oeb view`'s pages are drawn from: graded runs loaded as `oeb report` loads them, and the
answers of its JSON API (docs/diagnosing.md lists the routes and their keys).

Nothing heavy is read up front: opening reads what the leaderboard needs (scores and costs), and a
run's verdicts, the dataset and each PDF are read the first time a page asks for them, then kept. A
document is looked up by its id among the runs' documents and the dataset's manifest rows, never
joined into a path, so no id reaches outside the folders it belongs to.
"""

from __future__ import annotations

import contextlib
import threading
from collections import Counter, OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pyarrow as pa  # type: ignore[import-untyped]

from oeb import _json, storage
from oeb.errors import OebError, StorageNotFoundError, ViewNotFound
from oeb.report import leaderboard
from oeb.report.fields import field_rows, fold, row_json, run_verdicts, suites_of
from oeb.report.folders import load_folders
from oeb.report.runs import Run
from oeb.run.grade.results import SCORER
from oeb.view.pdf import PdfText, locate, render_page
from oeb.view.slices import Slicing

if TYPE_CHECKING:
    from oeb.dataset import Dataset, Row

SCALE = 1.5
"""Rendered pages are this many pixels per PDF point: the front end scales a location's box by it."""
_PDFS_KEPT = 16
"""Documents whose PDF and text stay in memory (a document page is opened, then its neighbours)."""


def _value(text: str | None) -> Any:
    """A verdict's raw value from its JSON text (verdicts.parquet keeps raw values as JSON)."""
    return None if text is None else _json.loads(text)


@dataclass
class View:
    """The runs `oeb view` serves, in the leaderboard's order, and what it has read of them so far."""

    runs: list[Run]
    board: dict[str, Any]
    audit: bool = False
    slicing: Slicing = field(default_factory=Slicing)
    _verdicts: dict[str, pa.Table] = field(default_factory=dict, repr=False)
    _dataset: Dataset | None = field(default=None, repr=False)
    _pdfs: OrderedDict[str, tuple[bytes, PdfText]] = field(default_factory=OrderedDict, repr=False)
    _findings: list[dict[str, Any]] | None = field(default=None, repr=False)
    _lock: threading.RLock = field(default_factory=threading.RLock, repr=False)

    @property
    def labels(self) -> list[str]:
        return [run.label for run in self.runs]

    @property
    def doc_ids(self) -> tuple[str, ...]:
        """The documents of the runs (they share one document set), in the first run's order."""
        return self.runs[0].doc_ids

    def run(self, label: str | None) -> Run:
        """The run of this label (as `oeb report` prints it); ViewNotFound for another."""
        for run in self.runs:
            if run.label == label:
                return run
        known = ", ".join(repr(known) for known in self.labels)
        raise ViewNotFound(f"no run labelled {label!r}; the runs are {known}")

    def check_document(self, doc_id: str) -> None:
        if doc_id not in self._known:
            raise ViewNotFound(f"no document {doc_id!r} in these runs")

    @property
    def _known(self) -> frozenset[str]:
        return frozenset(self.doc_ids)

    # -- the API's answers -------------------------------------------------------------------------

    def runs_json(self) -> list[dict[str, Any]]:
        """`GET /api/runs`: per run its label, folder and leaderboard row (latency included)."""
        return [{"label": row["system"], "folder": row["url"], **row} for row in self.board["rows"]]

    def fields_json(self, label: str | None, suite: str | None = None) -> list[dict[str, Any]]:
        """`GET /api/fields?run=LABEL[&suite=S]`: one row per folded field path, worst accuracy first."""
        run = self.run(label)
        if suite is not None and suite not in self.board["suites"]:
            raise ViewNotFound(f"no suite {suite!r}; the suites are {', '.join(self.board['suites'])}")
        rows = field_rows(self._all_verdicts(run), suite=suite, suites=suites_of(run))
        return [row_json(row) for row in rows]

    def document_json(self, label: str | None, doc_id: str) -> dict[str, Any]:
        """`GET /api/documents/DOC_ID?run=LABEL`: the document's verdicts, each with where its gold and
        predicted values stand on the PDF's pages."""
        run = self.run(label)
        self.check_document(doc_id)
        pdf = self._pdf(doc_id)
        text = pdf[1] if pdf else None
        verdicts = []
        found: dict[str, list[tuple[int, list[float]]]] = {}  # by raw JSON text: a value is looked for once
        for verdict in self._document_verdicts(run, doc_id):
            gold, pred = _value(verdict["gold_raw"]), _value(verdict["pred_raw"])
            locations: list[dict[str, Any]] = []
            if text is not None:
                for which, raw, value in (("gold", verdict["gold_raw"], gold), ("pred", verdict["pred_raw"], pred)):
                    if raw not in found:
                        found[raw] = [(place.page, list(place.bbox)) for place in _places(text, value)]
                    locations += [{"value": which, "page": page, "bbox": bbox} for page, bbox in found[raw]]
            verdicts.append(
                {
                    "address": verdict["address"],
                    "path": fold(verdict["address"]),
                    "gold": gold,
                    "pred": pred,
                    "result": verdict["result"],
                    "locations": locations,
                }
            )
        line = next(line for line in run.lines if line["id"] == doc_id)
        return {
            "doc_id": doc_id,
            "pages": text.page_count if text is not None else 0,
            "suite": suites_of(run)[doc_id],
            "status": line["status"],
            "accuracy": line.get("accuracy"),
            "error": line.get("error"),
            "verdicts": verdicts,
        }

    def schema_json(self, label: str | None, doc_id: str) -> dict[str, Any]:
        """`GET /api/schema/DOC_ID?run=LABEL`: the document's schema (its manifest row's) and, per folded
        field path, the count of each verdict there."""
        run = self.run(label)
        self.check_document(doc_id)
        counts: dict[str, Counter[str]] = {}
        for verdict in self._document_verdicts(run, doc_id):
            counts.setdefault(fold(verdict["address"]), Counter())[verdict["result"]] += 1
        return {
            "doc_id": doc_id,
            "schema": dict(self._row(doc_id).schema),
            "counts": {path: dict(kinds) for path, kinds in counts.items()},
        }

    def audit_json(self) -> list[dict[str, Any]]:
        """`GET /api/audit` (with --audit): the gold audit's findings, as `oeb audit --format json`."""
        if not self.audit:
            raise ViewNotFound("the gold audit is not shown; start oeb view with --audit")
        with self._lock:
            if self._findings is None:
                from oeb.report import audit

                found = audit.audit(self.runs, self.dataset(), audit.default_min_agree(len(self.runs)))
                self._findings = audit.findings_json(found)
            return self._findings

    def page_png(self, doc_id: str, page: int) -> bytes:
        """`GET /pages/DOC_ID/PAGE.png`: the page (from 1) rendered at `SCALE`."""
        self.check_document(doc_id)
        pdf = self._pdf(doc_id)
        if pdf is None or not 1 <= page <= pdf[1].page_count:
            count = 0 if pdf is None else pdf[1].page_count
            raise ViewNotFound(f"{doc_id} has no page {page} (it has {count})")
        return render_page(pdf[0], page, scale=SCALE)

    def page_count(self, doc_id: str) -> int:
        pdf = self._pdf(doc_id)
        return 0 if pdf is None else pdf[1].page_count

    # -- what is read on first use -----------------------------------------------------------------

    def dataset(self) -> Dataset:
        """The dataset the runs were graded against, at the commit they name (opened once)."""
        with self._lock:
            if self._dataset is None:
                from oeb.report.audit import dataset_of

                self._dataset = dataset_of(self.runs, None)
            return self._dataset

    def _row(self, doc_id: str) -> Row:
        for row in self.dataset().rows:
            if row.doc_id == doc_id:
                return row
        raise ViewNotFound(f"no document {doc_id!r} in the dataset {self.dataset().identity}")

    def _pdf(self, doc_id: str) -> tuple[bytes, PdfText] | None:
        """The document's PDF and its text layer, or None when its file is not a PDF."""
        with self._lock:
            if doc_id in self._pdfs:
                self._pdfs.move_to_end(doc_id)
                return self._pdfs[doc_id]
        row = self._row(doc_id)
        if not row.doc_path.lower().endswith(".pdf"):
            return None
        data = self.dataset().document(row).read_bytes()
        loaded = (data, PdfText(data))
        with self._lock:
            self._pdfs[doc_id] = loaded
            while len(self._pdfs) > _PDFS_KEPT:
                self._pdfs.popitem(last=False)
        return loaded

    def _all_verdicts(self, run: Run) -> pa.Table:
        """The run's verdicts.parquet (read once per run)."""
        with self._lock:
            if run.url not in self._verdicts:
                self._verdicts[run.url] = run_verdicts(run)
            return self._verdicts[run.url]

    def _document_verdicts(self, run: Run, doc_id: str) -> list[dict[str, Any]]:
        """One document's verdicts: the file is fetched whole (storage's retry policy needs it whole),
        and only the row groups that can hold the document are decoded."""
        url = storage.join(run.url, SCORER, "verdicts.parquet")
        try:
            table = storage.read_parquet(url, _DOCUMENT_COLUMNS, [("id", "==", doc_id)])
        except StorageNotFoundError:
            return []
        rows: list[dict[str, Any]] = table.to_pylist()
        return rows

    def warm(self) -> None:
        """Open the dataset now (the first document page need not wait for it); a failure is left for
        that page to report."""
        with contextlib.suppress(OebError):
            self.dataset()


_DOCUMENT_COLUMNS = ["address", "gold_raw", "pred_raw", "result"]


def _places(text: PdfText, value: Any) -> Sequence[Any]:
    """Where a scalar value stands on the pages; nothing for null, objects and arrays."""
    if value is None or isinstance(value, dict | list) or value == "":
        return ()
    return locate(text, value)


def open_view(urls: Sequence[str], *, audit: bool = False, all_runs: bool = False) -> View:
    """The runs of these graded folders (or folders of them), refused in one line as `oeb report`
    refuses them (different datasets, document sets or scorers), chosen and labelled as it does."""
    runs = load_folders(list(urls), all_runs=all_runs)
    board = leaderboard(runs)
    order = {row["url"]: number for number, row in enumerate(board["rows"])}
    return View(sorted(runs, key=lambda run: order[run.url]), board, audit)
