"""Evidence is where the value is printed on the page as shown: a crop box that does not start at
0, 0 moves every place by its corner, as it moves the vendors' citations (a share of the shown page)."""

from __future__ import annotations

import io

import pypdf
from dataset_files import placed_pdf_bytes

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
