"""Which gold `oeb view` reads its runs under, and what its leaderboard says of it (docs/adjudication.md).

The explorer takes the file `oeb report` takes (`--adjudications URL`, `none` for the raw gold, else the
file the runs' config.yaml names, else the dataset's own), or the file under review (`--review FILE`):
its leaderboard, fields and documents are then the report's numbers under it, and the leaderboard page
says the report's lines under its table: the gold used, its error, the ranks within its noise.
"""

from __future__ import annotations

from typing import Any

from oeb import storage
from oeb.errors import UsageError
from oeb.gold.where import is_none
from oeb.view.api import View
from oeb.view.review import Review


def read_under(view: View, *, review: str | None, adjudications: str | None, by: str | None) -> Review | None:
    """Put the view's runs and leaderboard under the gold it shows (as `oeb report` reads them); the
    file's review (read-only without `by`), or None when the raw gold is shown. A file that cannot be
    read is refused now, in one line."""
    from oeb.gold import entries
    from oeb.report import leaderboard
    from oeb.report.adjudicated import annotate, applying_url, under_gold

    shown = review or adjudications
    if shown is None:  # the file the runs were graded under, in oeb grade's order (as oeb report)
        shown = applying_url(view.runs, None)
    if (shown is None or is_none(shown)) and review is None:
        gold = under_gold(view.runs, "none")  # the raw gold: runs graded under a file put back, as oeb report
        if gold.runs is not view.runs:
            view.runs, view.board = gold.runs, annotate(leaderboard(gold.runs), gold)
        return None
    if shown is None or is_none(shown):  # `--review none`: no file to review
        return None
    if by is None:
        entries.load(shown)  # a file that cannot be read is refused now, in one line
    elif by.strip() == "":
        raise UsageError("--by NAME is empty; give the name of who decides")
    if by is None or storage.exists(shown):
        gold = under_gold(view.runs, shown)  # the leaderboard and fields under the file, as oeb report
        view.runs, view.board = gold.runs, annotate(leaderboard(gold.runs, adjudications=gold.adjudications), gold)
        view.adjudications = gold.adjudications  # the document pages' grounding on the same evidence
    return Review(view, shown, by)


def gold_json(board: dict[str, Any]) -> dict[str, Any]:
    """`GET /api/gold`: `lines`, what `oeb report` prints under its leaderboard (the gold used, its error
    overall and per suite, the adjacent ranks within its noise), or, with no file applied, the raw
    gold named (`gold: <dataset>@<commit> (raw, no adjudications)`); `gold` and `gold_error` as in
    `oeb report --format json` (null without a file)."""
    from oeb.report.adjudicated import gold_line, lines

    said = lines(board)
    if "gold" not in board:
        said.append(gold_line(board.get("dataset"), board.get("dataset_commit"), None))
    return {"lines": said, "gold": board.get("gold"), "gold_error": board.get("gold_error")}
