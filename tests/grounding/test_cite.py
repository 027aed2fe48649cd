"""The shared shape's checks: a vendor's hostile boxes and confidences are dropped and counted."""

from __future__ import annotations

import math

import pytest

from oeb.grounding.cite import Cite, address_of, check, polygon_box

PAGES = [(612.0, 792.0), (300.0, 400.0)]


def test_a_good_citation_is_kept_in_points_and_a_share_of_the_page_is_converted() -> None:
    checked = check(
        "d",
        "s",
        [Cite("a", 1, [10, 20, 30, 40], "Acme", 0.9), Cite("b", 2, (0.1, 0.5, 0.5, 1.0), None, 1, unit="fraction")],
        PAGES,
    )
    assert (checked.invalid_citations, checked.invalid_confidences) == (0, 0)
    first, second = checked.rows
    assert (first["page"], first["x0"], first["y0"], first["x1"], first["y1"]) == (1, 10, 20, 30, 40)
    assert (first["text"], first["confidence"], first["system"], first["doc_id"]) == ("Acme", 0.9, "s", "d")
    assert (second["x0"], second["y0"], second["x1"], second["y1"]) == (30, 200, 150, 400)


@pytest.mark.parametrize(
    "page, box",
    [
        (1, [10, 20, 700, 40]),  # past the page's right edge
        (2, [10, 20, 30, 500]),  # past the second page's bottom
        (1, [-5, 20, 30, 40]),  # negative
        (1, [30, 20, 10, 40]),  # inverted
        (3, [10, 20, 30, 40]),  # a page the document does not have
        (0, None),  # pages count from 1
        (1.5, None),
        ("1", None),
        (1, [10, 20, 30]),
        (1, [10, 20, 30, math.nan]),
        (1, "10,20,30,40"),
    ],
)
def test_a_bad_citation_is_dropped_and_counted_and_the_confidence_kept(page: object, box: object) -> None:
    checked = check("d", "s", [Cite("a", page, box, None, 0.5)], PAGES)
    assert (checked.invalid_citations, checked.invalid_confidences) == (1, 0)
    assert [(row["page"], row["x0"], row["confidence"]) for row in checked.rows] == [(None, None, 0.5)]


@pytest.mark.parametrize("confidence", [1.5, -0.1, "0.9", math.nan, math.inf, True, [0.5]])
def test_a_bad_confidence_is_dropped_and_counted_and_the_citation_kept(confidence: object) -> None:
    checked = check("d", "s", [Cite("a", 1, [1, 2, 3, 4], None, confidence)], PAGES)
    assert (checked.invalid_citations, checked.invalid_confidences) == (0, 1)
    assert [(row["page"], row["confidence"]) for row in checked.rows] == [(1, None)]


def test_without_page_sizes_a_box_in_points_is_kept_and_a_share_is_dropped() -> None:
    cites = [Cite("a", 9, [1, 2, 3, 4]), Cite("b", 1, [0.1, 0.1, 0.2, 0.2], unit="fraction")]
    checked = check("d", "s", cites, None)
    assert checked.invalid_citations == 1
    assert [(row["address"], row["page"]) for row in checked.rows] == [("a", 9)]


def test_a_cite_with_nothing_left_writes_no_row() -> None:
    assert check("d", "s", [Cite("a"), Cite("b", confidence=2)], PAGES).rows == []


def test_vendor_paths_and_polygons_in_the_shared_shape() -> None:
    assert address_of(["lines", 2, "sku"]) == "lines[2].sku"
    assert address_of(["invoice", "lines", "0", "total"]) == "invoice.lines[0].total"
    assert polygon_box([1, 2, 5, 2, 5, 8, 1, 8]) == (1, 2, 5, 8)
    assert polygon_box([{"x": 3, "y": 4}, {"x": 1, "y": 9}]) == (1, 4, 3, 9)
    assert polygon_box([[0, 0], [2, 3]]) == (0, 0, 2, 3)
    assert polygon_box([1, 2, "x", 4]) is None
