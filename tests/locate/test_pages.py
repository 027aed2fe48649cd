"""Reading a PDF's pages as words and lines, finding values as the scorer reads them, and rendering."""

from __future__ import annotations

import io
from collections.abc import Callable
from typing import Any

import pypdf
import pytest
from dataset_files import pdf_bytes
from PIL import Image

from oeb.errors import StorageFormatError
from oeb.locate import LONGEST, Located, PdfPages, index_of, locate_values
from oeb.scoring import canonical_key
from oeb.view.pdf import render_page

LINES = [
    "Invoice INV-0042 from ACME   Tools",
    "Total: 1,234.50 EUR",
    "Quantity 12 of 1120",
    "Due March 5, 2024",
    *[""] * 59,
    "Page two: 7",
]


@pytest.fixture(scope="module")
def pages() -> PdfPages:
    return PdfPages(pdf_bytes(LINES))


def one(pages: PdfPages, value: Any) -> Located | None:
    (place,) = locate_values(index_of(pages), [("value", value)])
    return place


def test_pages_are_words_in_lines(pages: PdfPages) -> None:
    first = pages.page(1)
    assert pages.page_count == 2 and first.source == "text" and first.has_text
    assert [first.words[i].text for i in first.lines[0]] == ["Invoice", "INV-0042", "from", "ACME", "Tools"]
    assert first.words[first.lines[1][1]].number == "1234.5"  # "1,234.50" reads as the number


def test_values_are_found_tolerant_of_case_whitespace_and_number_forms(pages: PdfPages) -> None:
    acme = one(pages, "acme tools")  # case and whitespace aside
    assert acme is not None and acme.status == "found" and acme.bbox is not None
    assert acme.page == 1 and 30 < acme.bbox[1] < 42 < acme.bbox[3] < 46  # line 1: baseline 42 pt from the top
    for value in (1234.5, "1,234.50", 1234.50, "$1,234.5"):
        total = one(pages, value)
        assert total is not None and total.page == 1 and total.bbox is not None
        assert 42 < total.bbox[1] < 54 < total.bbox[3] < 58  # line 2: baseline 54 pt
    twelve, eleven_twenty = one(pages, 12), one(pages, 1120)
    assert twelve and eleven_twenty and twelve.bbox and eleven_twenty.bbox
    assert twelve.bbox[2] < eleven_twenty.bbox[0]  # 12 is not inside 1120
    seven = one(pages, 7)
    assert seven is not None and seven.page == 2


FORMS = {
    "45.00-": -45,
    "-45.00-": 45,
    "(1,234.50)": -1234.5,
    "$4,712.96": 4712.96,
    "12%": 12,
    "+7.25": 7.25,
    "1 234 567.89": 1234567.89,
    "2 500": "2,500",
    "- 46.00": -46,
    "( 47.50 )": -47.5,
    "(48.25 )": "-48.25",
    "- $ 49.00": -49,
    "( $ 1,251.50 )": -1251.5,
    "$ 52.00": 52,
}
"""Printed numbers and the value each equals for the scorer (a trailing minus: accounting's; thousands
grouped by spaces; a sign, a dollar or parentheses set a space apart)."""


def test_a_number_is_found_in_each_form_the_scorer_reads_as_it() -> None:
    forms = PdfPages(pdf_bytes([f"Amount {printed}" for printed in FORMS]))
    for line, (printed, value) in enumerate(FORMS.items()):
        assert canonical_key(printed) == canonical_key(value), printed  # equal for the scorer
        place = one(forms, value)
        assert place is not None and place.status == "found" and place.bbox is not None, printed
        assert 30 + 12 * line < place.bbox[1] < 42 + 12 * line, printed  # on its own line


def test_numbers_in_separate_cells_are_not_joined() -> None:
    pages = PdfPages(pdf_bytes(["Qty 12 | 345.00", "Ref 7      250"]))  # a bar, and a wide gap: two cells
    assert [place.status if place else None for place in (one(pages, 12345), one(pages, 7250))] == ["not_printed"] * 2


NOT_SIGNED = {"Range 10.00 - 20.00": -20, "Note - 45": -45, "Cell -      53.00": -53, "Bar ( | 54.00 )": -54}
"""A minus between two numbers (a range), one the scorer reads as no sign (`- 45` is 45 to it: no
period, no number route), and marks in another cell: none prints the negative number."""


def test_a_mark_the_scorer_does_not_read_as_a_sign_is_not_joined() -> None:
    assert canonical_key("- 45") == canonical_key(45) != canonical_key(-45)
    pages = PdfPages(pdf_bytes(list(NOT_SIGNED)))
    for printed, value in NOT_SIGNED.items():
        assert one(pages, value) == Located("not_printed"), printed
    assert all(getattr(one(pages, -value), "status", None) == "found" for value in NOT_SIGNED.values())


