"""Where two runs of the same documents differ most: per suite, the documents with the largest
change of accuracy (a failed document counts 0, as in the headline) and the verdict counts that moved.
"""

from __future__ import annotations

from typing import Any

from oeb.report.runs import Run
from oeb.scoring import RESULTS


def _accuracy(line: dict[str, Any]) -> float:
    return line["accuracy"] if line["status"] == "scored" else 0.0


def _moved(a: dict[str, Any], b: dict[str, Any]) -> dict[str, int]:
    """Verdict kinds whose count changed from a to b (only when both documents were scored)."""
    if a["status"] != "scored" or b["status"] != "scored":
        return {}
    return {kind: b[kind] - a[kind] for kind in RESULTS if b[kind] != a[kind]}


def compare(a: Run, b: Run, top: int = 10) -> dict[str, Any]:
    """Per suite, the `top` documents with the largest |accuracy b - accuracy a|, largest first."""
    lines_b = {line["id"]: line for line in b.lines}
    suites: dict[str, list[dict[str, Any]]] = {}
    for line_a in a.lines:
        line_b = lines_b[line_a["id"]]
        suite = (line_a.get("row") or {}).get("suite") or "other"
        suites.setdefault(suite, []).append(
            {
                "id": line_a["id"],
                "status": [line_a["status"], line_b["status"]],
                "accuracy": [_accuracy(line_a), _accuracy(line_b)],
                "delta": _accuracy(line_b) - _accuracy(line_a),
                "moved": _moved(line_a, line_b),
            }
        )
    return {
        "a": {"run": a.name, "system": a.label},
        "b": {"run": b.name, "system": b.label},
        "per_suite": {
            suite: {
                "documents": len(docs),
                "differ": sum(1 for doc in docs if doc["delta"] or doc["moved"]),
                "top": sorted(docs, key=lambda doc: (-abs(doc["delta"]), doc["id"]))[:top],
            }
            for suite, docs in suites.items()
        },
    }
