"""`field_matching/grounding.parquet`: what each system said of where its values came from and how
sure it was, read from the records' raw answers at grading time (docs/grounding.md).

Reading the kept raw answers, not asking again, means a run that was asked with citations on is
grounded by any later oeb, and a reader fixed later grounds old runs. Each record's own system and
options name the adapter that reads its answer. The PDFs are opened only for documents with a
citation, to check each box against its page and to convert a vendor's shares of the page to points.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from oeb import storage
from oeb.grounding.cite import Cite, Checked, check, table
from oeb.run.grade.results import SCORER

if TYPE_CHECKING:
    from oeb.dataset import Dataset, Row
    from oeb.systems.base import Adapter

log = logging.getLogger("oeb.grade")

FILE = "grounding.parquet"


def _adapter(record: dict[str, Any], made: dict[str, Adapter | None]) -> Adapter | None:
    """The adapter that answered `record`, as its options made it (None: it cannot be made here)."""
    from oeb.systems import registry

    key = json.dumps([record.get("system"), record.get("options")], sort_keys=True, default=str)
    if key not in made:
        try:
            made[key] = registry.adapter_class(str(record.get("system"))).from_options(record.get("options") or {})
        except Exception as error:  # an uninstalled plugin, options of another version: not grounded
            log.warning("%s: its answers are not grounded (%s)", record.get("system"), error)
            made[key] = None
    return made[key]


def cites_of(records: dict[str, dict[str, Any]]) -> dict[str, tuple[str, list[Cite]]]:
    """By doc_id: the answering system and its cites, for every successful record that has any."""
    made: dict[str, Adapter | None] = {}
    found: dict[str, tuple[str, list[Cite]]] = {}
    for doc_id, record in records.items():
        if record.get("error") is not None or record.get("raw") is None:
            continue
        adapter = _adapter(record, made)
        if adapter is None:
            continue
        try:
            cites = adapter.citations(record["raw"])
        except Exception as error:  # a vendor's answer is hostile: its values are still scored
            log.warning("%s: the citations of %s could not be read (%s)", adapter.name, doc_id, error)
            continue
        if cites:
            found[doc_id] = (adapter.label, cites)
    return found


def write(folder: str, dataset: Dataset, rows: Sequence[Row], records: dict[str, dict[str, Any]]) -> Checked:
    """Write grounding.parquet for the graded rows (or remove a stale one when none has a cite); the
    rows written and the counts of dropped citations and confidences, warned of in one line."""
    url = storage.join(folder, SCORER, FILE)
    wanted = {row.doc_id for row in rows}
    found = cites_of({doc_id: record for doc_id, record in records.items() if doc_id in wanted})
    total = Checked([])
    if not found:
        storage.remove(url)
        return total
    located = [row for row in rows if row.doc_id in found and any(c.page is not None for c in found[row.doc_id][1])]
    sizes = dataset.page_sizes(located) if located else {}
    for row in rows:
        if row.doc_id not in found:
            continue
        system, cites = found[row.doc_id]
        checked = check(row.doc_id, system, cites, sizes.get(row.doc_id))
        total.rows += checked.rows
        total.invalid_citations += checked.invalid_citations
        total.invalid_confidences += checked.invalid_confidences
    storage.write_parquet(url, table(total.rows))
    if total.invalid_citations or total.invalid_confidences:
        log.warning(
            "%s: %d invalid citations and %d invalid confidences dropped (outside the page or the document, "
            "an inverted box, a confidence outside [0, 1]); their values keep their verdicts",
            folder.rstrip("/").rsplit("/", 1)[-1],
            total.invalid_citations,
            total.invalid_confidences,
        )
    return total
