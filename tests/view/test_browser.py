"""`oeb view` in headless Chromium (Debian's /usr/bin/chromium, driven by Playwright): every view opens
from its URL, a selected verdict is outlined on its page, filters and a second system work, hostile
values stay text, and the exported folder opens the same. One browser for the module."""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import quote

import httpx
import pytest
from bigdoc import BIG_DOC
from viewruns import BRACKETS_DOC, HOSTILE, HOSTILE_DOC, LONG_NAME, Runs, Served, build_brought, build_failing, serve

from oeb.view.api import open_view
from oeb.view.export import export
from oeb.view.paging import Query

CHROMIUM = Path("/usr/bin/chromium")
pytestmark = [
    pytest.mark.slow,  # a browser start and about 20 s of pages
    pytest.mark.must_run,  # under CI=true a missing Chromium fails the run
    pytest.mark.skipif(not CHROMIUM.exists(), reason="no Chromium (apt-get install -y chromium)"),
]


def labels(served: Served) -> list[str]:
    return served.view.labels


def outlined_inside_its_page(page, selector: str) -> None:
    """The outline is placed over its page's image, where the location's bbox says, scaled."""
    box = page.locator(selector).first
    box.wait_for()
    page_number = box.evaluate("node => node.parentElement.dataset.page")
    image = page.locator(f'.page[data-page="{page_number}"] img')
    page.wait_for_function("image => image.complete && image.naturalWidth > 0", arg=image.element_handle())
    outer, inner = image.bounding_box(), box.bounding_box()
    assert outer and inner and inner["width"] > 2 and inner["height"] > 2
    assert outer["x"] - 1 <= inner["x"] and inner["x"] + inner["width"] <= outer["x"] + outer["width"] + 1
    assert outer["y"] - 1 <= inner["y"] and inner["y"] + inner["height"] <= outer["y"] + outer["height"] + 1


def test_the_leaderboard_has_each_system_its_interval_and_latency(page, served: Served) -> None:
    page.goto(served.url)
    page.locator("#chart").wait_for()
    assert page.locator("#leaderboard tbody tr").count() == 2
    assert page.locator("#chart circle").count() == 2 and page.locator("#chart .whisker").count() == 6
    assert "latency p50" in page.locator("#leaderboard thead").inner_text()
    page.locator("#leaderboard tbody a").first.click()
    page.locator("#fields tbody tr").first.wait_for()
    assert "/fields?run=" in page.url


def test_the_chart_plots_the_headline_with_every_label_inside(page, served: Served) -> None:
    page.goto(served.url)
    page.locator("#chart circle").first.wait_for()
    page.wait_for_timeout(100)  # the labels are fitted on the next frame
    frame = page.locator("#chart").bounding_box()
    for label in page.locator("#chart text.label").all():
        box = label.bounding_box()
        assert frame["x"] <= box["x"] and box["x"] + box["width"] <= frame["x"] + frame["width"] + 0.5
        assert frame["y"] <= box["y"]
    rows = dict(zip(served.view.labels, served.view.board["rows"], strict=True))  # the chart names runs short
    heights = {
        group.locator("title").text_content().split(":")[0]: float(group.locator("circle").get_attribute("cy"))
        for group in page.locator("#chart g.point, #chart g.unpriced").all()
    }
    assert "headline (%)" in page.locator("#chart").text_content()
    ordered = sorted(heights, key=heights.get)  # highest point (smallest y) first
    assert ordered == sorted(rows, key=lambda name: -rows[name]["headline"])
    for name, row in rows.items():
        title = page.locator("#chart g title", has_text=f"{name}: ").first.text_content()
        assert title.startswith(f"{name}: headline {100 * row['headline']:.1f}%")


def test_fields_sort_filter_and_open_their_failing_documents(page, served: Served) -> None:
    page.goto(served.url + f"fields?run={quote(labels(served)[0])}")
    rows = page.locator("#fields tbody tr")
    rows.first.wait_for()
    every = rows.count()
    accuracy = [float(text) for text in page.locator("#fields tbody tr td:nth-child(9)").all_inner_texts()]
    assert accuracy == sorted(accuracy)  # worst first
    page.get_by_role("button", name="field", exact=True).click()
    paths = page.locator("#fields tbody th").all_inner_texts()
    assert paths == sorted(paths)
    page.select_option("#suite", "invoices")
    page.wait_for_url("**suite=invoices**")
    rows.first.wait_for()
    assert 0 < rows.count() < every
    worst = page.locator("#fields tbody tr").first
    worst.focus()
    page.keyboard.press("Enter")
    link = page.locator("#failing a").first
    link.wait_for()
    assert page.evaluate("document.activeElement.tagName") == "A"
    page.keyboard.press("Enter")
    page.locator("tr.verdict:not([hidden])").first.wait_for()
    assert "/documents/" in page.url
    field = page.locator("#field").input_value()
    visible = [row for row in page.locator("tr.verdict").all() if row.is_visible()]
    assert field and visible and all(row.get_attribute("data-path") == field for row in visible)


