"""`replay`: an offline system that answers with saved answers instead of asking anyone.

Useful to re-grade or re-report old answers through a full run, to compare harness versions on
identical answers, and to test the engine without a network. `source` is either an archived run
folder (its `records/<id>.json` are replayed: the answer, its cost and job id, or the recorded
failure) or a folder of predictions (`<id>.json`, or a run folder's `predictions/`). The document
is matched by its file stem, which the dataset layout makes equal to the row id.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from oeb.systems import errors
from oeb.systems.base import Adapter, Call, Cost, Deadline, Price, RetryPolicy
from oeb.systems.errors import SystemFailed

_FAILURES = {
    cls.__name__: cls
    for cls in (
        errors.SystemFailed,
        errors.SystemTimeout,
        errors.SystemUnreachable,
        errors.Unreadable,
        errors.DialectError,
    )
}


def _load(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8-sig"))
    except (OSError, ValueError) as error:
        raise SystemFailed(f"replay cannot read {path}: {error}") from error


@dataclass(frozen=True)
class Replay(Adapter):
    name: ClassVar[str] = "replay"
    description: ClassVar[str] = "OFFLINE REPLAY: answers with saved predictions or a run folder's records (no key)"
    retry: ClassVar[RetryPolicy] = RetryPolicy(retries=0)
    """A replayed failure would only repeat itself."""
    price: ClassVar[Price | None] = Price(usd_per_document=0.0, source="replay asks no one")
    paths: ClassVar[tuple[str, ...]] = ("source",)

    source: str = field(metadata={"help": "a run folder, or a folder of <id>.json predictions"})

    def extract(self, document: Path, schema: dict[str, Any], deadline: Deadline) -> Call:
        root = Path(self.source)
        record = root / "records" / f"{document.stem}.json"
        if record.is_file():
            return self._replay(_load(record))
        for path in (root / "predictions" / f"{document.stem}.json", root / f"{document.stem}.json"):
            if path.is_file():
                return Call(raw={"extraction": _load(path), "replayed": str(path)})
        raise SystemFailed(f"replay has no saved answer for {document.stem} in {root}")

    @staticmethod
    def _replay(record: dict[str, Any]) -> Call:
        saved = record.get("cost") or {}
        cost = Cost(**{k: saved.get(k) for k in ("usd", "credits", "source", "tokens_in", "tokens_out")})
        error = record.get("error")
        if error:
            failure = _FAILURES.get(error.get("type"), SystemFailed)
            raise failure(
                error.get("message", ""),
                status=error.get("status"),
                body=record.get("raw"),
                cost=cost,
                job_id=record.get("job_id"),
            )
        return Call(
            raw={"extraction": record.get("output"), "replayed": record.get("system")},
            cost=cost,
            job_id=record.get("job_id"),
        )
