"""The adjudication file: read, written, decided; its checks against the dataset; the seeded sample;
the gold error's exact interval."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from scipy.optimize import brentq
from scipy.stats import binom, binomtest

from oeb.dataset import SAMPLE_DATASET, open_dataset
from oeb.errors import AdjudicationError
from oeb.gold import check, entries, sample
from oeb.gold.entries import Entry
from oeb.gold.error import clopper_pearson, gold_error, shown, within_noise

GOOD = """\
dataset: {dataset}
entries:
- id: e1
  doc_id: short__invoice_4417
  address: customer
  action: accept
  status: accepted
  values: [Amberline Fods]
  reason: the page shows both
  by: ann
- id: e2
  doc_id: short__invoice_4417
  address: total
  action: replace
  value: 5411.37
- id: e3
  doc_id: short__invoice_4418
  address: line_items[0].amount
  action: remove
"""


def test_the_file_reads_and_writes_back(tmp_path: Path) -> None:
    read = entries.parse(GOOD.format(dataset=SAMPLE_DATASET), "f.yaml")
    assert [e.id for e in read.entries] == ["e1", "e2", "e3"]
    assert [e.id for e in read.accepted] == ["e1"] and read.entries[1].value == 5411.37
    url = str(tmp_path / "adjudications.yaml")
    written = entries.save(read, url)
    assert entries.load(url).entries == read.entries and written.sha256 == entries.load(url).sha256


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("- id: a\n  doc_id: d\n  address: x\n  action: accept\n  values: [1\n", "not valid YAML at line"),
        ("- id: a\n  doc_id: d\n  address: x\n  action: rename\n", "action 'rename' is not one of"),
        ("- id: a\n  doc_id: d\n  address: x\n  action: remove\n  status: accepted\n  by: ann\n", "needs `reason:`"),
        (
            "- {id: a, doc_id: d, address: x, action: remove}\n- {id: a, doc_id: d, address: y, action: remove}\n",
            "used twice",
        ),
        ("- {id: a, doc_id: d, address: x, action: replace}\n", "needs `value:`"),
        ("- {id: a, doc_id: d, address: x, action: accept, values: []}\n", "needs `values"),
        ("- {id: a, doc_id: d, address: x, action: remove, colour: red}\n", "unknown key 'colour'"),
        ("- {id: a, doc_id: d, address: x, action: remove, evidence: {page: 0}}\n", "evidence `page`"),
    ],
)
def test_a_bad_file_is_one_line(text: str, says: str) -> None:
    with pytest.raises(AdjudicationError, match=says) as caught:
        entries.parse(text, "f.yaml")
    assert "\n" not in str(caught.value)


def test_the_line_of_a_bad_entry_is_named() -> None:
    text = "- {id: a, doc_id: d, address: x, action: remove}\n- id: b\n  doc_id: d\n  address: y\n  action: nope\n"
    with pytest.raises(AdjudicationError, match=r"entry 2 \(line 2\)"):
        entries.parse(text, "f.yaml")


def test_an_entry_without_a_value_keeps_none_on_a_worker() -> None:
    """Entries travel to grading workers pickled: an entry without a value must still have none there
    (a bare `object()` marker came back as another object), and its digest must not vary."""
    import pickle

    from oeb.run.grade.task import details_under

    confirmed = Entry("v1", "d", "total", "verify", status="accepted", reason="checked", by="ann")
    travelled = pickle.loads(pickle.dumps(confirmed))
    assert not travelled.has_value and travelled.effect is None and travelled == confirmed
    accepted = Entry("a1", "d", "total", "accept", status="accepted", values=(3,), reason="r", by="ann")
    assert details_under("k", [pickle.loads(pickle.dumps(accepted))]) == details_under("k", [accepted])


def test_decisions() -> None:
    proposed = Entry("v", "d", "x", "verify", reason="sampled")
    kept = entries.decide(proposed, "accepted", "ann", None)
    assert (kept.status, kept.by, kept.reason, kept.has_value) == ("accepted", "ann", "sampled", False)
    fixed = entries.decide(proposed, "accepted", "ann", "typo on the page", "INV-1")
    assert fixed.value == "INV-1" and fixed.effect == "replace"
    assert entries.decide(fixed, "accepted", "bob", "again").value == "INV-1"  # a value already there is kept
    with pytest.raises(AdjudicationError, match="rejection needs"):
        entries.decide(proposed, "rejected", "ann", None)
    with pytest.raises(AdjudicationError, match="needs a reason"):
        entries.decide(Entry("r", "d", "x", "remove"), "accepted", "ann", "  ")
    assert proposed.revision != kept.revision


def problems_of(text: str, dataset: str = SAMPLE_DATASET) -> list[str]:
    return check.problems(entries.parse(text, "f.yaml"), open_dataset(dataset))


def test_check_finds_each_problem_by_id() -> None:
    text = """\
