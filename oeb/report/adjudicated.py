"""Graded runs under an adjudication file, from what grading already wrote, and the leaderboard that
says which gold it used and how wrong that gold still is (docs/adjudication.md).

The rule changes verdicts after scoring (`oeb.gold.apply`), so a graded run needs no scoring again:
only the documents an accepted entry names are read back from the grading cache
(`field_matching/cache/<id>.json`: the scorer's result and verdicts) and adjudicated; every other
document's line is the run's own. This is what `oeb adjudicate diff`, `oeb report --adjudications`
and the review page use.

`oeb report`, `oeb compare` and `oeb view` take `--adjudications URL` (`none`: the raw gold); without
it, the file the runs' config.yaml names (`dataset.adjudications`), else the one beside their dataset
(`DATASET/adjudications.yaml`) when there is one: the order `oeb grade` takes.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from oeb import _json, storage
from oeb.errors import AdjudicationError, StorageError
from oeb.gold.apply import Adjudicated, adjudicate
from oeb.gold.derivation import for_system, generated, read_draft
from oeb.gold.entries import FILE_NAME, NONE, Adjudications, load
from oeb.gold.error import accuracy, accuracy_shown, gold_error, shown, within_noise
from oeb.gold.where import configured, is_none
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
    """The run under the file's accepted entries: only the documents they name (and those a grading
    under another file changed, put back to the scorer's own result) are read again."""
    by_doc = adjudications.by_document()
    scored = {line["id"]: line for line in run.lines if line["status"] == "scored"}
    touched = [doc_id for doc_id, line in scored.items() if doc_id in by_doc or line.get("adjudications")]
    graded = _graded(run, touched) if touched else {}
    changed: dict[str, Adjudicated] = {}
    regraded = dict(run.regraded)  # a run read again keeps the documents an earlier reading put back
    lines = []
    for line in run.lines:
        doc_id = line["id"]
        if doc_id not in graded:
            lines.append(line)
            continue
        result, details = graded[doc_id]
        done = regraded[doc_id] = adjudicate(result, details, by_doc.get(doc_id, []))
        metrics = {key: value for key, value in done.result.items() if key in line}
        kept = {key: value for key, value in line.items() if key != "adjudications"}
        if not done.applied:
            lines.append({**kept, **metrics})
            continue
        changed[doc_id] = done
        lines.append({**kept, **metrics, "adjudications": list(done.applied)})
    return AdjudicatedRun(dataclasses.replace(run, lines=lines, regraded=regraded), run, changed)


def gold_line(dataset: str | None, commit: str | None, adjudications: Adjudications | None) -> str:
    """`gold: <dataset>@<commit> + N adjudications (sha256 12 chars)`, as every leaderboard says it."""
    named = f"{dataset}@{commit[:12]}" if dataset and commit else str(dataset)
    if adjudications is None:
        return f"gold: {named} (raw, no adjudications)"
    count = len(adjudications.accepted)
    return f"gold: {named} + {count} adjudication{'s' if count != 1 else ''} (sha256 {adjudications.short})"


@dataclass(frozen=True)
class Gold:
    """The runs under the file (the runs themselves without one) and the file (None: raw gold)."""

    runs: list[Run]
    adjudications: Adjudications | None


def _beside(runs: Sequence[Run]) -> str | None:
    """The dataset's own adjudications.yaml, when the runs' dataset holds one: a folder, s3://, or a
    Hub dataset at the commit the runs were graded at (where grading read it: `oeb.gold.check.applying`)."""
    named = next((run.named("dataset") for run in runs if run.named("dataset")), None)
    if not isinstance(named, str):
        return None
    if named.startswith("hf://"):
        commit = next((run.named("dataset_commit") for run in runs if run.named("dataset_commit")), None)
        if not isinstance(commit, str) or "@" in named:
            return None  # no pinned commit: the file of another commit must not be read in its place
        named = f"{named}@{commit}"
    url = storage.join(named, FILE_NAME)
    with contextlib.suppress(StorageError, ValueError):
        if storage.exists(url):
            return url
    return None


def applying_url(runs: Sequence[Run], given: str | None) -> str | None:
    """The adjudication file the runs are read under, in `oeb grade`'s order: `given` (`none`: None),
    else the one their config.yaml names (`dataset.adjudications`), else the file beside their
    dataset. Runs configured with different files are refused in one line: which one is meant?"""
    if given is not None:
        return None if is_none(given) else given
    kept: list[str | None] = []
    files: dict[str, list[str]] = {}
    for run in runs:
        named = configured(run.url)
        if named is None:
            if not kept:
                kept.append(_beside(runs))
            named = kept[0]
        files.setdefault(NONE if named is None or is_none(named) else named, []).append(run.name)
    if len(files) > 1:
        said = "; ".join(
            f"{', '.join(names[:2])}{' ...' if len(names) > 2 else ''}: {url}" for url, names in files.items()
        )
        raise AdjudicationError(
            f"these runs are graded under different adjudication files ({said}); give --adjudications URL "
            f"(or {NONE}) to read them all under one"
        )
    chosen = next(iter(files), NONE)
    return None if chosen == NONE else chosen


