"""Finding systems: shipped names, model ids, and plugins installed under the `oeb.systems` group."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from oeb.systems import PluginError, UnknownSystem, adapter_class, get, names, registry

PLUGIN = """
from dataclasses import dataclass, field
from typing import ClassVar
from oeb.systems import Adapter, Call


@dataclass(frozen=True)
class Fake(Adapter):
    name: ClassVar[str] = "fake"
    description: ClassVar[str] = "a plugin system"
    keys: ClassVar[tuple[str, ...]] = ("FAKE_KEY",)
    mode: str = field(default="echo", metadata={"help": "what to do"})

    def extract(self, document, schema, deadline):
        return Call(raw={"extraction": {"mode": self.mode}})


NotAnAdapter = object
"""


@pytest.fixture
def installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A package `oeb-fake 0.0.1` installed on sys.path with its entry points."""
    (tmp_path / "oeb_fake.py").write_text(PLUGIN)
    info = tmp_path / "oeb_fake-0.0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: oeb-fake\nVersion: 0.0.1\n")
    (info / "entry_points.txt").write_text(
        "[oeb.systems]\nfake = oeb_fake:Fake\ndatalab = oeb_fake:Fake\nbroken = oeb_fake:NotAnAdapter\n"
        "missing = oeb_nowhere:Fake\nbad/name = oeb_fake:Fake\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    registry.plugins.cache_clear()
    yield tmp_path
    registry.plugins.cache_clear()
    sys.modules.pop("oeb_fake", None)


def test_shipped_systems_and_model_ids_are_found() -> None:
    assert {"azure-cu", "datalab", "extend", "llamaextract", "mistral", "reducto", "mock", "replay"} <= set(names())
    assert adapter_class("someone/any-model").name == "llm_single_shot"
    assert get("a/b/c").options()["model"] == "a/b/c"


def test_an_unknown_name_lists_the_systems_and_mentions_model_ids() -> None:
    with pytest.raises(UnknownSystem, match=r"'nosuch'.*datalab.*openai/gpt-5.6-sol"):
        get("nosuch")


def test_a_plugin_is_a_system_like_any_other(installed: Path) -> None:
    with pytest.warns(UserWarning) as warned:
        assert "fake" in names()
    skipped = " ".join(str(w.message) for w in warned)
    assert "'datalab'" in skipped and "'bad/name'" in skipped
    assert get("fake", {"mode": "x"}).options() == {"mode": "x"}
    assert adapter_class("datalab").__module__ == "oeb.systems.datalab"  # a plugin cannot take a shipped name


def test_a_plugin_record_names_its_package(installed: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from oeb.systems import Question, predict

    monkeypatch.setenv("FAKE_KEY", "k" * 12)
    with pytest.warns(UserWarning):
        record = predict(get("fake"), Question(Path("d.pdf"), {}))
    assert (record["package"], record["output"]) == ("oeb-fake 0.0.1", {"mode": "echo"})


def test_a_broken_plugin_breaks_only_its_own_use(installed: Path) -> None:
    with pytest.warns(UserWarning):
        with pytest.raises(PluginError, match="not an Adapter"):
            adapter_class("broken")
        with pytest.raises(PluginError, match="oeb-fake"):
            adapter_class("missing")
        assert get("mock").name == "mock"
