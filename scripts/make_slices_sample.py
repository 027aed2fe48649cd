"""Write a sample for slicing by document traits (docs/slices.md, `make bench-slices`): invoices in
German, English and French, digital (a text layer), scanned (pages that are images only) or mixed, of
1 to 14 pages, with a `country` column of the manifest's own, and the answers of simulated systems
whose mistakes depend on those traits.

The systems are simulations, not vendors: each misreads a gold value with a chance set by the
document's text layer, language and length (PROFILES), seeded by the system and the document, so
the same command always writes the same answers. Each system's answers go to
`OUT/systems/<name>/predictions/<id>.json` (grade them with `oeb grade FOLDER --dataset OUT/data`),
and with `--records` also as run records with a simulated price (`records/<id>.json`, which the
`replay` system answers with, cost included).

    uv run python scripts/make_slices_sample.py --out /tmp/slices [--documents 120] [--systems 3] [--seed 41]
"""

from __future__ import annotations

import argparse
import io
import json
import random
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pypdf
from dataset_files import pdf_bytes
from PIL import Image, ImageDraw

SENTENCES = {
    "de": "Rechnung {n} der Firma {v}. Der Gesamtbetrag ist innerhalb von vierzehn Tagen ohne Abzug zu zahlen. "
    "Position {i}: Lieferung und Montage gemäß Auftrag, Menge und Einzelpreis siehe Tabelle.",
    "en": "Invoice {n} from {v}. The total amount is payable within fourteen days without deduction. "
    "Item {i}: delivery and installation as ordered, quantity and unit price as listed below.",
    "fr": "Facture {n} de la société {v}. Le montant total est payable sous quatorze jours sans escompte. "
    "Article {i}: livraison et montage selon la commande, quantité et prix unitaire ci-dessous.",
}
LANGUAGES = {"de": 0.3, "en": 0.5, "fr": 0.2}
COUNTRY = {"de": "DE", "en": "GB", "fr": "FR"}
"""The manifest's own `country` column (the vendor's): a label of one's own, known for scans too,
whose text layer has no language."""
LAYERS = {"digital": 0.6, "scanned": 0.3, "mixed": 0.1}
PAGES = {1: 0.45, 2: 0.15, 3: 0.15, 5: 0.1, 8: 0.1, 14: 0.05}
VENDORS = ("Müller & Söhne", "Acme Tools", "Société Générale d'Outillage", "Nordic Supply", "Brightline Ltd")
SCHEMA = {
    "type": "object",
    "properties": {
        "number": {"type": "string"},
        "vendor": {"type": "string"},
        "total": {"type": "number"},
        "lines": {
            "type": "array",
            "items": {"type": "object", "properties": {"sku": {"type": "string"}, "amount": {"type": "number"}}},
        },
    },
}
PROFILES: dict[str, dict[str, float]] = {
    # the chance of misreading a value: by text layer, then added for German and for 11+ pages
    "layerreader": {"digital": 0.02, "mixed": 0.15, "scanned": 0.40, "de": 0.0, "long": 0.02},
    "ocrvision": {"digital": 0.07, "mixed": 0.07, "scanned": 0.08, "de": -0.03, "long": 0.03},
    "budget": {"digital": 0.09, "mixed": 0.12, "scanned": 0.18, "de": 0.04, "long": 0.25},
}
PRICE = {"layerreader": 0.004, "ocrvision": 0.012, "budget": 0.002}
"""Simulated dollars per page."""


def _pick(rng: random.Random, weights: dict[Any, float]) -> Any:
    return rng.choices(list(weights), weights=list(weights.values()))[0]


def _image_pages(count: int, text: str) -> bytes:
    """`count` pages that are each one grey image of some text: no text layer, as a scanner makes."""
    pages = []
    for _ in range(count):
        image = Image.new("L", (300, 400), 255)
        ImageDraw.Draw(image).text((20, 20), text[:40], fill=0)
        pages.append(image)
    data = io.BytesIO()
    pages[0].save(data, "PDF", resolution=36, save_all=True, append_images=pages[1:])
    return data.getvalue()


def _joined(first: bytes, rest: bytes) -> bytes:
    writer = pypdf.PdfWriter()
    for part in (first, rest):
        writer.append(pypdf.PdfReader(io.BytesIO(part)))
    data = io.BytesIO()
    writer.write(data)
    return data.getvalue()


