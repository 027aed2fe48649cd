"""Evidence for proposed adjudications: where a value stands on the document's PDF, as `oeb view`
locates values (page from 1, a bbox in PDF points from the page's top-left)."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from oeb.dataset import Dataset
from oeb.errors import OebError
from oeb.gold.check import leaves
from oeb.gold.entries import Entry
from oeb.view.pdf import PdfText, locate


def located(entries: Sequence[Entry], dataset: Dataset, golds: dict[str, dict[str, Any]]) -> list[Entry]:
    """The entries with evidence: the first place on the PDF where the proposed value stands (else the
    gold's value); an entry whose PDF cannot be read keeps none."""
    from oeb.view.pdf import PdfText

    rows = {row.doc_id: row for row in dataset.rows}
    texts: dict[str, PdfText | None] = {}
    out = []
    for entry in entries:
        row = rows.get(entry.doc_id)
        if row is None or not row.doc_path.lower().endswith(".pdf"):
            out.append(entry)
            continue
        if entry.doc_id not in texts:
            try:
                texts[entry.doc_id] = PdfText(dataset.document(row).read_bytes())
            except (OebError, ValueError, RuntimeError):
                texts[entry.doc_id] = None
        text = texts[entry.doc_id]
        gold = dict(leaves(golds.get(entry.doc_id, {}))).get(entry.address)
        proposed = entry.values[0] if entry.values else entry.value if entry.has_value else None
        places = []
        for value in (proposed, gold):
            if text is not None and value is not None and value != "":
                places = locate(text, value)
                if places:
                    break
        if places:
            evidence = {"page": places[0].page, "bbox": [round(v, 1) for v in places[0].bbox]}
            entry = dataclasses.replace(entry, evidence=evidence)
        out.append(entry)
    return out
