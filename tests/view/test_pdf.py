"""Finding values in a PDF's text layer as the scorer reads them, and rendering its pages."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pypdf
import pytest

from oeb.errors import StorageFormatError
from oeb.view.pdf import LONGEST, PdfText, locate, render_page

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
from dataset_files import pdf_bytes

LINES = [
    "Invoice INV-0042 from ACME   Tools",
    "Total: 1,234.50 EUR",
    "Quantity 12 of 1120",
    "Due March 5, 2024",
    *[""] * 59,
    "Page two: 7",
]


@pytest.fixture(scope="module")
def text() -> PdfText:
    return PdfText(pdf_bytes(LINES))


def test_values_are_found_tolerant_of_case_whitespace_and_number_forms(text: PdfText) -> None:
    assert text.page_count == 2
    (acme,) = locate(text, "acme tools")  # case and whitespace aside
    assert acme.page == 1 and 30 < acme.bbox[1] < 42 < acme.bbox[3] < 46  # line 1: baseline 42 pt from the top
    for value in (1234.5, "1,234.50", 1234.50):
        (total,) = locate(text, value)
        assert total.page == 1 and 42 < total.bbox[1] < 54 < total.bbox[3] < 58  # line 2: baseline 54 pt
    (twelve,) = locate(text, 12)  # not inside 1120
    assert twelve.bbox[2] < locate(text, 1120)[0].bbox[0]
    assert [place.page for place in locate(text, 7)] == [2]


def test_what_the_page_does_not_hold_has_no_place(text: PdfText) -> None:
    assert locate(text, "Globex") == [] and locate(text, 99) == [] and locate(text, True) == []
    assert locate(text, None) == [] and locate(text, 123) == []  # 1,234.50 holds no 123


def test_a_page_without_text_holds_nothing_and_still_renders() -> None:
    writer = pypdf.PdfWriter()
    writer.add_blank_page(612, 792)
    data = io.BytesIO()
    writer.write(data)
    blank = data.getvalue()
    scan = PdfText(blank)
    assert scan.page_count == 1 and locate(scan, "anything") == []
    png = render_page(blank, 1, scale=0.5)
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    assert int.from_bytes(png[16:20]) == 306 and int.from_bytes(png[20:24]) == 396  # 612 x 792 pt at 0.5


def test_a_damaged_pdf_is_one_line_error() -> None:
    damaged = pdf_bytes(LINES)[:200]
    for call in (lambda: PdfText(damaged), lambda: render_page(damaged, 1)):
        with pytest.raises(StorageFormatError, match="not a readable PDF") as caught:
            call()
        assert "\n" not in str(caught.value)


def test_a_huge_string_is_not_looked_for(text: PdfText) -> None:
    assert locate(text, "acme tools " * (LONGEST // 5)) == [] and locate(text, "") == []
    assert locate(text, "  ACME\nTools ") != []  # a line break inside is whitespace like any other


def test_a_date_is_found_in_the_formats_the_scorer_reads(text: PdfText) -> None:
    (due,) = locate(text, "2024-03-05")  # the page prints "March 5, 2024"
    assert due.page == 1 and 66 < due.bbox[1] < 78 < due.bbox[3] < 82  # line 4: baseline 78 pt
    assert locate(text, "05.03.2024") == [due] and locate(text, "2024-03-06") == []
