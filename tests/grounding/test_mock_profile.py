"""The mock's known error profile recovered on 620 generated one-page invoices whose text layer
prints every gold value (issue #42, Done when): `oeb report --grounding` measures the box precision
the mock was asked for (1 - cite_wrong) within its interval and the recall it implies, and
`--calibration` tells `confidence: calibrated` from `overconfident`.

Two runs of the mock, in this process (no Ray), with the same seed, so the same values and
confidence draws: `calibrated` citing its values, `overconfident` not (its confidences alone are
read). Slow: two runs of 620 documents, about 11 s of CPU.
"""

from __future__ import annotations

import json
import math
import random
from pathlib import Path
from typing import Any

import pytest
from dataset_files import Document, pdf_bytes, write_dataset
from make_slices_sample import SCHEMA, VENDORS  # the bench's invoices: number, vendor, total, lines
from run.conftest import mock_config

from oeb.cli import main
from oeb.run import engine
from oeb.run.cluster import session as cluster

pytestmark = pytest.mark.slow

DOCUMENTS = 620
WRONG = 0.1
DAMAGE = {"system.mock.misread": 0.1, "system.mock.unfound": 0.05}
SLIP = 35
"""Lines below the invoice its remittance slip starts: 420 points, about half a page."""


def _invoice(number: int, rng: random.Random) -> Document:
    """A one-page invoice printing its 9 gold values, and a remittance slip about half a page below
    repeating its number, vendor and total where the invoice prints them: those three are each
    printed twice (ambiguous: both places are evidence), so a wrong box must avoid both."""
    lines = [{"sku": f"SKU-{number}-{item}", "amount": round(rng.uniform(5, 900), 2)} for item in range(3)]
    gold = {
        "number": f"R-{number:05d}",
        "vendor": VENDORS[number % len(VENDORS)],
        "total": round(sum(line["amount"] for line in lines), 2),
        "lines": lines,
    }
    head = [f"Invoice {gold['number']}", f"Vendor: {gold['vendor']}", "", "SKU            Amount"]
    items = [f"{line['sku']}    {line['amount']:.2f}" for line in lines]
    total = f"Total due: {gold['total']:.2f}"
    text = [*head, *items, "", total, "Payable within fourteen days."]
    text += [""] * (SLIP - len(text)) + [head[0], head[1], *[""] * (len(head) + len(items) - 1), total]
    return Document(f"invoice_{number:04d}", "invoices", f"generated-{number}", SCHEMA, gold, pdf_bytes(text))


@pytest.fixture(scope="module")
def profile_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The dataset, and the `calibrated` and `overconfident` runs of the cited mock on it."""
    folder = tmp_path_factory.mktemp("mock-profile")
    rng = random.Random(42)
    write_dataset(str(folder / "data"), (_invoice(number, rng) for number in range(DOCUMENTS)))
    patch = pytest.MonkeyPatch()
    patch.setattr(cluster, "_ray_open", lambda: False)
    runs = {}
    try:
        for shape in ("calibrated", "overconfident"):
            changes = {**DAMAGE, "system.mock.cite": shape == "calibrated", "system.mock.cite_wrong": WRONG}
            changes |= {"system.mock.confidence": shape, "ray.actors": 2}
            plan = engine.plan_run(mock_config(changes, dataset=folder / "data"), str(folder / shape))
            engine.execute(plan)
            runs[shape] = Path(plan.folder.url)
    finally:
        patch.undo()
    return runs


def _report(run: Path, flag: str, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    capsys.readouterr()
    assert main(["report", str(run), flag, "--format", "json"]) == 0
    figures: dict[str, Any] = json.loads(capsys.readouterr().out)["runs"][0]
    return figures


def test_the_box_precision_asked_of_the_mock_is_measured_within_its_interval(
    profile_runs: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    figures = _report(profile_runs["calibrated"], "--grounding", capsys)
    assert figures["documents"] == DOCUMENTS and figures["unverifiable"] == 0  # every gold value is printed
    precision = figures["box"]["precision"]
    low, high = precision["ci95"]
    assert low <= 1 - WRONG <= high, precision
    assert not low <= 1 - 2 * WRONG <= high and high < 1.0  # narrow enough to tell 0.8 or 1.0 from 0.9
    # a value the mock returns (matched or misread) is cited at its gold's place, moved at the rate
    # asked; an unfound one is uncited: recall is (1 - unfound) (1 - cite_wrong)
    recall = figures["box"]["recall"]
    low, high = recall["ci95"]
    assert low <= (1 - DAMAGE["system.mock.unfound"]) * (1 - WRONG) <= high, recall
    assert figures["page"]["precision"]["value"] == 1.0  # a wrong box stays on its page
    categories = figures["categories"]
    cited = sum(
        categories[f"{verdict}_cited_{where}"] for verdict in ("matched", "misread") for where in ("right", "elsewhere")
    )
    assert cited == figures["cited_values"] and categories["matched_uncited"] == categories["misread_uncited"] == 0


def test_calibrated_confidences_are_told_from_overconfident_ones(
    profile_runs: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    calibrated = _report(profile_runs["calibrated"], "--calibration", capsys)
    overconfident = _report(profile_runs["overconfident"], "--calibration", capsys)
    values = calibrated["with_confidence"]
    assert values == overconfident["with_confidence"] > 5 * DOCUMENTS
    # Confidences calibrated by construction still show an ECE from sampling alone: a bin of n
    # values whose share right is p strays from p by sqrt(p(1-p)/n) on average, so over 10 bins the
    # ECE's expectation is at most sum_b (n_b/N) sqrt(p_b(1-p_b)/n_b) <= 0.5 sqrt(10/N) (Cauchy-Schwarz;
    # 0.022 for the N of about 5,300 here). Overconfident moves each confidence 4/5 of the way to 1: about
    # 0.8 times the share wrong (some 0.11) above the share right, 0.09, well past the bound.
    bound = 0.5 * math.sqrt(10 / values)
    assert calibrated["ece"] < bound, (calibrated["ece"], bound)
    assert overconfident["ece"] > 2 * bound, (overconfident["ece"], bound)


def test_a_pdf_the_locator_cannot_read_is_answered_as_without_citations(tmp_path: Path) -> None:
    """A team's dataset holds a broken PDF: the cited mock answers it as the plain one does (the
    verdicts are the same with the options on or off), its values uncited; it used to end the run."""
    from systems.conftest import FAST

    from oeb.systems import get
    from oeb.systems.asking import predict
    from oeb.systems.base import Question

    (tmp_path / "pdfs").mkdir()
    (tmp_path / "gold").mkdir()
    gold = {"number": "INV-7", "total": 12.5}
    (tmp_path / "gold" / "broken.json").write_text(json.dumps(gold))
    pdf = tmp_path / "pdfs" / "broken.pdf"
    pdf.write_bytes(pdf_bytes(["Invoice INV-7", "Total 12.50"])[:300])
    schema = {"type": "object", "properties": {"number": {"type": "string"}, "total": {"type": "number"}}}
    question = Question(pdf, schema)
    options: dict[str, Any] = {"confidence": "calibrated"}
    records = {
        cite: predict(get("mock", options | {"cite": cite}), question, timeout=5.0, policy=FAST)
        for cite in (False, True)
    }
    assert records[True]["error"] is None and records[True]["output"] == records[False]["output"] == gold
    cites = get("mock", {"cite": True}).cites(records[True]["raw"])
    assert {c.address for c in cites} == set(gold) and all(c.page is None and c.bbox is None for c in cites)
    assert all(c.confidence is not None for c in cites)