def test_a_selected_verdict_is_outlined_on_its_page(page, served: Served) -> None:
    page.goto(served.url + f"documents/{quote(BRACKETS_DOC)}?run={quote(labels(served)[0])}")
    title = page.locator('tr.verdict[data-address="title"]')
    title.click()
    outlined_inside_its_page(page, ".box.gold")
    assert "gold on page 1" in page.locator("#where").inner_text()
    # arrow keys move through the verdicts, each selected in turn
    page.keyboard.press("ArrowDown")
    assert page.evaluate("document.activeElement.dataset.address") != "title"
    assert page.locator("tr.verdict.selected").count() == 1


def test_a_kind_filter_keeps_only_that_kind(page, served: Served) -> None:
    page.goto(served.url + f"documents/{HOSTILE_DOC}?run={quote(labels(served)[0])}")
    page.locator("tr.verdict").first.wait_for()
    page.select_option("#kind", "misread")
    visible = [row for row in page.locator("tr.verdict").all() if row.is_visible()]
    assert visible and all("misread" in (row.get_attribute("data-results") or "") for row in visible)
    assert "kind=misread" in page.url
    page.reload()
    page.locator("tr.verdict:not([hidden])").first.wait_for()
    assert page.locator("#kind").input_value() == "misread"


def test_two_systems_side_by_side(page, served: Served) -> None:
    a, b = labels(served)
    page.goto(served.url + f"documents/{HOSTILE_DOC}?run={quote(a)}&vs={quote(b)}")
    page.locator("tr.verdict").first.wait_for()
    header = page.locator("#verdicts thead").inner_text()
    assert f"prediction A: {a}" in header and f"prediction B: {b}" in header
    assert page.locator("tr.verdict").first.locator("td").count() == 5  # gold, then each side's value and verdict


def test_a_hostile_prediction_is_shown_as_text(page, served: Served) -> None:
    page.goto(served.url + f"documents/{HOSTILE_DOC}?run={quote(labels(served)[0])}")
    customer = page.locator('tr.verdict[data-address="customer"]')
    assert "characters; select the row for all" in customer.inner_text()  # listed cut short
    customer.click()
    page.locator("#where", has_text="prediction:").wait_for()  # the whole verdict asked for, then shown
    cell = customer.locator(".value.pred")
    assert cell.evaluate("node => node.textContent") == HOSTILE
    assert page.locator("#verdicts img, #verdicts script").count() == 0
    assert page.evaluate("window.pwned") is None
    assert "prediction: not printed in the document's text layer" in page.locator("#where").inner_text()


def test_the_schema_tree_counts_verdicts(page, served: Served) -> None:
    page.goto(served.url + f"schema/{HOSTILE_DOC}?run={quote(labels(served)[0])}")
    tree = page.locator("#schema-tree")
    tree.wait_for()
    assert "misread" in tree.locator("li", has_text="customer").first.inner_text()
    assert tree.locator("li").count() > 5
    page.goto(served.url + f"schema/short__h5Filing-46780-1?run={quote(labels(served)[0])}")
    page.locator("#schema-tree").get_by_role("link", name="pressure_tests", exact=True).click()  # an array's node
    page.locator("tr.verdict").first.wait_for()
    paths = page.locator("tr.verdict").evaluate_all("rows => rows.map(row => row.dataset.path)")
    assert len(paths) == 6 and all(path.startswith("pressure_tests[]") for path in paths)
    assert page.locator("#field").input_value() == "pressure_tests"


def test_an_unknown_document_is_a_404_page(page, served: Served) -> None:
    response = page.goto(served.url + f"documents/nothing?run={quote(labels(served)[0])}")
    assert response is not None and response.status == 404
    page.get_by_role("alert").wait_for()
    assert "nothing" in page.get_by_role("alert").inner_text()


def test_the_audit_opens_from_its_url(page, served: Served) -> None:
    page.goto(served.url + "audit")
    page.locator("#audit").wait_for()
    assert page.get_by_role("link", name="Gold audit").count() == 1


