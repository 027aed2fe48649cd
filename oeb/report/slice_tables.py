"""Slices, mixes and per-slice comparisons as tables: each result is turned into blocks (a title, a
header, rows, a note) once, and the blocks are printed as rich tables, Markdown or a self-contained
HTML page. Flips come first in every form."""

from __future__ import annotations

import html
from dataclasses import dataclass
from typing import Any

from rich.table import Table

from oeb.report.tables import fitted_table, markdown_table, p_text, signed_points


@dataclass(frozen=True)
class Block:
    title: str
    header: list[str]
    rows: list[list[str]]
    note: str = ""


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.2f}"


def _interval(ci: list[float] | None, signed: bool = False) -> str:
    if ci is None:
        return "–"
    show = signed_points if signed else _pct
    return f"{show(ci[0])} to {show(ci[1])}" if signed else f"{show(ci[0])}–{show(ci[1])}"


def slice_blocks(result: dict[str, Any]) -> list[Block]:
    """The flips (or a line saying there are none), then per slice its systems and paired differences."""
    by = " × ".join(result["by"])
    flips = [
        [flip["name"], str(flip["documents"]), f"{flip['leader']} {_pct(flip['leader_score'])}", winner["system"],
         _pct(winner["score"]), signed_points(winner["mean_diff"]), _interval(winner["ci95"], signed=True)]
        for flip in result["flips"] for winner in flip["winners"]
    ]  # fmt: skip
    flip_note = (
        f"A flip: a slice of at least {result['min_docs']} documents where a system beats the pooled leader "
        f"({result['leader']}) with a paired 95% interval above 0. Percentage points."
    )
    blocks = [
        Block(
            f"flips by {by}: {len(result['flips'])}" if flips else f"flips by {by}: none",
            ["slice", "documents", "pooled leader", "beaten by", "score", "Δ (beater - leader)", "95% CI"],
            flips,
            flip_note,
        )
    ]
    for item in result["slices"]:
        mark = f" (fewer than {result['min_docs']} documents: not ranked)" if item["small"] else ""
        rows = [
            [str(row["rank"] or "–"), row["system"], _pct(row["score"]), _interval(row["ci95"]),
             f"{row['scored']}/{row['documents']}"]
            for row in sorted(item["systems"], key=lambda row: (row["rank"] or 0, -row["score"]))
        ]  # fmt: skip
        pairs = "; ".join(
            f"{pair['b']} - {pair['a']}: {signed_points(pair['mean_diff'])} ({_interval(pair['ci95'], signed=True)}, "
            f"{pair['verdict']})"
            for pair in item["pairs"]
        )
        blocks.append(
            Block(
                f"{item['name']}: {item['documents']} documents{mark}",
                ["rank", "system", "score", "95% CI", "scored/documents"],
                rows,
                f"paired: {pairs}" if pairs else "",
            )
        )
    return blocks


def mix_blocks(result: dict[str, Any]) -> list[Block]:
    """The mix's strata, then the systems at the mix beside their pooled rank."""
    mix = result["mix"]
    strata = [[s["name"], f"{100 * s['share']:.2f}", str(s["documents"])] for s in mix["strata"]]
    partial = (
        f"partial: no documents for {', '.join(mix['missing'])}; the score covers {100 * mix['covered_share']:.1f}% "
        "of the mix, its strata's shares scaled to sum to 1"
        if mix["partial"]
        else ""
    )
    rows = [
        [str(row["rank"]), str(row["pooled_rank"]), row["system"], _pct(row["score"]), _interval(row["ci"]),
         "–" if row["usd_per_1k_pages"] is None else f"${row['usd_per_1k_pages']:.2f}",
         "–" if row["latency_p95_s"] is None else f"{row['latency_p95_s']:.2f} s"]
        for row in result["systems"]
    ]  # fmt: skip
    return [
        Block(f"the mix by {' × '.join(mix['traits'])}", ["stratum", "share %", "documents"], strata, partial),
        Block(
            "at the mix" + (" (partial)" if mix["partial"] else ""),
            ["rank", "pooled rank", "system", "score", "95% CI", "cost/1k pages", "latency p95"],
            rows,
            "Post-stratified: each stratum's mean per-document score (a failed document 0) weighed by its share; "
            "CI: documents resampled within strata.",
        ),
    ]


def compare_blocks(result: dict[str, Any], a: str, b: str) -> list[Block]:
    """`oeb compare A B --by TRAIT`: per slice the paired difference B - A."""
    rows = [
        [item["name"] + (" (small)" if item["small"] else ""), str(item["documents"]), signed_points(item["mean_diff"]),
         _interval(item["ci95"], signed=True), p_text(item["p_value"]),
         item["verdict"]]
        for item in result["slices"]
    ]  # fmt: skip
    return [
        Block(
            f"paired by {' × '.join(result['by'])}: B - A (A = {a}, B = {b})",
            ["slice", "documents", "Δ accuracy (B - A)", "95% CI", "p-value", "verdict"],
            rows,
            f"Percentage points; small: fewer than {result['min_docs']} documents.",
        )
    ]


def rich_blocks(blocks: list[Block], width: int | None = None) -> list[Table]:
    """The blocks as tables at most `width` columns wide (`fitted_table`: every figure whole)."""
    tables = []
    for block in blocks:
        table = fitted_table(block.title, block.header, block.rows, width, left=2)
        table.caption, table.caption_justify = block.note or None, "left"
        tables.append(table)
    return tables


def markdown_blocks(blocks: list[Block]) -> str:
    parts = []
    for block in blocks:
        table = markdown_table(block.header, block.rows) if block.rows else "(none)"
        parts.append(f"## {block.title}\n\n{table}\n" + (f"\n{block.note}\n" if block.note else ""))
    return "\n".join(parts)


def html_blocks(title: str, blocks: list[Block]) -> str:
    """A page of its own: no script, nothing fetched, every value escaped."""
    body = []
    for block in blocks:
        head = "".join(f"<th>{html.escape(cell)}</th>" for cell in block.header)
        rows = "".join(
            "<tr>" + "".join(f"<td>{html.escape(cell)}</td>" for cell in row) + "</tr>" for row in block.rows
        )
        note = f"<p class=note>{html.escape(block.note)}</p>" if block.note else ""
        body.append(f"<h2>{html.escape(block.title)}</h2><table><tr>{head}</tr>{rows}</table>{note}")
    style = (
        "body{font:14px/1.45 system-ui,sans-serif;margin:1.5em}table{border-collapse:collapse}"
        "td,th{border-bottom:1px solid #d0d7de;padding:3px 8px;text-align:left}.note{color:#57606a}"
    )
    return (
        f"<!doctype html><html lang=en><meta charset=utf-8><title>{html.escape(title)}</title><style>{style}</style>"
        f"<h1>{html.escape(title)}</h1>{''.join(body)}</html>\n"
    )
