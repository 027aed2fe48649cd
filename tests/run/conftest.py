"""Small runs for the run engine's tests; their in-process Ray is `ray_cluster` of
`tests/fixtures/local_ray.py`, shared with the vendor runs of `tests/systems`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from oeb.dataset import SAMPLE_DATASET
from oeb.run.plan.config import Config, check_tree, init_tree


def mock_config(changes: dict[str, Any] | None = None, dataset: str | Path = SAMPLE_DATASET) -> Config:
    """A config running `mock` (no latency, no rate limit, 1 actor, 2 in flight) on the sample;
    `changes` maps dotted keys (`system.mock.misread`, `ray.actors`) to their values."""
    tree = init_tree("mock", str(dataset))
    tree["ray"] = {"address": None, "actors": 1, "rate_limit": {"requests_per_second": None, "max_in_flight": 0}}
    tree["workers"] = 2
    for path, value in (changes or {}).items():
        *parents, last = path.split(".")
        node = tree
        for key in parents:
            node = node[key]
        node[last] = value
    return check_tree(tree, where="test config")


@pytest.fixture
def many_rows(tmp_path: Path) -> Path:
    """A 40-row dataset of tiny invoices (each document a placeholder PDF beside its gold)."""
    folder = tmp_path / "many"
    (folder / "pdfs").mkdir(parents=True)
    (folder / "gold").mkdir()
    schema = {"type": "object", "properties": {"number": {"type": "string"}, "total": {"type": "number"}}}
    ids = [f"invoice_{n:03d}" for n in range(40)]
    for n, doc_id in enumerate(ids):
        (folder / "pdfs" / f"{doc_id}.pdf").write_bytes(b"%PDF-1.4\n%%EOF\n")
        (folder / "gold" / f"{doc_id}.json").write_text(json.dumps({"number": f"INV-{n}", "total": n * 1.5}))
    columns = {
        "doc_id": ids,
        "doc_path": [f"pdfs/{doc_id}.pdf" for doc_id in ids],
        "gt_path": [f"gold/{doc_id}.json" for doc_id in ids],
        "schema": [json.dumps(schema)] * len(ids),
        "suite": ["invoices"] * len(ids),
    }
    pq.write_table(pa.table(columns), folder / "manifest.parquet")
    return folder
