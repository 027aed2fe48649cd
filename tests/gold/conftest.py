"""Three graded mock runs over the sample with seeded gold errors, once per test session (goldruns.py)."""

from __future__ import annotations

import pytest
from goldruns import GoldRuns, build


@pytest.fixture(scope="session")
def gold_runs(tmp_path_factory: pytest.TempPathFactory) -> GoldRuns:
    return build(tmp_path_factory.mktemp("gold-runs"))
