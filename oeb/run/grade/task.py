"""Scoring a batch of documents: the work of one task of the grade stage (on a Ray worker, or a call
in the `oeb` process for a small job).

A task reads each document's prediction and gold and the cached score, scores the document only
when the cache key differs (docs/grading.md), and hands back the line, the verdicts and the files
to write; the driver writes them. The cache key covers the prediction, the gold, the manifest
schema, the scorer's options (none) and a digest of the scorer's source, so a cached score is
always the one a fresh scoring would give.
"""

from __future__ import annotations

import functools
import hashlib
import json
import time
import traceback
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import oeb.scoring
from oeb import _json, storage
from oeb._gc import cyclic_gc_paused
from oeb.dataset import Dataset, Row
from oeb.errors import OebError, ScoreArgumentError, StorageError
from oeb.gold.apply import adjudicate
from oeb.gold.derivation import EXCLUDED, generated
from oeb.gold.entries import Entry
from oeb.run.grade.results import jsonl, verdict_json, verdict_table
from oeb.scoring import show_address


@functools.cache
def scorer_digest() -> str:
    """SHA-256 of the scorer's source files: a changed scorer re-scores every document."""
    digest = hashlib.sha256(b"field_matching")
    for path in sorted(Path(oeb.scoring.__file__).parent.glob("*.py")):
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


@dataclass(frozen=True)
class Item:
    """One document to grade: its row, the size that predicts its cost, whether details exist, and the
    accepted adjudications naming it (applied after scoring: oeb.gold.apply)."""

    row: Row
    size: int
    has_details: bool
    entries: tuple[Entry, ...] = ()
    adjudicated_before: bool = False
    """Whether the folder's last grading applied entries to it: its details file may hold them, so it
    is rebuilt (and compared) even when no entry names the document now."""
    written_under: str | None = None
    """What the folder's last grading recorded its details file was written under (`details_under`;
    `field_matching/adjudicated.json`): the same now, the file is current and is not built again."""


