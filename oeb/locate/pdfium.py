"""PDFium (through pypdfium2) behind one lock: opening a PDF and rendering a page.

PDFium is not thread-safe, and `oeb view` answers in threads: every call into it holds `PDFIUM`.
"""

from __future__ import annotations

import io
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pypdfium2  # type: ignore[import-untyped]

from oeb.errors import StorageFormatError

MAX_PIXELS = 40_000_000
"""The largest bitmap PDFium is asked for (a page at a scale): an A0 sheet at 1.5 pixels a point is
about 18 million. A hostile 14,400-point page would ask for a 1.9 GB bitmap; past this it is refused
(oeb view's page images) or left unread (OCR)."""

PDFIUM = threading.RLock()
"""Held by every call into PDFium (re-entrant: a reader may render while it holds the document)."""


@contextmanager
def opened(data: bytes) -> Iterator[Any]:
    """The PDF opened in PDFium (lock held), StorageFormatError in one line when it is not one."""
    with PDFIUM:
        try:
            document = pypdfium2.PdfDocument(data)
        except pypdfium2.PdfiumError as error:
            raise StorageFormatError(f"not a readable PDF ({len(data)} bytes): {error}") from None
        try:
            yield document
        finally:
            document.close()


def render_png(page: Any, scale: float) -> bytes:
    """An opened page as a PNG, `scale` pixels per PDF point (the caller holds the lock)."""
    image = page.render(scale=scale).to_pil()
    out = io.BytesIO()
    image.save(out, format="PNG")
    return out.getvalue()
