"""Cited addresses renumbered as the verdicts write them.

A system cites its values at its own addresses (`lines[2].sku`: its third line), while a verdict
writes a paired array item under the gold item's index and an unpaired one as `[p<index>]`. The
scorer keeps its pairing to itself (it stays pure and its verdicts unchanged), so the pairing is read
back from the verdicts: a cited value goes to the verdict of the same field (indices aside) holding
the same predicted value, the one at the same indices first, then the first not yet taken. Two rows
that hold the same value in the same field are interchangeable for every figure but a box's place.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

_INDEX = re.compile(r"\[p?(\d+)\]")


def pattern(address: str) -> str:
    """The address with its indices folded: `lines[p2].sku` -> `lines[].sku`."""
    return _INDEX.sub("[]", address)


def _plain(address: str) -> str:
    """The address with an unpaired item's `p` dropped: `lines[p2].sku` -> `lines[2].sku`."""
    return _INDEX.sub(lambda m: f"[{m.group(1)}]", address)


def value_at(document: Any, address: str) -> Any:
    """The value at a printed address of a JSON document (None where there is none)."""
    value = document
    for key, index in re.findall(r"([^.\[\]]+)|\[(\d+)\]", address):
        if index:
            if not isinstance(value, list) or int(index) >= len(value):
                return None
            value = value[int(index)]
        elif isinstance(value, dict):
            value = value.get(key)
        else:
            return None
    return value


def renumber(cited: Mapping[str, Any], verdicts: Iterable[tuple[str, str]]) -> dict[str, str]:
    """Each cited address (with its predicted value) -> the address of its verdict. `verdicts` are the
    document's (address, pred_raw as JSON text); a cite with no verdict keeps its own address."""
    open_: dict[tuple[str, str], list[str]] = {}
    for address, pred_raw in verdicts:
        if pred_raw != "null":
            open_.setdefault((pattern(address), pred_raw), []).append(address)
    renumbered: dict[str, str] = {}
    for address, value in cited.items():
        candidates = open_.get((pattern(address), json.dumps(value, ensure_ascii=False)))
        if not candidates:
            renumbered[address] = address
            continue
        chosen = next((c for c in candidates if c == address), None)
        chosen = chosen or next((c for c in candidates if _plain(c) == address), candidates[0])
        candidates.remove(chosen)
        renumbered[address] = chosen
    return renumbered
