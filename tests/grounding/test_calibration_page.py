"""`oeb view`'s calibration page in headless Chromium: drawn from /api/calibration, one point per
curve point the API gives, the reliability diagram's points where the API puts them; the export
holds the page and its answer."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright import sync_api

from oeb.view.api import open_view
from oeb.view.app import server
from oeb.view.export import export

CHROMIUM = Path("/usr/bin/chromium")
pytestmark = [
    pytest.mark.slow,  # a browser start
    pytest.mark.must_run,  # under CI=true a missing Chromium fails the run
    pytest.mark.skipif(not CHROMIUM.exists(), reason="no Chromium (apt-get install -y chromium)"),
]


@pytest.fixture(scope="module")
def served(sample_runs: dict[str, Path]) -> Iterator[tuple[object, str]]:
    view = open_view([str(sample_runs["cited"]), str(sample_runs["plain"])])
    httpd = server(view, "127.0.0.1", 0)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield view, f"http://127.0.0.1:{httpd.server_port}/"
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_the_calibration_page_draws_what_the_api_says(served: tuple[object, str]) -> None:
    view, url = served
    answer = view.calibration_json()  # type: ignore[attr-defined]
    cited = next(run for run in answer["runs"] if run["confidence"])
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.goto(url + "calibration")
        page.locator("#reliability").wait_for()
        rows = page.locator("#calibration tbody tr")
        assert rows.count() == 2 and "n/a" in rows.nth(1).inner_text()
        assert page.locator(f'#risk-coverage circle[data-run="{cited["name"]}"]').count() == len(cited["risk_coverage"])
        dots = page.locator(f'#reliability circle[data-run="{cited["name"]}"]')
        assert dots.count() == len(cited["reliability"])
        _, _, confidence, accuracy, _ = cited["reliability"][-1]
        cx, cy = (float(dots.nth(dots.count() - 1).get_attribute(name)) for name in ("cx", "cy"))
        assert cx == pytest.approx(46 + confidence * (360 - 46 - 12), abs=0.01)
        assert cy == pytest.approx(300 - 40 - accuracy * (300 - 24 - 40), abs=0.01)
        assert "Calibration" in page.locator("nav").inner_text()
        browser.close()
    assert not errors


def test_the_export_holds_the_calibration_page(served: tuple[object, str], tmp_path: Path) -> None:
    view, _ = served
    export(view, str(tmp_path / "site"))  # type: ignore[arg-type]
    assert (tmp_path / "site" / "calibration.html").exists()
    answer = json.loads((tmp_path / "site" / "api" / "calibration.json").read_text())
    assert [run["confidence"] for run in answer["runs"]].count(True) == 1


def test_the_document_page_draws_the_cited_box_where_the_api_says(served: tuple[object, str]) -> None:
    view, url = served
    cited_label = next(
        name
        for name, run in zip(view.labels, view.runs, strict=True)  # type: ignore[attr-defined]
        if (Path(run.url) / "field_matching" / "grounding.parquet").exists()
    )
    doc_id = "short__invoice_4417"
    answer = view.document_json(cited_label, doc_id)  # type: ignore[attr-defined]
    verdict = next(v for v in answer["verdicts"] if v.get("grounding") == "matched_cited_right" and v["cited"]["bbox"])
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.goto(f"{url}documents/{doc_id}?run={cited_label}")
        page.locator(f'tr.verdict[data-address="{verdict["address"]}"]').click()
        cited = page.locator(".box.cited")
        cited.wait_for()
        holder = page.locator(f'.page[data-page="{verdict["cited"]["page"]}"]')
        width = float(holder.get_attribute("data-width"))
        left = float(cited.evaluate("node => node.style.left").rstrip("%"))
        assert left == pytest.approx(100 * verdict["cited"]["bbox"][0] / width, abs=0.01)
        assert "grounding: matched cited right" in page.locator("#where").inner_text()
        browser.close()
    assert not errors


def test_both_leaderboard_pages_show_the_grounding_columns(
    served: tuple[object, str], sample_runs: dict[str, Path], tmp_path: Path
) -> None:
    """`oeb view`'s leaderboard and `oeb report --format html`'s have the terminal table's
    `grounding F1` and `auto@99%` columns: the figure on the cited run, n/a on the plain one."""
    from oeb.cli import main

    view, url = served
    report = tmp_path / "board.html"
    assert (
        main(["report", str(sample_runs["cited"]), str(sample_runs["plain"]), "--format", "html", "--out", str(report)])
        == 0
    )
    [cited] = [row for row in view.runs_json() if "auto_99" in row]  # type: ignore[attr-defined]
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1600, "height": 1000})
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        for address, table, digits in ((url, "#leaderboard", 1), (report.as_uri(), "#board", 2)):
            page.goto(address)
            page.locator(f"{table} tbody tr").first.wait_for()
            head = page.locator(f"{table} thead th").all_inner_texts()
            assert head[-2:] == ["grounding F1", "auto@99%"], address
            for line in page.locator(f"{table} tbody tr").all():
                cells = line.locator("th, td").all_inner_texts()
                if "cite=true" in cells[0]:
                    shown = [f"{100 * cited[key]:.{digits}f}" for key in ("grounding_f1", "auto_99")]
                    assert cells[-2:] == shown, address
                else:
                    assert cells[-2:] == ["n/a", "n/a"], address
        browser.close()
    assert not errors
