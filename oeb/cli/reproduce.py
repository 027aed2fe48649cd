"""`oeb reproduce RUN`: run a published row again on the same documents and test whether its score holds
(docs/publishing.md)."""

from __future__ import annotations

import argparse
import functools
import sys
from typing import Any

from oeb.cli._output import print_json
from oeb.cli._runs import add_set
from oeb.cli.report import fraction
from oeb.cli.run import DEFAULT_OUT


def register(subparsers: argparse._SubParsersAction[Any]) -> None:
    """Add `oeb reproduce` and its flags."""
    parser = subparsers.add_parser(
        "reproduce",
        help="run a published (or any graded) run again and test whether its score holds",
        description=(
            "Read the run's settings (local, s3:// or hf://), run the same system and options on the same dataset "
            "commit and documents in a new run folder, grade it with this oeb, and compare document by document: "
            "reproduced (exit 0) when the 95% interval of the difference holds 0 or lies within --margin, else "
            "the documents that moved most and what differs in provenance (exit 3). --reuse asks nothing: it "
            "grades the published answers again, at no cost."
        ),
    )
    parser.add_argument("published", metavar="PUBLISHED_RUN", help="a graded run folder (local, s3:// or hf://)")
    add_set(parser, "change one key of the rerun's config, e.g. system.mock.seed=1 (repeatable)")
    parser.add_argument("--rows.limit", dest="limit", type=int, metavar="N", help="ask only the first N documents")
    parser.add_argument(
        "--out", default=DEFAULT_OUT, metavar="URL", help="where the new run folder goes (default runs/)"
    )
    parser.add_argument(
        "--margin",
        type=fraction,
        metavar="X",
        help="also count as reproduced an interval lying within ±X (a share of accuracy, e.g. 0.01)",
    )
    parser.add_argument(
        "--reuse", action="store_true", help="ask nothing: grade the published answers again (checks grading only)"
    )
    parser.add_argument(
        "--adjudications",
        metavar="URL",
        help="grade the reproduction under this adjudication file (none: the raw gold); default: the one the "
        "published run was graded under, refused when its digest differs",
    )
    parser.add_argument("-y", "--yes", action="store_true", help="go ahead without showing the plan or asking")
    parser.add_argument(
        "--json",
        action="store_true",
        help="print the outcome as JSON on stdout (reproduced, the paired analysis, what moved and differs)",
    )
    parser.set_defaults(run=run)


def _points(value: float) -> str:
    return f"{100 * value:+.2f}"


def run(args: argparse.Namespace) -> int:
    """Reproduce, print the comparison; exit 0 when the score held, 3 (`NotReproduced`) when not."""
    from oeb.cli._runs import log_to_stderr, show_plan
    from oeb.errors import NotReproduced, UsageError
    from oeb.publish import reproduce

    if args.limit is not None and args.limit < 1:
        raise UsageError(f"--rows.limit {args.limit}: give a positive number of documents")
    log_to_stderr()
    done = reproduce(
        args.published,
        sets=args.sets,
        limit=args.limit,
        out=args.out,
        margin=args.margin,
        reuse=args.reuse,
        confirm=lambda plans: show_plan(plans, "reproduction", args.yes),
        adjudications=args.adjudications,
    )
    paired = done.comparison["paired"]
    low, high = paired["ci95"]
    if args.json:
        print_json(done.summary())
        sys.stdout.flush()
    say = functools.partial(print, file=sys.stderr if args.json else sys.stdout)
    a, b = done.comparison["a"], done.comparison["b"]
    how = "graded again from its answers" if done.reused else "run again"
    say(f"published:  {done.published.url} ({a['system']}), headline {100 * a['headline']:.2f}")
    say(f"reproduced: {done.reproduced.url} ({how}), headline {100 * b['headline']:.2f}")
    moved = done.moved(None)
    differ = sum(block["differ"] for block in done.comparison["per_suite"].values())
    say(
        f"paired over {paired['documents']} documents: accuracy {_points(paired['mean_diff'])} points "
        f"(reproduced - published), 95% interval {_points(low)} to {_points(high)}, p {paired['p_value']:.3g}; "
        f"{differ} documents differ"
    )
    within = f" or lies within ±{100 * done.margin:.2f}" if done.margin is not None else ""
    if not done.holds and moved:
        say("documents that moved most (accuracy published -> reproduced):")
        shown = done.moved()
        for doc in shown:
            before, after = doc["accuracy"]
            shifts = "".join(f"; {kind} {count:+d}" for kind, count in doc["moved"].items())
            say(f"  {doc['id']}: {100 * before:.2f} -> {100 * after:.2f} ({_points(doc['delta'])}){shifts}")
        if len(moved) > len(shown):
            say(f"  ... and {len(moved) - len(shown)} more (the new run folder holds every score)")
    say("what differs in provenance and settings:" if done.differences else "provenance and settings: the same")
    for line in done.differences:
        say(f"  {line}")
    if done.holds:
        say(f"reproduced: the 95% interval holds 0{within}")
        return 0
    raise NotReproduced(
        f"not reproduced: accuracy {_points(paired['mean_diff'])} points, 95% interval {_points(low)} to "
        f"{_points(high)}, which excludes 0{within.replace(' or lies', ' and does not lie')}; "
        f"{len(moved)} documents moved"
    )
