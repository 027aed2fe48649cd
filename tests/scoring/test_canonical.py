"""Canonical keys: the published table, its clarifications and values checked against the reference."""

from __future__ import annotations

import re
import sys
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import strategies as st

from oeb import canonical_key, explain_value
from oeb.scoring import canonical
from tests.scoring.conftest import read_jsonl

sys.path.insert(0, str(Path(__file__).resolve().parent))

from budgets import property_test

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


# Values the fast routes of canonical keys take, and values beside them that they must leave to the
# full steps: words, codes, numbers written many ways (more than 7 fraction digits: rounded), dates.
_TEXT = st.text(alphabet="aZk09 ,-.$%()/'\"[]\u2212\u2013\u212a\u00e9\u2022\t", max_size=12)
_WORDS = st.text(alphabet="aZk09 ,-.\t", max_size=10)
_NUMBERS = st.one_of(
    st.from_regex(r"\(?\s*[-+]?\$?[0-9]{1,16}(,[0-9]{3})*\.[0-9]{0,12}\s*-?\)?", fullmatch=True),
    st.decimals(allow_nan=False, allow_infinity=False).map(str),
    st.floats(allow_nan=False, allow_infinity=False),
    st.tuples(st.integers(-(10**12), 10**12), st.integers(0, 10)).map(lambda f: f[0] / 10 ** f[1]),
    st.integers(),
)
_ISO_DATES = st.tuples(st.integers(0, 9999), st.integers(0, 99), st.integers(0, 99), st.sampled_from(["", " "])).map(
    lambda d: f"{d[3]}{d[0]:04d}-{d[1]:02d}-{d[2]:02d}{d[3]}"
)


@property_test(1500, value=st.one_of(_TEXT, _WORDS, _NUMBERS, _ISO_DATES))
def test_the_fast_routes_give_the_keys_of_the_full_steps(value: Any) -> None:
    """Plain words, short decimals and ISO dates skip steps that cannot change them: the key is the
    one the full steps give (the explanation runs them all; dates also without the ISO shortcut)."""
    key = canonical._route(value, None)
    assert key == explain_value(value).key
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(canonical, "_ISO_DATE", re.compile(r"(?!)"))
        assert canonical._route(value, None) == key


_FORMATS = canonical.DATE_FORMATS + canonical.DATETIME_FORMATS
_WRITTEN_DATES = st.tuples(
    st.datetimes(min_value=datetime(1000, 1, 1), max_value=datetime(9999, 12, 31)), st.sampled_from(_FORMATS)
).map(lambda d: d[0].strftime(d[1]))
_CODES = st.from_regex(r"[A-Za-z ]{0,6}[0-9]{1,6}[A-Za-z ,\-]{0,6}", fullmatch=True)


@property_test(1000, value=st.one_of(_WRITTEN_DATES, _CODES, _TEXT))
def test_text_with_one_number_is_no_date(value: str) -> None:
    """Dates written in every format the key reads (and names or codes with one number) get the
    key they get when every text with a digit tries the formats' pattern: reading only texts with two
    numbers skips none."""
    key = canonical_key(value)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(canonical, "_TWO_NUMBERS", re.compile(r"[0-9]"))
        patch.setattr(canonical, "_KEYS", {})
        assert canonical_key(value) == key


@pytest.mark.parametrize("fmt", _FORMATS)
def test_every_format_reads_two_numbers(fmt: str) -> None:
    written = datetime(2024, 3, 9, 7, 5, 2).strftime(fmt.replace("%z", "+0100"))
    assert canonical._TWO_NUMBERS.search(written)
    assert canonical_key(written).startswith(("#d", "#t")), written
