"""`oeb run`: plan, predict on Ray, grade, print the summary (HARNESS.md §3.1)."""

from __future__ import annotations

import argparse

from oeb.cli._runs import add_common, add_set, confirm, log_to_stderr, print_report
from oeb.run.config import load_config

DEFAULT_OUT = "runs"


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "run",
        help="run one system over a dataset: plan, predict, grade",
        description=(
            "Check everything a run needs (config, options, API keys, dataset rows, document and gold "
            "files) before any call, show the plan and ask, then predict every selected document on Ray "
            "and grade the answers. Each run gets a new folder under --out."
        ),
    )
    parser.add_argument("--config", required=True, metavar="YAML", help="the run config (oeb init SYSTEM writes one)")
    add_set(parser, "change one key of the config, e.g. rows.limit=5 or system.mock.latency=0.1 (repeatable)")
    parser.add_argument(
        "--out", default=DEFAULT_OUT, metavar="URL", help="where run folders go: a folder or s3://bucket/prefix"
    )
    add_common(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from oeb.run import engine

    log_to_stderr()
    plan = engine.plan_run(load_config(args.config, args.sets), args.out)
    confirm(plan.lines(), "run", args.yes)
    print_report(engine.execute(plan, details=not args.no_details).report, plan.folder.url)
    return 0
