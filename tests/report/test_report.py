"""The leaderboard recomputed independently from scores.jsonl, the refusals, the CLI and compare."""

from __future__ import annotations

import json
import uuid

import pytest

from oeb import storage
from oeb.cli import main
from oeb.errors import ReportError, ReportMismatch
from oeb.report import bootstrap_ci, compare, leaderboard, load_run, load_runs
from oeb.report.html import pdf_link

KINDS = ("misread", "unfound", "fabricated", "invented_item", "invented_field")


def test_rows_are_recomputed_from_scores_and_agree_with_the_summary(make_run) -> None:
    urls = [make_run("sloppy"), make_run("perfect")]
    board = leaderboard(load_runs(urls))
    assert [row["run"] for row in board["rows"]] == ["perfect", "sloppy"]  # best headline first
    for row, url in zip(board["rows"], reversed(urls), strict=True):
        lines = storage.read_jsonl(storage.join(url, "field_matching", "scores.jsonl"))
        summary = storage.read_json(storage.join(url, "field_matching", "summary.json"))
        scored = [line for line in lines if line["status"] == "scored"]
        shares = {k: sum(line[k] / line["total"] for line in scored) / len(scored) for k in KINDS}
        matched = sum(line["matched"] / line["total"] for line in scored) / len(scored)
        assert row["accuracy"] == pytest.approx(matched)
        assert {k: row[k] for k in KINDS} == pytest.approx(shares)
        assert 100 * (row["accuracy"] + sum(row[k] for k in KINDS)) == pytest.approx(100)
        assert row["coverage"] == pytest.approx(summary["coverage"])
        assert row["headline"] == pytest.approx(summary["headline"])
        assert row["cost"]["usd"]["per_doc"] == pytest.approx(0.01)
        assert (row["scored"], row["documents"]) == (len(scored), len(lines))
        low, high = row["ci95"]
        assert low <= row["accuracy"] <= high
        for suite, means in row["per_suite"].items():
            if suite in summary["scored"]["per_suite"]:
                assert means["accuracy"] == pytest.approx(summary["scored"]["per_suite"][suite]["accuracy"])
    sloppy = board["rows"][1]
    assert all(sloppy[k] > 0 for k in KINDS)  # the fixture exercises every error kind
    research = sloppy["per_suite"]["research"]  # its only document failed
    assert (research["accuracy"], research["scored"], research["failed"], research["headline"]) == (None, 0, 1, 0.0)


def test_bootstrap_is_seeded_and_narrows_to_a_constant() -> None:
    values = [((i * 7919) % 101) / 100 for i in range(40)]
    assert bootstrap_ci(values) == bootstrap_ci(values)
    assert bootstrap_ci(values) != bootstrap_ci(values, seed=1)
    assert bootstrap_ci([0.5] * 10) == (0.5, 0.5)
    assert bootstrap_ci([]) is None


def test_runs_on_other_datasets_or_documents_are_refused(make_run, make_dataset) -> None:
    perfect = make_run("perfect")
    other = make_run("sloppy", dataset=make_dataset("elsewhere"))
    with pytest.raises(ReportMismatch, match=r"perfect and sloppy differ in dataset"):
        load_runs([perfect, other])
    fewer = make_run("fewer", {"inv_1": {"vendor": "Acme"}})
    storage.write_bytes(
        storage.join(fewer, "field_matching", "scores.jsonl"),
        storage.read_bytes(storage.join(fewer, "field_matching", "scores.jsonl")).splitlines(keepends=True)[0],
    )
    with pytest.raises(ReportMismatch, match=r"differ in documents \(2 only in perfect, 0 only in fewer"):
        load_runs([perfect, fewer])


def test_the_same_setting_twice_and_a_folder_that_is_no_run_are_refused(make_run, tmp_path, capsys) -> None:
    perfect = make_run("perfect")
    with pytest.raises(ReportError, match="same system setting"):
        load_runs([perfect, perfect])
    assert main(["report", str(tmp_path / "nothing")]) == 1
    error = capsys.readouterr().err
    assert error.startswith("oeb report: no folder at ") and error.count("\n") == 1


def test_report_formats(make_run, tmp_path, capsys) -> None:
    urls = [make_run("perfect"), make_run("sloppy")]
    assert main(["report", *urls, "--format", "json"]) == 0
    board = json.loads(capsys.readouterr().out)
    assert [row["run"] for row in board["rows"]] == ["perfect", "sloppy"]
    assert main(["report", *urls, "--format", "md"]) == 0
    markdown = capsys.readouterr().out
    assert '| mock (name="perfect") | 100.00 | 100.00 |' in markdown and "## Accuracy per suite" in markdown
    assert main(["report", *urls, "--out", str(tmp_path / "board.txt")]) == 0
    text = (tmp_path / "board.txt").read_text()
    assert 'mock (name="sloppy")' in text and "invoices" in text


def test_a_report_over_s3(make_run, s3_env) -> None:
    folder = f"s3://oeb-tests/reports/{uuid.uuid4().hex[:8]}"
    local = make_run("sloppy")
    for path in storage.list_files(local):
        storage.write_bytes(storage.join(folder, path), storage.read_bytes(storage.join(local, path)))
    assert (
        leaderboard([load_run(folder)])["rows"][0]["headline"] == leaderboard([load_run(local)])["rows"][0]["headline"]
    )


def test_compare_puts_the_largest_change_first_with_the_moved_verdicts(make_run, capsys) -> None:
    perfect, sloppy = load_runs([make_run("perfect"), make_run("sloppy")])
    result = compare(perfect, sloppy)
    research = result["per_suite"]["research"]["top"][0]
    assert research["status"] == ["scored", "failed"] and research["delta"] == -1.0
    invoices = result["per_suite"]["invoices"]["top"]
    assert [abs(doc["delta"]) for doc in invoices] == sorted((abs(doc["delta"]) for doc in invoices), reverse=True)
    assert invoices[0]["moved"]["matched"] < 0
    assert set(invoices[0]["moved"]) | set(invoices[1]["moved"]) >= {"misread", "invented_item", "invented_field"}
    assert main(["compare", perfect.url, sloppy.url]) == 0
    out = capsys.readouterr().out
    assert "research__[x24] tables" in out and "failed" in out


def test_pdf_links_follow_the_manifest_path_under_the_dataset(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HF_ENDPOINT", raising=False)  # the session's fake Hub (tests/fixtures) may have set it
    assert pdf_link("hf://datasets/org/bench", "abc", "docs/research__[x] y#2.pdf") == (
        "https://huggingface.co/datasets/org/bench/resolve/abc/docs/research__%5Bx%5D%20y%232.pdf"
    )
    assert pdf_link("s3://bucket/data", None, "scans/a b.pdf") == "s3://bucket/data/scans/a b.pdf"
    assert pdf_link("/data/oebdata", None, "scans/a #1.pdf") == "file:///data/oebdata/scans/a%20%231.pdf"
    assert pdf_link("/data/oebdata", None, None) is None  # graded before documents.json: no guessed link
