"""A document's page rendered as PNG for `oeb view` (PDFium through pypdfium2, encoded by Pillow).

Where values stand on the pages is the locator's business (oeb.locate)."""

from __future__ import annotations

import math
import re

from oeb.errors import PageTooLarge, UsageError
from oeb.locate.pdfium import MAX_PIXELS, opened, render_png

__all__ = ["MAX_PIXELS", "asked_scale", "render_page"]

_SCALE = re.compile(r"[0-9]{1,2}(?:\.[0-9]{1,2})?")


def asked_scale(text: str | None, default: float, most: float) -> float:
    """The `scale=` a page image's URL asks for (pixels per PDF point, two decimals at most: the
    browser's for its screen's pixel ratio), `default` when not given; UsageError naming what is
    wrong for one that is no such number from 1 to `most`."""
    if text is None or text == "":
        return default
    if not _SCALE.fullmatch(text) or not 1 <= float(text) <= most:
        raise UsageError(f"scale={text!r} is not a number of pixels per point from 1 to {most:g}")
    return float(text)


def render_page(
    data: bytes, page: int, *, scale: float = 1.5, smaller: float | None = None, least: float | None = None
) -> bytes:
    """The page (from 1) of the PDF as a PNG, `scale` pixels per PDF point. A page too large at
    `scale` is rendered at the sharpest scale `MAX_PIXELS` allows if that is at least `least`, else
    at `smaller`; `PageTooLarge` for a page of more than `MAX_PIXELS` even so."""
    with opened(data) as document:
        width, height = document[page - 1].get_size()
        area = max(width * height, 1.0)
        if least is not None and area * scale * scale > MAX_PIXELS:
            scale = max(least, math.floor(100 * math.sqrt(MAX_PIXELS / area)) / 100)
        if smaller is not None and area * scale * scale > MAX_PIXELS:
            scale = smaller
        if width * height * scale * scale > MAX_PIXELS:
            raise PageTooLarge(
                f"page {page} is {width:.0f} x {height:.0f} points, too large to render (at most "
                f"{MAX_PIXELS / 1e6:.0f} million pixels at {scale:g} pixels a point)"
            )
        return render_png(document[page - 1], scale)
