"""`oeb gold draft` and leave-drafters-out grading against a hidden true gold (docs/own-documents.md)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from statistics import mean
from typing import Any

import pytest
from gold_corpus import DAMAGE, PAIR, SYSTEMS, Drafting

import oeb.scoring
from oeb.cli import main
from oeb.dataset import SAMPLE_DATASET, open_dataset
from oeb.gold.apply import adjudicate
from oeb.gold.check import leaves
from oeb.gold.derivation import excluded, read_draft, system_key


def _prediction(run: str, doc_id: str) -> Any:
    path = Path(run) / "predictions" / f"{doc_id}.json"
    return json.loads(path.read_text()) if path.exists() else None


def _accuracy(run: str, golds: dict[str, Any], entries: dict[str, list[Any]] | None = None) -> float:
    """The run's mean document accuracy against `golds`, under `entries` per document (the leaderboard's)."""
    found = []
    for doc_id, gold in golds.items():
        result = oeb.scoring.score(_prediction(run, doc_id), gold, {"type": "object"}, verdicts=True)
        details = [{**v._asdict(), "address": [list(step) for step in v.address]} for v in result.pop("verdicts")]
        found.append(adjudicate(result, details, (entries or {}).get(doc_id, [])).result["accuracy"])
    return mean(found)


def _by_document(entries: list[Any]) -> dict[str, list[Any]]:
    out: dict[str, list[Any]] = {}
    for entry in entries:
        out.setdefault(entry.doc_id, []).append(entry)
    return out


def test_draft_is_accurate_and_leave_drafters_out_ranks_as_the_truth(drafting: Drafting, drafted: Path) -> None:
    dataset = open_dataset(str(drafted))
    draft = read_draft(dataset)
    assert draft is not None and (draft.n, draft.k) == (5, 3)
    truth = {p.stem: json.loads(p.read_text()) for p in sorted(drafting.truth.iterdir())}
    golds = dict((row.doc_id, gold) for row, gold in dataset.golds())
    # the draft's value accuracy against the hidden gold
    true_values = {(doc_id, address): value for doc_id, gold in truth.items() for address, value in leaves(gold)}
    decided = [v for v in draft.values if v.status == "drafted"]
    right = sum(
        1
        for v in decided
        if oeb.scoring.canonical_key(true_values.get((v.doc_id, v.address))) == oeb.scoring.canonical_key(v.value)
    )
    accuracy = right / len(decided)
    # a drafted value is wrong only when 3 of 5 share one error: the pair's shared damage plus a third
    # system's identical misreading (never, in practice), or three of the independent ones (rarer still)
    assert accuracy >= 1 - DAMAGE * 0.1, accuracy
    assert len(decided) >= 0.8 * len(true_values)
    keys = {
        name: system_key(json.loads((Path(run) / "settings.json").read_text())) for name, run in drafting.runs.items()
    }
    true = {name: _accuracy(run, truth) for name, run in drafting.runs.items()}
    naive = {name: _accuracy(run, golds, _by_document(excluded(draft, None))) for name, run in drafting.runs.items()}
    fair = {
        name: _accuracy(run, golds, _by_document(excluded(draft, keys[name]))) for name, run in drafting.runs.items()
    }
    order = lambda scores: sorted(scores, key=lambda name: -scores[name])  # noqa: E731
    assert order(fair) == order(true), (true, fair)
    # without exclusion the correlated pair is graded on the values it decided alone: its score rises
    # above its true one more than any independent system's does, and leave-drafters-out takes part of
    # that back (values the pair got wrong and nobody else could settle stay undecided for everyone)
    inflation = {name: naive[name] - true[name] for name in SYSTEMS}
    assert min(inflation[s] for s in PAIR) > max(inflation[s] for s in SYSTEMS if s not in PAIR), inflation
    assert all(fair[s] < naive[s] for s in PAIR), (naive, fair)
    # `oeb grade RUN --dataset DRAFTED` grades each run as leave-drafters-out says
    run = drafting.runs["a"]
    assert main(["grade", run, "--dataset", str(drafted)]) == 0
    summary = json.loads((Path(run) / "field_matching" / "summary.json").read_text())
    assert summary["headline"] == pytest.approx(fair["a"])  # coverage 1: the mean accuracy
    lines = [json.loads(line) for line in (Path(run) / "field_matching" / "scores.jsonl").read_text().splitlines()]
    assert sum(line["excluded_values"] for line in lines) == len(excluded(draft, keys["a"])) - sum(
        1 for e in excluded(draft, keys["a"]) if e.id.startswith("undecided-")
    )
    assert "each system graded without its own deciding votes" in summary["provenance"]["draft"]["caption"]


def test_bad_input(drafting: Drafting, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    runs = list(drafting.runs.values())
    out = tmp_path / "out"
    for arguments in (
        [*runs[:2], "--min-agree", "3"],
        [*runs[:2], "--min-agree", "0"],
        [runs[0], runs[0]],
        [runs[0]],
        [runs[0], str(tmp_path)],
    ):
        assert main(["gold", "draft", *arguments, "--out", str(out)]) == 2
        assert len(capsys.readouterr().err.strip().splitlines()) == 1
        assert not out.exists()
    twin = tmp_path / "twin"
    shutil.copytree(runs[0], twin)
    assert main(["gold", "draft", runs[0], str(twin), "--out", str(out)]) == 2
    assert "same system setting" in capsys.readouterr().err and not out.exists()
    other = tmp_path / "other"  # a run over another dataset (here: the sample, which has gold)
    shutil.copytree(runs[1], other)
    settings = json.loads((other / "settings.json").read_text())
    (other / "settings.json").write_text(json.dumps(settings | {"dataset": str(Path(SAMPLE_DATASET).resolve())}))
    assert main(["gold", "draft", runs[0], str(other), "--out", str(out)]) == 2
    assert "different datasets" in capsys.readouterr().err and not out.exists()
    (twin / "settings.json").write_text(
        json.dumps(settings | {"dataset": str(Path(SAMPLE_DATASET).resolve()), "options": {"seed": 9}})
    )
    assert main(["gold", "draft", str(other), str(twin), "--out", str(out)]) == 2
    assert "which has gold" in capsys.readouterr().err and not out.exists()
