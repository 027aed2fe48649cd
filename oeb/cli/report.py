"""`oeb report RUN [RUN ...]`: the leaderboard over graded run folders, as a table, Markdown, JSON or HTML."""

from __future__ import annotations

import argparse
import io
import json
import sys

from rich.console import Console

from oeb import storage
from oeb.cli._runs import OUT_WIDTH


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "report",
        help="the leaderboard over graded run folders (local or s3://)",
        description=(
            "One row per system setting, best headline first, and the accuracy per suite. Runs of different "
            "datasets, manifests or document sets are refused."
        ),
    )
    parser.add_argument("runs", nargs="+", metavar="RUN", help="a graded run folder (local or s3://)")
    parser.add_argument(
        "--format", choices=("text", "md", "json", "html"), default="text", help="text: tables (default)"
    )
    parser.add_argument("--out", metavar="FILE", help="write to this file (local or s3://) instead of stdout")
    parser.add_argument(
        "--details-limit",
        type=int,
        default=200,
        metavar="N",
        help="html: at most N verdicts per document and system embedded, errors first (0: all)",
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from oeb.errors import UsageError
    from oeb.report import leaderboard, load_runs, markdown, render_html, rich_tables

    if args.details_limit < 0:
        raise UsageError(f"--details-limit {args.details_limit}: give 0 (all) or a positive number")
    runs = load_runs(args.runs)
    board = leaderboard(runs)
    if args.format == "text":
        # A terminal gets tables as wide as it is; a pipe or --out (recorded as plain text) gets OUT_WIDTH.
        if args.out is None:
            console = Console(width=None if sys.stdout.isatty() else OUT_WIDTH)
        else:
            console = Console(file=io.StringIO(), record=True, width=OUT_WIDTH)
        for table in rich_tables(board):
            console.print(table)
        if args.out is None:
            return 0
        text = console.export_text()
    elif args.format == "md":
        text = markdown(board)
    elif args.format == "json":
        text = json.dumps(board, indent=2, ensure_ascii=False) + "\n"
    else:
        text = render_html(runs, board, args.details_limit)
    if args.out:
        storage.write_text(args.out, text)
        print(f"oeb report: wrote {args.out}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0
