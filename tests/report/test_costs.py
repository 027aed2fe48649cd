"""Cost per document and per 1,000 pages: page counts from the PDFs, recorded at grading in
field_matching/documents.json, dollars and credits never added, and runs graded without the file."""

from __future__ import annotations

import json
import uuid
from dataclasses import replace
from pathlib import Path

import pypdf
import pytest
from fixtures.datasets import publish

import oeb.dataset
from oeb import storage
from oeb.cli import main
from oeb.dataset import open_dataset
from oeb.report import leaderboard, load_runs, markdown
from oeb.report.html import render_html
from oeb.run.grade import pages

DOCUMENTS = ("field_matching", "documents.json")
DOCUMENTS_IDS = ("inv_1", "inv_2", "research__[x24] tables")


def _pages(path: Path) -> int:
    return len(pypdf.PdfReader(path).pages)


def _page_data(runs: list) -> dict:
    """The JSON the HTML report embeds for its script."""
    page = render_html(runs, leaderboard(runs))
    return json.loads(page.split('<script id="data" type="application/json">')[1].split("</script>")[0])


def test_grading_records_every_path_and_the_pages_of_priced_documents(make_run, dataset) -> None:
    url = make_run("sloppy")  # its research document failed and reports no cost
    table = storage.read_json(storage.join(url, *DOCUMENTS))
    rows = {row.doc_id: row for row in open_dataset(dataset).rows}
    assert {doc_id: entry["doc_path"] for doc_id, entry in table.items()} == {d: r.doc_path for d, r in rows.items()}
    for doc_id in ("inv_1", "inv_2"):
        path = Path(dataset, rows[doc_id].doc_path)
        assert table[doc_id] == {"doc_path": rows[doc_id].doc_path, "bytes": path.stat().st_size, "pages": _pages(path)}
    assert "pages" not in table["research__[x24] tables"]  # unpriced: its PDF is never read


def test_a_page_count_is_unknown_never_an_error(dataset) -> None:
    opened = open_dataset(dataset)
    folder, row = Path(dataset), opened.rows[0]
    (folder / "broken.pdf").write_bytes((folder / row.doc_path).read_bytes()[:200])
    (folder / "garbage.pdf").write_bytes(b"%PDF-1.7\nnot really")
    (folder / "empty.pdf").write_bytes(b"")
    (folder / "scan.png").write_bytes((folder / row.doc_path).read_bytes())  # not a .pdf: not read
    names = ("broken.pdf", "garbage.pdf", "empty.pdf", "scan.png", "missing.pdf", row.doc_path)
    rows = [replace(row, doc_id=name, doc_path=name) for name in names]
    counts = opened.page_counts(rows)
    assert counts == {name: None for name in names[:-1]} | {row.doc_path: _pages(folder / row.doc_path)}


def test_each_pdf_is_read_once_however_many_systems_are_graded(dataset, monkeypatch) -> None:
    """The plan's estimate and the grading of every system of a run share one opened dataset."""
    opened = open_dataset(dataset)
    parsed: list[bytes] = []
    pdf_pages = oeb.dataset._pdf_pages

    def counted(content: bytes) -> int | None:
        parsed.append(content)
        return pdf_pages(content)

    monkeypatch.setattr(oeb.dataset, "_pdf_pages", counted)
    first = opened.page_counts(opened.rows)
    assert opened.page_counts(opened.rows) == first and opened.page_counts(opened.rows[:1]) == {
        opened.rows[0].doc_id: first[opened.rows[0].doc_id]
    }
    pdfs = {row.doc_path for row in opened.rows if row.doc_path.lower().endswith(".pdf")}
    assert len(parsed) == len(pdfs) > 1


def test_grading_again_counts_only_documents_that_changed(make_run, dataset) -> None:
    url = make_run("perfect")
    opened = open_dataset(dataset)
    records = {doc_id: storage.read_json(storage.join(url, "records", f"{doc_id}.json")) for doc_id in DOCUMENTS_IDS}
    inv_1 = Path(dataset, opened.rows[0].doc_path)
    inv_1.write_bytes(b"x" * inv_1.stat().st_size)  # same size: the count of the last grading stands
    pages.write(url, opened, opened.rows, records)
    assert storage.read_json(storage.join(url, *DOCUMENTS))["inv_1"]["pages"] == 3
    inv_1.write_bytes(b"not a pdf")  # another size: counted again (by a new grading), and unknown now
    opened = open_dataset(dataset)  # an opened dataset reads each PDF's pages once
    pages.write(url, opened, opened.rows, records)
    assert storage.read_json(storage.join(url, *DOCUMENTS))["inv_1"] == {
        "doc_path": "scans/Invoice #1.pdf",
        "bytes": 9,
        "pages": None,
    }


