"""`oeb grade FOLDER`: grade a run folder, or a folder of brought predictions, again (docs/grading.md)."""

from __future__ import annotations

import argparse
import sys

from oeb.cli._output import print_json
from oeb.cli._runs import add_common, add_force_unlock, log_to_stderr, print_leaderboard, print_report
from oeb.errors import UsageError


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add `oeb grade` to the command line."""
    parser = subparsers.add_parser(
        "grade",
        help="grade a run folder (local or s3://) again",
        description=(
            "Score every selected document of a run folder against its gold (documents whose prediction, "
            "gold, schema and scorer did not change come from the cache) and write field_matching/. A "
            "folder without settings.json is graded over the whole manifest. Small jobs grade in this process; "
            "larger ones on a local Ray, or on the Ray named by --address or OEB_RAY_ADDRESS, on warm workers "
            "that stay for the next command (docs/grading.md)."
        ),
    )
    parser.add_argument(
        "folder",
        nargs="?",
        help="the folder holding predictions/<id>.json, or a prefix of run folders (local or s3://)",
    )
    parser.add_argument(
        "--partial", action="store_true", help="count documents never predicted as failed instead of refusing"
    )
    parser.add_argument("--dataset", metavar="URL", help="the dataset (default: the run's own, else the sample)")
    parser.add_argument("--manifest", metavar="PATH", help="the manifest (default: the run's own)")
    parser.add_argument(
        "--address",
        metavar="ADDRESS",
        help="grade on the Ray at this address: auto (the one running here), host:port, ray://host:port, or local "
        "(a private local Ray); default: OEB_RAY_ADDRESS, else without Ray for a small job and a local Ray otherwise",
    )
    parser.add_argument(
        "--stop-workers",
        action="store_true",
        help="remove oeb's warm grading workers from the Ray named by --address or OEB_RAY_ADDRESS, then exit "
        "(they otherwise leave after OEB_WARM_MINUTES idle, default 30)",
    )
    parser.add_argument(
        "--adjudications",
        metavar="URL",
        help="grade under this adjudication file (any fsspec URL; default: the one the run's config.yaml names as "
        "dataset.adjudications, else the dataset's own adjudications.yaml when it has one; none: the raw gold); "
        "docs/adjudication.md",
    )
    add_force_unlock(parser)
    parser.add_argument(
        "--out", metavar="URL", help="write each run's results under this folder instead of beside the run"
    )
    add_common(parser, confirm=False)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Grade one folder (its report on stdout, the leaderboard on stderr), or every run under a prefix."""
    from oeb.run.grade.regrade import grade_folder, is_prefix_of_runs

    log_to_stderr()
    if args.stop_workers:
        from oeb.run.grade.workers import stop

        stop(args.address)
        return 0
    if args.folder is None:
        raise UsageError("give the folder to grade (or --stop-workers to remove the warm grading workers)")
    if args.out is not None or is_prefix_of_runs(args.folder):
        return _regrade(args)
    graded = grade_folder(
        args.folder,
        dataset=args.dataset,
        manifest=args.manifest,
        partial=args.partial,
        details=not args.no_details,
        address=args.address,
        force_unlock=args.force_unlock,
        adjudications=args.adjudications,
    )
    print_report(graded.report, args.folder)
    return 0


def _regrade(args: argparse.Namespace) -> int:
    """Every run under a prefix (or one run to --out), graded together: the reports as one JSON object
    on stdout, the leaderboard of the graded runs on stderr; exit 1 when a run was skipped."""
    from oeb.run.grade.regrade import regrade

    if args.dataset or args.manifest or args.adjudications:
        raise UsageError(
            "--dataset, --manifest and --adjudications are for one folder; each run under a prefix uses its own "
            "dataset and adjudication file (its config.yaml's dataset.adjudications, else the one beside its dataset)"
        )
    regraded = regrade(
        args.folder,
        out=args.out,
        partial=args.partial,
        details=not args.no_details,
        address=args.address,
        force_unlock=args.force_unlock,
    )
    print_json({"runs": [graded.report for graded in regraded.runs.values()], "skipped": regraded.skipped})
    sys.stdout.flush()
    if regraded.runs:
        print_leaderboard(list(regraded.runs))
    return 1 if regraded.skipped else 0
