"""The leaderboard: one row per system setting, the numbers recomputed from scores.jsonl.

Definitions (the same per-document means as summary.json, docs/reports.md):

- `accuracy`: the mean over scored documents of each document's accuracy (matched / total);
- `<kind>` shares (misread, unfound, fabricated, invented_item, invented_field): the mean over scored
  documents of count / total, 0 for a document with no addresses. Each document weighs equally, so
  accuracy and the five shares sum to 1 (100 %) whenever a document's total is matched plus its five
  error counts, which the scorer guarantees for every document with at least one address;
- `coverage`: scored / (scored + failed); `headline` = accuracy × coverage (failed documents count 0);
- `cost`: per unit a record can report (`usd`, and the vendor's own `credits`, never converted nor
  added to dollars), over the documents whose record reports that unit: their number, the `total`,
  `per_doc` (the mean) and `per_1k_pages` = 1000 × their cost / their pages, over those of them whose
  PDF page count documents.json knows (`paged_documents`, `pages`); None for a unit nobody reported;
- `ci95`: a percentile bootstrap of accuracy: 2,000 resamples of the scored documents with
  replacement, numpy's default generator seeded with `SEED`, the 2.5th and 97.5th percentiles;
- `latency_p50_s`, `latency_p95_s`: the median and 95th percentile (numpy's linear interpolation) of
  the documents' wall time as their records report it (`cost.wall_s`: every attempt, retries
  included), None when no record reports one (a brought folder).

Runs graded by different scorers measure different things: they are ranked together only when asked
(`mixed_scorers`), and then each row shows its scorer.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from oeb.report.runs import Run, check_scorers
from oeb.run.grade.pages import UNITS
from oeb.scoring import RESULTS

if TYPE_CHECKING:
    from oeb.gold.entries import Adjudications

log = logging.getLogger("oeb.report")

KINDS = RESULTS[1:]
SEED = 0
RESAMPLES = 2000
COST_IS = (
    "as the vendor reports it, in dollars or its own credits (never converted, never added), over the "
    "documents that report it; per 1k pages = 1000 × cost / PDF pages, over those whose page count "
    "grading recorded (field_matching/documents.json)."
)


def _share(line: dict[str, Any], kind: str) -> float:
    return line[kind] / line["total"] if line["total"] else 0.0


def bootstrap_ci(values: Sequence[float], seed: int = SEED) -> tuple[float, float] | None:
    """95 % percentile interval of the mean of `values`; seeded, so a report is reproducible."""
    if not values:
        return None
    data = np.asarray(values, dtype=float)
    picks = np.random.default_rng(seed).integers(0, len(data), size=(RESAMPLES, len(data)))
    means = data[picks].mean(axis=1)
    low, high = np.percentile(means, [2.5, 97.5])
    return float(low), float(high)


def _pages(entry: Any) -> int | None:
    """A documents.json entry's page count, when it has a usable one."""
    pages = entry.get("pages") if isinstance(entry, dict) else None
    return pages if isinstance(pages, int) and not isinstance(pages, bool) and pages > 0 else None


def cost(
    lines: Sequence[dict[str, Any]], costs: dict[str, dict[str, float]], documents: dict[str, Any]
) -> dict[str, dict[str, Any] | None]:
    """Per unit, the cost of the documents whose record reports it, per document and per 1,000 pages."""
    result: dict[str, dict[str, Any] | None] = {}
    for unit in UNITS:
        values = {line["id"]: costs[unit][line["id"]] for line in lines if line["id"] in costs[unit]}
        pages = {doc_id: n for doc_id in values if (n := _pages(documents.get(doc_id))) is not None}
        total_pages = sum(pages.values())
        result[unit] = (
            {
                "documents": len(values),
                "total": sum(values.values()),
                "per_doc": sum(values.values()) / len(values),
                "paged_documents": len(pages),
                "pages": total_pages,
                "per_1k_pages": 1000 * sum(values[d] for d in pages) / total_pages if total_pages else None,
            }
            if values
            else None
        )
    return result


