"""Real PDFs with known traits (pages, text layers, one page an image only, languages, one damaged
file) in a dataset folder, and graded runs over it written as grading writes them (no Ray)."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pypdf
from dataset_files import pdf_bytes
from PIL import Image, ImageDraw

TEXTS = {
    "de": "Rechnung Nummer 4417 vom dritten März. Der Gesamtbetrag ist innerhalb von vierzehn Tagen "
    "ohne Abzug zu zahlen. Bitte überweisen Sie den Betrag auf das unten genannte Konto.",
    "en": "Invoice number 4417 issued on the third of March. The total amount is payable within fourteen "
    "days without deduction. Please transfer the amount to the account named below.",
    "fr": "Facture numéro 4417 du trois mars. Le montant total est payable sous quatorze jours sans "
    "escompte. Veuillez virer le montant sur le compte indiqué ci-dessous.",
}
SCHEMA = {
    "type": "object",
    "properties": {
        "number": {"type": "string"},
        "lines": {"type": "array", "items": {"type": "object", "properties": {"sku": {"type": "string"}}}},
    },
}


def image_page() -> bytes:
    """A one-page PDF holding only an image of text (what a scanner makes): no text layer."""
    image = Image.new("RGB", (600, 800), "white")
    ImageDraw.Draw(image).text((40, 40), "Rechnung 4417 (scanned)", fill="black")
    data = io.BytesIO()
    image.save(data, "PDF", resolution=72)
    return data.getvalue()


def text_pages(language: str, pages: int) -> bytes:
    """`pages` pages, each with the language's text (60 lines a page in pdf_bytes)."""
    return pdf_bytes([TEXTS[language]] * (60 * pages))


def joined(*parts: bytes) -> bytes:
    """The pages of several PDFs, in order, as one PDF."""
    writer = pypdf.PdfWriter()
    for part in parts:
        writer.append(pypdf.PdfReader(io.BytesIO(part)))
    data = io.BytesIO()
    writer.write(data)
    return data.getvalue()


def documents() -> dict[str, tuple[bytes, dict[str, str]]]:
    """Each document's PDF and its expected traits."""
    scan = image_page()
    return {
        "de_1": (text_pages("de", 1), {"pages": "1", "text_layer": "digital", "language": "de"}),
        "en_2": (text_pages("en", 2), {"pages": "2-3", "text_layer": "digital", "language": "en"}),
        "fr_5": (text_pages("fr", 5), {"pages": "4-10", "text_layer": "digital", "language": "fr"}),
        "de_12": (text_pages("de", 12), {"pages": "11+", "text_layer": "digital", "language": "de"}),
        "scan_1": (scan, {"pages": "1", "text_layer": "scanned", "language": "unknown"}),
        "scan_3": (joined(scan, scan, scan), {"pages": "2-3", "text_layer": "scanned", "language": "unknown"}),
        "mixed_2": (joined(text_pages("en", 1), scan), {"pages": "2-3", "text_layer": "mixed", "language": "en"}),
        "broken": (b"%PDF-1.4\nthis is not a PDF at all", {"pages": "unknown", "text_layer": "unknown"}),
    }


def gold(number: int) -> dict[str, Any]:
    """A gold with `number` line items: 1 + `number` leaves, its largest array `number` long."""
    return {"number": f"N{number}", "lines": [{"sku": f"S{i}"} for i in range(number)]}


def write_dataset(folder: Path, docs: dict[str, tuple[bytes, dict[str, str]]], region: dict[str, str]) -> str:
    """The documents under pdfs/, golds with doc-number line items, a `region` column of the user's own."""
    (folder / "pdfs").mkdir(parents=True)
    (folder / "gold").mkdir()
    for number, (doc_id, (data, _)) in enumerate(docs.items()):
        (folder / "pdfs" / f"{doc_id}.pdf").write_bytes(data)
        (folder / "gold" / f"{doc_id}.json").write_text(json.dumps(gold(number)))
    columns = {
        "doc_id": list(docs),
        "doc_path": [f"pdfs/{doc_id}.pdf" for doc_id in docs],
        "gt_path": [f"gold/{doc_id}.json" for doc_id in docs],
        "schema": [json.dumps(SCHEMA)] * len(docs),
        "suite": ["invoices"] * len(docs),
        "region": [region.get(doc_id) for doc_id in docs],
    }
    pq.write_table(pa.table(columns), folder / "manifest.parquet")
    return str(folder)
