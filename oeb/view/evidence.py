"""Evidence for proposed adjudications: where a value stands on the document's PDF, as `oeb view`
locates values (`oeb.locate`: page from 1, a bbox in PDF points from the page's top-left)."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from oeb.dataset import Dataset
from oeb.errors import OebError
from oeb.gold.check import leaves
from oeb.gold.entries import Entry
from oeb.locate import Index, PdfPages, index_of, locate_values


def located(entries: Sequence[Entry], dataset: Dataset, golds: dict[str, dict[str, Any]]) -> list[Entry]:
    """The entries with evidence: where the proposed value stands on the PDF (else the gold's value),
    as the explorer's locator places it; an entry whose PDF cannot be read keeps none."""
    rows = {row.doc_id: row for row in dataset.rows}
    indexes: dict[str, Index | None] = {}
    out = []
    for entry in entries:
        row = rows.get(entry.doc_id)
        if row is None or not row.doc_path.lower().endswith(".pdf"):
            out.append(entry)
            continue
        if entry.doc_id not in indexes:
            try:
                indexes[entry.doc_id] = index_of(PdfPages(dataset.document(row).read_bytes(), use_ocr=False))
            except (OebError, ValueError, RuntimeError, OSError):
                indexes[entry.doc_id] = None
        index = indexes[entry.doc_id]
        gold = dict(leaves(golds.get(entry.doc_id, {}))).get(entry.address)
        proposed = entry.values[0] if entry.values else entry.value if entry.has_value else None
        place = None
        if index is not None:
            for value in (proposed, gold):
                [found] = locate_values(index, [(entry.address, value)]) if value is not None else [None]
                if found is not None and found.page is not None and found.bbox is not None:
                    place = found
                    break
        if place is not None:
            evidence = {"page": place.page, "bbox": [round(v, 1) for v in place.bbox or ()]}
            entry = dataclasses.replace(entry, evidence=evidence)
        out.append(entry)
    return out
