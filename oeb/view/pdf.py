"""A document's page rendered as PNG for `oeb view` (PDFium through pypdfium2, encoded by Pillow).

Where values stand on the pages is the locator's business (oeb.locate)."""

from __future__ import annotations

from oeb.locate.pdfium import opened, render_png


def render_page(data: bytes, page: int, *, scale: float = 1.5) -> bytes:
    """The page (from 1) of the PDF as a PNG, `scale` pixels per PDF point."""
    with opened(data) as document:
        return render_png(document[page - 1], scale)
