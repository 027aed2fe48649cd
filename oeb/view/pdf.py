"""A document's PDF as `oeb view` needs it: its pages' text with each character's box, where a value
stands on the pages, and a page rendered as PNG (PDFium through pypdfium2, encoded by Pillow).

A value is found in the text layer as the scorer would read it: case, whitespace and (for numbers)
thousands separators aside, a number in any of the forms that give the same value (`1234.5`,
`1,234.50`). A scanned page without a text layer holds no value: nothing is found there.
"""

from __future__ import annotations

import io
import itertools
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import date
from typing import Any

import pypdfium2  # type: ignore[import-untyped]

from oeb.errors import PageTooLarge, StorageFormatError
from oeb.scoring.canonical import DATE_FORMATS, DATE_PREFIX, canonical_key

_PDFIUM = threading.Lock()
"""PDFium is not thread-safe: every call into it holds this lock (the server answers in threads)."""
_DIGITS = re.compile(r"[0-9]")
LONGEST = 2000
"""A string longer than this (in characters) is not looked for: no page prints it as one run of text, and
searching for it on every page of a large document costs more than a page view may take."""


@dataclass(frozen=True)
class Location:
    """Where a value stands: `page` from 1, `bbox` (x0, y0, x1, y1) in PDF points from the page's
    top-left corner."""

    page: int
    bbox: tuple[float, float, float, float]


@dataclass(frozen=True)
class _Page:
    """A page's text folded for searching (`plain`: case and whitespace aside; `bare`: also without
    commas, for numbers), each folded character's index in the page's text, and the boxes."""

    plain: str
    plain_at: tuple[int, ...]
    bare: str
    bare_at: tuple[int, ...]
    boxes: tuple[tuple[float, float, float, float], ...]


def _fold(text: str, drop: str) -> tuple[str, tuple[int, ...]]:
    kept = [(char, index) for index, char in enumerate(text.casefold()) if not char.isspace() and char not in drop]
    return "".join(char for char, _ in kept), tuple(index for _, index in kept)


@contextmanager
def _opened(data: bytes) -> Iterator[Any]:
    """The PDF opened in PDFium (lock held), StorageFormatError in one line when it is not one."""
    with _PDFIUM:
        try:
            document = pypdfium2.PdfDocument(data)
        except pypdfium2.PdfiumError as error:
            raise StorageFormatError(f"not a readable PDF ({len(data)} bytes): {error}") from None
        try:
            yield document
        finally:
            document.close()


class PdfText:
    """A PDF's text layer: `page_count` at once, each page's characters and boxes when first asked for
    (a document view of page 1 does not wait for page 300's text)."""

    def __init__(self, data: bytes) -> None:
        self._data = data
        with _opened(data) as document:
            self.page_count: int = len(document)
        self._pages: dict[int, _Page] = {}

    def page(self, number: int) -> _Page:
        """The page (from 1), read on first use."""
        if number not in self._pages:
            with _opened(self._data) as document:
                self._pages[number] = self._read(document[number - 1])
        return self._pages[number]

    @staticmethod
    def _read(page: Any) -> _Page:
        height = page.get_height()
        text_page = page.get_textpage()
        count = text_page.count_chars()
        text = text_page.get_text_range(0, count) if count else ""
        boxes = []
        for index in range(len(text)):
            left, bottom, right, top = text_page.get_charbox(index, loose=True) if index < count else (0, 0, 0, 0)
            boxes.append((left, height - top, right, height - bottom))
        plain, plain_at = _fold(text, "")
        bare, bare_at = _fold(text, ",")
        return _Page(plain, plain_at, bare, bare_at, tuple(boxes))

    def pages(self) -> list[_Page]:
        """Every page in order (those not yet read, read with the document opened once)."""
        missing = [number for number in range(1, self.page_count + 1) if number not in self._pages]
        if missing:
            with _opened(self._data) as document:
                for number in missing:
                    self._pages[number] = self._read(document[number - 1])
        return [self._pages[number] for number in range(1, self.page_count + 1)]


