"""SIGTERM (`ray job stop`, a pod's deletion, `timeout`, a cancelled CI job) stops `oeb run` as
Ctrl-C does: one line saying what was saved and how to continue, exit 143, every saved record kept,
and `oeb resume` asks only the rest. On Ray too, whose `ray.init` would make SIGTERM a bare exit.
"""

from __future__ import annotations

import signal
import time
from pathlib import Path

import pytest

from oeb.dataset import SAMPLE_DATASET
from oeb.errors import Terminated
from oeb.run.plan.config import init_tree, to_yaml
from reliability.conftest import OebProcess


def _terminated_then_resumed(tmp_path: Path, address: str | None) -> None:
    tree = init_tree("mock", SAMPLE_DATASET)
    tree["workers"] = 1
    tree["system"]["mock"] |= {"latency": 0.5}  # 6 s of answers: room to stop it after two
    tree["ray"] = {"address": address, "actors": 1, "rate_limit": {"requests_per_second": None, "max_in_flight": 0}}
    config = tmp_path / "mock.yaml"
    config.write_text(to_yaml(tree))
    out = tmp_path / "runs"
    run = OebProcess.start(["run", "--config", str(config), "--out", str(out), "-y"], tmp_path / "run.log")
    deadline = time.monotonic() + 120
    while len(list(out.glob("*/records/*.json"))) < 2 and run.running() and time.monotonic() < deadline:
        time.sleep(0.01)
    run.popen.send_signal(signal.SIGTERM)
    assert run.finish(60) == Terminated.exit_code, run.stderr()[-3000:]
    [folder] = [path for path in out.iterdir() if not path.name.startswith(".")]
    last = run.stderr().strip().splitlines()[-1]
    assert last.startswith("oeb run: terminated (SIGTERM): ") and last.endswith(f"continue with: oeb resume {folder}")
    assert "Traceback" not in run.stderr()
    kept = {path.name: path.read_bytes() for path in (folder / "records").glob("*.json")}
    assert 2 <= len(kept) < 12

    resume = OebProcess.start(["resume", str(folder)], tmp_path / "resume.log")
    assert resume.finish(120) == 0, resume.stderr()[-3000:]
    assert f"{len(kept)} of 12 rows were done in an earlier run" in resume.stderr()
    assert all((folder / "records" / name).read_bytes() == content for name, content in kept.items())
    assert len(list((folder / "records").glob("*.json"))) == 12


def test_sigterm_stops_a_run_as_ctrl_c_does(tmp_path) -> None:
    """A small run, without Ray."""
    _terminated_then_resumed(tmp_path, None)


@pytest.mark.ray
def test_sigterm_stops_a_run_on_ray_as_ctrl_c_does(tmp_path, ray_address) -> None:
    """Attached to the tests' Ray: ray.init's own SIGTERM handler is put back to oeb's."""
    _terminated_then_resumed(tmp_path, ray_address)
