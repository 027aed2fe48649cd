"""Each vendor's documented citations and confidences, read from its kept raw answer into the shared
shape (`oeb.grounding.cite.Cite`; docs/grounding.md says per vendor how to turn them on). Pure
functions of the raw answer: a reader fixed later grounds old runs again without asking again.

- Reducto (`settings.citations.enabled`): each value becomes `{"value", "citations": [{"bbox": {left,
  top, width, height, page}, "content", "granular_confidence": {"extract_confidence"}}]}`, the box a
  share of the page from its top-left;
- LlamaExtract (`cite_sources`, `confidence_scores`): `extract_metadata.field_metadata` mirrors the
  data, each leaf `{"citation": [{page, matching_text, bounding_boxes: [{x, y, w, h}],
  page_dimensions: {width, height}}], "extraction_confidence"}`;
- Extend (`advancedOptions.citationsEnabled`): `output.metadata["line_items[0].price"]` =
  `{"citations": [{page, polygon: [{x, y}], referenceText}], "logprobsConfidence", "ocrConfidence"}`,
  the page a number or `{number, width, height}` (then the polygon is in that page's units); the
  confidence is `logprobsConfidence`, else (Extend phases it out: null or absent) `ocrConfidence`;
- Azure Content Understanding (`estimateFieldSourceAndConfidence`): each field's `confidence` and
  `source` = `D(page,x1,y1,...,x4,y4)` (several joined by `;`), in the units of
  `contents[0].pages[]` (inches for a PDF when no page size is given).
A value cited in several places is cited by the first; a vendor's confidence is taken as given and
checked later (`oeb.grounding.cite.check`), never clipped.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any, Literal

from oeb.grounding.cite import Box, Cite, address_of, polygon_box

Path = tuple[str | int, ...]
Unit = Literal["pt", "fraction"]


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _first(citations: Any) -> dict[str, Any]:
    """A field's first citation (a value cited in several places is cited by the first)."""
    return _dict(citations[0]) if isinstance(citations, list) and citations else {}


def _union(boxes: list[Box]) -> Box | None:
    if not boxes:
        return None
    return (min(b[0] for b in boxes), min(b[1] for b in boxes), max(b[2] for b in boxes), max(b[3] for b in boxes))


# Reducto ---------------------------------------------------------------------------------------


def _reducto_leaf(node: Any) -> bool:
    return isinstance(node, dict) and "citations" in node and "value" in node and set(node) <= {"value", "citations"}


def reducto_unwrap(node: Any) -> Any:
    """Reducto's cited result with every `{"value", "citations"}` leaf replaced by its value."""
    if _reducto_leaf(node):
        return reducto_unwrap(node["value"])
    if isinstance(node, dict):
        return {k: reducto_unwrap(v) for k, v in node.items()}
    if isinstance(node, list):
        return [reducto_unwrap(v) for v in node]
    return node


def _walk(node: Any, path: Path, leaf: Callable[[Any], bool]) -> Iterator[tuple[Path, dict[str, Any]]]:
    """Every node `leaf` accepts, with its path, found through objects and arrays (and through a
    Reducto wrapper around an object or array, which adds no step)."""
    if _reducto_leaf(node) and isinstance(node["value"], dict | list):
        yield from _walk(node["value"], path, leaf)
    elif leaf(node):
        yield path, node
    elif isinstance(node, dict):
        for key, value in node.items():
            yield from _walk(value, (*path, str(key)), leaf)
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _walk(value, (*path, index), leaf)


def reducto(raw: Any) -> list[Cite]:
    result = raw.get("result") if isinstance(raw, dict) else None
    if isinstance(result, dict) and "result" in result and "usage" in result:
        result = result["result"]
    if isinstance(result, list) and len(result) == 1:
        result = result[0]
    cites = []
    for path, leaf in _walk(result, (), _reducto_leaf):
        first = _first(leaf.get("citations"))
        bbox = _dict(first.get("bbox"))
        box: Any = None
        if all(_number(bbox.get(k)) is not None for k in ("left", "top", "width", "height")):
            left, top = float(bbox["left"]), float(bbox["top"])
            box = (left, top, left + float(bbox["width"]), top + float(bbox["height"]))
        granular = _dict(first.get("granular_confidence"))
        cites.append(
            Cite(
                address_of(path),
                bbox.get("page"),
                box,
                first.get("content"),
                granular.get("extract_confidence"),
                unit="fraction",
            )
        )
    return cites


# LlamaExtract ----------------------------------------------------------------------------------

_LLAMA_CONFIDENCE = ("extraction_confidence", "confidence")


def _llama_leaf(node: Any) -> bool:
    return isinstance(node, dict) and ("citation" in node or any(k in node for k in _LLAMA_CONFIDENCE))


