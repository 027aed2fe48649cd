"""Several systems side by side in one run, on the tests' Ray: two vendor fakes on 127.0.0.1 (Datalab
and Reducto, each polling jobs) and the offline mock, each with its own pace and in-flight cap, all
collected by one driver loop. A config without its key is refused at the plan and the others go
ahead; a 402 from one vendor mid-run stops only that system; the others are graded, one leaderboard
shows them, and the exit code is the most serious of the systems'. Then all of them resume at once.
"""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from systems import gold_vendors
from systems.conftest import KEY
from systems.fake_vendor import FakeVendor, Reply, Request

from oeb.cli import main
from oeb.dataset import SAMPLE_DATASET, open_dataset
from oeb.errors import RunStopped
from oeb.run import engine
from oeb.run.plan.config import init_tree, to_yaml

pytestmark = pytest.mark.ray

PACES = {"mock": (10.0, 2), "datalab": (6.0, 3), "reducto": (20.0, 2)}
"""Per system: starts per second and documents in flight."""
PAID_UP_TO = 3
"""The Reducto fake answers 402 to every job submitted after this many."""


class BrokeReducto(gold_vendors.Reducto):
    """Reducto whose account runs dry after `PAID_UP_TO` jobs: 402 Payment Required."""

    def submit(self, request: Request) -> Reply:
        with self._lock:
            self.submitted = getattr(self, "submitted", 0) + 1
            broke = self.submitted > PAID_UP_TO
        if broke:
            return Reply(402, {"error": {"message": "payment required"}}, gold_vendors.NO_RETRY)
        return super().submit(request)


def _config(folder: Path, system: str, address: str | None = None, **options: Any) -> Path:
    tree = init_tree(system, SAMPLE_DATASET)
    per_second, in_flight = PACES[system]
    tree["system"][system] |= options
    if address:
        tree["system"][system]["base_url"] = address
    if "poll_interval" in tree["system"][system]:
        tree["system"][system]["poll_interval"] = 0.05
    tree["workers"] = 0
    tree["ray"] = {"address": None, "actors": 1,
                   "rate_limit": {"requests_per_second": per_second, "max_in_flight": in_flight}}  # fmt: skip
    path = folder / f"{system}.yaml"
    path.write_text(to_yaml(tree))
    return path


@dataclass
class Side:
    configs: dict[str, Path]
    fakes: dict[str, gold_vendors.GoldVendor]
    plans: engine.Plans
    outcome: engine.Outcome
    out: Path


@pytest.fixture(scope="module")
def side(ray_cluster: None, tmp_path_factory: pytest.TempPathFactory) -> Any:
    """The three systems, and a fourth config (Extend) whose key is not set, run side by side."""
    folder = tmp_path_factory.mktemp("several")
    dataset = open_dataset(SAMPLE_DATASET)
    with FakeVendor() as datalab_http, FakeVendor() as reducto_http, pytest.MonkeyPatch.context() as env:
        fakes = {
            "datalab": gold_vendors.Datalab(datalab_http, dataset, KEY),
            "reducto": BrokeReducto(reducto_http, dataset, KEY),
        }
        env.setenv("NO_PROXY", "127.0.0.1,localhost")
        env.setenv("DATALAB_API_KEY", KEY)
        env.setenv("REDUCTO_API_KEY", KEY)
        env.delenv("EXTEND_API_KEY", raising=False)
        configs = {
            "mock": _config(folder, "mock", latency=0.3),
            "datalab": _config(folder, "datalab", datalab_http.url),
            "reducto": _config(folder, "reducto", reducto_http.url),
        }
        extend = init_tree("extend", SAMPLE_DATASET)
        (folder / "extend.yaml").write_text(to_yaml(extend))
        paths = [str(path) for path in configs.values()] + [str(folder / "extend.yaml")]
        out = folder / "runs"
        plans = engine.plan_runs(paths, str(out), ["system.mock.usd=0.01", "rows.limit=0"])
        outcome = engine.execute_all(plans.plans, details=False, refused=plans.refused)
        yield Side(configs, fakes, plans, outcome, out)


def _ended(side: Side, system: str) -> engine.Ended:
    return next(ended for ended in side.outcome.ended if ended.plan.config.system == system)


def test_a_config_without_its_key_is_refused_and_the_others_go_ahead(side: Side) -> None:
    [refused] = side.plans.refused
    assert refused.what.endswith("extend.yaml") and "EXTEND_API_KEY" in str(refused.error)
    assert [plan.config.system for plan in side.plans.plans] == ["mock", "datalab", "reducto"]
    assert any("refused" in line and "EXTEND_API_KEY" in line for line in side.plans.lines())
    # a --set applies to every config that has the path: usd only to mock, rows.limit to all
    assert _ended(side, "mock").plan.config.adapter.options()["usd"] == 0.01


