"""Google's Gemini API (`POST /v1beta/models/{model}:generateContent`): the PDF as `inline_data`,
the schema as `generationConfig.responseJsonSchema` with a JSON response type; and Batch Mode
(`:batchGenerateContent` with the requests inline, polled at `/v1beta/batches/{id}`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from oeb.systems._http import Session
from oeb.systems._reading import reading
from oeb.systems.calls import Deadline
from oeb.systems.errors import SystemFailed
from oeb.systems.providers import (
    BATCH_TIMEOUT,
    FIND_PAGES,
    SYSTEM_PROMPT,
    BatchLimits,
    BatchStatus,
    Provider,
    Reply,
    Results,
    batch_failure,
    count,
    jsonl,
    pdf_base64,
    request_failure,
    user_text,
)

ENDED = frozenset({"BATCH_STATE_SUCCEEDED", "BATCH_STATE_FAILED", "BATCH_STATE_CANCELLED", "BATCH_STATE_EXPIRED"})
INLINE_BYTES = 20_000_000
"""Google's limit on the requests sent inline with the batch; a larger batch goes as a file."""
DISPLAY_PREFIX = "oeb-"


def display_name(tag: str) -> str:
    """A batch's display name: unique, so `find` knows a batch whose create answer was lost."""
    return DISPLAY_PREFIX + tag


RPC_STATUS = {3: 400, 4: 504, 7: 403, 8: 429, 13: 500, 14: 503, 16: 401}
"""An inline response's `error.code` (a google.rpc code) as the HTTP status of the same failure."""


class Google(Provider):
    name = "google"
    key = "GEMINI_API_KEY"
    base_url = "https://generativelanguage.googleapis.com"
    limits = BatchLimits(
        1_000_000,
        200_000_000,
        "https://ai.google.dev/gemini-api/docs/batch-mode: inline up to 20 MB, a JSONL file up to 2 GB (oeb cuts "
        "at 200 MB to bound its memory)",
    )
    batch_path = "/v1beta/{batch_id}"
    tokens_per_page = 560
    """Gemini counts a PDF page as an image of 258 tokens, plus the text it extracts."""

    def headers(self) -> dict[str, str]:
        return {"x-goog-api-key": self.api_key}

    def request(self, document: Path, schema: dict[str, Any]) -> dict[str, Any]:
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
                **self.sampling(),
                "responseMimeType": "application/json",
                "responseJsonSchema": schema,
            },
        }

    def complete(self, document: Path, schema: dict[str, Any], deadline: Deadline) -> Reply:
        with self.session(deadline) as http:
            answer = http.json(
                "POST",
                f"/v1beta/models/{self.model}:generateContent",
                "the generation",
                timeout=deadline.remaining(),
                json=self.request(document, schema),
            )
        return read_generation(answer)

    def entry(self, custom_id: str, document: Path, schema: dict[str, Any]) -> dict[str, Any]:
        return {"request": self.request(document, schema), "metadata": {"key": custom_id}}

    def create(self, entries: list[dict[str, Any]], tag: str, deadline: Deadline) -> dict[str, Any]:
        """Inline when the requests fit 20 MB; else as a JSONL file uploaded through the File API."""
        lines = b"".join(
            json.dumps({"key": e["metadata"]["key"], "request": e["request"]}).encode() + b"\n" for e in entries
        )
        with self.session(deadline) as http:
            if len(lines) <= INLINE_BYTES:
                source: dict[str, Any] = {"requests": {"requests": entries}}
            else:
                source = {"file_name": self._upload(http, lines)}
            body = {"batch": {"display_name": display_name(tag), "input_config": source}}
            path = f"/v1beta/models/{self.model}:batchGenerateContent"
            created = http.json("POST", path, "the batch", timeout=BATCH_TIMEOUT, json=body)
        with reading("the batch answer", status=200, body=created):
            return {"batch_id": str(created["name"])}

    def _upload(self, http: Session, content: bytes) -> str:
        """A file through the File API's resumable upload (start, then upload and finalize); its name."""
        start = {
            "X-Goog-Upload-Protocol": "resumable",
            "X-Goog-Upload-Command": "start",
            "X-Goog-Upload-Header-Content-Length": str(len(content)),
            "X-Goog-Upload-Header-Content-Type": "application/jsonl",
        }
        begun = http.send(
            "POST", "/upload/v1beta/files", "the batch upload", timeout=BATCH_TIMEOUT, headers=start,
            json={"file": {"display_name": "oeb-batch"}},
        )  # fmt: skip
        url = begun.headers.get("x-goog-upload-url")
        if not url:
            raise SystemFailed("the File API gave no upload URL", status=begun.status_code, body=begun.text)
        finish = {"X-Goog-Upload-Command": "upload, finalize", "X-Goog-Upload-Offset": "0"}
        uploaded = http.json("POST", url, "the batch upload", timeout=BATCH_TIMEOUT, headers=finish, content=content)
        with reading("the upload answer", status=200, body=uploaded):
            return str(uploaded["file"]["name"])

    def find(
        self, tag: str, requests: int, since: float, known: frozenset[str], deadline: Deadline
    ) -> dict[str, Any] | None:
        """The batch of `batches.list` whose display name is the tag's."""
        name, params = display_name(tag), {"pageSize": 100}
        with self.session(deadline) as http:
            for _ in range(FIND_PAGES):
                page = http.json("GET", "/v1beta/batches", "the batch list", timeout=BATCH_TIMEOUT, params=params)
                with reading("the batch list", status=200, body=page):
                    operations = [o for o in page.get("operations") or [] if isinstance(o, dict)]
                    for operation in operations:
                        if (operation.get("metadata") or {}).get("displayName") == name:
                            return {"batch_id": str(operation["name"])}
                token = page.get("nextPageToken")
                if not token or not operations:
                    return None
                params["pageToken"] = token
        raise SystemFailed(f"the batch list is longer than {FIND_PAGES} pages", status=None)

    def status(self, handle: dict[str, Any], deadline: Deadline) -> BatchStatus:
        batch = self.batch(handle, deadline)
        metadata = batch.get("metadata") or {}
        state = str(metadata.get("state"))
        failure = None
        error = batch.get("error")
        if isinstance(error, dict):  # the operation failed as a whole: a google.rpc.Status says why
            code = error.get("code")
            status = RPC_STATUS.get(code, 400) if isinstance(code, int) else 400
            failure = batch_failure(self.name, str(batch.get("name")), error.get("code"), error.get("message"), status)
        ended = state in ENDED or (failure is not None and bool(batch.get("done")))
        return BatchStatus(state, ended, metadata.get("batchStats") or {}, failure)

    def results(self, handle: dict[str, Any], deadline: Deadline) -> Results:
        response = self.batch(handle, deadline).get("response") or {}
        items: list[Any] = (response.get("inlinedResponses") or {}).get("inlinedResponses") or []
        if response.get("responsesFile"):
            name = str(response["responsesFile"]).removeprefix("files/")
            with self.session(deadline) as http:
                text = http.send(
                    "GET", f"/download/v1beta/files/{name}:download", "the batch results", timeout=BATCH_TIMEOUT,
                    params={"alt": "media"},
                ).text  # fmt: skip
            items = jsonl(text)
        found: Results = {}
        for item in items:
            with reading("a batch response", status=200, body=item):
                key = str(item["key"] if "key" in item else item["metadata"]["key"])
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
