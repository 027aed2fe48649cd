"""Reports over graded run folders (local or s3://): the leaderboard, a comparison of two runs and
the self-contained HTML report. Reads run folders only; knows nothing of Ray or the dataset.

`render_html` is loaded on first use (it brings the gold audit's ftfy and jsonschema)."""

from typing import TYPE_CHECKING

from oeb._lazy import loader
from oeb.report.compare import compare
from oeb.report.leaderboard import bootstrap_ci, leaderboard, metrics
from oeb.report.runs import Run, check_comparable, load_run, load_runs
from oeb.report.tables import markdown, rich_tables

if TYPE_CHECKING:
    from oeb.report.html import render_html

__all__ = [
    "Run",
    "bootstrap_ci",
    "check_comparable",
    "compare",
    "leaderboard",
    "load_run",
    "load_runs",
    "markdown",
    "metrics",
    "render_html",
    "rich_tables",
]

__getattr__ = loader(__name__, {"render_html": "oeb.report.html"})
