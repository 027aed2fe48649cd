"""What `oeb view`'s pages are drawn from: graded runs loaded as `oeb report` loads them, and the
answers of its JSON API (docs/diagnosing.md lists the routes and their keys).

Nothing heavy is read up front: opening reads what the leaderboard needs (scores and costs), and a
run's verdicts, the dataset and each PDF are read the first time a page asks for them, then kept. A
document is looked up by its id among the runs' documents and the dataset's manifest rows, never
joined into a path, so no id reaches outside the folders it belongs to.
"""

from __future__ import annotations

import contextlib
import json
import threading
from collections import Counter, OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pyarrow as pa  # type: ignore[import-untyped]

from oeb import storage
from oeb.errors import (
    DatasetNotFoundError,
    OebError,
    ReportMismatch,
    StorageFormatError,
    StorageNotFoundError,
    ViewNotFound,
)
from oeb.locate import PdfPages
from oeb.report import leaderboard
from oeb.report.fields import COLUMNS, field_rows, fold, regraded_into, row_json, suites_of
from oeb.report.folders import load_folders
from oeb.report.runs import Run
from oeb.run.grade.results import NO_PREDICTION, SCORER
from oeb.scoring import RESULTS
from oeb.view import document, paging
from oeb.view.labels import folder_name, setting, short_names
from oeb.view.paging import Query
from oeb.view.pdf import render_page
from oeb.view.slices import Slicing

if TYPE_CHECKING:
    from oeb.dataset import Dataset, Row
    from oeb.gold.entries import Adjudications

SCALE = 2.75
"""Rendered pages are this many pixels per PDF point (198 dpi): at least the 2.67 CSS pixels a point
of the 200% zoom, so the page stays sharp there on a common screen. A screen of more device pixels
than CSS pixels asks for as many times more (`scale=`, up to `MOST_SCALE`)."""
MOST_SCALE = 3 * SCALE
"""The sharpest a page is rendered: 200% on a screen of three device pixels a CSS pixel (fewer for a
page past the `MAX_PIXELS` guard at it)."""
_PNGS_KEPT = 32
"""Rendered pages (a document's page at a scale) kept in memory."""
_PDFS_KEPT = 16
"""Documents whose PDF and text stay in memory (a document page is opened, then its neighbours)."""
_PREPARED_KEPT = 16
"""Documents' located verdicts (per run) and rows (per run, or pair side by side) kept in memory: a
document's slices, boxes and verdicts are answered from them."""
BOX_COLUMNS = ["n", "side", "result", "address", "x0", "y0", "x1", "y1"]
"""An outlined error's row in `/api/boxes`: its verdict's place, which side's value, the verdict, its
address and the box in PDF points from the page's top-left."""
_RAW_SHOWN = 20_000
"""Characters of a record's raw answer a document's answer carries (the rest is in the run folder)."""


