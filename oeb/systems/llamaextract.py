"""LlamaExtract (LlamaCloud): find the project, upload, submit a v2 extract job (the handle is its id
and the project), poll it."""

from __future__ import annotations

import datetime
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from oeb.systems import _citing
from oeb.systems._http import Session, held
from oeb.systems._reading import extraction, reading
from oeb.systems.base import Adapter, Call, Cite, Deadline, Price
from oeb.systems.errors import OptionError, SystemFailed
from oeb.systems.schema import llama_dialect

DONE = frozenset({"SUCCESS", "COMPLETED"})
FAILED = frozenset({"FAILED", "ERROR", "CANCELLED"})


def _seconds_between(start: Any, end: Any) -> float | None:
    try:
        parse = datetime.datetime.fromisoformat
        return (parse(str(end).replace("Z", "+00:00")) - parse(str(start).replace("Z", "+00:00"))).total_seconds()
    except (TypeError, ValueError):
        return None


@dataclass(frozen=True)
class LlamaExtract(Adapter):
    name: ClassVar[str] = "llamaextract"
    description: ClassVar[str] = "LlamaExtract on LlamaCloud (https://cloud.llamaindex.ai)"
    keys: ClassVar[tuple[str, ...]] = ("LLAMA_CLOUD_API_KEY",)
    stand_ins: ClassVar[dict[str, str]] = {"LLAMA_CLOUD_API_KEY": "LLAMAPARSE_API_KEY"}
    workers: ClassVar[int] = 3
    uploads_first: ClassVar[bool] = True
    located: ClassVar[tuple[str, ...]] = ("base_url",)
    price: ClassVar[Price | None] = None
    """By tier (`published_price`): the default tier, agentic_plus, has no published extraction figure."""

    tier: str = field(
        default="agentic_plus",
        metadata={"help": "extraction tier", "choices": ("cost_effective", "agentic", "agentic_plus")},
    )
    poll_interval: int | float = field(default=5, metadata={"help": "seconds between polls (fractions allowed)"})
    citations: bool = field(default=False, metadata={"help": "ask each field's cited page and boxes (cite_sources)"})
    confidence: bool = field(default=False, metadata={"help": "ask a confidence per field (confidence_scores)"})
    base_url: str = field(default="https://api.cloud.llamaindex.ai", metadata={"help": "API address"})

    def __post_init__(self) -> None:
        if self.poll_interval < 0:
            raise OptionError("option 'poll_interval' of llamaextract must not be negative")

    def prepare_schema(self, schema: dict[str, Any]) -> dict[str, Any]:
        return llama_dialect(schema)

    def published_price(self) -> Price | None:
        """LlamaCloud lists extraction credits per page for two tiers (https://www.llamaindex.ai/pricing:
        cost_effective 5, agentic 15; $1.25 per 1,000 credits pay-as-you-go); agentic_plus has none."""
        credits = {"cost_effective": 5.0, "agentic": 15.0}.get(self.tier)
        if credits is None:
            return None
        return Price(credits_per_page=credits, source="https://www.llamaindex.ai/pricing (extract tier credits)")

    def _session(self, deadline: Deadline) -> Session:
        headers = {"Authorization": f"Bearer {self.env('LLAMA_CLOUD_API_KEY')}"}
        return Session("llamaextract", deadline, base_url=self.base_url.rstrip("/"), headers=headers)

    def submit(self, document: Path, schema: dict[str, Any], deadline: Deadline) -> dict[str, Any]:
        with self._session(deadline) as http:
            projects = http.json("GET", "/api/v1/projects", "the project lookup", timeout=120)
            with reading("the project list", status=200, body=projects):
                project = projects[0]["id"] if isinstance(projects, list) else projects["projects"][0]["id"]
            upload = {
                "file": ("document.pdf", document.read_bytes(), "application/pdf"),
                "purpose": (None, "extract"),
            }
            uploaded = http.json("POST", "/api/v1/beta/files", "the upload", timeout=120, files=upload)
            with reading("the upload answer", status=200, body=uploaded):
                file_id = uploaded["id"]
            request = {
                "file_input": file_id,
                "configuration": {
                    "tier": self.tier,
                    "extraction_target": "per_doc",
                    "data_schema": schema,
                    **({"cite_sources": True} if self.citations else {}),
                    **({"confidence_scores": True} if self.confidence else {}),
                },
            }
            query = {"project_id": project}
            deadline.start()
            submitted = http.json("POST", "/api/v2/extract", "the extract job", timeout=120, params=query, json=request)
        job_id = submitted.get("id") or submitted.get("job_id") if isinstance(submitted, dict) else None
        if not job_id:
            message = f"llamaextract gave no job id: {json.dumps(submitted)[:300]}"
            raise SystemFailed(message, status=200, body=submitted)
        return {"job_id": str(job_id), "project_id": str(project)}

    def collect(self, handle: dict[str, Any], deadline: Deadline) -> Call:
        job_id = held(handle, "job_id", "llamaextract")
        params = {"project_id": held(handle, "project_id", "llamaextract"), "expand": "metadata"}
        with self._session(deadline) as http:

            def fetch() -> Any:
                return http.json("GET", f"/api/v2/extract/{job_id}", "a poll", timeout=120, params=params)

            for body in http.poll(fetch, interval=self.poll_interval, what=f"llamaextract job {job_id}"):
                with reading("a poll", status=200, body=body, job_id=job_id):
                    status = body.get("status")
                if status in DONE | FAILED:
                    break
        if status in FAILED:
            raise SystemFailed(
                f"llamaextract job {job_id} ended {status}: {body.get('error_message')}",
                status=200,
                body=body,
                job_id=job_id,
            )
        latency = _seconds_between(body.get("created_at"), body.get("updated_at"))
        return Call(raw={**body, "tier": self.tier, "server_latency_s": latency}, job_id=job_id)

    def cites(self, raw: Any) -> list[Cite]:
        """`extract_metadata.field_metadata`'s citations and confidences (docs/grounding.md)."""
        return _citing.llamaextract(raw)

    def read(self, raw: Any) -> dict[str, Any]:
        found = raw if isinstance(raw, dict) else {}
        return extraction(found.get("extract_result") or found.get("data") or found.get("result"))