def document(rng: random.Random, number: int) -> tuple[bytes, dict[str, Any], dict[str, Any]]:
    """A PDF, its gold and what it was made as (language, layer, pages)."""
    language, layer, pages = _pick(rng, LANGUAGES), _pick(rng, LAYERS), _pick(rng, PAGES)
    if layer == "mixed" and pages == 1:
        pages = 2
    vendor = VENDORS[number % len(VENDORS)]
    lines = [{"sku": f"SKU-{number}-{i}", "amount": round(rng.uniform(5, 900), 2)} for i in range(2 + pages * 2)]
    gold = {
        "number": f"R-{number:05d}",
        "vendor": vendor,
        "total": round(sum(x["amount"] for x in lines), 2),
        "lines": lines,
    }
    text = [SENTENCES[language].format(n=gold["number"], v=vendor, i=i) for i in range(60 * pages)]
    if layer == "digital":
        pdf = pdf_bytes(text)
    elif layer == "scanned":
        pdf = _image_pages(pages, text[0])
    else:
        pdf = _joined(pdf_bytes(text[:60]), _image_pages(pages - 1, text[0]))
    return pdf, gold, {"language": language, "layer": layer, "pages": pages}


def answer(
    system: str, gold: dict[str, Any], made: dict[str, Any], rng: random.Random, scale: float = 1.0
) -> dict[str, Any]:
    """The system's reading: each value misread with the chance its profile gives this document (times
    `scale`)."""
    profile = PROFILES[system]
    chance = profile[made["layer"]] + (profile["de"] if made["language"] == "de" else 0.0)
    chance = scale * (chance + (profile["long"] if made["pages"] >= 11 else 0.0))

    def read(value: Any) -> Any:
        if isinstance(value, dict):
            return {key: read(item) for key, item in value.items()}
        if isinstance(value, list):
            return [read(item) for item in value]
        if rng.random() >= chance:
            return value
        return value + 1 if isinstance(value, int | float) else f"{value}?"

    return read(gold)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--documents", type=int, default=120)
    parser.add_argument(
        "--systems", type=int, default=3, help="simulated systems: the profiles in turn, each round 15%% more mistakes"
    )
    parser.add_argument("--seed", type=int, default=41)
    parser.add_argument("--records", action="store_true", help="also write records/<id>.json with a simulated price")
    args = parser.parse_args()
    data = args.out / "data"
    (data / "pdfs").mkdir(parents=True)
    (data / "gold").mkdir()
    rng = random.Random(args.seed)
    profiles = [list(PROFILES)[n % len(PROFILES)] for n in range(args.systems)]
    names = [
        profile + (str(n // len(PROFILES) + 1) if n >= len(PROFILES) else "") for n, profile in enumerate(profiles)
    ]
    ids, countries = [], []
    for number in range(args.documents):
        pdf, gold, made = document(rng, number)
        doc_id = f"invoice_{number:04d}"
        ids.append(doc_id)
        countries.append(COUNTRY[made["language"]])
        (data / "pdfs" / f"{doc_id}.pdf").write_bytes(pdf)
        (data / "gold" / f"{doc_id}.json").write_text(json.dumps(gold, ensure_ascii=False))
        for n, (name, profile) in enumerate(zip(names, profiles, strict=True)):
            reader = random.Random(f"{args.seed}-{name}-{doc_id}")
            prediction = answer(profile, gold, made, reader, scale=1 + 0.15 * (n // len(PROFILES)))
            folder = args.out / "systems" / name
            (folder / "predictions").mkdir(parents=True, exist_ok=True)
            (folder / "predictions" / f"{doc_id}.json").write_text(json.dumps(prediction, ensure_ascii=False))
            if args.records:
                (folder / "records").mkdir(exist_ok=True)
                cost = {"usd": PRICE[profile] * made["pages"], "source": "simulated"}
                record = {"output": prediction, "error": None, "cost": cost}
                (folder / "records" / f"{doc_id}.json").write_text(json.dumps(record, ensure_ascii=False))
    columns = {
        "doc_id": ids,
        "doc_path": [f"pdfs/{doc_id}.pdf" for doc_id in ids],
        "gt_path": [f"gold/{doc_id}.json" for doc_id in ids],
        "schema": [json.dumps(SCHEMA)] * len(ids),
        "suite": ["invoices"] * len(ids),
        "country": countries,
    }
    pq.write_table(pa.table(columns), data / "manifest.parquet")
    print(json.dumps({"dataset": str(data), "documents": len(ids), "systems": names}))


if __name__ == "__main__":
    main()
