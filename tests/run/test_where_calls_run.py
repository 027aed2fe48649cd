"""Without Ray (a small job, run in this process) and on Ray, the same driver loop and the same actors
write the same run folder: the same predictions and scores byte for byte, the same records but for
their times."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from oeb import _json
from oeb.dataset import SAMPLE_DATASET
from oeb.run import engine
from oeb.run.plan.config import init_tree, load_config, to_yaml

pytestmark = pytest.mark.ray

TIMES = ("captured_at",)


def _folder(out: Path) -> Path:
    [folder] = [path for path in out.iterdir() if not path.name.startswith(".")]
    return folder


def _files(folder: Path, kind: str) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in sorted((folder / kind).glob("*.json*"))}


def _timeless(record: bytes) -> dict[str, Any]:
    value: dict[str, Any] = _json.loads(record.decode())
    for key in TIMES:
        value.pop(key, None)
    value["cost"].pop("wall_s", None)
    return value


def test_a_run_without_ray_writes_what_a_run_on_ray_writes(ray_cluster: None, tmp_path: Path) -> None:
    tree = init_tree("mock", SAMPLE_DATASET)
    tree["system"]["mock"] |= {"misread": 0.2, "malformed": 0.2, "usd": 0.01}
    tree["ray"] = {"address": None, "actors": 2, "rate_limit": {"requests_per_second": None, "max_in_flight": 3}}
    config = tmp_path / "mock.yaml"
    config.write_text(to_yaml(tree))

    local = tmp_path / "local"
    command = [sys.executable, "-m", "oeb", "run", "--config", str(config), "--out", str(local), "-y"]
    done = subprocess.run(command, capture_output=True, text=True, env={**os.environ, "OEB_RAY_ADDRESS": ""})
    assert done.returncode == 0, done.stderr[-2000:]
    assert "without Ray" in done.stderr

    on_ray = tmp_path / "ray"
    engine.execute(engine.plan_run(load_config(str(config)), str(on_ray)))

    a, b = _folder(local), _folder(on_ray)
    assert _files(a, "predictions") == _files(b, "predictions")
    records_a, records_b = _files(a, "records"), _files(b, "records")
    assert records_a.keys() == records_b.keys()
    assert {k: _timeless(v) for k, v in records_a.items()} == {k: _timeless(v) for k, v in records_b.items()}
    assert (a / "field_matching" / "scores.jsonl").read_bytes() == (b / "field_matching" / "scores.jsonl").read_bytes()


def test_a_command_run_from_a_ray_jobs_package_grades_on_tasks_of_its_own(monkeypatch: pytest.MonkeyPatch) -> None:
    """Ray deletes a job's package (working_dir) with the job: no warm worker may run its code."""
    import oeb
    from oeb.run.cluster import session as cluster

    monkeypatch.delenv("OEB_WARM_MINUTES", raising=False)
    monkeypatch.setattr(cluster, "_ray_open", lambda: False)  # this module's Ray tests may have opened one
    assert cluster.choose("auto", documents=5).warm
    job = "/tmp/ray/session_1/runtime_resources/working_dir_files/_ray_pkg_0123abcd/oeb/__init__.py"
    monkeypatch.setattr(oeb, "__file__", job)
    where = cluster.choose("auto", documents=5)
    assert where.kind == "attached" and not where.warm
