"""Canonical keys: the published table, its clarifications and values checked against the reference."""

from __future__ import annotations

from typing import Any

import pytest

from oeb import canonical_key, explain_value
from oeb.scoring import canonical
from tests.scoring.conftest import read_jsonl

TABLE = read_jsonl("canonical_keys.jsonl")


@pytest.mark.parametrize("row", TABLE, ids=[repr(r["value"])[:40] for r in TABLE])
def test_key_and_route(row: dict[str, Any]) -> None:
    assert canonical_key(row["value"]) == row["key"]
    explanation = explain_value(row["value"])
    assert explanation.key == row["key"]
    if "route" in row:
        assert explanation.route == row["route"]


def test_explanation_lists_only_the_steps_that_changed_the_value() -> None:
    explanation = explain_value("  P.O. BOX 125 ")
    assert explanation.key == "pobox125"
    assert [s.rule.split(":")[0] for s in explanation.steps] == ["case", "punctuation"]
    assert explanation.steps[0].before == "  P.O. BOX 125 "
    assert explanation.steps[-1].after == "pobox125"


def test_explanation_names_the_date_format() -> None:
    explanation = explain_value("31.03.2024")
    assert explanation.route == "date"
    assert "%d.%m.%Y" in explanation.steps[0].rule


@pytest.mark.parametrize(
    ("value", "key"),
    [(None, "#NULL"), ("", "#EMPTY_STRING"), ("\u00a0 ", "#EMPTY_STRING"), ([], "#EMPTY_LIST"), ({}, "#EMPTY_OBJECT")],
)
def test_absent_markers(value: Any, key: str) -> None:
    assert canonical_key(value) == key


def test_true_one_and_one_point_zero_are_told_apart() -> None:
    assert [canonical_key(v) for v in (True, 1, 1.0)] == ["true", "1", "1"]
    assert [canonical_key(v) for v in (1.0, 1, True)] == ["1", "1", "true"]  # whichever is seen first


def test_the_cache_is_bounded_and_keys_stay_right(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(canonical, "MAX_CACHED_KEYS", 3)
    monkeypatch.setattr(canonical, "_KEYS", {})
    values = ["03/31/2024", "$1,000.00", "Acme", "x", 2.50, 7, "ACME", "03/31/2024", 2.5]
    keys = [canonical_key(v) for v in values * 2]
    assert keys == [explain_value(v).key for v in values * 2]
    assert all(len(table) <= 3 for table in canonical._KEYS.values())
