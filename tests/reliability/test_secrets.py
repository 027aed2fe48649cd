"""API keys are never written anywhere: every registered system runs with a unique sentinel in each
of its key variables, through `oeb run` on Ray and through `oeb predict`, on an answer, on a refusal
whose body echoes the request headers, and on a 401 that stops the system; then every run folder
(every file, parquet decoded too), the captured output and logs, and the Ray session's own files on
disk are searched for the sentinels.

The vendors are the fake servers of `tests/systems/vendors.py`; the sentinel must reach them (it is
in the requests they record), so a key that never left the process cannot pass for one kept secret.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import pyarrow.parquet as pq
import pytest
import yaml
from cluster.conftest import _flags, _start, _stop, _sweep
from fixtures.services import S3_BUCKET
from systems.fake_vendor import FakeVendor, Reply, Request
from systems.vendors import SCHEMA, VENDORS

from oeb.cli import main
from oeb.run.plan.config import init_tree, to_yaml
from oeb.systems import Adapter, Call, Deadline, Question, ReadCrashed, adapter_class, names, predict
from reliability.conftest import vendor_dataset

NO_RETRY = {"x-should-retry": "false"}  # the OpenAI SDK would otherwise retry on its own
OFFLINE = ("mock", "replay")
MODEL = next(v for v in VENDORS if "/" in v.system)


def _variables() -> list[str]:
    """Every key variable of every system, stand-ins included."""
    found = set()
    for name in [*names(), MODEL.system]:
        cls = adapter_class(name)
        found.update(cls.keys, (cls.stand_ins.get(key) for key in cls.keys))
    return sorted(v for v in found if v)


@pytest.fixture
def sentinels(monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """A fresh, unique value in every key variable of every system."""
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    values = {variable: f"oeb-sentinel-{variable.lower()}-{secrets.token_hex(8)}" for variable in _variables()}
    for variable, value in values.items():
        monkeypatch.setenv(variable, value)
    return values


def test_every_registered_system_is_covered() -> None:
    assert {vendor.system for vendor in VENDORS if "/" not in vendor.system} | set(OFFLINE) == set(names())


def _echo(status: int) -> Any:
    """A vendor error that quotes the request headers back, in its message and its body."""

    def reply(request: Request) -> Reply:
        body = {"error": {"message": f"rejected; you sent {json.dumps(request.headers)}"}, "headers": request.headers}
        return Reply(status, body, NO_RETRY)

    return reply


def _config(tmp_path: Path, system: str, options: dict[str, Any], dataset: Path) -> Path:
    tree = init_tree("mock", str(dataset))
    tree["system"] = {system: options}
    tree["timeout"] = 20.0
    tree["workers"] = 1
    tree["ray"] = {"address": None, "actors": 1, "rate_limit": {"requests_per_second": None, "max_in_flight": 0}}
    path = tmp_path / f"{system.replace('/', '_')}.yaml"
    path.write_text(to_yaml(tree))
    return path


def _leaks(values: dict[str, str], texts: dict[str, bytes]) -> list[str]:
    """`<variable> in <where>` for every sentinel value found in a text."""
    found = {
        (variable, where)
        for where, text in texts.items()
        for variable, value in values.items()
        if value.encode() in text
    }
    return sorted(f"{variable} in {where}" for variable, where in found)


def _files(root: Path) -> dict[str, bytes]:
    """Every file under `root` as bytes; a parquet file also as its decoded rows (pages may be compressed)."""
    found = {}
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        found[str(path)] = path.read_bytes()
        if path.suffix == ".parquet":
            found[f"{path} (rows)"] = json.dumps(pq.read_table(path).to_pylist(), default=str).encode()
    return found


def _ray_session_files() -> dict[str, bytes]:
    """Ray's own files of this session on disk: logs of the runtime-env agent, raylet, GCS, workers."""
    import ray  # here: importing Ray takes a second or two of every worker's collection

    session = Path(ray._private.worker._global_node.get_session_dir_path())
    return {k: v for k, v in _files(session).items() if "/sockets/" not in k}


