"""Anthropic's Messages API (`POST /v1/messages`): the PDF as a base64 `document` block, the schema
as the input schema of one tool the model is made to call; and Message Batches
(`POST /v1/messages/batches`, results as JSONL at the batch's `results_url`)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from oeb.systems._reading import reading
from oeb.systems.calls import Deadline
from oeb.systems.errors import SystemFailed
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
    count,
    jsonl,
    pdf_base64,
    request_failure,
    timestamp,
    user_text,
)

VERSION = "2023-06-01"
TOOL = "extraction"
CUSTOM_ID = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
ERROR_STATUS = {
    "invalid_request_error": 400,
    "authentication_error": 401,
    "permission_error": 403,
    "not_found_error": 404,
    "request_too_large": 413,
    "rate_limit_error": 429,
    "api_error": 500,
    "overloaded_error": 503,
}
"""An errored batch request's error type, as the HTTP status the same request would have met
(Anthropic's 529 `overloaded_error` read as a 503: worth sending again)."""
SENT_AGAIN = {"canceled": 503, "expired": 503}
"""Results of requests the batch never ran: sent again in a later batch."""


class Anthropic(Provider):
    name = "anthropic"
    key = "ANTHROPIC_API_KEY"
    base_url = "https://api.anthropic.com"
    limits = BatchLimits(100_000, 256_000_000, "https://docs.anthropic.com/en/docs/build-with-claude/batch-processing")
    batch_path = "/v1/messages/batches/{batch_id}"
    tokens_per_page = 4500
    """Anthropic counts 1,500 to 3,000 text tokens per PDF page plus the page's image."""

    def headers(self) -> dict[str, str]:
        return {"x-api-key": self.api_key, "anthropic-version": VERSION}

    def params(self, document: Path, schema: dict[str, Any]) -> dict[str, Any]:
        """The Messages request: answering is calling the one tool, whose input is the schema."""
        document_block = {
            "type": "document",
            "source": {"type": "base64", "media_type": "application/pdf", "data": pdf_base64(document)},
        }
        return {
            "model": self.model,
            "max_tokens": self.max_tokens,
            **self.sampling(),
            "system": SYSTEM_PROMPT,
            "messages": [{"role": "user", "content": [document_block, {"type": "text", "text": user_text(schema)}]}],
            "tools": [{"name": TOOL, "description": "Record the extraction.", "input_schema": schema}],
            "tool_choice": {"type": "tool", "name": TOOL},
        }

    def complete(self, document: Path, schema: dict[str, Any], deadline: Deadline) -> Reply:
        with self.session(deadline) as http:
            message = http.json(
                "POST",
                "/v1/messages",
                "the message",
                timeout=deadline.remaining(),
                json=self.params(document, schema),
            )
        return read_message(message)

    def valid_id(self, custom_id: str) -> bool:
        return bool(CUSTOM_ID.match(custom_id))

    def entry(self, custom_id: str, document: Path, schema: dict[str, Any]) -> dict[str, Any]:
        return {"custom_id": custom_id, "params": self.params(document, schema)}

    def create(self, entries: list[dict[str, Any]], tag: str, deadline: Deadline) -> dict[str, Any]:
        """Anthropic keeps no mark on a batch: `find` knows it by its time and its request count."""
        with self.session(deadline) as http:
            created = http.json(
                "POST", "/v1/messages/batches", "the batch", timeout=BATCH_TIMEOUT, json={"requests": entries}
            )
        with reading("the batch answer", status=200, body=created):
            return {"batch_id": str(created["id"])}

    def find(
        self, tag: str, requests: int, since: float, known: frozenset[str], deadline: Deadline
    ) -> dict[str, Any] | None:
        """The one batch of the list (newest first) created from `since` on (give or take the clock
        skew) with `requests` requests; several such batches are refused rather than guessed."""
        params: dict[str, Any] = {"limit": 100}
        found: list[str] = []
        with self.session(deadline) as http:
            for _ in range(FIND_PAGES):
                page = http.json("GET", "/v1/messages/batches", "the batch list", timeout=BATCH_TIMEOUT, params=params)
                with reading("the batch list", status=200, body=page):
                    batches = [b for b in page["data"] if isinstance(b, dict)]
                older = False
                for batch in batches:
                    created = timestamp(batch.get("created_at"))
                    if created is not None and created < since - FIND_SKEW:
                        older = True
                        continue
                    counts = batch.get("request_counts") or {}
                    if str(batch.get("id")) in known:
                        continue
                    if sum(int(v) for v in counts.values() if isinstance(v, int)) == requests:
                        found.append(str(batch["id"]))
                if older or not page.get("has_more") or not batches:
                    break
                params["after_id"] = batches[-1]["id"]
            else:
                raise SystemFailed(f"the batch list is longer than {FIND_PAGES} pages back to the lost batch")
        if len(found) > 1:
            raise SystemFailed(
                f"{len(found)} batches of {requests} requests were created since the lost one was sent "
                f"({', '.join(found[:5])}); cancel the one that is not this run's in the Anthropic console"
            )
        return {"batch_id": found[0]} if found else None

    def status(self, handle: dict[str, Any], deadline: Deadline) -> BatchStatus:
        batch = self.batch(handle, deadline)
        state = str(batch.get("processing_status"))
        return BatchStatus(state, state == "ended", batch.get("request_counts") or {})

    def results(self, handle: dict[str, Any], deadline: Deadline) -> Results:
        url = self.batch(handle, deadline).get("results_url")
        if not url:
            return {}
        with self.session(deadline) as http:
            text = http.send("GET", str(url), "the batch results", timeout=BATCH_TIMEOUT).text
        found: Results = {}
        for item in jsonl(text):
            with reading("a batch result line", status=200, body=item):
                found[str(item["custom_id"])] = _result(item["result"], item)
        return found


def _result(result: dict[str, Any], item: Any) -> Reply | SystemFailed:
    kind = result.get("type")
    if kind == "succeeded":
        return read_message(result["message"])
    if kind in SENT_AGAIN:
        return request_failure("the batch request was not run", SENT_AGAIN[kind], f"{kind}", item)
    error = (result.get("error") or {}).get("error") or result.get("error") or {}
    status = ERROR_STATUS.get(str(error.get("type")))
    return request_failure("the batch request errored", status, f"{error.get('type')}: {error.get('message')}", item)


def read_message(message: Any) -> Reply:
    """A Messages answer: the forced tool call's input is the extraction."""
    if not isinstance(message, dict):
        raise SystemFailed(f"malformed message: {str(message)[:300]}", status=200, body=message)
    usage = message.get("usage") or {}
    stop = message.get("stop_reason")
    common: dict[str, Any] = {
        "finish": stop,
        "truncated": stop == "max_tokens",
        "tokens_in": count(usage.get("input_tokens")),
        "tokens_out": count(usage.get("output_tokens")),
        "usage": usage or None,
        "model": message.get("model"),
        "id": message.get("id"),
    }
    blocks = [block for block in message.get("content") or [] if isinstance(block, dict)]
    for block in blocks:
        if block.get("type") == "tool_use" and block.get("name") == TOOL:
            given = block.get("input")
            return Reply(given if isinstance(given, dict) else json.dumps(given), **common)
    text = "".join(str(block.get("text", "")) for block in blocks if block.get("type") == "text")
    return Reply(text or None, **common)
