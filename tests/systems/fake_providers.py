"""Fakes of the LLM providers' own APIs (OpenAI, Anthropic, Google), each answering every document
of a dataset right in its provider's protocol, one request at a time or in batches.

A fake knows each document by the PDF bytes a request carries (`GoldVendor`), refuses a wrong key,
and counts every document it was sent (`sent`: in a single request or inside a batch it accepted),
which is what a run paid for. Batches end at their `polls`-th poll; `hold()` keeps every batch in
progress (a test kills the run meanwhile), `expire_next` makes the next batch expire unanswered,
and `errors` names documents whose first batched request fails with an overload (sent again).
`lose_next` takes the next batch and loses the answer to its create (a reset, or a proxy's 502);
`fail_next` makes the next batch fail as a whole with the provider's code and message. Each fake
lists its batches as its provider does (OpenAI's `GET /v1/batches` with the `metadata` oeb set,
Anthropic's list by creation time and request counts, Gemini's `batches.list` with display names).
"""

from __future__ import annotations

import base64
import datetime
import itertools
import json
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from oeb.dataset import Dataset
from systems.fake_vendor import FakeVendor, Reply, Request
from systems.gold_vendors import Document, GoldVendor, Refused


@dataclass
class FakeBatch:
    requests: dict[str, tuple[Document, Any]]
    """custom id -> the document and the request as sent."""
    polls: int = 0
    expire: bool = False
    errored: set[str] = field(default_factory=set)
    batch_id: str = ""
    label: str = ""
    """What the create named it by: OpenAI's `metadata`, Gemini's display name (JSON text)."""
    created: float = field(default_factory=time.time)
    fail: tuple[Any, str] | None = None
    """(code, message) of a failure of the whole batch."""


def rfc3339(moment: float) -> str:
    return datetime.datetime.fromtimestamp(moment, datetime.UTC).isoformat().replace("+00:00", "Z")


def page(batches: list[FakeBatch], after: str | None, size: int) -> tuple[list[FakeBatch], bool]:
    """A page of the batches newest first, after the one named (a cursor), and whether more follow."""
    ordered = sorted(batches, key=lambda b: (b.created, b.batch_id), reverse=True)
    if after is not None:
        ids = [b.batch_id for b in ordered]
        ordered = ordered[ids.index(after) + 1 :] if after in ids else []
    return ordered[:size], len(ordered) > size


class Provider(GoldVendor):
    """The state of one provider fake: its batches, what was sent, the holds and faults."""

    polls_to_end = 2

    def __init__(self, fake: FakeVendor, dataset: Dataset, key: str) -> None:
        self.batches: dict[str, FakeBatch] = {}
        self.sent: Counter[str] = Counter()
        self.creates = 0
        self.expire_next = False
        self.lose_next: Reply | None = None
        self.fail_next: tuple[Any, str] | None = None
        self.lists = 0
        """Batch list requests answered."""
        self.errors: set[str] = set()
        self.holding = threading.Event()
        self._numbers = itertools.count(1)
        super().__init__(fake, dataset, key)

    def hold(self) -> None:
        self.holding.set()

    def release(self) -> None:
        self.holding.clear()

    def pdf_and_schema(self, request: Any) -> tuple[bytes, Any]:
        raise NotImplementedError

    def answer(self, document: Document, request: Any) -> Any:
        raise NotImplementedError

    def taken(self, request: Any) -> Document:
        pdf, schema = self.pdf_and_schema(request)
        document = self.document(pdf, (schema or {}).get("properties"))
        self.sent[document.doc_id] += 1
        return document

    def new_batch(self, entries: list[tuple[str, Any]], label: Any = None) -> str:
        """Accept a batch of (custom id, request); its id."""
        requests = {custom_id: (self.taken(request), request) for custom_id, request in entries}
        batch_id = f"batch_{next(self._numbers)}"
        errored = {cid for cid, (doc, _) in requests.items() if doc.doc_id in self.errors}
        self.errors -= {requests[cid][0].doc_id for cid in errored}
        self.batches[batch_id] = FakeBatch(
            requests, expire=self.expire_next, errored=errored, batch_id=batch_id, label=json.dumps(label),
            fail=self.fail_next,
        )  # fmt: skip
        self.expire_next = False
        self.fail_next = None
        self.creates += 1
        return batch_id

    def created_answer(self, answer: Reply) -> Reply:
        """The answer to a create the fake took: `lose_next` instead, once."""
        lost, self.lose_next = self.lose_next, None
        return answer if lost is None else lost

    def batch(self, batch_id: str) -> FakeBatch:
        if batch_id not in self.batches:
            raise Refused(404, f"no batch {batch_id}")
        return self.batches[batch_id]

    def polled(self, batch_id: str) -> tuple[FakeBatch, bool]:
        """The batch and whether it has ended (never while held)."""
        batch = self.batch(batch_id)
        if not self.holding.is_set():
            batch.polls += 1
        return batch, batch.polls >= self.polls_to_end

    def usage(self, document: Document) -> tuple[int, int]:
        return 1000 + document.number, 100 + document.number