def _scan(
    values: dict[str, str], tmp_path: Path, captured: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> list[str]:
    out, err = captured.readouterr()
    texts = {**_files(tmp_path), "stdout": out.encode(), "stderr": err.encode(), "logs": caplog.text.encode()}
    return _leaks(values, texts | _ray_session_files())


def _records(runs: Path) -> dict[str, list[str]]:
    """The documents with a saved record, per system, over the run folders under `runs`."""
    found = {}
    for config in runs.glob("*/config.yaml"):
        [system] = yaml.safe_load(config.read_text())["system"]
        found[system] = sorted(path.stem for path in config.parent.glob("records/*.json"))
    return found


@pytest.mark.ray
def test_no_vendor_key_is_in_any_file_output_log_or_ray_session_file(
    ray_cluster: None,
    sentinels: dict[str, str],
    tmp_path: Path,
    capfd: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Every vendor in one `oeb run` (one folder each, as `make bench-all` runs them), then `oeb predict`
    per vendor; one scan at the end covers them all and names the variable and the file of a leak."""
    caplog.set_level(logging.DEBUG)
    dataset = tmp_path / "data"
    ids = vendor_dataset(dataset, 3)
    document, schema = dataset / "pdfs" / f"{ids[0]}.pdf", tmp_path / "schema.json"
    schema.write_text(json.dumps(SCHEMA))
    with contextlib.ExitStack() as servers:
        fakes = {vendor.system: servers.enter_context(FakeVendor()) for vendor in VENDORS}
        configs = []
        for vendor in VENDORS:
            fake = fakes[vendor.system]
            vendor.install(fake)
            answer = fake.routes[vendor.submit]
            # one after another: a refusal echoing the headers (recorded), an answer, then a 401 (stops the system)
            fake.on(*vendor.submit, _echo(400), *answer, _echo(401))
            configs += ["--config", str(_config(tmp_path, vendor.system, vendor.options(fake.url), dataset))]
        assert main(["run", *configs, "--out", str(tmp_path / "runs"), "-y"]) != 0

        for vendor in VENDORS:
            fake = fakes[vendor.system]
            predict = ["predict", "--system", vendor.system, "--doc", str(document), "--schema", str(schema)]
            predict += ["--options", json.dumps(vendor.options(fake.url)), "--timeout", "20"]
            assert main(predict) != 0, vendor.system  # the 401 again: the account is refused
            fake.on(*vendor.submit, _echo(400))
            assert main(predict) == 1, vendor.system  # a recorded refusal, printed with the headers it echoed

    for vendor in VENDORS:  # the key did go out
        assert any(sentinels[vendor.key] in json.dumps(r.headers) for r in fakes[vendor.system].requests), vendor
    # the refusal and the answer of each system; its 401 stopped it
    assert _records(tmp_path / "runs") == {vendor.system: ids[:2] for vendor in VENDORS}
    assert _scan(sentinels, tmp_path, capfd, caplog) == []


@pytest.mark.ray
def test_the_offline_systems_leak_no_key_either(
    ray_cluster: None,
    sentinels: dict[str, str],
    tmp_path: Path,
    capfd: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    dataset = tmp_path / "data"
    vendor_dataset(dataset, 3)
    mock = _config(tmp_path, "mock", {"malformed": 0.5}, dataset)
    assert main(["run", "--config", str(mock), "--out", str(tmp_path / "mock-runs"), "-y"]) == 0
    (source,) = (tmp_path / "mock-runs").iterdir()
    replay = _config(tmp_path, "replay", {"source": str(source)}, dataset)
    assert main(["run", "--config", str(replay), "--out", str(tmp_path / "replay-runs"), "-y"]) == 0
    assert len(list((tmp_path / "replay-runs").glob("*/records/*.json"))) == 3
    assert _scan(sentinels, tmp_path, capfd, caplog) == []


@pytest.mark.ray
def test_the_ray_files_scan_would_see_a_key_put_in_a_runtime_environment(ray_cluster: None) -> None:
    """Why keys go to actors in a call: Ray logs a runtime environment on disk (and the scan sees it)."""
    import ray

    @ray.remote(num_cpus=0)
    class Probe:
        def key(self) -> str:
            return os.environ["OEB_TEST_PROBE_KEY"]

    value = f"oeb-sentinel-{secrets.token_hex(8)}"
    probe = Probe.options(runtime_env={"env_vars": {"OEB_TEST_PROBE_KEY": value}}).remote()
    assert ray.get(probe.key.remote()) == value
    ray.kill(probe)
    assert _leaks({"OEB_TEST_PROBE_KEY": value}, _ray_session_files())


@dataclass(frozen=True)
class CrashingReader(Adapter):
    """Answers with its own key in the answer, then its reader crashes quoting that answer."""

    keys: ClassVar[tuple[str, ...]] = ("OEB_TEST_CRASHING_KEY",)

    def extract(self, document: Path, schema: dict[str, Any], budget: Deadline) -> Call:
        return Call(raw={"echo": self.env("OEB_TEST_CRASHING_KEY")})

    def read(self, raw: Any) -> dict[str, Any]:
        raise KeyError(f"no extraction in {raw}")


def test_a_crashed_reader_stops_the_run_with_no_key_in_its_message_or_kept_record(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    key = f"oeb-sentinel-{secrets.token_hex(8)}"
    monkeypatch.setenv("OEB_TEST_CRASHING_KEY", key)
    (tmp_path / "doc.pdf").write_bytes(b"%PDF-1.4\n%%EOF\n")
    with pytest.raises(ReadCrashed) as crashed:
        predict(CrashingReader(), Question(tmp_path / "doc.pdf", {}), timeout=5)
    assert "[redacted]" in str(crashed.value)
    assert key not in str(crashed.value)
    assert key not in json.dumps(crashed.value.record)


# Cloud credentials: a Ray head of the test's own (its own temp dir, started without any credential, as
# a node with no instance role is), a run and a regrade attached to it writing to moto's S3.

_HEAD_IP = "127.0.0.2"  # `ray start` leaves 127.0.0.1 for the machine's routable address
_HEAD_PORTS = {  # outside tests/cluster's ports (6391-6499, 16000-16399) and Ray's worker range
    "port": 6501,
    "ray-client-server-port": 6502,
    "node-manager-port": 6503,
    "object-manager-port": 6504,
    "dashboard-agent-listen-port": 6505,
    "dashboard-agent-grpc-port": 6506,
    "metrics-export-port": 6507,
    "runtime-env-agent-port": 6508,
    "min-worker-port": 16400,
    "max-worker-port": 16599,
}
CLOUD_SECRETS = ("AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "HF_TOKEN")


@pytest.mark.ray
@pytest.mark.slow
def test_no_cloud_credential_is_in_any_file_of_a_ray_the_run_attached_to(s3_env: dict[str, str]) -> None:
    """`oeb run` (predicting on actors, grading on warm workers) and `oeb grade` (grading on tasks of
    its own, OEB_WARM_MINUTES=0) attached to the head, their run folder on S3: the head's nodes hold
    no credential, so the work succeeding means the credentials reached the workers; none is in any
    file under the head's temp dir (logs of the runtime-env agent, raylet, GCS, workers, job metadata)."""
    tag, temp = uuid.uuid4().hex, Path(tempfile.mkdtemp(prefix="oebs"))  # short: Ray's sockets live under it
    node_env = {name: value for name, value in os.environ.items() if not name.startswith(("AWS_", "HF_"))}
    node_env = {k: v for k, v in node_env.items() if k != "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"} | {
        "RAY_AUTH_MODE": "disabled",
        "RAY_USAGE_STATS_ENABLED": "0",
        "RAY_GRACEFUL_SHUTDOWN_DRAIN_TIMEOUT_S": "0",
        "RAY_ENABLE_UV_RUN_RUNTIME_ENV": "0",
        "AWS_EC2_METADATA_DISABLED": "true",  # no instance role to fall back on
        "OEB_RAY_FIXTURE_TAG": tag,
    }
    values = {name: f"oeb-sentinel-{name.lower()}-{secrets.token_hex(8)}" for name in CLOUD_SECRETS}
    driver_env = {k: v for k, v in node_env.items() if k != "OEB_RAY_FIXTURE_TAG"} | s3_env | values
    head = f"{_HEAD_IP}:{_HEAD_PORTS['port']}"
    args = ["--head", "--num-cpus=2", f"--temp-dir={temp}", "--include-dashboard=false", *_flags(_HEAD_PORTS)]
    process = _start([*args, f"--node-ip-address={_HEAD_IP}"], temp / "head.log", node_env)
    try:
        dataset = temp / "data"
        vendor_dataset(dataset, 3)
        runs = f"s3://{S3_BUCKET}/{uuid.uuid4().hex}"
        config = Path(__file__).parents[2] / "oeb" / "examples" / "mock.yaml"
        oeb = [sys.executable, "-m", "oeb"]
        run = [*oeb, "run", "--config", str(config), "--set", f"dataset={dataset}", "--set", "system.mock.latency=0"]
        run += ["--set", f"ray.address={head}", "--out", runs, "-y"]
        done = subprocess.run(run, env=driver_env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        grade = [*oeb, "grade", runs, "--address", head]
        done = subprocess.run(grade, env=driver_env | {"OEB_WARM_MINUTES": "0"}, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
    finally:
        _stop(process)
        _sweep(tag)
    found = _leaks(values, {k: v for k, v in _files(temp).items() if "/sockets/" not in k})
    shutil.rmtree(temp, ignore_errors=True)
    assert found == []
