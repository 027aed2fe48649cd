"""Extend (extend.ai) extraction runs: upload and create a run (the handle is its id), poll it to a
terminal status."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, cast

from oeb.systems import _citing
from oeb.systems._http import Session, held
from oeb.systems._reading import extraction, number, reading
from oeb.systems.base import Adapter, Call, Cite, Cost, Deadline, Price
from oeb.systems.errors import SystemFailed
from oeb.systems.schema import extend_dialect, restore_ids

TERMINAL = frozenset({"PROCESSED", "COMPLETED", "FAILED", "CANCELLED", "ERROR"})
WORKSPACE = "EXTEND_WORKSPACE_ID"
"""Optional: organisation-level keys must name the workspace they act in."""


def _run(body: Any) -> Any:
    """Extend wraps the run object differently across endpoints and versions."""
    if isinstance(body, dict):
        return next((body[k] for k in ("extractRun", "processorRun", "run") if k in body), body)
    return body


def _cost(run: dict[str, Any]) -> Cost:
    usage = run.get("usage")
    usage = usage if isinstance(usage, dict) else {}
    for key in ("totalCredits", "credits"):
        credits = number(usage.get(key))
        if credits is not None:
            return Cost(credits=credits, source=f"usage.{key}")
    return Cost()


@dataclass(frozen=True)
class Extend(Adapter):
    name: ClassVar[str] = "extend"
    description: ClassVar[str] = "Extend extraction runs (https://extend.ai)"
    keys: ClassVar[tuple[str, ...]] = ("EXTEND_API_KEY",)
    workers: ClassVar[int] = 5
    uploads_first: ClassVar[bool] = True
    located: ClassVar[tuple[str, ...]] = ("base_url",)
    price: ClassVar[Price | None] = None
    """Extend bills credits per page by processor, but publishes no per-credit rate or per-page figure
    for extraction (https://docs.extend.ai/product/general/how-credits-work): unknown."""

    array_strategy: str = field(default="large_array_max_context", metadata={"help": "how long arrays are extracted"})
    api_version: str = field(default="2026-02-09", metadata={"help": "x-extend-api-version header"})
    base_url: str = field(default="https://api.extend.ai", metadata={"help": "API address"})
    poll_interval: float = field(default=5.0, metadata={"help": "seconds between polls"})
    citations: bool = field(
        default=False,
        metadata={
            "help": "ask each value's citation polygons and confidence (advancedOptions.citationsEnabled; "
            "logprobsConfidence, else ocrConfidence)"
        },
    )

    def prepare_schema(self, schema: dict[str, Any]) -> dict[str, Any]:
        return extend_dialect(schema)

    def _session(self, deadline: Deadline) -> Session:
        headers = {
            "Authorization": f"Bearer {self.env('EXTEND_API_KEY')}",
            "x-extend-api-version": self.api_version,
        }
        if os.environ.get(WORKSPACE):
            headers["x-extend-workspace-id"] = os.environ[WORKSPACE]
        return Session("extend", deadline, base_url=self.base_url.rstrip("/"), headers=headers)

    def submit(self, document: Path, schema: dict[str, Any], deadline: Deadline) -> dict[str, Any]:
        with self._session(deadline) as http:
            upload = {"file": (document.name, document.read_bytes(), "application/pdf")}
            uploaded = http.json("POST", "/files/upload", "the upload", timeout=300, files=upload)
            with reading("the upload answer", status=200, body=uploaded):
                file_id = (uploaded.get("file") or {}).get("id") or uploaded["id"]
            request = {
                "file": {"id": file_id},
                "config": {
                    "schema": schema,
                    "advancedOptions": {
                        "arrayStrategy": {"type": self.array_strategy},
                        **({"citationsEnabled": True} if self.citations else {}),
                    },
                },
            }
            deadline.start()
            created = http.json("POST", "/extract_runs", "the extraction run", timeout=120, json=request)
        with reading("the run answer", status=200, body=created):
            return {"run_id": str(_run(created)["id"])}

    def collect(self, handle: dict[str, Any], deadline: Deadline) -> Call:
        run_id = held(handle, "run_id", "extend")
        with self._session(deadline) as http:

            def fetch() -> Any:
                return _run(http.json("GET", f"/extract_runs/{run_id}", "a poll", timeout=60))

            for run in http.poll(fetch, interval=self.poll_interval, what=f"extend run {run_id}"):
                with reading("a poll", status=200, body=run, job_id=run_id):
                    if str(run.get("status", "")).upper() in TERMINAL:
                        break
        # A failed run is returned, not raised: `read` records it as Unreadable unless it has a value.
        return Call(raw=run, cost=_cost(run), job_id=run_id)

    def cites(self, raw: Any) -> list[Cite]:
        """`output.metadata`'s citation polygons and confidence: logprobs, else OCR (docs/grounding.md)."""
        return _citing.extend(raw)

    def read(self, raw: Any) -> dict[str, Any]:
        output = raw.get("output") if isinstance(raw, dict) else None
        value = output.get("value", output) if isinstance(output, dict) else None
        if not isinstance(value, dict) or not value:
            status = raw.get("status") if isinstance(raw, dict) else None
            details = (
                json.dumps(raw.get("failureReason") or raw.get("error") or output) if isinstance(raw, dict) else ""
            )
            raise SystemFailed(f"extend run finished {status} with no extraction: {details[:300]}")
        return cast(dict[str, Any], restore_ids(extraction(value)))
