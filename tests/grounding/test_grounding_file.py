"""grounding.parquet at grading time: the mock's cited boxes lie on the printed value, the verdicts
are the same with citations as without, and a hostile answer's boxes are dropped and counted."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pypdfium2
import pytest

from oeb.cli import main
from oeb.dataset import SAMPLE_DATASET

RESULTS = "field_matching"


def test_the_verdicts_are_the_same_with_citations_and_confidences(sample_runs: dict[str, Path]) -> None:
    plain, cited = (pq.read_table(sample_runs[k] / RESULTS / "verdicts.parquet") for k in ("plain", "cited"))
    assert plain.equals(cited)
    assert not (sample_runs["plain"] / RESULTS / "grounding.parquet").exists()


def test_the_cited_boxes_hold_the_values_text(sample_runs: dict[str, Path]) -> None:
    folder = sample_runs["cited"]
    rows = pq.read_table(folder / RESULTS / "grounding.parquet").to_pylist()
    summary = json.loads((folder / RESULTS / "summary.json").read_text())
    assert summary["grounding"] == {"rows": len(rows), "invalid_citations": 0, "invalid_confidences": 0}
    assert all(0 <= row["confidence"] <= 1 and row["system"] == "mock" for row in rows)
    verdicts = {(v["id"], v["address"]): v for v in pq.read_table(folder / RESULTS / "verdicts.parquet").to_pylist()}
    hits = misses = 0
    for row in rows:
        verdict = verdicts.get((row["doc_id"], row["address"]))
        if row["page"] is None or verdict is None or verdict["result"] != "matched":
            continue
        value = json.loads(verdict["pred_raw"])
        with pypdfium2.PdfDocument(Path(SAMPLE_DATASET) / "pdfs" / f"{row['doc_id']}.pdf") as pdf:
            page = pdf[row["page"] - 1]
            height = page.get_size()[1]
            text = page.get_textpage().get_text_bounded(
                row["x0"] - 1, height - row["y1"] - 1, row["x1"] + 1, height - row["y0"] + 1
            )
        printed = "".join(text.split()).replace(",", "").casefold()
        if "".join(str(value).split()).casefold().removesuffix(".0") in printed:
            hits += 1
        else:
            misses += 1
    # cite_wrong 0.25 moves a quarter of the boxes away; the rest hold their value
    assert hits > 100 and 0.15 < misses / (hits + misses) < 0.35


def test_a_hostile_answers_boxes_and_confidences_are_dropped_and_counted(
    sample_runs: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import shutil

    from oeb.run.cluster import session as cluster

    monkeypatch.setattr(cluster, "_ray_open", lambda: False)
    folder = tmp_path / "hostile"
    shutil.copytree(sample_runs["cited"], folder)
    record_file = sorted((folder / "records").glob("*.json"))[0]
    record = json.loads(record_file.read_text())
    notes = record["raw"]["citations"]
    first, second, third = list(notes)[:3]
    notes[first] |= {"page": 99}
    notes[second] |= {"bbox": [50, 50, 10, 10], "confidence": 7}
    notes[third] |= {"confidence": "high"}
    record_file.write_text(json.dumps(record))
    before = pq.read_table(folder / RESULTS / "verdicts.parquet")
    capsys.readouterr()
    assert main(["grade", str(folder)]) == 0
    err = capsys.readouterr().err
    summary = json.loads((folder / RESULTS / "summary.json").read_text())
    assert summary["grounding"]["invalid_citations"] == 2
    assert summary["grounding"]["invalid_confidences"] == 2
    warned = [line for line in err.splitlines() if "invalid citations" in line]
    assert len(warned) == 1 and "2 invalid citations and 2 invalid confidences" in warned[0]
    for flag in ("--grounding", "--calibration"):  # and the reports say them
        assert main(["report", str(folder), flag, "--format", "json"]) == 0
        [run] = json.loads(capsys.readouterr().out)["runs"]
        assert (run["invalid_citations"], run["invalid_confidences"]) == (2, 2)
    assert pq.read_table(folder / RESULTS / "verdicts.parquet").equals(before)


def test_the_mocks_confidence_option_is_checked() -> None:
    from oeb.systems.errors import OptionError
    from oeb.systems.mock import Mock

    with pytest.raises(OptionError, match="calibrated or overconfident"):
        Mock.from_options({"confidence": "sure"})
    with pytest.raises(OptionError, match="cite_wrong"):
        Mock.from_options({"cite_wrong": 1.5})


def _copy_with_grounding(source: Path, folder: Path, rows: list[dict[str, object]], schema: object = None) -> str:
    import shutil

    import pyarrow as pa

    shutil.copytree(source, folder)
    table = pa.Table.from_pylist(rows, schema=schema) if schema is not None else pa.Table.from_pylist(rows)
    pq.write_table(table, folder / RESULTS / "grounding.parquet")
    return str(folder)


def test_a_hand_made_grounding_file_is_read_as_grading_would_have_written_it(
    sample_runs: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A run folder is hostile: values grading never writes (a page under 1, a box negative, inverted
    or NaN, a confidence outside [0, 1] or NaN) are left out of every figure, as if nulled by hand,
    with one warning line per run naming the counts; a file missing a column or of another type is
    one line, exit 1."""
    from oeb.grounding.cite import SCHEMA

    written = pq.read_table(sample_runs["cited"] / RESULTS / "grounding.parquet")
    rows = written.to_pylist()
    cited = [n for n, row in enumerate(rows) if row["x0"] is not None][:5]
    hostile = [dict(row) for row in rows]
    nulled = [dict(row) for row in rows]
    for n, change in zip(cited, ({"page": -3}, {"x0": float("nan")}, {"x1": -5.0}, {}, {}), strict=True):
        hostile[n] |= change
        if change:
            nulled[n] |= {"x0": None, "y0": None, "x1": None, "y1": None} | ({"page": None} if "page" in change else {})
    hostile[cited[3]] |= {"confidence": 7.0}
    hostile[cited[4]] |= {"confidence": float("nan")}
    nulled[cited[3]] |= {"confidence": None}
    nulled[cited[4]] |= {"confidence": None}
    bad = _copy_with_grounding(sample_runs["cited"], tmp_path / "bad", hostile, SCHEMA)
    fair = _copy_with_grounding(sample_runs["cited"], tmp_path / "fair", nulled, SCHEMA)
    figures = {}
    for name, folder in (("bad", bad), ("fair", fair)):
        capsys.readouterr()
        answers = []
        for flag in ("--grounding", "--calibration"):
            assert main(["report", folder, flag, "--format", "json"]) == 0
            out, err = capsys.readouterr()
            answers.append(json.loads(out.replace(folder, "RUN")))
            warned = [line for line in err.splitlines() if "oeb never writes" in line]
            assert len(warned) == (name == "bad" and flag == "--grounding"), err  # once a run, per process
            if warned:
                assert "3 citations and 2 confidences" in warned[0]
        figures[name] = answers
    assert figures["bad"] == figures["fair"]
    from oeb.view.api import open_view

    view = open_view([bad])
    [label] = view.labels
    doc_id = hostile[cited[1]]["doc_id"]
    answer = view.document_json(label, doc_id)
    json.dumps(answer, allow_nan=False)  # the NaN box is not drawn: the page's JSON stays JSON
    verdict = next(v for v in answer["verdicts"] if v["address"] == hostile[cited[1]]["address"])
    assert verdict["cited"]["bbox"] is None

    broken = _copy_with_grounding(sample_runs["cited"], tmp_path / "short", [{"doc_id": "x", "page": 1}])
    wrong = [dict(row, page="one") for row in rows[:3]]
    typed = _copy_with_grounding(sample_runs["cited"], tmp_path / "typed", wrong)
    for folder, said in ((broken, "has no column address"), (typed, "columns of the wrong type")):
        for flag in ("--grounding", "--calibration"):
            assert main(["report", folder, flag]) == 1
            err = capsys.readouterr().err.strip().splitlines()
            assert len(err) == 1 and said in err[0] and "oeb grade RUN" in err[0], err