def metrics(
    lines: Sequence[dict[str, Any]], costs: dict[str, dict[str, float]], documents: dict[str, Any]
) -> dict[str, Any]:
    """The row of one run (or one suite of it) from its scores.jsonl lines, costs and documents.json."""
    scored = [line for line in lines if line["status"] == "scored"]
    accuracies = [line["accuracy"] for line in scored]
    accuracy = sum(accuracies) / len(scored) if scored else None
    coverage = len(scored) / len(lines) if lines else 0.0
    return {
        "headline": sum(accuracies) / len(lines) if lines else 0.0,
        "accuracy": accuracy,
        **{kind: sum(_share(line, kind) for line in scored) / len(scored) if scored else None for kind in KINDS},
        "coverage": coverage,
        "documents": len(lines),
        "scored": len(scored),
        "failed": len(lines) - len(scored),
        "cost": cost(lines, costs, documents),
        "ci95": bootstrap_ci(accuracies),
    }


def latency(run: Run) -> dict[str, float | None]:
    """The median and 95th percentile of the run's documents' wall time, in seconds."""
    walls = [run.wall_s[line["id"]] for line in run.lines if line["id"] in run.wall_s]
    if not walls:
        return {"latency_p50_s": None, "latency_p95_s": None}
    p50, p95 = np.percentile(walls, [50, 95])
    return {"latency_p50_s": float(p50), "latency_p95_s": float(p95)}


def _suite(line: dict[str, Any]) -> str:
    return (line.get("row") or {}).get("suite") or "other"


def _automation(runs: Sequence[Run], rows: list[dict[str, Any]], adjudications: Adjudications | None) -> None:
    """`auto_99` on the rows of runs whose system gave confidences: the share of its predicted values
    accepted unreviewed at 99% precision; `grounding_f1` on the rows of runs whose system cited
    values: its box-level grounding F1, when the dataset's PDFs can be read (docs/grounding.md); no
    key on the others, so a leaderboard of runs without either reads no more than before."""
    from oeb.report.confidence import auto_at
    from oeb.report.grounding import cites_values, grounding

    for run, row in zip(runs, rows, strict=True):
        share = auto_at(run, 0.99)
        if share is not None:
            row["auto_99"] = share
    cited = [run for run in runs if cites_values(run)]
    if not cited:
        return
    from oeb.errors import OebError
    from oeb.report.audit import dataset_of

    try:
        figures = grounding(cited, dataset_of(cited, None), adjudications=adjudications)
    except OebError as error:  # no dataset to locate the gold in: the column is left out, saying why
        log.warning("the leaderboard has no grounding F1 column: %s", error)
        return
    by_url = {run.url: answer for run, answer in zip(cited, figures["runs"], strict=True)}
    for run, row in zip(runs, rows, strict=True):
        if run.url in by_url:
            row["grounding_f1"] = by_url[run.url]["box"]["f1"]["value"]


def leaderboard(
    runs: Sequence[Run], mixed_scorers: bool = False, adjudications: Adjudications | None = None
) -> dict[str, Any]:
    """Every run's row, best headline first, and the same rows per suite; runs graded by different
    scorers are refused unless `mixed_scorers`; `grounding_f1` takes the evidence boxes of the
    `adjudications` the runs are graded under."""
    if not mixed_scorers:
        check_scorers(list(runs))
    suites = list(dict.fromkeys(_suite(line) for run in runs for line in run.lines))
    rows = []
    for run in runs:
        rows.append(
            {
                "system": run.label,
                "run": run.name,
                "url": run.url,
                "scorer": run.scorer,
                "provenance": run.provenance or None,
                **metrics(run.lines, run.costs, run.documents),
                **latency(run),
                "per_suite": {
                    suite: metrics([line for line in run.lines if _suite(line) == suite], run.costs, run.documents)
                    for suite in suites
                },
            }
        )
    _automation(runs, rows, adjudications)
    rows.sort(key=lambda row: -row["headline"])
    first = next((run for run in runs if run.named("dataset") is not None), runs[0])
    return {
        "dataset": first.named("dataset"),
        "dataset_commit": first.named("dataset_commit"),
        "manifest": first.named("manifest"),
        "mixed_scorers": len({run.scorer for run in runs}) > 1,
        "documents": len(runs[0].lines),
        "suites": suites,
        "bootstrap": {"resamples": RESAMPLES, "seed": SEED, "interval": "percentile 2.5-97.5 of accuracy"},
        "cost_is": COST_IS,
        "rows": rows,
    }
