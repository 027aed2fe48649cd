"""The leaderboard and the per-suite table as rich tables (terminal) or Markdown, in percent."""

from __future__ import annotations

from typing import Any

from rich.table import Table
from rich.text import Text

from oeb.report.leaderboard import KINDS

COLUMNS = ("system", "headline", "accuracy", *(k.replace("invented_", "inv. ") for k in KINDS))
COLUMNS += ("coverage", "documents", "cost/doc", "cost/1k pages", "accuracy 95% CI")


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


def _cells(row: dict[str, Any], between: str = "; ") -> list[str]:
    ci = row["ci95"]
    return [
        row["system"],
        _pct(row["headline"]),
        _pct(row["accuracy"]),
        *(_pct(row[kind]) for kind in KINDS),
        _pct(row["coverage"]),
        f"{row['scored']}/{row['documents']}",
        *cost_cells(row["cost"], between),
        "–" if ci is None else f"{_pct(ci[0])}–{_pct(ci[1])}",
    ]


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


def rich_tables(board: dict[str, Any]) -> list[Table]:
    """The leaderboard and the per-suite accuracy table, for a terminal."""
    table = Table(title="leaderboard · field_matching", title_justify="left", caption=_caption(board))
    rows = [_cells(row, "\n") for row in board["rows"]]
    for i, column in enumerate(COLUMNS):
        # A narrow terminal wraps the headers and the system names, never a number.
        widest = max((len(line) for cells in rows for line in cells[i].splitlines()), default=0)
        if i == 0:
            table.add_column(column, overflow="fold")
        else:
            table.add_column(column, justify="right", min_width=widest)
    for cells in rows:
        table.add_row(*map(Text, cells))  # Text: ids and options may hold [brackets]
    suites = Table(title="accuracy per suite (scored/documents)", title_justify="left")
    for column in ("system", *board["suites"]):
        suites.add_column(column, justify="left" if column == "system" else "right")
    for row in board["rows"]:
        suites.add_row(*map(Text, _suite_cells(row, board["suites"])))
    return [table, suites]


def _markdown_table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "| --- |" + " ---: |" * (len(header) - 1)]
    lines += ["| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |" for row in rows]
    return "\n".join(lines)


def markdown(board: dict[str, Any]) -> str:
    """The two tables as Markdown, ready for a README or a pull request."""
    return (
        "## Leaderboard\n\n"
        + _markdown_table(list(COLUMNS), [_cells(row) for row in board["rows"]])
        + f"\n\n{_caption(board)}\n\n## Accuracy per suite\n\n"
        + _markdown_table(["system", *board["suites"]], [_suite_cells(r, board["suites"]) for r in board["rows"]])
        + "\n"
    )
