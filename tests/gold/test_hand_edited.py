"""An adjudication file a person writes by hand (comments, YAML anchors and merge keys, unicode values,
addresses spelled their own way inside nested arrays), a dataset whose gold holds blank strings, and a
reproduction under another gold: what the first audit's tests, all on oeb-written files, did not try."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from goldruns import GoldRuns

from oeb.cli import main
from oeb.dataset import SAMPLE_DATASET
from oeb.errors import AdjudicationError
from oeb.gold import entries, sample
from oeb.publish.reproduce import differences
from oeb.report import load_run

HAND = """\
# decided at the team meeting ✍ (this comment is ours)
dataset: {dataset}
entries:
- &fix                      # an anchor, merged into the next entry
  id: h-1
  doc_id: short__invoice_4417
  address: customer
  action: accept
  values: [Amberline Foods, "Ämberline Fööds 東京"]
  status: accepted
  reason: &why the page reads Amberline Foods
  by: &who ann
  date: 2026-12-05
- <<: *fix
  id: h-2
  doc_id: short__invoice_4418
  status: proposed
- {{id: h-3, doc_id: short__invoice_4417, address: "line_items[1].amount", action: verify, status: proposed}}
"""


def test_a_hand_edited_file_reads_and_says_what_a_decision_rewrites(
    gold_runs: GoldRuns, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = tmp_path / "adjudications.yaml"
    url.write_text(HAND.format(dataset=gold_runs.dataset))
    read = entries.load(str(url))
    merged = read.by_id("h-2")
    assert (merged.address, merged.values, merged.reason, merged.by) == (
        "customer",
        ("Amberline Foods", "Ämberline Fööds 東京"),
        "the page reads Amberline Foods",
        "ann",
    )
    assert main(["adjudicate", "check", str(url)]) == 0
    capsys.readouterr()
    assert main(["adjudicate", "accept", str(url), "h-3", "--by", "bob", "--reason", "the page: 297,90 ✓"]) == 0
    err = capsys.readouterr().err
    assert "1 entry accepted" in err and "comments, anchors" in err and "are not kept" in err
    again = entries.load(str(url))
    assert [e.id for e in again.entries] == ["h-1", "h-2", "h-3"]
    assert again.by_id("h-2") == merged and again.by_id("h-3").reason == "the page: 297,90 ✓"
    assert "Ämberline Fööds 東京" in url.read_text(encoding="utf-8")  # unicode kept as text, not escaped
    # the file is now in oeb's own layout: the next decision has nothing to warn about
    assert main(["adjudicate", "reject", str(url), "h-2", "--by", "bob", "--reason", "no"]) == 0
    assert "not kept" not in capsys.readouterr().err


@pytest.mark.parametrize(
    "address",
    ["line_items[01].sku", "line_items[00].sku", "line_items[\u0661].sku"],
)
def test_an_address_spelled_another_way_is_refused_before_grading(
    gold_runs: GoldRuns, tmp_path: Path, address: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """`line_items[01].sku` names the place verdicts print as `line_items[1].sku`: accepted as an `add`
    it put a second verdict beside the gold's own (and a second accepted entry on one address went
    unseen); it is refused in one line naming the spelling to write, and nothing is graded."""
    url = tmp_path / "adjudications.yaml"
    url.write_text(
        "- {id: odd, doc_id: short__invoice_4417, action: add, value: HH-2, status: accepted, by: ann, reason: r,"
        f" address: {json.dumps(address)}}}\n"
    )
    capsys.readouterr()
    assert main(["adjudicate", "check", str(url), "--dataset", gold_runs.dataset]) == 2
    assert "as verdicts print it" in capsys.readouterr().out
    run = tmp_path / "run"
    shutil.copytree(gold_runs.runs[0], run)
    before = (run / "field_matching" / "verdicts.parquet").read_bytes()
    assert main(["grade", str(run), "--adjudications", str(url)]) == 2
    err = capsys.readouterr().err.strip()
    assert "as verdicts print it" in err and len(err.splitlines()) == 1
    assert (run / "field_matching" / "verdicts.parquet").read_bytes() == before


def test_blank_gold_strings_are_never_sampled(tmp_path: Path) -> None:
    """The scorer grades no empty or blank gold string (`states_nothing`): a person asked to verify
    one checks what no score counts, and the gold error's denominator grows with it."""
    folder = tmp_path / "blank"
    shutil.copytree(SAMPLE_DATASET, folder)
    path = folder / "gold" / "short__invoice_4417.json"
    gold = json.loads(path.read_text())
    gold["customer"], gold["vendor"]["city"] = "", " \u00a0"
    path.write_text(json.dumps(gold))
    from oeb.dataset import open_dataset

    values = sample.population(open_dataset(str(folder)))
    found = {(doc_id, address) for _, doc_id, address, _ in values}
    assert ("short__invoice_4417", "customer") not in found and ("short__invoice_4417", "vendor.city") not in found
    assert ("short__invoice_4417", "currency") in found
    assert all(str(value).strip() for *_, value in values)


def test_a_reproduction_under_another_gold_says_so(gold_runs: GoldRuns, tmp_path: Path) -> None:
    """`oeb reproduce --adjudications none` of a run graded under a file moves the score through the
    gold; "what differs" names it instead of saying the provenance is the same."""
    url = tmp_path / "adjudications.yaml"
    url.write_text(HAND.format(dataset=gold_runs.dataset))
    run = tmp_path / "run"
    shutil.copytree(gold_runs.runs[0], run)
    raw = load_run(str(run))
    assert main(["grade", str(run), "--adjudications", str(url)]) == 0
    under = load_run(str(run))
    sha = entries.load(str(url)).short
    assert f"adjudications: {sha} -> none" in differences(under, raw)
    assert not [line for line in differences(under, under) if line.startswith("adjudications")]


