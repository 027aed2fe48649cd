"""Generated documents whose every value's printed place is known: the locator's tests and
`make bench-view` measure against them.

`table_document`: an order's items as a table (codes, units and quantities that repeat, a long
description wrapping onto a second line inside its cell, the amount at the line's end), each cell
its own text object written column by column (the order a PDF writes text is not the order it is
read), a page number in each footer. `form_document`: labelled fields, two with the same value
under different labels, and a small table whose numbers also stand beside labels.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from dataset_files import Placed, placed_pdf_bytes

CODES = ("A-100", "A-100", "B-220", "C-310")
UNITS = ("EA", "BX", "PR", "LB")
WORDS = ("steel", "bracket", "LED", "panel", "cable", "tie", "hydraulic", "hose", "safety", "gloves", "pallet")
_LINE = 12.0
_WRAP = 24
"""A description longer than this many characters wraps onto the cell's second line."""
_COLUMNS = {"code": 50, "description": 110, "quantity": 290, "unit": 330, "unit_price": 380, "amount": 470}


@dataclass(frozen=True)
class Generated:
    """A document, its gold and, per array item address (`items[3]`), the page and baseline band
    (top, bottom in points from the page's top) its row is printed on."""

    pdf: bytes
    gold: dict[str, Any]
    rows: dict[str, tuple[int, float, float]]


def _description(rng: random.Random, long: bool) -> str:
    words = rng.sample(WORDS, 6 if long else 2)
    return " ".join(words).capitalize()


def _wrap(text: str) -> list[str]:
    lines, current = [], ""
    for word in text.split():
        if current and len(current) + 1 + len(word) > _WRAP:
            lines.append(current)
            current = word
        else:
            current = f"{current} {word}".strip()
    return [*lines, current]


def table_document(seed: int = 7, items: int = 150, rows_per_page: int = 40, pages: int | None = None) -> Generated:
    """An order of `items` items over as many pages as its rows need (`pages`: spread evenly over
    that many pages instead)."""
    rng = random.Random(seed)
    gold_items = []
    for _ in range(items):
        quantity = rng.randint(1, 12)
        price = round(rng.uniform(1, 900), 2)
        gold_items.append(
            {
                "code": rng.choice(CODES),
                "description": _description(rng, rng.random() < 0.15),
                "quantity": quantity,
                "unit": rng.choice(UNITS),
                "unit_price": price,
                "amount": round(quantity * price, 2),
            }
        )
    total = round(sum(item["amount"] for item in gold_items), 2)
    gold = {"order_number": f"PO-{seed:05d}", "buyer": "Amberline Foods", "currency": "USD", "total": f"{total:,.2f}"}
    gold["items"] = gold_items
    spread = pages
    pages: list[list[Placed]] = []
    rows: dict[str, tuple[int, float, float]] = {}
    page: list[Placed] = []
    y = 0.0

    def new_page() -> None:
        nonlocal page, y
        if page:
            page.append((280, 820, f"Page {len(pages) + 1}"))
            pages.append(page)
        page = [(50, 50, f"Purchase order {gold['order_number']}")]
        if not pages:
            page.append((300, 50, f"Buyer: {gold['buyer']}   Currency: {gold['currency']}"))
        page += [(x, 74, name.replace("_", " ").title()) for name, x in _COLUMNS.items()]
        y = 90

    new_page()
    used = 0
    for number, item in enumerate(gold_items):
        wrapped = _wrap(item["description"])
        if (spread and len(pages) + 1 < spread and number * spread // items > len(pages)) or (
            not spread and used + len(wrapped) > rows_per_page
        ):
            new_page()
            used = 0
        cells = {name: str(item[name]) for name in _COLUMNS}
        cells["unit_price"] = f"{item['unit_price']:.2f}"
        cells["amount"] = f"{item['amount']:,.2f}"
        for name, x in _COLUMNS.items():
            texts = wrapped if name == "description" else [cells[name]]
            page += [(x, y + _LINE * at, text) for at, text in enumerate(texts)]
        rows[f"items[{number}]"] = (len(pages) + 1, y - 10, y + _LINE * (len(wrapped) - 1) + 3)
        y += _LINE * len(wrapped)
        used += len(wrapped)
    page.append((380, y + 12, f"Total: {gold['total']}"))
    new_page()  # closes the last page (the fresh one is dropped)
    by_column = [sorted(page, key=lambda placed: placed[0]) for page in pages]  # written column by column
    return Generated(placed_pdf_bytes(by_column), gold, rows)


FORM_LABELS = {
    "operator_name": ("Operator:", 50, 80),
    "operator_number": ("Operator No.:", 300, 80),
    "permit_number": ("Permit No.:", 50, 104),
    "well_number": ("Well No.:", 300, 104),
    "county": ("County:", 50, 128),
    "total_due": ("Total due:", 300, 128),
}


def form_document() -> Generated:
    """A labelled form: each field's value printed after its label (`rows` holds each scalar's
    label's place too, as `label:FIELD`), then a pressure test table."""
    gold: dict[str, Any] = {
        "operator_name": "Halvorsen & Daughters",
        "operator_number": "551880",
        "permit_number": "551880",
        "well_number": "30",
        "county": "Yoakum",
        "total_due": "4,712.96",
        "pressure_tests": [{"minutes": m, "pressure_psi": p} for m, p in ((0, 1500), (15, 1485), (30, 1470))],
    }
    page: list[Placed] = [(50, 50, "FORM H-5 PRESSURE TEST REPORT")]
    rows: dict[str, tuple[int, float, float]] = {}
    for field, (label, x, y) in FORM_LABELS.items():
        value = f"${gold[field]}" if field == "total_due" else gold[field]
        page.append((x, y, f"{label} {value}"))
        rows[f"label:{field}"] = (1, y - 10, y + 3)
    page.append((50, 160, "Time (min) | Pressure (psi)"))
    for number, test in enumerate(gold["pressure_tests"]):
        y = 176 + _LINE * number
        page.append((50, y, f"{test['minutes']} | {test['pressure_psi']}"))
        rows[f"pressure_tests[{number}]"] = (1, y - 10, y + 3)
    return Generated(placed_pdf_bytes([page]), gold, rows)


def flatten(value: Any, prefix: str = "") -> list[tuple[str, Any]]:
    """Every scalar of a gold with its address as the scorer prints it (`items[3].unit`)."""
    if isinstance(value, dict):
        return [pair for key, item in value.items() for pair in flatten(item, f"{prefix}.{key}" if prefix else key)]
    if isinstance(value, list):
        return [pair for number, item in enumerate(value) for pair in flatten(item, f"{prefix}[{number}]")]
    return [(prefix, value)]
