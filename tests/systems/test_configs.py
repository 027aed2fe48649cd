"""The shipped configs: one complete, valid config per published row."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from oeb.systems import get

CONFIGS = Path(__file__).parents[2] / "configs"
PUBLISHED = {
    "datalab-accurate": ("datalab", {"mode": "accurate"}),
    "datalab-balanced": ("datalab", {"mode": "balanced"}),
    "reducto": ("reducto", {"deep_extract_model": "v2", "agentic_table_mode": "max"}),
    "claude-opus-5": ("anthropic/claude-opus-5", {"max_output_tokens": 128000}),
    "extend": ("extend", {"array_strategy": "large_array_max_context", "api_version": "2026-02-09"}),
    "llamaextract": ("llamaextract", {"tier": "agentic_plus"}),
    "gemini-3.7-flash": ("google/gemini-3.7-flash", {"max_output_tokens": 65536}),
    "gpt-5.6-sol": ("openai/gpt-5.6-sol", {"max_output_tokens": 128000}),
    "mistral": ("mistral", {}),
    "azure-cu": ("azure-cu", {"completion_model": "gpt-4.1-mini", "api_version": "2025-05-01-preview"}),
}


def test_there_is_one_config_per_published_row() -> None:
    assert sorted(p.stem for p in CONFIGS.glob("*.yaml")) == sorted(PUBLISHED)


@pytest.mark.parametrize("name", sorted(PUBLISHED))
def test_a_config_is_complete_and_builds_its_system(name: str) -> None:
    config = yaml.safe_load((CONFIGS / f"{name}.yaml").read_text())
    keys = ["dataset", "manifest", "scorers", "rows", "timeout", "workers", "budget", "system", "ray"]
    assert list(config) == keys
    assert config["rows"] == {"sample": 0, "limit": 0, "only": None}
    assert isinstance(config["timeout"], float) and config["scorers"] == {"field_matching": {}}
    system, expected = PUBLISHED[name]
    [(written, options)] = config["system"].items()
    assert written == system
    adapter = get(system, options)
    assert adapter.options() == options  # every option written, at the value a run records
    assert expected.items() <= options.items()
    ray = config["ray"]
    assert ray["actors"] == ray["rate_limit"]["max_in_flight"] == adapter.workers
    assert ray["rate_limit"]["requests_per_second"] > 0
