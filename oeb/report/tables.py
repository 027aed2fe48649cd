"""The leaderboard and the per-suite table as rich tables (terminal) or Markdown, in percent; a
`scorer` column when the runs were graded by different scorers (`--mixed-scorers`)."""

from __future__ import annotations

import dataclasses
from typing import Any

from rich.console import RenderableType
from rich.table import Table
from rich.text import Text

from oeb import _fit
from oeb.report.leaderboard import KINDS

COLUMNS = ("system", "headline", "accuracy", *(k.replace("invented_", "inv. ") for k in KINDS))
COLUMNS += ("coverage", "documents", "cost/doc", "cost/1k pages", "latency p50/p95", "accuracy 95% CI")


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.2f}"


def _money(unit: str, value: float, digits: int) -> str:
    return f"${value:.{digits}f}" if unit == "usd" else f"{value:.{digits}f} {unit}"


def cost_cells(cost: dict[str, dict[str, Any] | None], between: str) -> tuple[str, str]:
    """Per document and per 1,000 pages, each unit the vendor reported in its own unit (dollars and
    credits side by side, never added); the per-page figure says over how many priced documents it
    is when some have no known page count."""
    per_doc, per_pages = [], []
    for unit, block in cost.items():
        if block is None:
            continue
        per_doc.append(_money(unit, block["per_doc"], 4))
        if block["per_1k_pages"] is not None:
            some = block["paged_documents"] < block["documents"]
            part = f" ({block['paged_documents']}/{block['documents']} docs)" if some else ""
            per_pages.append(_money(unit, block["per_1k_pages"], 2) + part)
    return between.join(per_doc) or "–", between.join(per_pages) or "–"


GROUNDED = (("grounding_f1", "grounding F1"), ("auto_99", "auto@99%"))
"""The leaderboard's columns of docs/grounding.md: each shown when some run has its figure."""


def _grounded(board: dict[str, Any]) -> list[tuple[str, str]]:
    return [(key, name) for key, name in GROUNDED if any(key in row for row in board["rows"])]


def _columns(board: dict[str, Any]) -> list[str]:
    columns = [*COLUMNS, "scorer"] if board["mixed_scorers"] else list(COLUMNS)
    return columns + [name for _, name in _grounded(board)]


def _cells(row: dict[str, Any], board: dict[str, Any], between: str = "; ") -> list[str]:
    ci = row["ci95"]
    scorer = [(row["scorer"] or "unrecorded")[:12]] if board["mixed_scorers"] else []
    return [
        row["system"],
        _pct(row["headline"]),
        _pct(row["accuracy"]),
        *(_pct(row[kind]) for kind in KINDS),
        _pct(row["coverage"]),
        f"{row['scored']}/{row['documents']}",
        *cost_cells(row["cost"], between),
        _latency(row),
        "–" if ci is None else f"{_pct(ci[0])}–{_pct(ci[1])}",
        *scorer,
        *(
            "n/a" if row.get(key) is None else _pct(row[key]) for key, _ in _grounded(board)
        ),  # none given or none verifiable
    ]


def _latency(row: dict[str, Any]) -> str:
    """The median and 95th percentile of a document's wall time, in seconds."""
    p50, p95 = row.get("latency_p50_s"), row.get("latency_p95_s")
    return "–" if p50 is None or p95 is None else f"{p50:.2f}/{p95:.2f} s"


def _suite_cells(row: dict[str, Any], suites: list[str]) -> list[str]:
    cells = [row["system"]]
    for suite in suites:
        means = row["per_suite"][suite]
        cells.append(f"{_pct(means['accuracy'])} ({means['scored']}/{means['documents']})")
    return cells


def _caption(board: dict[str, Any]) -> str:
    commit = f"@{board['dataset_commit'][:12]}" if board["dataset_commit"] else ""
    return (
        f"{board['dataset']}{commit} · {board['manifest']} · {board['documents']} documents. "
        "Percent; accuracy and the five error shares are per-document means over scored documents and sum to 100; "
        f"headline = accuracy × coverage; CI: {board['bootstrap']['resamples']} bootstrap resamples, "
        f"seed {board['bootstrap']['seed']}. Cost: {board['cost_is']}"
    )


PRIORITY = {
    "system": _fit.ALWAYS,
    "headline": _fit.ALWAYS,
    "accuracy 95% CI": _fit.ALWAYS,
    "scorer": _fit.ALWAYS,
    "auto@99%": 2,
    "grounding F1": 2,
    "accuracy": 1,
    "coverage": 2,
    "cost/1k pages": 3,
    "documents": 4,
    "cost/doc": 5,
    "latency p50/p95": 6,
    **{kind.replace("invented_", "inv. "): 7 for kind in KINDS},
}
"""Which leaderboard columns a narrow terminal keeps longest (higher numbers are dropped first)."""
SYSTEM_WIDTH = 16
"""A system label wider than this folds onto more lines rather than crowd out a figure."""
FOLDED_WIDTH = 10
"""A name column folds no narrower than this (or its header's longest word) before columns go."""
WIDE = "--wide shows every column"