def llamaextract(raw: Any) -> list[Cite]:
    found = raw if isinstance(raw, dict) else {}
    metadata = found.get("extract_metadata") or found.get("extraction_metadata") or {}
    fields = metadata.get("field_metadata") if isinstance(metadata, dict) else None
    cites = []
    for path, leaf in _walk(fields, (), _llama_leaf):
        confidence = next((leaf[k] for k in _LLAMA_CONFIDENCE if k in leaf), None)
        first = _first(leaf.get("citation"))
        size = _dict(first.get("page_dimensions"))
        width, height = _number(size.get("width")), _number(size.get("height"))
        boxes = []
        for box in first.get("bounding_boxes") or []:
            if isinstance(box, dict) and all(_number(box.get(k)) is not None for k in "xywh"):
                boxes.append((box["x"], box["y"], box["x"] + box["w"], box["y"] + box["h"]))
        union = _union(boxes)
        unit: Unit = "pt"
        if union is not None and width and height:
            union, unit = (union[0] / width, union[1] / height, union[2] / width, union[3] / height), "fraction"
        text = first.get("matching_text")
        cites.append(Cite(address_of(path), first.get("page"), union, text, confidence, unit=unit))
    return cites


# Extend ----------------------------------------------------------------------------------------


def extend(raw: Any) -> list[Cite]:
    output = raw.get("output") if isinstance(raw, dict) else None
    metadata = output.get("metadata") if isinstance(output, dict) else None
    if not isinstance(metadata, dict):
        return []
    cites = []
    for path, entry in metadata.items():
        if not isinstance(entry, dict):
            continue
        address = re.sub(r"(^|\.)id__(?=$|[.\[])", r"\1id", str(path))  # the adapter's `id` renaming undone
        first = _first(entry.get("citations"))
        page = first.get("page")
        width = height = None
        if isinstance(page, dict):
            width, height, page = _number(page.get("width")), _number(page.get("height")), page.get("number")
        box: Any = polygon_box(first.get("polygon") or [])
        unit: Unit = "pt"
        if box is not None and width and height:
            box, unit = (box[0] / width, box[1] / height, box[2] / width, box[3] / height), "fraction"
        confidence = entry.get("logprobsConfidence")
        if confidence is None:  # null from extraction_performance 4.6.0 on, never sent by extraction_light
            confidence = entry.get("ocrConfidence")
        cites.append(Cite(address, page, box, first.get("referenceText"), confidence, unit=unit))
    return cites


# Azure Content Understanding -------------------------------------------------------------------

_SOURCE = re.compile(r"D\(([^)]*)\)")
POINTS_PER_INCH = 72.0


def _azure_fields(node: Any, path: Path) -> Iterator[tuple[Path, dict[str, Any]]]:
    if not isinstance(node, dict):
        return
    if isinstance(node.get("valueArray"), list):
        for index, item in enumerate(node["valueArray"]):
            yield from _azure_fields(item, (*path, index))
    elif isinstance(node.get("valueObject"), dict):
        for key, item in node["valueObject"].items():
            yield from _azure_fields(item, (*path, str(key)))
    else:
        yield path, node


def azure_cu(raw: Any) -> list[Cite]:
    try:
        content = raw["result"]["contents"][0]
    except (KeyError, IndexError, TypeError):
        return []
    if not isinstance(content, dict) or not isinstance(content.get("fields"), dict):
        return []
    sizes: dict[Any, tuple[float, float]] = {}
    for shown in content.get("pages") or []:
        if isinstance(shown, dict) and _number(shown.get("width")) and _number(shown.get("height")):
            sizes[shown.get("pageNumber")] = (float(shown["width"]), float(shown["height"]))
    cites = []
    for name, field in content["fields"].items():
        for path, leaf in _azure_fields(field, (str(name),)):
            page: Any = None
            box: Any = None
            unit: Unit = "pt"
            source = leaf.get("source")
            match = _SOURCE.search(source) if isinstance(source, str) else None
            if match:
                parts = match.group(1).split(",")
                try:
                    numbers = [float(p) for p in parts]
                except ValueError:
                    numbers = []
                if numbers:
                    page = numbers[0] if numbers[0].is_integer() else None
                    page = int(page) if page is not None else numbers[0]
                    box = polygon_box(numbers[1:]) if len(numbers) > 1 else None
                    if box is not None and page in sizes:
                        width, height = sizes[page]
                        box, unit = (box[0] / width, box[1] / height, box[2] / width, box[3] / height), "fraction"
                    elif box is not None:
                        box = tuple(v * POINTS_PER_INCH for v in box)
            cites.append(Cite(address_of(path), page, box, None, leaf.get("confidence"), unit=unit))
    return cites
