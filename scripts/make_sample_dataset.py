"""Write the sample dataset shipped in `oeb/data/sample/`: 12 documents over 4 suites.

Invoices, long tables, research-paper metadata and forms, each a real (small) PDF that prints its
gold values, with a JSON Schema holding nested arrays. Deterministic: running it again writes the
same files, so `git diff` shows any change. Usage:

    uv run python scripts/make_sample_dataset.py [--out oeb/data/sample]
"""

from __future__ import annotations

import argparse
import random
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from dataset_files import Document, pdf_bytes, write_dataset

SEED = 20261129
DEFAULT_OUT = Path(__file__).resolve().parent.parent / "oeb" / "data" / "sample"

STRING = {"type": "string"}
NUMBER = {"type": "number"}
INTEGER = {"type": "integer"}
UNPRINTED = {"type": "string", "description": "printed on some documents of this kind; this one leaves it out"}
"""A field the schema offers and the gold leaves out (the document does not print it): where a
system answers one, the scorer calls it fabricated."""

CITIES = ["Austin, TX", "Leeds", "Lyon", "Osaka", "Porto", "Tulsa, OK", "Graz", "Durban", "Quito", "Perth"]
COMPANIES = [
    "Norland Supply Co.",
    "Brightwater Labs",
    "Kestrel Freight",
    "Amberline Foods",
    "Halvorsen & Daughters",
]
ITEMS = [
    "Steel bracket",
    "Hydraulic hose 2m",
    "Safety gloves (pair)",
    "LED panel",
    "Pallet wrap",
    "Cable tie x100",
]
SURNAMES = [
    "Zhao",
    "Okafor",
    "Lindqvist",
    "Moreau",
    "Tanaka",
    "Ribeiro",
    "Novak",
    "Haddad",
    "Kowalski",
    "Singh",
]
GIVEN = ["Wei", "Chidi", "Astrid", "Claire", "Haruto", "Ana", "Petra", "Omar", "Jan", "Priya"]
INSTITUTES = [
    "Tsinghua University",
    "University of Lagos",
    "KTH Royal Institute of Technology",
    "Inria",
    "RIKEN",
]


def obj(properties: dict[str, Any], required: list[str] | None = None) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    return schema


def array(items: dict[str, Any]) -> dict[str, Any]:
    return {"type": "array", "items": items}


def money(rng: random.Random, low: float, high: float) -> float:
    return round(rng.uniform(low, high), 2)


def invoice(rng: random.Random, number: int) -> tuple[dict, dict, list[str]]:
    schema = obj(
        {
            "invoice_number": STRING,
            "invoice_date": {"type": "string", "format": "date"},
            "purchase_order": UNPRINTED,
            "vendor": obj({"name": STRING, "city": STRING}),
            "customer": STRING,
            "currency": STRING,
            "line_items": array(
                obj(
                    {
                        "description": STRING,
                        "sku": UNPRINTED,
                        "quantity": NUMBER,
                        "unit_price": NUMBER,
                        "amount": NUMBER,
                    }
                )
            ),
            "subtotal": NUMBER,
            "tax": NUMBER,
            "total": NUMBER,
        },
        required=["invoice_number", "total"],
    )
    items = []
    for _ in range(rng.randint(2, 7)):
        quantity, price = rng.randint(1, 40), money(rng, 1, 250)
        items.append(
            {
                "description": rng.choice(ITEMS),
                "quantity": quantity,
                "unit_price": price,
                "amount": round(quantity * price, 2),
            }
        )
    subtotal = round(sum(item["amount"] for item in items), 2)
    tax = round(subtotal * 0.08, 2)
    gold = {
        "invoice_number": f"INV-{number}",
        "invoice_date": f"2026-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}",
        "vendor": {"name": rng.choice(COMPANIES), "city": rng.choice(CITIES)},
        "customer": rng.choice(COMPANIES),
        "currency": rng.choice(["USD", "EUR", "GBP"]),
        "line_items": items,
        "subtotal": subtotal,
        "tax": tax,
        "total": round(subtotal + tax, 2),
    }
    lines = [
        f"INVOICE {gold['invoice_number']}",
        f"Date: {gold['invoice_date']}",
        f"From: {gold['vendor']['name']}, {gold['vendor']['city']}",
        f"Bill to: {gold['customer']}",
        f"Currency: {gold['currency']}",
        "",
        "Description | Qty | Unit price | Amount",
        *(f"{i['description']} | {i['quantity']} | {i['unit_price']:.2f} | {i['amount']:.2f}" for i in items),
        "",
        f"Subtotal: {subtotal:.2f}",
        f"Tax (8%): {tax:.2f}",
        f"TOTAL: {gold['total']:.2f}",
    ]
    return schema, gold, lines


