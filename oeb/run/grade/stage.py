"""The grade stage, shared by `oeb run`, `oeb resume` and `oeb grade` (docs/grading.md).

A `Grader` grades one folder. The run engine hands it each document as its record is saved
(`add`), so scoring overlaps predicting and the leaderboard is ready seconds after the last answer;
`finish` grades whatever was not handed over and writes the results. `grade` is a Grader given
nothing before `finish`.

The work goes through one queue per session, whichever folder it is from (several systems of a
run, every run of a regrade): the largest waiting document first, since the cost of scoring grows
with its size, small ones packed into tasks of bounded total size, from every folder on the same
dataset (a task costs more than a small document's scoring); only a few tasks per CPU are in
flight, so the order holds. On Ray each task asks for memory in proportion to what it scores; a
small job scores in this process, with the same code and the same files (`oeb.run.cluster.session`).
Results come back to the driver, the only writer: cache and details files as they arrive, then
scores.jsonl, scores.parquet, verdicts.parquet (in row order, whatever order tasks finished in)
and summary.json last.
"""

from __future__ import annotations

import json
import logging
import shutil
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

from oeb import storage
from oeb.dataset import Dataset, Row
from oeb.errors import GradingError, OebError, StorageError, UnfinishedRun
from oeb.gold.derivation import Draft, generated
from oeb.gold.derivation import summary as draft_summary
from oeb.gold.entries import Adjudications
from oeb.run.cluster import session as cluster
from oeb.run.folder.run_folder import RunFolder
from oeb.run.grade import details as detail_files
from oeb.run.grade import grounding, pages
from oeb.run.grade.provenance import provenance
from oeb.run.grade.results import (
    NO_PREDICTION,
    SCORER,
    headline_line,
    jsonl,
    scores_table,
    summarize,
    total_cost,
    verdicts_parquet,
)
from oeb.run.grade.scheduler import session_queue
from oeb.run.grade.task import Item, scorer_digest

log = logging.getLogger(__name__)

VERDICTS_IN_MEMORY = 64 << 20
"""A grading holds its documents' verdict tables in memory up to this many bytes, the rest on disk."""
_SHOWN = 10


@dataclass(frozen=True)
class Graded:
    """What grading gives back: `report` is what `oeb grade` prints; `nodes` ran the scoring tasks
    ("process" when it ran here); `seconds` is each graded document's CPU time, `elapsed` its wall time."""

    report: dict[str, Any]
    nodes: frozenset[str]
    seconds: dict[str, float]
    elapsed: dict[str, float]


class _Verdicts:
    """Each document's verdict table until the end, when verdicts.parquet is written from them in
    row order (the same bytes whichever way the tasks ran): in memory up to `VERDICTS_IN_MEMORY`
    bytes, then in temporary Arrow files, so a huge run does not hold every verdict."""

    def __init__(self) -> None:
        self._folder: Path | None = None
        self._tables: dict[str, Any] = {}
        self._held = 0

    def put(self, doc_id: str, table: Any) -> None:
        import pyarrow as pa  # type: ignore[import-untyped]

        if self._held + table.nbytes <= VERDICTS_IN_MEMORY:
            self._held += table.nbytes
            self._tables[doc_id] = table
            return
        if self._folder is None:
            self._folder = Path(tempfile.mkdtemp(prefix="oeb-verdicts-"))
        path = self._folder / f"{len(self._tables)}.arrow"
        with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_file(sink, table.schema) as writer:
            writer.write_table(table)
        self._tables[doc_id] = path

    def parquet(self, order: Sequence[str]) -> bytes:
        return verdicts_parquet(self._tables[doc_id] for doc_id in order if doc_id in self._tables)

    def discard(self) -> None:
        self._tables, self._held = {}, 0
        if self._folder is not None:
            shutil.rmtree(self._folder, ignore_errors=True)
            self._folder = None


