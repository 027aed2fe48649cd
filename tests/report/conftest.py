"""Small graded run folders written directly from `oeb.score` outputs (no Ray, no system calls), over
a small dataset of real PDFs whose paths do not follow `pdfs/<id>.pdf`."""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pypdf
import pytest

import oeb
from oeb import storage
from oeb.dataset import open_dataset
from oeb.run.grade import pages
from oeb.run.grade.results import VERDICT_SCHEMA, jsonl, summarize, verdict_json, verdict_table

SCORER_DIGEST = "f1e1d0c0ffee"

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
DOC_PATHS = {
    "inv_1": "scans/Invoice #1.pdf",
    "inv_2": "pdfs/inv_2.pdf",
    "research__[x24] tables": "papers/x24 [v2].pdf",
}
PAGES = {"inv_1": 3, "inv_2": 1, "research__[x24] tables": 2}

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


def pdf(pages: int) -> bytes:
    writer = pypdf.PdfWriter()
    for _ in range(pages):
        writer.add_blank_page(612, 792)
    data = io.BytesIO()
    writer.write(data)
    return data.getvalue()


def write_dataset(folder: Path) -> str:
    """A dataset of the three documents, each a PDF of PAGES[doc_id] pages at DOC_PATHS[doc_id]."""
    for doc_id, gold in GOLD.items():
        (folder / DOC_PATHS[doc_id]).parent.mkdir(parents=True, exist_ok=True)
        (folder / DOC_PATHS[doc_id]).write_bytes(pdf(PAGES[doc_id]))
        (folder / "gold").mkdir(exist_ok=True)
        (folder / "gold" / f"{doc_id}.json").write_text(json.dumps(gold))
    columns = {
        "doc_id": list(GOLD),
        "doc_path": [DOC_PATHS[doc_id] for doc_id in GOLD],
        "gt_path": [f"gold/{doc_id}.json" for doc_id in GOLD],
        "schema": [json.dumps(SCHEMA)] * len(GOLD),
        "suite": [SUITES[doc_id] for doc_id in GOLD],
    }
    pq.write_table(pa.table(columns), folder / "manifest.parquet")
    return str(folder)


def provenance(dataset: str, scorer: str = SCORER_DIGEST) -> dict[str, Any]:
    """summary.json's `provenance` as grading writes it (the contract in docs/reports.md)."""
    opened = open_dataset(dataset)
    return {
        "oeb": oeb.__version__,
        "scorer": scorer,
        "git": {"commit": "0123456789abcdef", "dirty": False},
        "python": "3.12.9",
        "packages": {"numpy": "2.5.0", "scipy": "1.18.0"},
        "platform": "Linux-x86_64",
        **opened.settings(),
        "dataset_commit": opened.commit,
        "manifest_sha256": "ab" * 32,
        "graded_at": "2026-12-01T15:00:00Z",
    }


def write_run(
    folder: str,
    name: str,
    answers: dict[str, Any],
    dataset: str,
    costs: dict[str, dict[str, Any]] | None = None,
    *,
    brought: bool = False,
    scorer: str | None = SCORER_DIGEST,
    golds: dict[str, Any] | None = None,
    schema: dict[str, Any] | None = None,
    suites: dict[str, str] | None = None,
) -> str:
    """A run folder as `oeb run` leaves it: settings, records with costs (`costs[doc_id]`, by default
    $0.01 per answered document), predictions, scores, summary (with the provenance when `scorer`),
    details, verdicts.parquet and documents.json (written by the grade stage's own function). `brought`:
    a folder of one's own predictions as `oeb grade mine/ --dataset D` leaves it (no settings.json, no
    records). `golds`, `schema` and `suites` default to the fixture dataset's."""
    url = storage.join(folder, name)
    opened = open_dataset(dataset)
    golds = GOLD if golds is None else golds
    suites = SUITES if suites is None else suites
    if not brought:
        storage.write_json(
            storage.join(url, "settings.json"),
            {"run": name, "system": "mock", "options": {"name": name}, **opened.settings()},
        )
    lines, records, tables = [], {}, []
    stamp = {} if scorer is None else {"scorer": scorer}
    for doc_id, gold in golds.items():
        prediction = answers.get(doc_id)
        row = {"suite": suites[doc_id]}
        cost = (costs or {}).get(doc_id, {"usd": 0.01 if prediction else None})
        error = None if prediction else {"type": "SystemFailed", "message": "400"}
        records[doc_id] = {"output": prediction, "sent": schema or SCHEMA, "error": error, "cost": cost}
        if prediction:
            storage.write_json(storage.join(url, "predictions", f"{doc_id}.json"), prediction)
        if not brought:
            storage.write_json(storage.join(url, "records", f"{doc_id}.json"), records[doc_id])
        if prediction is None:
            lines.append({"id": doc_id, "status": "failed", "row": row, "error": "SystemFailed: 400", **stamp})
            continue
        result = oeb.score(prediction, gold, schema or SCHEMA, verdicts=True)
        verdicts = [verdict_json(v) for v in result.pop("verdicts")]
        storage.write_bytes(storage.join(url, "field_matching", "details", f"{doc_id}.jsonl"), jsonl(verdicts))
        tables.append(verdict_table(doc_id, verdicts))
        lines.append({"id": doc_id, "status": "scored", "row": row, **result, **stamp})
    storage.write_bytes(storage.join(url, "field_matching", "scores.jsonl"), jsonl(lines))
    storage.write_parquet(
        storage.join(url, "field_matching", "verdicts.parquet"),
        pa.concat_tables(tables) if tables else VERDICT_SCHEMA.empty_table(),
    )
    summary = summarize(lines, name)
    if scorer is not None:
        summary["provenance"] = provenance(dataset, scorer)
    storage.write_json(storage.join(url, "field_matching", "summary.json"), summary)
    pages.write(url, opened, [r for r in opened.rows if r.doc_id in golds], records)
    return url


@pytest.fixture
def make_dataset(tmp_path) -> Callable[[str], str]:
    """Writes the dataset into tmp_path/<name>."""
    return lambda name: write_dataset(tmp_path / name)


@pytest.fixture
def dataset(make_dataset) -> str:
    return make_dataset("oebdata")


@pytest.fixture
def make_run(tmp_path, dataset) -> Callable[..., str]:
    """Writes a run folder under tmp_path over `dataset`; `make_run("sloppy")` answers with
    PREDICTIONS["sloppy"]."""

    def make(name: str, answers: dict[str, Any] | None = None, **kwargs: Any) -> str:
        kwargs.setdefault("dataset", dataset)
        return write_run(str(tmp_path), name, PREDICTIONS[name] if answers is None else answers, **kwargs)

    return make
