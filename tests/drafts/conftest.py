"""Five mock runs over a generated gold-less dataset, built once per test session (drafting.py)."""

from __future__ import annotations

import pytest
from drafting import Drafting, build


@pytest.fixture(scope="session")
def drafting(tmp_path_factory: pytest.TempPathFactory) -> Drafting:
    return build(tmp_path_factory.mktemp("drafting"))
