"""`oeb compare RUN_A RUN_B`: the documents where two runs of the same documents differ most, per suite."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "compare",
        help="the documents where two graded runs differ most, per suite",
        description=(
            "Per suite, the documents with the largest change of accuracy from RUN_A to RUN_B (a failed "
            "document counts 0) and the verdict counts that moved. Both runs must cover the same documents."
        ),
    )
    parser.add_argument("run_a", metavar="RUN_A", help="a graded run folder (local or s3://)")
    parser.add_argument("run_b", metavar="RUN_B", help="another graded run folder of the same documents")
    parser.add_argument("--top", type=int, default=10, metavar="N", help="documents shown per suite (default 10)")
    parser.add_argument("--format", choices=("text", "json"), default="text", help="text: tables (default)")
    parser.set_defaults(run=run)


def _moved(moved: dict[str, int]) -> str:
    return ", ".join(f"{kind} {count:+d}" for kind, count in moved.items())


def _table(suite: str, block: dict[str, Any], a: str, b: str) -> Table:
    table = Table(title=f"{suite}: {block['differ']} of {block['documents']} documents differ", title_justify="left")
    for column in ("document", f"A {a}", f"B {b}", "Δ accuracy", "verdicts moved (B - A)"):
        table.add_column(column, justify="left" if column in ("document", "verdicts moved (B - A)") else "right")
    for doc in block["top"]:
        accuracy = [
            f"{100 * value:.2f}" if status == "scored" else "failed"
            for value, status in zip(doc["accuracy"], doc["status"], strict=True)
        ]
        cells = [doc["id"], *accuracy, f"{100 * doc['delta']:+.2f}", _moved(doc["moved"])]
        table.add_row(*map(Text, cells))  # Text: ids may hold [brackets], which rich reads as markup
    return table


def run(args: argparse.Namespace) -> int:
    from oeb.errors import UsageError
    from oeb.report import compare, load_runs

    if args.top < 1:
        raise UsageError(f"--top {args.top}: give a positive number of documents")
    a, b = load_runs([args.run_a, args.run_b], distinct=False)
    result = compare(a, b, args.top)
    if args.format == "json":
        json.dump(result, sys.stdout, indent=2, ensure_ascii=False)
        sys.stdout.write("\n")
        return 0
    console = Console(width=160)
    console.print(f"A = {a.name} ({a.label}), B = {b.name} ({b.label})", markup=False)
    for suite, block in result["per_suite"].items():
        console.print(_table(suite, block, a.name, b.name))
    return 0
