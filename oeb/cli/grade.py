"""`oeb grade FOLDER`: grade a run folder, or a folder of brought predictions, again (HARNESS.md §3.9)."""

from __future__ import annotations

import argparse

from oeb.cli._runs import add_common, log_to_stderr, print_report


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "grade",
        help="grade a run folder (local or s3://) again",
        description=(
            "Score every selected document of a run folder against its gold (documents whose prediction, "
            "gold, schema and scorer did not change come from the cache) and write field_matching/. A "
            "folder without settings.json is graded over the whole manifest."
        ),
    )
    parser.add_argument("folder", help="the folder holding predictions/<id>.json (local or s3://)")
    parser.add_argument(
        "--partial", action="store_true", help="count documents never predicted as failed instead of refusing"
    )
    parser.add_argument("--dataset", metavar="URL", help="the dataset (default: the run's own, else the sample)")
    parser.add_argument("--manifest", metavar="PATH", help="the manifest (default: the run's own)")
    parser.add_argument(
        "--address", metavar="ADDRESS", help="grade on the Ray cluster at this address (default: a local Ray)"
    )
    add_common(parser, confirm=False)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from oeb.run import engine

    log_to_stderr()
    graded = engine.grade_folder(
        args.folder,
        dataset=args.dataset,
        manifest=args.manifest,
        partial=args.partial,
        details=not args.no_details,
        address=args.address,
    )
    print_report(graded.report, args.folder)
    return 0
