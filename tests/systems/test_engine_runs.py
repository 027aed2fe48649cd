"""Each of the ten published configs, run as shipped through the engine (plan, predict, grade) over
the bundled sample, against a fake of its vendor that answers every document right. A run of 12
documents answers in the driver's process (no Ray): the engine's own tests and the job-crash tests
run the same actors on Ray.

Only what points the run at the fake and keeps CI fast is changed, as `--set` would: the dataset (the
sample), the address (`base_url`/`endpoint`), `poll_interval` (0.05 s, not seconds), the start rate
(ten times the config's) and, but for Azure, one actor instead of 3 to 10. That actor still holds the
config's documents in flight, and Azure keeps its 3. Every other option is the config's own. The ten
runs go side by side, as ten drivers' runs would.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import itertools
import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from oeb.dataset import SAMPLE_DATASET, open_dataset
from oeb.run import engine
from oeb.run.plan.config import Config, load_config, read_tree
from systems import gold_vendors
from systems.conftest import KEY
from systems.fake_vendor import FakeVendor, Request

pytestmark = pytest.mark.slow

CONFIGS = Path(__file__).parents[2] / "configs"
SPEEDUP = 10
POLL_S = 0.05


@dataclass(frozen=True)
class Setting:
    vendor: type[gold_vendors.GoldVendor]
    address: str = "base_url"
    path: str = ""
    """What follows the fake's address in the option (the LLM API's `/api/v1`)."""
    own_actors: bool = False
    """Run with the config's actors, not one."""


SETTINGS = {
    "datalab-accurate": Setting(gold_vendors.Datalab),
    "datalab-balanced": Setting(gold_vendors.Datalab),
    "reducto": Setting(gold_vendors.Reducto),
    "extend": Setting(gold_vendors.Extend),
    "llamaextract": Setting(gold_vendors.LlamaExtract),
    "mistral": Setting(gold_vendors.Mistral),
    "azure-cu": Setting(gold_vendors.AzureCU, address="endpoint", own_actors=True),
    "claude-opus-5": Setting(gold_vendors.OpenRouter, path="/api/v1"),
    "gemini-3.7-flash": Setting(gold_vendors.OpenRouter, path="/api/v1"),
    "gpt-5.6-sol": Setting(gold_vendors.OpenRouter, path="/api/v1"),
}


@dataclass(frozen=True)
class Finished:
    name: str
    shipped: dict[str, Any]
    """The config file as shipped."""
    config: Config
    plan: engine.Plan
    result: engine.RunResult
    vendor: gold_vendors.GoldVendor
    requests: list[Request]

    @property
    def folder(self) -> Path:
        return Path(self.plan.folder.url)

    def record(self, doc_id: str) -> dict[str, Any]:
        return json.loads((self.folder / "records" / f"{doc_id}.json").read_text())


def _config(name: str, url: str) -> Config:
    """The shipped config `name`, pointed at the fake at `url` and sped up (see the module's docstring)."""
    setting, path = SETTINGS[name], str(CONFIGS / f"{name}.yaml")
    shipped = read_tree(path)
    [(system, options)] = shipped["system"].items()
    sets = [
        f"dataset={SAMPLE_DATASET}",
        f"system.{system}.{setting.address}={url}{setting.path}",
        f"ray.rate_limit.requests_per_second={shipped['ray']['rate_limit']['requests_per_second'] * SPEEDUP}",
    ]
    if "poll_interval" in options:
        sets.append(f"system.{system}.poll_interval={POLL_S}")
    if not setting.own_actors:
        sets.append("ray.actors=1")
    return load_config(path, sets)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Finished | Exception]:
    """The ten runs side by side, each with its own fake, limiter and actors (threads here)."""
    dataset = open_dataset(SAMPLE_DATASET)

    def run(name: str, fake: FakeVendor) -> Finished:
        config = _config(name, fake.url)
        vendor = SETTINGS[name].vendor(fake, dataset, KEY)
        plan = engine.plan_run(config, str(tmp_path_factory.mktemp(name)))
        result = engine.execute(plan, details=False)
        return Finished(name, read_tree(str(CONFIGS / f"{name}.yaml")), config, plan, result, vendor, fake.requests)

    with contextlib.ExitStack() as stack, pytest.MonkeyPatch.context() as env:
        fakes = {name: stack.enter_context(FakeVendor()) for name in SETTINGS}
        for name, fake in fakes.items():
            env.setenv(_config(name, fake.url).adapter.keys[0], KEY)
        with concurrent.futures.ThreadPoolExecutor(len(SETTINGS)) as pool:
            futures = {name: pool.submit(run, name, fake) for name, fake in fakes.items()}
        return {name: future.exception() or future.result() for name, future in futures.items()}


@pytest.fixture(params=sorted(SETTINGS))
def finished(request: pytest.FixtureRequest, runs: dict[str, Finished | Exception]) -> Finished:
    outcome = runs[request.param]
    if isinstance(outcome, Exception):
        raise outcome
    return outcome


def test_every_document_is_answered_once_and_graded_perfect(finished: Finished) -> None:
    dataset = open_dataset(SAMPLE_DATASET)
    assert [row.doc_id for row in finished.plan.rows] == [row.doc_id for row in dataset.rows]
    for row, gold in dataset.golds():
        assert finished.record(row.doc_id)["error"] is None, finished.record(row.doc_id)["error"]
        assert json.loads((finished.folder / "predictions" / f"{row.doc_id}.json").read_text()) == gold
    assert finished.vendor.answered == {row.doc_id: 1 for row in dataset.rows}
    summary = finished.result.report["scorers"]["field_matching"]
    assert (summary["rows"], summary["failed"], summary["coverage"]) == (12, 0, 1.0)
    assert summary["scored"]["accuracy"] == summary["headline"] == 1.0


