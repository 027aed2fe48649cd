"""Verdicts per schema field: fold keeps keys as printed, and the rows are the verdicts grouped."""

from __future__ import annotations

from collections import Counter

import pyarrow as pa  # type: ignore[import-untyped]
from hypothesis import given
from hypothesis import strategies as st

from oeb.report.fields import field_rows, fold
from oeb.scoring import RESULTS
from oeb.scoring.verdict import show_address

KEYS = st.sampled_from(["total", "line_items", "unit_price", "a.b", "notes[draft]", "q'uote\"", "x[]", "p1"])
STEPS = st.one_of(
    KEYS.map(lambda key: ("k", key)),
    st.integers(0, 12).map(lambda index: ("i", index)),
    st.integers(0, 12).map(lambda index: ("i", f"p{index}")),
)


def folded(address: tuple[tuple[str, object], ...]) -> str:
    """The path by construction: every index step printed as `[]`."""
    return show_address(tuple(("i", "") if kind == "i" else (kind, name) for kind, name in address))


def test_fold_drops_indices_and_keeps_tricky_keys() -> None:
    assert fold("line_items[3].unit_price") == "line_items[].unit_price"
    assert fold("invoices[0].lines[p12].sku") == "invoices[].lines[].sku"
    assert fold("notes[draft].a.b") == "notes[draft].a.b"
    assert fold("<root>") == "<root>"


@given(st.lists(STEPS, min_size=1, max_size=5).map(tuple))
def test_fold_of_a_printed_address_is_its_path(address: tuple[tuple[str, object], ...]) -> None:
    if all(not (kind == "k" and ("[" in str(name))) for kind, name in address):
        assert fold(show_address(address)) == folded(address)


VERDICT = st.tuples(
    st.sampled_from(["d1", "d2", "d3"]), st.lists(STEPS, min_size=1, max_size=3), st.sampled_from(RESULTS)
)


@given(st.lists(VERDICT, max_size=40), st.sampled_from([None, "s1", "s2"]))
def test_rows_are_the_verdicts_grouped_by_folded_path(
    verdicts: list[tuple[str, list[tuple[str, object]], str]], suite: str | None
) -> None:
    suites = {"d1": "s1", "d2": "s2", "d3": "s1"}
    table = pa.table(
        {
            "id": [doc for doc, _, _ in verdicts],
            "address": [show_address(tuple(address)) for _, address, _ in verdicts],
            "result": [result for _, _, result in verdicts],
        }
    )
    kept = [v for v in verdicts if suite is None or suites[v[0]] == suite]
    grouped: dict[str, Counter[str]] = {}
    docs: dict[str, set[str]] = {}
    for doc, address, result in kept:
        path = fold(show_address(tuple(address)))
        grouped.setdefault(path, Counter())[result] += 1
        docs.setdefault(path, set()).add(doc)
    rows = field_rows(table, suite=suite, suites=suites)
    assert {row.path: {k: n for k, n in row.counts.items() if n} for row in rows} == {
        path: dict(counter) for path, counter in grouped.items()
    }
    for row in rows:
        assert set(row.counts) == set(RESULTS) and row.total == sum(grouped[row.path].values())
        assert row.accuracy == row.counts["matched"] / row.total and row.documents == len(docs[row.path])
        assert set(row.failing) == {
            d for d, a, r in kept if r != "matched" and fold(show_address(tuple(a))) == row.path
        }
    keys = [(row.accuracy, row.counts["matched"] - row.total, row.path) for row in rows]
    assert keys == sorted(keys)


def test_failing_documents_most_errors_first() -> None:
    table = pa.table(
        {
            "id": ["a", "b", "b", "c"],
            "address": ["x[0]", "x[0]", "x[1]", "x[0]"],
            "result": ["misread", "unfound", "fabricated", "matched"],
        }
    )
    (row,) = field_rows(table)
    assert row.path == "x[]" and row.failing == ("b", "a") and row.documents == 3 and row.accuracy == 0.25
