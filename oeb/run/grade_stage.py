"""The grade stage on Ray (HARNESS.md §3.4), shared by `oeb run`, `oeb resume` and `oeb grade`.

The cost of scoring a document grows with its size, so the largest go first, each in its own task,
while small documents are packed into tasks of bounded total size; each task asks Ray for memory in
proportion to what it scores. Only a few tasks per CPU are queued at a time, so the order holds.
Results stream back to the driver, the only writer: details and cache files as they arrive, then
scores.jsonl, scores.parquet, verdicts.parquet and summary.json last.
"""

from __future__ import annotations

import json
import logging
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import ray

from oeb import storage
from oeb.dataset import Dataset, Row
from oeb.errors import GradingError, StorageError, UnfinishedRun
from oeb.run import pages
from oeb.run.folder import RunFolder
from oeb.run.grade_task import Item, grade_batch
from oeb.run.results import (
    SCORER,
    VERDICT_SCHEMA,
    headline_line,
    jsonl,
    scores_table,
    summarize,
    total_cost,
)

log = logging.getLogger(__name__)

BATCH_BYTES = 1 << 20
"""A task scores at most this many bytes of gold and prediction, unless one document is larger."""
TASK_MEMORY_BASE = 64 << 20
TASK_MEMORY_PER_BYTE = 40
"""Peak memory of scoring is about 40 times the gold and prediction bytes (measured on the corpus)."""
_SHOWN = 10


