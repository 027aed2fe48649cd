"""`oeb gold sample` and the draft's accuracy with its Clopper-Pearson interval."""

from __future__ import annotations

import random
import shutil
from pathlib import Path

import pytest
from gold_corpus import Drafting

from oeb.cli import main
from oeb.gold import entries, sample
from oeb.gold.entries import Entry
from oeb.gold.error import accuracy, accuracy_shown


def test_the_interval_covers_the_true_accuracy_in_at_least_45_of_50_seeds() -> None:
    rng = random.Random(7)
    population = [("other", f"doc{i // 20}", f"field_{i % 20}", i) for i in range(4000)]
    wrong = set(rng.sample(range(len(population)), 160))  # the draft's true accuracy: 96%
    true = 1 - len(wrong) / len(population)
    covered = 0
    for seed in range(50):
        drawn = sample.draw(population, 200, seed, by_suite=False)
        checked = [
            Entry(
                id=sample.entry_id(doc_id, address, False),
                doc_id=doc_id,
                address=address,
                action="verify",
                status="accepted",
                reason="checked",
                by="test",
                **({"value": "right"} if value in wrong else {}),
            )
            for _, doc_id, address, value in drawn
        ]
        block = accuracy(checked)
        assert block is not None and block["checked"] == 200
        covered += block["ci"][0] <= true <= block["ci"][1]
    assert covered >= 45, covered


def test_sample_cli_writes_verify_entries(drafted: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    dataset = tmp_path / "drafted"
    shutil.copytree(drafted, dataset)
    assert main(["gold", "sample", str(dataset), "--n", "30", "--seed", "3"]) == 0
    sampled = [e for e in entries.load(str(dataset / "adjudications.yaml")).entries if e.action == "verify"]
    assert len(sampled) == 30 and all(e.id.startswith("verify-") and e.status == "proposed" for e in sampled)
    assert main(["gold", "sample", str(dataset), "--n", "30", "--seed", "3"]) == 0
    assert "(30 already there)" in capsys.readouterr().out
    again = entries.load(str(dataset / "adjudications.yaml")).entries
    assert sum(1 for e in again if e.action == "verify") == 30
    assert main(["gold", "sample", str(dataset), "--n", "100000"]) == 2
    assert main(["gold", "sample", str(tmp_path), "--n", "3"]) != 0
    assert accuracy_shown(None).startswith("draft accuracy: unmeasured")


def test_decided_sample_shows_on_the_leaderboard(
    drafting: Drafting, drafted: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dataset = tmp_path / "drafted"
    shutil.copytree(drafted, dataset)
    assert main(["gold", "sample", str(dataset), "--n", "10", "--seed", "1"]) == 0
    file = str(dataset / "adjudications.yaml")
    ids = [entry.id for entry in entries.load(file).entries if entry.action == "verify"]
    assert main(["adjudicate", "accept", file, *ids[:9], "--by", "ann", "--reason", "as on the page"]) == 0
    assert main(["adjudicate", "accept", file, ids[9], "--by", "ann", "--reason", "misread", "--value", '"Z"']) == 0
    runs = [str(tmp_path / name) for name in drafting.runs]
    for name, run in zip(drafting.runs, runs, strict=True):
        shutil.copytree(drafting.runs[name], run)
        assert main(["grade", run, "--dataset", str(dataset)]) == 0
    capsys.readouterr()
    assert main(["report", *runs, "--format", "md"]) == 0
    out = capsys.readouterr().out
    assert "gold: drafted by 5 systems (3 of 5)" in out
    assert "draft accuracy 90.0% (95% CI 55.5-99.7%) from 10 checked values" in out
