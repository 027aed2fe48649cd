"""`oeb compare RUN_A RUN_B`: the paired analysis of two graded runs of the same documents, the documents
where they differ most per suite, and the CI gate `--fail-if-worse`."""

from __future__ import annotations

import argparse
import io
import json
import sys
from typing import Any

from rich.console import Console

from oeb.cli._slices import add_trait_flags
from oeb.cli.report import adjudications_flag, emit, fraction, output_flags


def register(subparsers: argparse._SubParsersAction[Any]) -> None:
    """Add `oeb compare` and its flags."""
    parser = subparsers.add_parser(
        "compare",
        help="paired analysis of two graded runs, and where they differ most",
        description=(
            "Over the documents both runs hold (a failed document counts 0): the mean difference of accuracy "
            "B - A with its 95%% paired-bootstrap interval and a paired sign-flip p-value, overall and per "
            "suite; then per suite the documents that changed most and the verdict counts that moved. Both "
            "runs must cover the same documents of one dataset."
        ),
    )
    parser.add_argument(
        "run_a",
        metavar="RUN_A",
        help="a graded run folder (local, s3:// or hf://), or a folder of runs of one setting (the newest): "
        "the baseline",
    )
    parser.add_argument("run_b", metavar="RUN_B", help="another graded run folder of the same documents")
    parser.add_argument("--top", type=int, default=10, metavar="N", help="documents shown per suite (default 10)")
    output_flags(parser, ("text", "md", "json", "html"), "text")
    parser.add_argument(
        "--fail-if-worse",
        nargs="?",
        const=0.0,
        type=fraction,
        metavar="MARGIN",
        help="CI gate: exit 3 when B is significantly worse than A, the upper end of the 95%% interval "
        "below -MARGIN (a share, default 0)",
    )
    parser.add_argument(
        "--by",
        action="append",
        default=[],
        metavar="TRAIT",
        help="the paired comparison per slice of a document trait (pages, text_layer, language, ...; repeat to "
        "cross them), docs/slices.md",
    )
    add_trait_flags(parser, mix=False)
    adjudications_flag(parser)
    parser.set_defaults(run=run)


FILE_WIDTH = 160
"""The width of the comparison written to a file or a pipe (a terminal gets its own)."""


def _text(result: dict[str, Any], to_file: bool) -> str | None:
    """The comparison as tables, as wide as the terminal (every figure whole, ids folded): printed
    (None), or as plain text for a file."""
    from oeb.report.tables import (
        PAIRED_COLUMNS,
        TOP_COLUMNS,
        compare_heading,
        fitted_table,
        paired_note,
        paired_rows,
        top_rows,
    )

    terminal = not to_file and sys.stdout.isatty()
    console = Console(file=io.StringIO() if to_file else None, record=to_file, width=None if terminal else FILE_WIDTH)
    width = console.width
    console.print(compare_heading(result), markup=False, highlight=False)
    console.print(fitted_table("paired: B - A", list(PAIRED_COLUMNS), paired_rows(result["paired"]), width))
    console.print(paired_note(result), markup=False, highlight=False)
    for suite, block in result["per_suite"].items():
        title = f"{suite}: {block['differ']} of {block['documents']} documents differ"
        console.print(fitted_table(title, list(TOP_COLUMNS), top_rows(block), width, text_last=True))
    return console.export_text() if to_file else None


def run(args: argparse.Namespace) -> int:
    """Print or write the comparison, then apply the `--fail-if-worse` gate."""
    from oeb.cli._runs import log_to_stderr
    from oeb.errors import QualityGateFailed, UsageError
    from oeb.report import compare
    from oeb.report.folders import load_one
    from oeb.report.html import render_compare_html
    from oeb.report.paired import worse_beyond
    from oeb.report.runs import labelled
    from oeb.report.tables import compare_markdown, p_text, signed_points

    if args.top < 1:
        raise UsageError(f"--top {args.top}: give a positive number of documents")
    log_to_stderr()
    from oeb.report.adjudicated import gold_line, under_gold

    loaded = labelled([load_one(args.run_a, "RUN_A"), load_one(args.run_b, "RUN_B")], distinct=False)
    gold = under_gold(loaded, args.adjudications)
    a, b = gold.runs
    said = None  # which gold the numbers are read under, when a file applied (as the leaderboard says it)
    if gold.adjudications is not None:
        said = gold_line(a.named("dataset"), a.named("dataset_commit"), gold.adjudications)
    if a.scorer != b.scorer:  # allowed (how a new scorer moves a run's numbers), but never silently
        print(
            f"oeb compare: note: {a.name} and {b.name} were graded by different scorers ({a.scorer or 'unrecorded'} "
            f"vs {b.scorer or 'unrecorded'}); the difference is the scorers' as much as the systems'",
            file=sys.stderr,
        )
    if args.by:
        if args.fail_if_worse is not None:
            raise UsageError("--by goes without --fail-if-worse (the gate is on all documents)")
        emit("compare", _by_traits(a, b, args, said), args.out)
        return 0
    result = compare(a, b, args.top) | ({"gold": said} if said else {})
    if args.format == "text":
        text = _text(result, args.out is not None)
    elif args.format == "md":
        text = compare_markdown(result)
    elif args.format == "json":
        text = json.dumps(result, indent=2, ensure_ascii=False) + "\n"
    else:
        text = render_compare_html(result)
    emit("compare", text, args.out)
    paired = result["paired"]
    if args.fail_if_worse is not None and worse_beyond(paired, args.fail_if_worse):
        low, high = paired["ci95"]
        raise QualityGateFailed(
            f"{b.name} is worse than {a.name}: accuracy {signed_points(paired['mean_diff'])} points, 95% interval "
            f"{signed_points(low)} to {signed_points(high)}, entirely below {signed_points(-args.fail_if_worse)}, "
            f"p = {p_text(paired['p_value'])}"
        )
    return 0


def _by_traits(a: Any, b: Any, args: argparse.Namespace, gold: str | None) -> str | None:
    """`--by TRAIT`: the paired statistics of B - A per slice."""
    from oeb.cli._slices import rendered, traits_of
    from oeb.report.slice_tables import compare_blocks
    from oeb.report.slices import compare_slices

    traits = traits_of([a, b], args, "compare")
    result = compare_slices(a, b, traits, args.by, args.min_docs)
    title = f"{b.name} - {a.name} by {' × '.join(args.by)}" + (f"; {gold}" if gold else "")
    from oeb.cli.report import _text as tables

    blocks = compare_blocks(result, a.label, b.label)
    return rendered(blocks, args.format, title, result, args.out is not None, tables)
