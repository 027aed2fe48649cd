"""Evidence is where the value is printed on the page as shown: a crop box that does not start at
0, 0 moves every place by its corner, as it moves the vendors' citations (a share of the shown page)."""

from __future__ import annotations

import io

import pypdf
import pytest
from dataset_files import _pdf, placed_pdf_bytes

from oeb.locate import PdfPages, index_of, label_of, locate_values
from oeb.locate.words import Box


def _place(data: bytes) -> Box | None:
    pages = PdfPages(data, use_ocr=False)
    [found] = locate_values(index_of(pages), [("invoice", "A-77")], {"invoice": label_of("invoice")})
    return found.bbox


def test_a_cropped_page_places_its_values_from_the_crop_box_corner() -> None:
    plain = placed_pdf_bytes([[(100, 100, "Invoice A-77"), (300, 500, "Total 9.50")]])
    reader, writer = pypdf.PdfReader(io.BytesIO(plain)), pypdf.PdfWriter()
    for page in reader.pages:
        page.cropbox.lower_left, page.cropbox.upper_right = (50, 30), (545, 792)  # 50 pt off the A4's top and left
        writer.add_page(page)
    out = io.BytesIO()
    writer.write(out)
    assert PdfPages(out.getvalue(), use_ocr=False).page(1).width == 495
    before, after = _place(plain), _place(out.getvalue())
    assert before is not None and after is not None and before[1] > 50
    shifted = (before[0] - 50, before[1] - 50, before[2] - 50, before[3] - 50)
    assert max(abs(a - b) for a, b in zip(after, shifted, strict=True)) < 0.01


def _pdf_of(stream: bytes, *, turn: int = 0, landscape: bool = False) -> bytes:
    reader, writer = pypdf.PdfReader(io.BytesIO(_pdf([stream]))), pypdf.PdfWriter()
    for page in reader.pages:
        if landscape:
            page.mediabox.upper_right = (842, 595)
        if turn:
            page.rotate(turn)
        writer.add_page(page)
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


TEXT = b"BT /F1 10 Tf 400 100 Td (Invoice A-77) Tj ET"
UPRIGHT = {90: b"0 1 -1 0 595 0", 180: b"-1 0 0 -1 595 842", 270: b"0 -1 1 0 0 842"}
"""The matrix that draws a page's text so that it reads upright once the page is turned (as a
landscape page in a portrait document, or a scan turned by `/Rotate`, is made)."""


@pytest.mark.parametrize("turn", sorted(UPRIGHT))
def test_a_turned_page_places_its_values_where_it_shows_them(turn: int) -> None:
    turned = _pdf_of(b"q " + UPRIGHT[turn] + b" cm " + TEXT + b" Q", turn=turn)
    shown = _pdf_of(TEXT, landscape=turn != 180)  # the same page drawn as it is shown
    sizes = [(page.width, page.height) for page in (PdfPages(d, use_ocr=False).page(1) for d in (turned, shown))]
    assert sizes[0] == sizes[1]
    place, expected = _place(turned), _place(shown)
    assert place is not None and expected is not None
    assert max(abs(a - b) for a, b in zip(place, expected, strict=True)) < 0.01
