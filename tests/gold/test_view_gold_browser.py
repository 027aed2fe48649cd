"""`oeb view`'s leaderboard says which gold its numbers use and how wrong it still is, as `oeb report`
does, under `--adjudications URL` and `none`; `--export DIR` writes the `/adjudications` page, which
opens from a static file server with the live server's answer. Headless Chromium driven by Playwright,
one browser for the module."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest
from fixtures.browser import CHROMIUM
from goldruns import GoldRuns

from oeb.cli import main
from oeb.gold import entries
from oeb.report.adjudicated import gold_line, lines
from oeb.view.api import open_view
from oeb.view.app import server
from oeb.view.gold import read_under

pytestmark = [
    pytest.mark.slow,  # a browser start and a few pages
    pytest.mark.must_run,  # under CI=true a missing Chromium fails the run
    pytest.mark.skipif(not CHROMIUM.exists(), reason="no Chromium (apt-get install -y chromium)"),
]


@pytest.fixture(scope="module")
def decided(gold_runs: GoldRuns, tmp_path_factory: pytest.TempPathFactory) -> str:
    """Sampled values checked by suite (a measured gold error) and the runs' proposals, one accepted."""
    url = str(tmp_path_factory.mktemp("view-gold") / "adjudications.yaml")
    assert (
        main(["adjudicate", "sample", gold_runs.dataset, "--n", "6", "--seed", "1", "--by", "suite", "--out", url]) == 0
    )
    sampled = [entry.id for entry in entries.load(url).entries]
    assert main(["adjudicate", "accept", url, *sampled, "--by", "ann", "--reason", "as on the page"]) == 0
    assert main(["adjudicate", "propose", *gold_runs.runs, "--min-agree", "2", "--out", url]) == 0
    proposed = next(entry.id for entry in entries.load(url).entries if entry.status == "proposed")
    assert main(["adjudicate", "accept", url, proposed, "--by", "ann", "--reason", "the page prints it"]) == 0
    return url


def reported(runs: tuple[str, ...], adjudications: str, capsys: pytest.CaptureFixture[str]) -> dict:
    capsys.readouterr()
    assert main(["report", *runs, "--adjudications", adjudications, "--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)


@contextmanager
def serving(httpd: Any) -> Iterator[str]:
    """The server serving from a thread until the block ends: its URL."""
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{httpd.server_port}/"
    finally:
        httpd.shutdown()
        httpd.server_close()


def live(runs: tuple[str, ...], adjudications: str) -> Any:
    """`oeb view RUNS --adjudications URL`, served on a free port."""
    view = open_view(list(runs))
    return serving(server(view, "127.0.0.1", 0, read_under(view, review=None, adjudications=adjudications, by=None)))


def static(folder: Path) -> Any:
    """A static file server (no oeb) over an exported folder."""
    return serving(ThreadingHTTPServer(("127.0.0.1", 0), partial(SimpleHTTPRequestHandler, directory=str(folder))))


def gold_shown(page, url: str) -> list[str]:
    page.goto(url)
    page.locator("#leaderboard tbody tr").first.wait_for()
    return page.locator("#gold div").all_inner_texts()


def test_the_leaderboard_says_the_gold_as_the_report_does(
    page, gold_runs: GoldRuns, decided: str, capsys: pytest.CaptureFixture[str]
) -> None:
    board = reported(gold_runs.runs, decided, capsys)
    said = [line.strip() for line in lines(board)]
    assert said[0] == board["gold"]["line"] and said[1].startswith("gold error: ") and len(said) > 3  # per suite
    with live(gold_runs.runs, decided) as url:
        assert gold_shown(page, url) == said
        answer = httpx.get(url + "api/gold").json()
        assert (answer["gold"], answer["gold_error"]) == (board["gold"], board["gold_error"])
    raw = reported(gold_runs.runs, "none", capsys)
    assert "gold" not in raw and lines(raw) == []  # the report says nothing of a raw gold
    with live(gold_runs.runs, "none") as url:  # the view names it: the numbers are the raw gold's
        named = gold_line(raw["dataset"], raw["dataset_commit"], None)
        assert gold_shown(page, url) == [named] and named.endswith("(raw, no adjudications)")
        assert httpx.get(url + "api/gold").json() == {"lines": [named], "gold": None, "gold_error": None}


def test_the_export_has_the_adjudications_page(page, gold_runs: GoldRuns, decided: str, tmp_path: Path) -> None:
    site = tmp_path / "site"
    assert main(["view", *gold_runs.runs, "--adjudications", decided, "--export", str(site)]) == 0
    with live(gold_runs.runs, decided) as url:
        for route, path in (("api/adjudications", "api/adjudications.json"), ("api/gold", "api/gold.json")):
            assert json.loads((site / path).read_text()) == httpx.get(url + route).json()
        said = gold_shown(page, url)
    written = entries.load(decided).entries
    with static(site) as exported:
        assert gold_shown(page, exported) == said
        page.get_by_role("link", name="Adjudications").click()
        page.locator("#adjudications tbody tr").first.wait_for()
        assert page.url == exported + "adjudications.html"
        ids = page.locator("#adjudications tbody tr").evaluate_all("rows => rows.map(row => row.dataset.id)")
        assert ids == [entry.id for entry in written]
        accepted = next(entry for entry in written if entry.action != "verify" and entry.status == "accepted")
        row = page.locator(f'#adjudications tr[data-id="{accepted.id}"]')
        assert "accepted" in row.inner_text() and "→" in row.inner_text()  # its effect on a run
        row.locator("a").click()  # its document, in the export
        page.locator("tr.verdict").first.wait_for()
        assert page.url.startswith(exported + "documents/" + accepted.doc_id)