def test_cost_per_1000_pages_is_the_total_cost_over_the_total_pages(make_run, dataset) -> None:
    board = leaderboard(load_runs([make_run("perfect"), make_run("sloppy")]))
    opened = open_dataset(dataset)
    pages = {row.doc_id: _pages(Path(dataset, row.doc_path)) for row in opened.rows}
    priced = {"perfect": DOCUMENTS_IDS, "sloppy": ("inv_1", "inv_2")}
    for row in board["rows"]:
        usd = row["cost"]["usd"]
        ids = priced[row["run"]]
        assert usd["per_1k_pages"] == pytest.approx(1000 * 0.01 * len(ids) / sum(pages[d] for d in ids))
        assert usd["per_1k_pages"] != pytest.approx(sum(1000 * 0.01 / pages[d] for d in ids) / len(ids))
        assert (usd["documents"], usd["paged_documents"], usd["per_doc"]) == (len(ids), len(ids), pytest.approx(0.01))
        assert row["cost"]["credits"] is None
    assert "| cost/doc | cost/1k pages |" in markdown(board) and "| $0.0100 | $5.00 |" in markdown(board)


def test_dollars_and_credits_are_shown_side_by_side_never_added(make_run, dataset, tmp_path) -> None:
    Path(dataset, "papers", "x24 [v2].pdf").write_bytes(b"%PDF-1.4 broken")  # its pages are unknown
    costs = {"inv_1": {"credits": 8}, "inv_2": {"usd": 0.01}, "research__[x24] tables": {"usd": 0.02, "credits": 4}}
    url = make_run("perfect", costs=costs)
    board = leaderboard(load_runs([url]))
    row = board["rows"][0]
    assert row["cost"] == {
        "usd": {
            "documents": 2, "total": pytest.approx(0.03), "per_doc": pytest.approx(0.015),
            "paged_documents": 1, "pages": 1, "per_1k_pages": pytest.approx(10.0),
        },
        "credits": {
            "documents": 2, "total": 12.0, "per_doc": 6.0,
            "paged_documents": 1, "pages": 3, "per_1k_pages": pytest.approx(8000 / 3),
        },
    }  # fmt: skip
    assert "| $0.0150; 6.0000 credits | $10.00 (1/2 docs); 2666.67 credits (1/2 docs) |" in markdown(board)
    out = tmp_path / "board.txt"
    assert main(["report", url, "--out", str(out)]) == 0
    lines = out.read_text().splitlines()  # on a terminal: each unit on a line of its own
    first = next(i for i, line in enumerate(lines) if "$0.0150" in line)
    assert "$10.00 (1/2 docs)" in lines[first] and "100.00–100.00" in lines[first]  # nothing squeezed out
    assert "6.0000 credits" in lines[first + 1] and "2666.67 credits (1/2 docs)" in lines[first + 1]


def test_a_run_graded_without_documents_json_has_no_page_cost_and_no_pdf_link(make_run) -> None:
    url = make_run("perfect")
    storage.remove(storage.join(url, *DOCUMENTS))
    runs = load_runs([url])
    board = leaderboard(runs)
    usd = board["rows"][0]["cost"]["usd"]
    assert (usd["per_doc"], usd["paged_documents"], usd["per_1k_pages"]) == (pytest.approx(0.01), 0, None)
    assert "| $0.0100 | – |" in markdown(board)
    assert [document["pdf"] for document in _page_data(runs)["documents"]] == [None] * 3


def test_a_hub_dataset_is_counted_through_the_cache_and_linked_at_its_commit(make_run, dataset, fake_hub) -> None:
    repo = f"acme/bench-{uuid.uuid4().hex[:8]}"
    url = make_run("perfect", dataset=publish(fake_hub, Path(dataset), repo))
    table = storage.read_json(storage.join(url, *DOCUMENTS))
    assert {doc_id: (entry["bytes"], entry["pages"]) for doc_id, entry in table.items()} == {
        doc_id: (None, _pages(Path(dataset, entry["doc_path"]))) for doc_id, entry in table.items()
    }  # the pinned commit, not the size, says a count still holds
    runs = load_runs([url])
    pdf = _page_data(runs)["documents"][0]["pdf"]
    assert pdf.startswith("http") and pdf.endswith(
        f"/datasets/{repo}/resolve/{fake_hub.commit(repo)}/scans/Invoice%20%231.pdf"
    )


def test_an_s3_dataset_is_read_in_place_and_its_pdfs_shown_as_addresses(make_run, dataset, s3_env) -> None:
    bucket = f"s3://oeb-tests/datasets/{uuid.uuid4().hex[:8]}"
    for path in storage.list_files(dataset):
        storage.write_bytes(storage.join(bucket, path), storage.read_bytes(storage.join(dataset, path)))
    url = make_run("perfect", dataset=bucket)
    table = storage.read_json(storage.join(url, *DOCUMENTS))
    assert {doc_id: (entry["bytes"], entry["pages"]) for doc_id, entry in table.items()} == {
        doc_id: (Path(dataset, entry["doc_path"]).stat().st_size, _pages(Path(dataset, entry["doc_path"])))
        for doc_id, entry in table.items()
    }
    assert _page_data(load_runs([url]))["documents"][0]["pdf"] == f"{bucket}/scans/Invoice #1.pdf"
