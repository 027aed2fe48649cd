"""The `mock` system's citations and confidences, with a known error profile (docs/grounding.md).

A cited value's box is where PDFium's own text search finds the value's printed text (as given, or a
number with thousands separators) on the document's pages; a value it does not find is left uncited.
A share `cite_wrong` of the boxes is moved elsewhere on its page (half a page down, wrapping), so it
overlaps its value by nothing. Confidences are drawn so that they are calibrated by construction:
with `e` the chance that a value the mock returns is wrong, a right value's confidence is drawn from
Beta(a+1, b) and a wrong one's from Beta(a, b+1), a = K(1-e), b = Ke, which makes P(right | c) = c
(Bayes with a Beta(a, b) prior). `overconfident` takes the same draw and moves it towards 1,
c' = 1 - (1 - c) / 5. Every draw comes from its own seeded stream, so the values (and so the
verdicts) are the same with these options on or off.
"""

from __future__ import annotations

import random
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from oeb.grounding.cite import Cite, address_of

K = 4.0
"""The concentration of the confidences' Beta prior: lower spreads them, higher bunches them at `1 - e`."""
_PDFIUM = threading.Lock()
"""PDFium is not thread-safe, and a run without Ray answers on threads: one document read at a time."""
SHIFT = 5.0
"""`overconfident`: the distance to 1 is divided by this."""
CONFIDENCE = ("", "calibrated", "overconfident")


def leaves(value: Any, path: tuple[str | int, ...] = ()) -> Iterator[tuple[tuple[str | int, ...], Any]]:
    """Every non-null scalar of a JSON value with its path."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield from leaves(item, (*path, str(key)))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from leaves(item, (*path, index))
    elif value is not None:
        yield path, value


def _at(value: Any, path: tuple[str | int, ...]) -> Any:
    for step in path:
        if isinstance(step, int) and isinstance(value, list) and step < len(value):
            value = value[step]
        elif isinstance(step, str) and isinstance(value, dict):
            value = value.get(step)
        else:
            return None
    return value


def _forms(value: Any) -> list[str]:
    """The ways a value may be printed, most likely first."""
    if isinstance(value, bool):
        return [str(value).lower(), str(value)]
    if isinstance(value, int):
        return [f"{value:,}", str(value)]
    if isinstance(value, float):
        return [f"{value:,.2f}", f"{value:.2f}", str(value)]
    return [str(value)] if str(value).strip() else []


class _Pages:
    """A PDF's pages' text, searched by PDFium; boxes in points from each page's top-left."""

    def __init__(self, path: Path) -> None:
        import pypdfium2  # type: ignore[import-untyped]

        self.document = pypdfium2.PdfDocument(path)
        self.sizes = [self.document[i].get_size() for i in range(len(self.document))]
        self._text: dict[int, Any] = {}

    def find(self, value: Any) -> tuple[int, tuple[float, float, float, float]] | None:
        for form in _forms(value):
            for number in range(len(self.sizes)):
                if number not in self._text:
                    self._text[number] = self.document[number].get_textpage()
                text = self._text[number]
                found = text.search(form, match_case=False).get_next()
                if found is None:
                    continue
                rects = [text.get_rect(i) for i in range(text.count_rects(*found))]
                height = self.sizes[number][1]
                left, right = min(r[0] for r in rects), max(r[2] for r in rects)
                bottom, top = min(r[1] for r in rects), max(r[3] for r in rects)
                return number + 1, (left, height - top, right, height - bottom)
        return None

    def close(self) -> None:
        self.document.close()


def _wrong(box: tuple[float, float, float, float], height: float) -> tuple[float, float, float, float]:
    """The box moved half a page down (wrapping), where it overlaps its own place by nothing."""
    x0, y0, x1, y1 = box
    tall = y1 - y0
    top = (y0 + height / 2) % max(height - tall, 1.0)
    if abs(top - y0) < tall:
        top = (y0 + tall * 2) % max(height - tall, 1.0)
    return (x0, top, x1, top + tall)


def annotate(
    answer: Any,
    gold: Any,
    document: Path | None,
    rng: random.Random,
    *,
    cite: bool,
    cite_wrong: float,
    confidence: str,
    error: float,
) -> dict[str, dict[str, Any]]:
    """By printed address, each returned value's `page`, `bbox` and `confidence` as the options ask."""
    e = min(max(error, 0.01), 0.99)
    a, b = K * (1 - e), K * e
    with _PDFIUM:
        return _annotate(answer, gold, document, rng, cite, cite_wrong, confidence, a, b)


def _annotate(
    answer: Any,
    gold: Any,
    document: Path | None,
    rng: random.Random,
    cite: bool,
    cite_wrong: float,
    confidence: str,
    a: float,
    b: float,
) -> dict[str, dict[str, Any]]:
    pages = _Pages(document) if cite and document is not None and document.suffix.lower() == ".pdf" else None
    notes: dict[str, dict[str, Any]] = {}
    try:
        for path, value in leaves(answer):
            note: dict[str, Any] = {}
            right = _at(gold, path) == value
            draw = rng.betavariate(a + 1, b) if right else rng.betavariate(a, b + 1)
            move = rng.random() < cite_wrong
            if confidence:
                note["confidence"] = round(draw if confidence == "calibrated" else 1 - (1 - draw) / SHIFT, 6)
            found = pages.find(value) if pages is not None else None
            if found is not None:
                page, box = found
                if move:
                    box = _wrong(box, pages.sizes[page - 1][1]) if pages is not None else box
                note |= {"page": page, "bbox": [round(v, 2) for v in box]}
            if note:
                notes[address_of(path)] = note
    finally:
        if pages is not None:
            pages.close()
    return notes


def cites(raw: Any) -> list[Cite]:
    """The mock's raw `citations` in the shared shape."""
    notes = raw.get("citations") if isinstance(raw, dict) else None
    if not isinstance(notes, dict):
        return []
    return [
        Cite(str(address), note.get("page"), note.get("bbox"), None, note.get("confidence"))
        for address, note in notes.items()
        if isinstance(note, dict)
    ]
