"""`oeb systems NAME` says what the docs' system pages say: whether the system works in jobs (so a
crash never buys a submitted job twice) and the published price the plan estimates with."""

from __future__ import annotations

import pytest

from oeb import cli


@pytest.fixture(autouse=True)
def _only_this_verb(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cli, "VERBS", ("systems",))


def shown(name: str, capsys: pytest.CaptureFixture[str]) -> list[str]:
    assert cli.main(["systems", name]) == 0
    return capsys.readouterr().out.splitlines()


@pytest.mark.parametrize("name", ["datalab", "reducto", "extend", "llamaextract", "azure-cu"])
def test_a_job_vendor_says_a_crash_never_buys_its_jobs_twice(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert "kind: job vendor" in "\n".join(shown(name, capsys))


@pytest.mark.parametrize("name", ["mistral", "openai/gpt-5.6-sol", "mock"])
def test_a_synchronous_system_says_so(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert "kind: synchronous" in "\n".join(shown(name, capsys))


def test_the_published_price_is_the_one_the_plan_estimates_with(capsys: pytest.CaptureFixture[str]) -> None:
    lines = shown("datalab", capsys)
    price = next(line for line in lines if line.startswith("published price:"))
    assert price.startswith("published price: $6 per 1,000 pages (default options; source: https://")
    assert lines[-1] == "datalab needs an API key: export DATALAB_API_KEY=<key>"
    assert "published price: 4 credits per page" in "\n".join(shown("reducto", capsys))


def test_no_published_price_says_the_estimate_is_unknown(capsys: pytest.CaptureFixture[str]) -> None:
    assert "published price: none per page or document (the plan's estimate says unknown)" in shown("extend", capsys)


def test_a_system_whose_default_options_do_not_build_shows_its_class_price(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """replay has a required option (`source`), so its defaults cannot build an adapter."""
    lines = shown("replay", capsys)
    assert "published price: $0 per document (source: replay asks no one)" in lines
    assert lines[-1] == "replay needs no API key."
