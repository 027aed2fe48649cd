"""Google's Gemini API (`POST /v1beta/models/{model}:generateContent`): the PDF as `inline_data`,
the schema as `generationConfig.responseJsonSchema` with a JSON response type; and Batch Mode
(`:batchGenerateContent` with the requests inline, polled at `/v1beta/batches/{id}`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from oeb.systems._reading import reading
from oeb.systems.base import Deadline
from oeb.systems.providers import (
    BATCH_TIMEOUT,
    SYSTEM_PROMPT,
    BatchLimits,
    BatchStatus,
    Provider,
    Reply,
    Results,
    count,
    pdf_base64,
    request_failure,
    user_text,
)

ENDED = frozenset({"BATCH_STATE_SUCCEEDED", "BATCH_STATE_FAILED", "BATCH_STATE_CANCELLED", "BATCH_STATE_EXPIRED"})
RPC_STATUS = {3: 400, 4: 504, 7: 403, 8: 429, 13: 500, 14: 503, 16: 401}
"""An inline response's `error.code` (a google.rpc code) as the HTTP status of the same failure."""


class Google(Provider):
    name = "google"
    key = "GEMINI_API_KEY"
    base_url = "https://generativelanguage.googleapis.com"
    limits = BatchLimits(
        1_000_000, 20_000_000, "https://ai.google.dev/gemini-api/docs/batch-mode (inline requests: 20 MB)"
    )
    batch_path = "/v1beta/{batch_id}"
    tokens_per_page = 560
    """Gemini counts a PDF page as an image of 258 tokens, plus the text it extracts."""

    def headers(self) -> dict[str, str]:
        return {"x-goog-api-key": self.api_key}

    def request(self, document: Path, schema: dict[str, Any], temperature: float = 0.0) -> dict[str, Any]:
        return {
            "systemInstruction": {"parts": [{"text": SYSTEM_PROMPT}]},
            "contents": [
                {
                    "role": "user",
                    "parts": [
                        {"inline_data": {"mime_type": "application/pdf", "data": pdf_base64(document)}},
                        {"text": user_text(schema)},
                    ],
                }
            ],
            "generationConfig": {
                "maxOutputTokens": self.max_tokens,
                "temperature": temperature,
                "responseMimeType": "application/json",
                "responseJsonSchema": schema,
            },
        }

    def complete(self, document: Path, schema: dict[str, Any], temperature: float, deadline: Deadline) -> Reply:
        with self.session(deadline) as http:
            answer = http.json(
                "POST",
                f"/v1beta/models/{self.model}:generateContent",
                "the generation",
                timeout=deadline.remaining(),
                json=self.request(document, schema, temperature),
            )
        return read_generation(answer)

    def entry(self, custom_id: str, document: Path, schema: dict[str, Any]) -> dict[str, Any]:
        return {"request": self.request(document, schema), "metadata": {"key": custom_id}}

    def create(self, entries: list[dict[str, Any]], deadline: Deadline) -> dict[str, Any]:
        body = {"batch": {"display_name": "oeb", "input_config": {"requests": {"requests": entries}}}}
        with self.session(deadline) as http:
            path = f"/v1beta/models/{self.model}:batchGenerateContent"
            created = http.json("POST", path, "the batch", timeout=BATCH_TIMEOUT, json=body)
        with reading("the batch answer", status=200, body=created):
            return {"batch_id": str(created["name"])}

    def status(self, handle: dict[str, Any], deadline: Deadline) -> BatchStatus:
        batch = self.batch(handle, deadline)
        metadata = batch.get("metadata") or {}
        state = str(metadata.get("state"))
        return BatchStatus(state, state in ENDED, metadata.get("batchStats") or {})

    def results(self, handle: dict[str, Any], deadline: Deadline) -> Results:
        batch = self.batch(handle, deadline)
        found: Results = {}
        responses = ((batch.get("response") or {}).get("inlinedResponses") or {}).get("inlinedResponses") or []
        for item in responses:
            with reading("a batch response", status=200, body=item):
                key = str(item["metadata"]["key"])
                if item.get("error"):
                    error = item["error"]
                    status = RPC_STATUS.get(error.get("code"))
                    found[key] = request_failure("the batch request failed", status, str(error.get("message")), item)
                else:
                    found[key] = read_generation(item["response"])
        return found


def read_generation(answer: Any) -> Reply:
    """A `GenerateContentResponse`: the first candidate's text; thinking tokens are billed as output."""
    with reading("the generation", status=200, body=answer):
        usage = answer.get("usageMetadata") or {}
        out = [count(usage.get(key)) for key in ("candidatesTokenCount", "thoughtsTokenCount")]
        common: dict[str, Any] = {
            "tokens_in": count(usage.get("promptTokenCount")),
            "tokens_out": None if out[0] is None else out[0] + (out[1] or 0),
            "usage": usage or None,
            "model": answer.get("modelVersion"),
            "id": answer.get("responseId"),
        }
        candidates = answer.get("candidates") or []
    if not candidates:
        reason = (answer.get("promptFeedback") or {}).get("blockReason")
        return Reply(None, error=f"the provider returned no candidates (blockReason {reason})", **common)
    candidate = candidates[0]
    finish = candidate.get("finishReason")
    parts = (candidate.get("content") or {}).get("parts") or []
    text = "".join(str(part.get("text", "")) for part in parts if isinstance(part, dict) and not part.get("thought"))
    return Reply(text or None, finish=finish, truncated=finish == "MAX_TOKENS", **common)
