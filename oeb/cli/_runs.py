"""What the run verbs share: logging to stderr, the plan and its question, the results printed."""

from __future__ import annotations

import argparse
import logging
import sys
from typing import Any

from rich.console import Console
from rich.table import Table

from oeb.cli._output import print_json
from oeb.errors import OebError, PlanDeclined
from oeb.report import leaderboard, load_runs, rich_tables
from oeb.scoring import RESULTS

OUT_WIDTH = 240
"""Tables written to a file or a pipe are this wide: every column of the leaderboard beside long
system names (a terminal gets tables as wide as it is)."""


def log_to_stderr() -> None:
    """oeb's own log lines bare on stderr (INFO); other libraries only from WARNING."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(message)s"))
    logger = logging.getLogger("oeb")
    logger.handlers[:] = [handler]
    logger.setLevel(logging.INFO)
    logger.propagate = False


def add_set(parser: argparse.ArgumentParser, example: str) -> None:
    """`--set PATH=VALUE`, repeatable, collected in `args.sets`."""
    parser.add_argument("--set", action="append", default=[], dest="sets", metavar="PATH=VALUE", help=example)


def add_force_unlock(parser: argparse.ArgumentParser) -> None:
    """For the verbs that write a run folder (resume, grade): the way past a lock left on S3."""
    parser.add_argument(
        "--force-unlock",
        action="store_true",
        help="take the lock of an s3:// run folder whose holder is gone but not yet stale (60 s without heartbeat)",
    )


def add_common(parser: argparse.ArgumentParser, *, confirm: bool = True) -> None:
    parser.add_argument(
        "--no-details", action="store_true", help="do not write field_matching/details/ (and remove an old one)"
    )
    if confirm:
        parser.add_argument("-y", "--yes", action="store_true", help="go ahead without showing the plan or asking")


def confirm(lines: list[str], what: str, yes: bool) -> None:
    """Show the plan and ask on a terminal; `-y` shows nothing and asks nothing (§3.2)."""
    if yes:
        return
    for line in lines:
        print(line, file=sys.stderr)
    if not sys.stdin.isatty():
        return
    print(f"Start the {what}? [y/N] ", end="", file=sys.stderr, flush=True)
    answer = sys.stdin.readline()
    if not answer:
        print(file=sys.stderr)
    if answer.strip().lower() not in ("y", "yes"):
        raise PlanDeclined(f"the {what} was not started; nothing was written")


_ERRORS = RESULTS[1:]


def _percent(value: float) -> str:
    return f"{100 * value:.1f}"


def summary_table(report: dict[str, Any]) -> Table:
    """The headline and the per-suite means, in percent, as a table."""
    summary = report["scorers"]["field_matching"]
    table = Table(title=f"{report['run']} · field_matching", title_justify="left")
    table.add_column("suite", justify="left")
    errors = (kind.replace("invented_", "inv. ") for kind in _ERRORS)
    for column in ("rows", "accuracy", "precision", "recall", *errors):
        table.add_column(column, justify="right")
    scored = summary["scored"]
    groups = {"all scored": scored, **(scored["per_suite"] if scored else {})}
    for name, means in groups.items():
        if means is None:
            continue
        numbers = [means["accuracy"], means["precision"], means["recall"], *(means[f"{k}_rate"] for k in _ERRORS)]
        table.add_row(name, str(means["rows"]), *map(_percent, numbers))
    cost = report["cost"]["usd"]
    table.caption = (
        f"headline {_percent(summary['headline'])} = accuracy × coverage {summary['coverage']:.3f}; "
        f"{summary['failed']} of {summary['rows']} failed" + (f"; cost ${cost:.2f}" if cost is not None else "")
    )
    return table


def print_report(report: dict[str, Any], folder: str) -> None:
    """The grading JSON on stdout, then the run's leaderboard on stderr (the summary table for a
    folder of predictions that no `oeb run` made, which has no settings to name its system by)."""
    print_json(report)
    sys.stdout.flush()
    try:
        tables = rich_tables(leaderboard(load_runs([folder])))
    except OebError:
        tables = [summary_table(report)]
    _print_tables(tables)


def print_leaderboard(folders: list[str]) -> None:
    """The leaderboard of several graded runs on stderr, or one line saying why they cannot share one
    (other datasets or document sets)."""
    try:
        tables = rich_tables(leaderboard(load_runs(folders, distinct=False)))
    except OebError as error:
        print(f"no leaderboard: {error}", file=sys.stderr)
        return
    _print_tables(tables)


def _print_tables(tables: list[Table]) -> None:
    console = Console(stderr=True, width=None if sys.stderr.isatty() else OUT_WIDTH)
    for table in tables:
        console.print(table)
