"""Chat completions: OpenRouter (the default, any `org/model`) and OpenAI itself, through the
official `openai` SDK; OpenAI's Batch API (a JSONL file uploaded with purpose `batch`, then
`POST /v1/batches`) over plain HTTP."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import openai

from oeb.systems._http import retry_after
from oeb.systems._reading import number, reading
from oeb.systems.calls import Deadline
from oeb.systems.errors import SystemFailed, SystemTimeout, SystemUnreachable
from oeb.systems.providers import (
    BATCH_TIMEOUT,
    FIND_PAGES,
    FIND_SKEW,
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
    timestamp,
    user_text,
)

ENDPOINT = "/v1/chat/completions"
EXPIRED_STATUS = 503
"""A request its batch expired before running, read as a 503: sent again in a later batch."""
TAG = "oeb_batch"
"""The key of the `metadata` entry naming the batch's tag, by which a lost create is found again."""
ENDED = frozenset({"completed", "expired", "cancelled", "failed"})
"""OpenAI batch states after which nothing more will be answered (validating, in_progress,
finalizing and cancelling come before)."""


class OpenRouter(Provider):
    name = "openrouter"
    key = "OPENROUTER_API_KEY"
    base_url = "https://openrouter.ai/api/v1"
    cap = "max_tokens"

    def body(self, document: Path, schema: dict[str, Any]) -> dict[str, Any]:
        """The chat-completion body: the PDF as a `file` content part, the schema as structured output."""
        data_url = "data:application/pdf;base64," + pdf_base64(document)
        return {
            "model": self.model,
            "messages": [
                {"role": "system", "content": SYSTEM_PROMPT},
                {
                    "role": "user",
                    "content": [
                        {"type": "file", "file": {"filename": document.name, "file_data": data_url}},
                        {"type": "text", "text": user_text(schema)},
                    ],
                },
            ],
            self.cap: self.max_tokens,
            **self.sampling(),
            "response_format": {
                "type": "json_schema",
                "json_schema": {"name": "extraction", "schema": schema, "strict": False},
            },
        }

    def extra(self) -> dict[str, Any]:
        """What the SDK sends besides the body: OpenRouter reports each answer's cost when asked."""
        return {"extra_body": {"usage": {"include": True}}}

    def complete(self, document: Path, schema: dict[str, Any], deadline: Deadline) -> Reply:
        client = openai.OpenAI(api_key=self.api_key, base_url=self.url)
        with client:
            try:
                completion = client.chat.completions.create(
                    **self.body(document, schema),
                    **self.extra(),
                    timeout=max(0.001, deadline.remaining()),
                )
            except openai.APITimeoutError as error:
                raise SystemTimeout(f"{self.model} did not answer in time") from error
            except openai.APIConnectionError as error:
                raise SystemUnreachable(f"could not reach {self.url}: {error}") from error
            except openai.APIStatusError as error:
                raise SystemFailed(
                    f"{type(error).__name__}: {error.message}",
                    status=error.status_code,
                    retry_after=retry_after(error.response.headers),
                ) from error
            except openai.OpenAIError as error:
                raise SystemFailed(f"{type(error).__name__}: {error}") from error
        return read_completion(completion.model_dump())


def read_completion(data: dict[str, Any]) -> Reply:
    """A chat completion, as the SDK or a batch result line gives it."""
    usage = data.get("usage") or {}
    common: dict[str, Any] = {
        "tokens_in": count(usage.get("prompt_tokens")),
        "tokens_out": count(usage.get("completion_tokens")),
        "usd": number(usage.get("cost")),
        "usage": usage or None,
        "model": data.get("model"),
        "id": data.get("id"),
    }
    choices = data.get("choices")
    if not choices:
        error = data.get("error")
        error = error if isinstance(error, dict) else {}
        return Reply(None, error=error.get("message") or "the provider returned no choices", **common)
    choice = choices[0]
    finish = choice.get("finish_reason")
    content = (choice.get("message") or {}).get("content")
    return Reply(content, finish=finish, truncated=finish == "length", **common)