def _data_url(value: str) -> bytes:
    return base64.b64decode(value.split(",", 1)[1])


class OpenAI(Provider):
    raw_exact = False

    def install(self) -> None:
        self.route("POST", "/v1/chat/completions", lambda r: Reply(200, self.answer(self.taken(r.json()), r.json())))
        self.route("POST", "/v1/files", self.upload_file)
        self.route("POST", "/v1/batches", self.create)
        self.route("GET", "/v1/batches", self.list_batches)
        self.route("GET", "/v1/batches/", self.poll, prefix=True)
        self.route("GET", "/v1/files/", self.content, prefix=True)

    def pdf_and_schema(self, request: Any) -> tuple[bytes, Any]:
        file = request["messages"][1]["content"][0]["file"]
        return _data_url(file["file_data"]), request["response_format"]["json_schema"]["schema"]

    def answer(self, document: Document, request: Any) -> Any:
        tokens_in, tokens_out = self.usage(document)
        message = {"role": "assistant", "content": json.dumps(document.gold)}
        return {
            "id": f"chatcmpl-{document.doc_id}",
            "object": "chat.completion",
            "created": 1,
            "model": request["model"],
            "choices": [{"index": 0, "finish_reason": "stop", "message": message}],
            "usage": {
                "prompt_tokens": tokens_in,
                "completion_tokens": tokens_out,
                "total_tokens": tokens_in + tokens_out,
            },
        }

    def upload_file(self, request: Request) -> Reply:
        parts = request.form()
        assert parts["purpose"][2] == b"batch"
        return Reply(200, {"id": self.upload(parts["file"][2]), "object": "file", "purpose": "batch"})

    def create(self, request: Request) -> Reply:
        body = request.json()
        assert body["endpoint"] == "/v1/chat/completions" and body["completion_window"] == "24h"
        lines = [json.loads(line) for line in self.uploaded(body["input_file_id"]).splitlines() if line.strip()]
        batch_id = self.new_batch([(line["custom_id"], line["body"]) for line in lines], body.get("metadata"))
        return self.created_answer(Reply(200, self.described(self.batches[batch_id], "validating")))

    def described(self, batch: FakeBatch, status: str) -> dict[str, Any]:
        return {"id": batch.batch_id, "object": "batch", "status": status, "created_at": int(batch.created),
                "metadata": json.loads(batch.label), "endpoint": "/v1/chat/completions"}  # fmt: skip

    def list_batches(self, request: Request) -> Reply:
        """`GET /v1/batches`: newest first, `limit` a page, `after` a batch id as the cursor."""
        self.lists += 1
        found, more = page(list(self.batches.values()), request.query.get("after"), int(request.query.get("limit", 20)))
        data = [self.described(b, "in_progress") for b in found]
        return Reply(200, {"object": "list", "data": data, "first_id": data[0]["id"] if data else None,
                           "last_id": data[-1]["id"] if data else None, "has_more": more})  # fmt: skip

    def poll(self, request: Request) -> Reply:
        batch_id = request.path.rsplit("/", 1)[1]
        batch, ended = self.polled(batch_id)
        if batch.fail is not None:
            code, message = batch.fail
            errors = {"object": "list", "data": [{"code": code, "message": message, "param": None, "line": None}]}
            return Reply(200, self.described(batch, "failed") | {"errors": errors, "request_counts": {"total": 0}})
        if not ended:
            return Reply(
                200, {"id": batch_id, "status": "in_progress", "request_counts": {"total": len(batch.requests)}}
            )
        output, errors = [], []
        for custom_id, (document, body) in batch.requests.items():
            if batch.expire:
                expired = {"code": "batch_expired", "message": "This request could not be executed"}
                errors.append({"custom_id": custom_id, "response": None, "error": expired})
            elif custom_id in batch.errored:
                error = {"error": {"message": "The server had an error", "type": "server_error"}}
                errors.append({"custom_id": custom_id, "response": {"status_code": 500, "body": error}, "error": None})
            else:
                response = {"status_code": 200, "body": self.answer(document, body)}
                output.append({"id": f"req-{custom_id}", "custom_id": custom_id, "response": response, "error": None})
        found: dict[str, Any] = {"id": batch_id, "status": "expired" if batch.expire else "completed"}
        for key, lines in (("output_file_id", output), ("error_file_id", errors)):
            if lines:
                found[key] = self.upload("".join(json.dumps(line) + "\n" for line in lines).encode())
        return Reply(200, found)

    def content(self, request: Request) -> Reply:
        file_id = request.path.split("/")[3]
        return Reply(200, self.uploaded(file_id).decode())