def test_a_sampled_value_the_page_does_not_state_counts_as_wrong(
    gold_runs: GoldRuns, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A person checking a sampled gold value may find nothing there on the page (gold the annotators
    made up). Rejecting the entry counted it for nothing, so the gold error missed that kind of error;
    `--value null` (the review page's `x`) accepts it as wrong: the gold value is dropped, as `remove`."""
    url = str(tmp_path / "adjudications.yaml")
    assert main(["adjudicate", "sample", gold_runs.dataset, "--n", "3", "--seed", "5", "--out", url]) == 0
    first, second, third = entries.load(url).entries
    assert main(["adjudicate", "accept", url, first.id, second.id, "--by", "ann", "--reason", "as printed"]) == 0
    assert (
        main(["adjudicate", "accept", url, third.id, "--by", "ann", "--reason", "not on the page", "--value", "null"])
        == 0
    )
    written = entries.load(url).by_id(third.id)
    assert (written.status, written.has_value, written.value, written.effect) == ("accepted", True, None, "remove")
    assert "value: null" in Path(url).read_text()
    assert main(["adjudicate", "check", url]) == 0
    capsys.readouterr()
    assert main(["report", gold_runs.runs[0], "--adjudications", url, "--format", "json"]) == 0
    error = json.loads(capsys.readouterr().out)["gold_error"]
    assert (error["checked"], error["wrong"]) == (3, 1)
    run = tmp_path / "run"
    shutil.copytree(gold_runs.runs[0], run)
    assert main(["grade", str(run), "--adjudications", url]) == 0
    import pyarrow.parquet as pq

    verdicts = pq.read_table(run / "field_matching" / "verdicts.parquet").to_pylist()
    assert not [v for v in verdicts if (v["id"], v["address"]) == (third.doc_id, third.address)]  # dropped
    with pytest.raises(AdjudicationError, match="must be one value"):
        entries.parse("- {id: r, doc_id: d, address: a, action: replace, value: null}\n")


def test_a_number_typed_for_a_text_field_on_the_review_page_is_the_text(gold_runs: GoldRuns, tmp_path: Path) -> None:
    """The review page reads a typed correction as JSON, else as text: `4417` typed for a string field
    read as the number 4417, which the schema refused ("is not of type 'string'"); the reviewer had to
    know to type `"4417"`. The text as typed is taken when the schema refuses the number."""
    from oeb.view.api import open_view
    from oeb.view.review import Review

    url = tmp_path / "adjudications.yaml"
    url.write_text(
        "- {id: v-text, doc_id: short__invoice_4418, address: invoice_number, action: verify}\n"
        "- {id: v-number, doc_id: short__invoice_4418, address: total, action: verify}\n"
        "- {id: v-bad, doc_id: short__invoice_4418, address: subtotal, action: verify}\n"
    )
    review = Review(open_view([gold_runs.runs[0]]), str(url), "ann")
    read = entries.load(str(url))

    def correct(entry_id: str, text: str) -> object:
        body = {"id": entry_id, "revision": read.by_id(entry_id).revision, "decision": "correct", "value": text}
        return review.decide(body | {"reason": "typed"})["value"]

    assert correct("v-text", "4418") == "4418"
    assert correct("v-number", "12.5") == 12.5
    before = url.read_bytes()
    with pytest.raises(AdjudicationError, match="refused by the schema"):
        correct("v-bad", "4,24")
    assert url.read_bytes() == before


def test_diff_names_the_interval_beside_a_run_with_failed_documents(
    gold_runs: GoldRuns, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """With failed documents the headline (accuracy × coverage) lies below the bootstrap interval of
    the accuracy: the diff put them side by side as "before" and "95% CI", read as the headline's."""
    from goldruns import mock_run

    failing = mock_run(tmp_path / "failing", Path(gold_runs.dataset), 7, "system.mock.malformed=0.5")
    url = tmp_path / "adjudications.yaml"
    url.write_text(HAND.format(dataset=gold_runs.dataset))
    capsys.readouterr()
    assert main(["adjudicate", "diff", failing, "--adjudications", str(url), "--format", "json"]) == 0
    (system,) = json.loads(capsys.readouterr().out)["systems"]
    assert system["before"]["headline"] < system["before"]["ci95"][0]  # the case: documents failed
    assert main(["adjudicate", "diff", failing, "--adjudications", str(url)]) == 0
    head, columns = capsys.readouterr().out.splitlines()[:2]
    assert "accuracy × coverage" in head and columns.split("  ")[0:1] == ["system"]
    assert columns.count("accuracy 95% CI") == 2


def test_a_key_written_twice_in_an_entry_is_refused_with_its_line() -> None:
    """YAML keeps the last of two equal keys: a hand-edited entry left with `status: proposed` and a
    later `status: accepted` was read as accepted (or the other way round) without a word. A merge key's
    values may still be overridden (HAND's h-2 does)."""
    text = "- id: a\n  doc_id: d\n  address: x\n  action: remove\n  status: proposed\n  status: accepted\n"
    with pytest.raises(AdjudicationError, match="at line 6: the key 'status' is written twice"):
        entries.parse(text)
    assert entries.parse(HAND.format(dataset="ds")).by_id("h-2").status == "proposed"
