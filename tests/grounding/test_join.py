"""Cited addresses renumbered as the verdicts write them, the pairing read back from the verdicts."""

from __future__ import annotations

from oeb.grounding.join import pattern, renumber, value_at

PREDICTION = {"total": 5, "lines": [{"sku": "B2"}, {"sku": "A1"}, {"sku": "Z9"}]}


def test_a_swapped_pairing_and_an_unpaired_item_are_followed() -> None:
    verdicts = [
        ("total", "5"),
        ("lines[0].sku", '"A1"'),  # gold line 0 paired with predicted line 1
        ("lines[1].sku", '"B2"'),
        ("lines[p2].sku", '"Z9"'),
        ("note", "null"),
    ]
    cited = {a: value_at(PREDICTION, a) for a in ("total", "lines[0].sku", "lines[1].sku", "lines[2].sku", "x")}
    assert renumber(cited, verdicts) == {
        "total": "total",
        "lines[0].sku": "lines[1].sku",
        "lines[1].sku": "lines[0].sku",
        "lines[2].sku": "lines[p2].sku",
        "x": "x",
    }


def test_equal_values_go_to_their_own_indices_first() -> None:
    verdicts = [("rows[0].n", "1"), ("rows[1].n", "1")]
    assert renumber({"rows[1].n": 1, "rows[0].n": 1}, verdicts) == {"rows[1].n": "rows[1].n", "rows[0].n": "rows[0].n"}


def test_addresses_and_values() -> None:
    assert pattern("a[p2].b[0].c") == "a[].b[].c"
    assert value_at(PREDICTION, "lines[2].sku") == "Z9"
    assert value_at(PREDICTION, "lines[7].sku") is None
    assert value_at(PREDICTION, "total.x") is None
