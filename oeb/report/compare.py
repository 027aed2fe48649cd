"""Two runs of the same documents side by side: the paired analysis of their difference (overall and
per suite, `oeb.report.paired`) and, per suite, the documents with the largest change of accuracy (a
failed document counts 0, as in the headline) and the verdict counts that moved.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from oeb.report.paired import DESCRIPTION, paired_stats, verdict
from oeb.report.runs import Run
from oeb.scoring import RESULTS


def document_score(line: dict[str, Any]) -> float:
    """A document's share of the headline: its accuracy, 0 when it failed."""
    return line["accuracy"] if line["status"] == "scored" else 0.0


def _headline(run: Run) -> float:
    return sum(document_score(line) for line in run.lines) / len(run.lines) if run.lines else 0.0


def _moved(a: dict[str, Any], b: dict[str, Any]) -> dict[str, int]:
    """Verdict kinds whose count changed from a to b (only when both documents were scored)."""
    if a["status"] != "scored" or b["status"] != "scored":
        return {}
    return {kind: b[kind] - a[kind] for kind in RESULTS if b[kind] != a[kind]}


def _paired(docs: list[dict[str, Any]]) -> dict[str, Any]:
    """The paired statistics of documents taken in id order, so A-B and B-A draw the same resamples."""
    ordered = sorted(docs, key=lambda doc: doc["id"])
    stats = paired_stats(np.array([doc["delta"] for doc in ordered], dtype=np.float64))
    return {**stats, "verdict": verdict(stats)}


def compare(a: Run, b: Run, top: int = 10) -> dict[str, Any]:
    """The paired analysis over the documents both runs hold (B minus A), overall and per suite, and
    per suite the `top` documents with the largest |accuracy b - accuracy a|, largest first."""
    lines_b = {line["id"]: line for line in b.lines}
    suites: dict[str, list[dict[str, Any]]] = {}
    for line_a in a.lines:
        line_b = lines_b.get(line_a["id"])
        if line_b is None:
            continue
        suite = (line_a.get("row") or {}).get("suite") or "other"
        suites.setdefault(suite, []).append(
            {
                "id": line_a["id"],
                "status": [line_a["status"], line_b["status"]],
                "accuracy": [document_score(line_a), document_score(line_b)],
                "delta": document_score(line_b) - document_score(line_a),
                "moved": _moved(line_a, line_b),
            }
        )
    return {
        "a": {"run": a.name, "system": a.label, "headline": _headline(a)},
        "b": {"run": b.name, "system": b.label, "headline": _headline(b)},
        "paired": {
            **_paired([doc for docs in suites.values() for doc in docs]),
            "per_suite": {suite: _paired(docs) for suite, docs in suites.items()},
            "method": DESCRIPTION,
        },
        "per_suite": {
            suite: {
                "documents": len(docs),
                "differ": sum(1 for doc in docs if doc["delta"] or doc["moved"]),
                "top": sorted(docs, key=lambda doc: (-abs(doc["delta"]), doc["id"]))[:top],
            }
            for suite, docs in suites.items()
        },
    }