MOMENTS = [
    "Issued 2024-03-05T00:00:00",
    "Sent 2024-04-06 10:30, by post",
    "Stamp 2024-05-07T09:15:00",
    "Closed 2024-06-08 00:00",
]
SAME_MOMENT = {
    "2024-03-05": 0,  # midnight is the day itself for the scorer
    "2024-04-06T10:30:00": 1,
    "2024-04-06 10:30:00+02:00": 1,  # the offset dropped, as the scorer drops it
    "2024-05-07 09:15": 2,
    "2024-06-08": 3,
    "2024-06-08T00:00:00": 3,
}
OTHER_MOMENT = {
    "2024-05-07": "Stamp 2024-05-07T09:15:00",  # a date is not a moment of that day
    "2024-04-06T10:00:00": "Sent 2024-04-06 10:30",  # nor another time
    "2024-03-05T10:00:00": "Issued 2024-03-05T00:00:00",
}


def test_an_iso_date_and_time_is_found_as_the_scorer_keys_it() -> None:
    pages = PdfPages(pdf_bytes(MOMENTS))
    for value, line in SAME_MOMENT.items():
        printed = MOMENTS[line].split(" ", 1)[1].split(",")[0]
        assert canonical_key(value) == canonical_key(printed), value  # equal for the scorer
        place = one(pages, value)
        assert place is not None and place.status == "found" and place.bbox is not None, value
        assert 30 + 12 * line < place.bbox[1] < 42 + 12 * line, value
    sent = one(pages, "2024-04-06")  # the date word before its time is still a word the page prints
    assert sent is not None and sent.status == "found" and sent.bbox and 42 < sent.bbox[1] < 54
    for value, printed in OTHER_MOMENT.items():
        assert canonical_key(value) != canonical_key(printed.split(" ", 1)[1]), value  # not equal
        assert one(pages, value) == Located("not_printed"), value


def test_what_the_page_does_not_hold_is_not_printed(pages: PdfPages) -> None:
    for value in ("Globex", 99, 123, "ACME Tool"):  # 1,234.50 holds no 123; "Tool" is not "Tools"
        place = one(pages, value)
        assert place == Located("not_printed"), value
    assert one(pages, True) is None and one(pages, None) is None and one(pages, "") is None  # not looked for


def test_a_page_without_text_holds_nothing_and_still_renders() -> None:
    writer = pypdf.PdfWriter()
    writer.add_blank_page(612, 792)
    data = io.BytesIO()
    writer.write(data)
    blank = data.getvalue()
    scan = PdfPages(blank, use_ocr=False)
    assert scan.page_count == 1 and one(scan, "anything") == Located("no_text_layer")
    assert scan.page(1).source == "none" and "scan" in scan.note(1)
    png = render_page(blank, 1, scale=0.5)
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    assert int.from_bytes(png[16:20]) == 306 and int.from_bytes(png[20:24]) == 396  # 612 x 792 pt at 0.5


def test_a_damaged_pdf_is_one_line_error() -> None:
    damaged = pdf_bytes(LINES)[:200]
    for call in (lambda: PdfPages(damaged), lambda: render_page(damaged, 1)):
        with pytest.raises(StorageFormatError, match="not a readable PDF") as caught:
            call()
        assert "\n" not in str(caught.value)


