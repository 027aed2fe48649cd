"""The one shape every adapter gives a vendor's citations and confidences in, and its checks.

A vendor cites a value as a page and a box in its own units (points, a share of the page, pixels at
some DPI, a polygon, a block id); the adapter converts to `Cite`: `page` from 1 and `bbox` (x0, y0,
x1, y1) in PDF points from the page's top-left, or as a share of the page's width and height
(`unit="fraction"`) when the vendor gives no page size, converted here against the PDF's own pages.
A vendor's answer is hostile: a box outside its page, inverted or negative, a page past the document,
a confidence outside [0, 1] or not a number are dropped and counted, never trusted, and the value
keeps its verdict.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import pyarrow as pa  # type: ignore[import-untyped]

Box = tuple[float, float, float, float]
PageSize = tuple[float, float]
"""A page's width and height in PDF points, as displayed (rotation applied)."""

SLACK = 1.0
"""Points a box may pass its page's edge by (rounding in a vendor's conversion) before it is refused."""

SCHEMA = pa.schema(
    [
        ("doc_id", pa.string()),
        ("address", pa.string()),
        ("page", pa.int32()),
        ("x0", pa.float64()),
        ("y0", pa.float64()),
        ("x1", pa.float64()),
        ("y1", pa.float64()),
        ("text", pa.string()),
        ("confidence", pa.float64()),
        ("system", pa.string()),
    ]
)
"""grounding.parquet: one row per predicted address a system cited or gave a confidence for."""


@dataclass(frozen=True)
class Cite:
    """What a system said of one predicted value: where (`page` from 1, `bbox`), what it read there
    (`text`) and how sure it is (`confidence`, meant in [0, 1]). `address` is the value's printed
    address in the prediction's own numbering (`lines[2].sku`). Any part may be missing."""

    address: str
    page: Any = None
    bbox: Any = None
    text: Any = None
    confidence: Any = None
    unit: Literal["pt", "fraction"] = "pt"


def address_of(path: Iterable[str | int]) -> str:
    """A vendor's path (`["lines", 2, "sku"]`) as oeb prints addresses (`lines[2].sku`)."""
    text = ""
    for step in path:
        if isinstance(step, int) or (isinstance(step, str) and step.isdigit()):
            text += f"[{int(step)}]"
        else:
            text += f".{step}" if text else str(step)
    return text or "<root>"


def leaves(value: Any, path: tuple[str | int, ...] = ()) -> Iterator[tuple[tuple[str | int, ...], Any]]:
    """Every non-null scalar of a JSON value with its path (`address_of` prints it)."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield from leaves(item, (*path, str(key)))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from leaves(item, (*path, index))
    elif value is not None:
        yield path, value


def polygon_box(points: Sequence[Any]) -> Box | None:
    """The box around a polygon given as [x, y, x, y, ...] or [[x, y], ...] or [{"x":, "y":}, ...]."""
    flat: list[Any] = []
    for point in points:
        if isinstance(point, dict):
            flat += [point.get("x"), point.get("y")]
        elif isinstance(point, list | tuple):
            flat += list(point)
        else:
            flat.append(point)
    if len(flat) < 4 or len(flat) % 2 or not all(_number(v) for v in flat):
        return None
    xs, ys = flat[0::2], flat[1::2]
    return (float(min(xs)), float(min(ys)), float(max(xs)), float(max(ys)))


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


@dataclass
class Checked:
    """A document's cites after the checks: table rows, and how many boxes and confidences were dropped."""

    rows: list[dict[str, Any]]
    invalid_citations: int = 0
    invalid_confidences: int = 0


def _confidence(value: Any) -> tuple[float | None, bool]:
    """The confidence kept (None: none given or dropped) and whether it was dropped."""
    if value is None:
        return None, False
    if _number(value) and 0.0 <= value <= 1.0:
        return float(value), False
    return None, True