@dataclass
class View:
    """The runs `oeb view` serves, in the leaderboard's order, and what it has read of them so far."""

    runs: list[Run]
    board: dict[str, Any]
    audit: bool = False
    dataset_url: str | None = None
    slicing: Slicing = field(default_factory=Slicing)
    adjudications: Adjudications | None = None
    """The adjudication file the runs are shown under: its evidence boxes are the grounding's evidence."""
    _verdicts: dict[str, tuple[pa.Table, dict[str, tuple[int, int]]]] = field(default_factory=dict, repr=False)
    _dataset: Dataset | None = field(default=None, repr=False)
    _pdfs: OrderedDict[str, tuple[bytes, PdfPages]] = field(default_factory=OrderedDict, repr=False)
    _prepared: OrderedDict[tuple[str, ...], list[dict[str, Any]]] = field(default_factory=OrderedDict, repr=False)
    _findings: list[dict[str, Any]] | None = field(default=None, repr=False)
    _pngs: OrderedDict[tuple[str, int, float], bytes] = field(default_factory=OrderedDict, repr=False)
    _lock: threading.RLock = field(default_factory=threading.RLock, repr=False)

    @property
    def labels(self) -> list[str]:
        """The runs' names in URLs: short and stable (oeb.view.labels)."""
        return short_names(self.runs)

    @property
    def doc_ids(self) -> tuple[str, ...]:
        """The documents of the runs (they share one document set), in the first run's order."""
        return self.runs[0].doc_ids

    def run(self, label: str | None) -> Run:
        """The run of this name (its short name, its label as `oeb report` prints it, or its folder's
        name); ViewNotFound for another."""
        for names in (self.labels, [run.label for run in self.runs], [folder_name(run) for run in self.runs]):
            if label in names:
                return self.runs[names.index(label)]
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
        return [
            {"label": name, "report_label": run.label, "setting": setting(run), "folder": row["url"], **row}
            for name, run, row in zip(self.labels, self.runs, self.board["rows"], strict=True)
        ]

    def fields_json(self, label: str | None, suite: str | None = None) -> list[dict[str, Any]]:
        """`GET /api/fields?run=LABEL[&suite=S]`: one row per folded field path, worst accuracy first."""
        run = self.run(label)
        if suite is not None and suite not in self.board["suites"]:
            raise ViewNotFound(f"no suite {suite!r}; the suites are {', '.join(self.board['suites'])}")
        rows = field_rows(self._all_verdicts(run)[0].select(COLUMNS), suite=suite, suites=suites_of(run))
        return [row_json(row) for row in rows]

    def document_json(
        self, label: str | None, doc_id: str, query: Query | None = None, vs: str | None = None
    ) -> dict[str, Any]:
        """`GET /api/documents/DOC_ID?run=LABEL[&vs=LABEL][&kind=K][&field=PATH][&q=TEXT][&sort=S]
        [&offset=N][&limit=N]`: the document (its pages, status, record, schema nodes, the count of
        each verdict) and a slice of its verdicts (`oeb.view.paging`), each with both sides'
        canonical keys, where each value stands on the PDF (its best place, its status and how many
        other places print it) and the scorer's explanation of an error; with `vs`, a slice of
        rows, each run's verdict at one address side by side."""
        query = query or Query()
        run = self.run(label)
        self.check_document(doc_id)
        pages = self._pdf(doc_id)
        verdicts = self._verdicts_of(run, doc_id)
        runs = [run] if vs is None else [run, self.run(vs)]
        rows = self._cached(
            ("rows", *(run.url for run in runs), doc_id),
            lambda: paging.rows_of([self._verdicts_of(run, doc_id) for run in runs]),
        )
        head = {
            "doc_id": doc_id,
            "pages": pages[1].page_count if pages is not None else 0,
            "page_notes": [] if pages is None else document.page_notes(pages[1]),
            **self._run_head(run, doc_id, verdicts),
            "fields": document.fields_json(dict(self._row(doc_id).schema), (row["path"] for row in rows)),
            **paging.paths_json(row["path"] for row in rows),
        }
        if vs is not None:
            other = self.run(vs)
            head["vs"] = {
                "label": self.labels[self.runs.index(other)],
                **self._run_head(other, doc_id, self._verdicts_of(other, doc_id)),
            }
        kept = paging.chosen(rows, query)
        window = kept[query.offset : query.offset + query.limit]
        head |= {"total": len(rows), "matching": len(kept), "offset": query.offset}
        if vs is None:
            listed = paging.sliced((paging.shortened(row["sides"][0]) for row in window), paging.budget(head))
        else:
            shown = ({**row, "sides": [v and paging.shortened(v) for v in row["sides"]]} for row in window)
            listed = paging.sliced(shown, paging.budget(head))
        end = query.offset + len(listed)
        return {**head, "next": end if end < len(kept) else None, "verdicts" if vs is None else "rows": listed}

    def _run_head(self, run: Run, doc_id: str, verdicts: list[dict[str, Any]]) -> dict[str, Any]:
        """What a document answer says of one run's reading of it: status, accuracy, error, record,
        the count of each verdict."""
        line = next(line for line in run.lines if line["id"] == doc_id)
        return {
            "suite": suites_of(run)[doc_id],
            "status": status_of(line),
            "accuracy": line.get("accuracy"),
            "error": line.get("error"),
            "record": None if line["status"] == "scored" else self._record(run, doc_id),
            "counts": paging.counts(verdicts),
        }

    def verdict_json(self, label: str | None, doc_id: str, n: int) -> dict[str, Any]:
        """`GET /api/verdicts/DOC_ID?run=LABEL&n=N`: the document's verdict N (its place in the
        document's order, the `n` of a listed verdict) whole: its values as long as they are."""
        run = self.run(label)
        self.check_document(doc_id)
        verdicts = self._verdicts_of(run, doc_id)
        if not 0 <= n < len(verdicts):
            raise ViewNotFound(f"{doc_id} has no verdict {n} in {label} (it has {len(verdicts)})")
        return paging.shortened(verdicts[n], values=False, most=paging.WHOLE)

    def boxes_json(self, label: str | None, doc_id: str, page: int, offset: int = 0) -> dict[str, Any]:
        """`GET /api/boxes/DOC_ID?run=LABEL&page=P[&offset=N]`: where the run's errors stand on page P,
        one row per outlined value (`columns` names them), bounded as a document answer is."""
        run = self.run(label)
        self.check_document(doc_id)
        count = self.page_count(doc_id)
        if not 1 <= page <= count:
            raise ViewNotFound(f"{doc_id} has no page {page} (it has {count})")
        found = []
        for verdict in self._verdicts_of(run, doc_id):
            if verdict["result"] == "matched" or not verdict.get("located"):
                continue
            for side in ("gold", "pred"):
                at = verdict["located"][side]
                if at and at.get("page") == page and at.get("bbox"):
                    found.append([verdict["n"], side, verdict["result"], verdict["address"], *at["bbox"]])
        head = {"doc_id": doc_id, "page": page, "columns": BOX_COLUMNS, "total": len(found), "offset": offset}
        listed = paging.sliced(found[offset : offset + paging.MOST], paging.budget(head))
        end = offset + len(listed)
        return {**head, "next": end if end < len(found) else None, "boxes": listed}

    def _cached(self, key: tuple[str, ...], make: Callable[[], list[dict[str, Any]]]) -> list[dict[str, Any]]:
        """What `make` gives, made once for the last `_PREPARED_KEPT` keys asked for."""
        with self._lock:
            if key in self._prepared:
                self._prepared.move_to_end(key)
                return self._prepared[key]
        made = make()
        with self._lock:
            self._prepared[key] = made
            while len(self._prepared) > _PREPARED_KEPT:
                self._prepared.popitem(last=False)
        return made

    def _verdicts_of(self, run: Run, doc_id: str) -> list[dict[str, Any]]:
        """The run's verdicts of the document as its answers list them, each with its place `n`, both
        sides located (jointly, over the whole document: a slice shows the places the whole gives)
        and its citation."""
        return self._cached(("verdicts", run.url, doc_id), lambda: self._prepare(run, doc_id))

    def _prepare(self, run: Run, doc_id: str) -> list[dict[str, Any]]:
        pdf = self._pdf(doc_id)
        schema = dict(self._row(doc_id).schema)
        verdicts = document.verdicts_json(self._document_verdicts(run, doc_id), pdf[1] if pdf else None, schema)
        self._ground(run, doc_id, verdicts)
        return verdicts

    def _ground(self, run: Run, doc_id: str, verdicts: list[dict[str, Any]]) -> None:
        """Each verdict's `cited` place (page, bbox) and `grounding` category, when the run's system
        cited values (docs/grounding.md); the evidence is the report's: every place the locator
        finds the gold value printed."""
        from oeb.grounding.cite import sound
        from oeb.grounding.verdicts import Cited, category
        from oeb.report.grounding import document_evidence

        try:
            url = storage.join(run.url, SCORER, "grounding.parquet")
            columns = ["address", "page", "x0", "y0", "x1", "y1"]
            rows = sound(storage.read_parquet(url, columns, filters=[("doc_id", "==", doc_id)]))[0].to_pylist()
        except StorageNotFoundError:
            return
        except pa.ArrowException:  # columns of other types (a hand-made file): `oeb report` names it
            return
        cited = {
            row["address"]: Cited(
                row["page"], None if row["x0"] is None else (row["x0"], row["y0"], row["x1"], row["y1"])
            )
            for row in rows
            if row["page"] is not None
        }
        if not cited:
            return
        evidence = document_evidence(self.dataset(), doc_id)
        if self.adjudications is not None:  # the person's boxes, as `oeb report --grounding` takes them
            from oeb.grounding.adjudicated import with_entries

            evidence = with_entries({doc_id: evidence}, self.adjudications.entries).get(doc_id, {})
        for verdict in verdicts:
            place = cited.get(verdict["address"])
            if place is not None:
                verdict["cited"] = {
                    "page": place.page,
                    "bbox": None if place.box is None else [round(v, 1) for v in place.box],
                }
            verdict["grounding"] = category(verdict["result"], place, evidence.get(verdict["address"]))

    def documents_json(self, label: str | None) -> list[dict[str, Any]]:
        """`GET /api/documents?run=LABEL`: every document of the run, in its order, with its suite,
        page count (when grading recorded it), status (graded, failed, missing), accuracy and the
        count of each verdict."""
        run = self.run(label)
        suites = suites_of(run)
        rows = []
        for line in run.lines:
            doc_id = line["id"]
            entry: dict[str, Any] = dict(run.documents.get(doc_id) or {})
            rows.append(
                {
                    "doc_id": doc_id,
                    "suite": suites[doc_id],
                    "pages": entry.get("pages"),
                    "status": status_of(line),
                    "accuracy": line.get("accuracy"),
                    "counts": {kind: line.get(kind, 0) or 0 for kind in RESULTS},
                    "error": line.get("error"),
                }
            )
        return rows

    def _record(self, run: Run, doc_id: str) -> dict[str, Any] | None:
        """A document's record as the run saved it: its error, attempts and raw answer (its first
        `_RAW_SHOWN` characters as JSON text); None when the run saved none."""
        try:
            record = storage.read_json(storage.join(run.url, "records", f"{doc_id}.json"))
        except StorageNotFoundError:
            return None
        if not isinstance(record, dict):
            return None
        cost = record.get("cost")
        attempts = cost.get("attempts") if isinstance(cost, dict) else None
        raw = json.dumps(record["raw"], ensure_ascii=False) if record.get("raw") is not None else None
        return {
            "error": record.get("error"),
            "attempts": attempts,
            "raw": raw[:_RAW_SHOWN] if raw is not None else None,
            "raw_chars": len(raw) if raw is not None else 0,
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

    def calibration_json(self) -> dict[str, Any]:
        """`/api/calibration`: `oeb report --calibration --format json` over the runs shown, with each
        run's risk-coverage curve and reliability diagram (docs/grounding.md)."""
        from oeb.report.calibration import calibration

        answer = calibration(self.runs)
        for name, run in zip(self.labels, answer["runs"], strict=True):
            run["name"] = name
        return answer

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

    def page_png(self, doc_id: str, page: int, scale: float = SCALE) -> bytes:
        """`GET /pages/DOC_ID/PAGE.png[?scale=S]`: the page (from 1) rendered at `scale` pixels a
        point (at most what `MAX_PIXELS` allows, not below `SCALE`), kept per scale."""
        self.check_document(doc_id)
        key = (doc_id, page, scale)
        with self._lock:
            if key in self._pngs:
                self._pngs.move_to_end(key)
                return self._pngs[key]
        pdf = self._pdf(doc_id)
        if pdf is None or not 1 <= page <= pdf[1].page_count:
            count = 0 if pdf is None else pdf[1].page_count
            raise ViewNotFound(f"{doc_id} has no page {page} (it has {count})")
        png = render_page(pdf[0], page, scale=scale, smaller=1.5, least=SCALE)  # a sheet past A1: 1.5 px a point
        with self._lock:
            self._pngs[key] = png
            while len(self._pngs) > _PNGS_KEPT:
                self._pngs.popitem(last=False)
        return png

    def page_count(self, doc_id: str) -> int:
        pdf = self._pdf(doc_id)
        return 0 if pdf is None else pdf[1].page_count

    # -- what is read on first use -----------------------------------------------------------------

    def dataset(self) -> Dataset:
        """The dataset the runs were graded against, at the commit they name (opened once)."""
        with self._lock:
            if self._dataset is None:
                self._dataset = self._open_dataset()
            return self._dataset

    def _open_dataset(self) -> Dataset:
        """The runs' dataset where they name it, or where `--dataset` says it now is (a dataset
        that moved): refused in one line when it lacks a document of the runs."""
        from oeb.report.audit import dataset_of

        if self.dataset_url is None:
            try:
                return dataset_of(self.runs, None)
            except DatasetNotFoundError as error:  # the runs name it; the user may not know it moved
                raise DatasetNotFoundError(
                    f"{error} (the runs were graded against it: if it moved, give where it is now with "
                    "oeb view ... --dataset URL)"
                ) from None
        from oeb.dataset import DEFAULT_MANIFEST, open_dataset

        manifest = next((run.named("manifest") for run in self.runs if run.named("manifest")), DEFAULT_MANIFEST)
        opened = open_dataset(self.dataset_url, manifest)
        held = {row.doc_id for row in opened.rows}
        lacking = [doc_id for doc_id in self.doc_ids if doc_id not in held]
        if lacking:
            raise ReportMismatch(
                f"--dataset {self.dataset_url} lacks {len(lacking)} of the runs' documents (e.g. {lacking[0]!r}); "
                "give the dataset the runs were graded against"
            )
        return opened

    def _row(self, doc_id: str) -> Row:
        for row in self.dataset().rows:
            if row.doc_id == doc_id:
                return row
        raise ViewNotFound(f"no document {doc_id!r} in the dataset {self.dataset().identity}")

    def _pdf(self, doc_id: str) -> tuple[bytes, PdfPages] | None:
        """The document's PDF and its text layer, or None when its file is not a PDF."""
        with self._lock:
            if doc_id in self._pdfs:
                self._pdfs.move_to_end(doc_id)
                return self._pdfs[doc_id]
        row = self._row(doc_id)
        if not row.doc_path.lower().endswith(".pdf"):
            return None
        data = self.dataset().document(row).read_bytes()
        loaded = (data, PdfPages(data))
        with self._lock:
            self._pdfs[doc_id] = loaded
            while len(self._pdfs) > _PDFS_KEPT:
                self._pdfs.popitem(last=False)
        return loaded

    def _all_verdicts(self, run: Run) -> tuple[pa.Table, dict[str, tuple[int, int]]]:
        """The run's verdicts.parquet, read once per run (the fields page and every document page
        share it), sorted by document, with each document's rows (offset, count)."""
        with self._lock:
            if run.url not in self._verdicts:
                url = storage.join(run.url, SCORER, "verdicts.parquet")
                try:
                    table = storage.read_parquet(url, ["id", *_DOCUMENT_COLUMNS])
                except StorageNotFoundError:
                    table = pa.table({name: pa.array([], pa.string()) for name in ["id", *_DOCUMENT_COLUMNS]})
                except StorageFormatError:  # graded before verdicts named the adjudication that changed them
                    table = storage.read_parquet(url, ["id", *_DOCUMENT_COLUMNS[:-1]])
                    table = table.append_column("adjudication", pa.nulls(table.num_rows, pa.string()))
                table = regraded_into(run, table).sort_by("id")  # under the gold the view reads (stable)
                spans: dict[str, tuple[int, int]] = {}
                for offset, doc_id in enumerate(table.column("id").to_pylist()):
                    start, count = spans.get(doc_id, (offset, 0))
                    spans[doc_id] = (start, count + 1)
                self._verdicts[run.url] = (table, spans)
            return self._verdicts[run.url]

    def _document_verdicts(self, run: Run, doc_id: str) -> list[dict[str, Any]]:
        """One document's verdicts, in the order grading wrote them."""
        table, spans = self._all_verdicts(run)
        if doc_id not in spans:
            return []
        rows: list[dict[str, Any]] = table.slice(*spans[doc_id]).select(_DOCUMENT_COLUMNS).to_pylist()
        return rows

    def warm(self) -> None:
        """Open the dataset and load what a document page needs (PDFium, Pillow, the locator) now, so
        the first document page need not wait for them; a failure is left for that page to report."""
        with contextlib.suppress(OebError):
            self.dataset()
        import PIL.Image  # noqa: F401  (a page's PNG; imported once, here rather than on a request)

        import oeb.locate.joint  # noqa: F401


_DOCUMENT_COLUMNS = ["address", "gold_raw", "pred_raw", "result", "adjudication"]
"""The verdict columns a document page shows; `adjudication` (last) is the id of the accepted entry that
changed the verdict (docs/adjudication.md), absent from runs graded before it."""


def open_view(urls: Sequence[str], *, audit: bool = False, all_runs: bool = False, dataset: str | None = None) -> View:
    """The runs of these graded folders (or folders of them), refused in one line as `oeb report`
    refuses them (different datasets, document sets or scorers), chosen and labelled as it does."""
    runs = load_folders(list(urls), all_runs=all_runs)
    board = leaderboard(runs)
    order = {row["url"]: number for number, row in enumerate(board["rows"])}
    return View(sorted(runs, key=lambda run: order[run.url]), board, audit, dataset)


def status_of(line: Mapping[str, Any]) -> str:
    """A document's status in a run: graded, failed (the system gave no usable answer) or missing
    (graded with --partial without an answer: never asked, or its answer never saved)."""
    if line["status"] == "scored":
        return "graded"
    error = line.get("error")
    return "missing" if isinstance(error, str) and error.startswith(f"{NO_PREDICTION}:") else "failed"