def rich_tables(board: dict[str, Any], width: int | None = None, how: str = WIDE) -> list[RenderableType]:
    """The leaderboard and the per-suite accuracy table, for a terminal `width` columns wide (None:
    every column): every figure whole, the columns that do not fit left out (the system, headline
    and CI never) and named in a line after the leaderboard, which says `how` to see them."""
    header, rows = _columns(board), [_cells(row, board, "\n") for row in board["rows"]]
    columns = [
        _fit.column(name, [row[i] for row in rows], PRIORITY[name], SYSTEM_WIDTH if i == 0 else None)
        for i, name in enumerate(header)
    ]
    kept = columns if width is None else _fit.fit(columns, width)
    sizes = [None] * len(kept) if width is None else _fit.widths(kept, width, frozenset({0}))
    shown = [header.index(column.header) for column in kept]
    table = Table(title="leaderboard · field_matching", title_justify="left", caption=_caption(board))
    for column, size in zip(kept, sizes, strict=True):
        # A narrow terminal wraps the headers and folds the system labels, never a number.
        right: dict[str, Any] = {"overflow": "fold"} if column.header == "system" else {"justify": "right"}
        table.add_column(column.header, width=size, min_width=column.need, **right)
    for cells in rows:
        table.add_row(*(Text(cells[i]) for i in shown))  # Text: ids and options may hold [brackets]
    out: list[RenderableType] = [table]
    dropped = [column.header for column in columns if column not in kept]
    if dropped and width is not None:
        out.append(Text(_fit.dropped_line(dropped, width, how)))
    return out + _suite_tables(board, width)


def _suite_tables(board: dict[str, Any], width: int | None) -> list[RenderableType]:
    """Accuracy per suite: a suite's cell on two lines when one line is too wide, and the suites
    spread over several tables when even that is (every table keeps the system column)."""
    cells = [_suite_cells(row, board["suites"]) for row in board["rows"]]
    system = min(SYSTEM_WIDTH, _fit.cells_need("system", [row[0] for row in cells]))

    def needs(folded: bool) -> list[int]:
        lines = [
            [row[i].replace(" (", "\n(") if folded else row[i] for row in cells]
            for i in range(1, len(board["suites"]) + 1)
        ]
        return [_fit.cells_need(suite, column) for suite, column in zip(board["suites"], lines, strict=True)]

    folded = width is not None and _fit.table_width([system, *needs(False)]) > width
    groups: list[list[int]] = [[]]
    for number, need in enumerate(needs(folded), start=1):
        if (
            groups[-1]
            and width is not None
            and _fit.table_width([system, *(needs(folded)[i - 1] for i in groups[-1]), need]) > width
        ):
            groups.append([])
        groups[-1].append(number)
    tables: list[RenderableType] = []
    for group in groups:
        suites = Table(title="accuracy per suite (scored/documents)" if not tables else None, title_justify="left")
        suites.add_column("system", overflow="fold", min_width=system)
        for number in group:
            suites.add_column(board["suites"][number - 1], justify="right", no_wrap=True)
        for row in cells:
            shown = [row[i].replace(" (", "\n(") if folded else row[i] for i in group]
            suites.add_row(Text(row[0]), *map(Text, shown))
        tables.append(suites)
    return tables


def fitted_table(
    title: str,
    header: list[str],
    rows: list[list[str]],
    width: int | None,
    *,
    left: int = 1,
    text_last: bool = False,
    droppable: tuple[str, ...] = (),
    how: str = WIDE,
) -> Table:
    """A table of text cells at most `width` columns wide (None: as wide as it needs), every figure
    and header word whole: the first `left` columns (names, ids) fold onto more lines past
    `SYSTEM_WIDTH` (down to `FOLDED_WIDTH` when the table is still too wide), a `text_last` column
    (words) wraps, a figure never does; then the `droppable` columns go, first named first, and the
    caption names them with `how` to see them."""
    wraps = set(range(left)) | ({len(header) - 1} if text_last else set())
    columns = [
        _fit.column(name, [row[i] for row in rows], most=SYSTEM_WIDTH if i in wraps else None)
        for i, name in enumerate(header)
    ]
    if width is not None and _fit.table_width([c.need for c in columns]) > width:
        columns = [
            dataclasses.replace(c, need=min(c.need, max(FOLDED_WIDTH, *map(len, c.header.split()))))
            if i in wraps
            else c
            for i, c in enumerate(columns)
        ]
    kept = list(range(len(columns)))
    for name in droppable:
        if width is None or _fit.table_width([columns[i].need for i in kept]) <= width:
            break
        kept = [i for i in kept if header[i] != name]
    later = frozenset(n for n, i in enumerate(kept) if i in wraps)
    shown = [columns[i] for i in kept]
    sizes: list[int | None] = [None] * len(shown) if width is None else list(_fit.widths(shown, width, later))
    dropped = [header[i] for i in range(len(header)) if i not in kept]
    caption = _fit.dropped_line(dropped, width, how) if dropped and width is not None else None
    table = Table(title=title, title_justify="left", caption=caption, caption_justify="left")
    for i, column, size in zip(kept, shown, sizes, strict=True):
        justify: Any = "left" if i in wraps else "right"
        table.add_column(column.header, justify=justify, width=size, min_width=column.need, overflow="fold")
    for row in rows:
        table.add_row(*(Text(row[i]) for i in kept))  # Text: ids and names may hold [brackets]
    return table


