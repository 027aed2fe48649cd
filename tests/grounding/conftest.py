"""Two runs of the mock on the bundled sample, asked with and without citations and confidences
(in-process, no Ray: 12 documents), shared by the grounding tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from run.conftest import mock_config

from oeb.run import engine
from oeb.run.cluster import session as cluster

DAMAGE = {"system.mock.misread": 0.08, "system.mock.unfound": 0.04, "system.mock.fabricated": 0.05}
CITED = {"system.mock.cite": True, "system.mock.cite_wrong": 0.25, "system.mock.confidence": "calibrated"}


def mock_run(out: Path, changes: dict[str, Any]) -> Path:
    plan = engine.plan_run(mock_config({**DAMAGE, **changes}), str(out))
    engine.execute(plan)
    return Path(plan.folder.url)


@pytest.fixture(scope="session")
def sample_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """`plain` and `cited` graded folders of the sample."""
    patch = pytest.MonkeyPatch()
    patch.setattr(cluster, "_ray_open", lambda: False)
    try:
        out = tmp_path_factory.mktemp("grounding-runs")
        return {"plain": mock_run(out / "plain", {}), "cited": mock_run(out / "cited", CITED)}
    finally:
        patch.undo()


@pytest.fixture(autouse=True)
def own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The located evidence is cached per test, never in the user's cache folder."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
