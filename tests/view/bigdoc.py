"""A document of 20,000 gold values (5,000 order lines on 84 pages) and two brought answers to it,
graded as a user grades them (`oeb grade --dataset`): what the bounded document answers of `oeb view`
are tested on (the fixture is in conftest.py). Made from generated data in seconds: each line's
values are its own (no repeated unit or quantity for the locator to weigh between rows)."""

from __future__ import annotations

import copy
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from oeb.cli import main

ROOT = Path(__file__).resolve().parents[2]
BIG_DOC = "tables__order 5000 lines"
ITEMS = 5_000


@dataclass(frozen=True)
class BigRuns:
    a: str  # misreads every 25th amount, leaves out every 40th unit, adds a field to every 333rd line
    b: str  # misreads every 30th quantity
    gold: dict[str, Any]


def _gold() -> dict[str, Any]:
    items = [
        {"code": f"C{i:05d}", "qty": 100_000 + 3 * i, "unit": f"lot{i}", "amount": round(10 + i * 1.37, 2)}
        for i in range(ITEMS)
    ]
    return {"order_number": "PO-77031", "buyer": "Amberline Foods", "items": items}


def _answer(gold: dict[str, Any], change: Any) -> dict[str, Any]:
    answer = copy.deepcopy(gold)
    for number, item in enumerate(answer["items"]):
        change(number, item)
    return answer


def _a(number: int, item: dict[str, Any]) -> None:
    if number % 25 == 7:
        item["amount"] = round(item["amount"] + 1, 2)
    if number % 40 == 3:
        del item["unit"]
    if number % 333 == 0:
        item["note"] = "rush"


def _b(number: int, item: dict[str, Any]) -> None:
    if number % 30 == 11:
        item["qty"] += 1


def build(root: Path) -> BigRuns:
    """The dataset (one document) and the two graded answer folders under `root`."""
    sys.path.insert(0, str(ROOT / "scripts"))
    from dataset_files import Document, pdf_bytes, write_dataset

    gold = _gold()
    item = {"code": "string", "qty": "number", "unit": "string", "amount": "number"}
    schema = {
        "type": "object",
        "properties": {
            "order_number": {"type": "string", "description": "the order's number"},
            "buyer": {"type": "string"},
            "items": {
                "type": "array",
                "items": {"type": "object", "properties": {name: {"type": kind} for name, kind in item.items()}},
            },
        },
    }
    lines = [f"Order {gold['order_number']}", f"Buyer: {gold['buyer']}", ""]
    lines += [f"{i['code']}  {i['qty']}  {i['unit']}  {i['amount']:.2f}" for i in gold["items"]]
    dataset = str(root / "dataset")
    write_dataset(dataset, [Document(BIG_DOC, "tables", "orders", schema, gold, pdf_bytes(lines))])
    folders = []
    for name, change in (("answers-a", _a), ("answers-b", _b)):
        folder = root / name
        (folder / "predictions").mkdir(parents=True)
        (folder / "predictions" / f"{BIG_DOC}.json").write_text(json.dumps(_answer(gold, change)))
        assert main(["grade", str(folder), "--dataset", dataset]) == 0
        folders.append(str(folder))
    return BigRuns(folders[0], folders[1], gold)
