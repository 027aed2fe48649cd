"""Five mock runs over a generated gold-less dataset, built once per test session (drafting.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from gold_corpus import Drafting, build

from oeb.cli import main


@pytest.fixture(scope="session")
def drafting(tmp_path_factory: pytest.TempPathFactory) -> Drafting:
    return build(tmp_path_factory.mktemp("drafting"))


@pytest.fixture(scope="session")
def drafted(drafting: Drafting) -> Path:
    """The gold drafted from the five runs (default K: 3 of 5)."""
    out = drafting.root / "drafted"
    assert main(["gold", "draft", *drafting.runs.values(), "--out", str(out)]) == 0
    return out