def _place(cite: Cite, pages: Sequence[PageSize] | None) -> tuple[int | None, Box | None, bool]:
    """The cite's page and box in points, and whether what it gave was dropped."""
    if cite.page is None and cite.bbox is None:
        return None, None, False
    page = cite.page
    if not (_number(page) and float(page).is_integer() and page >= 1):
        return None, None, True
    page = int(page)
    if pages is not None and page > len(pages):
        return None, None, True
    if cite.bbox is None:
        return page, None, False
    box = cite.bbox
    if not (isinstance(box, list | tuple) and len(box) == 4 and all(_number(v) for v in box)):
        return None, None, True
    x0, y0, x1, y1 = (float(v) for v in box)
    if min(x0, y0) < 0 or x1 <= x0 or y1 <= y0:
        return None, None, True
    size = pages[page - 1] if pages is not None else None
    if cite.unit == "fraction":
        if size is None or max(x1, y1) > 1.0 + 1e-6:
            return None, None, True
        x0, x1, y0, y1 = x0 * size[0], x1 * size[0], y0 * size[1], y1 * size[1]
    elif size is not None and (x1 > size[0] + SLACK or y1 > size[1] + SLACK):
        return None, None, True
    return page, (x0, y0, x1, y1), False


def check(doc_id: str, system: str, cites: Iterable[Cite], pages: Sequence[PageSize] | None) -> Checked:
    """A document's cites as grounding.parquet rows; `pages` are the PDF's page sizes (None: unknown,
    then a box in points is kept unless negative or inverted, and a share of the page is dropped)."""
    checked = Checked([])
    for cite in cites:
        confidence, bad_confidence = _confidence(cite.confidence)
        page, box, bad_place = _place(cite, pages)
        checked.invalid_confidences += bad_confidence
        checked.invalid_citations += bad_place
        text = cite.text if isinstance(cite.text, str) else None
        if page is None and confidence is None and text is None:
            continue
        x0, y0, x1, y1 = box if box is not None else (None, None, None, None)
        checked.rows.append(
            {
                "doc_id": doc_id,
                "address": cite.address,
                "page": page,
                "x0": x0,
                "y0": y0,
                "x1": x1,
                "y1": y1,
                "text": text,
                "confidence": confidence,
                "system": system,
            }
        )
    return checked


def table(rows: Sequence[dict[str, Any]]) -> pa.Table:
    """Rows of `check` as the grounding.parquet table."""
    return pa.Table.from_pylist(list(rows), schema=SCHEMA)


def sound(table: pa.Table) -> tuple[pa.Table, int, int]:
    """A grounding.parquet read back (a run folder is hostile: a published one may be written by
    hand) with what grading never writes set to null, as `check` drops it: a page under 1 (with its
    box), a box not finite, negative or inverted, a confidence outside [0, 1] or NaN; and how many
    citations and confidences were nulled. A column of a type that cannot be cast to grounding.parquet's raises
    `pyarrow.ArrowException`."""
    import pyarrow.compute as pc  # type: ignore[import-untyped]

    names = table.column_names
    table = table.cast(pa.schema([SCHEMA.field(name) for name in names]))
    bad_citations = bad_confidences = 0
    if "confidence" in names:
        value = table["confidence"]
        bad = pc.and_(
            pc.is_valid(value),
            pc.invert(pc.fill_null(pc.and_(pc.greater_equal(value, 0.0), pc.less_equal(value, 1.0)), False)),
        )
        bad_confidences = pc.sum(pc.cast(bad, pa.int64())).as_py() or 0
        table = table.set_column(names.index("confidence"), "confidence", pc.if_else(bad, None, value))
    if "page" in names:
        page = table["page"]
        bad_page = pc.fill_null(pc.less(page, 1), False)
        bad = bad_page
        if all(name in names for name in ("x0", "y0", "x1", "y1")):
            x0, y0, x1, y1 = (table[name] for name in ("x0", "y0", "x1", "y1"))
            good = pc.and_(
                pc.and_(pc.greater_equal(x0, 0.0), pc.greater_equal(y0, 0.0)),
                pc.and_(pc.and_(pc.greater(x1, x0), pc.greater(y1, y0)), pc.and_(pc.is_finite(x1), pc.is_finite(y1))),
            )
            given = pc.or_(pc.or_(pc.is_valid(x0), pc.is_valid(y0)), pc.or_(pc.is_valid(x1), pc.is_valid(y1)))
            bad_box = pc.and_(given, pc.invert(pc.fill_null(good, False)))
            drop_box = pc.or_(bad_box, bad_page)
            for name in ("x0", "y0", "x1", "y1"):
                table = table.set_column(names.index(name), name, pc.if_else(drop_box, None, table[name]))
            bad = pc.or_(bad_page, bad_box)
        bad_citations = pc.sum(pc.cast(bad, pa.int64())).as_py() or 0
        table = table.set_column(names.index("page"), "page", pc.if_else(bad_page, None, page))
    return table, bad_citations, bad_confidences
