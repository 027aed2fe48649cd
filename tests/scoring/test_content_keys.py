"""Rows are taken in the order of their content keys, as the reference takes them:
each row's (suffix as text, canonical key) pairs, sorted. oeb finds the order of a set of
suffixes once per table, and flattening shares one suffix tuple among a table's rows; these check
both against their definitions on every row, with keys Python tells apart only by type."""

from __future__ import annotations

import sys
from pathlib import Path

from hypothesis import strategies as st

import oeb
from oeb.scoring._flatten import SchemaView, flatten, states_nothing
from oeb.scoring._pairing import Aligner
from oeb.scoring.canonical import canonical_key

sys.path.insert(0, str(Path(__file__).resolve().parent))

from budgets import property_test

# Dict keys that are one key to Python but different texts (`1`, `True`, `1.0`), or the same text
# (`1`, `"1"`), around text keys that sort between them.
KEYS = st.sampled_from([1, True, 1.0, "1", "A", "b", "True", 2, "a.b"])
ROWS = st.lists(st.dictionaries(KEYS, st.sampled_from(["x", "y", 3]), min_size=1, max_size=5), min_size=1, max_size=8)


def _defined(row) -> list:
    return sorted((tuple((kind, str(name)) for kind, name in suffix), key) for suffix, _, key in row.leaves)


@property_test(300, rows=ROWS, nested=st.booleans())
def test_every_row_has_the_content_key_of_its_definition(rows: list[dict], nested: bool) -> None:
    document = {"t": [{"o": row} for row in rows] if nested else rows}
    tree, _, _ = flatten(document, SchemaView({"type": "object"}), states_nothing, canonical_key)
    aligner = Aligner(1, False)
    for row in tree.arrays[(("k", "t"),)].items.values():
        assert aligner.pricing.content_key(row)[0] == _defined(row)
        source = rows[row.index]
        assert [_typed(suffix)[-1] for suffix, _, _ in row.leaves] == [("k", type(k), k) for k in source]

    verdicts = oeb.score(document, document, {"type": "object"}, verdicts=True)["verdicts"]
    written = [_typed(v.address)[-1] for v in verdicts if v.address[1][1] == 0]
    assert sorted(written, key=str) == sorted((("k", type(k), k) for k in rows[0]), key=str)


def _typed(path: tuple) -> list:
    return [(kind, type(name), name) for kind, name in path]


TABLE_KEYS = ["b", "a", "c", "A", "b.c"]


@st.composite
def tables(draw: st.DrawFn) -> list[dict]:
    """Rows mostly of one shape (a table), some without a key, in another key order or with a nested array."""
    width = draw(st.integers(0, len(TABLE_KEYS)))
    values = st.sampled_from(["x", "y", "1", 1])
    rows = []
    for _ in range(draw(st.integers(1, 12))):
        row = {key: draw(values) for key in TABLE_KEYS[:width]}
        odd = draw(st.sampled_from(["none"] * 6 + ["drop", "reorder", "nested"]))
        if odd == "drop" and row:
            row.pop(draw(st.sampled_from(sorted(row))))
        elif odd == "reorder":
            row = dict(reversed(row.items()))
        elif odd == "nested":
            row["n"] = [{"v": draw(values)}]
        rows.append(row)
    return rows


@property_test(300, rows=tables())
def test_rows_are_put_in_content_order(rows: list[dict]) -> None:
    tree, _, _ = flatten({"t": rows}, SchemaView({"type": "object"}), states_nothing, canonical_key)
    table = list(tree.arrays[(("k", "t"),)].items.values()) if tree.arrays else []
    aligner = Aligner(1, False)
    assert aligner.pricing.in_content_order(table) == sorted(table, key=aligner.pricing.content_key)
