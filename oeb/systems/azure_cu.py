"""Azure AI Content Understanding: an analyzer per field schema (created once per process), then
an analysis per document (the handle is its `Operation-Location` and the analyzer), both
long-running operations polled at their `Operation-Location`."""

from __future__ import annotations

import hashlib
import json
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from oeb.systems import _citing
from oeb.systems._http import Session, held
from oeb.systems._reading import reading
from oeb.systems.base import Adapter, Call, Cite, Deadline, Price
from oeb.systems.errors import OptionError, SystemFailed
from oeb.systems.schema import azure_field_schema

_ANALYZERS: set[tuple[str, str]] = set()
"""(endpoint, analyzer id) pairs known to exist in this process."""
_LOCK = threading.Lock()
"""Held through creation and its wait: a 409 means the analyzer exists, not that it is ready."""

DONE = frozenset({"succeeded", "completed"})
FAILED = frozenset({"failed", "cancelled"})


def _plain(node: Any) -> Any:
    """A field's value without Azure's per-field confidence and spans."""
    if not isinstance(node, dict):
        return node
    for key in ("valueString", "valueNumber", "valueInteger", "valueBoolean", "valueDate"):
        if key in node:
            return node[key]
    if isinstance(node.get("valueArray"), list):
        return [_plain(v) for v in node["valueArray"]]
    if isinstance(node.get("valueObject"), dict):
        return {k: _plain(v) for k, v in node["valueObject"].items()}
    return node.get("content")


@dataclass(frozen=True)
class AzureCU(Adapter):
    name: ClassVar[str] = "azure-cu"
    description: ClassVar[str] = "Azure AI Content Understanding with a generative field schema"
    keys: ClassVar[tuple[str, ...]] = ("AZURE_CU_KEY",)
    workers: ClassVar[int] = 3
    located: ClassVar[tuple[str, ...]] = ("endpoint",)
    price: ClassVar[Price | None] = None
    """Content extraction per 1,000 pages plus contextualization and the completion model's tokens, billed
    on the Foundry deployment (https://learn.microsoft.com/azure/ai-services/content-understanding/
    pricing-explainer): no per-page or per-document figure to estimate with."""

    endpoint: str = field(
        default="",
        metadata={"help": "required: https://<resource>.cognitiveservices.azure.com (the base URL)"},
    )
    completion_model: str = field(default="gpt-4.1-mini", metadata={"help": "completion deployment of the analyzer"})
    api_version: str = field(default="2025-05-01-preview", metadata={"help": "api-version query parameter"})
    poll_interval: float = field(default=3.0, metadata={"help": "seconds between polls"})
    citations: bool = field(
        default=False,
        metadata={"help": "ask each field's source box and confidence (estimateFieldSourceAndConfidence)"},
    )

    def prepare_schema(self, schema: dict[str, Any]) -> dict[str, Any]:
        return azure_field_schema(schema)

    def analyzer_id(self, field_schema: dict[str, Any]) -> str:
        """Anything that changes the analyzer changes its id, so analyzers are never overwritten."""
        identity: dict[str, Any] = {
            "api_version": self.api_version,
            "completion": self.completion_model,
            "fieldSchema": field_schema,
        }
        if self.citations:  # a published analyzer's id stays what it was
            identity["estimateFieldSourceAndConfidence"] = True
        return "oeb-" + hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()[:16]

    def _session(self, deadline: Deadline) -> tuple[Session, str]:
        endpoint = self.endpoint.rstrip("/")
        if not endpoint:
            raise OptionError("azure-cu needs its endpoint option (https://<resource>.cognitiveservices.azure.com)")
        headers = {"Ocp-Apim-Subscription-Key": self.env("AZURE_CU_KEY")}
        return Session("azure-cu", deadline, base_url=endpoint, headers=headers), endpoint

    def submit(self, document: Path, schema: dict[str, Any], deadline: Deadline) -> dict[str, Any]:
        analyzer = self.analyzer_id(schema)
        base = f"/contentunderstanding/analyzers/{analyzer}"
        version = {"api-version": self.api_version}
        session, endpoint = self._session(deadline)
        with session as http:
            with _LOCK:
                if (endpoint, analyzer) not in _ANALYZERS:
                    self._create(http, base, version, schema)
                    _ANALYZERS.add((endpoint, analyzer))
            started = http.send(
                "POST",
                f"{base}:analyze",
                "the analysis",
                timeout=120,
                params=version,
                content=document.read_bytes(),
                headers={"Content-Type": "application/octet-stream"},
            )
        location = started.headers.get("Operation-Location")
        if not location:
            raise SystemFailed("azure-cu started an analysis without an Operation-Location", status=started.status_code)
        return {"operation": location, "analyzer": analyzer}

    def collect(self, handle: dict[str, Any], deadline: Deadline) -> Call:
        location, analyzer = held(handle, "operation", "azure-cu"), held(handle, "analyzer", "azure-cu")
        session, _ = self._session(deadline)
        with session as http:
            body = self._wait(http, location, f"azure-cu analysis with analyzer {analyzer}")
        with reading("the analysis result", status=200, body=body, job_id=analyzer):
            contents = body["result"]["contents"]
        if not contents:
            raise SystemFailed("azure-cu's analysis returned no contents", status=200, body=body, job_id=analyzer)
        return Call(raw=body, job_id=analyzer)

    def _create(self, http: Session, base: str, version: dict[str, str], schema: dict[str, Any]) -> None:
        request = {
            "baseAnalyzerId": "prebuilt-documentAnalyzer",
            "config": {
                "returnDetails": False,
                "completion": self.completion_model,
                **({"estimateFieldSourceAndConfidence": True} if self.citations else {}),
            },
            "fieldSchema": schema,
        }
        try:
            created = http.send("PUT", base, "the analyzer creation", timeout=120, params=version, json=request)
        except SystemFailed as error:
            if error.status == 409:  # it exists already
                return
            raise
        location = created.headers.get("Operation-Location")
        if location:
            self._wait(http, location, "azure-cu analyzer creation")

    def _wait(self, http: Session, location: str, what: str) -> Any:
        """Poll a long-running operation until it succeeds; a failed one is a vendor-reported failure."""

        def fetch() -> Any:
            return http.json("GET", location, "a poll", timeout=120)

        for body in http.poll(fetch, interval=self.poll_interval, what=what):
            with reading("a poll", status=200, body=body):
                status = str(body.get("status", "")).lower()
            if status in DONE:
                break
            if status in FAILED:
                raise SystemFailed(
                    f"{what} ended {status}: {json.dumps(body.get('error'))[:300]}", status=200, body=body
                )
        return body

    def cites(self, raw: Any) -> list[Cite]:
        """Each field's `source` polygon and `confidence` (docs/grounding.md)."""
        return _citing.azure_cu(raw)

    def read(self, raw: Any) -> dict[str, Any]:
        with reading("the analysis result"):
            fields = raw["result"]["contents"][0].get("fields") or {}
            return {name: _plain(node) for name, node in fields.items()}
