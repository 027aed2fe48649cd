"""The HTML pages: the report (one self-contained file, inline CSS and JS, no network), and the plain
pages of a comparison and of a gold audit.

The leaderboard and per-suite numbers are embedded as one JSON value; each document's verdicts sit
in their own `<script type="application/json">` block, parsed only when the document is opened, so a
report of 10 systems x 620 documents opens at once. At most `limit` verdicts per document and run
are embedded, errors first (the rest are counted and stay in details/<id>.jsonl).
"""

from __future__ import annotations

import html
import json
from collections.abc import Sequence
from importlib import resources
from typing import Any

from oeb import storage
from oeb.dataset import Dataset
from oeb.report.adjudicated import lines as gold_lines
from oeb.report.audit import COLUMNS as AUDIT_COLUMNS
from oeb.report.audit import Finding, findings_json
from oeb.report.audit import rows as audit_rows
from oeb.report.runs import Run, details, schema_sent
from oeb.report.tables import PAIRED_COLUMNS, TOP_COLUMNS, compare_heading, paired_note, paired_rows, top_rows
from oeb.scoring import RESULTS, show_address

VERDICTS = (*RESULTS, "skipped_open_map")
DETAILS_LIMIT = 200


def _script_json(value: Any) -> str:
    """JSON safe inside a <script> element: no `<` at all, so no `</script>` or `<!--` can end it early."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).replace("<", "\\u003c")


def pdf_link(dataset: str | None, commit: str | None, doc_path: str | None) -> str | None:
    """Where a document is: its manifest path (documents.json) under the dataset the run names. A local
    dataset gives a `file://` URL (it holds wherever the report is moved on this machine), the Hub its
    `resolve` URL at the pinned commit, object storage its URL (shown as text: browsers cannot open it).
    None when grading recorded no path."""
    if not dataset or not isinstance(doc_path, str):
        return None
    if dataset.startswith("hf://datasets/"):
        from huggingface_hub import hf_hub_url  # only a Hub dataset needs it

        from oeb import _hub

        repo = dataset.removeprefix("hf://datasets/")
        return hf_hub_url(repo, doc_path, repo_type="dataset", revision=commit or "main", endpoint=_hub.endpoint())
    if storage.is_local(dataset):
        return (storage.local_path(dataset).absolute() / doc_path).as_uri()
    return storage.join(dataset, doc_path)


def _doc_path(runs: list[Run], doc_id: str) -> str | None:
    """The document's path in the dataset, from the first run whose grading recorded it."""
    entries = (run.documents.get(doc_id) for run in runs)
    return next((entry["doc_path"] for entry in entries if isinstance(entry, dict) and "doc_path" in entry), None)


def _document(runs: list[Run], doc_id: str, limit: int) -> dict[str, Any]:
    """A document's verdicts, compact: each (address, gold) once in `addresses`, and per run rows
    [address index, prediction, prediction canon, kind index], errors first; 0 stands for "as gold"."""
    addresses: list[list[Any]] = []
    index: dict[tuple[Any, ...], int] = {}
    per_run = []
    for run in runs:
        verdicts = sorted(details(run, doc_id), key=lambda v: v["result"] == "matched")
        kept = verdicts[:limit] if limit else verdicts
        rows = []
        for v in kept:
            gold = json.dumps(v["gold_raw"], ensure_ascii=False)
            key = (show_address(tuple(tuple(step) for step in v["address"])), gold, v["gold_canon"])
            if key not in index:
                index[key] = len(addresses)
                addresses.append(list(key))
            pred = json.dumps(v["pred_raw"], ensure_ascii=False)
            rows.append(
                [
                    index[key],
                    0 if pred == gold else pred,
                    0 if v["pred_canon"] == v["gold_canon"] else v["pred_canon"],
                    VERDICTS.index(v["result"]),
                ]
            )
        per_run.append({"rows": rows, "left_out": len(verdicts) - len(kept)})
    schema = next((s for s in (schema_sent(run, doc_id) for run in runs) if s is not None), None)
    return {"schema": schema, "addresses": addresses, "runs": per_run}


