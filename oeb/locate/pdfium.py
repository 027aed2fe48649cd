"""PDFium (through pypdfium2) behind one lock: opening a PDF and rendering a page.

PDFium is not thread-safe, and `oeb view` answers in threads: every call into it holds `PDFIUM`.
"""

from __future__ import annotations

import ctypes
import io
import itertools
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
import pypdfium2  # type: ignore[import-untyped]
import pypdfium2.raw as pdfium_c  # type: ignore[import-untyped]
from numpy.typing import NDArray

from oeb.errors import StorageFormatError
from oeb.locate.words import WHITESPACE

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


_ADDRESS = ctypes.cast(pdfium_c.FPDFText_GetLooseCharBox, ctypes.c_void_p).value
if not _ADDRESS:  # pragma: no cover - pypdfium2's own binding would have failed first
    raise ImportError("PDFium's FPDFText_GetLooseCharBox is missing")
_LOOSE_CHAR_BOX = ctypes.CFUNCTYPE(ctypes.c_int)(_ADDRESS)
"""FPDFText_GetLooseCharBox(text page, index, FS_RECTF*) with no argument types to convert (its
arguments are given as C types: a c_void_p, an int, a byref): called for every character of a page
from C (`map`), each box written straight into one array, it costs a fifth of pypdfium2's
`get_charbox`."""


Shown = tuple[float, float, float, float, int]
"""A page as shown: its bounding box in PDF space (left, bottom, right, top: the crop box, which need
not start at 0, 0) and its `/Rotate` turn (0, 90, 180 or 270 degrees clockwise)."""


def char_boxes(text_page: Any, text: str, count: int, shown: Shown) -> NDArray[np.float64]:
    """The loose box of each character of a page's `text` (read from `text_page`, `count`
    characters) as an (n, 4) array of x0, y0, x1, y1 in points from the top-left of the page as
    `shown` (the crop box's corner, the page turned); zeros for whitespace and for characters past
    `count`. The caller holds the lock; PdfiumError when PDFium cannot give a box."""
    codes = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)[:count]
    wanted = np.flatnonzero(~np.isin(codes, WHITESPACE))
    rects = (ctypes.c_float * (4 * len(wanted)))()  # FS_RECTF: left, top, right, bottom
    handle = ctypes.c_void_p(ctypes.cast(text_page.raw, ctypes.c_void_p).value)
    pointers = map(ctypes.byref, itertools.repeat(rects), range(0, 16 * len(wanted), 16))
    if not all(list(map(_LOOSE_CHAR_BOX, itertools.repeat(handle), wanted.tolist(), pointers))):
        raise pypdfium2.PdfiumError("Failed to get charbox.")
    boxes = np.zeros((len(text), 4), dtype=np.float64)
    wide = np.frombuffer(rects, dtype=np.float32).reshape(-1, 4).astype(np.float64)
    left, top, right, bottom = wide.T
    x0, y0, x1, y1, turn = shown
    if turn == 90:  # the page turned clockwise: PDF y runs left to right, PDF x top to bottom
        placed = (bottom - y0, left - x0, top - y0, right - x0)
    elif turn == 180:
        placed = (x1 - right, bottom - y0, x1 - left, top - y0)
    elif turn == 270:
        placed = (y1 - top, x1 - right, y1 - bottom, x1 - left)
    else:
        placed = (left - x0, y1 - top, right - x0, y1 - bottom)
    boxes[wanted] = np.column_stack(placed)
    return boxes
