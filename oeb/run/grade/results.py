"""The graded forms of a run (docs/grading.md): a document's line in scores.jsonl, its verdicts as
JSON and as a table, the summary, and the run's cost. Pure functions, no Ray, no storage.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa  # type: ignore[import-untyped]
import pyarrow.parquet as pq  # type: ignore[import-untyped]

from oeb.formats import VerdictLine
from oeb.scoring import RESULTS, Verdict, show_address

SCORER = "field_matching"

NO_PREDICTION = "no prediction"
"""How a scores.jsonl error begins for a document graded with --partial that has no answer (never
asked, or asked and not saved): `oeb view` lists it as missing rather than failed."""

VERDICT_SCHEMA = pa.schema(
    [
        ("id", pa.string()),
        ("address", pa.string()),
        ("gold_raw", pa.string()),
        ("pred_raw", pa.string()),
        ("gold_canon", pa.string()),
        ("pred_canon", pa.string()),
        ("result", pa.string()),
        ("adjudication", pa.string()),
    ]
)
"""verdicts.parquet: one row per verdict; raw values as JSON text, the address as it prints; the id of
the accepted adjudication that changed the verdict, null otherwise (docs/adjudication.md)."""

SCORE_COLUMNS = (
    "accuracy",
    "precision",
    "recall",
    "f1",
    "total",
    "matched",
    *RESULTS[1:],
    "asserted",
    "addresses_found",
    "addresses_read_right",
    "gold_rows",
    "pred_rows",
    "matched_rows",
    "matching_exact",
)


def verdict_json(verdict: Verdict) -> VerdictLine:
    """A verdict as `details/<id>.jsonl` writes it: the address as [kind, name] pairs."""
    address, gold_raw, pred_raw, gold_canon, pred_canon, result = verdict  # a dict literal: 8x faster than _asdict
    return {
        "address": [list(step) for step in address],
        "gold_raw": gold_raw,
        "pred_raw": pred_raw,
        "gold_canon": gold_canon,
        "pred_canon": pred_canon,
        "result": result,
    }


def jsonl(values: Iterable[Any]) -> bytes:
    """JSON Lines as every run file writes them: one `json.dumps` per line, UTF-8."""
    return "".join(_LINE.encode(value) + "\n" for value in values).encode()


_LINE = json.JSONEncoder(ensure_ascii=False)
"""`json.dumps(value, ensure_ascii=False)` without building an encoder per line (a fifth of the time)."""


def verdict_table(
    doc_id: str,
    details: Sequence[dict[str, Any]],
    marks: Sequence[str | None] | None = None,
    addresses: Sequence[str] | None = None,
) -> pa.Table:
    """One document's verdicts (in their JSON form) as rows of verdicts.parquet; `marks`, the id of the
    adjudication that changed each verdict (None: none did); `addresses`, each verdict's printed
    address when the caller printed them already."""

    def text(value: Any) -> str:
        return json.dumps(value, ensure_ascii=False)

    columns = {
        "id": [doc_id] * len(details),
        "address": list(addresses) if addresses is not None else [show_address(d["address"]) for d in details],
        "gold_raw": [text(d["gold_raw"]) for d in details],
        "pred_raw": [text(d["pred_raw"]) for d in details],
        "gold_canon": [d["gold_canon"] for d in details],
        "pred_canon": [d["pred_canon"] for d in details],
        "result": [d["result"] for d in details],
        "adjudication": list(marks) if marks is not None else [None] * len(details),
    }
    return pa.table(columns, schema=VERDICT_SCHEMA)


ROW_GROUP_ROWS = 1 << 16
"""Verdicts per row group of verdicts.parquet, about: a group per document made a run of 620 small
documents spend 0.3 s writing its file, and readers pay for every group too."""


def verdicts_parquet(tables: Iterable[pa.Table | Path]) -> bytes:
    """verdicts.parquet from documents' verdict tables (each in memory or kept as an Arrow file), in
    the order given, consecutive documents sharing row groups of about `ROW_GROUP_ROWS` rows."""
    sink = pa.BufferOutputStream()
    with pq.ParquetWriter(sink, VERDICT_SCHEMA) as writer:
        group: list[pa.Table] = []
        rows = 0
        for kept in tables:
            table = kept if isinstance(kept, pa.Table) else pa.ipc.open_file(pa.memory_map(str(kept))).read_all()
            group.append(table)
            rows += table.num_rows
            if rows >= ROW_GROUP_ROWS:
                writer.write_table(pa.concat_tables(group))
                group, rows = [], 0
        if group:
            writer.write_table(pa.concat_tables(group))
    return bytes(sink.getvalue().to_pybytes())


def scores_table(lines: Sequence[dict[str, Any]]) -> pa.Table:
    """scores.jsonl as a table: one row per line; lists and errors as text, missing numbers null;
    `scorer` is the digest of the scorer that graded the line."""
    columns: dict[str, list[Any]] = {
        "id": [line["id"] for line in lines],
        "status": [line["status"] for line in lines],
        "suite": [line["row"]["suite"] for line in lines],
    }
    for name in SCORE_COLUMNS:
        columns[name] = [line.get(name) for line in lines]
    for name in ("approximated", "skipped_open_maps"):
        columns[name] = [json.dumps(line[name]) if name in line else None for line in lines]
    columns["error"] = [line.get("error") for line in lines]
    columns["scorer"] = [line.get("scorer") for line in lines]
    return pa.table(columns)


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values)


def _rate(line: dict[str, Any], kind: str) -> float:
    return line[kind] / line["total"] if line["total"] else 0.0


def _means(scored: Sequence[dict[str, Any]]) -> dict[str, Any]:
    means: dict[str, Any] = {"rows": len(scored)}
    for metric in ("accuracy", "precision", "recall"):
        means[metric] = _mean([line[metric] for line in scored])
    for kind in RESULTS[1:]:
        means[f"{kind}_rate"] = _mean([_rate(line, kind) for line in scored])
    return means


def summarize(lines: Sequence[dict[str, Any]], run: str, partial: dict[str, Any] | None = None) -> dict[str, Any]:
    """summary.json: per-document means over scored documents, times coverage."""
    scored = [line for line in lines if line["status"] == "scored"]
    failed = [line for line in lines if line["status"] == "failed"]
    coverage = len(scored) / (len(scored) + len(failed)) if lines else 0.0
    block = None
    if scored:
        means = _means(scored)
        suites: dict[str, list[dict[str, Any]]] = {}
        for line in scored:
            suites.setdefault(line["row"]["suite"], []).append(line)
        block = {
            "headline": means["accuracy"],
            "headline_is": "accuracy",
            **means,
            "per_suite": {suite: _means(members) for suite, members in suites.items()},
        }
    summary = {
        "scorer": SCORER,
        "options": {},
        "run": run,
        "headline": block["headline"] * coverage if block else 0.0,
        "headline_is": "scored.headline × coverage",
        "rows": len(lines),
        "failed": len(failed),
        "coverage": coverage,
        "scored": block,
    }
    if partial:
        summary["partial"] = partial
    return summary


def total_cost(records: Iterable[dict[str, Any]]) -> dict[str, float | None]:
    """The recorded costs summed (4 decimals); a unit no record reported stays null."""
    sums: dict[str, float | None] = {"usd": None, "credits": None}
    for record in records:
        for unit in sums:
            value = (record.get("cost") or {}).get(unit)
            if value is not None:
                sums[unit] = (sums[unit] or 0.0) + value
    return {unit: None if value is None else round(value, 4) for unit, value in sums.items()}


def headline_line(summary: dict[str, Any], cost: dict[str, float | None]) -> str:
    """The one line a grading logs: headline = scored accuracy × coverage, failures, cost."""
    run, rows = summary["run"], summary["rows"]
    if summary["scored"] is None:
        text = f"{run} {SCORER}: headline 0.0000; none of the {rows} rows was scored"
    else:
        scored = summary["scored"]
        text = (
            f"{run} {SCORER}: headline {summary['headline']:.4f} = {scored['accuracy']:.4f} accuracy × coverage "
            f"{scored['rows']}/{rows}, {summary['failed']} failed"
        )
    if cost["usd"] is not None:
        text += f", cost ${cost['usd']:.2f}"
    partial = summary.get("partial")
    if partial:
        unfinished = partial["no_answer"] + partial["not_scored"]
        text += f"; partial: {unfinished} unfinished rows counted 0"
    return text