- {id: ok, doc_id: short__invoice_4417, address: customer, action: replace, value: Amberline}
- {id: nodoc, doc_id: nothing_here, address: customer, action: remove}
- {id: noaddr, doc_id: short__invoice_4417, address: "line_items[9].amount", action: remove}
- {id: badtype, doc_id: short__invoice_4417, address: total, action: replace, value: lots}
- {id: baddate, doc_id: short__invoice_4417, address: invoice_date, action: accept, values: [7 March]}
- {id: undeclared, doc_id: short__invoice_4417, address: colour, action: add, value: red}
- {id: present, doc_id: short__invoice_4417, address: currency, action: add, value: EUR}
- {id: c1, doc_id: short__invoice_4417, address: tax, action: replace, value: 1, status: accepted, by: a, reason: r}
- {id: c2, doc_id: short__invoice_4417, address: tax, action: remove, status: accepted, by: b, reason: r}
"""
    found = problems_of(text)
    assert [line.split(":")[0] for line in found] == [
        "c2",
        "nodoc",
        "noaddr",
        "badtype",
        "baddate",
        "undeclared",
        "present",
    ]
    assert all("\n" not in line for line in found)
    assert "is not of type 'number'" in found[3]


def test_a_sound_document_is_not_checked_again_until_it_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A regrade under an unchanged file skips validating what an earlier check found sound (remembered
    in the user's cache folder); a changed gold is checked afresh, and its problem found."""
    import shutil

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    copied = shutil.copytree(SAMPLE_DATASET, tmp_path / "sample")
    text = "- {id: t, doc_id: short__invoice_4417, address: total, action: replace, value: 1.5, status: accepted,"
    read = entries.parse(text + " by: ann, reason: r}\n", "f.yaml")
    assert check.checked(read, open_dataset(str(copied))) is read
    with monkeypatch.context() as patched:
        patched.setattr(check, "document_problems", None)  # called again: a TypeError
        assert check.checked(read, open_dataset(str(copied))) is read
    gold = copied / "gold" / "short__invoice_4417.json"
    gold.write_text(json.dumps({key: value for key, value in json.loads(gold.read_text()).items() if key != "total"}))
    with pytest.raises(AdjudicationError, match="t: short__invoice_4417 has no gold value at total"):
        check.checked(read, open_dataset(str(copied)))
    assert "no gold value" in check.problems(read, open_dataset(str(copied)))[0]  # `oeb adjudicate check`: always


def test_a_file_of_another_commit_is_refused() -> None:
    text = "dataset: x\ncommit: " + "a" * 40 + "\nentries: []\n"
    dataset = open_dataset(SAMPLE_DATASET)
    pinned = type(dataset)(**{**dataset.__dict__, "commit": "b" * 40})
    with pytest.raises(AdjudicationError, match="commit aaaaaaaaaaaa of the dataset, not bbbbbbbbbbbb"):
        check.checked(entries.parse(text, "f.yaml"), pinned)


def test_the_sample_is_seeded_and_stratified() -> None:
    values = sample.population(open_dataset(SAMPLE_DATASET))
    first, again = sample.draw(values, 60, 7, False), sample.draw(values, 60, 7, False)
    assert first == again and len(set(first)) == 60 and sample.draw(values, 60, 8, False) != first
    assert all(value is not None for *_, value in first)
    by_suite = sample.draw(values, 60, 7, True)
    sizes: dict[str, int] = {}
    for suite, *_ in values:
        sizes[suite] = sizes.get(suite, 0) + 1
    drawn: dict[str, int] = {}
    for suite, *_ in by_suite:
        drawn[suite] = drawn.get(suite, 0) + 1
    for suite, size in sizes.items():  # proportional, to within one by the largest remainders
        assert abs(drawn.get(suite, 0) - 60 * size / len(values)) < 1
    assert sum(drawn.values()) == 60 and by_suite == sample.draw(values, 60, 7, True)
    made = sample.entries(by_suite, 7, True)
    assert all(e.id.startswith(sample.BY_SUITE) and e.action == "verify" for e in made)
    with pytest.raises(AdjudicationError, match="more than the"):
        sample.draw(values, len(values) + 1, 0, False)


def exact(wrong: int, checked: int) -> tuple[float, float]:
    """The Clopper-Pearson bounds solved from the binomial distribution itself."""
    low = 0.0 if wrong == 0 else brentq(lambda p: binom.sf(wrong - 1, checked, p) - 0.025, 1e-12, 1 - 1e-12)
    high = 1.0 if wrong == checked else brentq(lambda p: binom.cdf(wrong, checked, p) - 0.025, 1e-12, 1 - 1e-12)
    return low, high


@pytest.mark.parametrize(("wrong", "checked"), [(0, 10), (5, 200), (1, 1), (37, 40), (3, 1000)])
def test_the_interval_is_the_exact_binomial_one(wrong: int, checked: int) -> None:
    low, high = clopper_pearson(wrong, checked)
    assert (low, high) == pytest.approx(exact(wrong, checked), abs=1e-9)
    ci = binomtest(wrong, checked).proportion_ci(0.95, method="exact")
    assert (low, high) == pytest.approx((ci.low, ci.high), abs=1e-9)


def test_gold_error_from_verify_entries() -> None:
    rng = random.Random(1)
    made = []
    for n in range(200):
        wrong = n < 5
        base = Entry(f"{sample.BY_SUITE}{n}", f"doc{n % 2}", "x", "verify", "accepted", reason="r", by="a")
        made.append(Entry(**{**base.__dict__, "value": "fixed"}) if wrong else base)
    made.append(Entry("verify-p", "doc0", "y", "verify"))  # proposed: counts for nothing
    rng.shuffle(made)
    block = gold_error(made, {"doc0": "a", "doc1": "b"})
    assert block is not None and (block["checked"], block["wrong"], block["rate"]) == (200, 5, 0.025)
    assert shown(block) == "gold error: 2.5% (95% CI 0.8-5.7%) from 200 checked values"
    assert set(block["per_suite"]) == {"a", "b"} and block["per_suite"]["a"]["checked"] == 100
    assert gold_error([], {}) is None and "unmeasured" in shown(None)
    assert within_noise([0.9, 0.89, 0.5], block) == [True, False]
    assert json.dumps(block)
