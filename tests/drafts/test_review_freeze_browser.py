"""Review of a drafted gold on the review page in headless Chromium (Playwright): an undecided value
settled by picking a system's reading (key 1), one by a typed value, one marked absent (key x); then
`oeb gold freeze` writes them into the gold and gold_derivation.parquet."""

from __future__ import annotations

import json
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from fixtures.browser import CHROMIUM
from gold_corpus import Drafting

from oeb.cli import main
from oeb.dataset import open_dataset
from oeb.gold import entries
from oeb.gold.derivation import read_draft
from oeb.view.api import open_view
from oeb.view.app import server
from oeb.view.review import Review

pytestmark = [
    pytest.mark.slow,
    pytest.mark.must_run,  # under CI=true a missing Chromium fails the run
    pytest.mark.skipif(not CHROMIUM.exists(), reason="no Chromium (apt-get install -y chromium)"),
]


@pytest.fixture
def served(drafting: Drafting, drafted: Path, tmp_path: Path) -> Iterator[tuple[str, Review, Path]]:
    dataset = tmp_path / "drafted"
    shutil.copytree(drafted, dataset)
    runs = []
    for name, run in drafting.runs.items():
        shutil.copytree(run, tmp_path / name)
        assert main(["grade", str(tmp_path / name), "--dataset", str(dataset)]) == 0
        runs.append(str(tmp_path / name))
    review = Review(open_view(runs), str(dataset / "adjudications.yaml"), "ann")
    httpd = server(review.view, "127.0.0.1", 0, review)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_port}/", review, dataset
    httpd.shutdown()
    httpd.server_close()


def _current(page) -> str:
    return page.locator("#entry-id").inner_text().split(" ")[0]


def test_review_then_freeze(page, served: tuple[str, Review, Path]) -> None:
    url, review, dataset = served
    page.goto(url + "review")
    page.locator("#entry-id").wait_for()
    first = _current(page)
    assert first.startswith("draft-")  # undecided values come first
    queued = review.queue_json()["queue"][0]
    assert queued["id"] == first
    picked = next(iter(queued["systems"].values()))["value"]
    page.keyboard.press("1")
    page.wait_for_function(f"document.querySelector('#entry-id').innerText.split(' ')[0] !== {first!r}")
    second = _current(page)
    page.locator("#value").fill("typed by hand")
    page.locator("#value").press("Enter")
    page.wait_for_function(f"document.querySelector('#entry-id').innerText.split(' ')[0] !== {second!r}")
    third = _current(page)
    page.keyboard.press("x")
    page.wait_for_function(f"document.querySelector('#status').innerText.includes({third!r})")
    file = entries.load(review.url)
    one, two, three = file.by_id(first), file.by_id(second), file.by_id(third)
    assert (one.status, one.value, one.by) == ("accepted", picked, "ann")
    assert (two.status, two.value) == ("accepted", "typed by hand")
    assert three.status == "rejected" and three.reason and three.reason.startswith("absent")

    assert main(["gold", "freeze", str(dataset)]) == 0
    assert main(["adjudicate", "check", review.url, "--dataset", str(dataset)]) == 0  # still applies
    assert main(["gold", "freeze", str(dataset)]) == 0  # again: nothing changes
    opened = open_dataset(str(dataset))
    draft = read_draft(opened)
    assert draft is not None
    rows = {(v.doc_id, v.address): v for v in draft.values}
    statuses = {entry.id: rows[(entry.doc_id, entry.address)] for entry in (one, two, three)}
    assert statuses[first].status == "reviewed" and statuses[first].reviewer == "ann"
    assert statuses[second].status == "corrected" and statuses[second].value == "typed by hand"
    assert statuses[third].status == "absent"
    gold = json.loads((dataset / "gold" / f"{two.doc_id}.json").read_text())
    node = gold
    for step in two.address.replace("]", "").replace("[", ".").split("."):
        node = node[int(step)] if step.isdigit() else node[step]
    assert node == "typed by hand"
    assert draft.counts()["reviewed"] + draft.counts()["corrected"] >= 2
