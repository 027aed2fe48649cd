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
            page.goto(url + f"fields?run={a}")
            page.locator("#fields tbody tr").first.click()
            page.locator("#failing a").first.wait_for()
            _loaded(page)
            page.screenshot(path=str(args.out / "view-fields.png"), full_page=False)
            print(f"wrote {args.out / 'view-fields.png'}")
            page.goto(url + f"documents/{DOCUMENT}?run={a}&kind=errors")
            page.locator("tr.verdict:not([hidden])").first.click()
            page.locator(".box").first.wait_for()
            _loaded(page)
            page.screenshot(path=str(args.out / "view-document.png"))
            print(f"wrote {args.out / 'view-document.png'}")
            page.goto(url + f"documents/{DOCUMENT}?run={a}&vs={b}&kind=errors")
            page.locator("tr.verdict:not([hidden])").first.click()
            _loaded(page)
            page.screenshot(path=str(args.out / "view-side-by-side.png"))
            print(f"wrote {args.out / 'view-side-by-side.png'}")
            page.goto(url + f"documents/{TABLE}?run={a}&kind=errors&all=1")
            page.locator("tr.verdict:not([hidden])").nth(2).click()
            page.locator(".box.gold").first.wait_for()
            _loaded(page)
            page.screenshot(path=str(args.out / "view-table.png"))
            print(f"wrote {args.out / 'view-table.png'}")
            page.goto(url + f"documents/{TABLE}?run={a}&kind=misread&zoom=1")
            page.locator("tr.verdict:not([hidden])").first.click()
            page.locator("#why pre").first.wait_for()
            _loaded(page)
            page.screenshot(path=str(args.out / "view-explain.png"))
            print(f"wrote {args.out / 'view-explain.png'}")
            _shot(page, url + f"documents?run={b}", args.out / "view-documents.png", "#documents tbody tr")
            _shot(page, url + f"schema/{DOCUMENT}?run={a}", args.out / "view-schema.png", "#schema-tree")
            _shot(page, url + "audit", args.out / "view-audit.png", "#audit")
            browser.close()
        httpd.shutdown()


if __name__ == "__main__":
    main()
