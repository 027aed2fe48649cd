"""`oeb audit RUN...`: where graded runs of one dataset point at errors in its gold, for a human to review."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from oeb.cli.report import add_runs, emit, output_flags


def register(subparsers: argparse._SubParsersAction[Any]) -> None:
    """Add `oeb audit` and its flags."""
    parser = subparsers.add_parser(
        "audit",
        help="find likely gold errors where graded systems agree against the gold",
        description=(
            "Over graded runs of one dataset: gold_disagrees (at least K systems give one value and the gold "
            "another), gold_missing (the gold states nothing where K agree), gold_invalid (a gold value its "
            "schema refuses), short_answer (one system returns far fewer rows than its peers) and mojibake "
            "text in the gold. Findings are proposals to check against the PDF; nothing is changed in place."
        ),
    )
    add_runs(parser, "*", "graded run folders of one dataset (3 or more)")
    parser.add_argument(
        "--min-agree",
        type=int,
        metavar="K",
        help="systems that must give one same value (default: a majority of the runs, at least 3)",
    )
    output_flags(parser, ("md", "json", "html"), "md")
    parser.add_argument(
        "--dataset",
        metavar="D",
        help="the dataset, when the runs do not name it (brought folders graded by an older oeb) or with no "
        "runs at all (then only gold_invalid and mojibake are looked for)",
    )
    parser.add_argument(
        "--write-fixes",
        metavar="DIR",
        help="write proposed gold files (the gold's own paths) and findings.json under DIR for review",
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Audit, print or write the findings, and write the proposed fixes when asked."""
    from oeb.cli._runs import log_to_stderr
    from oeb.errors import UsageError
    from oeb.report import audit
    from oeb.report.folders import load_folders
    from oeb.report.html import render_audit_html
    from oeb.report.tables import markdown_table

    if not args.runs and not args.dataset:
        raise UsageError(
            "give graded runs of one dataset (oeb audit RUN RUN RUN), or --dataset D to check the gold alone"
        )
    if args.min_agree is not None and args.min_agree < 2:
        raise UsageError(f"--min-agree {args.min_agree}: give 2 or more (one system agrees with itself)")
    log_to_stderr()
    runs = load_folders(args.runs, all_runs=args.all_runs) if args.runs else []
    if args.min_agree is not None and args.min_agree > len(runs):
        raise UsageError(
            f"--min-agree {args.min_agree} is more than the {len(runs)} runs given; give at most "
            f"{len(runs)}, or more runs"
        )
    dataset = audit.dataset_of(runs, args.dataset)
    min_agree = args.min_agree or audit.default_min_agree(len(runs))
    if runs and min_agree > len(runs):
        print(
            f"oeb audit: {len(runs)} runs cannot reach the default agreement of {min_agree} systems: "
            "gold_disagrees and gold_missing are not looked for (give 3 or more runs, or --min-agree 2)",
            file=sys.stderr,
        )
    findings = audit.audit(runs, dataset, min_agree)
    documents = len(runs[0].doc_ids) if runs else len(dataset.rows)
    line = audit.summary_line(findings, documents, min_agree if runs else None)
    if args.format == "json":
        text = (
            json.dumps(
                {
                    "dataset": dataset.identity,
                    "runs": [run.label for run in runs],
                    "min_agree": min_agree,
                    "findings": audit.findings_json(findings),
                },
                indent=2,
                ensure_ascii=False,
            )
            + "\n"
        )
    elif args.format == "md":
        text = f"## Gold audit\n\n{line}\n\n" + markdown_table(list(audit.COLUMNS), audit.rows(findings), {5}) + "\n"
    else:
        text = render_audit_html(findings, dataset, line)
    emit("audit", text, args.out)
    if args.write_fixes:
        files, put = audit.write_fixes(dataset, findings, args.write_fixes)
        print(f"oeb audit: {put} proposed values in {files} gold files under {args.write_fixes}", file=sys.stderr)
    if args.out or args.format != "md":  # the Markdown on the terminal says it already
        print(f"oeb audit: {line}", file=sys.stderr)
    return 0
