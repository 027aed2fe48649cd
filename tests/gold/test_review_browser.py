"""The review page (`oeb view --review FILE --by NAME`) in headless Chromium driven by Playwright: keyboard
accept, a typed correction, a reject with its reason, each written to the file at once; a decision on an
entry changed since the page loaded is refused; writes without the token or from another origin are
refused; hostile reasons and values stay text; the HTML report says how wrong the gold is. One
browser and one server for the module."""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from fixtures.browser import CHROMIUM
from goldruns import GoldRuns

from oeb.cli import main
from oeb.gold import entries
from oeb.view.api import open_view
from oeb.view.app import server
from oeb.view.review import TOKEN_HEADER, Review

pytestmark = [
    pytest.mark.slow,  # a browser start and about 10 s of pages
    pytest.mark.must_run,  # under CI=true a missing Chromium fails the run
    pytest.mark.skipif(not CHROMIUM.exists(), reason="no Chromium (apt-get install -y chromium)"),
]

HOSTILE = '<img src=x onerror="window.pwned=1"><script>window.pwned=2</script>'


@pytest.fixture(scope="module")
def review_file(gold_runs: GoldRuns, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Proposals from the three runs, a hostile proposal, and two sampled values to verify."""
    url = tmp_path_factory.mktemp("review") / "adjudications.yaml"
    assert main(["adjudicate", "propose", *gold_runs.runs, "--min-agree", "2", "--out", str(url)]) == 0
    read = entries.load(str(url))
    hostile = entries.Entry(
        "hostile", "short__invoice_5120", "customer", "accept", values=(HOSTILE,), reason=HOSTILE + " " * 3
    )
    entries.save(read.replaced([hostile]), str(url))
    assert main(["adjudicate", "sample", gold_runs.dataset, "--n", "2", "--seed", "1", "--out", str(url)]) == 0
    return url


@pytest.fixture(scope="module")
def served(gold_runs: GoldRuns, review_file: Path) -> Iterator[tuple[str, Review]]:
    review = Review(open_view(list(gold_runs.runs)), str(review_file), "ann")
    httpd = server(review.view, "127.0.0.1", 0, review)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_port}/", review
    httpd.shutdown()
    httpd.server_close()


def current(page) -> str:
    return page.locator("#entry-id").inner_text().split(" ")[0]


def go_to(page, entry_id: str) -> None:
    for _ in range(40):
        page.keyboard.press("p")
    for _ in range(40):
        if current(page) == entry_id:
            return
        page.keyboard.press("n")
    raise AssertionError(f"{entry_id} is not in the queue")


def on_disk(review: Review, entry_id: str) -> entries.Entry:
    return entries.load(review.url).by_id(entry_id)


def test_decisions_by_keyboard_reach_the_file(page, served: tuple[str, Review]) -> None:
    url, review = served
    page.goto(url + "review")
    page.locator("#entry-id").wait_for()
    for key, action in (("a", "accept"), ("r", "reject"), ("e", "correct"), ("n", "next"), ("p", "previous")):
        button = page.locator(f"#do-{action}")
        assert button.get_attribute("aria-keyshortcuts") == key and key in button.inner_text()
    proposed = [e for e in entries.load(review.url).entries if e.status == "proposed" and e.id.startswith("p-")]
    first = proposed[0].id
    go_to(page, first)
    page.locator(".box.gold").wait_for()  # the evidence outlined on its page
    page.keyboard.press("a")
    page.wait_for_function("id => document.querySelector('#status').textContent.includes(id)", arg=first)
    written = on_disk(review, first)
    assert (written.status, written.by, written.reason) == ("accepted", "ann", proposed[0].reason)

    verify = next(e.id for e in entries.load(review.url).entries if e.action == "verify")
    go_to(page, verify)
    page.keyboard.press("e")
    assert page.evaluate("document.activeElement.id") == "value"
    page.keyboard.type("INV-9")
    page.keyboard.press("Enter")
    page.wait_for_function("id => document.querySelector('#status').textContent.includes(id)", arg=verify)
    assert (on_disk(review, verify).status, on_disk(review, verify).value) == ("accepted", "INV-9")

    second = proposed[1].id
    go_to(page, second)
    page.keyboard.press("r")  # no reason yet: refused on the page
    assert "needs a reason" in page.locator("#problem").inner_text()
    assert on_disk(review, second).status == "proposed"
    page.locator("#reason").fill("the page shows the gold's value")
    page.keyboard.press("Escape")
    page.keyboard.press("r")
    page.wait_for_function("id => document.querySelector('#status').textContent.includes(id)", arg=second)
    rejected = on_disk(review, second)
    assert (rejected.status, rejected.reason) == ("rejected", "the page shows the gold's value")


def test_a_stale_decision_is_refused(page, served: tuple[str, Review]) -> None:
    url, review = served
    page.goto(url + "review")
    page.locator("#entry-id").wait_for()
    target = next(e for e in entries.load(review.url).entries if e.status == "proposed" and e.id != "hostile")
    go_to(page, target.id)
    # another reviewer decides it first, on the command line
    assert main(["adjudicate", "reject", review.url, target.id, "--by", "bob", "--reason", "not on the page"]) == 0
    before = Path(review.url).read_bytes()
    page.keyboard.press("a")
    page.wait_for_function("document.querySelector('#problem').textContent.length > 0")
    assert "changed" in page.locator("#problem").inner_text() and "bob" in page.locator("#problem").inner_text()
    assert Path(review.url).read_bytes() == before


def test_x_marks_a_sampled_value_absent_from_the_page(page, served: tuple[str, Review]) -> None:
    """`x` on a verify entry: the page states no value there, so the gold was wrong; the entry is
    accepted with `value: null` (counted wrong in the gold error), not rejected (counted for nothing)."""
    url, review = served
    extra = entries.Entry("verify-extra", "short__invoice_5120", "invoice_number", "verify")
    entries.save(entries.load(review.url).replaced([extra]), review.url)
    page.goto(url + "review")
    page.locator("#entry-id").wait_for()
    go_to(page, extra.id)
    page.keyboard.press("x")
    page.wait_for_function("id => document.querySelector('#status').textContent.includes(id)", arg=extra.id)
    written = on_disk(review, extra.id)
    assert (written.status, written.has_value, written.value, written.by) == ("accepted", True, None, "ann")
    assert written.reason and written.reason.startswith("absent") and written.effect == "remove"
    go_to(page, extra.id)
    assert page.locator("#proposal").inner_text() == "not on the page: drop the gold value"


def post(url: str, body: dict[str, object], headers: dict[str, str]) -> tuple[int, str]:
    request = urllib.request.Request(url + "api/review/decide", json.dumps(body).encode(), headers, method="POST")
    try:
        with urllib.request.urlopen(request) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


def test_writes_need_the_token_and_this_origin(page, served: tuple[str, Review]) -> None:
    url, review = served
    entry = next(e for e in entries.load(review.url).entries if e.status == "proposed")
    before = Path(review.url).read_bytes()
    body = {"id": entry.id, "revision": entry.revision, "decision": "accept"}
    assert post(url, body, {})[0] == 403
    assert post(url, body, {TOKEN_HEADER: "guess"})[0] == 403
    status, text = post(url, body, {TOKEN_HEADER: review.token, "Origin": "http://evil.example"})
    assert status == 403 and "refused" in text
    # a page of another origin cannot even send it (the token header needs a preflight nobody grants)
    page.goto("about:blank")
    sent = page.evaluate(
        """async (url) => { try { await fetch(url, {method: "POST", headers: {"X-OEB-Token": "x"}, body: "{}"});
             return "sent"; } catch (error) { return "blocked"; } }""",
        url + "api/review/decide",
    )
    assert sent == "blocked"
    assert Path(review.url).read_bytes() == before


def test_hostile_reasons_and_values_stay_text(page, served: tuple[str, Review]) -> None:
    url, _ = served
    page.goto(url + "review")
    page.locator("#entry-id").wait_for()
    go_to(page, "hostile")
    assert HOSTILE in page.locator("#proposal").inner_text()
    assert HOSTILE in page.locator("#proposed-reason").inner_text()
    page.goto(url + "adjudications")
    page.locator("#adjudications tbody tr").first.wait_for()
    assert HOSTILE in page.locator('#adjudications tr[data-id="hostile"]').inner_text()
    assert page.locator("#adjudications img, #entry img:not(.page img)").count() == 0
    assert page.evaluate("window.pwned") is None


def test_the_html_report_says_how_wrong_the_gold_is(
    page, gold_runs: GoldRuns, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`oeb report --format html` shows what the text report says under its table: the gold used, its
    error overall and per suite, and the adjacent ranks within the gold's noise."""
    from oeb.report.adjudicated import lines

    url = str(tmp_path / "adj.yaml")
    assert (
        main(["adjudicate", "sample", gold_runs.dataset, "--n", "6", "--seed", "1", "--by", "suite", "--out", url]) == 0
    )
    ids = [entry.id for entry in entries.load(url).entries]
    assert main(["adjudicate", "accept", url, *ids, "--by", "ann", "--reason", "as on the page"]) == 0
    capsys.readouterr()
    assert main(["report", *gold_runs.runs, "--adjudications", url, "--format", "json"]) == 0
    said = [line.strip() for line in lines(json.loads(capsys.readouterr().out))]
    assert any(line.startswith("within gold noise") for line in said) and len(said) > 3  # per suite too
    out = tmp_path / "report.html"
    assert main(["report", *gold_runs.runs, "--adjudications", url, "--format", "html", "--out", str(out)]) == 0
    page.goto(out.as_uri())
    assert page.locator("#gold div").all_inner_texts() == said
