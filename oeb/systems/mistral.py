"""Mistral OCR with a document annotation: one request, the PDF inline, no polling."""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from oeb.systems._http import Session
from oeb.systems._reading import dig, extraction, number, reading
from oeb.systems.base import Adapter, Call, Cost, Deadline, Price
from oeb.systems.errors import SystemFailed

MODEL = "mistral-ocr-latest"
"""Not pinned, as in the reference; the response's `model` field records what actually ran."""


@dataclass(frozen=True)
class Mistral(Adapter):
    name: ClassVar[str] = "mistral"
    description: ClassVar[str] = "Mistral OCR with a JSON-schema document annotation (https://mistral.ai)"
    keys: ClassVar[tuple[str, ...]] = ("MISTRAL_API_KEY",)
    workers: ClassVar[int] = 5
    located: ClassVar[tuple[str, ...]] = ("base_url",)
    price: ClassVar[Price | None] = Price(
        usd_per_page=0.004,
        source="https://mistral.ai/pricing: OCR at $4 per 1,000 pages (OCR 4; a document annotation may be billed "
        "on top); the answer's usage_info.cost says what was billed",
    )

    base_url: str = field(default="https://api.mistral.ai", metadata={"help": "API address"})

    def extract(self, document: Path, schema: dict[str, Any], deadline: Deadline) -> Call:
        data_url = "data:application/pdf;base64," + base64.b64encode(document.read_bytes()).decode()
        body = {
            "model": MODEL,
            "document": {"type": "document_url", "document_url": data_url},
            "document_annotation_format": {
                "type": "json_schema",
                "json_schema": {"name": "extraction", "schema": schema, "strict": False},
            },
        }
        headers = {"Authorization": f"Bearer {self.env('MISTRAL_API_KEY')}"}
        with Session("mistral", deadline, base_url=self.base_url.rstrip("/"), headers=headers) as http:
            raw = http.json("POST", "/v1/ocr", "the OCR request", timeout=deadline.remaining(), json=body)
        cost = number(dig(raw, "usage_info.cost"))
        return Call(raw=raw, cost=Cost(usd=cost, source="usage_info.cost") if cost is not None else Cost())

    def read(self, raw: Any) -> dict[str, Any]:
        value = raw.get("document_annotation") if isinstance(raw, dict) else None
        if value is None:
            raise SystemFailed("mistral's response has no document_annotation")
        if isinstance(value, str):
            with reading("document_annotation"):
                value = json.loads(value)
        return extraction(value)