class OpenAI(OpenRouter):
    """OpenAI's own API: the same chat completions, its token cap named `max_completion_tokens`, its
    cost priced from the tokens; and the Batch API."""

    name = "openai"
    key = "OPENAI_API_KEY"
    base_url = "https://api.openai.com/v1"
    cap = "max_completion_tokens"
    limits = BatchLimits(50_000, 200_000_000, "https://platform.openai.com/docs/guides/batch")
    batch_path = "/batches/{batch_id}"
    tokens_per_page = 3000
    """OpenAI sends each page as its text and an image of it; it publishes no figure per page."""

    def extra(self) -> dict[str, Any]:
        return {}

    def entry(self, custom_id: str, document: Path, schema: dict[str, Any]) -> dict[str, Any]:
        return {"custom_id": custom_id, "method": "POST", "url": ENDPOINT, "body": self.body(document, schema)}

    def create(self, entries: list[dict[str, Any]], tag: str, deadline: Deadline) -> dict[str, Any]:
        lines = b"".join(json.dumps(entry).encode() + b"\n" for entry in entries)
        with self.session(deadline) as http:
            files = {"file": ("oeb-batch.jsonl", lines, "application/jsonl")}
            uploaded = http.json(
                "POST", "/files", "the batch upload", timeout=BATCH_TIMEOUT, files=files, data={"purpose": "batch"}
            )
            with reading("the batch upload answer", status=200, body=uploaded):
                file_id = str(uploaded["id"])
            request = {"input_file_id": file_id, "endpoint": ENDPOINT, "completion_window": "24h",
                       "metadata": {TAG: tag}}  # fmt: skip
            created = http.json("POST", "/batches", "the batch", timeout=BATCH_TIMEOUT, json=request)
        with reading("the batch answer", status=200, body=created):
            return {"batch_id": str(created["id"]), "input_file_id": file_id}

    def find(
        self, tag: str, requests: int, since: float, known: frozenset[str], deadline: Deadline
    ) -> dict[str, Any] | None:
        """The batch whose `metadata` holds the tag, in `GET /v1/batches` (newest first), read back to
        `since`."""
        params: dict[str, Any] = {"limit": 100}
        with self.session(deadline) as http:
            for _ in range(FIND_PAGES):
                page = http.json("GET", "/batches", "the batch list", timeout=BATCH_TIMEOUT, params=params)
                with reading("the batch list", status=200, body=page):
                    batches = [b for b in page["data"] if isinstance(b, dict)]
                for batch in batches:
                    if (batch.get("metadata") or {}).get(TAG) == tag:
                        return {"batch_id": str(batch["id"]), "input_file_id": batch.get("input_file_id")}
                created = [timestamp(b.get("created_at")) for b in batches]
                older = any(t is not None and t < since - FIND_SKEW for t in created)
                if older or not page.get("has_more") or not batches:
                    return None
                params["after"] = batches[-1]["id"]
        raise SystemFailed(f"the batch list is longer than {FIND_PAGES} pages back to the lost batch", status=None)

    def status(self, handle: dict[str, Any], deadline: Deadline) -> BatchStatus:
        batch = self.batch(handle, deadline)
        state = str(batch.get("status"))
        failure = None
        if state == "failed":  # validation refused the whole batch: its `errors` say why
            errors = (batch.get("errors") or {}).get("data") or [{}]
            first = errors[0] if isinstance(errors[0], dict) else {}
            code, message = first.get("code"), first.get("message")
            failure = batch_failure(self.name, str(batch.get("id")), code, message, failed_status(code))
        return BatchStatus(state, state in ENDED, batch.get("request_counts") or {}, failure)

    def results(self, handle: dict[str, Any], deadline: Deadline) -> Results:
        batch = self.batch(handle, deadline)
        found: Results = {}
        with self.session(deadline) as http:
            for key in ("error_file_id", "output_file_id"):  # an answer wins over an error line
                file_id = batch.get(key)
                if not file_id:
                    continue
                text = http.send("GET", f"/files/{file_id}/content", "the batch results", timeout=BATCH_TIMEOUT).text
                for item in jsonl(text):
                    custom_id, result = _result_line(item)
                    found[custom_id] = result
        return found


def failed_status(code: Any) -> int:
    """A failed batch's error code as the status of the same refusal on a direct call: a quota or
    billing code an account failure (402), a key refused 401, a limit 429, anything else 400."""
    text = str(code).lower()
    if "quota" in text or "billing" in text:
        return 402
    if "api_key" in text or "auth" in text:
        return 401
    return 429 if "limit" in text else 400


def _result_line(item: Any) -> tuple[str, Reply | SystemFailed]:
    """One line of an output or error file: its custom id and the completion, or the failure."""
    with reading("a batch result line", status=200, body=item):
        custom_id = str(item["custom_id"])
        response = item.get("response") or {}
        error = item.get("error")
    status = number(response.get("status_code"))
    body = response.get("body")
    if not error and status == 200 and isinstance(body, dict):
        return custom_id, read_completion(body)
    if isinstance(error, dict):  # the batch never ran it: expired (sent again) or refused
        message = f"{error.get('code')}: {error.get('message')}"
        code = EXPIRED_STATUS if error.get("code") == "batch_expired" else None
    else:
        inner = body.get("error") if isinstance(body, dict) else None
        message = str(inner.get("message") if isinstance(inner, dict) else body)
        code = int(status) if status else None
    return custom_id, request_failure("the batch request failed", code, message, item)