class Anthropic(Provider):
    key_header = "x-api-key"
    key_prefix = ""

    def install(self) -> None:
        self.route("POST", "/v1/messages", lambda r: Reply(200, self.answer(self.taken(r.json()), r.json())))
        self.route("POST", "/v1/messages/batches", self.create)
        self.route("GET", "/v1/messages/batches", self.list_batches)
        self.route("GET", "/v1/messages/batches/", self.poll, prefix=True)

    def pdf_and_schema(self, request: Any) -> tuple[bytes, Any]:
        assert request["tool_choice"] == {"type": "tool", "name": "extraction"}
        source = request["messages"][0]["content"][0]["source"]
        assert source["media_type"] == "application/pdf"
        return base64.b64decode(source["data"]), request["tools"][0]["input_schema"]

    def answer(self, document: Document, request: Any) -> Any:
        tokens_in, tokens_out = self.usage(document)
        return {
            "id": f"msg_{document.doc_id}",
            "type": "message",
            "role": "assistant",
            "model": request["model"],
            "content": [{"type": "tool_use", "id": "toolu_1", "name": "extraction", "input": document.gold}],
            "stop_reason": "tool_use",
            "usage": {"input_tokens": tokens_in, "output_tokens": tokens_out},
        }

    def create(self, request: Request) -> Reply:
        assert request.headers.get("anthropic-version") == "2023-06-01"
        entries = [(item["custom_id"], item["params"]) for item in request.json()["requests"]]
        batch_id = self.new_batch(entries)
        return self.created_answer(Reply(200, self.described(self.batches[batch_id])))

    def described(self, batch: FakeBatch) -> dict[str, Any]:
        counts = {"processing": len(batch.requests), "succeeded": 0, "errored": 0, "canceled": 0, "expired": 0}
        return {"id": batch.batch_id, "type": "message_batch", "processing_status": "in_progress",
                "created_at": rfc3339(batch.created), "request_counts": counts}  # fmt: skip

    def list_batches(self, request: Request) -> Reply:
        """`GET /v1/messages/batches`: newest first, `limit` a page, `after_id` the cursor."""
        self.lists += 1
        size = int(request.query.get("limit", 20))
        found, more = page(list(self.batches.values()), request.query.get("after_id"), size)
        data = [self.described(b) for b in found]
        return Reply(200, {"data": data, "has_more": more, "first_id": data[0]["id"] if data else None,
                           "last_id": data[-1]["id"] if data else None})  # fmt: skip

    def poll(self, request: Request) -> Reply:
        parts = request.path.split("/")
        batch_id = parts[4]
        if parts[-1] == "results":
            return Reply(200, self.results(self.batch(batch_id)))
        _, ended = self.polled(batch_id)
        found = {"id": batch_id, "type": "message_batch", "processing_status": "ended" if ended else "in_progress"}
        if ended:
            found["results_url"] = f"{self.fake.url}/v1/messages/batches/{batch_id}/results"
        return Reply(200, found)

    def results(self, batch: FakeBatch) -> str:
        lines = []
        for custom_id, (document, params) in batch.requests.items():
            if batch.expire:
                result: dict[str, Any] = {"type": "expired"}
            elif custom_id in batch.errored:
                overloaded = {"type": "overloaded_error", "message": "Overloaded"}
                result = {"type": "errored", "error": {"type": "error", "error": overloaded}}
            else:
                result = {"type": "succeeded", "message": self.answer(document, params)}
            lines.append(json.dumps({"custom_id": custom_id, "result": result}) + "\n")
        return "".join(lines)


