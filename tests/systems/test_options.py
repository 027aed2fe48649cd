"""Options: checked when a system is built, so a typo fails before any paid call."""

from __future__ import annotations

import pytest

from oeb.systems import OptionError, get


def test_an_unknown_option_suggests_the_close_one_and_lists_them() -> None:
    with pytest.raises(OptionError, match=r"'mdoe' \(did you mean 'mode'\?\).*mode, base_url, poll_interval"):
        get("datalab", {"mdoe": "accurate"})


@pytest.mark.parametrize(
    ("system", "options"),
    [
        ("datalab", {"mode": 5}),
        ("datalab", {"poll_interval": True}),  # a bool is not a number
        ("datalab", {"poll_interval": "5"}),
        ("test/model", {"attempts": 2.5}),
        ("test/model", {"max_output_tokens": "many"}),
        ("mock", {"misread": 1.5}),
        ("reducto", {"poll_interval": -1}),
        ("datalab", {"mode": float("nan")}),
    ],
)
def test_wrong_values_are_refused_naming_the_option(system: str, options: dict) -> None:
    with pytest.raises(OptionError, match=next(iter(options))):
        get(system, options)


def test_ints_become_floats_for_float_options_so_runs_compare_equal() -> None:
    assert get("datalab", {"poll_interval": 0}).options()["poll_interval"] == 0.0
    assert isinstance(get("datalab", {"poll_interval": 0}).options()["poll_interval"], float)
    assert get("reducto", {"poll_interval": 0.5}).options()["poll_interval"] == 0.5  # oeb allows fractions


def test_a_required_option_must_be_given() -> None:
    with pytest.raises(OptionError, match="source"):
        get("replay", {})


def test_options_are_plain_json_in_declaration_order() -> None:
    assert get("azure-cu").options() == {
        "endpoint": "",
        "completion_model": "gpt-4.1-mini",
        "api_version": "2025-05-01-preview",
        "poll_interval": 3.0,
        "citations": False,
    }
    assert list(get("reducto").options()) == [
        "deep_extract_model",
        "system_prompt",
        "agentic_table_mode",
        "poll_interval",
        "citations",
        "base_url",
    ]