class Grader:
    """One folder's grading: documents handed over as they are saved (`add`), the rest at `finish`.

    Use it as a context manager, so a run that stops or fails leaves no temporary files: leaving
    the block without `finish` (a system that stopped) or by an exception abandons the grading
    (what was scored stays in the cache).
    """

    def __init__(
        self,
        folder: RunFolder,
        dataset: Dataset,
        rows: Sequence[Row],
        *,
        details: bool = True,
        partial: bool = False,
        brought: bool = False,
        adjudications: Adjudications | None = None,
        draft: Draft | None = None,
    ) -> None:
        self.folder, self.dataset, self.rows = folder, dataset, tuple(rows)
        self.draft = draft
        """The dataset's drafted gold (`oeb.gold.derivation`): `adjudications` then hold the values this
        run is graded without, and the summary says so."""
        self.adjudications = adjudications
        self._entries = adjudications.by_document() if adjudications is not None else {}
        self.details, self.partial, self.brought = details, partial, brought
        self.outstanding = 0
        self.error: BaseException | None = None
        self.lines: dict[str, dict[str, Any]] = {}
        """Each document's line in scores.jsonl (results, failed records), as they become known."""
        self.seconds: dict[str, float] = {}
        self.elapsed: dict[str, float] = {}
        self.nodes: set[str] = set()
        self.rescored = 0
        self.records: dict[str, dict[str, Any]] | None = None
        self.finished = False
        self.unfinished: list[str] = []
        self.queued = 0
        self.streaming = True
        """Documents may still come (`add` during a run); false once `plan` queued the rest."""
        self._listing: dict[str, int] = {}
        self._rows = {row.doc_id: row for row in self.rows}
        self._added: dict[str, dict[str, Any]] = {}
        """The documents handed over by `add`, each with its record's cost (all that `finish` needs of it)."""
        self._known: tuple[dict[str, int], dict[str, int]] | None = None
        self._verdicts = _Verdicts()
        self._under: dict[str, str] = {}
        """Each adjudicated document's `details_under` digest, as this grading leaves its details file."""
        self._recorded: dict[str, str] | None = None
        """`adjudicated.json` as the last grading left it (None: there is none, or it is gone)."""
        self._dropped = False
        self._cites = grounding.Cites()
        self._queue = session_queue()

    def __enter__(self) -> Grader:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        if error is not None or not self.finished:
            self.abandon(error)

    def add(self, doc_id: str, record: dict[str, Any] | None = None) -> None:
        """Grade a document whose record (and prediction) was just saved: its scoring is queued now.
        `record` saves reading it back; a document not in the rows, or added before, is ignored."""
        row = self._rows.get(doc_id)
        if row is None or doc_id in self._added or self.error is not None:
            return
        if record is None:
            record = storage.read_json(self.folder.record_url(doc_id))
        if record.get("unread"):
            return  # read again at the end
        self._added[doc_id] = {"cost": record.get("cost")}
        self._cites.take(doc_id, record)
        if record.get("error"):
            self.lines[doc_id] = _failed_line(row, _error_text(record["error"]))
            return
        listing, golds = self._sizes()
        size = len(json.dumps(record.get("output"), ensure_ascii=False).encode()) + golds.get(row.gt_path, 0)
        has_details = f"{SCORER}/details/{doc_id}.jsonl" in listing
        self._queue.put(self, [Item(row, size, has_details, tuple(self._entries.get(doc_id, ())))])

    def _sizes(self) -> tuple[dict[str, int], dict[str, int]]:
        """The folder's files as they were at the first `add`, and the gold sizes (one listing each)."""
        if self._known is None:
            self._known = (self.folder.listing(), _gold_sizes(self.dataset))
        return self._known

    def take(self, results: list[dict[str, Any]], node: str) -> None:
        """A task's results, written as they arrive (called by the queue's thread)."""
        self.nodes.add(node)
        for result in results:
            if self.error is not None:
                return
            doc_id = result["id"]
            if "fatal" in result:
                self.error = GradingError(
                    f"the scorer refused {doc_id} ({result['fatal']}); fix its gold or schema in the dataset, "
                    "then grade again (scores.jsonl and summary.json are unchanged)"
                )
                return
            self.lines[doc_id] = result["line"]
            self.seconds[doc_id] = result["seconds"]
            self.elapsed[doc_id] = result["elapsed"]
            files = self.folder.path(SCORER)
            if result.get("cache") is not None:
                self.rescored += 1
                storage.write_bytes(storage.join(files, "cache", f"{doc_id}.json"), result["cache"])
            if result.get("details") is not None:
                self._drop_record()
                storage.write_bytes(storage.join(files, "details", f"{doc_id}.jsonl"), result["details"])
            if result.get("under") is not None:
                self._under[doc_id] = result["under"]
            if result.get("verdicts") is not None:
                self._verdicts.put(doc_id, result["verdicts"])

    def _drop_record(self) -> None:
        """Remove `adjudicated.json` before the first details file this grading writes: it may name
        that document, and the file must never say more than the details files hold."""
        if not self._dropped:
            storage.remove(self.folder.path(SCORER, detail_files.UNDER))
            self._dropped, self._recorded = True, None

    def fail(self, error: BaseException, items: int) -> None:
        """A task that could not run or whose results could not be written stops this grading."""
        if self.error is None:
            self.error = error if isinstance(error, OebError) else _task_failed(error)
        self.done(items)

    def done(self, items: int) -> None:
        """`items` documents of this grading left the queue."""
        with self._queue.changed:
            self.outstanding -= items
            self._queue.changed.notify_all()

    def abandon(self, error: BaseException | None = None) -> None:
        """Stop at once: documents still queued are dropped, results still coming are ignored, the
        temporary verdicts removed (the cache files written so far stay: they are right)."""
        if self.error is None:
            self.error = error or GradingError("grading abandoned")
        self._verdicts.discard()

    def _wait(self) -> None:
        with self._queue.changed:
            while self.outstanding > 0:
                self._queue.changed.wait()

    def plan(self) -> None:
        """Queue every document not handed over yet (checks first: an unfinished folder is refused
        unless `partial`, a brought folder naming none of the rows is refused)."""
        listing = self.folder.listing()
        self._listing = listing
        ids = [row.doc_id for row in self.rows]
        _warn_strays(self.folder, listing, {row.doc_id for row in self.dataset.rows})
        if self.brought and not any(f"predictions/{doc_id}.json" in listing for doc_id in ids):
            raise UnfinishedRun(
                f"none of the files in {self.folder.path('predictions')} names one of the {len(ids)} rows graded "
                f"(e.g. {ids[0]}.json is expected); is the dataset right?"
            )
        # the records handed over are not read again: ten systems of 620 documents would read 6,200
        # records after the last answer
        self.records = self._added | self.folder.records([i for i in ids if i not in self._added], listing)
        _restore_predictions(self.folder, self.records, listing)
        golds = self._sizes()[1] if self._known is not None else _gold_sizes(self.dataset)
        before = detail_files.adjudicated_before(self.folder, listing)
        self._recorded = None if self._dropped or not self.details else detail_files.recorded(self.folder, listing)
        recorded = self._recorded or {}
        items, self.unfinished = [], []
        for row in self.rows:
            if row.doc_id in self._added:
                continue
            record = self.records.get(row.doc_id)
            prediction = f"predictions/{row.doc_id}.json"
            if record is not None and record.get("error"):
                self.lines[row.doc_id] = _failed_line(row, _error_text(record["error"]))
            elif prediction in listing and not (record or {}).get("unread"):
                has_details = f"{SCORER}/details/{row.doc_id}.jsonl" in listing
                entries = tuple(self._entries.get(row.doc_id, ()))
                size = listing[prediction] + golds.get(row.gt_path, 0)
                adjudicated = before is None or row.doc_id in before
                items.append(Item(row, size, has_details, entries, adjudicated, recorded.get(row.doc_id)))
            else:
                self.unfinished.append(row.doc_id)
        if self.unfinished and not self.partial:
            raise _unfinished_error(self.folder, self.unfinished, self.brought)
        for doc_id in self.unfinished:
            row = self._rows[doc_id]
            self.lines[doc_id] = _failed_line(row, f"{NO_PREDICTION}: predictions/{doc_id}.json does not exist")
        self.streaming = False
        self._queue.put(self, items)

    def finish(self) -> Graded:
        """Grade what was not added, wait for every document, then write scores.jsonl,
        scores.parquet, verdicts.parquet, documents.json and summary.json last."""
        try:
            if self.records is None:
                self.plan()
            self._wait()
            if self.error is not None:
                raise self.error
            graded = self._write()
            self.finished = True
            return graded
        except BaseException as error:
            self.abandon(error)
            raise
        finally:
            self._verdicts.discard()

    def _record(self, under: dict[str, str]) -> None:
        """Write `adjudicated.json` for the details files as this grading leaves them (unchanged: not
        written again); none without details or adjudicated documents."""
        if under and self.details:
            if under != self._recorded:
                storage.write_json(self.folder.path(SCORER, detail_files.UNDER), {"documents": under})
        elif not self._dropped and f"{SCORER}/{detail_files.UNDER}" in self._listing:
            storage.remove(self.folder.path(SCORER, detail_files.UNDER))

    def _write(self) -> Graded:
        folder, rows, records = self.folder, self.rows, self.records or {}
        digest = scorer_digest()
        ordered = [self.lines[row.doc_id] | {"scorer": digest} for row in rows]
        if self.draft is not None:
            ordered = [
                line if "excluded_values" in line or line["status"] != "scored" else line | {"excluded_values": 0}
                for line in ordered
            ]
        scored = {line["id"] for line in ordered if line["status"] == "scored"}
        detail_files.tidy(folder, self._listing, scored, self.details)
        self._record({doc_id: under for doc_id, under in self._under.items() if doc_id in scored})
        partial_info = None
        if self.partial and self.unfinished:
            unread = [doc_id for doc_id in self.unfinished if (records.get(doc_id) or {}).get("unread")]
            partial_info = {
                "no_answer": len(self.unfinished) - len(unread),
                "not_scored": len(unread),
                "e.g.": self.unfinished[:10],
            }
        summary = summarize(ordered, folder.name, partial_info)
        summary["provenance"] = provenance(self.dataset, digest)
        if self.draft is not None:
            summary["provenance"]["draft"] = draft_summary(self.draft, ordered)
        if self.adjudications is not None and self.adjudications.url:
            applied = sorted({i for line in ordered for i in line.get("adjudications", ())})
            summary["provenance"]["adjudications"] = {
                "url": self.adjudications.url,
                "sha256": self.adjudications.sha256,
                "accepted": sum(1 for entry in self.adjudications.accepted if not generated(entry.id)),
                "applied": applied,
            }
        results = folder.path(SCORER)
        storage.write_bytes(storage.join(results, "scores.jsonl"), jsonl(ordered))
        storage.write_parquet(storage.join(results, "scores.parquet"), scores_table(ordered))
        storage.write_bytes(storage.join(results, "verdicts.parquet"), self._verdicts.parquet([r.doc_id for r in rows]))
        pages.write(folder.url, self.dataset, rows, records)  # paths and page counts for reports
        cited = grounding.write(folder.url, self.dataset, rows, records, self._cites)  # citations and confidences
        if cited.rows:
            summary["grounding"] = {
                "rows": len(cited.rows),
                "invalid_citations": cited.invalid_citations,
                "invalid_confidences": cited.invalid_confidences,
            }
        storage.write_json(storage.join(results, "summary.json"), summary)
        cost = total_cost(records[row.doc_id] for row in rows if row.doc_id in records)
        log.info("%s", scored_line(folder.name, ordered, self.rescored))
        log.info("%s", headline_line(summary, cost))
        cluster.timing("documents (their CPU)", sum(self.seconds.values()))
        report = {"run": folder.name, "cost": cost, "scorers": {SCORER: summary}}
        return Graded(report, frozenset(self.nodes), self.seconds, self.elapsed)


