"""A PDF's pages as words and lines: from the text layer, or, for a page without one (a scan), from
Tesseract when it is installed (`ocr.py`).

Pages are read when first asked for (a view of page 1 does not wait for page 300) and kept.
"""

from __future__ import annotations

import threading
from typing import Any

from oeb.locate import ocr
from oeb.locate.pdfium import MAX_PIXELS, PDFIUM, char_boxes, opened, render_png
from oeb.locate.turns import turned_words
from oeb.locate.words import Page, lines_of

OCR_PAGES = 20
"""Scanned pages of one document read by OCR at most (a few seconds each): a 300-page scan is not
read whole before its first view answers; the pages past this say they were not read."""


class PdfPages:
    """A PDF's pages for the locator. `use_ocr`: read scans with Tesseract (None: when installed)."""

    def __init__(self, data: bytes, *, use_ocr: bool | None = None) -> None:
        self.data = data
        with opened(data) as document:
            self.page_count: int = len(document)
        self.use_ocr = ocr.tesseract() is not None if use_ocr is None else use_ocr
        self._digest = ocr.digest(data)
        self._pages: dict[int, Page] = {}
        self._notes: dict[int, str] = {}
        self._lock = threading.Lock()
        self._ocr_read = 0

    def page(self, number: int) -> Page:
        """The page (from 1), read on first use."""
        return self._load([number])[0]

    def pages(self) -> list[Page]:
        """Every page in order (those not yet read, read with the document opened once)."""
        return self._load(list(range(1, self.page_count + 1)))

    def _load(self, numbers: list[int]) -> list[Page]:
        """The pages, reading those not read yet: text layers with PDFium's lock held, scans by OCR
        after it is released (Tesseract takes seconds; renders for other requests need not wait)."""
        with self._lock:
            missing = [number for number in numbers if number not in self._pages]
            scans: dict[int, tuple[float, float, bytes]] = {}
            if missing:
                with opened(self.data) as document:
                    for number in missing:
                        read = self._read(document, number)
                        if isinstance(read, Page):
                            self._pages[number] = read
                        else:
                            scans[number] = read
            for number, (width, height, png) in scans.items():
                self._pages[number] = self._ocr(number, width, height, png)
            return [self._pages[number] for number in numbers]

    def note(self, number: int) -> str:
        """One line on how the page was read ('' for a text layer)."""
        self.page(number)
        return self._notes.get(number, "")

    def _read(self, document: Any, number: int) -> Page | tuple[float, float, bytes]:
        """The page from its text layer, or (a scan to read by OCR) its size and image."""
        page = document[number - 1]
        width, height = page.get_width(), page.get_height()
        text_page = page.get_textpage()
        count = text_page.count_chars()
        text = text_page.get_text_range(0, count) if count else ""
        shown = (*page.get_bbox(), page.get_rotation() % 360)  # the crop box, turned as the page is shown
        ordered, lines, ways = turned_words(text, char_boxes(text_page, text, count, shown), width, height)
        if ordered:
            return Page(number, width, height, "text", ordered, lines, ways)
        if self.use_ocr and width * height * ocr.SCALE * ocr.SCALE > MAX_PIXELS:
            self._notes[number] = (
                f"a scan without a text layer, not read: {width:.0f} x {height:.0f} points is too large"
            )
            return Page(number, width, height, "none", (), ())
        if self.use_ocr and self._ocr_read >= OCR_PAGES:
            self._notes[number] = (
                f"a scan without a text layer, not read: OCR reads the first {OCR_PAGES} scanned pages"
            )
            return Page(number, width, height, "none", (), ())
        if not self.use_ocr:
            self._notes[number] = "a scan without a text layer: its values are not looked for" + (
                "" if ocr.tesseract() else " (install Tesseract, Debian's tesseract-ocr, to read it by OCR)"
            )
            return Page(number, width, height, "none", (), ())
        self._ocr_read += 1
        with PDFIUM:
            return width, height, render_png(page, ocr.SCALE)

    def _ocr(self, number: int, width: float, height: float, png: bytes) -> Page:
        try:
            read = ocr.read((self._digest, number), png)
        except ocr.OcrFailed as error:
            self._notes[number] = f"a scan without a text layer, not read: {error}"
            return Page(number, width, height, "none", (), ())
        ordered, lines = lines_of(read)
        self._notes[number] = "a scan without a text layer: read by OCR (Tesseract), values placed as it read them"
        return Page(number, width, height, "ocr", ordered, lines)
