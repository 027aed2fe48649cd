"""`oeb audit` on a synthetic dataset whose gold has errors seeded into it, graded against five
independent simulated systems: recall and precision of the findings, the proposed fixes, the HTML
view and the refusals."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from conftest import write_run
from synthetic import SCHEMA, noisy, true_gold, write_dataset
from test_html import BROWSER, _chromium

from oeb.cli import main

SYSTEMS = ("alpha", "bravo", "charlie", "delta", "echo")
DOCUMENTS = 40
MISREAD, UNFOUND = 0.12, 0.05
"""Each simulated system misreads 12% and misses 5% of the values, each in its own way."""


def _seed_errors(golds: dict[str, dict[str, Any]], rng: random.Random) -> set[tuple[str, str]]:
    """Damage the golds in place; the (document, address) of every seeded gold error."""
    seeded = set()
    for number, (doc_id, gold) in enumerate(golds.items()):
        kind = number % 8
        row = rng.randrange(len(gold["lines"]))
        if kind == 0:  # a wrong value
            gold["po"] = gold["po"][::-1]
            seeded.add((doc_id, "po"))
        elif kind == 1:  # a wrong number in a row
            gold["lines"][row]["qty"] += 7
            seeded.add((doc_id, f"lines[{row}].qty"))
        elif kind == 2:  # a value the gold forgot
            del gold["po"]
            seeded.add((doc_id, "po"))
        elif kind == 3:  # a row value the gold forgot
            del gold["lines"][row]["price"]
            seeded.add((doc_id, f"lines[{row}].price"))
        elif kind == 4:  # outside its enum
            gold["currency"] = "US dollars"
            seeded.add((doc_id, "currency"))
        elif kind == 5:  # not of its format
            gold["date"] = "31/12/2025"
            seeded.add((doc_id, "date"))
        elif kind == 6 and any(ord(c) > 127 for c in gold["vendor"]):  # mojibake
            gold["vendor"] = gold["vendor"].encode().decode("latin-1")
            seeded.add((doc_id, "vendor"))
    return seeded


@pytest.fixture(scope="module")
def seeded(tmp_path_factory) -> dict[str, Any]:
    """The dataset with seeded gold errors, the true golds, and five graded runs (two brought folders),
    the last of which cuts the lines of three documents short."""
    tmp_path = tmp_path_factory.mktemp("seeded")
    rng = random.Random(7)
    truth = {f"inv_{n:02d}": true_gold(rng, n) for n in range(DOCUMENTS)}
    golds = json.loads(json.dumps(truth))
    errors = _seed_errors(golds, rng)
    dataset = write_dataset(tmp_path / "data", golds)
    short = {"inv_05", "inv_13", "inv_22"}
    runs = []
    for i, system in enumerate(SYSTEMS):
        noise = random.Random(100 + i)
        answers = {doc_id: noisy(gold, system, noise, MISREAD, UNFOUND) for doc_id, gold in truth.items()}
        if system == "echo":
            for doc_id in short:
                answers[doc_id]["lines"] = answers[doc_id]["lines"][:1]
        runs.append(
            write_run(
                str(tmp_path),
                system,
                answers,
                dataset,
                brought=i >= 3,
                golds=golds,
                schema=SCHEMA,
                suites=dict.fromkeys(golds, "invoices"),
            )
        )
    return {"dataset": dataset, "truth": truth, "errors": errors, "runs": runs, "short": short}


def _audit(capsys, *args: str) -> list[dict[str, Any]]:
    assert main(["audit", *args, "--format", "json"]) == 0
    findings: list[dict[str, Any]] = json.loads(capsys.readouterr().out)["findings"]
    return findings


def test_the_audit_finds_the_seeded_gold_errors(seeded, capsys) -> None:
    findings = _audit(capsys, *seeded["runs"])
    about_gold = {(f["doc_id"], f["address"]) for f in findings if f["kind"] != "short_answer"}
    found = about_gold & seeded["errors"]
    recall, precision = len(found) / len(seeded["errors"]), len(found) / len(about_gold)
    print(f"\nseeded {len(seeded['errors'])} gold errors: recall {recall:.3f}, precision {precision:.3f}")
    assert len(seeded["errors"]) >= 30
    assert recall >= 0.9 and precision >= 0.8
    kinds = {f["kind"] for f in findings}
    assert kinds == {"gold_disagrees", "gold_missing", "gold_invalid", "mojibake", "short_answer"}
    assert {f["doc_id"] for f in findings if f["kind"] == "short_answer"} == seeded["short"]
    for finding in findings:
        assert set(finding) == {"doc_id", "address", "kind", "gold", "consensus", "agree", "of", "systems", "note"}
        if finding["kind"] in ("gold_disagrees", "gold_missing"):
            assert finding["agree"] >= 3 and finding["of"] <= 5 and len(finding["systems"]) == finding["agree"]
            assert finding["agree"] < 3 or finding["consensus"] is not None
    missing = next(f for f in findings if f["kind"] == "gold_missing" and f["address"] == "po")
    assert missing["gold"] is None and missing["consensus"] == seeded["truth"][missing["doc_id"]]["po"]
    mojibake = next(f for f in findings if f["kind"] == "mojibake")
    assert mojibake["consensus"] == seeded["truth"][mojibake["doc_id"]]["vendor"] and mojibake["agree"] >= 3


def test_the_agreement_needed_is_a_majority_of_at_least_three_or_as_given(seeded, capsys) -> None:
    default = _audit(capsys, *seeded["runs"])
    strict = _audit(capsys, *seeded["runs"], "--min-agree", "5")
    assert {f["kind"] for f in strict} >= {"gold_invalid", "mojibake"}
    agreeing = [f for f in strict if f["kind"] in ("gold_disagrees", "gold_missing")]
    assert all(f["agree"] == 5 for f in agreeing)
    assert len(agreeing) < len([f for f in default if f["kind"] in ("gold_disagrees", "gold_missing")])


def test_the_gold_alone_is_checked_against_its_schema_without_runs(seeded, capsys) -> None:
    findings = _audit(capsys, "--dataset", seeded["dataset"])
    assert {f["kind"] for f in findings} == {"gold_invalid", "mojibake"}
    enum = next(f for f in findings if f["address"] == "currency")
    assert enum["gold"] == "US dollars" and "is not one of" in enum["note"] and enum["of"] == 0


def test_proposed_fixes_are_written_elsewhere_and_the_gold_is_never_changed(seeded, tmp_path, capsys) -> None:
    before = {path: path.read_bytes() for path in Path(seeded["dataset"], "gold").iterdir()}
    fixes = tmp_path / "fixes"
    assert main(["audit", *seeded["runs"], "--write-fixes", str(fixes)]) == 0
    assert "proposed values in" in capsys.readouterr().err
    assert before == {path: path.read_bytes() for path in Path(seeded["dataset"], "gold").iterdir()}
    put = json.loads((fixes / "findings.json").read_text())["findings"]
    assert put and {f["kind"] for f in put} == {"gold_disagrees", "gold_missing", "mojibake"}
    for finding in put:
        proposed = json.loads((fixes / "gold" / f"{finding['doc_id']}.json").read_text())
        truth = seeded["truth"][finding["doc_id"]]
        if finding["address"] in ("po", "vendor", "currency", "date"):
            assert proposed[finding["address"]] == truth[finding["address"]]
    row = next(f for f in put if f["kind"] == "gold_missing" and f["address"].startswith("lines["))
    index = int(row["address"].split("[")[1].split("]")[0])
    proposed = json.loads((fixes / "gold" / f"{row['doc_id']}.json").read_text())
    assert proposed["lines"][index]["price"] == seeded["truth"][row["doc_id"]]["lines"][index]["price"]
    inside = Path(seeded["dataset"], "fixes")
    assert main(["audit", *seeded["runs"], "--write-fixes", str(inside)]) == 2
    error = capsys.readouterr().err
    assert "is inside the dataset" in error and error.count("\n") == 1 and not inside.exists()


def test_the_html_audit_view_links_each_finding_to_its_pdf(seeded, tmp_path, capsys) -> None:
    out = tmp_path / "audit.html"
    assert main(["audit", *seeded["runs"], "--format", "html", "--out", str(out)]) == 0
    page = out.read_text()
    pdf = Path(seeded["dataset"], "pdfs", "inv_00.pdf").as_uri()
    assert f'<a href="{pdf}" target="_blank" rel="noopener">inv_00</a>' in page
    assert "gold_disagrees" in page and "<script" not in page


def test_bad_input_is_refused_in_one_line(seeded, make_run, capsys) -> None:
    runs = seeded["runs"]
    assert main(["audit", *runs, "--min-agree", "6"]) == 2
    error = capsys.readouterr().err
    assert error == "oeb audit: --min-agree 6 is more than the 5 runs given; give at most 5, or more runs\n"
    assert main(["audit", *runs[:2], make_run("perfect")]) == 1
    error = capsys.readouterr().err
    assert error.startswith("oeb audit: runs alpha and perfect differ in dataset") and error.count("\n") == 1
    golds = {path.stem: json.loads(path.read_text()) for path in sorted(Path(seeded["dataset"], "gold").iterdir())[:5]}
    fewer = write_run(
        str(Path(runs[0]).parent),
        "fewer",
        golds,
        seeded["dataset"],
        golds=golds,
        schema=SCHEMA,
        suites=dict.fromkeys(golds, "invoices"),
    )
    assert main(["audit", *runs[:3], fewer]) == 1
    error = capsys.readouterr().err
    assert (
        error.startswith("oeb audit: runs alpha and fewer differ in documents (35 only in alpha")
        and error.count("\n") == 1
    )
    assert main(["audit"]) == 2
    assert capsys.readouterr().err.count("\n") == 1


@pytest.mark.must_run
@pytest.mark.skipif(BROWSER is None, reason="no Chromium on this machine (apt-get install -y chromium)")
def test_the_html_report_has_an_audit_view_that_opens_the_document(seeded, tmp_path, capsys) -> None:
    out = tmp_path / "report.html"
    assert main(["report", *seeded["runs"], "--format", "html", "--audit", "--out", str(out)]) == 0
    findings = _audit(capsys, *seeded["runs"])
    clicked = tmp_path / "clicked.html"
    click = '<script>document.querySelector("#audit a.doc").click();</script></body>'
    clicked.write_text(out.read_text().replace("</body>", click))
    dom = _chromium(tmp_path, clicked.as_uri(), "--dump-dom")
    table = dom[dom.index('id="audit"') : dom.index("</table>", dom.index('id="audit"'))]
    assert table.count("<tr>") == 1 + len(findings)
    first = findings[0]["doc_id"]
    assert 'id="docview" class="open"' in dom and f"{first} · invoices" in dom
    assert f'href="{Path(seeded["dataset"], "pdfs", f"{first}.pdf").as_uri()}"' in dom
    assert main(["report", *seeded["runs"], "--audit"]) == 2  # html only
    assert "--audit goes with --format html" in capsys.readouterr().err