FAILED_NAMED = 3
"""How many failed documents the grading line names before it counts the rest."""
_REASON_SHOWN = 160


def scored_line(name: str, lines: list[dict[str, Any]], rescored: int) -> str:
    """`12 documents scored, 11 of them from the cache`, then the failed documents: the first few by
    name with their reason, the rest counted (scores.jsonl has every one)."""
    scored = sum(1 for line in lines if line["status"] == "scored")
    text = f"{name}: {scored} documents scored, {max(0, scored - rescored)} of them from the cache"
    failed = [line for line in lines if line["status"] != "scored"]
    if not failed:
        return text
    named = "; ".join(
        f"{line['id']} ({' '.join(str(line.get('error') or 'no reason recorded').split())[:_REASON_SHOWN]})"
        for line in failed[:FAILED_NAMED]
    )
    more = f"; and {len(failed) - FAILED_NAMED} more" if len(failed) > FAILED_NAMED else ""
    return f"{text}; {len(failed)} failed: {named}{more} (all in {SCORER}/scores.jsonl)"


def grade(
    folder: RunFolder,
    dataset: Dataset,
    rows: Sequence[Row],
    *,
    partial: bool = False,
    details: bool = True,
    brought: bool = False,
) -> Graded:
    """Grade the run's `rows`: the report `oeb grade` prints (run, cost, the scorer's summary)."""
    return Grader(folder, dataset, rows, details=details, partial=partial, brought=brought).finish()


