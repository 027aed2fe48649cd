"""What a provider batch run must not lose or buy twice, against the providers' fakes on 127.0.0.1:
a create whose answer is lost (found in the provider's batch list and adopted, on the spot or on
resume), a run folder that cannot take a batch's file (kept in the spill folder, exit 75), a batch
that fails as a whole (the provider's reason on each record; a limit stops the system), a bad key
(Gemini's 400 API_KEY_INVALID, a 403) and one request body for the direct and the batch path."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from oeb.batch import files
from oeb.dataset import open_dataset
from oeb.errors import NothingAnswered, RunStopped, StorageDown, StorageStopped
from oeb.run import engine
from oeb.run.plan.config import load_config
from oeb.run.predict import spill
from oeb.systems import AccountFailure, Deadline, Question, SystemFailed, get, predict, question_schema
from systems import fake_providers
from systems.conftest import FAST, KEY
from systems.fake_vendor import FakeVendor, Reply
from systems.test_providers import _config, _options, _records

ROWS = 6
LOST = {"openai": Reply(200, reset=True), "anthropic": Reply(502, "Bad Gateway"), "google": Reply(200, reset=True)}
"""How each provider's create answer is lost in the tests: a reset, or a proxy's 502 after it took the batch."""


@pytest.fixture(params=sorted(fake_providers.PROVIDERS))
def served(request: pytest.FixtureRequest, thirty: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    name: str = request.param
    monkeypatch.setenv(fake_providers.KEYS[name], KEY)
    with FakeVendor() as fake:
        yield name, fake_providers.PROVIDERS[name](fake, open_dataset(str(thirty)), KEY)


def _plan(tmp_path: Path, thirty: Path, provider: str, url: str, rows: int = ROWS) -> engine.Plan:
    config = load_config(str(_config(tmp_path, thirty, provider, url)), [f"rows.limit={rows}"])
    return engine.plan_run(config, str(tmp_path / "runs"))


def test_a_create_whose_answer_is_lost_is_found_and_adopted_not_bought_twice(
    served: tuple[str, fake_providers.Provider], thirty: Path, tmp_path: Path
) -> None:
    provider, fake = served
    fake.lose_next = LOST[provider]
    engine.execute(_plan(tmp_path, thirty, provider, fake.fake.url))
    records = _records(str(next((tmp_path / "runs").iterdir())))
    assert fake.creates == 1 and fake.lists >= 1, "looked up in the batch list, not sent again"
    assert len(records) == ROWS and set(fake.sent.values()) == {1}
    assert all(r["error"] is None and r["batch_id"].endswith("batch_1") for r in records.values())


def test_a_lookup_that_fails_keeps_the_batch_counted_and_the_resume_adopts_it(
    thirty: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Anthropic knows a batch by its time and request count; its list down, the run stops and keeps the intent."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    with FakeVendor() as server:
        claude = fake_providers.Anthropic(server, open_dataset(str(thirty)), KEY)
        claude.lose_next = LOST["anthropic"]
        server.on("GET", "/v1/messages/batches", Reply(500, {"error": {"type": "api_error"}}))
        plan = _plan(tmp_path, thirty, "anthropic", server.url)
        with pytest.raises(RunStopped, match=r"may have been accepted.*worst case counted against the budget"):
            engine.execute(plan)
        [intent] = files.live(plan.folder.url)
        assert files.intent(intent) and intent["worst_usd"] and len(intent["documents"]) == ROWS
        server.on("GET", "/v1/messages/batches", claude.list_batches)
        resumed = engine.plan_resume(plan.folder.url)
        assert any("its create unanswered" in line for line in resumed.lines())
        engine.execute(resumed)
    records = _records(plan.folder.url)
    assert claude.creates == 1 and len(records) == ROWS and set(claude.sent.values()) == {1}
    assert not files.live(plan.folder.url)


def test_a_batch_file_storage_refuses_goes_to_the_spill_and_the_resume_collects_it(
    thirty: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The run folder refuses the batch's handle (its intent went in): exit 75, nothing bought twice."""
    monkeypatch.setenv("GEMINI_API_KEY", KEY)
    monkeypatch.setenv(spill.SPILL_ENV, str(tmp_path / "spill"))
    written = files.write

    def refusing(folder_url: str, batch: files.BatchFile) -> None:
        if not files.intent(batch):
            raise StorageDown("cannot write batches/...: the storage kept failing for 600 s")
        written(folder_url, batch)

    with FakeVendor() as server:
        gemini = fake_providers.Google(server, open_dataset(str(thirty)), KEY)
        plan = _plan(tmp_path, thirty, "google", server.url)
        monkeypatch.setattr(files, "write", refusing)
        with pytest.raises(StorageStopped, match="1 provider batches not saved are kept in") as stopped:
            engine.execute(plan)
        assert stopped.value.exit_code == 75
        monkeypatch.setattr(files, "write", written)
        resumed = engine.plan_resume(plan.folder.url)
        assert any("1 provider batches kept in the spill folder" in line for line in resumed.lines())
        engine.execute(resumed)
    records = _records(plan.folder.url)
    assert gemini.creates == 1 and len(records) == ROWS and set(gemini.sent.values()) == {1}
    assert not (tmp_path / "spill").exists() or not any((tmp_path / "spill").rglob("*.json"))


