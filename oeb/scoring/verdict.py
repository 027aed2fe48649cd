"""The verdict vocabulary: the six results, one address's `Verdict` and an address's printed form.

Apart from the scorer so that what only reads verdicts (a run's driver, the reports) does not load the
pairing solvers and scipy with it.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from oeb.scoring._tree import Address

__all__ = ["RESULTS", "Verdict", "show_address"]

RESULTS = ("matched", "misread", "unfound", "fabricated", "invented_item", "invented_field")


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
