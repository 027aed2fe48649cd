"""Ctrl-C in the middle of a run keeps every saved record; `resume` asks only the rest.

The interrupt is a real one: a thread raises SIGINT's KeyboardInterrupt in the main thread once a
few records exist, wherever the driver happens to be.
"""

from __future__ import annotations

import _thread
import threading
import time
from pathlib import Path

import pytest

from oeb.errors import Interrupted
from oeb.run import engine
from run.conftest import mock_config

pytestmark = pytest.mark.ray


def _interrupt_after(records: Path, count: int) -> threading.Thread:
    def watch() -> None:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if records.is_dir() and len(list(records.glob("*.json"))) >= count:
                _thread.interrupt_main()
                return
            time.sleep(0.01)

    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    return thread


def test_an_interrupted_run_resumes_without_asking_anything_twice(ray_cluster, tmp_path) -> None:
    config = mock_config({"system.mock.latency": 0.3, "workers": 2})
    plan = engine.plan_run(config, str(tmp_path))
    records = Path(plan.folder.url) / "records"
    watcher = _interrupt_after(records, 3)
    with pytest.raises(Interrupted) as stopped:
        engine.execute(plan)
    watcher.join()
    assert stopped.value.exit_code == 130 and f"oeb resume {plan.folder.url}" in str(stopped.value)
    kept = {path.name: path.read_bytes() for path in records.glob("*.json")}
    assert 3 <= len(kept) < len(plan.rows)

    resumed = engine.plan_resume(plan.folder.url)
    assert {row.doc_id for row in resumed.to_ask} == {row.doc_id for row in plan.rows} - {
        name.removesuffix(".json") for name in kept
    }
    result = engine.execute(resumed)
    assert all((records / name).read_bytes() == content for name, content in kept.items())  # not asked again
    assert len(list(records.glob("*.json"))) == len(plan.rows)
    assert result.report["scorers"]["field_matching"]["rows"] == len(plan.rows)
    assert engine.plan_resume(plan.folder.url).to_ask == ()
