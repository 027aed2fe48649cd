"""The locator on generated documents whose every value's place is known (scripts/locate_docs.py),
and on the bundled sample."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pypdfium2  # type: ignore[import-untyped]
import pytest
from dataset_files import pdf_bytes
from locate_docs import Generated, flatten, form_document, placed_pdf_bytes, table_document

from oeb.locate import Located, PdfPages, index_of, locate_values
from oeb.locate.ocr import tesseract
from oeb.view.document import labels_of

SAMPLE = Path(__file__).resolve().parents[2] / "oeb" / "data" / "sample"
_ITEM = re.compile(r"^(\w+\[\d+\])")


@pytest.fixture(scope="module")
def table() -> Generated:
    return table_document()


@pytest.fixture(scope="module")
def form() -> Generated:
    return form_document()


def _located(document: Generated | bytes, values: list[tuple[str, object]], **options: bool) -> list[Located | None]:
    pdf = document if isinstance(document, bytes) else document.pdf
    return locate_values(index_of(PdfPages(pdf, **options)), values)


def _middle(place: Located) -> float:
    assert place.bbox is not None
    return (place.bbox[1] + place.bbox[3]) / 2


def test_every_table_value_is_located_on_its_own_row(table: Generated) -> None:
    values = flatten(table.gold)
    located = _located(table, values)
    assert all(place is not None and place.status in ("found", "ambiguous") for place in located)
    on_row: dict[str, bool] = {}
    for (address, _), place in zip(values, located, strict=True):
        item = _ITEM.match(address)
        if item is None:
            continue
        page, top, bottom = table.rows[item[1]]
        assert place is not None
        on_row[item[1]] = on_row.get(item[1], True) and place.page == page and top <= _middle(place) <= bottom
    assert len(on_row) == 150 and sum(on_row.values()) >= 0.99 * len(on_row)
    statuses = [place.status for place in located if place is not None]
    assert statuses.count("found") >= len(statuses) - 1  # the order number heads every page: ambiguous
    units = [place for (address, _), place in zip(values, located, strict=True) if address.endswith(".unit")]
    assert all(place is not None and place.others > 0 for place in units)  # each unit repeats, found in its row


def test_a_wrapped_cell_is_found_across_its_lines(table: Generated) -> None:
    long = [(f"items[{n}].description", item["description"]) for n, item in enumerate(table.gold["items"])]
    wrapped = [(address, text) for address, text in long if len(text) > 24]
    assert wrapped
    for place in _located(table, wrapped):
        assert place is not None and place.status == "found" and place.bbox is not None
        assert place.bbox[3] - place.bbox[1] > 20  # two lines high


def test_numbers_at_line_ends_and_strings_on_word_boundaries() -> None:
    pdf = pdf_bytes(["0001 | LED panel | 409 | EA | 7789.90", "0002 | Hex bolt | 12 | BX | 15.00", "Total 1,234.50"])
    found = _located(pdf, [("a", 7789.9), ("b", "7789.90"), ("c", "ED"), ("d", 12), ("e", "1,234.5"), ("f", 1234)])
    assert [place.status if place else None for place in found] == [
        "found",
        "found",
        "not_printed",  # not inside LED
        "found",
        "found",
        "not_printed",  # 1,234.50 is no 1234
    ]
    assert found[0] == found[1]
    seven, twelve = found[0], found[3]
    assert seven is not None and twelve is not None and _middle(seven) < _middle(twelve)


def test_label_adjacent_scalars_land_next_to_their_label(form: Generated) -> None:
    values = flatten(form.gold)
    located = dict(zip((address for address, _ in values), _located(form, values), strict=True))
    for field in ("operator_number", "permit_number", "well_number", "total_due", "county"):
        place = located[field]
        _, top, bottom = form.rows[f"label:{field}"]
        assert place is not None and place.status == "found", field
        assert top <= _middle(place) <= bottom, field
    operator, permit = located["operator_number"], located["permit_number"]
    assert operator is not None and permit is not None and operator.bbox and permit.bbox
    assert operator.bbox[0] > 300 > permit.bbox[0]  # the same value, each beside its own label
    minutes = located["pressure_tests[2].minutes"]  # 30, also the well number: on its table row
    assert minutes is not None and minutes.bbox and minutes.bbox[0] < 60 and minutes.bbox[1] > 170


def test_a_scalar_goes_next_to_the_words_of_its_schema_description() -> None:
    """`parcel_id` is printed twice; only its description's words (tract, number) label one place."""
    pdf = placed_pdf_bytes([[(50, 60, "Reference 7731 Lot 12"), (50, 120, "Tract number: 7731")]])
    schema = {"type": "object", "properties": {"parcel_id": {"type": "string", "description": "the tract number"}}}
    (unlabelled,) = _located(pdf, [("parcel_id", "7731")])
    (labelled,) = locate_values(index_of(PdfPages(pdf)), [("parcel_id", "7731")], labels_of(schema, ["parcel_id"]))
    assert unlabelled is not None and unlabelled.status == "ambiguous" and unlabelled.others == 1
    assert labelled is not None and labelled.status == "found" and 110 < _middle(labelled) < 125


def test_a_number_returned_as_a_string_is_located(form: Generated) -> None:
    text, number = _located(form, [("t", "4,712.96"), ("u", 4712.96)])
    assert text is not None and text.status == "found" and text == number


