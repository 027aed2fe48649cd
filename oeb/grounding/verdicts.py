"""Right for the right reason: each verdict crossed with where the system cited its value.

A gold value's evidence is where it is printed (oeb's locator; every candidate place of a value the
locator calls ambiguous). A citation is right at box level when it is on an evidence page and its box
overlaps an evidence box with IoU of at least `iou` (0.5 by default), right at page level when it is
on an evidence page. A value whose evidence cannot be located (no text layer, not printed) is
unverifiable: out of every figure, its count shown. Fabricated and invented values have no gold, so
they are only counted as cited or not.

Over verifiable values, per system: precision = right citations / cited matched and misread values;
recall = right citations / gold values (an unfound value counts as uncited); F1 their harmonic mean.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

Box = tuple[float, float, float, float]
IOU = 0.5
CATEGORIES = (
    "matched_cited_right",
    "matched_cited_elsewhere",
    "matched_uncited",
    "misread_cited_right",
    "misread_cited_elsewhere",
    "misread_uncited",
    "fabricated_cited",
    "fabricated_uncited",
    "invented_cited",
    "invented_uncited",
)
_KIND = {
    "matched": "matched",
    "misread": "misread",
    "fabricated": "fabricated",
    "invented_item": "invented",
    "invented_field": "invented",
}


@dataclass(frozen=True)
class Cited:
    """Where a system cited a value: `page` from 1, `box` in points (None: the page only)."""

    page: int
    box: Box | None = None


@dataclass(frozen=True)
class Evidence:
    """Where a gold value is printed (page, box); none: it cannot be located (unverifiable)."""

    places: tuple[tuple[int, Box], ...] = ()


def iou(a: Box, b: Box) -> float:
    """Intersection over union of two boxes (0 when either is empty)."""
    width = min(a[2], b[2]) - max(a[0], b[0])
    height = min(a[3], b[3]) - max(a[1], b[1])
    if width <= 0 or height <= 0:
        return 0.0
    inter = width * height
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union if union > 0 else 0.0


def judge(cited: Cited, evidence: Evidence, threshold: float = IOU) -> tuple[bool, bool]:
    """Whether the citation is right at box level and at page level."""
    pages = {page for page, _ in evidence.places}
    on_page = cited.page in pages
    boxed = cited.box is not None and any(
        page == cited.page and iou(cited.box, box) >= threshold for page, box in evidence.places
    )
    return boxed, on_page


def category(result: str, cited: Cited | None, evidence: Evidence | None, threshold: float = IOU) -> str | None:
    """A verdict's grounding category; `unverifiable` for a matched or misread value whose gold
    cannot be located; None for an unfound value (it is only counted in recall)."""
    kind = _KIND.get(result)
    if kind in ("fabricated", "invented"):
        return f"{kind}_{'cited' if cited is not None else 'uncited'}"
    if kind is None:
        return None
    if evidence is None or not evidence.places:
        return "unverifiable"
    if cited is None:
        return f"{kind}_uncited"
    return f"{kind}_cited_{'right' if judge(cited, evidence, threshold)[0] else 'elsewhere'}"


@dataclass
class Tally:
    """One document's counts: categories, unverifiable values, and the figures' numerators and
    denominators at box and page level."""

    categories: Counter[str] = field(default_factory=Counter)
    unverifiable: int = 0
    cited: int = 0
    right_box: int = 0
    right_page: int = 0
    gold: int = 0


def tally(rows: Sequence[tuple[str, Cited | None, Evidence | None]], threshold: float = IOU) -> Tally:
    """A document's (result, citation or None, gold evidence or None) rows counted."""
    counted = Tally()
    for result, cited, evidence in rows:
        kind = _KIND.get(result)
        if result == "unfound":
            if evidence is None or not evidence.places:
                counted.unverifiable += 1
            else:
                counted.gold += 1
            continue
        name = category(result, cited, evidence, threshold)
        if name is None:
            continue
        if name == "unverifiable":
            counted.unverifiable += 1
            continue
        counted.categories[name] += 1
        if kind in ("fabricated", "invented"):
            continue
        counted.gold += 1
        if cited is not None and evidence is not None:
            boxed, on_page = judge(cited, evidence, threshold)
            counted.cited += 1
            counted.right_box += boxed
            counted.right_page += on_page
    return counted


def f1(precision: float | None, recall: float | None) -> float | None:
    if precision is None or recall is None:
        return None
    return 0.0 if precision + recall == 0 else 2 * precision * recall / (precision + recall)


def ratio(numerator: int, denominator: int) -> float | None:
    return numerator / denominator if denominator else None
