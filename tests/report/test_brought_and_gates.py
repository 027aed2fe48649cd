"""Graded folders of one's own predictions in report and compare, the scorer each run was graded by,
and the two CI gates (`oeb report --fail-under`, `oeb compare --fail-if-worse`) with their exit codes."""

from __future__ import annotations

import json
import uuid

import pytest
from conftest import PREDICTIONS

from oeb import storage
from oeb.cli import main
from oeb.errors import ReportMismatch
from oeb.report import leaderboard, load_runs


def test_a_graded_brought_folder_is_reported_by_its_folder_name_with_its_dataset(make_run, dataset, capsys) -> None:
    mine = make_run("mine", PREDICTIONS["sloppy"], brought=True)
    assert not storage.exists(storage.join(mine, "settings.json"))
    perfect = make_run("perfect")
    assert main(["report", mine, perfect, "--format", "json"]) == 0
    board = json.loads(capsys.readouterr().out)
    assert [row["system"] for row in board["rows"]] == ["mock", "mine"]
    assert board["dataset"] == storage.read_json(storage.join(perfect, "settings.json"))["dataset"]
    assert main(["report", mine, "--format", "json"]) == 0  # alone: the dataset from its provenance
    alone = json.loads(capsys.readouterr().out)
    assert alone["dataset"] == board["dataset"] and alone["rows"][0]["system"] == "mine"
    assert main(["compare", perfect, mine, "--format", "json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["b"]["system"] == "mine" and result["paired"]["mean_diff"] < 0


def test_brought_folders_graded_before_provenance_are_reported_too(make_run, capsys) -> None:
    """What summary.json held before grading recorded provenance: no dataset, checked by documents."""
    ours = make_run("ours", PREDICTIONS["perfect"], brought=True, scorer=None)
    theirs = make_run("theirs", PREDICTIONS["sloppy"], brought=True, scorer=None)
    assert main(["report", ours, theirs, "--format", "md"]) == 0
    markdown = capsys.readouterr().out
    assert "| ours | 100.00 |" in markdown and "| theirs |" in markdown


def test_a_brought_folder_of_another_dataset_is_refused_in_one_line(make_run, make_dataset, capsys) -> None:
    perfect = make_run("perfect")
    mine = make_run("mine", PREDICTIONS["sloppy"], brought=True, dataset=make_dataset("elsewhere"))
    assert main(["compare", perfect, mine]) == 1
    error = capsys.readouterr().err
    assert error.startswith("oeb compare: runs perfect and mine differ in dataset") and error.count("\n") == 1


def test_an_ungraded_folder_is_refused_with_the_grade_command(make_run, tmp_path, capsys) -> None:
    mine = tmp_path / "mine"
    for doc_id, answer in PREDICTIONS["perfect"].items():
        storage.write_json(str(mine / "predictions" / f"{doc_id}.json"), answer)
    assert main(["report", str(mine)]) == 1
    error = capsys.readouterr().err
    assert f"{mine} is not graded" in error and f"oeb grade {mine} --dataset DATASET" in error
    run = make_run("perfect")
    storage.remove(storage.join(run, "field_matching"))
    assert main(["audit", run]) == 1
    assert f"grade it first: oeb grade {run}\n" in capsys.readouterr().err


def test_runs_graded_by_different_scorers_are_ranked_together_only_when_asked(make_run, capsys) -> None:
    old = make_run("perfect", scorer="0ld5c0re")
    new = make_run("sloppy")
    with pytest.raises(ReportMismatch, match="graded by different scorers \\(0ld5c0re vs f1e1d0c0ffee\\)"):
        leaderboard(load_runs([old, new]))
    assert main(["report", old, new]) == 1
    error = capsys.readouterr().err
    assert "--mixed-scorers" in error and error.count("\n") == 1
    assert main(["report", old, new, "--mixed-scorers", "--format", "md"]) == 0
    markdown = capsys.readouterr().out
    assert "| accuracy 95% CI | scorer |" in markdown and "| 0ld5c0re |" in markdown
    assert main(["report", old, new, "--mixed-scorers", "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)["rows"]
    assert [row["scorer"] for row in rows] == ["0ld5c0re", "f1e1d0c0ffee"]
    assert main(["compare", old, new]) == 0  # compared, with a note
    assert "were graded by different scorers (0ld5c0re vs f1e1d0c0ffee)" in capsys.readouterr().err
    same = make_run("other", PREDICTIONS["sloppy"])
    assert main(["report", new, same, "--format", "md"]) == 0  # one scorer: no column
    assert "| scorer |" not in capsys.readouterr().out


def test_the_html_report_embeds_each_runs_provenance(make_run, tmp_path) -> None:
    out = tmp_path / "report.html"
    assert main(["report", make_run("perfect"), make_run("sloppy"), "--format", "html", "--out", str(out)]) == 0
    page = out.read_text()
    data = json.loads(page.split('<script id="data" type="application/json">')[1].split("</script>")[0])
    assert all(row["provenance"]["scorer"] == "f1e1d0c0ffee" for row in data["board"]["rows"])
    assert all(row["provenance"]["git"]["commit"] == "0123456789abcdef" for row in data["board"]["rows"])
    assert 'id="provenance"' in page and "manifest_sha256" in page


def test_fail_under_exits_3_below_the_bar_after_printing_the_report(make_run, capsys) -> None:
    perfect, sloppy = make_run("perfect"), make_run("sloppy")
    assert main(["report", perfect, sloppy, "--fail-under", "0.5"]) == 3
    captured = capsys.readouterr()
    assert "leaderboard" in captured.out
    assert captured.err.startswith('oeb report: headline below 50.00%: mock (name="sloppy")')
    assert main(["report", perfect, "--fail-under", "0.99", "--format", "json"]) == 0
    assert main(["report", perfect, "--fail-under", "1"]) == 0  # the headline 1.0 is not below 1
    capsys.readouterr()
    with pytest.raises(SystemExit) as exit_:
        main(["report", perfect, "--fail-under", "85"])
    assert exit_.value.code == 2 and "between 0 and 1" in capsys.readouterr().err


def test_fail_if_worse_needs_the_sign_flip_test_too(make_run, capsys) -> None:
    """Three documents: the bootstrap interval lies below 0 but the sign-flip test cannot reach
    significance (p >= 0.25), so it is no difference and the gate passes (tests/report/test_paired.py
    fails it on 40 documents)."""
    perfect, sloppy = make_run("perfect"), make_run("sloppy")
    assert main(["compare", perfect, sloppy, "--format", "json"]) == 0
    paired = json.loads(capsys.readouterr().out)["paired"]
    assert paired["ci95"][1] < 0 and paired["p_value"] >= 0.25 and paired["verdict"] == "no difference"
    assert main(["compare", perfect, sloppy, "--fail-if-worse"]) == 0
    assert main(["compare", sloppy, perfect, "--fail-if-worse"]) == 0  # better is never a failure
    assert main(["compare", perfect, make_run("again", PREDICTIONS["perfect"]), "--fail-if-worse"]) == 0


def test_compare_prints_the_paired_analysis_in_every_format(make_run, tmp_path, capsys) -> None:
    perfect, sloppy = make_run("perfect"), make_run("sloppy")
    assert main(["compare", perfect, sloppy]) == 0
    text = capsys.readouterr().out
    assert "paired: B - A" in text and "p-value" in text and "research__[x24] tables" in text
    assert main(["compare", perfect, sloppy, "--format", "md"]) == 0
    markdown = capsys.readouterr().out
    assert "| scope | documents | Δ accuracy (B - A) | 95% CI | p-value | verdict |" in markdown
    assert "| all | 3 |" in markdown and "| invoices | 2 |" in markdown
    out = tmp_path / "compare.html"
    assert main(["compare", perfect, sloppy, "--format", "html", "--out", str(out)]) == 0
    page = out.read_text()
    assert "<td>all</td><td>3</td>" in page and "research__[x24] tables" in page and "<script" not in page


def test_folders_graded_by_oeb_grade_are_reported_compared_and_audited(dataset, tmp_path, capsys) -> None:
    """The whole path with what `oeb grade mine/ --dataset D` writes today, not a fixture's copy of it."""
    folders = []
    for name in ("ours", "theirs", "others"):
        folder = tmp_path / name
        for doc_id, answer in PREDICTIONS["sloppy" if name == "theirs" else "perfect"].items():
            if answer is not None:
                answer = answer | {"vendor": "Acme Corp"} if doc_id == "inv_1" else answer  # all three agree
                storage.write_json(str(folder / "predictions" / f"{doc_id}.json"), answer)
        assert main(["grade", str(folder), "--dataset", dataset, "--partial"]) == 0
        folders.append(str(folder))
    capsys.readouterr()
    assert main(["report", *folders, "--format", "json"]) == 0
    board = json.loads(capsys.readouterr().out)
    assert [row["system"] for row in board["rows"]][2] == "theirs" and board["dataset"] is not None
    assert all(row["scorer"] and row["provenance"]["scorer"] == row["scorer"] for row in board["rows"])
    assert main(["compare", folders[0], folders[1], "--fail-if-worse"]) == 0  # 3 documents: not significant
    capsys.readouterr()
    assert main(["audit", *folders, "--format", "json"]) == 0
    findings = json.loads(capsys.readouterr().out)["findings"]
    assert [(f["doc_id"], f["address"], f["kind"], f["gold"], f["consensus"], f["agree"]) for f in findings] == [
        ("inv_1", "vendor", "gold_disagrees", "Acme", "Acme Corp", 3)
    ]


def test_a_brought_folder_on_s3_is_reported_with_its_provenance(make_run, s3_env, capsys) -> None:
    local = make_run("mine", PREDICTIONS["sloppy"], brought=True)
    folder = f"s3://oeb-tests/brought/{uuid.uuid4().hex[:8]}/mine"
    for path in storage.list_files(local):
        storage.write_bytes(storage.join(folder, path), storage.read_bytes(storage.join(local, path)))
    assert main(["report", folder, make_run("perfect"), "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)["rows"]
    assert rows[1]["system"] == "mine" and rows[1]["provenance"]["scorer"] == rows[0]["scorer"]
