"""An adjudication entry's evidence box as the evidence of its gold value: the rules per kind of entry,
and `oeb report --grounding` judging a citation against a person's box the locator could not find."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from oeb.cli import main
from oeb.gold.entries import MISSING, Entry
from oeb.grounding.adjudicated import with_entries
from oeb.grounding.verdicts import Evidence

LOCATED = Evidence(((1, (10.0, 10.0, 50.0, 20.0)), (2, (10.0, 10.0, 50.0, 20.0))))
BOX = [100.0, 200.0, 160.0, 212.0]


def entry(address: str, action: str, status: str = "accepted", value: Any = MISSING, **evidence: Any) -> Entry:
    values = ("x",) if action == "accept" else ()
    return Entry(f"e-{address}", "d", address, action, status, values, value, "r", "me", None, evidence or None)


def test_each_kind_of_entry_gives_its_evidence() -> None:
    located = {"d": {a: LOCATED for a in ("kept", "boxed", "new", "gone", "proposed", "half", "confirmed")}}
    entries = [
        entry("kept", "accept"),  # another reading, no box: the located places stand
        entry("boxed", "accept", page=1, bbox=BOX),  # a person's box: in place of the located ones
        entry("new", "replace", value="y"),  # a new value the locator did not look for
        entry("gone", "remove"),
        entry("proposed", "replace", status="proposed", value="y", page=1, bbox=BOX),  # not decided
        entry("half", "verify", page=2),  # a page without a box: the located places stand
        entry("confirmed", "verify", value="z", page=2, bbox=BOX),  # verify with a value replaces
        entry("added", "add", value="w", page=3, bbox=BOX),  # gold the annotators missed
        entry("inverted", "add", value="w", page=1, bbox=[5, 5, 1, 1]),
    ]
    out = with_entries(located, entries)["d"]
    assert out["kept"] == out["half"] == out["proposed"] == LOCATED
    assert out["boxed"] == Evidence(((1, tuple(BOX)),))
    assert out["confirmed"] == Evidence(((2, tuple(BOX)),)) and out["added"] == Evidence(((3, tuple(BOX)),))
    assert out["new"] == out["inverted"] == Evidence() and "gone" not in out
    assert located["d"]["boxed"] == LOCATED  # the located evidence (a cache's) is left as it was


def _unlocated(run: Path) -> tuple[str, str, str]:
    """A document and address of the run whose gold value the locator cannot find, and its verdict."""
    from oeb.dataset import SAMPLE_DATASET, open_dataset
    from oeb.report.grounding import evidence_of

    verdicts = pq.read_table(run / "field_matching" / "verdicts.parquet", columns=["id", "address", "result"])
    rows = [r for r in verdicts.to_pylist() if r["result"] in ("matched", "misread") and "[" not in r["address"]]
    evidence = evidence_of(open_dataset(SAMPLE_DATASET), sorted({r["id"] for r in rows}))
    found = next(r for r in rows if not evidence[r["id"]].get(r["address"], LOCATED).places)
    return found["id"], found["address"], found["result"]


def test_a_citation_on_the_entrys_box_counts_right_with_the_file_only(
    sample_runs: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = tmp_path / "run"
    shutil.copytree(sample_runs["cited"], run)
    doc_id, address, result = _unlocated(run)
    cites = run / "field_matching" / "grounding.parquet"
    table = pq.read_table(cites)
    rows = [r for r in table.to_pylist() if (r["doc_id"], r["address"]) != (doc_id, address)]
    system = rows[0]["system"]
    cited = dict(zip(("x0", "y0", "x1", "y1"), BOX, strict=True))
    rows.append({"doc_id": doc_id, "address": address, "page": 1, **cited, "text": None, "confidence": None,
                 "system": system})  # fmt: skip
    pq.write_table(table.from_pylist(rows, table.schema), cites)
    file = tmp_path / "adjudications.yaml"
    decided = {"id": "e1", "doc_id": doc_id, "address": address, "action": "verify", "status": "accepted"}
    decided |= {"reason": "printed as an image", "by": "tester", "evidence": {"page": 1, "bbox": BOX}}
    file.write_text(json.dumps([decided]))

    def report(adjudications: str) -> dict[str, Any]:
        assert main(["report", str(run), "--grounding", "--format", "json", "--adjudications", adjudications]) == 0
        return dict(json.loads(capsys.readouterr().out)["runs"][0])

    without, under = report("none"), report(str(file))
    assert under["unverifiable"] == without["unverifiable"] - 1
    assert under["cited_values"] == without["cited_values"] + 1
    right = f"{result}_cited_right"
    assert under["categories"][right] == without["categories"][right] + 1
    f1 = {}
    for adjudications in ("none", str(file)):
        assert main(["report", str(run), "--format", "json", "--adjudications", adjudications]) == 0
        f1[adjudications] = json.loads(capsys.readouterr().out)["rows"][0]["grounding_f1"]
    assert f1[str(file)] > f1["none"]  # the leaderboard's column judges on the same evidence
    for adjudications, category in (("none", "unverifiable"), (str(file), right)):  # and oeb view's document page
        site = tmp_path / f"site-{category}"
        assert main(["view", str(run), "--adjudications", adjudications, "--export", str(site)]) == 0
        [answer] = (site / "api" / "runs").glob(f"*/documents/{doc_id}.json")
        shown = next(v for v in json.loads(answer.read_text())["verdicts"] if v["address"] == address)
        assert shown.get("grounding") == category, adjudications
    moved = {**decided, "evidence": {"page": 1, "bbox": [300.0, 500.0, 360.0, 512.0]}}  # the person's box elsewhere
    file.write_text(json.dumps([moved]))
    elsewhere = report(str(file))
    wrong = f"{result}_cited_elsewhere"
    assert elsewhere["categories"][wrong] == without["categories"][wrong] + 1


def test_a_misread_the_file_accepts_counts_right_in_both_reports(
    sample_runs: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A team accepts a reading of a value (`accept` with its `values`): under the file, `--by field`
    counts it matched, and so do `--calibration` and `--grounding` (they read verdicts.parquet as
    graded, without the file, and disagreed with `--by field`)."""
    run = str(sample_runs["cited"])
    verdicts = pq.read_table(Path(run) / "field_matching" / "verdicts.parquet").to_pylist()
    cites = pq.read_table(Path(run) / "field_matching" / "grounding.parquet").to_pylist()
    sure = {(r["doc_id"], r["address"]) for r in cites if r["confidence"] is not None and r["page"] is not None}
    from oeb.dataset import SAMPLE_DATASET, open_dataset
    from oeb.errors import AdjudicationError
    from oeb.gold.check import checked
    from oeb.gold.entries import load

    file = tmp_path / "adjudications.yaml"
    for misread in (r for r in verdicts if r["result"] == "misread" and (r["id"], r["address"]) in sure):
        decided = {"id": "e1", "doc_id": misread["id"], "address": misread["address"], "action": "accept"}
        decided |= {"values": [json.loads(misread["pred_raw"])], "status": "accepted", "reason": "both", "by": "me"}
        file.write_text(json.dumps([decided]))
        try:  # a reading the schema allows (a misread date may be no date)
            checked(load(str(file)), open_dataset(SAMPLE_DATASET))
        except AdjudicationError:
            continue
        break

    def report(adjudications: str, *flags: str) -> dict[str, Any]:
        assert main(["report", run, *flags, "--format", "json", "--adjudications", adjudications]) == 0
        return dict(json.loads(capsys.readouterr().out)["runs"][0])

    from oeb.report.fields import fold

    field = fold(misread["address"])
    counts = {}
    for adjudications in ("none", str(file)):
        rows = report(adjudications, "--by", "field")["fields"]
        counts[adjudications] = next(row for row in rows if row["path"] == field)["counts"]
    assert counts[str(file)]["matched"] == counts["none"]["matched"] + 1
    grounded = {a: report(a, "--grounding")["categories"] for a in ("none", str(file))}
    for kind, moved in (("matched", 1), ("misread", -1)):
        before, after = (sum(v for k, v in grounded[a].items() if k.startswith(kind)) for a in ("none", str(file)))
        assert after == before + moved, kind

    from oeb.report.adjudicated import under_gold
    from oeb.report.confidence import values
    from oeb.report.runs import load_run

    right = {}
    for adjudications in ("none", str(file)):
        found = values(under_gold([load_run(run)], adjudications).runs[0])
        assert found is not None
        right[adjudications] = int(found.right.sum())
    assert right[str(file)] == right["none"] + 1  # the calibration counts the accepted reading right
