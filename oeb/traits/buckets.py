"""Counts put into buckets by their upper edges: `pages` with edges 1, 3, 10 gives `1`, `2-3`, `4-10`
and `11+`. Edges are inclusive upper bounds, strictly increasing; the first bucket starts at the trait's
lowest possible count. A count that is not known is `unknown`."""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence

from oeb.errors import UsageError
from oeb.traits.language import UNKNOWN

COUNTED = ("pages", "gold_values", "array_items", "schema_depth")
"""The traits that are counts, bucketed by edges."""
LOWEST = {"pages": 1, "gold_values": 0, "array_items": 0, "schema_depth": 1}
DEFAULT_EDGES: dict[str, tuple[int, ...]] = {
    "pages": (1, 3, 10),
    "gold_values": (10, 30, 100),
    "array_items": (0, 5, 20),
    "schema_depth": (1, 2, 3),
}

Edges = Mapping[str, tuple[int, ...]]


def _span(low: int, high: int) -> str:
    return str(low) if low == high else f"{low}-{high}"


def labels(trait: str, edges: Edges) -> list[str]:
    """Every bucket of a counted trait, smallest first (`unknown` not included)."""
    low, result = LOWEST[trait], []
    for edge in edges[trait]:
        if edge >= low:
            result.append(_span(low, edge))
        low = max(low, edge + 1)
    return [*result, f"{low}+"]


def bucket(trait: str, value: int | None, edges: Edges) -> str:
    """The bucket of one count, `unknown` for None."""
    if value is None:
        return UNKNOWN
    low = LOWEST[trait]
    for edge in edges[trait]:
        if value <= edge:
            return _span(low, edge)
        low = max(low, edge + 1)
    return f"{low}+"


def _whole(value: object) -> int:
    if isinstance(value, bool | float):
        raise ValueError(value)
    return int(str(value).strip())


def parse(given: Sequence[str], configured: Mapping[str, Sequence[int]] | None = None) -> dict[str, tuple[int, ...]]:
    """The edges of every counted trait: the defaults, then `configured` (the config's `slices:`),
    then each `--bucket TRAIT=E1,E2,...`; a one-line UsageError for an unknown trait or edges that are
    not increasing whole numbers."""
    edges = dict(DEFAULT_EDGES)
    pairs: list[tuple[str, list[object], str]] = [
        (trait, list(values), f"slices.buckets.{trait}") for trait, values in (configured or {}).items()
    ]
    for text in given:
        trait, sep, listed = text.partition("=")
        if not sep:
            raise UsageError(f"--bucket {text}: give TRAIT=E1,E2,... (e.g. pages=1,3,10)")
        pairs.append((trait.strip(), list(listed.split(",")), f"--bucket {text}"))
    for trait, values, where in pairs:
        if trait not in COUNTED:
            raise UsageError(f"{where}: {trait!r} is not a counted trait; bucket edges apply to {', '.join(COUNTED)}")
        try:
            numbers = tuple(_whole(value) for value in values)
        except ValueError:
            raise UsageError(f"{where}: the edges are not whole numbers; give e.g. {trait}=1,3,10") from None
        if not numbers or any(b <= a for a, b in itertools.pairwise(numbers)):
            raise UsageError(f"{where}: bucket edges must be strictly increasing (e.g. {trait}=1,3,10)")
        if numbers[0] < LOWEST[trait]:
            raise UsageError(f"{where}: the first edge is below {LOWEST[trait]}, the least {trait} can be")
        edges[trait] = numbers
    return edges