def sanctions_list(rng: random.Random, number: int) -> tuple[dict, dict, list[str]]:
    schema = obj(
        {
            "list_name": STRING,
            "published": STRING,
            "entries": array(
                obj(
                    {
                        "name": STRING,
                        "program": STRING,
                        "aliases": array(STRING),
                        "addresses": array(obj({"city": STRING, "country": STRING})),
                    }
                )
            ),
        }
    )
    entries = []
    for index in range(rng.randint(45, 80)):
        name = f"{rng.choice(['JSC', 'LLC', 'PAO', 'OOO'])} {rng.choice(SURNAMES)}-{index + number}"
        entries.append(
            {
                "name": name,
                "program": rng.choice(["UKRAINE-EO13662", "RUSSIA-EO14024", "CYBER2"]),
                "aliases": [f"{name} Holding {k + 1}" for k in range(rng.randint(0, 2))],
                "addresses": [
                    {"city": city.split(",")[0], "country": rng.choice(["RU", "CY", "AE", "KZ"])}
                    for city in rng.sample(CITIES, rng.randint(1, 2))
                ],
            }
        )
    gold = {
        "list_name": "Sectoral Sanctions Identifications List",
        "published": "2026-11-01",
        "entries": entries,
    }
    lines = [f"{gold['list_name']} (published {gold['published']})", ""]
    for entry in entries:
        lines.append(f"{entry['name']} [{entry['program']}]")
        lines.extend(f"  a.k.a. {alias}" for alias in entry["aliases"])
        lines.extend(f"  Address: {a['city']}, {a['country']}" for a in entry["addresses"])
    return schema, gold, lines


def schedule(rng: random.Random, number: int) -> tuple[dict, dict, list[str]]:
    schema = obj(
        {
            "order_number": STRING,
            "schedule_items": array(
                obj(
                    {
                        "item_no": STRING,
                        "lot_number": UNPRINTED,
                        "supplies": STRING,
                        "quantity": INTEGER,
                        "unit": STRING,
                        "amount": NUMBER,
                    }
                )
            ),
        }
    )
    items = [
        {
            "item_no": f"{index + 1:04d}",
            "supplies": rng.choice(ITEMS),
            "quantity": rng.randint(1, 500),
            "unit": rng.choice(["EA", "BX", "PR", "LB"]),
            "amount": money(rng, 10, 9000),
        }
        for index in range(rng.randint(90, 130))
    ]
    gold = {"order_number": f"W91ZLK-26-F-{number:04d}", "schedule_items": items}
    lines = [
        f"DD FORM 1155 CONTINUATION - ORDER {gold['order_number']}",
        "ITEM | SUPPLIES | QTY | UNIT | AMOUNT",
    ]
    lines += [f"{i['item_no']} | {i['supplies']} | {i['quantity']} | {i['unit']} | {i['amount']:.2f}" for i in items]
    return schema, gold, lines


def census_table(rng: random.Random, number: int) -> tuple[dict, dict, list[str]]:
    schema = obj(
        {
            "table_id": STRING,
            "title": STRING,
            "rows": array(obj({"area": STRING, "population_2020": INTEGER, "population_2024": INTEGER})),
        }
    )
    rows = []
    for index in range(rng.randint(60, 75)):
        before = rng.randint(20_000, 4_000_000)
        rows.append(
            {
                "area": f"{rng.choice(SURNAMES)} County {index + 1}",
                "population_2020": before,
                "population_2024": int(before * rng.uniform(0.95, 1.08)),
            }
        )
    gold = {"table_id": f"12s{number:04d}", "title": "Resident Population by County", "rows": rows}
    lines = [f"Table {gold['table_id']}. {gold['title']}", "Area | 2020 | 2024"]
    lines += [f"{r['area']} | {r['population_2020']:,} | {r['population_2024']:,}" for r in rows]
    return schema, gold, lines