def test_the_exported_folder_opens_the_same(page, served: Served, tmp_path: Path) -> None:
    export(served.view, str(tmp_path))
    static = ThreadingHTTPServer(("127.0.0.1", 0), partial(SimpleHTTPRequestHandler, directory=str(tmp_path)))
    threading.Thread(target=static.serve_forever, daemon=True).start()
    site = f"http://127.0.0.1:{static.server_port}/"
    try:
        page.goto(site)
        page.locator("#chart circle").first.wait_for()
        assert page.locator("#leaderboard tbody tr").count() == 2
        page.locator("#leaderboard tbody a").first.click()
        page.locator("#fields tbody tr").first.wait_for()
        page.goto(site + f"documents/{quote(BRACKETS_DOC)}.html?run={quote(labels(served)[0])}")
        page.locator('tr.verdict[data-address="title"]').click()
        outlined_inside_its_page(page, ".box.gold")
        page.locator("a", has_text="schema").click()
        page.locator("#schema-tree").wait_for()
        label = labels(served)[1]  # 552 verdicts: two slices, filtered here over both
        long_doc = "long__dd1155_schedule_continuation_0011"
        page.goto(site + f"documents/{long_doc}.html?run={quote(label)}")
        page.locator("#more").wait_for()
        page.locator("#more").click()
        page.wait_for_function("document.querySelector('#more').hidden")
        misread = served.view.document_json(label, long_doc, Query(kind="misread"))
        assert page.locator("tr.verdict").count() == misread["total"] > 500
        page.goto(site + f"documents/{long_doc}.html?run={quote(label)}&kind=misread&sort=address")
        page.locator("tr.verdict").first.wait_for()
        shown = page.locator("tr.verdict").evaluate_all("rows => rows.map(row => row.dataset.address)")
        assert shown == sorted(verdict["address"] for verdict in misread["verdicts"])
        assert (
            f"of {misread['matching']} verdicts shown ({misread['total']} in all)"
            in page.locator("#count").inner_text()
        )
        page.goto(site + f"documents/short__h5Filing-46780-1.html?run={quote(label)}&field=pressure_tests")
        page.locator("tr.verdict").first.wait_for()  # an array's node, filtered here as on the server
        paths = page.locator("tr.verdict").evaluate_all("rows => rows.map(row => row.dataset.path)")
        assert len(paths) == 6 and all(path.startswith("pressure_tests[]") for path in paths)
        other = labels(served)[0]  # side by side, merged from both runs' files
        page.goto(site + f"documents/{long_doc}.html?run={quote(label)}&vs={quote(other)}&kind=errors")
        page.locator("tr.verdict").first.wait_for()
        both = served.view.document_json(label, long_doc, Query(kind="errors"), vs=other)
        count = page.locator("#count").inner_text()
        assert f"of {both['matching']} rows shown ({both['total']} in all)" in count
        assert page.locator("tr.verdict").first.locator("td").count() == 5
    finally:
        static.shutdown()
        static.server_close()