def test_a_huge_string_is_not_printed_and_line_breaks_are_whitespace(pages: PdfPages) -> None:
    assert one(pages, "acme tools " * (LONGEST // 5)) == Located("not_printed")
    assert one(pages, "  ACME\nTools ") == one(pages, "ACME Tools")


def test_a_date_is_found_in_the_formats_the_scorer_reads(pages: PdfPages) -> None:
    due = one(pages, "2024-03-05")  # the page prints "March 5, 2024"
    assert due is not None and due.page == 1 and due.bbox is not None
    assert 66 < due.bbox[1] < 78 < due.bbox[3] < 82  # line 4: baseline 78 pt
    assert one(pages, "05.03.2024") == due and one(pages, "2024-03-06") == Located("not_printed")


def _turned(stream: bytes, box: bytes) -> bytes:
    """A one-page PDF whose page has this content stream and page-dictionary entries (a `/Rotate`,
    a crop box): a landscape table as vendors generate one, or a page cropped off its origin."""
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [4 0 R] /Count 1 >>",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] %s /Resources << /Font << /F1 3 0 R >> >> "
        b"/Contents 5 0 R >>" % box,
        b"<< /Length %d >>\nstream\n%s\nendstream" % (len(stream), stream),
    ]
    out, offsets = bytearray(b"%PDF-1.4\n"), []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    xref = len(out)
    out += b"xref\n0 6\n0000000000 65535 f \n" + b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    return bytes(out + b"trailer\n<< /Size 6 /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % xref)


def _table(matrix: str, place: Callable[[int, int], tuple[int, int]]) -> bytes:
    """Three rows of two cells, each drawn with the text matrix `matrix` at `place(row, column)`
    in PDF space: drawn turned against the page's `/Rotate`, they read upright as shown."""
    cells = [(b"A-100", b"EA"), (b"B-220", b"EA"), (b"C-310", b"BX")]
    return b"\n".join(
        b"BT /F1 10 Tf %s %s Tm (%s) Tj ET" % (matrix.encode(), b"%d %d" % place(row, column), text)
        for row, pair in enumerate(cells)
        for column, text in enumerate(pair)
    )


@pytest.mark.parametrize(
    ("stream", "box", "shown"),
    [
        (_table("1 0 0 1", lambda r, c: (100 + 200 * c, 750 - 20 * r)), b"/CropBox [40 30 555 812]", (515, 782)),
        (_table("0 1 -1 0", lambda r, c: (80 + 20 * r, 60 + 200 * c)), b"/Rotate 90", (842, 595)),  # landscape
        (_table("-1 0 0 -1", lambda r, c: (535 - 200 * c, 80 + 20 * r)), b"/Rotate 180", (595, 842)),
        (_table("0 -1 1 0", lambda r, c: (515 - 20 * r, 782 - 200 * c)), b"/Rotate 270", (842, 595)),
    ],
)
def test_a_rotated_or_cropped_page_is_read_as_shown(stream: bytes, box: bytes, shown: tuple[int, int]) -> None:
    """Values are placed on the page as it is shown and rendered, on their ink, each row of a table
    one line (a `/Rotate` or a crop box once left a vendor's landscape table unread: 75 of its 108
    gold values `not_printed`, and the others outlined off the page's text)."""
    data = _turned(stream, box)
    pages = PdfPages(data, use_ocr=False)
    page = pages.page(1)
    assert (page.width, page.height) == shown
    (code, unit) = locate_values(index_of(pages), [("items[0].code", "A-100"), ("items[0].unit", "EA")])
    assert code is not None and unit is not None and code.bbox is not None and unit.bbox is not None
    assert code.status == "found" and unit.status == "found"
    image = Image.open(io.BytesIO(render_page(data, 1, scale=1.0))).convert("L")
    assert image.size == shown
    for outline in (code.bbox, unit.bbox):
        x0, y0, x1, y1 = (round(v) for v in outline)
        assert x1 - x0 > y1 - y0  # read left to right, as shown
        assert image.crop((x0, y0, x1 + 1, y1 + 1)).getextrema()[0] < 128  # on its ink
    rows = [[page.words[i].text for i in line] for line in page.lines]
    assert rows == [["A-100", "EA"], ["B-220", "EA"], ["C-310", "BX"]]


def test_a_sideways_table_on_an_upright_page_is_read_row_by_row() -> None:
    """A table turned a quarter on a portrait page (LaTeX's sidewaystable; no `/Rotate`), under an
    upright title: its rows are read as lines in its own upright frame and outlined, tall, on
    their ink as shown (each character was once a word of its own: not one value found)."""
    title = b"BT /F1 10 Tf 60 800 Td (Order ORD-7 sideways) Tj ET\n"
    data = _turned(title + _table("0 1 -1 0", lambda r, c: (260 + 20 * r, 100 + 200 * c)), b"")
    pages = PdfPages(data, use_ocr=False)
    page = pages.page(1)
    rows = [[page.words[i].text for i in line] for line in page.lines]
    assert rows == [["Order", "ORD-7", "sideways"], ["A-100", "EA"], ["B-220", "EA"], ["C-310", "BX"]]
    values = [("number", "ORD-7"), ("items[0].code", "A-100"), ("items[0].unit", "EA"), ("items[2].code", "C-310")]
    located = locate_values(index_of(pages), values)
    image = Image.open(io.BytesIO(render_page(data, 1, scale=1.0))).convert("L")
    for (address, _), place in zip(values, located, strict=True):
        assert place is not None and place.status == "found" and place.bbox is not None, address
        x0, y0, x1, y1 = (round(v) for v in place.bbox)
        assert (x1 - x0 > y1 - y0) == (address == "number"), address  # the table's cells stand tall
        assert image.crop((x0, y0, x1 + 1, y1 + 1)).getextrema()[0] < 128, address
    unit = located[2]  # the first row's EA, reading upwards: at x 260 (its glyphs' feet), 300 points up
    assert unit is not None and unit.bbox is not None and 250 < unit.bbox[0] < 260 < unit.bbox[2]
    assert 842 - 330 < unit.bbox[1] < unit.bbox[3] < 842 - 290