def render_html(
    runs: list[Run], board: dict[str, Any], limit: int = DETAILS_LIMIT, findings: Sequence[Finding] | None = None
) -> str:
    """The whole report page; `runs` in the leaderboard's order; with `findings` (`oeb report --audit`)
    a gold audit section whose findings open their document's view and PDF."""
    order = {row["url"]: i for i, row in enumerate(board["rows"])}
    runs = sorted(runs, key=lambda run: order[run.url])
    lines = [{line["id"]: line for line in run.lines} for run in runs]
    documents = []
    for doc_id in runs[0].doc_ids:
        first = lines[0][doc_id]
        documents.append(
            {
                "id": doc_id,
                "suite": (first.get("row") or {}).get("suite") or "other",
                "pdf": pdf_link(board["dataset"], board["dataset_commit"], _doc_path(runs, doc_id)),
                "acc": [
                    by_id[doc_id].get("accuracy") if by_id[doc_id]["status"] == "scored" else None for by_id in lines
                ],
            }
        )
    blocks = "\n".join(
        f'<script type="application/json" id="doc-{i}">{_script_json(_document(runs, d, limit))}</script>'
        for i, d in enumerate(runs[0].doc_ids)
    )
    data = {
        "board": board,
        "documents": documents,
        "verdicts": list(VERDICTS),
        "audit": None if findings is None else findings_json(findings),
        "gold": gold_lines(board),  # the gold used, its error (per suite) and the ranks within its noise
    }
    page = resources.files("oeb.report").joinpath("page.html").read_text(encoding="utf-8")
    head, rest = page.split("/*DATA*/null")
    middle, tail = rest.split("<!--DOCUMENTS-->")
    return head + _script_json(data) + middle + blocks + tail


Cell = str | tuple[str, str | None]
"""A table cell: text, or (text, link) shown as a link when the link is one a browser opens."""

_PLAIN_STYLE = (
    "body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222}table{border-collapse:collapse;margin:.5em 0}"
    "th,td{padding:3px 8px;border-bottom:1px solid #ddd;text-align:left;vertical-align:top}th{background:#f4f4f4}"
    "td{white-space:pre-wrap;word-break:break-word}.note{color:#666;font-size:.9em}h2{font-size:1.15em}"
)


def _cell(cell: Cell) -> str:
    if isinstance(cell, str):
        return html.escape(cell)
    text, link = cell
    if link and link.startswith(("http://", "https://", "file://")):
        return f'<a href="{html.escape(link)}" target="_blank" rel="noopener">{html.escape(text)}</a>'
    return html.escape(text if not link else f"{text} ({link})")  # s3:// is shown, browsers cannot open it


def plain_page(title: str, sections: Sequence[tuple[str, str, Sequence[str], Sequence[Sequence[Cell]]]]) -> str:
    """A self-contained page of tables: each section a heading, a note, a header and rows."""
    body = [f"<h1>{html.escape(title)}</h1>"]
    for heading, note, header, rows in sections:
        body.append(f"<h2>{html.escape(heading)}</h2>")
        if note:
            body.append(f'<p class="note">{html.escape(note)}</p>')
        head = "".join(f"<th>{html.escape(column)}</th>" for column in header)
        cells = "".join("<tr>" + "".join(f"<td>{_cell(cell)}</td>" for cell in row) + "</tr>" for row in rows)
        body.append(f"<table><thead><tr>{head}</tr></thead><tbody>{cells}</tbody></table>")
    return (
        f'<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title>'
        f"<style>{_PLAIN_STYLE}</style></head><body>\n" + "\n".join(body) + "\n</body></html>\n"
    )


def render_compare_html(result: dict[str, Any]) -> str:
    """The comparison as a page: the paired analysis, then per suite the documents that moved most."""
    sections: list[tuple[str, str, Sequence[str], Sequence[Sequence[Cell]]]] = [
        (
            "Paired comparison",
            f"{compare_heading(result)}. {paired_note(result)}",
            PAIRED_COLUMNS,
            paired_rows(result["paired"]),
        )
    ]
    for suite, block in result["per_suite"].items():
        heading = f"{suite}: {block['differ']} of {block['documents']} documents differ"
        sections.append((heading, "", TOP_COLUMNS, top_rows(block)))
    return plain_page("oeb compare", sections)


def render_audit_html(findings: Sequence[Finding], dataset: Dataset, line: str) -> str:
    """The audit view: every finding with a link to its document's PDF, to check the gold against it."""
    paths = {row.doc_id: row.doc_path for row in dataset.rows}
    table: list[list[Cell]] = []
    for finding, cells in zip(findings, audit_rows(findings), strict=True):
        link = pdf_link(dataset.identity, dataset.commit, paths.get(finding.doc_id))
        table.append([(cells[0], link), *cells[1:]])
    note = f"{line}. Check each against the PDF; `oeb audit --write-fixes DIR` writes proposed gold files to review."
    return plain_page("oeb audit", [("Findings", note, AUDIT_COLUMNS, table)])
