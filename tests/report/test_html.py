"""The HTML report opened in headless Chromium: the leaderboard shows every system, a document view
opens from the URL and its verdict filter keeps only that verdict. Skipped without Chromium."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from oeb import storage
from oeb.cli import main

BROWSER = next(
    (shutil.which(name) for name in ("chromium", "chromium-browser", "google-chrome") if shutil.which(name)), None
)


@pytest.fixture
def report(make_run, tmp_path) -> tuple[Path, list[str]]:
    urls = [make_run("sloppy"), make_run("perfect")]
    out = tmp_path / "report.html"
    assert main(["report", *urls, "--format", "html", "--out", str(out)]) == 0
    return out, urls


def test_the_page_is_one_self_contained_file(report) -> None:
    page = report[0].read_text()
    assert not re.search(r"<script[^>]+src=|<link[^>]+href=|@import|url\(", page)
    assert page.count('<script type="application/json" id="doc-') == 3  # one lazily parsed block per document


def _chromium(tmp_path: Path, url: str, *flags: str) -> str:
    command = [
        BROWSER,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--hide-scrollbars",
        f"--user-data-dir={tmp_path / 'profile'}",
        "--virtual-time-budget=5000",
        *flags,
        url,
    ]
    return subprocess.run(command, capture_output=True, text=True, timeout=90, check=True).stdout


def _verdict_cells(dom: str) -> list[str]:
    return re.findall(r'class="l verdict k\d-text"[^>]*>([a-z_]+)<', dom)


@pytest.mark.slow  # four Chromium starts; the fast tests keep one, the clicks below
@pytest.mark.must_run
@pytest.mark.skipif(BROWSER is None, reason="no Chromium on this machine (apt-get install -y chromium)")
def test_the_report_renders_in_chromium(report, dataset, tmp_path) -> None:
    out, urls = report
    dom = _chromium(tmp_path, out.as_uri(), "--dump-dom")
    board = dom[dom.index('id="board"') : dom.index("</table>", dom.index('id="board"'))]
    assert board.count("<tr>") == 1 + 2  # header and one row per system
    assert "cost/1k pages" in board and board.count(">$5.00<") == 2  # $0.01 a document, 6 and 4 pages
    assert board.index('mock (name="perfect")') < board.index('mock (name="sloppy")')
    assert dom.count('class="sortable suite"') == 2
    assert 'id="docview" class="open"' not in dom
    provenance = dom[dom.index('id="provenance"') : dom.index("</table>", dom.index('id="provenance"'))]
    assert provenance.count(">f1e1d0c0ffee<") == 2 and "commit 0123456789abcdef, dirty false" in provenance

    details = storage.read_jsonl(storage.join(urls[0], "field_matching", "details", "inv_1.jsonl"))
    kinds = [d["result"] for d in details]
    sloppy = out.as_uri() + "#doc=inv_1&run=1"  # the sloppy run: second by headline
    everything = _chromium(tmp_path, sloppy, "--dump-dom")
    assert 'id="docview" class="open"' in everything
    assert sorted(_verdict_cells(everything)) == sorted(kinds)
    assert '"type": "object"' in everything  # the schema beside the verdicts
    # the link is the manifest's path under the dataset, not pdfs/<id>.pdf
    pdf = Path(dataset, "scans", "Invoice #1.pdf")
    assert f'id="docpdf" target="_blank" rel="noopener" href="{pdf.as_uri()}"' in everything
    assert pdf.as_uri().endswith("/scans/Invoice%20%231.pdf")

    misread = _chromium(tmp_path, sloppy + "&verdict=misread", "--dump-dom")
    assert _verdict_cells(misread) == ["misread"] * kinds.count("misread") != []
    assert f"{kinds.count('misread')} of {len(kinds)} addresses" in misread

    shot = tmp_path / "report.png"
    _chromium(tmp_path, sloppy, "--window-size=1400,1800", f"--screenshot={shot}")
    assert shot.stat().st_size > 10_000


CLICKS = """<script>{
document.querySelector("#board th[data-col='3']").click();  // accuracy, ascending
document.querySelector("#documents a.doc[data-doc='1']").click();
document.getElementById("docrun").value = "1";
const select = document.getElementById("docfilter");
select.value = "unfound";
select.dispatchEvent(new Event("change"));
}</script>
</body>"""


@pytest.mark.must_run
@pytest.mark.skipif(BROWSER is None, reason="no Chromium on this machine (apt-get install -y chromium)")
def test_clicks_sort_the_leaderboard_and_open_a_filtered_document(report, tmp_path) -> None:
    out, urls = report
    clicked = tmp_path / "clicked.html"
    clicked.write_text(out.read_text().replace("</body>", CLICKS))
    dom = _chromium(tmp_path, clicked.as_uri(), "--dump-dom")
    board = dom[dom.index('id="board"') : dom.index("</table>", dom.index('id="board"'))]
    assert board.index('mock (name="sloppy")') < board.index('mock (name="perfect")')  # lowest accuracy first
    assert 'class="sorted-asc"' in board
    assert 'id="docview" class="open"' in dom and "inv_2 · invoices" in dom
    details = storage.read_jsonl(storage.join(urls[0], "field_matching", "details", "inv_2.jsonl"))
    unfound = [d["result"] for d in details if d["result"] == "unfound"]
    assert _verdict_cells(dom) == unfound != []  # the sloppy run (row 1) dropped the vendor
    assert f"{len(unfound)} of {len(details)} addresses" in dom
