"""The sample's graded runs and `oeb view` over them, once per test session (viewruns.py)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from bigdoc import BigRuns
from viewruns import Runs, Served, build, serve

from oeb.view.api import open_view


@pytest.fixture(scope="session")
def sample_runs(tmp_path_factory: pytest.TempPathFactory) -> Runs:
    return build(tmp_path_factory.mktemp("view-runs"))


@pytest.fixture(scope="session")
def served(sample_runs: Runs) -> Iterator[Served]:
    """`oeb view A B --audit`, served."""
    yield from serve(open_view([sample_runs.a, sample_runs.b], audit=True))


@pytest.fixture(scope="session")
def big_runs(tmp_path_factory: pytest.TempPathFactory) -> BigRuns:
    """Two graded answers to a 20,000-value document (bigdoc.py)."""
    from bigdoc import build as build_big

    return build_big(tmp_path_factory.mktemp("big-doc"))


@pytest.fixture(scope="session")
def big_served(big_runs: BigRuns) -> Iterator[Served]:
    """`oeb view A B` over the big document's answers, served."""
    yield from serve(open_view([big_runs.a, big_runs.b]))
