"""What the run verbs share: logging to stderr, the plan and its question, the results printed, the
exit code of a run (docs/running.md)."""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TextIO

from rich.console import Console, RenderableType
from rich.table import Table

from oeb.cli._output import print_json
from oeb.errors import OebError, PlanDeclined
from oeb.report import leaderboard, load_runs, rich_tables
from oeb.report.tables import fitted_table
from oeb.scoring import RESULTS

if TYPE_CHECKING:
    from oeb.run.engine import Outcome, Plans

OUT_WIDTH = 240


def out_width(stream: TextIO) -> int | None:
    """A terminal's own width (None: rich asks it); a pipe or file gets `COLUMNS` when set, as a
    terminal would, else OUT_WIDTH (wide enough that no column is dropped)."""
    if stream.isatty():
        return None
    columns = os.environ.get("COLUMNS", "")
    return int(columns) if columns.isdigit() and int(columns) >= 40 else OUT_WIDTH


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


def add_json(parser: argparse.ArgumentParser) -> None:
    """`--json`: the grading summary as JSON on stdout, for scripts (the leaderboard goes to stderr)."""
    parser.add_argument(
        "--json", action="store_true", help="print the grading summary as JSON on stdout (the leaderboard on stderr)"
    )


def show_plan(plans: Plans, what: str, yes: bool) -> None:
    """The plan and its question (`confirm`); with `-y` only the configs refused, one line each."""
    if yes:
        for refused in plans.refused:
            print(f"oeb {what}: {refused.line()}", file=sys.stderr)
    confirm(plans.lines(), what, yes)


def confirm(lines: list[str], what: str, yes: bool) -> None:
    """Show the plan and ask on a terminal; `-y` shows nothing and asks nothing (docs/running.md)."""
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


def summary_table(report: dict[str, Any], width: int | None = None) -> Table:
    """The headline and the per-suite means, in percent, as a table at most `width` columns wide."""
    summary = report["scorers"]["field_matching"]
    errors = [kind.replace("invented_", "inv. ") for kind in _ERRORS]
    header = ["suite", "rows", "accuracy", "precision", "recall", *errors]
    scored = summary["scored"]
    groups = {"all scored": scored, **(scored["per_suite"] if scored else {})}
    rows = []
    for name, means in groups.items():
        if means is None:
            continue
        numbers = [means["accuracy"], means["precision"], means["recall"], *(means[f"{k}_rate"] for k in _ERRORS)]
        rows.append([name, str(means["rows"]), *map(_percent, numbers)])
    table = fitted_table(f"{report['run']} · field_matching", header, rows, width)
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
        tables = _board([folder])
    except OebError:
        tables = lambda width: [summary_table(report, width)]  # noqa: E731
    _print_tables(tables)
    draft = ((report.get("scorers") or {}).get("field_matching") or {}).get("provenance", {}).get("draft")
    if draft:  # a drafted gold (docs/own-documents.md): what the score is against
        print(f"{draft['caption']}; {draft['excluded_values']} values excluded for this system", file=sys.stderr)


def finish(outcome: Outcome, command: str, *, as_json: bool) -> int:
    """The end of `oeb run` / `oeb resume`: the leaderboard of the graded systems and where each run
    folder is (on stdout; with `as_json` the summary JSON there instead and the rest on stderr), then
    one line per system that did not end cleanly; returns the run's exit code."""
    graded = [e for e in outcome.ended if e.result is not None and e.result.report.get("gold", True) is not None]
    goldless = [e for e in outcome.ended if e.result is not None and e.result.report.get("gold", True) is None]
    if as_json:
        print_json(_summary_json(outcome))
        sys.stdout.flush()
    out = sys.stderr if as_json else sys.stdout
    if graded:
        try:
            tables = _board([e.plan.folder.url for e in graded], distinct=False)
        except OebError:
            reports = [e.result.report for e in graded if e.result]
            tables = lambda width: [summary_table(report, width) for report in reports]  # noqa: E731
        _print_tables(tables, out)
    for ended in outcome.ended:
        state = (
            "graded" if ended.result is not None else f"not graded, continue with: oeb resume {ended.plan.folder.url}"
        )
        if ended in goldless:
            state = "answers kept, no gold to grade them yet"
        if ended.result is not None and ended.error is not None:
            state = f"graded, {type(ended.error).__name__}"
        print(f"run folder of {ended.plan.label}: {ended.plan.folder.url} ({state})", file=out, flush=True)
    several = len(outcome.ended) + len(outcome.refused) > 1
    for ended in outcome.ended:
        if ended.error is not None:
            print(f"oeb {command}: {ended.plan.label + ': ' if several else ''}{ended.error}", file=sys.stderr)
    for refused in outcome.refused:
        print(f"oeb {command}: {refused.line()}", file=sys.stderr)
    if goldless:
        runs = " ".join(e.plan.folder.url for e in goldless)
        print(
            f"oeb {command}: no gold yet ({goldless[0].plan.dataset.url} is gold-less); with two or more systems' "
            "runs, "
            f"draft it: oeb gold draft {runs}{' RUN ...' if len(goldless) < 2 else ''} --out DATASET "
            "(docs/own-documents.md)",
            file=out,
        )
    return outcome.exit_code


def _summary_json(outcome: Outcome) -> Any:
    """One system: its grading report (as `oeb grade` prints it). Several: per system its folder,
    label, exit code, error and report (null when it was not graded)."""
    if len(outcome.ended) == 1 and not outcome.refused and outcome.ended[0].result is not None:
        return outcome.ended[0].result.report
    return {
        "runs": [
            {
                "label": ended.plan.label,
                "folder": ended.plan.folder.url,
                "exit_code": ended.exit_code,
                "error": None if ended.error is None else str(ended.error),
                "report": None if ended.result is None else ended.result.report,
            }
            for ended in outcome.ended
        ],
        "refused": [{"what": refused.what, "error": str(refused.error)} for refused in outcome.refused],
        "exit_code": outcome.exit_code,
    }


def print_leaderboard(folders: list[str]) -> None:
    """The leaderboard of several graded runs on stderr, or one line saying why they cannot share one
    (other datasets or document sets)."""
    try:
        tables = _board(folders, distinct=False)
    except OebError as error:
        print(f"no leaderboard: {error}", file=sys.stderr)
        return
    _print_tables(tables)


def _print_tables(tables: Callable[[int | None], list[RenderableType]], stream: TextIO | None = None) -> None:
    """The tables `tables(width)` gives for the stream's width (`out_width`)."""
    stream = stream or sys.stderr
    console = Console(file=stream, width=out_width(stream))
    for table in tables(console.width):
        console.print(table)


def _board(folders: list[str], distinct: bool = True) -> Callable[[int | None], list[RenderableType]]:
    """The leaderboard of these runs at a width, the columns left out named with how to see them."""
    board = leaderboard(load_runs(folders, distinct=distinct))
    how = f"oeb report {' '.join(folders) if len(folders) < 3 else 'RUN ...'} --wide shows every column"
    return lambda width: rich_tables(board, width, how)
