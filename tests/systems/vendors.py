"""Route tables: each shipped vendor's wire protocol for the generic fake.

Each `Vendor` installs the happy path (one "still working" poll, then the answer) and names the
route where faults go (`submit`: the first request whose failure makes the whole attempt restart),
the route that carries the answer (`finish`), and what a failed job and a malformed answer look
like for that vendor, with the failure they must be recorded as.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from oeb.systems.azure_cu import AzureCU
from oeb.systems.schema import azure_field_schema, question_schema
from systems.fake_vendor import FakeVendor, Reply

ANSWER = {"invoice": "A-1", "total": 2.5}
SCHEMA = {
    "$schema": "http://json-schema.org/draft-07/schema#",
    "type": "object",
    "title": "Invoice",
    "required": ["invoice", "total"],
    "properties": {
        "invoice": {"type": "string", "description": "invoice number"},
        "total": {"type": ["number", "null"], "default": 0},
    },
}


@dataclass
class Vendor:
    system: str
    key: str
    install: Callable[[FakeVendor], None]
    submit: tuple[str, str]
    finish: tuple[str, str]
    failed: Reply
    failed_as: tuple[str, int | None]
    malformed: Reply
    malformed_as: str
    cost: dict[str, Any]
    options: Callable[[str], dict[str, Any]] = lambda url: {"base_url": url, "poll_interval": 0.01}
    polls: bool = True
    error_bodies: bool = True
    """Whether a refusal's body is kept as the record's `raw` (the LLM path keeps only the message)."""

    def __str__(self) -> str:
        return self.system


def _datalab(fake: FakeVendor) -> None:
    fake.on("POST", "/api/v1/extract", Reply(200, {"request_id": "r1", "request_check_url": "ignored"}))
    done = {
        "status": "complete",
        "extraction_schema_json": json.dumps(ANSWER),
        "cost_breakdown": {"final_cost_cents": 140},
    }
    fake.on("GET", "/api/v1/extract/r1", Reply(200, {"status": "processing"}), Reply(200, done))


def _reducto(fake: FakeVendor) -> None:
    fake.on("POST", "/upload", Reply(200, {"file_id": "reducto://f1"}))
    fake.on("POST", "/extract_async", Reply(200, {"job_id": "j1"}))
    passes = [{"invoice": "A-1", "total": None}, {"total": 2.5}]
    done = {"status": "Completed", "result": {"usage": {"num_pages": 2, "credits": 8}, "result": passes}}
    fake.on("GET", "/job/j1", Reply(200, {"status": "Pending", "result": None}), Reply(200, done))
    fake.on("GET", "/jobs", Reply(200, {"jobs": [{"job_id": "j0", "duration": 1}, {"job_id": "j1", "duration": 12.5}]}))


def _extend(fake: FakeVendor) -> None:
    fake.on("POST", "/files/upload", Reply(200, {"object": "file", "id": "file_1"}))
    fake.on("POST", "/extract_runs", Reply(200, {"object": "extract_run", "id": "exr_1", "status": "PROCESSING"}))
    done = {
        "object": "extract_run",
        "id": "exr_1",
        "status": "PROCESSED",
        "output": {"value": ANSWER, "metadata": {"total": {"confidence": 0.9}}},
        "usage": {"totalCredits": 16},
    }
    fake.on(
        "GET",
        "/extract_runs/exr_1",
        Reply(200, {"extractRun": {"id": "exr_1", "status": "processing"}}),
        Reply(200, done),
    )


def _llamaextract(fake: FakeVendor) -> None:
    fake.on("GET", "/api/v1/projects", Reply(200, [{"id": "proj1"}]))
    fake.on("POST", "/api/v1/beta/files", Reply(200, {"id": "f1"}))
    fake.on("POST", "/api/v2/extract", Reply(200, {"id": "j1", "status": "PENDING"}))
    done = {
        "id": "j1",
        "status": "SUCCESS",
        "extract_result": ANSWER,
        "created_at": "2026-11-29T10:00:00Z",
        "updated_at": "2026-11-29T10:00:12.5Z",
        "total_cost": 140,
    }
    fake.on("GET", "/api/v2/extract/j1", Reply(200, {"status": "RUNNING"}), Reply(200, done))


def _mistral(fake: FakeVendor) -> None:
    answer = {
        "model": "mistral-ocr-2512",
        "pages": [],
        "document_annotation": json.dumps(ANSWER),
        "usage_info": {"pages_processed": 2, "cost": 0.004},
    }
    fake.on("POST", "/v1/ocr", Reply(200, answer))


AZURE_ANALYZER = AzureCU().analyzer_id(azure_field_schema(question_schema(SCHEMA)))
AZURE_BASE = f"/contentunderstanding/analyzers/{AZURE_ANALYZER}"


def _azure(fake: FakeVendor) -> None:
    fake.on("PUT", AZURE_BASE, Reply(201, {}, {"Operation-Location": f"{fake.url}/ops/op0?api-version=v"}))
    fake.on("GET", "/ops/op0", Reply(200, {"status": "Running"}), Reply(200, {"status": "Succeeded"}))
    result = f"{fake.url}/contentunderstanding/analyzerResults/r1?api-version=v"
    fake.on("POST", f"{AZURE_BASE}:analyze", Reply(202, {}, {"Operation-Location": result}))
    fields = {
        "invoice": {"type": "string", "valueString": "A-1", "confidence": 0.8},
        "total": {"type": "number", "valueNumber": 2.5, "spans": [{"offset": 1}]},
    }
    done = {"status": "Succeeded", "result": {"contents": [{"fields": fields}]}}
    fake.on("GET", "/contentunderstanding/analyzerResults/r1", Reply(200, {"status": "Running"}), Reply(200, done))


def completion(content: str | None, finish: str = "stop", cost: float = 0.0123) -> dict[str, Any]:
    return {
        "id": "gen-1",
        "object": "chat.completion",
        "created": 1,
        "model": "test/fake-model",
        "choices": [{"index": 0, "finish_reason": finish, "message": {"role": "assistant", "content": content}}],
        "usage": {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110, "cost": cost},
    }


def _llm(fake: FakeVendor) -> None:
    fake.on("POST", "/api/v1/chat/completions", Reply(200, completion(f"```json\n{json.dumps(ANSWER)}\n```")))


VENDORS = [
    Vendor(
        "datalab",
        "DATALAB_API_KEY",
        _datalab,
        submit=("POST", "/api/v1/extract"),
        finish=("GET", "/api/v1/extract/r1"),
        failed=Reply(200, {"status": "error", "error": "the PDF is encrypted"}),
        failed_as=("SystemFailed", 200),
        malformed=Reply(200, {"status": "complete", "total_cost": 3}),
        malformed_as="Unreadable",
        cost={"usd": 1.4, "source": "cost_breakdown.final_cost_cents"},
    ),
    Vendor(
        "reducto",
        "REDUCTO_API_KEY",
        _reducto,
        submit=("POST", "/extract_async"),
        finish=("GET", "/job/j1"),
        failed=Reply(200, {"status": "Failed", "result": None, "reason": "bad pdf"}),
        failed_as=("SystemFailed", 200),
        malformed=Reply(200, {"status": "Completed", "result": {"result": []}}),
        malformed_as="Unreadable",
        cost={"credits": 8, "source": "usage.credits"},
    ),
    Vendor(
        "extend",
        "EXTEND_API_KEY",
        _extend,
        submit=("POST", "/extract_runs"),
        finish=("GET", "/extract_runs/exr_1"),
        failed=Reply(200, {"id": "exr_1", "status": "FAILED", "failureReason": "bad pdf"}),
        failed_as=("Unreadable", None),
        malformed=Reply(200, {"id": "exr_1", "status": "PROCESSED", "output": {"value": []}}),
        malformed_as="Unreadable",
        cost={"credits": 16, "source": "usage.totalCredits"},
    ),
    Vendor(
        "llamaextract",
        "LLAMA_CLOUD_API_KEY",
        _llamaextract,
        submit=("POST", "/api/v2/extract"),
        finish=("GET", "/api/v2/extract/j1"),
        failed=Reply(200, {"status": "ERROR", "error_message": "the PDF is encrypted"}),
        failed_as=("SystemFailed", 200),
        malformed=Reply(200, {"status": "SUCCESS", "extract_result": None}),
        malformed_as="Unreadable",
        cost={"usd": 1.4, "source": "total_cost=140"},
    ),
    Vendor(
        "mistral",
        "MISTRAL_API_KEY",
        _mistral,
        submit=("POST", "/v1/ocr"),
        finish=("POST", "/v1/ocr"),
        failed=Reply(400, {"message": "the PDF is encrypted"}),
        failed_as=("SystemFailed", 400),
        malformed=Reply(200, {"model": "m", "document_annotation": None}),
        malformed_as="Unreadable",
        cost={"usd": 0.004, "source": "usage_info.cost"},
        options=lambda url: {"base_url": url},
        polls=False,
    ),
    Vendor(
        "azure-cu",
        "AZURE_CU_KEY",
        _azure,
        submit=("POST", f"{AZURE_BASE}:analyze"),
        finish=("GET", "/contentunderstanding/analyzerResults/r1"),
        failed=Reply(200, {"status": "Failed", "error": {"code": "InvalidContent"}}),
        failed_as=("SystemFailed", 200),
        malformed=Reply(200, "<html>not json</html>"),
        malformed_as="SystemFailed",
        cost={"usd": None, "credits": None},
        options=lambda url: {"endpoint": url, "poll_interval": 0.01},
    ),
    Vendor(
        "test/fake-model",
        "OPENROUTER_API_KEY",
        _llm,
        submit=("POST", "/api/v1/chat/completions"),
        finish=("POST", "/api/v1/chat/completions"),
        failed=Reply(200, completion('{"invoice": "A-', finish="length")),
        failed_as=("SystemFailed", 200),
        malformed=Reply(200, completion("I cannot read this document.")),
        malformed_as="SystemFailed",
        cost={"usd": 0.0123, "source": "usage.cost", "tokens_in": 100, "tokens_out": 10},
        options=lambda url: {"base_url": f"{url}/api/v1"},
        polls=False,
        error_bodies=False,
    ),
]
