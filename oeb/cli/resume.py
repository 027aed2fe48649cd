"""`oeb resume RUN...`: continue stopped runs in their own folders, then grade them (docs/running.md)."""

from __future__ import annotations

import argparse

from oeb.cli._runs import add_common, add_force_unlock, add_json, add_set, finish, log_to_stderr, show_plan


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add `oeb resume` to the command line."""
    parser = subparsers.add_parser(
        "resume",
        help="continue stopped runs, then grade them",
        description=(
            "Ask only the documents of a run that have no record yet (with --retry-failed, also those that "
            "timed out, were unreachable, or met a rate limit or a server error), then grade the whole "
            "selection. The system, its options, the dataset (and its commit) and the rows must stay as "
            "they were; timeout, workers, budget and the ray block may change. Several run folders are "
            "resumed side by side, as oeb run runs several configs."
        ),
    )
    parser.add_argument("folder", nargs="+", help="the run folder(s) (local or s3://) that oeb run made")
    add_set(
        parser,
        "change what a resume may change, e.g. timeout=3600 or workers=2 (repeatable; with several folders it "
        "applies to every config that has the key)",
    )
    parser.add_argument(
        "--retry-failed", action="store_true", help="ask again documents whose failure may clear (timeouts, 429, 5xx)"
    )
    add_force_unlock(parser)
    add_json(parser)
    add_common(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Plan every resume, ask, run them side by side; the exit code of the run (docs/running.md)."""
    from oeb.run import engine

    log_to_stderr()
    plans = engine.plan_resumes(args.folder, args.sets, retry_failed=args.retry_failed, force_unlock=args.force_unlock)
    show_plan(plans, "resume", args.yes)
    outcome = engine.execute_all(
        plans.plans, details=not args.no_details, force_unlock=args.force_unlock, refused=plans.refused
    )
    return finish(outcome, "resume", as_json=args.json)
