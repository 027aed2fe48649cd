"""`oeb report --grounding` as tables: text cells for the terminal and Markdown, JSON and a small HTML
page (the figures are `oeb.report.grounding`'s)."""

from __future__ import annotations

import html
import json
from typing import Any

from oeb.grounding.verdicts import CATEGORIES
from oeb.report.grounding import FIGURES, LEVELS


def _pct(block: dict[str, Any]) -> str:
    value, (low, high) = block["value"], block["ci95"]
    if value is None:
        return "n/a"
    shown = f"{100 * value:.2f}"
    return shown + (f" [{100 * low:.1f}, {100 * high:.1f}]" if low is not None else "")


HEADER = ["system", *(f"{level} {name}" for level in LEVELS for name in FIGURES), "cited", "unverifiable"]
CATEGORY_HEADER = ["system", *CATEGORIES]
NOTE = (
    "A citation is right (box) when on an evidence page with IoU ≥ {iou} against a place oeb's locator finds the "
    "gold value printed, right (page) when on an evidence page; precision over cited matched and misread values, "
    "recall over gold values; 95% bootstrap intervals over documents; unverifiable values (not located) left out."
)


def rows(report: dict[str, Any]) -> list[list[str]]:
    table = []
    for run in report["runs"]:
        if not run["cited"]:
            table.append([run["label"], *["n/a"] * (len(HEADER) - 1)])
            continue
        cells = [_pct(run[level][name]) for level in LEVELS for name in FIGURES]
        table.append([run["label"], *cells, str(run["cited_values"]), str(run["unverifiable"])])
    return table


def category_rows(report: dict[str, Any]) -> list[list[str]]:
    return [
        [run["label"], *(str(run["categories"][name]) if run["cited"] else "n/a" for name in CATEGORIES)]
        for run in report["runs"]
    ]


def render(report: dict[str, Any], form: str) -> str:
    """The report as `md`, `json` or `html` (text is drawn by the CLI from `rows`)."""
    if form == "json":
        return json.dumps(report, indent=2, ensure_ascii=False) + "\n"
    note = NOTE.format(iou=report["iou"])
    if form == "md":
        from oeb.report.tables import markdown_table

        return "\n".join(
            [
                "## Grounding\n",
                markdown_table(HEADER, rows(report)),
                "",
                note,
                "",
                "### Per verdict\n",
                markdown_table(CATEGORY_HEADER, category_rows(report)),
                "",
            ]
        )
    from oeb.report.calibration import html_table

    style = (
        "body{font:14px system-ui;margin:2em}table{border-collapse:collapse}"
        "td,th{border:1px solid #ccc;padding:2px 6px}"
    )
    return (
        f"<!doctype html><html><head><meta charset='utf-8'><title>oeb grounding</title><style>{style}</style>"
        f"</head><body><h1>Grounding</h1>{html_table(HEADER, rows(report))}<p>{html.escape(note)}</p>"
        f"<h2>Per verdict</h2>{html_table(CATEGORY_HEADER, category_rows(report))}</body></html>\n"
    )
