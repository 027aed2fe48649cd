"""The LLM system on the providers' own APIs, against fakes of each on 127.0.0.1: one request per
document (with the engine's retries), and `batch: true` runs through the engine: 30 documents cut
into batches, batches that expire or answer some requests with errors, the budget that holds a batch
back, and a real `oeb run` SIGKILLed while its batches are in flight, then resumed, the provider
counting every document sent exactly once."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from oeb.batch import files
from oeb.dataset import open_dataset
from oeb.errors import BudgetReached, ConfigError, RunFolderError
from oeb.run import engine
from oeb.run.plan.config import init_tree, load_config
from oeb.systems import Asking, MissingKey, OptionError, Question, get, predict, question_schema
from oeb.systems.llm import PROVIDERS
from oeb.systems.providers import google
from oeb.systems.providers.anthropic import Anthropic
from systems import fake_providers
from systems.conftest import DOCUMENTS, FAST, KEY
from systems.fake_vendor import FakeVendor, Reply

IN, OUT = 5.0, 25.0
"""The standard prices the tests set, dollars per million tokens."""


@pytest.fixture(params=sorted(fake_providers.PROVIDERS))
def provider(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    name: str = request.param
    monkeypatch.setenv(fake_providers.KEYS[name], KEY)
    return name


@pytest.fixture
def served(provider: str, thirty: Path) -> Iterator[fake_providers.Provider]:
    with FakeVendor() as fake:
        yield fake_providers.PROVIDERS[provider](fake, open_dataset(str(thirty)), KEY)


@pytest.fixture
def claude(thirty: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[fake_providers.Anthropic]:
    """The Anthropic fake alone, for what one provider shows for all."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    with FakeVendor() as fake:
        yield fake_providers.Anthropic(fake, open_dataset(str(thirty)), KEY)


def _options(provider: str, url: str, **more: Any) -> dict[str, Any]:
    return {"provider": provider, "base_url": url + fake_providers.PATHS[provider],
            "usd_per_mtok_in": IN, "usd_per_mtok_out": OUT, **more}  # fmt: skip


def _config(folder: Path, dataset: Path, provider: str, url: str, *, budget: float | None = None, **more: Any) -> Path:
    options = _options(provider, url, **({"batch": True, "poll_interval": 0.05, "poll_max": 0.2} | more))
    tree = init_tree(fake_providers.MODELS[provider], str(dataset))
    tree["budget"]["usd"] = budget
    tree["system"][fake_providers.MODELS[provider]] |= options
    path = folder / f"{provider}.yaml"
    path.write_text(yaml.safe_dump(tree))
    return path


def _records(folder: str) -> dict[str, dict[str, Any]]:
    return {p.stem: json.loads(p.read_text()) for p in (Path(folder) / "records").glob("*.json")}


def _tokens_usd(document: Any, scale: float) -> float:
    return round(((1000 + document.number) * IN + (100 + document.number) * OUT) / 1e6 * scale, 6)


def test_one_request_per_document_priced_from_its_tokens_through_429_and_500(
    provider: str, served: fake_providers.Provider, thirty: Path
) -> None:
    dataset = open_dataset(str(thirty))
    row = dataset.rows[3]
    path = {"openai": "/v1/chat/completions", "anthropic": "/v1/messages"}.get(provider)
    limited = Reply(429, {"error": {"message": "slow down"}}, {"retry-after": "0", "x-should-retry": "false"})
    failing = Reply(500, {"error": {"message": "oops"}}, {"x-should-retry": "false"})
    if path is None:  # google answers every model path under one prefix
        served.fake.prefixes[("POST", "/v1beta/models/")][:0] = [limited, failing]
    else:
        served.fake.first("POST", path, limited, failing)
    adapter = get(fake_providers.MODELS[provider], _options(provider, served.fake.url))
    question = Question(dataset.document(row), question_schema(dict(row.schema)))
    record = predict(adapter, question, timeout=30, policy=FAST)
    document = next(d for d in served.documents.values() if d.doc_id == row.doc_id)
    assert record["error"] is None and record["output"] == document.gold
    assert record["cost"]["attempts"] == 3
    assert record["cost"]["usd"] == _tokens_usd(document, 1.0)
    assert record["cost"]["tokens_in"] == 1000 + document.number and "batch" not in record["cost"]["source"]
    assert "batch_id" not in record


