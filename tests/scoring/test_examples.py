"""Every published example of the reference's scorer agrees exactly with the reference's output."""

from __future__ import annotations

import json
from typing import Any

import pytest

import oeb
from oeb.cli._output import result_json
from tests.scoring.conftest import read_jsonl

EXAMPLES = read_jsonl("scoring_examples.jsonl")

# Cases where the reference raises only because of a limitation and oeb returns a result
# (documented in the README): the result oeb gives instead.
OEB_DOES_BETTER: dict[str, dict[str, Any]] = {
    # A non-recursive $ref 7 object levels deep: the same result as the 6-level case.
    "norm_ref_deep_7_fails": {"total": 1, "matched": 1, "accuracy": 1.0},
}


def options(case: dict[str, Any]) -> dict[str, Any]:
    found = dict(case.get("options") or {})
    if found.get("absent") == "never":
        found["absent"] = lambda value: False
    return found


def as_example(result: dict[str, Any]) -> dict[str, Any]:
    """The result in the examples file's form: each verdict a list, each address a list of pairs."""
    converted = result_json(result)
    converted["verdicts"] = [
        [v["address"], v["gold_raw"], v["pred_raw"], v["gold_canon"], v["pred_canon"], v["result"]]
        for v in converted["verdicts"]
    ]
    return json.loads(json.dumps(converted))


def test_the_examples_file_is_complete() -> None:
    assert len(EXAMPLES) == 118


@pytest.mark.parametrize("case", EXAMPLES, ids=[c["name"] for c in EXAMPLES])
def test_example_agrees_with_the_reference(case: dict[str, Any]) -> None:
    expected = case["expected"]
    if case["name"] in OEB_DOES_BETTER:
        result = oeb.score(case["pred"], case["gold"], case["schema"], verdicts=True, **options(case))
        assert OEB_DOES_BETTER[case["name"]].items() <= result.items()
        return
    if "raises" in expected:
        with pytest.raises(Exception) as raised:
            oeb.score(case["pred"], case["gold"], case["schema"], verdicts=True, **options(case))
        assert expected["raises"] in {cls.__name__ for cls in type(raised.value).__mro__}
        assert isinstance(raised.value, oeb.errors.OebError), "a user error, reported on one line"
        return
    result = oeb.score(case["pred"], case["gold"], case["schema"], verdicts=True, **options(case))
    got = as_example(result)
    assert list(got) == list(expected), "keys in the documented order"
    for key in expected:
        if key != "verdicts":
            assert got[key] == expected[key], key
    assert got["verdicts"] == expected["verdicts"]


def test_without_verdicts_the_same_numbers() -> None:
    for case in EXAMPLES:
        if "raises" in case["expected"] or case["name"] in OEB_DOES_BETTER:
            continue
        result = oeb.score(case["pred"], case["gold"], case["schema"], **options(case))
        assert "verdicts" not in result
        assert result == {k: v for k, v in case["expected"].items() if k != "verdicts"}, case["name"]


def test_properties_that_are_not_an_object_read_as_none() -> None:
    """The reference crashes with AttributeError on `"properties": 3`; oeb reads it as no properties."""
    for odd in (3, "x", True, ["a"]):
        schema = {"type": "object", "properties": odd}
        expected = oeb.score({"a": 1}, {"a": 1}, {"type": "object", "properties": {}}, verdicts=True)
        assert oeb.score({"a": 1}, {"a": 1}, schema, verdicts=True) == expected


def test_order_matters_that_is_not_a_list_is_refused_on_one_line() -> None:
    for odd in (0, 1, None, 2.5):
        with pytest.raises(oeb.errors.ScoreArgumentError):
            oeb.score({}, {}, {"type": "object"}, order_matters=odd)


@pytest.mark.parametrize(
    ("pred", "gold"),
    [
        ({"": {"a": [1]}, "a": [2]}, {"x": 1}),  # in the prediction only
        ({"x": 1}, {"": {"a": [1]}, "a": [2]}),  # in the gold only
        ({"": {"t": {"a": [1]}}, "t": {"a": [2]}}, {}),  # deeper
    ],
)
def test_two_arrays_named_alike_through_an_empty_key_are_refused(pred: dict, gold: dict) -> None:
    """As the reference does (checked against it), with or without `order_matters`."""
    for order_matters in ((), ["a"], True):
        with pytest.raises(oeb.errors.ScoreOptionError, match="both named"):
            oeb.score(pred, gold, {"type": "object"}, order_matters=order_matters)


def test_an_empty_key_without_a_clash_is_scored() -> None:
    result = oeb.score({"": {"b": [1]}, "a": [2]}, {"a": [2]}, {"type": "object"}, order_matters=["a"])
    assert result["matched"] == 1
    with pytest.raises(oeb.errors.ScoreOptionError, match="not an array here"):
        oeb.score({"t": [{"a": 1}]}, {"x": 1}, {"type": "object"}, order_matters=["a"])
