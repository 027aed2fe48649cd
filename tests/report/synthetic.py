"""Synthetic invoices for report tests: true golds, systems that read them with independent noise
of their own, and a dataset folder to grade them against."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

SCHEMA = {
    "type": "object",
    "properties": {
        "vendor": {"type": "string"},
        "date": {"type": "string", "format": "date"},
        "currency": {"type": "string", "enum": ["USD", "EUR", "GBP"]},
        "po": {"type": "string"},
        "total": {"type": "number"},
        "lines": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"sku": {"type": "string"}, "qty": {"type": "integer"}, "price": {"type": "number"}},
            },
        },
    },
}
VENDORS = ("Acme Tools", "Müller & Söhne", "Corner Café", "Łódź Textiles", "Nordic Supply", "Brightline Ltd")


def true_gold(rng: random.Random, number: int) -> dict[str, Any]:
    """Invoice `number`: a header, 5 to 8 lines and their total; accented vendors for mojibake."""
    lines = [
        {"sku": f"SKU-{number:02d}-{row}", "qty": rng.randint(1, 40), "price": round(rng.uniform(1, 500), 2)}
        for row in range(rng.randint(5, 8))
    ]
    return {
        "vendor": VENDORS[number % len(VENDORS)],
        "date": f"2025-{1 + number % 12:02d}-{1 + number % 28:02d}",
        "currency": ("USD", "EUR", "GBP")[number % 3],
        "po": f"PO-{rng.randint(10000, 99999)}",
        "total": round(sum(line["qty"] * line["price"] for line in lines), 2),
        "lines": lines,
    }


def noisy(value: Any, system: str, rng: random.Random, misread: float, unfound: float = 0.0) -> Any:
    """A system's reading of a document: each value right, else (`misread`) wrong in a way of the
    system's own, or (`unfound`) missing."""
    if isinstance(value, dict):
        read = {key: noisy(item, system, rng, misread, unfound) for key, item in value.items()}
        return {key: item for key, item in read.items() if item is not None}
    if isinstance(value, list):
        return [noisy(item, system, rng, misread, unfound) for item in value]
    draw = rng.random()
    if draw < unfound:
        return None
    if draw < unfound + misread:
        if isinstance(value, str):
            return f"{value} {system}{rng.randint(0, 999)}"
        return value + rng.randint(1, 10**6)  # two systems misread a value alike about once in a million
    return value


def write_dataset(folder: Path, golds: dict[str, dict[str, Any]]) -> str:
    """A dataset folder of these golds, one suite, under SCHEMA (no PDFs: nothing here reads them)."""
    (folder / "gold").mkdir(parents=True)
    for doc_id, gold in golds.items():
        (folder / "gold" / f"{doc_id}.json").write_text(json.dumps(gold, ensure_ascii=False))
    columns = {
        "doc_id": list(golds),
        "doc_path": [f"pdfs/{doc_id}.pdf" for doc_id in golds],
        "gt_path": [f"gold/{doc_id}.json" for doc_id in golds],
        "schema": [json.dumps(SCHEMA)] * len(golds),
        "suite": ["invoices"] * len(golds),
    }
    pq.write_table(pa.table(columns), folder / "manifest.parquet")
    return str(folder)