def paper(rng: random.Random, number: int) -> tuple[dict, dict, list[str]]:
    schema = obj(
        {
            "title": STRING,
            "authors": array(obj({"name": STRING, "affiliation": STRING})),
            "year": INTEGER,
            "venue": STRING,
            "doi": UNPRINTED,
            "keywords": array(STRING),
            "references_count": INTEGER,
        },
        required=["title", "authors"],
    )
    titles = [
        "A Survey of Large Language Models for Document Understanding",
        "Table Extraction at Scale: Lessons from Ten Million Filings",
        "Schema-Guided Parsing of Scientific PDFs",
    ]
    authors = [
        {"name": f"{rng.choice(GIVEN)} {surname}", "affiliation": rng.choice(INSTITUTES)}
        for surname in rng.sample(SURNAMES, rng.randint(2, 5))
    ]
    gold = {
        "title": titles[number],
        "authors": authors,
        "year": 2023 + number,
        "venue": rng.choice(["ACL", "ICDAR", "NeurIPS Datasets and Benchmarks"]),
        "keywords": rng.sample(["extraction", "tables", "LLM", "PDF", "benchmark", "OCR", "schemas"], 4),
        "references_count": rng.randint(20, 180),
    }
    lines = [
        gold["title"],
        "",
        *(f"{a['name']} ({a['affiliation']})" for a in authors),
        "",
        f"{gold['venue']} {gold['year']}",
        f"Keywords: {', '.join(gold['keywords'])}",
        "",
        "Abstract. We study how systems extract structured data from documents.",
        f"References: {gold['references_count']} works cited.",
    ]
    return schema, gold, lines


def h5_form(rng: random.Random, number: int) -> tuple[dict, dict, list[str]]:
    schema = obj(
        {
            "operator_name": STRING,
            "operator_number": STRING,
            "lease_name": STRING,
            "well_number": STRING,
            "api_number": UNPRINTED,
            "county": STRING,
            "injection_interval": obj({"top_ft": INTEGER, "bottom_ft": INTEGER}),
            "pressure_tests": array(obj({"minutes": INTEGER, "pressure_psi": INTEGER})),
            "certified": {"type": "boolean"},
        }
    )
    top = rng.randint(2_000, 6_000)
    gold = {
        "operator_name": rng.choice(COMPANIES),
        "operator_number": f"{rng.randint(100000, 999999)}",
        "lease_name": f"{rng.choice(SURNAMES)} Unit",
        "well_number": f"{rng.randint(1, 40)}",
        "county": rng.choice(["Andrews", "Ector", "Gaines", "Yoakum"]),
        "injection_interval": {"top_ft": top, "bottom_ft": top + rng.randint(100, 900)},
        "pressure_tests": [{"minutes": m, "pressure_psi": 1500 - m * rng.randint(0, 3)} for m in (0, 15, 30)],
        "certified": rng.random() < 0.5,
    }
    interval = gold["injection_interval"]
    lines = [
        "RAILROAD COMMISSION OF TEXAS - FORM H-5 (Disposal/Injection Well Pressure Test Report)",
        f"Operator: {gold['operator_name']}   Operator No.: {gold['operator_number']}",
        f"Lease: {gold['lease_name']}   Well No.: {gold['well_number']}   County: {gold['county']}",
        f"Injection interval: {interval['top_ft']} ft to {interval['bottom_ft']} ft",
        "Time (min) | Pressure (psi)",
        *(f"{t['minutes']} | {t['pressure_psi']}" for t in gold["pressure_tests"]),
        f"Certified: [{'X' if gold['certified'] else ' '}]",
    ]
    return schema, gold, lines


Maker = Callable[[random.Random, int], tuple[dict, dict, list[str]]]
PLAN: list[tuple[str, str, str, Maker, int]] = [
    ("short__invoice_4417", "invoices", "ledger", invoice, 4417),
    ("short__invoice_4418", "invoices", "ledger", invoice, 4418),
    ("short__invoice_5120", "invoices", "ledger", invoice, 5120),
    ("short__invoice_6031", "invoices", "ledger", invoice, 6031),
    ("long__real_ofac_ssi_mini", "tables", "ofac", sanctions_list, 1),
    ("long__dd1155_schedule_continuation_0011", "tables", "dla", schedule, 11),
    ("long__census_statab_12s0711", "tables", "census", census_table, 711),
    ("research__[zhao25] a survey of LLMs", "research", "arxiv", paper, 0),
    ("research__[okafor24] table extraction at scale", "research", "arxiv", paper, 1),
    ("research__[lindqvist23] schema-guided parsing", "research", "arxiv", paper, 2),
    ("short__h5Filing-46780-1", "forms", "rrc", h5_form, 46780),
    ("short__h5Filing-51209-2", "forms", "rrc", h5_form, 51209),
]


def documents(seed: int = SEED) -> Iterator[Document]:
    rng = random.Random(seed)
    for doc_id, suite, source, make, number in PLAN:
        schema, gold, lines = make(rng, number)
        yield Document(doc_id, suite, f"{source}:{number}", schema, gold, pdf_bytes(lines))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(DEFAULT_OUT), help="a folder or s3:// URL (default: %(default)s)")
    args = parser.parse_args()
    print(f"wrote {write_dataset(args.out, documents())} documents to {args.out}")


if __name__ == "__main__":
    main()
