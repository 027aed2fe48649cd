"""The screenshots of docs/diagnosing.md: `oeb view` over two graded runs of the bundled sample by the
offline `mock` system, each view opened in headless Chromium (Playwright, Debian's /usr/bin/chromium).

Usage: uv run python scripts/view_screenshots.py [--out docs/images]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from urllib.parse import quote

from playwright.sync_api import Page, sync_playwright

from oeb.view.api import open_view
from oeb.view.app import server

ROOT = Path(__file__).resolve().parents[1]
DOCUMENT = "short__invoice_4417"
TABLE = "long__dd1155_schedule_continuation_0011"


def _run(out: Path, *sets: str) -> str:
    command = [sys.executable, "-m", "oeb", "run", "--config", str(ROOT / "oeb" / "examples" / "mock.yaml"), "-y"]
    for change in ("dataset=" + str(ROOT / "oeb" / "data" / "sample"), "system.mock.latency=0", *sets):
        command += ["--set", change]
    subprocess.run([*command, "--out", str(out)], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return str(next(out.iterdir()))


def _loaded(page: Page) -> None:
    """Wait for the page images in view (an outline is drawn before its page's image arrives)."""
    page.wait_for_function("[...document.querySelectorAll('.page img[loading=eager]')].every(i => i.complete)")


def _selected(page: Page, url: str, rows: str, row: int, ready: str, path: Path) -> None:
    """The page at `url` with its row number `row` (of `rows`) selected, once `ready` shows."""
    page.goto(url)
    page.locator(rows).nth(row).click()
    page.locator(ready).first.wait_for()
    _loaded(page)
    page.screenshot(path=str(path))
    print(f"wrote {path}")


def _shot(page: Page, url: str, path: Path, ready: str) -> None:
    page.goto(url)
    page.locator(ready).first.wait_for()
    _loaded(page)
    page.screenshot(path=str(path))
    print(f"wrote {path}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "images")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as folder:
        first = _run(Path(folder) / "a", "system.mock.seed=0")
        second = _run(Path(folder) / "b", "system.mock.seed=1", "system.mock.misread=0.1", "system.mock.malformed=0.1")
        view = open_view([first, second], audit=True)
        httpd = server(view, "127.0.0.1", 0)
        threading.Thread(target=httpd.serve_forever, daemon=True).start()
        url = f"http://127.0.0.1:{httpd.server_port}/"
        a, b = (quote(label) for label in view.labels)
        with sync_playwright() as playwright:
            chromium = playwright.chromium
            browser = chromium.launch(executable_path="/usr/bin/chromium", headless=True, args=["--no-sandbox"])
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            _shot(page, url, args.out / "view-leaderboard.png", "#chart circle")
            _selected(page, url + f"fields?run={a}", "#fields tbody tr", 0, "#failing a", args.out / "view-fields.png")
            document = url + f"documents/{DOCUMENT}?run={a}"
            rows = "tr.verdict:not([hidden])"
            _selected(page, document + "&kind=errors", rows, 0, ".box", args.out / "view-document.png")
            _selected(page, document + f"&vs={b}&kind=errors", rows, 0, rows, args.out / "view-side-by-side.png")
            table = url + f"documents/{TABLE}?run={a}"
            outlined = '#pages[data-outlined="all"]'  # every page's error boxes answered
            _selected(page, table + "&kind=errors&all=1", rows, 2, outlined, args.out / "view-table.png")
            _selected(page, table + "&kind=misread&zoom=1", rows, 0, "#why pre", args.out / "view-explain.png")
            _shot(page, url + f"documents?run={b}", args.out / "view-documents.png", "#documents tbody tr")
            _shot(page, url + f"schema/{DOCUMENT}?run={a}", args.out / "view-schema.png", "#schema-tree")
            _shot(page, url + "audit", args.out / "view-audit.png", "#audit")
            browser.close()
        httpd.shutdown()


if __name__ == "__main__":
    main()