def batches(items: Sequence[Item], cpus: int) -> list[list[Item]]:
    """Largest first: a document as large as a batch alone, smaller ones packed, in size order."""
    ordered = sorted(items, key=lambda item: item.size, reverse=True)
    total = sum(item.size for item in ordered)
    budget = max(1, min(BATCH_BYTES, total // (4 * max(cpus, 1))))
    packed: list[list[Item]] = []
    current: list[Item] = []
    used = 0
    for item in ordered:
        if item.size >= budget:
            packed.append([item])
            continue
        if current and used + item.size > budget:
            packed.append(current)
            current, used = [], 0
        current.append(item)
        used += item.size
    return packed + ([current] if current else [])


def _memory_cap() -> int:
    """Just over half the memory of the largest node: a huge document never asks for more than
    exists, and two of them never share a node."""
    nodes = [node["Resources"].get("memory", 0) for node in ray.nodes() if node.get("Alive")]
    largest = int(max(nodes, default=0))
    return largest // 2 + 1 if largest else TASK_MEMORY_BASE


def _gold_sizes(dataset: Dataset) -> dict[str, int]:
    """Gold file sizes from one listing of the dataset (none when it cannot be listed, e.g. the Hub)."""
    try:
        return storage.list_files(dataset.location)
    except StorageError:
        return {}


@ray.remote(max_retries=3)  # a worker that dies (killed, out of memory) has its task run again: same scores
def _grade_task(dataset: Dataset, folder: str, items: list[Item], details: bool) -> tuple[list[dict[str, Any]], str]:
    """One batch, and the node that scored it."""
    return grade_batch(dataset, folder, items, details), ray.get_runtime_context().get_node_id()


@dataclass(frozen=True)
class Graded:
    """What grading gives back: `report` is what `oeb grade` prints; `nodes` ran the scoring tasks;
    `seconds` is each graded document's CPU time, `elapsed` its wall time."""

    report: dict[str, Any]
    nodes: frozenset[str]
    seconds: dict[str, float]
    elapsed: dict[str, float]


class _Outputs:
    """What the driver writes as task results arrive."""

    def __init__(self, folder: RunFolder) -> None:
        self.folder = folder
        self.lines: dict[str, dict[str, Any]] = {}
        self.rescored = 0
        self.seconds: dict[str, float] = {}
        self.elapsed: dict[str, float] = {}
        self._verdicts = tempfile.NamedTemporaryFile(suffix=".parquet", delete=False)  # noqa: SIM115
        self._writer = pq.ParquetWriter(self._verdicts, VERDICT_SCHEMA)

    def add(self, result: dict[str, Any]) -> None:
        doc_id = result["id"]
        self.lines[doc_id] = result["line"]
        self.seconds[doc_id] = result["seconds"]
        self.elapsed[doc_id] = result["elapsed"]
        results = self.folder.path(SCORER)
        if result.get("cache") is not None:
            self.rescored += 1
            storage.write_bytes(storage.join(results, "cache", f"{doc_id}.json"), result["cache"])
        if result.get("details") is not None:
            storage.write_bytes(storage.join(results, "details", f"{doc_id}.jsonl"), result["details"])
        if result.get("verdicts") is not None:
            self._writer.write_table(result["verdicts"])

    def verdicts(self) -> bytes:
        self._writer.close()
        self._verdicts.close()
        path = Path(self._verdicts.name)
        data = path.read_bytes()
        path.unlink()
        return data

    def discard(self) -> None:
        self._writer.close()
        self._verdicts.close()
        Path(self._verdicts.name).unlink(missing_ok=True)


@dataclass
class Grading:
    """One folder between its plan and its results: the documents its tasks score (`items`), the
    lines known without scoring (failures, missing predictions) and where results are written."""

    folder: RunFolder
    dataset: Dataset
    rows: Sequence[Row]
    records: dict[str, dict[str, Any]]
    listing: dict[str, int]
    lines: dict[str, dict[str, Any]]
    unfinished: list[str]
    items: list[Item]
    partial: bool
    details: bool
    out: _Outputs


def score_all(gradings: Sequence[Grading]) -> set[str]:
    """Score the items of every grading on Ray in one queue, largest batch first whichever folder it
    is from; returns the nodes that ran tasks. On failure nothing but cache and details is written."""
    try:
        return _run_tasks(gradings)
    except BaseException:
        for grading in gradings:
            grading.out.discard()
        raise


def _run_tasks(gradings: Sequence[Grading]) -> set[str]:
    cpus = int(ray.cluster_resources().get("CPU", 1))
    cap = _memory_cap()
    shared: dict[int, Any] = {}
    queue: list[tuple[Grading, Any, list[Item]]] = []
    for grading in gradings:
        dataset_ref = shared.setdefault(id(grading.dataset), ray.put(grading.dataset))
        queue += [(grading, dataset_ref, batch) for batch in batches(grading.items, cpus)]
    queue.sort(key=lambda entry: sum(item.size for item in entry[2]))  # pop() takes the largest
    pending: dict[Any, Grading] = {}
    nodes: set[str] = set()
    try:
        while queue or pending:
            while queue and len(pending) < 2 * cpus:
                grading, dataset_ref, batch = queue.pop()
                size = sum(item.size for item in batch)
                memory = min(cap, TASK_MEMORY_BASE + TASK_MEMORY_PER_BYTE * size)
                options = _grade_task.options(num_cpus=1, memory=memory, scheduling_strategy="SPREAD")
                pending[options.remote(dataset_ref, grading.folder.url, batch, grading.details)] = grading
            done, _ = ray.wait(list(pending), num_returns=1)
            for ref in done:
                grading = pending.pop(ref)
                results, node = ray.get(ref)
                nodes.add(node)
                for result in results:
                    if "fatal" in result:
                        raise GradingError(
                            f"the scorer refused {result['id']} ({result['fatal']}); fix its gold or schema "
                            "in the dataset, then grade again (scores.jsonl and summary.json are unchanged)"
                        )
                    grading.out.add(result)
    finally:
        for ref in pending:
            ray.cancel(ref)
    return nodes


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
    grading = prepare(folder, dataset, rows, partial=partial, details=details, brought=brought)
    return finish(grading, score_all([grading]))


def prepare(
    folder: RunFolder,
    dataset: Dataset,
    rows: Sequence[Row],
    *,
    partial: bool = False,
    details: bool = True,
    brought: bool = False,
) -> Grading:
    """Everything before scoring: the listing, the records, what to score and what failed already
    (an unfinished folder is refused unless `partial`)."""
    listing = folder.listing()
    ids = {row.doc_id for row in rows}
    _warn_strays(folder, listing, {row.doc_id for row in dataset.rows})
    if brought and not any(f"predictions/{doc_id}.json" in listing for doc_id in ids):
        example = f"{rows[0].doc_id}.json"
        raise UnfinishedRun(
            f"none of the files in {folder.path('predictions')} names one of the {len(rows)} rows graded (e.g. "
            f"{example} is expected); is the dataset right?"
        )
    records = folder.records(ids, listing)
    _restore_predictions(folder, records, listing)
    lines: dict[str, dict[str, Any]] = {}
    unfinished: list[str] = []
    items: list[Item] = []
    golds = _gold_sizes(dataset)
    for row in rows:
        record = records.get(row.doc_id)
        prediction = f"predictions/{row.doc_id}.json"
        if record is not None and record.get("error"):
            error = record["error"]
            lines[row.doc_id] = _failed_line(row, f"{error.get('type')}: {error.get('message')}")
        elif prediction in listing and not (record or {}).get("unread"):
            has_details = f"{SCORER}/details/{row.doc_id}.jsonl" in listing
            items.append(Item(row, listing[prediction] + golds.get(row.gt_path, 0), has_details))
        else:
            unfinished.append(row.doc_id)
    if unfinished and not partial:
        raise _unfinished_error(folder, unfinished, brought)
    for doc_id in unfinished:
        row = next(r for r in rows if r.doc_id == doc_id)
        lines[doc_id] = _failed_line(row, f"no prediction: predictions/{doc_id}.json does not exist")
    out = _Outputs(folder)
    return Grading(folder, dataset, rows, records, listing, lines, unfinished, items, partial, details, out)


def finish(grading: Grading, nodes: set[str]) -> Graded:
    """Everything after scoring: scores.jsonl, scores.parquet, verdicts.parquet, summary.json last."""
    folder, rows, records, out = grading.folder, grading.rows, grading.records, grading.out
    unfinished = grading.unfinished
    lines = grading.lines | out.lines
    ordered = [lines[row.doc_id] for row in rows]
    scored = {doc_id for doc_id, line in lines.items() if line["status"] == "scored"}
    _tidy_details(folder, grading.listing, scored, grading.details)
    partial_info = None
    if grading.partial and unfinished:
        unread = [doc_id for doc_id in unfinished if (records.get(doc_id) or {}).get("unread")]
        partial_info = {"no_answer": len(unfinished) - len(unread), "not_scored": len(unread), "e.g.": unfinished[:10]}
    summary = summarize(ordered, folder.name, partial_info)
    results = folder.path(SCORER)
    storage.write_bytes(storage.join(results, "scores.jsonl"), jsonl(ordered))
    storage.write_parquet(storage.join(results, "scores.parquet"), scores_table(ordered))
    storage.write_bytes(storage.join(results, "verdicts.parquet"), out.verdicts())
    pages.write(folder.url, grading.dataset, rows, records)  # paths and page counts for reports
    storage.write_json(storage.join(results, "summary.json"), summary)
    cost = total_cost(records[row.doc_id] for row in rows if row.doc_id in records)
    scored_now = len(grading.items)
    log.info("%s: %d documents scored, %d of them from the cache", folder.name, scored_now, scored_now - out.rescored)
    log.info("%s", headline_line(summary, cost))
    report = {"run": folder.name, "cost": cost, "scorers": {SCORER: summary}}
    return Graded(report, frozenset(nodes), out.seconds, out.elapsed)


def _failed_line(row: Row, error: str) -> dict[str, Any]:
    return {"id": row.doc_id, "status": "failed", "row": {"suite": row.suite}, "error": error}


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
    """Rewrite the prediction of a successful record whose prediction file was lost (§3.4 step 4)."""
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


def _tidy_details(folder: RunFolder, listing: dict[str, int], scored: set[str], details: bool) -> None:
    """Leave details only for documents scored now; `--no-details` removes the folder."""
    prefix = f"{SCORER}/details/"
    if not details:
        storage.remove(folder.path(SCORER, "details"))
        return
    for path in listing:
        if path.startswith(prefix) and path.removeprefix(prefix).removesuffix(".jsonl") not in scored:
            storage.remove(folder.path(path))
