"""`oeb adjudicate diff`: each system's score before and after an adjudication file.

Per system: the headline and its 95% interval before and after, the rank before and after, the paired
difference (after minus before, per document) with its interval (`oeb.report.paired`, as `oeb compare`
computes it), and the entries that moved the system most: each entry's own effect on the headline
(its document graded under it alone, divided by the documents). Nothing is scored again: grading is
read from each run's cache (`oeb.report.adjudicated`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from oeb.gold.apply import adjudicate
from oeb.gold.entries import Adjudications
from oeb.report.adjudicated import AdjudicatedRun, _graded, adjudicate_run
from oeb.report.compare import compare
from oeb.report.leaderboard import leaderboard
from oeb.report.runs import Run

TOP = 5


def _moved_by(done: AdjudicatedRun, adjudications: Adjudications, top: int) -> list[dict[str, Any]]:
    """The entries whose own effect on this run's headline is largest (by size), largest first."""
    by_doc = adjudications.by_document()
    documents = len(done.before.lines) or 1
    graded = _graded(done.before, list(done.changed)) if done.changed else {}
    effects = []
    for doc_id, (result, details) in graded.items():
        for entry in by_doc[doc_id]:
            alone = adjudicate(result, details, [entry])
            if alone.applied:
                delta = (alone.result["accuracy"] - result["accuracy"]) / documents
                effects.append({"id": entry.id, "doc_id": doc_id, "address": entry.address, "delta": delta})
    effects.sort(key=lambda effect: (-abs(effect["delta"]), effect["id"]))
    return effects[:top]


def _ranks(board: dict[str, Any]) -> dict[str, int]:
    return {row["system"]: rank for rank, row in enumerate(board["rows"], 1)}


def diff(runs: Sequence[Run], adjudications: Adjudications, top: int = TOP) -> dict[str, Any]:
    """The comparison as JSON: per system (in the after leaderboard's order) its numbers against the
    raw gold and under the file, and the file's digest and accepted count."""
    raw = [adjudicate_run(run, Adjudications(())).run for run in runs]  # a run graded under a file: undone
    done = {run.label: adjudicate_run(run, adjudications) for run in raw}
    before = leaderboard(raw)
    after = leaderboard([d.run for d in done.values()])
    ranks_before, ranks_after = _ranks(before), _ranks(after)
    rows_before = {row["system"]: row for row in before["rows"]}
    systems = []
    for row in after["rows"]:
        label = row["system"]
        paired = compare(done[label].before, done[label].run)["paired"]
        systems.append(
            {
                "system": label,
                "before": {"headline": rows_before[label]["headline"], "ci95": rows_before[label]["ci95"]},
                "after": {"headline": row["headline"], "ci95": row["ci95"]},
                "rank": [ranks_before[label], ranks_after[label]],
                "difference": {key: paired[key] for key in ("documents", "mean_diff", "ci95", "p_value", "verdict")},
                "documents_changed": len(done[label].changed),
                "moved_by": _moved_by(done[label], adjudications, top),
            }
        )
    return {
        "adjudications": adjudications.url,
        "sha256": adjudications.sha256,
        "accepted": len(adjudications.accepted),
        "systems": systems,
    }


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.1f}"


def _ci(pair: Sequence[float] | None, signed: bool = False) -> str:
    if pair is None:
        return "–"
    form = "{:+.1f}" if signed else "{:.1f}"
    return f"{form.format(100 * pair[0])} to {form.format(100 * pair[1])}"


HEADER = [
    "system", "before", "accuracy 95% CI", "after", "accuracy 95% CI", "rank", "Δ (after - before)", "95% CI",
    "moved most by",
]  # fmt: skip
"""The interval beside a headline is its accuracy's (as `oeb report` labels it): with failed documents
the headline (accuracy × coverage) lies below it."""


def rows(result: dict[str, Any]) -> list[list[str]]:
    """The diff as table rows (percent)."""
    out = []
    for system in result["systems"]:
        moved = ", ".join(f"{m['id']} ({100 * m['delta']:+.2f})" for m in system["moved_by"]) or "–"
        difference = system["difference"]
        out.append(
            [
                system["system"],
                _pct(system["before"]["headline"]),
                _ci(system["before"]["ci95"]),
                _pct(system["after"]["headline"]),
                _ci(system["after"]["ci95"]),
                f"{system['rank'][0]} → {system['rank'][1]}",
                "–" if difference["mean_diff"] is None else f"{100 * difference['mean_diff']:+.2f}",
                _ci(difference["ci95"], signed=True),
                moved,
            ]
        )
    return out


def render(result: dict[str, Any], form: str) -> str:
    """The diff as text, Markdown or JSON."""
    if form == "json":
        return json.dumps(result, indent=2, ensure_ascii=False) + "\n"
    from oeb.report.tables import markdown_table

    plural = "" if result["accepted"] == 1 else "s"
    head = (
        f"{result['accepted']} accepted adjudication{plural} of {result['adjudications']} "
        f"(sha256 {result['sha256'][:12]}); headline (accuracy × coverage) in percent beside its accuracy's "
        "95% CI, as oeb report; difference per document (paired bootstrap)"
    )
    table = markdown_table(HEADER, rows(result), {1, 2, 3, 4, 6, 7})
    if form == "md":
        return f"## Adjudication diff\n\n{head}\n\n{table}\n"
    widths = [max(len(r[i]) for r in [HEADER, *rows(result)]) for i in range(len(HEADER))]
    lines = ["  ".join(cell.ljust(widths[i]) for i, cell in enumerate(r)).rstrip() for r in [HEADER, *rows(result)]]
    return head + "\n" + "\n".join(lines) + "\n"
