"""Grounding per verdict: categories and figures on constructed evidence and citations, against a
direct count; and `oeb report --grounding` recovering the mock's known error profile."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from oeb.cli import main
from oeb.grounding.verdicts import Cited, Evidence, f1, iou, judge, ratio, tally

HERE = Evidence(((1, (10.0, 10.0, 50.0, 20.0)),))
TWO = Evidence(((1, (10.0, 10.0, 50.0, 20.0)), (2, (100.0, 100.0, 140.0, 110.0))))  # ambiguous: both count


def test_iou_and_judging_a_citation() -> None:
    assert iou((0, 0, 10, 10), (0, 0, 10, 10)) == 1.0
    assert iou((0, 0, 10, 10), (5, 0, 15, 10)) == pytest.approx(50 / 150)
    assert iou((0, 0, 10, 10), (20, 20, 30, 30)) == 0.0
    assert judge(Cited(1, (11, 10, 50, 20)), HERE) == (True, True)
    assert judge(Cited(1, (300, 300, 340, 310)), HERE) == (False, True)  # right page, elsewhere on it
    assert judge(Cited(2, (10, 10, 50, 20)), HERE) == (False, False)
    assert judge(Cited(1), HERE) == (False, True)  # a page without a box
    assert judge(Cited(2, (100, 100, 140, 110)), TWO) == (True, True)
    assert judge(Cited(1, (10, 10, 30, 20)), HERE, 0.6) == (False, True)  # IoU 0.5 under a 0.6 threshold


def test_a_constructed_document_gives_exact_precision_recall_and_f1() -> None:
    right, elsewhere, other_page = (
        Cited(1, (10, 10, 50, 20)),
        Cited(1, (200, 200, 240, 210)),
        Cited(3, (10, 10, 50, 20)),
    )
    rows = [
        ("matched", right, HERE),
        ("matched", right, HERE),
        ("matched", elsewhere, HERE),
        ("matched", None, HERE),
        ("misread", right, TWO),
        ("misread", other_page, HERE),
        ("unfound", None, HERE),
        ("unfound", None, Evidence()),  # not located: unverifiable
        ("matched", right, None),  # unverifiable
        ("fabricated", right, None),
        ("invented_item", None, None),
        ("invented_field", right, None),
    ]
    counted = tally(rows)
    assert dict(counted.categories) == {
        "matched_cited_right": 2,
        "matched_cited_elsewhere": 1,
        "matched_uncited": 1,
        "misread_cited_right": 1,
        "misread_cited_elsewhere": 1,
        "fabricated_cited": 1,
        "invented_uncited": 1,
        "invented_cited": 1,
    }
    assert (counted.cited, counted.right_box, counted.right_page, counted.gold, counted.unverifiable) == (5, 3, 4, 7, 2)
    precision, recall = ratio(3, 5), ratio(3, 7)
    assert (precision, recall) == (0.6, 3 / 7)
    assert f1(precision, recall) == pytest.approx(2 * 0.6 * (3 / 7) / (0.6 + 3 / 7))
    assert ratio(1, 0) is None and f1(None, 0.5) is None


def test_report_grounding_recovers_the_mocks_error_profile(
    sample_runs: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    runs = [str(sample_runs["cited"]), str(sample_runs["plain"])]
    assert main(["report", *runs, "--grounding", "--format", "json"]) == 0
    cited, plain = json.loads(capsys.readouterr().out)["runs"]
    assert plain == {"label": plain["label"], "folder": plain["folder"], "cited": False}
    precision = cited["box"]["precision"]
    low, high = precision["ci95"]
    assert low <= 0.75 <= high and low <= precision["value"] <= high  # cite_wrong 0.25 moves a quarter away
    assert cited["page"]["precision"]["value"] == 1.0  # moved boxes stay on their page
    assert cited["verifiable"] > 500 and cited["unverifiable"] < cited["verifiable"] / 10
    assert sum(cited["categories"].values()) > 0
    for form in ("text", "md", "html"):
        out = tmp_path / f"grounding.{form}"
        assert main(["report", *runs, "--grounding", "--format", form, "--out", str(out)]) == 0
        assert "matched_cited_right" in out.read_text() and "n/a" in out.read_text()


@pytest.mark.parametrize("iou_text", ["0", "1.5", "-1", "half", ""])
def test_an_iou_outside_0_1_is_one_line_and_exit_2(
    iou_text: str, sample_runs: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["report", str(sample_runs["cited"]), "--grounding", "--iou", iou_text]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--iou" in err[0]


@pytest.mark.parametrize(
    ("flags", "said"),
    [
        (["--grounding", "--calibration"], "--grounding and --calibration"),  # neither one dropped unsaid
        (["--iou", "0.5"], "--iou goes with --grounding"),  # the default's own value too
        (["--calibration", "--iou", "0.5"], "--iou goes with --grounding"),
    ],
)
def test_flags_that_do_not_go_together_are_one_line_and_exit_2(
    flags: list[str], said: str, sample_runs: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["report", str(sample_runs["cited"]), *flags, "--format", "json"]) == 2
    captured = capsys.readouterr()
    err = captured.err.strip().splitlines()
    assert len(err) == 1 and said in err[0] and not captured.out


def test_the_located_evidence_is_cached_per_dataset_version(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from oeb.dataset import SAMPLE_DATASET, open_dataset
    from oeb.report import grounding

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    dataset = open_dataset(SAMPLE_DATASET)
    ids = [row.doc_id for row in dataset.rows[:3]]
    located = grounding.evidence_of(dataset, ids)
    assert grounding.evidence_cache(dataset).exists()
    assert located == {doc_id: grounding.document_evidence(dataset, doc_id) for doc_id in ids}

    def never(*_: object) -> None:
        raise AssertionError("located again")

    monkeypatch.setattr(grounding, "documents_evidence", never)
    assert grounding.evidence_of(dataset, ids) == located  # read back, nothing located again


def test_documents_located_by_a_process_per_core_are_located_as_here(monkeypatch: pytest.MonkeyPatch) -> None:
    from oeb.dataset import SAMPLE_DATASET, open_dataset
    from oeb.grounding import located
    from oeb.report import grounding

    dataset = open_dataset(SAMPLE_DATASET)
    rows = [row for row in dataset.rows if row.doc_path.endswith(".pdf")][:4]
    jobs = list(grounding._jobs(dataset, rows))
    assert located.processes(len(jobs)) == 1  # a few documents: no process started
    here = dict(located.locate_all(jobs, len(jobs)))
    assert any(place.places for evidence in here.values() for place in evidence.values())
    monkeypatch.setattr(located, "processes", lambda documents: 2)
    pooled = list(located.locate_all(iter(jobs), len(jobs)))
    assert [doc_id for doc_id, _ in pooled] == [row.doc_id for row in rows]
    assert dict(pooled) == here
    assert located.processes(20 * located.PER_PROCESS) >= min(2, os.cpu_count() or 1)


def test_a_folder_that_does_not_name_its_dataset_is_grounded_with_dataset(
    sample_runs: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The refusal says to give --dataset D; --grounding then takes it (it read no --dataset before)."""
    import shutil

    from oeb.dataset import SAMPLE_DATASET

    folder = tmp_path / "anonymous"
    shutil.copytree(sample_runs["cited"], folder)
    for name in ("settings.json", "field_matching/summary.json"):
        saved = json.loads((folder / name).read_text())
        for block in (saved, saved.get("provenance") or {}):
            block.pop("dataset", None)
            block.pop("dataset_commit", None)
        (folder / name).write_text(json.dumps(saved))
    assert main(["report", str(folder), "--grounding"]) == 1
    assert "give it with --dataset D" in capsys.readouterr().err
    assert main(["report", str(folder), "--grounding", "--dataset", str(SAMPLE_DATASET), "--format", "json"]) == 0
    [anonymous] = json.loads(capsys.readouterr().out)["runs"]
    assert main(["report", str(sample_runs["cited"]), "--grounding", "--format", "json"]) == 0
    [named] = json.loads(capsys.readouterr().out)["runs"]
    assert anonymous["box"] == named["box"] and anonymous["categories"] == named["categories"]
