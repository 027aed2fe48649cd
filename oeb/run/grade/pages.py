"""`field_matching/documents.json`: where each graded document is in the dataset and, when its record
reports a cost, how many pages its PDF has. Written by the grade stage, which has the dataset, so a
report links every PDF and gives the cost per 1,000 pages from the run folder alone.

The pages are the PDF's own (`Dataset.page_counts`), never what a vendor reports inside `raw`, so every
system's cost is divided by the same pages. Only priced documents are counted: a brought folder or an
unpriced system reads no PDF. A count is kept from the last grading while the document's path and size
(the commit, for the Hub) are unchanged, so grading again reads no PDF twice.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from oeb import storage
from oeb.errors import StorageError
from oeb.run.grade.results import SCORER

if TYPE_CHECKING:  # the report reads documents.json without importing the dataset layer (the Hub client)
    from oeb.dataset import Dataset, Row

FILE = "documents.json"
UNITS = ("usd", "credits")
"""The cost fields a record may report (docs/money.md); credits are never dollars."""


def _priced(record: dict[str, Any] | None) -> bool:
    """True when the record reports a cost in any unit."""
    cost = (record or {}).get("cost") or {}
    return any(cost.get(unit) is not None for unit in UNITS)


def _sizes(dataset: Dataset) -> dict[str, int]:
    """File sizes from one listing; none for the Hub, whose pinned commit already fixes every file."""
    if dataset.commit is not None:
        return {}
    try:
        return storage.list_files(dataset.location)
    except StorageError:
        return {}


def documents(
    dataset: Dataset, rows: Sequence[Row], records: dict[str, dict[str, Any]], previous: dict[str, Any]
) -> dict[str, dict[str, Any]]:
    """By doc_id: `doc_path`, `bytes` (null when unknown) and, for priced documents only, `pages`
    (null when the file is not a PDF pypdf can read)."""
    sizes = _sizes(dataset)
    table = {row.doc_id: {"doc_path": row.doc_path, "bytes": sizes.get(row.doc_path)} for row in rows}
    uncounted = []
    for row in rows:
        if not _priced(records.get(row.doc_id)):
            continue
        before = previous.get(row.doc_id)
        if (
            isinstance(before, dict)
            and "pages" in before
            and all(before.get(key) == table[row.doc_id][key] for key in ("doc_path", "bytes"))
        ):
            table[row.doc_id]["pages"] = before["pages"]
        else:
            uncounted.append(row)
    for doc_id, pages in dataset.page_counts(uncounted).items():
        table[doc_id]["pages"] = pages
    return table


def read(folder: str) -> dict[str, Any]:
    """The run's documents.json, or {} when it has none or it cannot be read (graded before it existed)."""
    try:
        table = storage.read_json(storage.join(folder, SCORER, FILE))
    except StorageError:
        return {}
    return table if isinstance(table, dict) else {}


def write(folder: str, dataset: Dataset, rows: Sequence[Row], records: dict[str, dict[str, Any]]) -> None:
    """Write documents.json beside the scores, counting only the pages not known from the last grading."""
    storage.write_json(storage.join(folder, SCORER, FILE), documents(dataset, rows, records, read(folder)))