@pytest.mark.parametrize(
    ("provider", "code", "stops"),
    [("openai", "invalid_json_line", False), ("google", 3, False), ("openai", "token_limit_exceeded", True),
     ("google", 8, True)],
)  # fmt: skip
def test_a_batch_failing_as_a_whole_records_the_providers_reason_once_or_stops_for_a_limit(
    provider: str, code: Any, stops: bool, thirty: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(fake_providers.KEYS[provider], KEY)
    with FakeVendor() as server:
        fake = fake_providers.PROVIDERS[provider](server, open_dataset(str(thirty)), KEY)
        fake.fail_next = (code, "the provider's reason")
        plan = _plan(tmp_path, thirty, provider, server.url)
        expected, said = (
            (RunStopped, rf"refused a batch for a limit.*{code}: ") if stops else (NothingAnswered, "whole")
        )
        with pytest.raises(expected, match=said):
            engine.execute(plan)
    records = _records(plan.folder.url)
    assert fake.creates == 1, "not uploaded and created again"
    if stops:  # asked again by the resume, as on the direct path
        assert not records and not files.live(plan.folder.url)
        return
    assert len(records) == ROWS and all(r["error"]["status"] == 400 for r in records.values())
    assert all(f"{code}: the provider's reason" in r["error"]["message"] for r in records.values())


@pytest.mark.parametrize(
    ("provider", "answer"),
    [
        ("google", Reply(400, {"error": {"code": 400, "message": "API key not valid. Please pass a valid API key.",
                                         "status": "INVALID_ARGUMENT", "details": [
                                             {"@type": "type.googleapis.com/google.rpc.ErrorInfo",
                                              "reason": "API_KEY_INVALID", "domain": "googleapis.com"}]}})),
        ("anthropic", Reply(403, {"type": "error", "error": {"type": "permission_error",
                                                             "message": "Your API key does not have permission"}})),
        ("openai", Reply(403, {"error": {"message": "unsupported_country_region_territory"}},
                         {"x-should-retry": "false"})),
    ],
)  # fmt: skip
def test_a_bad_key_or_a_403_stops_the_system_naming_the_key_variable(
    provider: str, answer: Reply, thirty: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(fake_providers.KEYS[provider], KEY)
    dataset = open_dataset(str(thirty))
    row = dataset.rows[0]
    with FakeVendor() as server:
        fake_providers.PROVIDERS[provider](server, dataset, KEY)
        path = {"openai": "/v1/chat/completions", "anthropic": "/v1/messages"}.get(provider)
        if path is None:
            server.prefixes[("POST", "/v1beta/models/")][:0] = [answer]
        else:
            server.first("POST", path, answer)
        adapter = get(fake_providers.MODELS[provider], _options(provider, server.url))
        with pytest.raises(AccountFailure) as refused:
            predict(adapter, Question(dataset.document(row), question_schema(dict(row.schema))), policy=FAST)
    assert fake_providers.KEYS[provider] in str(refused.value) and "\n" not in str(refused.value)


@pytest.mark.parametrize("temperature", [None, 0.3])
def test_the_direct_and_the_batch_request_are_one_body(
    served: tuple[str, fake_providers.Provider], temperature: float | None, thirty: Path
) -> None:
    provider, fake = served
    dataset = open_dataset(str(thirty))
    row = dataset.rows[0]
    adapter = get(fake_providers.MODELS[provider], _options(provider, fake.fake.url, temperature=temperature))
    question = Question(dataset.document(row), question_schema(dict(row.schema)))
    assert predict(adapter, question, policy=FAST)["error"] is None
    [direct] = [r.json() for r in fake.fake.requests if r.method == "POST"]
    batched_adapter = get(
        fake_providers.MODELS[provider], _options(provider, fake.fake.url, temperature=temperature, batch=True)
    )
    batches = batched_adapter.batching()
    assert batches is not None
    entry = batches.entry("d", question.document, adapter.prepare_schema(question.schema))
    batched = entry.get("body") or entry.get("params") or entry["request"]
    assert json.dumps(batched, sort_keys=True) == json.dumps(direct, sort_keys=True)
    said = batched.get("temperature", batched.get("generationConfig", {}).get("temperature"))
    assert said == temperature
    assert adapter.options()["temperature"] == temperature


def test_anthropic_never_takes_a_batch_of_the_run_for_a_lost_one(thirty: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Known by time and size only, a lost batch must not be matched to the run's earlier batch of its size."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    dataset = open_dataset(str(thirty))
    with FakeVendor() as server:
        claude = fake_providers.Anthropic(server, dataset, KEY)
        batches = get("anthropic/claude-opus-5", _options("anthropic", server.url, batch=True)).batching()
        assert batches is not None
        rows = dataset.rows[:2]
        entries = [batches.entry(row.doc_id, dataset.document(row), question_schema(dict(row.schema))) for row in rows]
        since = time.time()
        deadline = Deadline(60, policy=FAST)
        handle = batches.create(entries, "first", deadline)
        assert batches.find("second", 2, since, frozenset({handle["batch_id"]}), deadline) is None
        assert batches.find("first", 2, since, frozenset(), deadline) == handle
        claude.new_batch([(e["custom_id"], e["params"]) for e in entries])
        with pytest.raises(SystemFailed, match="2 batches of 2 requests"):
            batches.find("third", 2, since, frozenset(), deadline)
