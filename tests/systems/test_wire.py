"""What each adapter puts on the wire and how it reads each vendor's particular answers: headers,
bodies, the schema as reshaped for that vendor, and vendor-specific quirks."""

from __future__ import annotations

import base64
import json

import pytest

from oeb.systems import schema as dialects
from oeb.systems.schema import question_schema
from systems.conftest import KEY, PDF, Ask
from systems.fake_vendor import FakeVendor, Reply
from systems.vendors import ANSWER, AZURE_BASE, SCHEMA, VENDORS, completion

CASES = {v.system: v for v in VENDORS}
SENT = question_schema(SCHEMA)
DATA_URL = "data:application/pdf;base64," + base64.b64encode(PDF).decode()


def no_choices(reason: str) -> Reply:
    return Reply(200, {**completion(None), "choices": None, "error": {"message": reason}})


@pytest.fixture
def on(fake: FakeVendor, monkeypatch: pytest.MonkeyPatch):
    """Install one vendor's happy path and key by name."""

    def install(system: str):
        case = CASES[system]
        case.install(fake)
        monkeypatch.setenv(case.key, KEY)
        return case

    return install


def test_datalab_sends_its_key_and_an_ordered_multipart_form(fake: FakeVendor, on, ask: Ask) -> None:
    record = ask(on("datalab"), mode="accurate")
    upload = fake.sent("POST", "/api/v1/extract")[0]
    assert upload.headers["x-api-key"] == KEY
    form = upload.form()
    assert list(form) == ["page_schema", "extraction_mode", "output_format", "file"]
    assert json.loads(form["page_schema"][2]) == dialects.optional_by_omission(SENT) == record["sent"]
    assert record["sent"]["required"] == ["invoice"]  # nullable `total` is optional by omission instead
    assert (form["extraction_mode"][2], form["output_format"][2]) == (b"accurate", b"json")
    assert form["file"] == ("invoice_4417.pdf", "application/pdf", PDF)
    assert record["job_id"] == "r1"


def test_datalab_fetches_billing_once_more_after_completion(fake: FakeVendor, on, ask: Ask) -> None:
    on("datalab")
    done = {"status": "complete", "extraction_schema_json": ANSWER, "total_cost": None}
    fake.on("GET", "/api/v1/extract/r1", Reply(200, done), Reply(200, {**done, "total_cost": 140}))
    record = ask(CASES["datalab"])
    assert record["cost"]["usd"] == 1.4
    assert record["raw"]["total_cost"] is None  # raw is the body that said complete, not the re-fetch


def test_datalab_insufficient_credits_at_200_stops_the_run(fake: FakeVendor, on, ask: Ask) -> None:
    on("datalab")
    fake.on("POST", "/api/v1/extract", Reply(200, {"error": "Insufficient credits on this account"}))
    with pytest.raises(PermissionError):
        ask(CASES["datalab"])


def test_reducto_submits_deep_extract_and_merges_passes(fake: FakeVendor, on, ask: Ask) -> None:
    record = ask(on("reducto"), system_prompt="Be exact.")
    assert fake.sent("POST", "/upload")[0].form()["file"] == ("invoice_4417.pdf", "application/pdf", PDF)
    submitted = fake.sent("POST", "/extract_async")[0]
    assert submitted.headers["authorization"] == f"Bearer {KEY}"
    assert submitted.json() == {
        "async": {"priority": False},
        "input": "reducto://f1",
        "parsing": {"enhance": {"agentic": [{"scope": "table", "mode": "max"}]}},
        "instructions": {"schema": SENT, "system_prompt": "Be exact."},
        "settings": {
            "deep_extract": True,
            "citations": {"enabled": False},
            "alpha": {"deep_extract_model": "v2"},
        },
    }
    assert record["output"] == ANSWER  # {"total": null} of pass 1 replaced by pass 2's value
    assert (record["raw"]["latency_s"], record["job_id"]) == (12.5, "j1")
    assert fake.sent("GET", "/jobs")[0].query == {"limit": "200"}