def _task_failed(error: BaseException) -> GradingError:
    """What went wrong outside oeb (Ray, a worker lost for good), as one line."""
    first = next(iter(str(error).strip().splitlines()), "")[:300]
    return GradingError(
        f"a grading task failed ({type(error).__name__}: {first}); grade again: the documents scored so far "
        "come from the cache (scores.jsonl and summary.json are unchanged)"
    )


def _gold_sizes(dataset: Dataset) -> dict[str, int]:
    """Gold file sizes from one listing of the dataset (none when it cannot be listed, e.g. the Hub)."""
    try:
        return storage.list_files(dataset.location)
    except StorageError:
        return {}


def _unfinished_error(folder: RunFolder, unfinished: list[str], brought: bool) -> UnfinishedRun:
    more = f" and {len(unfinished) - _SHOWN} more" if len(unfinished) > _SHOWN else ""
    ids = ", ".join(unfinished[:_SHOWN]) + more
    if brought:
        return UnfinishedRun(
            f"{len(unfinished)} rows have no file in {folder.path('predictions')} ({ids}); add their "
            "predictions, or grade with --partial to count them as failed"
        )
    return UnfinishedRun(
        f"{folder.url} is not finished, so it has no headline yet: {len(unfinished)} rows never predicted or "
        f"answered but not yet read ({ids}); run oeb resume {folder.url} to predict them, or grade with "
        "--partial to count them as failed"
    )


