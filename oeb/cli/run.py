"""`oeb run`: plan, predict, grade, then the leaderboard and where the run folders are (docs/running.md)."""

from __future__ import annotations

import argparse

from oeb.cli._runs import add_common, add_json, add_set, finish, log_to_stderr, show_plan

DEFAULT_OUT = "runs"


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add `oeb run` to the command line."""
    parser = subparsers.add_parser(
        "run",
        help="run one or several systems over a dataset: plan, predict, grade",
        description=(
            "Check everything a run needs (config, options, API keys, dataset rows, document and gold "
            "files) before any call, show the plan and ask, then predict every selected document and grade "
            "the answers. Several --config run side by side in one run, each system with its own pace and "
            "in-flight cap, each in a new folder under --out; a config that cannot run is listed and the "
            "others go ahead. The run ends with the leaderboard and the run folders."
        ),
    )
    parser.add_argument(
        "--config",
        required=True,
        action="append",
        metavar="YAML",
        help="a run config (oeb init SYSTEM writes one); repeat it to run several systems side by side",
    )
    add_set(
        parser,
        "change one key of the config, e.g. rows.limit=5 or system.mock.latency=0.1 (repeatable; with several "
        "configs it applies to every config that has the key)",
    )
    parser.add_argument(
        "--out", default=DEFAULT_OUT, metavar="URL", help="where run folders go: a folder or s3://bucket/prefix"
    )
    parser.add_argument(
        "--reuse",
        action="append",
        default=[],
        metavar="RUN_OR_PREFIX",
        help="take a document's answer from this earlier run (or any run under this prefix) when the question is "
        "identical: not asked, not paid (repeatable; local or s3://)",
    )
    add_json(parser)
    add_common(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Plan every config, ask, run them side by side; the exit code of the run (docs/running.md)."""
    from oeb.run import engine

    log_to_stderr()
    plans = engine.plan_runs(args.config, args.out, args.sets, reuse=args.reuse)
    show_plan(plans, "run", args.yes)
    outcome = engine.execute_all(plans.plans, details=not args.no_details, refused=plans.refused)
    return finish(outcome, "run", as_json=args.json)