def test_records_hold_the_vendors_raw_answer_cost_and_job(finished: Finished) -> None:
    vendor, adapter = finished.vendor, finished.config.adapter
    documents = list(vendor.documents.values())
    for document in documents:
        record = finished.record(document.doc_id)
        assert (record["system"], record["options"]) == (adapter.name, adapter.options())
        assert record["cost"]["attempts"] == 1
        expected_cost = vendor.cost(document)
        assert {unit: record["cost"][unit] for unit in expected_cost} == expected_cost, document.doc_id
        if vendor.raw_exact:
            assert record["raw"] == vendor.raw(document)
        else:
            assert _holds(record["raw"], vendor.raw(document))
        assert record["job_id"] == vendor.job_id(document)
    for unit in ("usd", "credits"):  # the run's total, in the same units
        figures = [vendor.cost(document).get(unit) for document in documents]
        total = None if None in figures else pytest.approx(sum(figures))
        assert finished.result.report["cost"][unit] == total


def _holds(actual: Any, expected: Any) -> bool:
    """Whether `actual` has everything `expected` has (objects may hold more keys)."""
    if isinstance(expected, dict):
        return isinstance(actual, dict) and all(k in actual and _holds(actual[k], v) for k, v in expected.items())
    if isinstance(expected, list):
        return isinstance(actual, list) and len(actual) == len(expected) and all(map(_holds, actual, expected))
    return actual == expected


def test_the_configs_actors_and_limits_are_honoured(finished: Finished) -> None:
    ray, config = finished.shipped["ray"], finished.config
    max_in_flight = ray["rate_limit"]["max_in_flight"]
    actors = ray["actors"] if SETTINGS[finished.name].own_actors else 1
    assert (config.actors(), config.in_flight()) == (actors, max_in_flight)
    plan = finished.plan.lines()[1]
    assert f"{max_in_flight} in flight (set by ray.rate_limit.max_in_flight) on {actors} actors" in plan
    stats = finished.result.predicted
    assert 1 <= stats["peak_in_flight"] <= max_in_flight
    assert 1 <= finished.vendor.peak <= max_in_flight  # as the vendor saw it
    if isinstance(finished.vendor, gold_vendors.AzureCU):  # each actor process creates an analyzer once at most
        creations = Counter(request.path for request in finished.requests if request.method == "PUT")
        assert len(creations) == len({json.dumps(row.schema) for row in finished.plan.rows})
        assert max(creations.values()) <= actors
    starts = sorted(stats["starts"])
    assert len(starts) == 12
    per_second = ray["rate_limit"]["requests_per_second"] * SPEEDUP
    assert min(later - earlier for earlier, later in itertools.pairwise(starts)) >= 1 / per_second - 1e-6


def test_the_key_reaches_the_vendor_but_no_file_of_the_run(finished: Finished) -> None:
    assert all(KEY in json.dumps(request.headers) for request in finished.requests)
    for file in finished.folder.rglob("*"):
        if file.is_file():
            assert KEY.encode() not in file.read_bytes(), file
    settings = json.loads((finished.folder / "settings.json").read_text())
    located = settings.get("located", {})
    assert list(located) == list(type(finished.config.adapter).located)
    assert not located.keys() & settings["options"].keys()  # where the vendor is is not what was asked


def _datalab(request: Request) -> dict[str, Any] | None:
    if (request.method, request.path) != ("POST", "/api/v1/extract"):
        return None
    return {"mode": request.form()["extraction_mode"][2].decode()}


def _reducto(request: Request) -> dict[str, Any] | None:
    if request.path != "/extract_async":
        return None
    body = request.json()
    return {
        "deep_extract_model": body["settings"]["alpha"]["deep_extract_model"],
        "agentic_table_mode": body["parsing"]["enhance"]["agentic"][0]["mode"],
        "system_prompt": body["instructions"].get("system_prompt", ""),
    }


def _extend(request: Request) -> dict[str, Any] | None:
    api_version = {"api_version": request.headers["x-extend-api-version"]}
    if request.path != "/extract_runs":
        return api_version
    return api_version | {"array_strategy": request.json()["config"]["advancedOptions"]["arrayStrategy"]["type"]}


def _llamaextract(request: Request) -> dict[str, Any] | None:
    return {"tier": request.json()["configuration"]["tier"]} if request.path == "/api/v2/extract" else None


def _azure(request: Request) -> dict[str, Any] | None:
    api_version = {"api_version": request.query["api-version"]}
    if request.method != "PUT":
        return api_version if request.method == "POST" else None
    return api_version | {"completion_model": request.json()["config"]["completion"]}


def _llm(request: Request) -> dict[str, Any] | None:
    body = request.json()
    return {"model": body["model"], "max_output_tokens": body["max_tokens"]}


SENT_OPTIONS = {
    gold_vendors.Datalab: _datalab,
    gold_vendors.Reducto: _reducto,
    gold_vendors.Extend: _extend,
    gold_vendors.LlamaExtract: _llamaextract,
    gold_vendors.Mistral: lambda request: {},
    gold_vendors.AzureCU: _azure,
    gold_vendors.OpenRouter: _llm,
}
"""Where each vendor's requests carry the config's options."""


def test_the_vendor_receives_the_configs_options(finished: Finished) -> None:
    [options] = finished.shipped["system"].values()
    read = SENT_OPTIONS[type(finished.vendor)]
    carried = [sent for sent in map(read, finished.requests) if sent is not None]
    assert len(carried) >= 12
    for sent in carried:
        assert sent == {key: options[key] for key in sent}