def _number_forms(value: float) -> set[str]:
    """The ways a page may print the number (thousands separators are dropped before matching)."""
    forms = {repr(value), str(value)}
    if float(value).is_integer():
        forms.add(str(int(value)))
    for places in range(1, 5):
        text = f"{value:.{places}f}"
        if float(text) == value:
            forms.add(text)
    return forms


def _box(page: _Page, at: tuple[int, ...], start: int, length: int) -> tuple[float, float, float, float]:
    chars = [page.boxes[at[position]] for position in range(start, start + length)]
    chars = [box for box in chars if box[2] > box[0]] or chars
    return (min(b[0] for b in chars), min(b[1] for b in chars), max(b[2] for b in chars), max(b[3] for b in chars))


def _find(text: str, needle: str, number: bool) -> list[int]:
    starts, start = [], text.find(needle)
    while needle and start >= 0:
        end = start + len(needle)
        before, after = text[start - 1 : start], text[end : end + 2]
        alone = not (before and (_DIGITS.match(before) or before == ".")) and not (
            after[:1] and (_DIGITS.match(after[:1]) or (after[:1] == "." and _DIGITS.match(after[1:2] or "x")))
        )
        if not number or alone:
            starts.append(start)
        start = text.find(needle, start + 1)
    return starts


def _date_forms(text: str) -> set[str]:
    """The ways a page may print the date the scorer reads in `text` (its formats, the day and month
    with or without a leading zero); nothing when it reads no date."""
    key = canonical_key(text)
    if not key.startswith(DATE_PREFIX):
        return set()
    day = date.fromisoformat(key[len(DATE_PREFIX) :])
    forms = set()
    for form in DATE_FORMATS:
        for day_form, month_form in itertools.product(("%d", str(day.day)), ("%m", str(day.month))):
            forms.add(day.strftime(form.replace("%d", day_form).replace("%m", month_form)))
    return forms


def _needles(value: Any) -> tuple[set[str], bool]:
    """The folded texts to look for and whether they are numbers (then not inside a longer number,
    and looked for without thousands separators)."""
    if isinstance(value, int | float):
        return {form.casefold() for form in _number_forms(value)}, True
    dates = _date_forms(value)
    return {_fold(form, "")[0] for form in {value, *dates}}, bool(dates)


def locate(pdf: PdfText, value: Any) -> list[Location]:
    """Every place on the pages where the value stands (strings and numbers; nothing for others).

    A string the scorer reads as a date is also looked for in every date format it reads
    (`2024-03-05` is found where the page prints `March 5, 2024`)."""
    if isinstance(value, bool) or not isinstance(value, int | float | str) or len(str(value)) > LONGEST:
        return []
    needles, numeric = _needles(value)
    places = []
    for number, page in enumerate(pdf.pages(), start=1):
        text, at = (page.bare, page.bare_at) if isinstance(value, int | float) else (page.plain, page.plain_at)
        seen: set[tuple[int, int]] = set()
        for needle in sorted(needles, key=len, reverse=True):
            for start in _find(text, needle, numeric):
                if any(start < end and begin < start + len(needle) for begin, end in seen):
                    continue
                seen.add((start, start + len(needle)))
                places.append(Location(number, _box(page, at, start, len(needle))))
    return places


MAX_PIXELS = 40_000_000
"""The largest page rendered (pixels at the view's scale): an A0 sheet at 1.5 is about 12 million. A
hostile 14,400-point page would ask PDFium for a 1.9 GB bitmap; past this it is refused instead."""


def render_page(data: bytes, page: int, *, scale: float = 1.5) -> bytes:
    """The page (from 1) of the PDF as a PNG, `scale` pixels per PDF point; `PageTooLarge` for a page
    of more than `MAX_PIXELS`."""
    with _opened(data) as document:
        width, height = document[page - 1].get_size()
        if width * height * scale * scale > MAX_PIXELS:
            raise PageTooLarge(
                f"page {page} is {width:.0f} x {height:.0f} points, too large to render (at most "
                f"{MAX_PIXELS / 1e6:.0f} million pixels at {scale:g} pixels a point)"
            )
        image = document[page - 1].render(scale=scale).to_pil()
    out = io.BytesIO()
    image.save(out, format="PNG")
    return out.getvalue()
