"""Verdicts per schema field: every address folded to its field's path (array indices dropped,
`line_items[3].unit_price` -> `line_items[].unit_price`), and per path the count of each verdict,
the accuracy and the documents holding it, worst accuracy first.

Accuracy is matched / total over all six verdicts, as the scorer's own accuracy (docs/scorer.md): an
invented item or field counts against the path it was invented under. `suite` keeps only the
documents whose suite (by `suites`, doc_id -> suite, as `suites_of` reads it from a run) is that one.

Only indices are folded: `[3]` (a position) and `[p1]` (a paired item), as `show_address` prints them,
so a key holding brackets, dots or quotes (`notes[draft]`, `a.b`) stays as printed."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pyarrow as pa  # type: ignore[import-untyped]
import pyarrow.compute as pc  # type: ignore[import-untyped]

from oeb import storage
from oeb.errors import StorageNotFoundError
from oeb.report.runs import Run
from oeb.run.grade.results import SCORER, VERDICT_SCHEMA, verdict_table
from oeb.scoring import RESULTS

_INDEX = re.compile(r"\[p?[0-9]+\]")


def fold(address: str) -> str:
    """The field's path of a printed address: every `[i]`/`[pN]` index as `[]`."""
    return _INDEX.sub("[]", address)


@dataclass(frozen=True)
class FieldRow:
    """One field: `counts` of each of the six verdicts, their `total`, `accuracy` (matched / total,
    None without verdicts), the `documents` holding it and those where it has an error (`failing`,
    the most errors first)."""

    path: str
    counts: dict[str, int]
    total: int
    accuracy: float | None
    documents: int
    failing: tuple[str, ...]

    @property
    def matched(self) -> int:
        return self.counts["matched"]


def field_rows(
    verdicts: pa.Table, *, suite: str | None = None, suites: Mapping[str, str] | None = None
) -> list[FieldRow]:
    """The rows of a run's verdicts (verdicts.parquet: `id`, `address`, `result`), only the documents
    of `suite` (by `suites`, doc_id -> suite) when given; worst accuracy first, then the most errors,
    then by path."""
    ids, addresses, results = (verdicts.column(name).to_pylist() for name in ("id", "address", "result"))
    counts: dict[str, dict[str, int]] = {}
    documents: dict[str, dict[str, None]] = {}
    failing: dict[str, dict[str, int]] = {}
    for doc_id, address, result in zip(ids, addresses, results, strict=True):
        if suite is not None and (suites or {}).get(doc_id) != suite:
            continue
        path = fold(address)
        row = counts.setdefault(path, dict.fromkeys(RESULTS, 0))
        if result in row:
            row[result] += 1
        documents.setdefault(path, {})[doc_id] = None
        if result != "matched" and result in row:
            errors = failing.setdefault(path, {})
            errors[doc_id] = errors.get(doc_id, 0) + 1
    rows = []
    for path, row in counts.items():
        total = sum(row.values())
        accuracy = row["matched"] / total if total else None
        errors = failing.get(path, {})
        worst = tuple(sorted(errors, key=lambda doc: (-errors[doc], doc)))
        rows.append(FieldRow(path, row, total, accuracy, len(documents[path]), worst))
    return sorted(rows, key=lambda r: (2.0 if r.accuracy is None else r.accuracy, r.matched - r.total, r.path))


COLUMNS = ["id", "address", "result"]
"""What the rows need of verdicts.parquet."""


def run_verdicts(run: Run) -> pa.Table:
    """The run's verdicts.parquet, only `COLUMNS` (none when grading kept no verdicts), under the gold
    the run was read under (`regraded_into`)."""
    try:
        table = storage.read_parquet(storage.join(run.url, SCORER, "verdicts.parquet"), COLUMNS)
    except StorageNotFoundError:
        table = VERDICT_SCHEMA.empty_table().select(COLUMNS)
    return regraded_into(run, table)


def regraded_into(run: Run, table: pa.Table) -> pa.Table:
    """Rows of the run's verdicts.parquet with the documents read again under the chosen gold
    (`Run.regraded`) in place of what grading wrote: a run graded under one adjudication file and read
    under another (or none) shows the verdicts its numbers count. Each document's rows stay together."""
    if not run.regraded:
        return table
    again = [
        verdict_table(doc_id, done.details, done.marks).select(table.column_names).cast(table.schema)
        for doc_id, done in run.regraded.items()
    ]
    kept = table.filter(pc.invert(pc.is_in(table["id"], value_set=pa.array(list(run.regraded), pa.string()))))
    return pa.concat_tables([kept, *again])


def suites_of(run: Run) -> dict[str, str]:
    """Each document's suite, as the leaderboard groups them."""
    return {line["id"]: (line.get("row") or {}).get("suite") or "other" for line in run.lines}


def row_json(row: FieldRow) -> dict[str, Any]:
    """A row as `oeb report --by field --format json` and `oeb view`'s `/api/fields` give it."""
    return {
        "path": row.path,
        "counts": dict(row.counts),
        "total": row.total,
        "accuracy": row.accuracy,
        "documents": row.documents,
        "failing": list(row.failing),
    }