def test_reducto_sends_no_system_prompt_when_empty_and_survives_no_job_listing(fake: FakeVendor, on, ask: Ask) -> None:
    on("reducto")
    fake.on("GET", "/jobs", Reply(500, "listing down"))
    record = ask(CASES["reducto"])
    assert "system_prompt" not in fake.sent("POST", "/extract_async")[0].json()["instructions"]
    assert (record["error"], record["raw"]["latency_s"]) == (None, None)


def test_extend_renames_id_sends_its_headers_and_restores_ids(
    fake: FakeVendor, on, ask: Ask, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EXTEND_WORKSPACE_ID", "ws_9")
    on("extend")
    schema = {**SCHEMA, "properties": {**SCHEMA["properties"], "id": {"type": "string"}}}
    done = {"id": "exr_1", "status": "PROCESSED", "output": {"value": {**ANSWER, "id__": "X"}}}
    fake.on("GET", "/extract_runs/exr_1", Reply(200, done))
    record = ask(CASES["extend"], schema=schema)
    created = fake.sent("POST", "/extract_runs")[0]
    assert created.headers["x-extend-api-version"] == "2026-02-09"
    assert created.headers["x-extend-workspace-id"] == "ws_9"
    body = created.json()
    assert body["file"] == {"id": "file_1"}
    assert body["config"]["advancedOptions"] == {"arrayStrategy": {"type": "large_array_max_context"}}
    assert "id__" in body["config"]["schema"]["properties"]
    assert body["config"]["schema"] == record["sent"] == dialects.extend_dialect(question_schema(schema))
    assert record["output"] == {**ANSWER, "id": "X"}


def test_llamaextract_finds_its_project_and_records_tier_and_latency(fake: FakeVendor, on, ask: Ask) -> None:
    record = ask(on("llamaextract"), tier="agentic")
    form = fake.sent("POST", "/api/v1/beta/files")[0].form()
    assert form["file"] == ("document.pdf", "application/pdf", PDF)
    assert form["purpose"][2] == b"extract"
    submitted = fake.sent("POST", "/api/v2/extract")[0]
    assert submitted.query == {"project_id": "proj1"}
    assert submitted.json() == {
        "file_input": "f1",
        "configuration": {"tier": "agentic", "extraction_target": "per_doc", "data_schema": record["sent"]},
    }
    assert "$schema" not in record["sent"]
    assert fake.sent("GET", "/api/v2/extract/j1")[0].query == {"project_id": "proj1", "expand": "metadata"}
    assert (record["raw"]["tier"], record["raw"]["server_latency_s"]) == ("agentic", 12.5)


def test_llamaextract_accepts_the_llamaparse_key_as_a_stand_in(
    fake: FakeVendor, on, ask: Ask, monkeypatch: pytest.MonkeyPatch
) -> None:
    on("llamaextract")
    monkeypatch.delenv("LLAMA_CLOUD_API_KEY")
    monkeypatch.setenv("LLAMAPARSE_API_KEY", KEY)
    assert ask(CASES["llamaextract"])["error"] is None
    assert fake.sent("GET", "/api/v1/projects")[0].headers["authorization"] == f"Bearer {KEY}"


def test_mistral_sends_the_pdf_inline_with_a_json_schema_annotation(fake: FakeVendor, on, ask: Ask) -> None:
    record = ask(on("mistral"))
    request = fake.sent("POST", "/v1/ocr")[0]
    assert request.headers["authorization"] == f"Bearer {KEY}"
    assert request.json() == {
        "model": "mistral-ocr-latest",
        "document": {
            "type": "document_url",
            "document_url": "data:application/pdf;base64," + base64.b64encode(PDF).decode(),
        },
        "document_annotation_format": {
            "type": "json_schema",
            "json_schema": {"name": "extraction", "schema": SENT, "strict": False},
        },
    }
    assert record["job_id"] is None


def test_azure_creates_the_analyzer_once_and_strips_value_nodes(fake: FakeVendor, on, ask: Ask) -> None:
    record = ask(on("azure-cu"))
    again = ask(CASES["azure-cu"])
    assert len(fake.sent("PUT", AZURE_BASE)) == 1  # cached for the process
    created = fake.sent("PUT", AZURE_BASE)[0]
    assert created.headers["ocp-apim-subscription-key"] == KEY
    assert created.query == {"api-version": "2025-05-01-preview"}
    assert created.json() == {
        "baseAnalyzerId": "prebuilt-documentAnalyzer",
        "config": {"returnDetails": False, "completion": "gpt-4.1-mini"},
        "fieldSchema": dialects.azure_field_schema(SENT),
    }
    analyze = fake.sent("POST", f"{AZURE_BASE}:analyze")[0]
    assert (analyze.headers["content-type"], analyze.body) == ("application/octet-stream", PDF)
    assert record["output"] == again["output"] == ANSWER
    assert record["job_id"] == AZURE_BASE.rsplit("/", 1)[1]


def test_azure_treats_409_as_an_existing_analyzer(fake: FakeVendor, on, ask: Ask) -> None:
    on("azure-cu")
    fake.on("PUT", AZURE_BASE, Reply(409, {"error": {"code": "Conflict"}}))
    assert ask(CASES["azure-cu"])["error"] is None
    assert not fake.sent("GET", "/ops/op0")


def test_azure_without_an_operation_location_fails(fake: FakeVendor, on, ask: Ask) -> None:
    on("azure-cu")
    fake.on("POST", f"{AZURE_BASE}:analyze", Reply(202, {}))
    record = ask(CASES["azure-cu"])
    assert record["error"]["type"] == "SystemFailed"
    assert "Operation-Location" in record["error"]["message"]


def test_llm_request_follows_the_openrouter_shape(fake: FakeVendor, on, ask: Ask) -> None:
    record = ask(on("test/fake-model"))
    request = fake.sent("POST", "/api/v1/chat/completions")[0]
    assert request.headers["authorization"] == f"Bearer {KEY}"
    body = request.json()
    assert (body["model"], body["max_tokens"]) == ("test/fake-model", 64000)
    assert "temperature" not in body  # the provider's default unless the option sets one
    assert body["usage"] == {"include": True}
    assert body["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "extraction", "schema": SENT, "strict": False},
    }
    system, user = body["messages"]
    assert system["role"] == "system"
    file, text = user["content"]
    assert file["file"] == {
        "filename": "invoice_4417.pdf",
        "file_data": "data:application/pdf;base64," + base64.b64encode(PDF).decode(),
    }
    assert text["text"].endswith(f"```json\n{json.dumps(SENT, indent=2)}\n```")
    assert record["raw"]["calls"][0]["usage"]["cost"] == 0.0123
    assert record["raw"]["model"] == "test/fake-model"


def test_llm_asks_again_the_same_request_and_sums_every_completions_cost(fake: FakeVendor, on, ask: Ask) -> None:
    on("test/fake-model")
    route = ("POST", "/api/v1/chat/completions")
    fake.first(*route, no_choices("provider hiccup"))
    fake.first(*route, Reply(200, completion("not json at all")))
    record = ask(CASES["test/fake-model"])
    assert record["output"] == ANSWER
    bodies = [r.json() for r in fake.sent(*route)]
    assert len(bodies) == 3 and bodies[0] == bodies[1] == bodies[2], "one request, as a batch line sends it"
    assert (record["cost"]["usd"], record["cost"]["tokens_in"], record["cost"]["attempts"]) == (0.0369, 300, 1)
    assert record["raw"]["calls"][0]["text"] == "not json at all"


def test_llm_gives_up_after_its_attempts_with_the_last_reason(fake: FakeVendor, on, ask: Ask) -> None:
    on("test/fake-model")
    fake.on(
        "POST",
        "/api/v1/chat/completions",
        no_choices("no capacity"),
    )
    record = ask(CASES["test/fake-model"], attempts=2)
    assert record["error"]["status"] == 200
    assert "all 2 attempts" in record["error"]["message"]
    assert record["error"]["message"].endswith("no capacity")
    assert record["cost"]["usd"] == 0.0246


def test_llm_refuses_a_model_option_other_than_its_name(on) -> None:
    from oeb.systems import OptionError, get

    with pytest.raises(OptionError, match="x/y"):
        get("openai/gpt-5.6-sol", {"model": "x/y"})
    assert get("google/gemini-3.7-flash").options()["max_output_tokens"] == 65536
    assert get("anthropic/claude-opus-5").label == "anthropic__claude-opus-5"
