"""`oeb resume RUN`: continue a stopped run in its own folder, then grade it (HARNESS.md §3.6)."""

from __future__ import annotations

import argparse

from oeb.cli._runs import add_common, add_force_unlock, add_set, confirm, log_to_stderr, print_report


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "resume",
        help="continue a stopped run, then grade it",
        description=(
            "Ask only the documents of a run that have no record yet (with --retry-failed, also those that "
            "timed out, were unreachable, or met a rate limit or a server error), then grade the whole "
            "selection. The system, its options, the dataset (and its commit) and the rows must stay as "
            "they were; timeout, workers and the ray block may change."
        ),
    )
    parser.add_argument("folder", help="the run folder (local or s3://) that oeb run made")
    add_set(parser, "change what a resume may change, e.g. timeout=3600 or workers=2 (repeatable)")
    parser.add_argument(
        "--retry-failed", action="store_true", help="ask again documents whose failure may clear (timeouts, 429, 5xx)"
    )
    add_force_unlock(parser)
    add_common(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from oeb.run import engine

    log_to_stderr()
    plan = engine.plan_resume(args.folder, args.sets, retry_failed=args.retry_failed, force_unlock=args.force_unlock)
    confirm(plan.lines(), "resume", args.yes)
    result = engine.execute(plan, details=not args.no_details, force_unlock=args.force_unlock)
    print_report(result.report, plan.folder.url)
    return 0