def test_each_system_keeps_its_own_pace_and_in_flight_cap(side: Side) -> None:
    for system in ("mock", "datalab"):
        per_second, in_flight = PACES[system]
        ended = _ended(side, system)
        assert ended.result is not None, ended.error
        # as booked by the driver, and as the actor started them (a thread on a busy machine wakes late)
        for kind, late in (("starts", 1e-6), ("started", 0.05)):
            starts = sorted(ended.result.predicted[kind])
            assert min(b - a for a, b in itertools.pairwise(starts)) >= 1 / per_second - late
        assert 1 <= ended.result.predicted["peak_in_flight"] <= in_flight
    assert side.fakes["datalab"].peak <= PACES["datalab"][1]
    assert sum(side.fakes["datalab"].answered.values()) == len(open_dataset(SAMPLE_DATASET).rows)


def test_a_402_stops_only_its_system(side: Side) -> None:
    reducto = _ended(side, "reducto")
    assert isinstance(reducto.error, RunStopped) and reducto.result is None
    assert f"oeb resume {reducto.plan.folder.url}" in str(reducto.error)
    saved = list((Path(reducto.plan.folder.url) / "records").glob("*.json"))
    assert len(saved) <= PAID_UP_TO  # paid jobs collected, nothing asked past the 402
    assert side.outcome.exit_code == 1  # a stop outranks the rest
    for system in ("mock", "datalab"):
        folder = Path(_ended(side, system).plan.folder.url)
        summary = json.loads((folder / "field_matching" / "summary.json").read_text())
        assert summary["rows"] == len(open_dataset(SAMPLE_DATASET).rows)
    assert {Path(e.plan.folder.url).parent for e in side.outcome.ended} == {side.out}


def test_resume_of_all_three_finishes_the_stopped_one(side: Side, capsys: pytest.CaptureFixture[str]) -> None:
    urls = [ended.plan.folder.url for ended in side.outcome.ended]
    reducto = _ended(side, "reducto")
    before = {p.name for p in (Path(reducto.plan.folder.url) / "records").glob("*.json")}
    with FakeVendor() as http, pytest.MonkeyPatch.context() as env:
        fake = gold_vendors.Reducto(http, open_dataset(SAMPLE_DATASET), KEY)
        env.setenv("NO_PROXY", "127.0.0.1,localhost")
        env.setenv("REDUCTO_API_KEY", KEY)
        env.setenv("DATALAB_API_KEY", KEY)
        code = main(["resume", *urls, "--set", f"system.reducto.base_url={http.url}", "-y", "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    summary = json.loads(out)
    assert [run["exit_code"] for run in summary["runs"]] == [0, 0, 0]
    rows = len(open_dataset(SAMPLE_DATASET).rows)
    assert sum(fake.answered.values()) == rows - len(before)  # only what the stopped run lacked
    assert "leaderboard" in err and all(f"run folder of {name}" in err for name in ("mock", "datalab", "reducto"))


def test_the_cli_ends_with_the_leaderboard_and_the_folders(
    ray_cluster: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir(), b.mkdir()
    configs = [str(_config(a, "mock")), str(_config(b, "mock", seed=7))]
    code = main(["run", "--config", configs[0], "--config", configs[1], "--out", str(tmp_path / "runs"), "-y"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert not out.lstrip().startswith("{")  # no JSON without --json
    assert "leaderboard" in out and "mock#2" in out
    folders = [line for line in out.splitlines() if line.startswith("run folder of ")]
    assert len(folders) == 2 and all("(graded)" in line for line in folders)
    assert out.rstrip().splitlines()[-1].startswith("run folder of mock#2")


def test_a_run_where_every_document_fails_exits_5_naming_the_error(
    ray_cluster: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = _config(tmp_path, "mock", malformed=1.0)
    code = main(["run", "--config", str(config), "--out", str(tmp_path / "runs"), "-y"])
    out, err = capsys.readouterr()
    assert code == 5, err
    last = err.rstrip().splitlines()[-1]
    rows = len(open_dataset(SAMPLE_DATASET).rows)
    assert (
        last.startswith("oeb run: no document was answered") and "Unreadable" in last and f"({rows} of {rows})" in last
    )
    assert "run folder of mock" in out


def test_json_only_when_asked(ray_cluster: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = _config(tmp_path, "mock")
    assert main(["run", "--config", str(config), "--out", str(tmp_path / "runs"), "--set", "rows.limit=2",
                 "-y", "--json"]) == 0  # fmt: skip
    out, err = capsys.readouterr()
    report = json.loads(out)
    assert report["scorers"]["field_matching"]["rows"] == 2
    assert "leaderboard" in err and "run folder of mock" in err


def test_a_set_that_no_config_has_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    configs = [str(_config(tmp_path, "mock")), str(_config(tmp_path, "datalab", "http://127.0.0.1:9"))]
    code = main(["run", "--config", configs[0], "--config", configs[1], "--set", "system.nosuch.x=1", "-y",
                 "--out", str(tmp_path / "runs")])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 1 and err.count("\n") == 1 and "in none of the 2 configs" in err
    assert not (tmp_path / "runs").exists()