def markdown_table(header: list[str], rows: list[list[str]], numbers: set[int] | None = None) -> str:
    """A Markdown table; the `numbers` columns (by default all but the first) aligned right."""
    right = set(range(1, len(header))) if numbers is None else numbers
    lines = [
        "| " + " | ".join(header) + " |",
        "|" + "|".join(" ---: " if i in right else " --- " for i in range(len(header))) + "|",
    ]
    lines += ["| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |" for row in rows]
    return "\n".join(lines)


def markdown(board: dict[str, Any]) -> str:
    """The two tables as Markdown, ready for a README or a pull request."""
    return (
        "## Leaderboard\n\n"
        + markdown_table(_columns(board), [_cells(row, board) for row in board["rows"]])
        + f"\n\n{_caption(board)}\n\n## Accuracy per suite\n\n"
        + markdown_table(["system", *board["suites"]], [_suite_cells(r, board["suites"]) for r in board["rows"]])
        + "\n"
    )


PAIRED_COLUMNS = ("scope", "documents", "Δ accuracy (B - A)", "95% CI", "p-value", "verdict")
TOP_COLUMNS = ("document", "A", "B", "Δ accuracy", "verdicts moved (B - A)")


def signed_points(value: float | None) -> str:
    """Percentage points with their sign; one that rounds to zero is plain 0.00 (never -0.00)."""
    if value is None:
        return "–"
    shown = f"{100 * value:+.2f}"
    return "0.00" if float(shown) == 0 else shown


def p_text(value: float | None) -> str:
    return "–" if value is None else f"{value:.2g}" if value < 0.001 else f"{value:.3f}"


def paired_rows(paired: dict[str, Any]) -> list[list[str]]:
    """The paired analysis as table rows, overall first then per suite, in percentage points."""
    rows = []
    for scope, stats in [("all", paired), *paired["per_suite"].items()]:
        ci = stats["ci95"]
        interval = "–" if ci is None else f"{signed_points(ci[0])} to {signed_points(ci[1])}"
        rows.append(
            [
                scope,
                str(stats["documents"]),
                signed_points(stats["mean_diff"]),
                interval,
                p_text(stats["p_value"]),
                stats["verdict"],
            ]
        )
    return rows


def top_rows(block: dict[str, Any]) -> list[list[str]]:
    """A suite's documents that changed most: accuracy in A and B (or "failed"), the change and the
    verdict counts that moved."""
    rows = []
    for doc in block["top"]:
        accuracy = [
            _pct(value) if status == "scored" else "failed"
            for value, status in zip(doc["accuracy"], doc["status"], strict=True)
        ]
        moved = ", ".join(f"{kind} {count:+d}" for kind, count in doc["moved"].items())
        rows.append([doc["id"], *accuracy, signed_points(doc["delta"]), moved])
    return rows


def compare_heading(result: dict[str, Any]) -> str:
    """Which run is A and which B, with their headlines, and the gold they were read under when an
    adjudication file applied (`gold`: oeb.report.adjudicated.gold_line)."""
    a, b = result["a"], result["b"]
    return (
        f"A = {a['run']} ({a['system']}, headline {_pct(a['headline'])}), "
        f"B = {b['run']} ({b['system']}, headline {_pct(b['headline'])})"
    ) + (f"; {result['gold']}" if result.get("gold") else "")


def paired_note(result: dict[str, Any]) -> str:
    """What the paired numbers are, in one paragraph."""
    method = result["paired"]["method"]
    return (
        f"Percentage points; difference: {method['difference']}; CI: {method['ci95']}; "
        f"p: {method['p_value']}. no difference: the interval holds 0, or p is 0.05 or more."
    )


def compare_markdown(result: dict[str, Any]) -> str:
    """The comparison as Markdown: the paired analysis, then per suite the documents that moved most."""
    parts = [
        f"## Paired comparison\n\n{compare_heading(result)}\n",
        markdown_table(list(PAIRED_COLUMNS), paired_rows(result["paired"])),
        f"\n{paired_note(result)}\n",
    ]
    for suite, block in result["per_suite"].items():
        parts.append(f"### {suite}: {block['differ']} of {block['documents']} documents differ\n")
        parts.append(markdown_table(list(TOP_COLUMNS), top_rows(block)) + "\n")
    return "\n".join(parts)
