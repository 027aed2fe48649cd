"""`oeb report --calibration`: per run with confidences, how much of its output can be accepted
unreviewed at 95%, 99% and 99.5% precision (with the threshold and a 95% bootstrap interval over
documents), the straight-through rate, the calibration error and the AUROC, overall and per field
(docs/grounding.md). Reads verdicts.parquet and grounding.parquet; the figures are
`oeb.grounding.calibration`'s.
"""

from __future__ import annotations

import html
import json
from typing import Any

import numpy as np

from oeb.grounding import calibration as cal
from oeb.report.confidence import invalid, values
from oeb.report.paired import document_draws
from oeb.report.runs import Run

PRECISIONS = (0.95, 0.99, 0.995)
KEYS = ("95", "99", "99.5")
RESAMPLES = 1000
"""Bootstrap draws of the documents for the coverages' intervals (each draw re-sorts every value)."""
CELLS = 1 << 21
"""Values × draws weighed at once, about (16 MB of weights)."""


def _figures(conf: Any, right: Any) -> dict[str, Any]:
    """Point figures of some values (no interval): coverage and threshold per precision, ECE, AUROC."""
    ranked = cal.rank(conf)
    coverage, threshold = cal.coverage_at(ranked, right, PRECISIONS, np.ones((1, len(conf))))
    return {
        "values": len(conf),
        "with_confidence": int((~np.isnan(conf)).sum()),
        "coverage": {
            key: {"coverage": float(coverage[0, n]), "threshold": _num(threshold[0, n])} for n, key in enumerate(KEYS)
        },
        "ece": cal.expected_calibration_error(conf, right),
        "auroc": cal.auroc(conf, right),
    }


def _num(value: float) -> float | None:
    return None if np.isnan(value) else float(value)


def run_calibration(run: Run) -> dict[str, Any]:
    """The run's figures as `--format json` gives them; `confidence: false` when it gave none."""
    found = values(run)
    head: dict[str, Any] = {"label": run.label, "folder": run.url}
    if found is None:
        return head | {"confidence": False}
    figures = _figures(found.confidence, found.right)
    ranked = cal.rank(found.confidence)
    draws = []
    for counts in document_draws(len(found.documents), RESAMPLES, CELLS // max(1, len(found.right))):
        draws.append(cal.coverage_at(ranked, found.right, PRECISIONS, counts[:, found.document].astype(np.float64))[0])
    spread = np.concatenate(draws) if draws else np.zeros((0, len(KEYS)))
    for n, key in enumerate(KEYS):
        low, high = np.percentile(spread[:, n], [2.5, 97.5]) if len(spread) else (np.nan, np.nan)
        figures["coverage"][key]["ci95"] = [_num(low), _num(high)]
    t99 = figures["coverage"]["99"]["threshold"]
    failed = sum(1 for line in run.lines if line.get("status") == "failed")
    figures["straight_through"] = cal.straight_through(
        found.document, found.confidence, len(found.documents), np.nan if t99 is None else t99, failed
    )
    figures["documents"] = len(found.documents)
    figures["failed"] = failed
    figures |= cal.curves(found.confidence, found.right)
    by_field: dict[str, list[int]] = {}
    for index, name in enumerate(found.field):
        by_field.setdefault(name, []).append(index)
    figures["fields"] = [
        {"field": name} | _figures(found.confidence[rows], found.right[rows]) for name, rows in sorted(by_field.items())
    ]
    return head | {"confidence": True} | figures | invalid(run)


def calibration(runs: list[Run]) -> dict[str, Any]:
    """Every run's figures, in the order given."""
    return {"precisions": list(KEYS), "runs": [run_calibration(run) for run in runs]}


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.2f}"


def _cov(block: dict[str, Any]) -> str:
    ci = block.get("ci95")
    shown = _pct(block["coverage"])
    if block["threshold"] is not None:
        shown += f" (≥{block['threshold']:.4g})"
    if ci and ci[0] is not None:
        shown += f" [{_pct(ci[0])}, {_pct(ci[1])}]"
    return shown


HEADER = ["system", "values", "auto@95%", "auto@99%", "auto@99.5%", "straight-through", "ECE", "AUROC"]
FIELD_HEADER = ["field", "values", "auto@95%", "auto@99%", "auto@99.5%", "ECE", "AUROC"]


def rows(report: dict[str, Any]) -> list[list[str]]:
    """One row per run: n/a throughout for a run without confidences."""
    table = []
    for run in report["runs"]:
        if not run["confidence"]:
            table.append([run["label"], "n/a", "n/a", "n/a", "n/a", "n/a", "n/a", "n/a"])
            continue
        table.append(
            [
                run["label"],
                f"{run['with_confidence']}/{run['values']}",
                *(_cov(run["coverage"][key]) for key in KEYS),
                _pct(run["straight_through"]),
                _pct(run["ece"]),
                "n/a" if run["auroc"] is None else f"{run['auroc']:.3f}",
            ]
        )
    return table


def field_rows(run: dict[str, Any]) -> list[list[str]]:
    return [
        [
            field["field"],
            f"{field['with_confidence']}/{field['values']}",
            *(_cov(field["coverage"][key]) for key in KEYS),
            _pct(field["ece"]),
            "n/a" if field["auroc"] is None else f"{field['auroc']:.3f}",
        ]
        for field in run.get("fields", [])
    ]


NOTE = (
    "auto@P%: the share of predicted values accepted unreviewed at the lowest confidence threshold (≥t) "
    "whose accepted values are P% right, with its 95% bootstrap interval over documents; straight-through: "
    "documents whose every value clears the 99% threshold, of all the run's documents (a failed one never "
    "goes through); ECE in points (10 bins); a value without confidence is never accepted."
)


def render(report: dict[str, Any], form: str) -> str:
    """The report as `md`, `json` or `html` (text is drawn by the CLI from `rows`)."""
    if form == "json":
        return json.dumps(report, indent=2, ensure_ascii=False) + "\n"
    if form == "md":
        from oeb.report.tables import markdown_table

        parts = ["## Calibration\n", markdown_table(HEADER, rows(report)), "", NOTE, ""]
        for run in report["runs"]:
            if run["confidence"]:
                parts += [f"### {run['label']} · per field\n", markdown_table(FIELD_HEADER, field_rows(run)), ""]
        return "\n".join(parts)
    return _html(report)


def html_table(header: list[str], body: list[list[str]]) -> str:
    head = "".join(f"<th>{html.escape(cell)}</th>" for cell in header)
    lines = "".join("<tr>" + "".join(f"<td>{html.escape(cell)}</td>" for cell in row) + "</tr>" for row in body)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{lines}</tbody></table>"


def _html(report: dict[str, Any]) -> str:
    sections = [f"<h1>Calibration</h1>{html_table(HEADER, rows(report))}<p>{html.escape(NOTE)}</p>"]
    for run in report["runs"]:
        if run["confidence"]:
            sections.append(
                f"<h2>{html.escape(run['label'])} · per field</h2>{html_table(FIELD_HEADER, field_rows(run))}"
            )
    style = (
        "body{font:14px system-ui;margin:2em}table{border-collapse:collapse}"
        "td,th{border:1px solid #ccc;padding:2px 6px}"
    )
    return (
        f"<!doctype html><html><head><meta charset='utf-8'><title>oeb calibration</title><style>{style}</style>"
        f"</head><body>{''.join(sections)}</body></html>\n"
    )