def test_without_a_price_the_cost_is_unknown_and_the_tokens_kept(
    claude: fake_providers.Anthropic, thirty: Path
) -> None:
    row = open_dataset(str(thirty)).rows[0]
    options = _options("anthropic", claude.fake.url) | {"usd_per_mtok_in": None, "usd_per_mtok_out": None}
    question = Question(open_dataset(str(thirty)).document(row), question_schema(dict(row.schema)))
    record = predict(get("anthropic/claude-opus-5", options), question, policy=FAST)
    assert record["output"] and record["cost"]["usd"] is None and record["cost"]["tokens_in"]
    assert "no price" in record["cost"]["source"]


def test_thirty_documents_in_batches_are_each_sent_once_at_the_batch_price(
    provider: str, served: fake_providers.Provider, thirty: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    api = PROVIDERS[provider]  # the batches are cut at 12 requests (the limit shrunk)
    assert api.limits is not None
    monkeypatch.setattr(api, "limits", type(api.limits)(12, api.limits.bytes, api.limits.source))
    plan = engine.plan_run(
        load_config(str(_config(tmp_path, thirty, provider, served.fake.url))), str(tmp_path / "runs")
    )
    assert any("batches of at most 12 requests" in line for line in plan.lines())
    result = engine.execute(plan)
    records = _records(plan.folder.url)
    assert len(records) == DOCUMENTS and set(served.sent.values()) == {1}
    assert served.creates == 3 and sorted(len(b.requests) for b in served.batches.values()) == [6, 12, 12]
    custom_ids = [cid for batch in served.batches.values() for cid in batch.requests]
    renamed = [cid for cid in custom_ids if cid not in records]  # ids Anthropic's rules refuse ("[zhao25] a ...")
    assert len(renamed) == (6 if provider == "anthropic" else 0) and all(c.startswith("doc-") for c in renamed)
    by_id = {d.doc_id: d for d in served.documents.values()}
    for doc_id, record in records.items():
        assert record["error"] is None and record["output"] == by_id[doc_id].gold
        assert record["batch_id"] in {f"batch_{n}" if provider != "google" else f"batches/batch_{n}" for n in (1, 2, 3)}
        assert record["cost"]["usd"] == _tokens_usd(by_id[doc_id], 0.5)
        assert "batch price" in record["cost"]["source"] and record["cost"]["attempts"] == 1
    assert not list((Path(plan.folder.url) / "batches").glob("*.json"))  # forgotten once saved
    assert result.report["scorers"]["field_matching"]["failed"] == 0
    assert [(b["requests"], b["spent_usd"] is not None) for b in result.predicted["batches"]] == [
        (12, True),
        (12, True),
        (6, True),
    ]


def test_an_expired_batch_and_errored_requests_are_sent_again_as_attempts(
    provider: str, served: fake_providers.Provider, thirty: Path, tmp_path: Path
) -> None:
    dataset = open_dataset(str(thirty))
    errored = {dataset.rows[1].doc_id, dataset.rows[4].doc_id}
    served.errors = set(errored)
    config = load_config(str(_config(tmp_path, thirty, provider, served.fake.url)), ["rows.limit=6"])
    engine.execute(engine.plan_run(config, str(tmp_path / "runs")))
    first = _records(str(next((tmp_path / "runs").iterdir())))
    assert {doc_id for doc_id, n in served.sent.items() if n == 2} == errored and len(first) == 6
    for doc_id, record in first.items():
        assert record["error"] is None
        assert record["cost"]["attempts"] == (2 if doc_id in errored else 1)
    served.expire_next = True
    config = load_config(str(_config(tmp_path, thirty, provider, served.fake.url)), ["rows.limit=9"])
    engine.execute(engine.plan_run(config, str(tmp_path / "again")))
    second = _records(str(next((tmp_path / "again").iterdir())))
    assert all(r["error"] is None and r["cost"]["attempts"] == 2 for r in second.values())
    assert served.creates == 4  # 6 docs: one batch, then the two errored; 9 docs: expired, then again


def test_a_batch_the_budget_cannot_pay_for_is_not_sent(
    claude: fake_providers.Anthropic, thirty: Path, tmp_path: Path
) -> None:
    config = load_config(str(_config(tmp_path, thirty, "anthropic", claude.fake.url, budget=1.0)))
    plan = engine.plan_run(config, str(tmp_path / "runs"))
    with pytest.raises(BudgetReached, match="30 documents left unasked"):
        engine.execute(plan)
    assert claude.creates == 0 and not claude.sent
    # a budget for about three documents' worst case sends a batch of three, then more as costs come in
    limit = 3 * (128000 * OUT + 4 * Anthropic.tokens_per_page * IN) / 1e6 * 0.5
    config = load_config(str(_config(tmp_path, thirty, "anthropic", claude.fake.url, budget=limit)), ["rows.limit=6"])
    engine.execute(engine.plan_run(config, str(tmp_path / "more")))
    first = next(iter(claude.batches.values()))
    assert 1 <= len(first.requests) <= 3 and claude.creates >= 2
    assert set(claude.sent.values()) == {1} and len(claude.sent) == 6


def test_a_budget_without_a_price_is_refused_at_the_plan(
    claude: fake_providers.Anthropic, thirty: Path, tmp_path: Path
) -> None:
    path = _config(tmp_path, thirty, "anthropic", claude.fake.url, budget=5.0, usd_per_mtok_in=None)
    with pytest.raises(ConfigError, match="usd_per_mtok_in"):
        engine.plan_run(load_config(str(path)), str(tmp_path / "runs"))


def test_a_batch_file_that_cannot_be_read_stops_the_resume_by_name(
    claude: fake_providers.Anthropic, thirty: Path, tmp_path: Path
) -> None:
    config = load_config(str(_config(tmp_path, thirty, "anthropic", claude.fake.url)), ["rows.limit=2"])
    plan = engine.plan_run(config, str(tmp_path / "runs"))
    plan.folder.launch(engine.config_tree(plan.config, plan.dataset), plan.settings)
    (Path(plan.folder.url) / "batches").mkdir()
    (Path(plan.folder.url) / "batches" / "1.json").write_text("{not json")
    with pytest.raises(RunFolderError, match=r"batches/1.json .* is not a batch oeb wrote"):
        engine.plan_resume(plan.folder.url)
    assert claude.creates == 0


def test_polls_back_off_from_poll_interval_to_poll_max(
    claude: fake_providers.Anthropic, thirty: Path, tmp_path: Path
) -> None:
    claude.polls_to_end = 6
    config = load_config(str(_config(tmp_path, thirty, "anthropic", claude.fake.url, poll_interval=0.1, poll_max=0.4)),
                         ["rows.limit=2"])  # fmt: skip
    engine.execute(engine.plan_run(config, str(tmp_path / "runs")))
    [create] = claude.fake.sent("POST", "/v1/messages/batches")
    polls = [r.received for r in claude.fake.sent("GET", "/v1/messages/batches/batch_1")]
    waits = [b - a for a, b in zip([create.received, *polls], polls, strict=False)]
    assert len(polls) >= 6 and waits[:5] == pytest.approx([0.1, 0.2, 0.4, 0.4, 0.4], abs=0.09)  # a loaded machine


def _handles(root: Path) -> list[str]:
    """The provider batch ids written in the run folders under `root` (an intent holds none yet)."""
    found = []
    for path in root.glob("runs/*/batches/*.json"):
        try:
            found.append(json.loads(path.read_text())["handle"]["batch_id"])
        except (ValueError, KeyError):
            continue
    return found


def _cpu_seconds(pid: int) -> float:
    """The user and system CPU time a process has used, from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@pytest.mark.slow
def test_a_run_killed_while_its_batches_are_in_flight_is_resumed_sending_nothing_twice(
    provider: str, served: fake_providers.Provider, thirty: Path, tmp_path: Path
) -> None:
    served.hold()
    config = _config(tmp_path, thirty, provider, served.fake.url)
    env = os.environ | {"PYTHONPATH": os.pathsep.join(sys.path)}
    command = [sys.executable, "-m", "oeb"]
    run = subprocess.Popen([*command, "run", "--config", str(config), "--out", str(tmp_path / "runs")], env=env,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while not (served.creates and _handles(tmp_path)) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert served.creates == 1, "the run sent its batch"
        before = _cpu_seconds(run.pid)
        time.sleep(2.0)  # polled, still in progress
        assert _cpu_seconds(run.pid) - before < 0.4, "waiting on a batch takes (almost) no CPU"
    finally:
        run.send_signal(signal.SIGKILL)
        run.wait()
    [folder] = (tmp_path / "runs").iterdir()
    assert not _records(str(folder)) and sum(served.sent.values()) == DOCUMENTS
    served.release()
    resumed = subprocess.run([*command, "resume", str(folder)], env=env, capture_output=True, text=True, timeout=120)
    assert resumed.returncode == 0, resumed.stderr
    assert "collected, not sent again" in resumed.stderr + resumed.stdout
    records = _records(str(folder))
    assert len(records) == DOCUMENTS and set(served.sent.values()) == {1} and served.creates == 1
    assert {r["batch_id"] for r in records.values()} == {next(iter(r["batch_id"] for r in records.values()))}
    assert all("batch price" in r["cost"]["source"] for r in records.values())


@pytest.mark.ray
def test_on_ray_the_driver_sends_the_batches_and_the_cluster_grades(
    ray_cluster: None, claude: fake_providers.Anthropic, thirty: Path, tmp_path: Path
) -> None:
    plan = engine.plan_run(load_config(str(_config(tmp_path, thirty, "anthropic", claude.fake.url))), str(tmp_path))
    result = engine.execute(plan)
    assert len(claude.sent) == DOCUMENTS and set(claude.sent.values()) == {1} and claude.creates == 1
    assert result.report["scorers"]["field_matching"]["failed"] == 0
    assert result.graded_on and not any("process" in node for node in result.graded_on)


def test_a_resume_collects_a_document_from_the_latest_batch_holding_it(
    claude: fake_providers.Anthropic, thirty: Path, tmp_path: Path
) -> None:
    """A kill between sending a document again and forgetting its earlier batch leaves it in two files."""
    config = load_config(str(_config(tmp_path, thirty, "anthropic", claude.fake.url)), ["rows.limit=2"])
    plan = engine.plan_run(config, str(tmp_path / "runs"))
    plan.folder.launch(engine.config_tree(plan.config, plan.dataset), plan.settings)
    batches = config.adapter.batching()
    assert batches is not None
    first, second = plan.rows

    def entry(row: Any) -> tuple[str, Any]:
        schema = question_schema(dict(row.schema))
        return row.doc_id, batches.entry(row.doc_id, plan.dataset.document(row), schema)["params"]

    def written(name: str, batch_id: str, rows: list[Any]) -> None:
        held = {row.doc_id: {"doc_id": row.doc_id, "asking": Asking(started=time.time()).to_json()} for row in rows}
        files.write(plan.folder.url, {"name": name, "provider": "anthropic", "handle": {"batch_id": batch_id},
                                      "sent": time.time(), "requests": len(rows), "bytes": 1, "worst_usd": None,
                                      "documents": held})  # fmt: skip

    written("1", claude.new_batch([entry(first), entry(second)]), [first, second])
    written("2", claude.new_batch([entry(second)]), [second])
    resumed = engine.plan_resume(plan.folder.url)
    assert sum("collected, not sent again" in line for line in resumed.lines()) == 2
    engine.execute(resumed)
    records = _records(plan.folder.url)
    assert {doc_id: r["batch_id"] for doc_id, r in records.items()} == {
        first.doc_id: "batch_1",
        second.doc_id: "batch_2",
    }
    assert claude.creates == 2 and not files.live(plan.folder.url)


def test_a_google_batch_larger_than_the_inline_limit_goes_as_an_uploaded_file(
    thirty: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(google, "INLINE_BYTES", 1000)  # any batch of PDFs is larger
    monkeypatch.setenv("GEMINI_API_KEY", KEY)
    with FakeVendor() as fake:
        gemini = fake_providers.Google(fake, open_dataset(str(thirty)), KEY)
        config = load_config(str(_config(tmp_path, thirty, "google", fake.url)), ["rows.limit=5"])
        engine.execute(engine.plan_run(config, str(tmp_path / "runs")))
    records = _records(str(next((tmp_path / "runs").iterdir())))
    assert gemini.from_files == 1 and len(records) == 5 and set(gemini.sent.values()) == {1}
    assert all(r["error"] is None and r["batch_id"] == "batches/batch_1" for r in records.values())


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"batch": True}, "openrouter sells no batches"),
        ({"provider": "mistral"}, "one of openrouter, openai, anthropic, google"),
        ({"provider": "openai", "poll_interval": 600.0}, "poll_max"),
        ({"provider": "openai", "batch_discount": 0.0}, "batch_discount"),
        ({"usd_per_mtok_in": -1.0}, "must not be negative"),
    ],
)
def test_options_that_cannot_work_are_refused_in_one_line(options: dict[str, Any], message: str) -> None:
    with pytest.raises(OptionError, match=message) as refused:
        get("openai/gpt-5.6-sol", options)
    assert "\n" not in str(refused.value)


def test_each_provider_needs_its_own_key(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, variable in fake_providers.KEYS.items():
        monkeypatch.delenv(variable, raising=False)
        adapter = get(fake_providers.MODELS[name], {"provider": name})
        assert adapter.missing_keys() == [variable]
        with pytest.raises(MissingKey, match=variable):
            adapter.check_keys()