def _failed_line(row: Row, error: str) -> dict[str, Any]:
    return {"id": row.doc_id, "status": "failed", "row": {"suite": row.suite}, "error": error}


def _error_text(error: dict[str, Any]) -> str:
    """A record's error as a failed line gives it."""
    return f"{error.get('type')}: {error.get('message')}"


def _warn_strays(folder: RunFolder, listing: dict[str, int], known: set[str]) -> None:
    strays = sorted(
        path.removeprefix("predictions/")
        for path in listing
        if path.startswith("predictions/") and path.removeprefix("predictions/").removesuffix(".json") not in known
    )
    if strays:
        log.warning(
            "%s: %d files match no row of the manifest and are ignored (%s)",
            folder.path("predictions"),
            len(strays),
            ", ".join(strays[:3]),
        )


def _restore_predictions(folder: RunFolder, records: dict[str, dict[str, Any]], listing: dict[str, int]) -> None:
    """Rewrite the prediction of a successful record whose prediction file was lost."""
    lost = [
        doc_id
        for doc_id, record in records.items()
        if record.get("error") is None
        and not record.get("unread")
        and record.get("output") is not None
        and f"predictions/{doc_id}.json" not in listing
    ]
    for doc_id in lost:
        storage.write_json(folder.prediction_url(doc_id), records[doc_id]["output"])
        listing[f"predictions/{doc_id}.json"] = len(json.dumps(records[doc_id]["output"]))
    if lost:
        log.info("%s: restored %d lost predictions from their records (%s)", folder.name, len(lost), lost[0])
