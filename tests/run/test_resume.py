"""Ctrl-C in the middle of a run keeps every saved record; `resume` asks only the rest.

The interrupt is a real one: a thread raises SIGINT's KeyboardInterrupt in the main thread once a
few records exist, wherever the driver happens to be, and again every few seconds until the run
stops, as a user presses Ctrl-C again (Ray defers a SIGINT that comes while it submits a call, and
drops it if that call fails).
"""

from __future__ import annotations

import _thread
import signal
import threading
import time
from pathlib import Path

import pytest

from oeb.errors import Interrupted
from oeb.run import engine
from run.conftest import mock_config

pytestmark = pytest.mark.ray


AGAIN_S = 4.0
"""Seconds before Ctrl-C is pressed again: far longer than a run takes to stop once interrupted."""


def _interrupt_after(records: Path, count: int, stopped: threading.Event) -> threading.Thread:
    def watch() -> None:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not stopped.is_set():
            if records.is_dir() and len(list(records.glob("*.json"))) >= count:
                _thread.interrupt_main()
                stopped.wait(AGAIN_S)
            else:
                time.sleep(0.01)

    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    return thread


def test_an_interrupted_run_resumes_without_asking_anything_twice(ray_cluster, tmp_path) -> None:
    config = mock_config({"system.mock.latency": 1.0, "workers": 1})  # 12 s of answers: room to interrupt
    plan = engine.plan_run(config, str(tmp_path))
    records = Path(plan.folder.url) / "records"
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)  # Python's own, whatever ran before
    ended = threading.Event()
    watcher = _interrupt_after(records, 3, ended)
    try:
        with pytest.raises(Interrupted) as stopped:
            engine.execute(plan)
    finally:
        ended.set()
        watcher.join()
        signal.signal(signal.SIGINT, previous)
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
