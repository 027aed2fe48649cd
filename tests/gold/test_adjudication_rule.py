"""oeb's grading rule under accepted adjudications (oeb.gold.apply): nothing accepted is the reference
scorer exactly; each action changes the verdicts at its address and the document's metrics, nothing
else; and where pairing cannot move (no arrays), the result equals scoring against the changed gold."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import oeb
from oeb.gold.apply import adjudicate, parse_address
from oeb.gold.entries import Entry
from oeb.run.grade.results import verdict_json
from oeb.scoring import show_address

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "city": {"type": "string"},
        "total": {"type": "number"},
        "note": {"type": "string"},
        "items": {
            "type": "array",
            "items": {"type": "object", "properties": {"sku": {"type": "string"}, "qty": {"type": "number"}}},
        },
    },
}
GOLD = {
    "name": "Acme Ltd",
    "city": "Leeds",
    "total": 12.5,
    "items": [{"sku": "A-1", "qty": 2}, {"sku": "B-2", "qty": 3}],
}
PRED = {
    "name": "ACME Ltd.",
    "city": "Leads",
    "total": 12.5,
    "note": "paid",
    "items": [{"sku": "A-1", "qty": 2}, {"sku": "B-2", "qty": 5}],
}


def scored(pred: Any, gold: Any) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    result = oeb.score(pred, gold, SCHEMA, verdicts=True)
    return result, [dict(verdict_json(v)) for v in result.pop("verdicts")]


def addresses(details: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {show_address(tuple(map(tuple, d["address"]))): d for d in details}


def entry(action: str, address: str, status: str = "accepted", **extra: Any) -> Entry:
    decided = {"reason": "checked on the page", "by": "tester"} if status != "proposed" else {}
    return Entry(
        id=f"{action}-{address}", doc_id="d", address=address, action=action, status=status, **decided, **extra
    )


values = st.one_of(st.text(max_size=8), st.integers(-99, 99), st.floats(-100, 100, allow_nan=False), st.none())
documents = st.fixed_dictionaries(
    {},
    optional={
        "name": values,
        "city": values,
        "total": values,
        "note": values,
        "items": st.lists(st.fixed_dictionaries({}, optional={"sku": values, "qty": values}), max_size=3),
    },
)
actions = st.sampled_from(["accept", "replace", "remove", "add", "verify"])
address_choices = st.sampled_from(["name", "city", "total", "note", "items[0].sku", "items[1].qty"])


@st.composite
def unaccepted(draw: st.DrawFn) -> list[Entry]:
    """Entries of every action that change nothing: proposed or rejected."""
    found = []
    for number in range(draw(st.integers(0, 6))):
        action, status = draw(actions), draw(st.sampled_from(["proposed", "rejected"]))
        extra: dict[str, Any] = {}
        if action == "accept":
            extra["values"] = (draw(values.filter(lambda v: v is not None)),)
        elif action in ("replace", "add") or (action == "verify" and draw(st.booleans())):
            extra["value"] = draw(st.one_of(st.text(min_size=1, max_size=5), st.integers()))
        made = entry(action, draw(address_choices), status, **extra)
        found.append(Entry(**{**made.__dict__, "id": f"{made.id}-{number}"}))
    return found


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pred=documents, gold=documents, entries=unaccepted())
def test_nothing_accepted_is_the_reference_scorer(pred: Any, gold: Any, entries: list[Entry]) -> None:
    result, details = scored(pred, gold)
    done = adjudicate(result, details, entries)
    assert done.result is result and done.details is details
    assert done.marks == [None] * len(details) and done.applied == ()
    again, again_details = scored(pred, gold)
    assert (done.result, done.details) == (again, again_details)


def only_changed_at(before: list[dict[str, Any]], after: list[dict[str, Any]], address: str) -> None:
    old, new = addresses(before), addresses(after)
    assert {a: v for a, v in old.items() if a != address} == {a: v for a, v in new.items() if a != address}


def test_accept_counts_an_accepted_reading_as_matched() -> None:
    result, details = scored(PRED, GOLD)
    assert addresses(details)["city"]["result"] == "misread"
    done = adjudicate(result, details, [entry("accept", "city", values=("Leads",))])
    assert addresses(done.details)["city"]["result"] == "matched"
    assert addresses(done.details)["city"]["gold_raw"] == "Leeds"  # the gold is kept
    only_changed_at(details, done.details, "city")
    assert done.result["matched"] == result["matched"] + 1 and done.result["misread"] == result["misread"] - 1
    assert done.result["accuracy"] > result["accuracy"]
    assert (
        done.marks[[show_address(tuple(map(tuple, d["address"]))) for d in done.details].index("city")] == "accept-city"
    )
    other = adjudicate(result, details, [entry("accept", "city", values=("Lids",))])  # another reading: no change
    assert other.applied == () and other.result is result


def gold_with(address: str, value: Any) -> dict[str, Any]:
    fixed = copy.deepcopy(GOLD)
    if value is None:
        del fixed[address]
    else:
        fixed[address] = value
    return fixed


@pytest.mark.parametrize(
    ("action", "address", "value"),
    [
        ("replace", "city", "Leads"),  # now matched
        ("replace", "total", 99),  # now misread
        ("verify", "city", "Leads"),  # a correction acts as replace
        ("add", "note", "paid"),  # the prediction's fabricated value is matched
        ("add", "note", "unpaid"),  # ... or misread
    ],
)
def test_replace_add_and_correct_equal_scoring_the_changed_gold(action: str, address: str, value: Any) -> None:
    result, details = scored(PRED, GOLD)
    done = adjudicate(result, details, [entry(action, address, value=value)])
    expected, expected_details = scored(PRED, gold_with(address, value))
    only_changed_at(details, done.details, address)
    assert done.details == expected_details
    assert done.result == expected
    assert done.applied == (f"{action}-{address}",)


def test_add_where_the_prediction_says_nothing_is_unfound() -> None:
    pred = {key: value for key, value in PRED.items() if key != "note"}
    result, details = scored(pred, GOLD)
    done = adjudicate(result, details, [entry("add", "note", value="paid")])
    assert addresses(done.details)["note"]["result"] == "unfound"
    assert done.result == scored(pred, gold_with("note", "paid"))[0]


def test_remove_drops_the_value_from_grading() -> None:
    result, details = scored(PRED, GOLD)
    done = adjudicate(result, details, [entry("remove", "city")])
    assert "city" not in addresses(done.details)
    only_changed_at(details, done.details, "city")
    # the same as neither side stating it
    without = {key: value for key, value in PRED.items() if key != "city"}
    assert done.result == scored(without, gold_with("city", None))[0]


def test_inside_an_array_only_the_address_changes() -> None:
    result, details = scored(PRED, GOLD)
    done = adjudicate(result, details, [entry("replace", "items[1].qty", value=5)])
    only_changed_at(details, done.details, "items[1].qty")
    assert addresses(done.details)["items[1].qty"]["result"] == "matched"
    assert done.result["gold_rows"] == result["gold_rows"] and done.result["matched_rows"] == result["matched_rows"]


def test_verify_without_a_value_changes_nothing() -> None:
    result, details = scored(PRED, GOLD)
    assert adjudicate(result, details, [entry("verify", "city")]).result is result


def test_addresses_read_back() -> None:
    assert parse_address("line_items[2].amount") == [["k", "line_items"], ["i", 2], ["k", "amount"]]
    assert parse_address("a[0][1]") == [["k", "a"], ["i", 0], ["i", 1]]
    for bad in ("", ".a", "a..b", "a[x]"):
        with pytest.raises(ValueError):
            parse_address(bad)
    assert json.dumps(parse_address("x"))
