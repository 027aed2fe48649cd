"""A run over a gold-less dataset (`oeb dataset init`): every answer is kept, nothing is graded yet.

It stands in for the `Grader` of `oeb.run.grade.stage` in a run (same `add` / `finish` / `abandon`),
so the run predicts as usual and ends with a report that says there is no gold (`"gold": null`).
"""

from __future__ import annotations

from collections.abc import Sequence
from types import TracebackType
from typing import Any

from oeb.dataset import Dataset, Row
from oeb.run.folder.run_folder import RunFolder
from oeb.run.grade.results import total_cost
from oeb.run.grade.stage import Graded


class Ungraded:
    """Counts the answers handed over; `finish` reports them without a score."""

    def __init__(self, folder: RunFolder, dataset: Dataset, rows: Sequence[Row]) -> None:
        self.folder, self.dataset, self.rows = folder, dataset, tuple(rows)
        self.outstanding = 0
        self.queued = 0
        self._costs: dict[str, Any] = {}
        self._answered: set[str] = set()

    def __enter__(self) -> Ungraded:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        return None

    def add(self, doc_id: str, record: dict[str, Any] | None = None) -> None:
        if record is not None:
            self._costs[doc_id] = {"cost": record.get("cost")}
            if not record.get("error") and record.get("output") is not None:
                self._answered.add(doc_id)

    def abandon(self, error: BaseException | None = None) -> None:
        return None

    def finish(self) -> Graded:
        """The run's report: its answers and cost, `gold: null` (docs/own-documents.md)."""
        listing = self.folder.listing()
        records = self.folder.records([row.doc_id for row in self.rows], listing)
        answered = sum(1 for r in records.values() if not r.get("error") and r.get("output") is not None)
        report = {
            "run": self.folder.name,
            "cost": total_cost(records.values()),
            "scorers": {},
            "gold": None,
            "rows": len(self.rows),
            "answered": answered,
        }
        return Graded(report, frozenset(), {}, {})
