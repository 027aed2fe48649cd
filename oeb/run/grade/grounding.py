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
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from oeb import storage
from oeb.errors import StorageNotFoundError
from oeb.grounding.cite import Checked, Cite, check, table
from oeb.grounding.join import renumber, value_at
from oeb.run.grade.results import SCORER

if TYPE_CHECKING:
    from oeb.dataset import Dataset, Row
    from oeb.systems.base import Adapter

log = logging.getLogger("oeb.grade")

FILE = "grounding.parquet"


class Cites:
    """Each graded document's answering system and cites, taken from its record as the record comes
    (the grade stage keeps no record's raw answer after handing its document over)."""

    def __init__(self) -> None:
        self.found: dict[str, tuple[str, list[Cite]]] = {}
        self.values: dict[str, dict[str, Any]] = {}
        """By doc_id, each cited address's predicted value (to find its verdict)."""
        self._seen: set[str] = set()
        self._made: dict[str, Adapter | None] = {}

    def _adapter(self, record: dict[str, Any]) -> Adapter | None:
        """The adapter that answered `record`, as its options made it (None: it cannot be made here)."""
        from oeb.systems import registry

        key = json.dumps([record.get("system"), record.get("options")], sort_keys=True, default=str)
        if key not in self._made:
            try:
                options = record.get("options") or {}
                self._made[key] = registry.adapter_class(str(record.get("system"))).from_options(options)
            except Exception as error:  # an uninstalled plugin, options of another version: not grounded
                log.warning("%s: its answers are not grounded (%s)", record.get("system"), error)
                self._made[key] = None
        return self._made[key]

    def take(self, doc_id: str, record: dict[str, Any] | None) -> None:
        """Keep the cites of a successful record (once per document)."""
        if doc_id in self._seen or not record or record.get("error") is not None or record.get("raw") is None:
            return
        self._seen.add(doc_id)
        adapter = self._adapter(record)
        if adapter is None:
            return
        try:
            cites = adapter.cites(record["raw"])
        except Exception as error:  # a vendor's answer is hostile: its values are still scored
            log.warning("%s: the citations of %s could not be read (%s)", adapter.name, doc_id, error)
            return
        if cites:
            self.found[doc_id] = (adapter.label, cites)
            output = record.get("output")
            self.values[doc_id] = {c.address: value_at(output, c.address) for c in cites}


def _renumbered(url: str, found: dict[str, Any], values: dict[str, dict[str, Any]]) -> dict[str, dict[str, str]]:
    """By doc_id, each cited address as its verdict writes it (read back from verdicts.parquet)."""
    verdicts_url = storage.join(url.rsplit("/", 1)[0], "verdicts.parquet")
    try:
        table = storage.read_parquet(verdicts_url, ["id", "address", "pred_raw"], filters=[("id", "in", list(found))])
    except StorageNotFoundError:
        return {}
    by_doc: dict[str, list[tuple[str, str]]] = {}
    for doc_id, address, pred_raw in zip(*(table[c].to_pylist() for c in ("id", "address", "pred_raw")), strict=True):
        by_doc.setdefault(doc_id, []).append((address, pred_raw))
    return {doc_id: renumber(values.get(doc_id, {}), by_doc.get(doc_id, ())) for doc_id in found}


def write(
    folder: str, dataset: Dataset, rows: Sequence[Row], records: dict[str, dict[str, Any]], kept: Cites
) -> Checked:
    """Write grounding.parquet for the graded rows (or remove a stale one when none has a cite); the
    rows written and the counts of dropped citations and confidences, warned of in one line."""
    url = storage.join(folder, SCORER, FILE)
    for row in rows:
        kept.take(row.doc_id, records.get(row.doc_id))
    found = {row.doc_id: kept.found[row.doc_id] for row in rows if row.doc_id in kept.found}
    total = Checked([])
    if not found:
        storage.remove(url)
        return total
    addresses = _renumbered(url, found, kept.values)
    located = [row for row in rows if row.doc_id in found and any(c.page is not None for c in found[row.doc_id][1])]
    sizes = dataset.page_sizes(located) if located else {}
    for row in rows:
        if row.doc_id not in found:
            continue
        system, cites = found[row.doc_id]
        moved = addresses.get(row.doc_id, {})
        cites = [replace(c, address=moved.get(c.address, c.address)) for c in cites]
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
