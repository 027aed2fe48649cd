"""Small graded run folders written directly from `oeb.score` outputs (no Ray, no system calls)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

import oeb
from oeb import storage
from oeb.run.results import jsonl, summarize, verdict_json

SCHEMA = {
    "type": "object",
    "properties": {
        "vendor": {"type": "string"},
        "total": {"type": "number"},
        "note": {"type": ["string", "null"]},
        "lines": {"type": "array", "items": {"type": "object", "properties": {"sku": {"type": "string"}}}},
    },
}
GOLD = {
    "inv_1": {"vendor": "Acme", "total": 10.5, "note": None, "lines": [{"sku": "A1"}, {"sku": "B2"}]},
    "inv_2": {"vendor": "Corner Café", "total": 7, "note": "paid </script><!--", "lines": [{"sku": "C3"}]},
    "research__[x24] tables": {"vendor": "Lab", "total": 1, "note": None, "lines": []},
}
SUITES = {"inv_1": "invoices", "inv_2": "invoices", "research__[x24] tables": "research"}

PREDICTIONS: dict[str, dict[str, Any]] = {
    # every answer right
    "perfect": dict(GOLD),
    # misread, unfound, fabricated, invented item and invented field, and one failed document
    "sloppy": {
        "inv_1": {"vendor": "Acme", "total": 11, "note": "x", "lines": [{"sku": "A1"}, {"sku": "B2"}, {"sku": "Z"}]},
        "inv_2": {"vendor": None, "total": 7, "note": "paid </script><!--", "lines": [{"sku": "C3"}], "extra": 1},
        "research__[x24] tables": None,
    },
}


def write_run(folder: str, name: str, answers: dict[str, Any], dataset: str = "/data/oebdata") -> str:
    """A run folder as `oeb run` leaves it: settings, records with costs, scores, summary, details."""
    url = storage.join(folder, name)
    storage.write_json(
        storage.join(url, "settings.json"),
        {"run": name, "system": "mock", "options": {"name": name}, "dataset": dataset, "manifest": "manifest.parquet"},
    )
    lines = []
    for doc_id, gold in GOLD.items():
        prediction = answers.get(doc_id)
        row = {"suite": SUITES[doc_id]}
        record = {"output": prediction, "sent": SCHEMA, "cost": {"usd": 0.01 if prediction else None}}
        storage.write_json(storage.join(url, "records", f"{doc_id}.json"), record)
        if prediction is None:
            lines.append({"id": doc_id, "status": "failed", "row": row, "error": "SystemFailed: 400"})
            continue
        result = oeb.score(prediction, gold, SCHEMA, verdicts=True)
        verdicts = [verdict_json(v) for v in result.pop("verdicts")]
        storage.write_bytes(storage.join(url, "field_matching", "details", f"{doc_id}.jsonl"), jsonl(verdicts))
        lines.append({"id": doc_id, "status": "scored", "row": row, **result})
    storage.write_bytes(storage.join(url, "field_matching", "scores.jsonl"), jsonl(lines))
    storage.write_json(storage.join(url, "field_matching", "summary.json"), summarize(lines, name))
    return url


@pytest.fixture
def make_run(tmp_path) -> Callable[..., str]:
    """Writes a run folder under tmp_path; `make_run("sloppy")` answers with PREDICTIONS["sloppy"]."""

    def make(name: str, answers: dict[str, Any] | None = None, **kwargs: Any) -> str:
        return write_run(str(tmp_path), name, PREDICTIONS[name] if answers is None else answers, **kwargs)

    return make
