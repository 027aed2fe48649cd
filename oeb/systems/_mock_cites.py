"""The `mock` system's citations and confidences, with a known error profile (docs/grounding.md).

A cited value's box is where oeb's locator (`oeb.locate`, text layer only) finds its gold value printed,
the value the mock read, misread or not; a value with no gold is looked for as returned; a value not
found is left uncited. So a right citation is exactly the evidence `oeb report --grounding` checks
against, and the measured box precision is 1 - `cite_wrong` within its interval.
A share `cite_wrong` of the boxes is moved elsewhere on its page, where it overlaps none of the places
printing the value (the evidence of a value printed several times is every one of them), so it is
wrong whatever the value. Confidences are drawn so that they are calibrated by construction:
with `e` the chance that a value the mock returns is wrong, a right value's confidence is drawn from
Beta(a+1, b) and a wrong one's from Beta(a, b+1), a = K(1-e), b = Ke, which makes P(right | c) = c
(Bayes with a Beta(a, b) prior). `overconfident` takes the same draw and moves it towards 1,
c' = 1 - (1 - c) / 5. Every draw comes from its own seeded stream, so the values (and so the
verdicts) are the same with these options on or off.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from oeb.errors import StorageFormatError
from oeb.grounding.cite import Cite, address_of, leaves
from oeb.grounding.join import pattern
from oeb.grounding.verdicts import Box, iou

K = 4.0
"""The concentration of the confidences' Beta prior: lower spreads them, higher bunches them at `1 - e`."""
SHIFT = 5.0
"""`overconfident`: the distance to 1 is divided by this."""
CONFIDENCE = ("", "calibrated", "overconfident")


def _at(value: Any, path: tuple[str | int, ...]) -> Any:
    for step in path:
        if isinstance(step, int) and isinstance(value, list) and step < len(value):
            value = value[step]
        elif isinstance(step, str) and isinstance(value, dict):
            value = value.get(step)
        else:
            return None
    return value


def _places(document: Path, values: list[tuple[str, Any]]) -> tuple[list[Any], Any, list[tuple[float, float]]]:
    """Where oeb's locator finds each (address, value) in the PDF (None: not found), the document's
    index (every place a value is printed) and the pages' sizes."""
    from oeb.locate import PdfPages, index_of, label_of, locate_values

    pages = PdfPages(document.read_bytes(), use_ocr=False)
    index = index_of(pages)
    sizes = [(page.width, page.height) for page in pages.pages()]
    labels = {pattern(address): label_of(address) for address, _ in values}
    return locate_values(index, values, labels), index, sizes


def _printed(index: Any, value: Any, page: int) -> list[Box]:
    """Every box on the page where the value is printed: each is evidence for it when it is ambiguous."""
    from oeb.locate.match import needle

    wanted = needle(value)
    return [place.bbox for place in index.places(wanted) if place.page == page] if wanted is not None else []


def _wrong(box: Box, size: tuple[float, float], printed: list[Box]) -> Box:
    """The box moved where the value is not printed: the same size, from half a page down (wrapping)
    along its column, then column by column across the page, the first place overlapping none of
    `printed` (else the one overlapping them least), so no evidence of the value judges it right."""
    x0, y0, x1, y1 = box
    width, height = size
    tall, wide = max(y1 - y0, 1.0), max(x1 - x0, 1.0)
    down, across = max(height - tall, 1.0), max(width - wide, 1.0)
    start = (y0 + height / 2) % down
    best: tuple[float, Box] | None = None
    for column in range(int(width // wide) + 1):
        left = (x0 + column * wide) % across
        for row in range(int(height // tall) + 1):
            top = (start + row * tall) % down
            moved = (left, top, left + wide, top + tall)
            worst = max((iou(moved, other) for other in [box, *printed]), default=0.0)
            if worst == 0.0:
                return moved
            if best is None or worst < best[0]:
                best = (worst, moved)
    return best[1] if best is not None else box


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
    found = list(leaves(answer))
    located: list[Any] = [None] * len(found)
    wanted: list[tuple[str, Any]] = [("", None)] * len(found)
    index: Any = None
    sizes: list[tuple[float, float]] = []
    if cite and document is not None and document.suffix.lower() == ".pdf":
        # a value is read where its gold is printed (a misread one too); a value with no gold is looked for as given
        wanted = [(address_of(path), value if _at(gold, path) is None else _at(gold, path)) for path, value in found]
        try:
            located, index, sizes = _places(document, wanted)
        except StorageFormatError:  # not a readable PDF: answered as without `cite`, every value uncited
            located = [None] * len(found)
    notes: dict[str, dict[str, Any]] = {}
    for (path, value), place, (_, looked) in zip(found, located, wanted, strict=True):
        note: dict[str, Any] = {}
        right = _at(gold, path) == value
        draw = rng.betavariate(a + 1, b) if right else rng.betavariate(a, b + 1)
        move = rng.random() < cite_wrong
        if confidence:
            note["confidence"] = round(draw if confidence == "calibrated" else 1 - (1 - draw) / SHIFT, 6)
        if place is not None and place.page is not None and place.bbox is not None:
            box = _wrong(place.bbox, sizes[place.page - 1], _printed(index, looked, place.page)) if move else place.bbox
            note |= {"page": place.page, "bbox": [round(v, 2) for v in box]}
        if note:
            notes[address_of(path)] = note
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
