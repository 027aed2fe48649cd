"""`oeb grade` on the in-process Ray writes documents.json: every document's manifest path and the
page counts of the priced ones, read from the PDFs; grading again counts only what changed."""

from __future__ import annotations

from pathlib import Path

import pypdf
import pytest

from oeb import storage
from oeb.report import leaderboard, load_runs
from oeb.run import engine

pytestmark = pytest.mark.ray


def test_grading_records_paths_and_pages_for_the_leaderboard(ray_cluster, make_run, dataset) -> None:
    url = make_run("sloppy")  # inv_1 and inv_2 priced at $0.01, the research document failed unpriced
    documents = storage.join(url, "field_matching", "documents.json")
    storage.remove(documents)
    engine.grade_folder(url)
    table = storage.read_json(documents)
    pages = {doc_id: len(pypdf.PdfReader(Path(dataset, table[doc_id]["doc_path"])).pages) for doc_id in table}
    assert {doc_id: entry.get("pages") for doc_id, entry in table.items()} == {
        "inv_1": pages["inv_1"],
        "inv_2": pages["inv_2"],
        "research__[x24] tables": None,
    }
    assert table["inv_1"]["doc_path"] == "scans/Invoice #1.pdf"
    usd = leaderboard(load_runs([url]))["rows"][0]["cost"]["usd"]
    assert usd["per_1k_pages"] == pytest.approx(1000 * 0.02 / (pages["inv_1"] + pages["inv_2"]))
