"""Graded runs under an adjudication file, from what grading already wrote.

The rule changes verdicts after scoring (`oeb.gold.apply`), so a graded run needs no scoring again:
only the documents an accepted entry names are read back from the grading cache
(`field_matching/cache/<id>.json`: the scorer's result and verdicts) and adjudicated; every other
document's line is the run's own. This is what `oeb adjudicate diff`, `oeb report --adjudications`
and the review page use.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from oeb import _json, storage
from oeb.dataset import Dataset
from oeb.errors import AdjudicationError, StorageError
from oeb.gold.apply import Adjudicated, adjudicate
from oeb.gold.entries import FILE_NAME, NONE, Adjudications, load
from oeb.report.runs import Run

_SCORER = "field_matching"


@dataclass(frozen=True)
class AdjudicatedRun:
    """A run's lines under the file (`run`), the lines before (`before`) and what changed per document."""

    run: Run
    before: Run
    changed: dict[str, Adjudicated]


def _graded(run: Run, doc_ids: Sequence[str]) -> dict[str, tuple[dict[str, Any], list[dict[str, Any]]]]:
    """The scorer's result and verdicts of these documents, from the cache (else the details files)."""
    found: dict[str, tuple[dict[str, Any], list[dict[str, Any]]]] = {}
    cache = storage.join(run.url, _SCORER, "cache")
    for name, data in storage.read_many(cache, [f"{doc_id}.json" for doc_id in doc_ids]).items():
        if isinstance(data, bytes):
            try:
                entry = _json.loads(data)
                found[name.removesuffix(".json")] = (entry["result"], entry["details"])
            except (ValueError, KeyError, TypeError):
                continue
    lines = {line["id"]: line for line in run.lines}
    for doc_id in doc_ids:
        if doc_id in found:
            continue
        try:
            text = storage.read_text(storage.join(run.url, _SCORER, "details", f"{doc_id}.jsonl"))
        except StorageError:
            raise AdjudicationError(
                f"{run.url} keeps no verdicts of {doc_id} (no cache or details); grade it again: oeb grade {run.url}"
            ) from None
        details = [json.loads(line) for line in text.splitlines() if line.strip()]
        found[doc_id] = (lines[doc_id], details)
    return found


def adjudicate_run(run: Run, adjudications: Adjudications) -> AdjudicatedRun:
    """The run under the file's accepted entries: only the documents they name are read again."""
    by_doc = adjudications.by_document()
    scored = {line["id"]: line for line in run.lines if line["status"] == "scored"}
    touched = [doc_id for doc_id in by_doc if doc_id in scored]
    graded = _graded(run, touched) if touched else {}
    changed: dict[str, Adjudicated] = {}
    lines = []
    for line in run.lines:
        doc_id = line["id"]
        if doc_id not in graded:
            lines.append(line)
            continue
        result, details = graded[doc_id]
        done = adjudicate(result, details, by_doc[doc_id])
        if not done.applied:
            lines.append(line)
            continue
        changed[doc_id] = done
        metrics = {key: value for key, value in done.result.items() if key in line}
        lines.append({**line, **metrics, "adjudications": list(done.applied)})
    return AdjudicatedRun(dataclasses.replace(run, lines=lines), run, changed)


def resolve(given: str | None, dataset: Dataset) -> Adjudications | None:
    """The adjudication file that applies: `--adjudications URL`, none for `none`, else the dataset's
    own `adjudications.yaml` when it has one."""
    if given is not None and given.strip().lower() == NONE:
        return None
    if given is not None:
        return load(given)
    beside = storage.join(dataset.location, FILE_NAME)
    try:
        present = storage.exists(beside)
    except StorageError:
        present = False
    return load(beside) if present else None


def gold_line(dataset: str | None, commit: str | None, adjudications: Adjudications | None) -> str:
    """`gold: <dataset>@<commit> + N adjudications (sha256 12 chars)`, as every leaderboard says it."""
    named = f"{dataset}@{commit[:12]}" if dataset and commit else str(dataset)
    if adjudications is None:
        return f"gold: {named} (raw, no adjudications)"
    count = len(adjudications.accepted)
    return f"gold: {named} + {count} adjudication{'s' if count != 1 else ''} (sha256 {adjudications.short})"
