"""A document's page rendered as PNG for `oeb view` (PDFium through pypdfium2, encoded by Pillow).

Where values stand on the pages is the locator's business (oeb.locate)."""

from __future__ import annotations

from oeb.errors import PageTooLarge
from oeb.locate.pdfium import MAX_PIXELS, opened, render_png

__all__ = ["MAX_PIXELS", "render_page"]


def render_page(data: bytes, page: int, *, scale: float = 1.5, smaller: float | None = None) -> bytes:
    """The page (from 1) of the PDF as a PNG, `scale` pixels per PDF point (`smaller` instead when the
    page is too large at `scale`); `PageTooLarge` for a page of more than `MAX_PIXELS` even so."""
    with opened(data) as document:
        width, height = document[page - 1].get_size()
        if smaller is not None and width * height * scale * scale > MAX_PIXELS:
            scale = smaller
        if width * height * scale * scale > MAX_PIXELS:
            raise PageTooLarge(
                f"page {page} is {width:.0f} x {height:.0f} points, too large to render (at most "
                f"{MAX_PIXELS / 1e6:.0f} million pixels at {scale:g} pixels a point)"
            )
        return render_png(document[page - 1], scale)