class Google(Provider):
    key_header = "x-goog-api-key"
    key_prefix = ""
    from_files = 0
    """Batches sent as an uploaded JSONL file (answered as a file too)."""

    def install(self) -> None:
        self.route("POST", "/v1beta/models/", self.models, prefix=True)
        self.route("GET", "/v1beta/batches", self.list_batches)
        self.route("GET", "/v1beta/batches/", self.poll, prefix=True)
        self.route("POST", "/upload/v1beta/files", self.upload_file)
        self.route("GET", "/download/v1beta/files/", self.download, prefix=True)

    def upload_file(self, request: Request) -> Reply:
        """The File API's resumable upload: a start, then the bytes with upload, finalize."""
        command = request.headers.get("x-goog-upload-command")
        if command == "start":
            assert request.headers["x-goog-upload-protocol"] == "resumable"
            url = f"{self.fake.url}/upload/v1beta/files?upload_id={self.new_id('upload')}"
            return Reply(200, {}, {"x-goog-upload-url": url})
        assert command == "upload, finalize" and request.query.get("upload_id")
        return Reply(200, {"file": {"name": f"files/{self.upload(request.body)}"}})

    def download(self, request: Request) -> Reply:
        assert request.query.get("alt") == "media" and request.path.endswith(":download")
        return Reply(200, self.uploaded(request.path.split("/")[-1].removesuffix(":download")).decode())

    def pdf_and_schema(self, request: Any) -> tuple[bytes, Any]:
        data = request["contents"][0]["parts"][0]["inline_data"]
        assert request["generationConfig"]["responseMimeType"] == "application/json"
        return base64.b64decode(data["data"]), request["generationConfig"]["responseJsonSchema"]

    def answer(self, document: Document, request: Any) -> Any:
        tokens_in, tokens_out = self.usage(document)
        return {
            "candidates": [
                {"content": {"role": "model", "parts": [{"text": json.dumps(document.gold)}]}, "finishReason": "STOP"}
            ],
            "usageMetadata": {"promptTokenCount": tokens_in, "candidatesTokenCount": tokens_out},
            "modelVersion": "gemini-3.7-flash",
            "responseId": f"resp-{document.doc_id}",
        }

    def models(self, request: Request) -> Reply:
        body = request.json()
        if request.path.endswith(":generateContent"):
            return Reply(200, self.answer(self.taken(body), body))
        assert request.path.endswith(":batchGenerateContent")
        source = body["batch"]["input_config"]
        if "file_name" in source:
            lines = self.uploaded(source["file_name"].removeprefix("files/")).splitlines()
            pairs = [(item["key"], item["request"]) for item in map(json.loads, lines)]
            self.from_files += 1
        else:
            pairs = [(entry["metadata"]["key"], entry["request"]) for entry in source["requests"]["requests"]]
        batch_id = self.new_batch(pairs, body["batch"]["display_name"])
        return self.created_answer(Reply(200, self.described(self.batches[batch_id], "BATCH_STATE_PENDING")))

    def described(self, batch: FakeBatch, state: str) -> dict[str, Any]:
        metadata = {
            "@type": "type.googleapis.com/google.ai.generativelanguage.v1main.GenerateContentBatch",
            "displayName": json.loads(batch.label),
            "createTime": rfc3339(batch.created),
            "state": state,
        }
        return {"name": f"batches/{batch.batch_id}", "metadata": metadata}  # fmt: skip

    def list_batches(self, request: Request) -> Reply:
        """`batches.list`: `pageSize` a page, `pageToken` the last batch id of the page before."""
        self.lists += 1
        size = int(request.query.get("pageSize", 20))
        found, more = page(list(self.batches.values()), request.query.get("pageToken"), size)
        answer: dict[str, Any] = {"operations": [self.described(b, "BATCH_STATE_RUNNING") for b in found]}
        if more:
            answer["nextPageToken"] = found[-1].batch_id
        return Reply(200, answer)

    def poll(self, request: Request) -> Reply:
        batch_id = request.path.rsplit("/", 1)[1]
        batch, ended = self.polled(batch_id)
        name = f"batches/{batch_id}"
        if batch.fail is not None:
            code, message = batch.fail
            failed = self.described(batch, "BATCH_STATE_FAILED")
            return Reply(200, failed | {"done": True, "error": {"code": code, "message": message}})
        if not ended:
            return Reply(200, {"name": name, "metadata": {"state": "BATCH_STATE_RUNNING"}})
        if batch.expire:
            return Reply(200, {"name": name, "metadata": {"state": "BATCH_STATE_EXPIRED"}, "done": True})
        responses = []
        for custom_id, (document, body) in batch.requests.items():
            if custom_id in batch.errored:
                responses.append({"error": {"code": 14, "message": "unavailable"}, "metadata": {"key": custom_id}})
            else:
                responses.append({"response": self.answer(document, body), "metadata": {"key": custom_id}})
        if self.from_files:  # a file in, a file out
            lines = "".join(json.dumps({"key": r["metadata"]["key"]} | r) + "\n" for r in responses)
            output: dict[str, Any] = {"responsesFile": f"files/{self.upload(lines.encode())}"}
        else:
            output = {"inlinedResponses": {"inlinedResponses": responses}}
        ended = {"name": name, "metadata": {"state": "BATCH_STATE_SUCCEEDED"}, "done": True, "response": output}
        return Reply(200, ended)


PROVIDERS = {"openai": OpenAI, "anthropic": Anthropic, "google": Google}
MODELS = {"openai": "openai/gpt-5.6-sol", "anthropic": "anthropic/claude-opus-5", "google": "google/gemini-3.7-flash"}
KEYS = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY", "google": "GEMINI_API_KEY"}
PATHS = {"openai": "/v1", "anthropic": "", "google": ""}
"""What follows the fake's address in `base_url`."""
