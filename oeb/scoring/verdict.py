"""The verdict vocabulary: the six results, one address's `Verdict` and an address's printed form.

Apart from the scorer so that what only reads verdicts (a run's driver, the reports) does not load the
pairing solvers and scipy with it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from oeb.scoring._tree import Address

__all__ = ["RESULTS", "Verdict", "document_metrics", "show_address"]

RESULTS = ("matched", "misread", "unfound", "fabricated", "invented_item", "invented_field")


def document_metrics(counts: Mapping[str, int], asserted: int, expected: int) -> dict[str, Any]:
    """A document's metrics from its verdict counts and the values the prediction asserts and the gold
    expects: what the scorer reports, and what oeb's adjudications recount after it (oeb.gold.apply)."""
    total = sum(counts.values())
    matched = counts["matched"]
    shared = matched + counts["misread"]
    precision = matched / asserted if asserted else 0.0
    recall = matched / expected if expected else 0.0
    return {
        "accuracy": matched / total if total else 0.0,
        "precision": precision,
        "recall": recall,
        "f1": 2 * precision * recall / (precision + recall) if precision + recall else 0.0,
        "total": total,
        **counts,
        "asserted": asserted,
        "addresses_found": shared / total if total else 0.0,
        "addresses_read_right": matched / shared if shared else 0.0,
    }


class Verdict(NamedTuple):
    """What happened to one address: both sides' values, their canonical keys and the result."""

    address: Address
    gold_raw: Any
    pred_raw: Any
    gold_canon: str | None
    pred_canon: str | None
    result: str


def show_address(address: Address) -> str:
    """The printed form: `invoices[0].lines[p1].sku`; `<root>` for the empty address."""
    if not address:
        return "<root>"
    text = ""
    for kind, name in address:
        if kind == "i":
            text += f"[{name}]"
        else:
            text += f".{name}" if text else str(name)
    return text
