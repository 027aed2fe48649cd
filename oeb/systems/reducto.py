"""Reducto deep extract: upload and submit an async job (the handle is its job id), poll it, then look
up its server duration."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from oeb.systems import _citing
from oeb.systems._http import Session, held
from oeb.systems._reading import dig, merge_answers, number, reading
from oeb.systems.base import Adapter, Call, Cite, Cost, Deadline, Price
from oeb.systems.errors import OptionError, SystemFailed

FINISHED = frozenset({"Completed", "Failed", "Error", "Cancelled"})


@dataclass(frozen=True)
class Reducto(Adapter):
    name: ClassVar[str] = "reducto"
    description: ClassVar[str] = "Reducto deep extract; citations on with `citations: true` (https://reducto.ai)"
    keys: ClassVar[tuple[str, ...]] = ("REDUCTO_API_KEY",)
    workers: ClassVar[int] = 3
    uploads_first: ClassVar[bool] = True
    located: ClassVar[tuple[str, ...]] = ("base_url",)
    price: ClassVar[Price | None] = Price(
        credits_per_page=4.0,
        source="https://docs.reducto.ai/reference/credit-usage: deep extract bills by complexity, at most 4 credits "
        "per page plus 0.1 per field extracted and at least 30 per document (pay-as-you-go $0.015 per credit)",
    )

    deep_extract_model: str = field(default="v2", metadata={"help": "deep-extract model generation"})
    system_prompt: str = field(default="", metadata={"help": "extra system prompt (sent only when not empty)"})
    agentic_table_mode: str = field(
        default="max", metadata={"help": "agentic table parsing", "choices": ("default", "max")}
    )
    poll_interval: int | float = field(default=5, metadata={"help": "seconds between polls (fractions allowed)"})
    citations: bool = field(
        default=False, metadata={"help": "ask each value's cited box and confidence (settings.citations.enabled)"}
    )
    base_url: str = field(default="https://platform.reducto.ai", metadata={"help": "API address"})

    def __post_init__(self) -> None:
        if self.poll_interval < 0:
            raise OptionError("option 'poll_interval' of reducto must not be negative")

    def _session(self, deadline: Deadline) -> Session:
        headers = {"Authorization": f"Bearer {self.env('REDUCTO_API_KEY')}"}
        return Session("reducto", deadline, base_url=self.base_url.rstrip("/"), headers=headers)

    def submit(self, document: Path, schema: dict[str, Any], deadline: Deadline) -> dict[str, Any]:
        with self._session(deadline) as http:
            upload = {"file": (document.name, document.read_bytes(), "application/pdf")}
            uploaded = http.json("POST", "/upload", "the upload", timeout=300, files=upload)
            with reading("the upload answer", status=200, body=uploaded):
                file_id = uploaded["file_id"]
            instructions: dict[str, Any] = {"schema": schema}
            if self.system_prompt:
                instructions["system_prompt"] = self.system_prompt
            request = {
                "async": {"priority": False},
                "input": file_id,
                "parsing": {"enhance": {"agentic": [{"scope": "table", "mode": self.agentic_table_mode}]}},
                "instructions": instructions,
                "settings": {
                    "deep_extract": True,
                    "citations": {"enabled": self.citations},
                    "alpha": {"deep_extract_model": self.deep_extract_model},
                },
            }
            deadline.start()
            submitted = http.json("POST", "/extract_async", "the extraction job", timeout=120, json=request)
        with reading("the job answer", status=200, body=submitted):
            return {"job_id": str(submitted["job_id"])}

    def collect(self, handle: dict[str, Any], deadline: Deadline) -> Call:
        job_id = held(handle, "job_id", "reducto")
        with self._session(deadline) as http:

            def fetch() -> Any:
                return http.json("GET", f"/job/{job_id}", "a poll", timeout=60)

            for body in http.poll(fetch, interval=self.poll_interval, what=f"reducto job {job_id}"):
                with reading("a poll", status=200, body=body, job_id=job_id):
                    status = body.get("status", body.get("state"))
                    if status in FINISHED or body.get("result") is not None:
                        break
            if status != "Completed":
                raise SystemFailed(
                    f"reducto job {job_id} ended {status}: {json.dumps(body)[:300]}",
                    status=200,
                    body=body,
                    job_id=job_id,
                )
            raw = {**body, "latency_s": self._duration(http, job_id)}
        credits = number(dig(raw, "result.usage.credits"))
        return Call(
            raw=raw,
            cost=Cost(credits=credits, source="usage.credits") if credits is not None else Cost(),
            job_id=job_id,
        )

    @staticmethod
    def _duration(http: Session, job_id: str) -> float | None:
        """Server-side seconds from the job listing; best effort, never fails a paid extraction."""
        try:
            listing = http.json("GET", "/jobs", "the job listing", timeout=60, params={"limit": 200})
            return next(number(j.get("duration")) for j in listing["jobs"] if j.get("job_id") == job_id)
        except (SystemFailed, KeyError, TypeError, AttributeError, StopIteration):
            return None

    def cites(self, raw: Any) -> list[Cite]:
        """Each cited value's box (a share of its page) and extract confidence (docs/grounding.md)."""
        return _citing.reducto(raw)

    def read(self, raw: Any) -> dict[str, Any]:
        result = raw.get("result") if isinstance(raw, dict) else None
        if isinstance(result, dict) and "result" in result:
            result = result["result"]
        merged = merge_answers(_citing.reducto_unwrap(result) if self.citations else result)
        if merged is None:
            raise SystemFailed(f"reducto's result holds no extraction: {json.dumps(result)[:300]}")
        return merged
