"""Properties that hold for every input, checked on generated documents (hypothesis)."""

from __future__ import annotations

import random
import sys
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

import oeb
from oeb.errors import OebError

sys.path.insert(0, str(Path(__file__).resolve().parent))

from budgets import property_test

TRICKY_TEXT = [
    "Acme",
    "ACME, Inc.",
    "1,000",
    "$12.50",
    "12.5",
    "(98.2)",
    "2024-03-31",
    "03/31/2024",
    "31.03.2024",
    "-",
    "—",
    "n/a",
    "N/A",
    "1/2",
    "12",
    "0075",
    "• item",
    "Y. Bengio [1]",
    "Müller",
    "Straße",
    "true",
    "",
    " ",
    "\u200b",
    "2024-03-31T09:30:00Z",
]
KEYS = st.sampled_from(["a", "b", "c", "name", "value", "status", "confidence", "x.y", "rows", "tags"])
SCALARS = st.one_of(
    st.sampled_from(TRICKY_TEXT),
    st.text(max_size=8),
    st.integers(min_value=-(10**20), max_value=10**20),
    st.floats(allow_nan=False, allow_infinity=False),
    st.booleans(),
    st.none(),
)


def json_values(leaves: st.SearchStrategy[Any] = SCALARS) -> st.SearchStrategy[Any]:
    return st.recursive(
        leaves,
        lambda children: st.one_of(
            st.lists(children, max_size=5),
            st.dictionaries(KEYS, children, max_size=5),
        ),
        max_leaves=30,
    )


DOCUMENTS = st.dictionaries(KEYS, json_values(), max_size=6)
SCHEMAS = st.one_of(
    st.just({"type": "object"}),
    st.dictionaries(
        st.sampled_from(["type", "properties", "items", "additionalProperties", "anyOf", "$defs", "required"]),
        json_values(st.one_of(SCALARS, st.sampled_from(["object", "array", "null", "string"]))),
        min_size=1,
        max_size=4,
    ),
)
SCHEMA = {"type": "object"}
COUNTS = ("matched", "misread", "unfound", "fabricated", "invented_item", "invented_field")


def shuffled_rows(value: Any, rng: random.Random) -> Any:
    """The same document with the elements of every array in another order."""
    if isinstance(value, dict):
        return {k: shuffled_rows(v, rng) for k, v in value.items()}
    if isinstance(value, list):
        items = [shuffled_rows(v, rng) for v in value]
        rng.shuffle(items)
        return items
    return value


def numbers(result: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in result.items() if k not in ("verdicts", "skipped_open_maps")}


@property_test(150, pred=DOCUMENTS, gold=DOCUMENTS, seed=st.integers(0, 2**32))
def test_row_order_never_changes_a_score(pred: dict, gold: dict, seed: int) -> None:
    rng = random.Random(seed)
    before = oeb.score(pred, gold, SCHEMA)
    after = oeb.score(shuffled_rows(pred, rng), shuffled_rows(gold, rng), SCHEMA)
    assert numbers(after) == numbers(before)


def without_sidecar_keys(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: without_sidecar_keys(v) for k, v in value.items() if not k.endswith(("_meta", "_citations"))}
    if isinstance(value, list):
        return [without_sidecar_keys(v) for v in value]
    return value


@property_test(150, gold=DOCUMENTS)
def test_a_prediction_equal_to_its_gold_scores_one(gold: dict) -> None:
    gold = without_sidecar_keys(gold)
    result = oeb.score(gold, gold, SCHEMA)
    if result["total"]:
        assert result["accuracy"] == result["precision"] == result["recall"] == 1.0
        assert result["matched"] == result["total"]
    else:
        assert result["accuracy"] == 0.0


@property_test(150, pred=DOCUMENTS, gold=DOCUMENTS, schema=SCHEMAS)
def test_verdict_counts_sum_to_total(pred: dict, gold: dict, schema: dict) -> None:
    try:
        result = oeb.score(pred, gold, schema, verdicts=True)
    except OebError:
        return
    assert sum(result[k] for k in COUNTS) == result["total"]
    graded = [v for v in result["verdicts"] if v.result != "skipped_open_map"]
    assert len(graded) == result["total"]
    assert {k: sum(v.result == k for v in graded) for k in COUNTS} == {k: result[k] for k in COUNTS}
    assert result["asserted"] == sum(v.pred_canon is not None for v in graded)


@property_test(150, pred=DOCUMENTS, gold=DOCUMENTS, schema=SCHEMAS)
def test_scoring_is_deterministic(pred: dict, gold: dict, schema: dict) -> None:
    try:
        first = oeb.score(pred, gold, schema, verdicts=True)
    except OebError as error:
        second_error = None
        try:
            oeb.score(pred, gold, schema, verdicts=True)
        except OebError as again:
            second_error = again
        assert str(second_error) == str(error)
        return
    assert oeb.score(pred, gold, schema, verdicts=True) == first


@property_test(150, pred=json_values(), gold=json_values(), schema=json_values())
def test_no_json_input_crashes_the_scorer(pred: Any, gold: Any, schema: Any) -> None:
    """Anything JSON either scores or raises an `OebError` with a one-line message."""
    try:
        result = oeb.score(pred, gold, schema)
    except OebError as error:
        assert "\n" not in str(error)
        return
    assert 0.0 <= result["accuracy"] <= 1.0


def test_a_document_nested_too_deeply_is_refused_on_one_line() -> None:
    deep: Any = "x"
    for _ in range(5000):
        deep = [deep]
    try:
        oeb.score({"a": deep}, {"a": "x"}, SCHEMA)
    except OebError as error:
        assert isinstance(error, ValueError)
        assert "nests too deeply" in str(error)
    else:
        raise AssertionError("a 5,000-level document should be refused")


class _Mapping(dict):
    pass


class _Sequence(list):
    pass


def as_subclasses(value: Any) -> Any:
    """The same document built from dict and list subclasses, as Python callers may pass it."""
    if isinstance(value, dict):
        return _Mapping((k, as_subclasses(v)) for k, v in value.items())
    if isinstance(value, list):
        return _Sequence(as_subclasses(v) for v in value)
    return value


@property_test(150, pred=DOCUMENTS, gold=DOCUMENTS)
def test_documents_of_dict_and_list_subclasses_score_as_plain_ones(pred: dict, gold: dict) -> None:
    expected = oeb.score(pred, gold, SCHEMA, verdicts=True)
    assert oeb.score(as_subclasses(pred), as_subclasses(gold), SCHEMA, verdicts=True) == expected
    envelope = {"rows": [{"a": 1, "b": _Mapping(value="x", confidence=0.5)}]}
    assert oeb.score(as_subclasses(envelope), {"rows": [{"a": 1, "b": "x"}]}, SCHEMA)["matched"] == 2
