"""LlamaExtract (LlamaCloud): find the project, upload, submit a v2 extract job, poll it."""

from __future__ import annotations

import datetime
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from oeb.systems._http import Session
from oeb.systems._reading import extraction, reading
from oeb.systems.base import Adapter, Budget, Call
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
    located: ClassVar[tuple[str, ...]] = ("base_url",)

    tier: str = field(
        default="agentic_plus",
        metadata={"help": "extraction tier", "choices": ("cost_effective", "agentic", "agentic_plus")},
    )
    poll_interval: int | float = field(default=5, metadata={"help": "seconds between polls (fractions allowed)"})
    base_url: str = field(default="https://api.cloud.llamaindex.ai", metadata={"help": "API address"})

    def __post_init__(self) -> None:
        if self.poll_interval < 0:
            raise OptionError("option 'poll_interval' of llamaextract must not be negative")

    def prepare_schema(self, schema: dict[str, Any]) -> dict[str, Any]:
        return llama_dialect(schema)

    def extract(self, document: Path, schema: dict[str, Any], budget: Budget) -> Call:
        headers = {"Authorization": f"Bearer {self.env('LLAMA_CLOUD_API_KEY')}"}
        with Session("llamaextract", budget, base_url=self.base_url.rstrip("/"), headers=headers) as http:
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
                "configuration": {"tier": self.tier, "extraction_target": "per_doc", "data_schema": schema},
            }
            query = {"project_id": project}
            submitted = http.json("POST", "/api/v2/extract", "the extract job", timeout=120, params=query, json=request)
            job_id = submitted.get("id") or submitted.get("job_id") if isinstance(submitted, dict) else None
            if not job_id:
                raise SystemFailed(
                    f"llamaextract gave no job id: {json.dumps(submitted)[:300]}", status=200, body=submitted
                )

            def fetch() -> Any:
                params = {**query, "expand": "metadata"}
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

    def read(self, raw: Any) -> dict[str, Any]:
        found = raw if isinstance(raw, dict) else {}
        return extraction(found.get("extract_result") or found.get("data") or found.get("result"))
