"""The traits dataset (traitdata.py) written once per session; each test gets a cache folder of its own."""

from __future__ import annotations

from pathlib import Path

import pytest
from traitdata import documents, write_dataset

REGION = {"de_1": "emea", "de_12": "emea", "fr_5": "emea", "en_2": "amer"}


@pytest.fixture(scope="session")
def trait_docs() -> dict[str, tuple[bytes, dict[str, str]]]:
    return documents()


@pytest.fixture(scope="session")
def trait_dataset(tmp_path_factory: pytest.TempPathFactory, trait_docs) -> str:
    return write_dataset(tmp_path_factory.mktemp("traits") / "data", trait_docs, REGION)


@pytest.fixture(autouse=True)
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The traits cache under this test's folder (never the user's)."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return tmp_path / "cache" / "oeb" / "traits"
