"""Datalab (www.datalab.to): one multipart upload starts the job (the handle is its request id), then
polls until the extraction is complete, and with `confidence` a while longer for the per-field scores,
which Datalab adds to the finished request later (docs/grounding.md)."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from oeb.systems import datalab_citing
from oeb.systems._http import Session, held
from oeb.systems._reading import dig, extraction, number, reading
from oeb.systems.base import Adapter, Call, Cite, Cost, Deadline, Price
from oeb.systems.errors import OptionError, SystemFailed
from oeb.systems.schema import optional_by_omission


def _cost(body: Any) -> Cost:
    """Datalab bills in cents; dollars are cents / 100, once."""
    for path in ("cost_breakdown.final_cost_cents", "total_cost"):
        cents = number(dig(body, path))
        if cents is not None:
            return Cost(usd=round(cents / 100, 6), source=path)
    return Cost()


@dataclass(frozen=True)
class Datalab(Adapter):
    name: ClassVar[str] = "datalab"
    description: ClassVar[str] = "Datalab structured extraction (https://www.datalab.to)"
    keys: ClassVar[tuple[str, ...]] = ("DATALAB_API_KEY",)
    workers: ClassVar[int] = 10
    located: ClassVar[tuple[str, ...]] = ("base_url",)
    price: ClassVar[Price | None] = Price(
        usd_per_page=0.006,
        source="https://documentation.datalab.to structured-extraction recipes: balanced $6 per 1,000 pages, "
        "accurate $25 (another page of the same docs lists balanced at $25: check before relying on it)",
    )

    mode: str = field(
        default="balanced",
        metadata={
            "help": "extraction tier; the published runs used balanced and accurate",
            "choices": ("fast", "balanced", "accurate"),
        },
    )
    base_url: str = field(default="https://www.datalab.to", metadata={"help": "API address"})
    poll_interval: float = field(default=5.0, metadata={"help": "seconds between polls"})
    citations: bool = field(
        default=False,
        metadata={
            "help": "keep each value's cited blocks (<field>_citations, returned in every mode) as its page and "
            "box, from the json output oeb always asks for: no extra request or charge"
        },
    )
    confidence: bool = field(
        default=False,
        metadata={
            "help": "keep polling the finished request up to score_wait seconds for each value's _score (1-5, "
            "read as (score-1)/4); Datalab documents the scores for mode fast"
        },
    )
    score_wait: float = field(
        default=60.0, metadata={"help": "most seconds to wait for the scores after completion (with confidence)"}
    )

    def __post_init__(self) -> None:
        if not self.score_wait >= 0:
            raise OptionError("option 'score_wait' of datalab must be a number of seconds, 0 or more")

    def prepare_schema(self, schema: dict[str, Any]) -> dict[str, Any]:
        return optional_by_omission(schema)

    def published_price(self) -> Price | None:
        """Datalab prices by mode: accurate costs about four times balanced; fast has no figure here."""
        listed = type(self).price
        if listed is None or self.mode == "balanced":
            return listed
        return dataclasses.replace(listed, usd_per_page=0.025) if self.mode == "accurate" else None

    def _session(self, deadline: Deadline) -> Session:
        headers = {"X-Api-Key": self.env("DATALAB_API_KEY")}
        return Session("datalab", deadline, base_url=self.base_url.rstrip("/"), headers=headers)

    def submit(self, document: Path, schema: dict[str, Any], deadline: Deadline) -> dict[str, Any]:
        with self._session(deadline) as http:
            parts = {
                "page_schema": (None, json.dumps(schema)),
                "extraction_mode": (None, self.mode),
                "output_format": (None, "json"),
                "file": (document.name, document.read_bytes(), "application/pdf"),
            }
            submitted = http.json("POST", "/api/v1/extract", "the upload", timeout=120, expect=200, files=parts)
        request_id = submitted.get("request_id") if isinstance(submitted, dict) else None
        if not request_id:
            raise SystemFailed(
                f"datalab gave no request_id for the upload: {json.dumps(submitted)[:300]}",
                status=200,
                body=submitted,
            )
        return {"request_id": request_id}

    def collect(self, handle: dict[str, Any], deadline: Deadline) -> Call:
        request_id = held(handle, "request_id", "datalab")
        url = f"/api/v1/extract/{request_id}"
        with self._session(deadline) as http:

            def fetch() -> Any:
                return http.json("GET", url, "a poll", timeout=120, expect=200)

            cost = Cost()
            for body in http.poll(fetch, interval=self.poll_interval, what=f"datalab request {request_id}"):
                with reading("a poll", status=200, body=body, job_id=request_id):
                    status = body.get("status")
                found = _cost(body)
                cost = found if found.priced else cost
                if status == "error":
                    raise SystemFailed(
                        f"datalab reported a failure: {body.get('error')}",
                        status=200,
                        body=body,
                        cost=cost,
                        job_id=request_id,
                    )
                if status == "complete":
                    break
            if self.confidence:
                body = self._scored(fetch, body, deadline)
                found = _cost(body)
                cost = found if found.priced else cost
            if not cost.priced:
                # Datalab fills in billing just after completion; missing it loses nothing paid.
                with contextlib.suppress(SystemFailed):
                    cost = _cost(fetch())
        return Call(raw=body, cost=cost, job_id=request_id)

    def _scored(self, fetch: Callable[[], Any], body: dict[str, Any], deadline: Deadline) -> dict[str, Any]:
        """The finished request once its scores are in (`extraction_score_average`), polling at most
        `score_wait` seconds and never more than half the document's time left; else the answer as it
        finished. The extraction is done and paid: a late or failed score poll never fails it."""
        end = time.monotonic() + min(self.score_wait, deadline.remaining() / 2)
        while body.get("extraction_score_average") is None and time.monotonic() < end:
            deadline.sleep(min(self.poll_interval, end - time.monotonic()))
            try:
                later = fetch()
            except SystemFailed:
                break
            if isinstance(later, dict) and later.get("status") == "complete" and "extraction_schema_json" in later:
                body = later
        return body

    def cites(self, raw: Any) -> list[Cite]:
        """Each value's first cited block (`citations`) and score (`confidence`): docs/grounding.md."""
        if not (self.citations or self.confidence):
            return []
        return datalab_citing.cites(raw, places=self.citations, scores=self.confidence)

    def read(self, raw: Any) -> dict[str, Any]:
        value = raw.get("extraction_schema_json") if isinstance(raw, dict) else None
        if value is None:
            raise SystemFailed("datalab said the request was complete but sent no extraction_schema_json")
        if isinstance(value, str):
            with reading("extraction_schema_json"):
                value = json.loads(value)
        # Scores asked for (`confidence`) are sidecars; unasked, an answer is read as the reference reads it.
        return extraction(datalab_citing.without_scores(value) if self.confidence else value)