@pytest.fixture(scope="module")
def failing(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """`oeb view` over a run where half the documents failed."""
    yield from serve(open_view([build_failing(tmp_path_factory.mktemp("failing"))]))


def test_the_documents_page_reaches_a_failed_document(page, failing: Served) -> None:
    page.goto(failing.url + "documents?run=mock")
    page.locator("#documents tbody tr").first.wait_for()
    total = page.locator("#documents tbody tr").count()
    assert total == 12 and "of 12 documents" in page.locator("#count").inner_text()
    page.select_option("#status", "failed")
    failed = page.locator("#documents tbody tr")
    assert 0 < failed.count() < total and all(
        s == "failed" for s in page.locator("tr.doc").evaluate_all("rows => rows.map(row => row.dataset.status)")
    )
    assert "status=failed" in page.url
    page.get_by_role("button", name="document", exact=True).click()  # sorts by id
    failed.first.locator("a").click()
    page.locator("#record-error").wait_for()
    assert "simulated malformed answer" in page.locator("#raw").inner_text()
    assert "attempts: 1" in page.locator("#record").inner_text()
    page.locator(".page img").first.wait_for()  # its PDF beside
    summary = page.locator("ul.summary").inner_text()  # the error as its line of text, not as JSON
    assert "failed (Unreadable: the answer holds no extraction" in summary and '\\"' not in summary


def test_a_run_named_by_its_folder_is_shown_under_its_short_name(page, served: Served) -> None:
    a, b = labels(served)
    folder = Path(served.view.runs[1].url).name
    page.goto(served.url + f"documents?run={quote(folder)}")
    page.locator("#documents tbody tr").first.wait_for()
    assert page.locator("#run").input_value() == b and page.locator("h1").inner_text() == f"Documents of {b}"
    page.goto(served.url + f"documents/{HOSTILE_DOC}?run={quote(folder)}")
    page.locator("tr.verdict").first.wait_for()
    assert page.locator("#vs option").evaluate_all("options => options.map(o => o.value)") == ["", a]
    assert page.locator("ul.summary").inner_text().startswith(f"{b}: ")
    page.goto(served.url + f"fields?run={quote(folder)}")
    page.locator("#fields tbody tr").first.wait_for()
    assert page.locator("#run").input_value() == b


def test_a_misread_shows_both_keys_and_the_scorers_explanation(page, served: Served) -> None:
    page.goto(served.url + f"documents/{quote(BRACKETS_DOC)}?run={quote(labels(served)[1])}&kind=misread")
    row = page.locator("tr.verdict:not([hidden])").first
    row.click()
    keys = row.locator(".canonical").all_inner_texts()
    assert len(keys) == 2 and keys[0] != keys[1]
    why = page.locator("#why").inner_text()
    assert "canonical key" in why and "this pair would be misread" in why
    assert "type" in page.locator("#why dl.node").inner_text()  # the field's schema node beside it


def test_zoom_and_the_all_errors_toggle(page, served: Served) -> None:
    page.goto(served.url + f"documents/long__dd1155_schedule_continuation_0011?run={quote(labels(served)[1])}")
    page.locator("tr.verdict").first.wait_for()
    holder = page.locator('.page[data-page="1"]')
    fit = holder.bounding_box()
    page.select_option("#zoom", "2")
    assert "zoom=2" in page.url
    doubled = holder.bounding_box()
    assert fit and doubled and abs(doubled["width"] - 595 * 96 / 72 * 2) < 2 and doubled["width"] > fit["width"]
    page.select_option("#zoom", "1")
    single = holder.bounding_box()
    assert single and abs(single["width"] - 595 * 96 / 72) < 2
    assert page.locator(".box.all").count() == 0
    page.check("#all-errors")
    page.locator('#pages[data-outlined="all"]').wait_for()  # every page's boxes answered
    summary = page.locator("ul.summary").inner_text()  # the whole document's counts, loaded or not
    errors = sum(int(n) for n, kind in re.findall(r"(\d+) (\w+)", summary.split("verdicts:")[1]) if kind != "matched")
    outlined = page.locator(".box.all").count()
    assert errors and 0 < outlined <= 2 * errors and "all=1" in page.url
    page.uncheck("#all-errors")
    assert page.locator(".box.all").count() == 0


def test_a_high_density_screen_gets_a_page_sharp_at_200_percent(browser, served: Served) -> None:
    """At devicePixelRatio 2 the page image asks for twice the scale: at 200% it has at least two
    image pixels for each CSS pixel it takes, so it is not upscaled."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000}, device_scale_factor=2)
    try:
        page = context.new_page()
        doc = "long__dd1155_schedule_continuation_0011"
        page.goto(served.url + f"documents/{doc}?run={quote(labels(served)[1])}&zoom=2")
        image = page.locator('.page[data-page="1"] img')
        page.wait_for_function("image => image.complete && image.naturalWidth > 0", arg=image.element_handle())
        natural, css = image.evaluate("image => [image.naturalWidth, image.getBoundingClientRect().width]")
        assert abs(css - 595 * 96 / 72 * 2) < 2  # the 200% zoom
        assert natural >= 2 * css and "scale=5.5" in image.get_attribute("src")
    finally:
        context.close()


def test_a_60_character_label_keeps_the_side_by_side_table_in_place(
    page, served: Served, sample_runs: Runs, tmp_path: Path
) -> None:
    brought = build_brought(tmp_path, sample_runs.b)
    assert len(LONG_NAME) == 60
    for site in serve(open_view([sample_runs.a, brought])):
        a, b = site.view.labels
        assert b == LONG_NAME
        page.goto(site.url + f"documents/{HOSTILE_DOC}?run={quote(a)}&vs={quote(b)}")
        page.locator("tr.verdict").first.wait_for()
        assert LONG_NAME in page.locator("#verdicts thead").inner_text()
        table, pane = page.locator("#verdicts").bounding_box(), page.locator(".verdicts").bounding_box()
        pages = page.locator("#pages").bounding_box()
        assert table and pane and pages
        assert table["width"] <= pane["width"] + 1  # no sideways scroll: the label wraps
        assert pages["width"] >= 0.45 * 1400 - 40  # the PDF keeps its half


def test_a_big_document_shows_a_slice_loads_more_and_outlines_every_error(page, big_served: Served) -> None:
    """20,000 verdicts: the first slice is drawn, more come by the button, the summary counts the
    whole document, a kind filter reaches verdicts never loaded, and the all-errors toggle outlines
    errors whose rows are not loaded."""
    run = big_served.view.labels[0]
    first = httpx.get(big_served.url + f"api/documents/{quote(BIG_DOC)}?run={quote(run)}", timeout=60).json()
    page.goto(big_served.url + f"documents/{quote(BIG_DOC)}?run={quote(run)}")
    rows = page.locator("tr.verdict")
    rows.first.wait_for()
    assert rows.count() == len(first["verdicts"]) < first["total"]
    assert f"of {first['total']} verdicts shown" in page.locator("#count").inner_text()
    assert f"{first['total']} verdicts: " in page.locator("ul.summary").inner_text()  # the whole document's counts
    more = page.locator("#more")
    assert more.inner_text() == f"show more ({first['total'] - len(first['verdicts'])} left)"
    more.click()
    page.wait_for_function(f"document.querySelectorAll('tr.verdict').length > {len(first['verdicts'])}")
    loaded = set(rows.evaluate_all("rows => rows.map(row => row.dataset.address)"))
    last = next(v for v in reversed(first_errors(big_served, run)) if v["address"] not in loaded)
    page.check("#all-errors")
    page.locator('#pages[data-outlined="all"]').wait_for(timeout=180_000)  # 84 pages asked one at a time
    outline = page.locator(f'.box.all[title^="{last["address"]}: "]')
    assert outline.count() >= 1  # outlined though its row is not loaded
    holder = outline.first.evaluate("node => node.parentElement.dataset.page")
    assert int(holder) == (last["located"]["gold"] or last["located"]["pred"])["page"] > 2
    page.select_option("#kind", "misread")
    page.wait_for_function(
        f"document.querySelector('#count').textContent.includes(' of {first['counts']['misread']} verdicts')"
    )
    results = rows.evaluate_all("rows => rows.map(row => row.dataset.results)")
    assert len(results) == first["counts"]["misread"] and set(results) == {"misread"}
    assert page.locator(f'tr.verdict[data-address="{last["address"]}"]').count() == (last["result"] == "misread")


def first_errors(served: Served, run: str) -> list[dict]:
    """The run's errors of the big document, as the server lists them (few enough for one slice)."""
    answer = httpx.get(served.url + f"api/documents/{quote(BIG_DOC)}?run={quote(run)}&kind=errors", timeout=60).json()
    assert answer["next"] is None
    return [
        v
        for v in answer["verdicts"]
        if (v["located"]["gold"] or {}).get("page") or (v["located"]["pred"] or {}).get("page")
    ]


def test_a_scans_note_stands_above_its_page_never_over_it(page, tmp_path: Path) -> None:
    """A page without a text layer says how it was read in a note above the page image, where it covers
    nothing printed at the page's top (it used to lie over the image's top strip)."""
    import io
    import json
    import sys

    import pypdfium2  # type: ignore[import-untyped]

    from oeb.cli import main

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
    from dataset_files import Document, pdf_bytes, write_dataset

    drawn = pypdfium2.PdfDocument(pdf_bytes(["Invoice INV-0042", "Total due: 1,234.50"]))[0]
    scan = io.BytesIO()
    drawn.render(scale=100 / 72).to_pil().convert("L").save(scan, format="PDF", resolution=100.0)
    schema = {"type": "object", "properties": {"number": {"type": "string"}}}
    dataset = str(tmp_path / "dataset")
    write_dataset(dataset, [Document("scanned", "invoices", "s1", schema, {"number": "INV-0042"}, scan.getvalue())])
    mine = tmp_path / "mine"
    (mine / "predictions").mkdir(parents=True)
    (mine / "predictions" / "scanned.json").write_text(json.dumps({"number": "INV-0042"}))
    assert main(["grade", str(mine), "--dataset", dataset]) == 0
    for site in serve(open_view([str(mine)])):
        page.goto(site.url + "documents/scanned?run=mine")
        note, image = page.locator(".page-note"), page.locator('.page[data-page="1"] img')
        note.wait_for()
        page.wait_for_function("image => image.complete && image.naturalWidth > 0", arg=image.element_handle())
        assert note.is_visible() and note.inner_text().startswith("page 1: a scan")
        said, drawn_at = note.bounding_box(), image.bounding_box()
        assert said and drawn_at and said["height"] > 5
        assert said["y"] + said["height"] <= drawn_at["y"]  # above the image: no overlap
