"""`oeb view`'s slices: `/api/slices?trait=T` gives the numbers of `oeb report --by T --format json`,
`/api/mix` those of `--mix`, an unknown trait is a 404 naming the traits, the export holds them, and
the slices page draws them in headless Chromium (Debian's chromium, through Playwright)."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import quote

import httpx
import pytest
from viewruns import Runs, Served, serve

from oeb.cli import main
from oeb.report.mix import parse_mix
from oeb.view.api import open_view
from oeb.view.export import export
from oeb.view.slices import Slicing

CHROMIUM = Path("/usr/bin/chromium")
MIX = {"pages": {"1": 0.5, "2-3": 0.3, "11+": 0.2}}


@pytest.fixture(autouse=True)
def cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.getbasetemp() / "traits-cache"))


@pytest.fixture(scope="module")
def mixed(sample_runs: Runs) -> Iterator[Served]:
    """`oeb view A B --mix` over the sample, served (the mix has a stratum the sample has no document for)."""
    view = open_view([sample_runs.a, sample_runs.b])
    traits = view.slicing.of(view)
    view.slicing = Slicing(traits.edges, 3, parse_mix(MIX, traits, "mix.yaml"), traits)
    yield from serve(view)


def get(served: Served, path: str) -> httpx.Response:
    return httpx.get(served.url + path, timeout=60)


def reported(capsys, *arguments: str) -> dict:
    capsys.readouterr()
    assert main(["report", *arguments, "--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_the_api_gives_the_reports_numbers(served: Served, sample_runs: Runs, capsys) -> None:
    listed = get(served, "api/slices").json()
    assert [entry["trait"] for entry in listed["traits"]][:7] == [
        "pages", "text_layer", "language", "gold_values", "array_items", "schema_depth", "suite"
    ]  # fmt: skip
    assert listed["mix"] is False
    for trait in ("pages", "suite"):
        answer = get(served, f"api/slices?trait={trait}").json()
        assert answer == reported(capsys, sample_runs.a, sample_runs.b, "--by", trait)
    missing = get(served, "api/slices?trait=colour")
    assert missing.status_code == 404 and "the traits are pages, text_layer" in missing.json()["error"]
    assert get(served, "api/mix").status_code == 404


def test_the_fields_of_a_slice(served: Served, sample_runs: Runs, capsys) -> None:
    crossed = reported(capsys, sample_runs.a, sample_runs.b, "--by", "field", "--by", "pages")
    for run in crossed["runs"]:
        for item in run["slices"]:
            value = item["slice"]["pages"]
            answer = get(served, f"api/fields?run={quote(run['label'])}&trait=pages&value={quote(value)}")
            assert answer.json() == item["fields"]
    wrong = get(served, f"api/fields?run={quote(crossed['runs'][0]['label'])}&trait=pages&value=7")
    assert wrong.status_code == 404 and "pages has no value '7'; its values are 1, 2-3" in wrong.json()["error"]


def test_the_mix_leaderboard(mixed: Served, sample_runs: Runs, tmp_path: Path, capsys) -> None:
    mix = tmp_path / "mix.yaml"
    mix.write_text(json.dumps(MIX))
    answer = get(mixed, "api/mix").json()
    assert answer == reported(capsys, sample_runs.a, sample_runs.b, "--mix", str(mix))
    assert answer["mix"]["partial"] and answer["mix"]["missing"] == ["pages=11+"]
    assert get(mixed, "api/slices").json()["mix"] is True


def test_the_export_holds_the_slices(mixed: Served, tmp_path: Path) -> None:
    export(mixed.view, str(tmp_path))
    listed = json.loads((tmp_path / "api" / "slices.json").read_text())
    assert listed == get(mixed, "api/slices").json()
    for number, entry in enumerate(listed["traits"]):
        exported = json.loads((tmp_path / "api" / "slices" / f"{number}.json").read_text())
        assert exported == get(mixed, f"api/slices?trait={entry['trait']}").json()
    assert json.loads((tmp_path / "api" / "mix.json").read_text()) == get(mixed, "api/mix").json()
    assert (tmp_path / "slices.html").is_file()
    values = listed["traits"][0]["values"]  # pages
    label = mixed.view.labels[1]
    served_rows = get(mixed, f"api/fields?run={quote(label)}&trait=pages&value={quote(values[1])}").json()
    assert json.loads((tmp_path / "api" / "runs" / "1" / "slices" / "0" / "1.json").read_text()) == served_rows


def test_oeb_view_checks_its_mix_before_serving(sample_runs: Runs, tmp_path: Path, capsys) -> None:
    mix = tmp_path / "mix.yaml"
    mix.write_text("pages: {'1': 0.5, '2-3': 0.6}\n")
    capsys.readouterr()
    assert main(["view", sample_runs.a, "--mix", str(mix), "--export", str(tmp_path / "site")]) == 2
    assert "the shares sum to 1.1, not 1" in capsys.readouterr().err and not (tmp_path / "site").exists()
    mix.write_text(json.dumps(MIX))
    assert main(["view", sample_runs.a, "--mix", str(mix), "--export", str(tmp_path / "site")]) == 0
    exported = json.loads((tmp_path / "site" / "api" / "mix.json").read_text())
    assert exported["mix"]["missing"] == ["pages=11+"] and len(exported["systems"]) == 1


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    if not CHROMIUM.exists():
        if os.environ.get("CI") == "true":
            pytest.fail("no Chromium at /usr/bin/chromium; CI installs it (apt-get install -y chromium)")
        pytest.skip("no Chromium (apt-get install -y chromium)")
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=["--no-sandbox"])
        yield launched
        launched.close()


@pytest.mark.slow
def test_the_slices_page_in_chromium(browser, mixed: Served, tmp_path: Path) -> None:
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    answer = get(mixed, "api/slices?trait=pages").json()
    page.goto(mixed.url + "slices?trait=pages")
    page.locator("#slice-chart").wait_for()
    assert page.locator("#slice-chart .slice").count() == len(answer["slices"])
    assert page.locator("#slice-chart circle").count() == 2 * len(answer["slices"])
    assert page.locator("#mix tbody tr").count() == 2 and "pages=11+" in page.locator("#mix-partial").inner_text()
    first = answer["slices"][0]
    block = page.locator(f'section.slice-block[data-slice="{first["name"]}"]')
    assert f"{first['documents']} documents" in block.locator("h3").inner_text()
    block.locator("a.slice-fields").first.click()
    page.locator("#fields tbody tr").first.wait_for()
    assert f"on pages={first['slice']['pages']}" in page.locator("h1").inner_text()
    shown = [int(n) for n in page.locator("#fields tbody tr td:nth-child(10)").all_inner_texts()]
    assert shown and max(shown) <= first["documents"]
    page.go_back()
    block.locator("summary").click()
    block.locator("ul.documents a").first.click()
    page.wait_for_url("**/documents/**")
    page.goto(mixed.url + "slices?trait=pages")
    page.select_option("#trait", "suite")
    page.wait_for_url("**trait=suite**")
    page.locator("#slice-chart").wait_for()
    assert page.get_by_role("link", name="Slices").count() == 1
    # the exported folder, served by a static server, draws the same page
    export(mixed.view, str(tmp_path))
    static = ThreadingHTTPServer(("127.0.0.1", 0), partial(SimpleHTTPRequestHandler, directory=str(tmp_path)))
    threading.Thread(target=static.serve_forever, daemon=True).start()
    try:
        page.goto(f"http://127.0.0.1:{static.server_port}/slices.html?trait=pages")
        page.locator("#slice-chart").wait_for()
        assert page.locator("#slice-chart .slice").count() == len(answer["slices"])
        page.locator("a.slice-fields").first.click()
        page.locator("#fields tbody tr").first.wait_for()
    finally:
        static.shutdown()
        static.server_close()
    context.close()
    assert not errors