def cache_key(prediction: Any, gold: Any, schema: Any, digest: str) -> str:
    """SHA-256 of everything a score depends on: prediction, gold, schema, options (none), scorer."""
    text = json.dumps([prediction, [gold, schema], {}, digest], sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()


def details_under(key: str, entries: Sequence[Entry]) -> str | None:
    """A digest of what an adjudicated document's details file holds: the cache key of the scorer's
    verdicts and what each accepted entry does to them (None: no entry). A steady regrade compares
    this short digest instead of building the details again to compare them with the file."""
    active = [
        [entry.id, entry.address, entry.effect, list(entry.values), entry.value if entry.has_value else None]
        for entry in entries
        if entry.effect is not None
    ]
    if not active:
        return None
    text = json.dumps([key, active], sort_keys=True, ensure_ascii=False, default=repr)
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def _failed(row: Row, error: str, **extra: str) -> dict[str, Any]:
    return {"id": row.doc_id, "status": "failed", "row": {"suite": row.suite}, "error": error, **extra}


def _prediction(row: Row, data: bytes) -> tuple[Any, dict[str, Any] | None]:
    """The parsed prediction, or the failed line saying why the file cannot be graded."""
    name = f"predictions/{row.doc_id}.json"
    if not data.strip():
        return None, _failed(row, f"the prediction file {name} is empty")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        return None, _failed(row, f"the prediction file {name} is not UTF-8 text ({error})")
    try:
        return _json.loads(text), None
    except json.JSONDecodeError as error:
        return None, _failed(row, f"the prediction file {name} is not JSON: {error.msg} (line {error.lineno})")


def _scores_without_prediction(gold: Any, schema: Any) -> bool:
    """Whether the gold and schema score alone: if so, a refusal came from the prediction (nested too
    deeply, say), which fails that document; otherwise the dataset is at fault and grading stops."""
    try:
        oeb.scoring.score(None, gold, schema)
    except OebError:
        return False
    return True


def _cached(url: str, key: str) -> dict[str, Any] | None:
    """The cache entry at `url` if its key matches; an unreadable entry counts as none."""
    try:
        entry = _json.loads(storage.read_bytes(url))
    except (StorageError, ValueError):
        return None
    return entry if isinstance(entry, dict) and entry.get("key") == key else None


def grade_document(dataset: Dataset, folder: str, item: Item, details: bool) -> dict[str, Any]:
    """One document's line, verdict table, the cache and details bytes to write (None: keep), the
    CPU seconds it took and its wall time (more than the CPU time on a busy machine)."""
    started, clock = time.process_time(), time.perf_counter()
    with cyclic_gc_paused():
        graded = _grade_document(dataset, folder, item, details)
    return graded | {"seconds": time.process_time() - started, "elapsed": time.perf_counter() - clock}


def _grade_document(dataset: Dataset, folder: str, item: Item, details: bool) -> dict[str, Any]:
    row = item.row
    parsed, unusable = _prediction(row, storage.read_bytes(storage.join(folder, "predictions", f"{row.doc_id}.json")))
    if unusable is not None:
        return {"id": row.doc_id, "line": unusable}
    gold, schema = dataset.gold(row), dict(row.schema)
    cache_url = storage.join(folder, "field_matching", "cache", f"{row.doc_id}.json")
    key = cache_key(parsed, gold, schema, scorer_digest())
    entry = _cached(cache_url, key)
    cache = None
    if entry is None:
        try:
            result = oeb.scoring.score(parsed, gold, schema, verdicts=True)  # scipy loads here, not on a cache hit
        except ScoreArgumentError as error:
            kind = "null" if parsed is None else type(parsed).__name__
            return {
                "id": row.doc_id,
                "line": _failed(
                    row,
                    f"the prediction is not a JSON object: predictions/{row.doc_id}.json holds a JSON {kind}",
                    traceback="".join(traceback.format_exception(error)),
                ),
            }
        except OebError as error:
            if not _scores_without_prediction(gold, schema):
                return {"id": row.doc_id, "fatal": f"{type(error).__name__}: {error}"}
            return {"id": row.doc_id, "line": _failed(row, f"the prediction cannot be scored: {error}")}
        except Exception as error:
            return {"id": row.doc_id, "fatal": f"{type(error).__name__}: {error}"}
        verdicts = [verdict_json(v) for v in result.pop("verdicts")]
        entry = {"key": key, "result": result, "details": verdicts}
        cache = (json.dumps(entry, ensure_ascii=False) + "\n").encode()
    # the cache holds the scorer's own result; accepted adjudications change it after (oeb.gold.apply)
    addresses = [show_address(verdict["address"]) for verdict in entry["details"]]  # printed once, used twice
    done = adjudicate(entry["result"], entry["details"], item.entries, addresses)
    line = {"id": row.doc_id, "status": "scored", "row": {"suite": row.suite}, **done.result}
    excluded = sum(1 for entry_id in done.applied if entry_id.startswith(EXCLUDED))
    if excluded or any(entry.id.startswith(EXCLUDED) for entry in item.entries):
        line["excluded_values"] = excluded  # leave-drafters-out grading (oeb.gold.derivation)
    if any(not generated(entry_id) for entry_id in done.applied):
        line["adjudications"] = [entry_id for entry_id in done.applied if not generated(entry_id)]
    under = details_under(key, item.entries) if item.entries else None
    fresh = cache is not None or not item.has_details or bool(item.entries) or item.adjudicated_before
    if fresh and cache is None and item.has_details and under is not None and under == item.written_under:
        fresh = False  # a steady regrade: the file was written from this cache entry under these entries
    written = jsonl(done.details) if details and fresh else None
    if written is not None and cache is None and item.has_details and _unchanged(folder, row, written):
        written = None  # a regrade under the same entries: the file holds these bytes already
    return {
        "id": row.doc_id,
        "line": line,
        "cache": cache,
        "details": written,
        "under": under,
        "verdicts": verdict_table(row.doc_id, done.details, done.marks, done.addresses),
    }


def _unchanged(folder: str, row: Row, written: bytes) -> bool:
    """Whether the document's details file holds `written` already: an adjudicated document's details
    are rebuilt at each regrade, and reading them back costs far less than sending and writing them."""
    try:
        return storage.read_bytes(storage.join(folder, "field_matching", "details", f"{row.doc_id}.jsonl")) == written
    except StorageError:
        return False


def put_once(store: dict[int, tuple[Dataset, Any]], dataset: Dataset) -> list[Any]:
    """The dataset's object reference, put into Ray's object store on its first batch only, boxed in
    a list so that Ray hands the task the reference, not a copy (`dataset_of` opens it). Pickling a
    620-row dataset costs about 5 ms, more than scoring a small document; `store` keeps the dataset
    beside its reference so its `id` is not reused."""
    if id(dataset) not in store:
        import ray

        store[id(dataset)] = (dataset, ray.put(dataset))
    return [store[id(dataset)][1]]


_OPENED: dict[str, Dataset] = {}
"""The datasets this worker process has read, by object id (a regrade grades several at once)."""
_OPENED_MAX = 8


def dataset_of(boxed: list[Any]) -> Dataset:
    """The dataset of `put_once`'s reference, read from the object store once per worker process:
    unpickling it for every batch cost each batch about 6 ms."""
    import ray

    key = boxed[0].hex()
    if key not in _OPENED:
        if len(_OPENED) >= _OPENED_MAX:
            del _OPENED[next(iter(_OPENED))]
        _OPENED[key] = ray.get(boxed[0])
    return _OPENED[key]


def grade_batch(dataset: Dataset, folder: str, items: list[Item], details: bool) -> list[dict[str, Any]]:
    """Every document of one folder, in the order given."""
    return [grade_document(dataset, folder, item, details) for item in items]


Group = tuple[str, list[Item]]
"""A run folder's URL and documents of it: a task grades documents of several folders (the systems
of one run share a dataset), since a task costs a worker several times what a small document does."""


def grade_groups(dataset: Dataset, groups: list[Group], details: bool) -> list[list[dict[str, Any]]]:
    """Every document of one task, folder by folder, in the order given."""
    return [grade_batch(dataset, folder, items, details) for folder, items in groups]