def _scan(document: Generated) -> bytes:
    """The document's first page as an image-only PDF of the same size (200 dpi)."""
    page = pypdfium2.PdfDocument(document.pdf)[0]
    image = page.render(scale=200 / 72).to_pil().convert("L")
    out = io.BytesIO()
    image.save(out, format="PDF", resolution=200.0)
    return out.getvalue()


def test_a_scan_without_ocr_says_so_and_blames_nothing(form: Generated) -> None:
    pages = PdfPages(_scan(form), use_ocr=False)
    located = locate_values(index_of(pages), flatten(form.gold))
    assert {place.status for place in located if place is not None} == {"no_text_layer"}
    assert pages.note(1).startswith("a scan without a text layer")


@pytest.mark.must_run  # under CI=true a missing Tesseract fails the run
@pytest.mark.skipif(tesseract() is None, reason="no Tesseract (apt-get install -y tesseract-ocr)")
def test_with_tesseract_a_scan_is_read_and_its_values_found_within_a_few_points(form: Generated) -> None:
    values = flatten(form.gold)
    printed = _located(form, values)
    pages = PdfPages(_scan(form), use_ocr=True)
    read = locate_values(index_of(pages), values)
    assert "OCR" in pages.note(1)
    for (address, _), text, ocr in zip(values, printed, read, strict=True):
        if text is None:
            continue
        assert ocr is not None and ocr.status == "found" and ocr.source == "ocr", address
        assert text.bbox is not None and ocr.bbox is not None
        assert max(abs(a - b) for a, b in zip(text.bbox, ocr.bbox, strict=True)) < 4, address


def test_no_value_the_sample_prints_is_reported_not_printed() -> None:
    not_printed = []
    for gold_file in sorted((SAMPLE / "gold").glob("*.json")):
        values = flatten(json.loads(gold_file.read_text(encoding="utf-8")))
        data = (SAMPLE / "pdfs" / f"{gold_file.stem}.pdf").read_bytes()
        for (address, value), place in zip(values, _located(data, values), strict=True):
            if place is not None and place.status == "not_printed":
                not_printed.append((gold_file.stem, address, value))
    assert not_printed == []


def test_ocr_reads_a_bounded_number_of_scanned_pages(form: Generated, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("oeb.locate.pages.OCR_PAGES", 0)
    pages = PdfPages(_scan(form), use_ocr=True)
    located = locate_values(index_of(pages), flatten(form.gold))
    assert {place.status for place in located if place is not None} == {"no_text_layer"}
    assert pages.note(1).endswith("OCR reads the first 0 scanned pages")


def test_two_columns_of_a_page_each_item_on_its_own_half_row() -> None:
    """A page printing its items in two columns holds two items on each line, their codes and units
    alike: each item's values land in its own column's row (87 of 150 values of such a page once
    landed in the other column or on another line)."""
    gold, placed = [], []
    for number in range(30):
        column, row = divmod(number, 15)
        item = {
            "code": f"K-{number % 15 % 5:03d}",
            "quantity": number % 4 + 1 + 4 * column,
            "unit": ("EA", "BX")[row % 2],
        }
        item["amount"] = round(100 + number * 13.37, 2)
        gold.append(item)
        left, baseline = 20 + 290 * column, 80 + 14 * row
        cells = (item["code"], str(item["quantity"]), item["unit"], f"{item['amount']:.2f}")
        placed += [(left + offset, baseline, text) for offset, text in zip((0, 60, 90, 130), cells, strict=True)]
    values = flatten({"items": gold})
    located = _located(placed_pdf_bytes([placed]), values)
    for (address, _), place in zip(values, located, strict=True):
        number = int(address[address.index("[") + 1 : address.index("]")])
        column, row = divmod(number, 15)
        assert place is not None and place.bbox is not None, address
        assert 20 + 290 * column <= place.bbox[0] < 20 + 290 * column + 200, (address, place)
        assert 80 + 14 * row - 10 < _middle(place) < 80 + 14 * row + 2, (address, place)


def test_a_form_in_two_columns_puts_each_scalar_next_to_its_own_label() -> None:
    """Two fields per line, each value printed twice: a label's words are read back to the gap
    between the columns, and the label with no other words wins (`date` once went to `Due date:`,
    and `due_date`, `ship_to` and `total` were ambiguous)."""
    pdf = placed_pdf_bytes(
        [
            [
                (50, 80, "Due date: 2024-03-05"),
                (320, 80, "Date: 2024-03-05"),
                (50, 100, "Ship to: Berlin"),
                (320, 100, "Bill to: Berlin"),
                (50, 120, "Total: 45.00"),
                (320, 120, "Tax: 45.00"),
            ]
        ]
    )
    fields = {"date": 320, "due_date": 50, "ship_to": 50, "bill_to": 320, "total": 50, "tax": 320}
    values = {"date": "2024-03-05", "due_date": "2024-03-05", "ship_to": "Berlin", "bill_to": "Berlin"}
    index = index_of(PdfPages(pdf, use_ocr=False))
    for field, column in fields.items():
        (place,) = locate_values(index, [(field, values.get(field, 45))])
        assert place is not None and place.status == "found" and place.bbox is not None, field
        assert column < place.bbox[0] < column + 120, (field, place)
