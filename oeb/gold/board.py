"""The leaderboard under an adjudication file: which gold it used, how wrong that gold still is, and
which adjacent ranks are within the gold's noise (docs/adjudication.md).

`oeb report`, `oeb compare` and `oeb view` take `--adjudications URL` (`none`: the raw gold); without
it, the file beside the runs' dataset (`DATASET/adjudications.yaml`) applies when there is one.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from oeb import storage
from oeb.errors import StorageError
from oeb.gold.entries import FILE_NAME, NONE, Adjudications, load
from oeb.gold.error import gold_error, shown, within_noise
from oeb.gold.runs import adjudicate_run, gold_line
from oeb.report.runs import Run


@dataclass(frozen=True)
class Gold:
    """The runs under the file (the runs themselves without one) and the file (None: raw gold)."""

    runs: list[Run]
    adjudications: Adjudications | None


def _beside(runs: Sequence[Run]) -> str | None:
    """The dataset's own adjudications.yaml, when the runs' dataset is a folder or s3:// and holds one
    (a Hub dataset's file is named with --adjudications hf://...@commit/adjudications.yaml)."""
    named = next((run.named("dataset") for run in runs if run.named("dataset")), None)
    if not isinstance(named, str) or named.startswith("hf://"):
        return None
    url = storage.join(named, FILE_NAME)
    with contextlib.suppress(StorageError, ValueError):
        if storage.exists(url):
            return url
    return None


def under_gold(runs: list[Run], given: str | None) -> Gold:
    """The runs graded under the file that applies, checked against their dataset first (any problem
    is one line, and nothing is reported)."""
    if given is not None and given.strip().lower() == NONE:
        return Gold(runs, None)
    url = given if given is not None else _beside(runs)
    if url is None:
        return Gold(runs, None)
    adjudications = load(url)
    from oeb.gold.check import checked
    from oeb.report.audit import dataset_of

    checked(adjudications, dataset_of(runs, None))
    return Gold([adjudicate_run(run, adjudications).run for run in runs], adjudications)


def annotate(board: dict[str, Any], gold: Gold) -> dict[str, Any]:
    """The board with `gold` (its line, the file, its digest and the ids applied), `gold_error` and,
    per row from the second, `within_gold_noise`; unchanged without a file."""
    adjudications = gold.adjudications
    if adjudications is None:
        return board
    suites = {line["id"]: (line.get("row") or {}).get("suite") or "other" for line in gold.runs[0].lines}
    error = gold_error(adjudications.entries, suites)
    applied = sorted({i for run in gold.runs for line in run.lines for i in line.get("adjudications", ())})
    noise = within_noise([row["headline"] for row in board["rows"]], error)
    rows = [
        {**row, "within_gold_noise": noise[number - 1] if number else False} for number, row in enumerate(board["rows"])
    ]
    return {
        **board,
        "rows": rows,
        "gold": {
            "line": gold_line(board["dataset"], board["dataset_commit"], adjudications),
            "adjudications": adjudications.url,
            "sha256": adjudications.sha256,
            "accepted": len(adjudications.accepted),
            "applied": applied,
        },
        "gold_error": error,
    }


def lines(board: dict[str, Any]) -> list[str]:
    """The lines under the leaderboard: the gold used, its error, the ranks within its noise."""
    if "gold" not in board:
        return []
    found = [board["gold"]["line"], shown(board["gold_error"])]
    error = board["gold_error"]
    for suite, block in (error or {}).get("per_suite", {}).items():
        found.append(f"  {suite}: " + shown(block).removeprefix("gold error: "))
    close = [
        f"{board['rows'][n - 1]['system']} / {row['system']}"
        for n, row in enumerate(board["rows"])
        if row.get("within_gold_noise")
    ]
    if close:
        found.append("within gold noise (score difference below the gold error's upper bound): " + "; ".join(close))
    return found