def under_gold(runs: list[Run], given: str | None) -> Gold:
    """The runs graded under the file that applies (`applying_url`), checked against their dataset
    first (any problem is one line, and nothing is reported)."""
    url = applying_url(runs, given)
    if url is None:
        return Gold(_raw(runs), None)
    adjudications = load(url)
    from oeb.gold.check import checked
    from oeb.report.audit import dataset_of

    dataset = dataset_of(runs, None)
    checked(adjudications, dataset)
    draft = read_draft(dataset)  # a drafted gold: each run without the values it helped decide
    return Gold(
        [adjudicate_run(run, for_system(adjudications, draft, run.settings) or adjudications).run for run in runs],
        adjudications,
    )


def _raw(runs: list[Run]) -> list[Run]:
    """The runs against the raw gold: the lines a grading under a file changed are put back to the
    scorer's own (from the cache); runs with none are kept as they are, nothing read."""
    if not any(line.get("adjudications") for run in runs for line in run.lines):
        return runs
    from oeb.report.audit import dataset_of

    draft = read_draft(dataset_of(runs, None))  # a drafted gold: still without the values a run helped decide
    return [adjudicate_run(run, for_system(None, draft, run.settings) or Adjudications(())).run for run in runs]


def annotate(board: dict[str, Any], gold: Gold) -> dict[str, Any]:
    """The board with `gold` (its line, the file, its digest and the ids applied), `gold_error` and,
    per row from the second, `within_gold_noise` (unchanged without a file); on a drafted gold also
    `draft` (docs/own-documents.md)."""
    return with_draft(_annotated(board, gold), gold)


def with_draft(board: dict[str, Any], gold: Gold) -> dict[str, Any]:
    """`draft`: the drafted gold's caption and counts, its accuracy from the checked sample
    (`draft_accuracy`), and each row's `excluded_values` (leave-drafters-out grading)."""
    block = next((run.provenance["draft"] for run in gold.runs if isinstance(run.provenance.get("draft"), dict)), None)
    if block is None:
        return board
    excluded = {run.label: sum(int(line.get("excluded_values", 0)) for line in run.lines) for run in gold.runs}
    rows = [{**row, "excluded_values": excluded.get(row["system"], 0)} for row in board["rows"]]
    entries = gold.adjudications.entries if gold.adjudications is not None else ()
    return {**board, "rows": rows, "draft": {**block, "excluded_values": excluded}, "draft_accuracy": accuracy(entries)}


def _annotated(board: dict[str, Any], gold: Gold) -> dict[str, Any]:
    adjudications = gold.adjudications
    if adjudications is None:
        return board
    suites = {line["id"]: (line.get("row") or {}).get("suite") or "other" for line in gold.runs[0].lines}
    error = gold_error(adjudications.entries, suites)
    applied = sorted(
        {i for run in gold.runs for line in run.lines for i in line.get("adjudications", ()) if not generated(i)}
    )
    noise = within_noise([row["headline"] for row in board["rows"]], error)
    rows = [
        {**row, "within_gold_noise": noise[number - 1] if number else False} for number, row in enumerate(board["rows"])
    ]
    return {
        **board,
        "rows": rows,
        "gold": {
            "line": gold_line(board["dataset"], board["dataset_commit"], adjudications),
            "adjudications": adjudications.url,
            "sha256": adjudications.sha256,
            "accepted": len(adjudications.accepted),
            "applied": applied,
            "error_line": shown(error),
        },
        "gold_error": error,
    }


def lines(board: dict[str, Any]) -> list[str]:
    """The lines under the leaderboard: the gold used, its error, the ranks within its noise."""
    found = []
    if "draft" in board:
        found += [board["draft"]["caption"], accuracy_shown(board["draft_accuracy"])]
    if "gold" not in board:
        return found
    found += [board["gold"]["line"]] + ([] if "draft" in board else [shown(board["gold_error"])])
    error = board["gold_error"]
    for suite, block in (error or {}).get("per_suite", {}).items():
        found.append(f"  {suite}: " + shown(block).removeprefix("gold error: "))
    close = [
        f"{board['rows'][n - 1]['system']} / {row['system']}"
        for n, row in enumerate(board["rows"])
        if row.get("within_gold_noise")
    ]
    if close:
        found.append("within gold noise (score difference below the gold error's upper bound): " + "; ".join(close))
    return found
