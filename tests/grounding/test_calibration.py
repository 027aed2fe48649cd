"""Coverage at precision, the calibration error and the AUROC against direct computations on
hand-made values, and `oeb report --calibration` on the mock's sample runs."""

from __future__ import annotations

import itertools
import json
import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from grounding.conftest import CITED, DAMAGE, mock_run
from oeb.cli import main
from oeb.grounding import calibration as cal
from oeb.report.confidence import values
from oeb.report.runs import load_run
from oeb.run.cluster import session as cluster

NAN = math.nan


def direct_coverage(conf: list[float], right: list[bool], asked: float) -> tuple[float, float | None]:
    """Every threshold tried, the widest that is precise enough kept."""
    best: tuple[float, float | None] = (0.0, None)
    for t in sorted({c for c in conf if not math.isnan(c)}, reverse=True):
        kept = [r for c, r in zip(conf, right, strict=True) if not math.isnan(c) and c >= t]
        if sum(kept) / len(kept) >= asked - 1e-12 and len(kept) / len(conf) >= best[0]:
            best = (len(kept) / len(conf), t)
    return best


def figures(conf: list[float], right: list[bool], asked: tuple[float, ...]) -> tuple[list[float], list[float]]:
    c, r = np.asarray(conf, dtype=np.float64), np.asarray(right, dtype=bool)
    coverage, threshold = cal.coverage_at(cal.rank(c), r, asked, np.ones((1, len(c))))
    return list(coverage[0]), list(threshold[0])


def test_coverage_on_hand_made_values() -> None:
    conf = [0.99, 0.98, 0.98, 0.9, 0.8, 0.7, NAN, 0.6]
    right = [True, True, False, True, True, False, True, True]
    coverage, threshold = figures(conf, right, (0.6, 0.8, 1.0))
    # at 0.6: 0.6 accepts 6/7 right of 7 -> 7/8 of all; at 0.8: down to 0.8, 4/5 right -> 5/8
    assert coverage == [7 / 8, 5 / 8, 1 / 8]
    assert threshold == [0.6, 0.8, 0.99]
    nothing = figures([0.5, 0.4], [False, False], (0.9,))
    assert nothing[0] == [0.0] and math.isnan(nothing[1][0])


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from([0.1, 0.3, 0.5, 0.7, 0.9, 0.95, 1.0, NAN]), st.booleans()), min_size=1, max_size=40
    ),
    st.lists(st.floats(0.5, 1.0), min_size=2, max_size=4),
)
def test_coverage_is_the_direct_one_and_monotone_in_the_precision_asked(values, asked) -> None:
    conf, right = [c for c, _ in values], [r for _, r in values]
    asked = tuple(sorted(asked))
    coverage, _ = figures(conf, right, asked)
    for a, got in zip(asked, coverage, strict=True):
        assert got == pytest.approx(direct_coverage(conf, right, a)[0])
    assert all(x >= y - 1e-12 for x, y in itertools.pairwise(coverage))


def test_ece_and_auroc_on_hand_made_values() -> None:
    conf = np.array([0.05, 0.15, 0.15, 0.95, 0.95, 0.95, 0.95, 1.0, NAN])
    right = np.array([False, False, True, True, True, True, False, True, True])
    # bins: [0,.1): conf .05 acc 0 (1 value); [.1,.2): .15 vs .5 (2); [.9,1]: mean .96 vs .8 (5)
    expected = (1 * 0.05 + 2 * 0.35 + 5 * abs(0.96 - 0.8)) / 8
    assert cal.expected_calibration_error(conf, right) == pytest.approx(expected)
    given_ = ~np.isnan(conf)
    pos, neg = conf[given_][right[given_]], conf[given_][~right[given_]]
    pairs = [(p > n) + 0.5 * (p == n) for p in pos for n in neg]
    assert cal.auroc(conf, right) == pytest.approx(sum(pairs) / len(pairs))
    assert cal.auroc(np.array([0.5, 0.6]), np.array([True, True])) is None
    assert cal.expected_calibration_error(np.array([NAN]), np.array([True])) is None


def test_straight_through_counts_documents_whose_every_value_clears() -> None:
    document = np.array([0, 0, 1, 2, 2])
    conf = np.array([0.99, 0.97, 0.99, NAN, 0.999])
    assert cal.straight_through(document, conf, 4, 0.98) == 0.5  # documents 1 and 3 (no values)
    assert cal.straight_through(document, conf, 4, NAN) == 0.25
    assert cal.straight_through(document, conf, 4, 0.98, failed=2) == 2 / 6  # a failed document is held back
    assert cal.straight_through(document[:0], conf[:0], 0, 0.98, failed=3) == 0.0


def test_report_calibration_in_every_format(sample_runs: dict[str, Path], tmp_path: Path, capsys) -> None:
    runs = [str(sample_runs["cited"]), str(sample_runs["plain"])]
    assert main(["report", *runs, "--calibration", "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    cited, plain = report["runs"]
    assert plain["confidence"] is False
    assert set(cited["coverage"]) == {"95", "99", "99.5"}
    low, high = cited["coverage"]["99"]["ci95"]
    assert low <= cited["coverage"]["99"]["coverage"] <= high
    assert (
        cited["coverage"]["95"]["coverage"]
        >= cited["coverage"]["99"]["coverage"]
        >= cited["coverage"]["99.5"]["coverage"]
    )
    assert cited["ece"] < 0.1 and cited["auroc"] > 0.8  # calibrated by construction, and it tells
    assert cited["fields"] and all(f["values"] for f in cited["fields"])
    for form in ("text", "md", "html"):
        out = tmp_path / f"cal.{form}"
        assert main(["report", *runs, "--calibration", "--format", form, "--out", str(out)]) == 0
        text = out.read_text()
        assert "auto@99%" in text and "n/a" in text
    assert main(["report", *runs, "--calibration", "--fail-under", "0.5"]) == 2
    assert "--calibration goes without" in capsys.readouterr().err
    mix = tmp_path / "mix.yaml"
    mix.write_text("pages: {'1': 1.0}\n")
    for report, flag, value in (("--calibration", "--mix", str(mix)), ("--grounding", "--mix-from", "oeb/data/sample")):
        assert main(["report", *runs, report, flag, value]) == 2  # the figures are no mix's: not silently so
        assert f"{report} goes without --by, --mix, --mix-from" in capsys.readouterr().err


def test_the_leaderboard_gains_its_grounding_columns_only_where_a_run_has_them(
    sample_runs: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["report", str(sample_runs["plain"]), "--format", "json"]) == 0
    [plain] = json.loads(capsys.readouterr().out)["rows"]
    assert "auto_99" not in plain
    assert main(["report", str(sample_runs["plain"]), "--format", "md"]) == 0
    assert "auto@99%" not in capsys.readouterr().out
    assert main(["report", str(sample_runs["cited"]), str(sample_runs["plain"]), "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)["rows"]
    assert [("auto_99" in row) for row in rows].count(True) == 1
    assert [("grounding_f1" in row) for row in rows].count(True) == 1
    assert "grounding_f1" not in plain
    assert main(["report", str(sample_runs["cited"]), "--calibration", "--format", "json"]) == 0
    figures = json.loads(capsys.readouterr().out)["runs"][0]["coverage"]["99"]
    assert next(row["auto_99"] for row in rows if "auto_99" in row) == figures["coverage"]
    assert main(["report", str(sample_runs["cited"]), str(sample_runs["plain"]), "--format", "md"]) == 0
    table = capsys.readouterr().out
    assert "auto@99%" in table and "grounding F1" in table
    plain_row = next(line for line in table.splitlines() if "cite=false" in line)
    assert plain_row.rstrip().endswith("| n/a | n/a |")  # a run without citations: n/a, never 0 nor a blank
    from oeb.report import leaderboard
    from oeb.report.folders import load_folders
    from oeb.report.tables import markdown

    board = leaderboard(load_folders([str(sample_runs["cited"])]))
    board["rows"][0]["grounding_f1"] = None  # cited, but no value verifiable (a scanned set)
    assert markdown(board).split("\n")[4].endswith(" | n/a | " + f"{100 * board['rows'][0]['auto_99']:.2f} |")


def test_a_failed_document_holds_the_straight_through_rate_back(tmp_path: Path, capsys) -> None:
    """A team reads straight-through as the share of its documents no person touches: a document the
    system failed on goes to a person, so it counts against the rate, and the JSON says how many."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(cluster, "_ray_open", lambda: False)
        run = mock_run(tmp_path / "runs", {**CITED, **{key: 0.0 for key in DAMAGE}, "system.mock.malformed": 0.4})
    lines = [json.loads(line) for line in (run / "field_matching" / "scores.jsonl").read_text().splitlines()]
    failed = sum(line["status"] == "failed" for line in lines)
    assert 0 < failed < len(lines)
    assert main(["report", str(run), "--calibration", "--format", "json"]) == 0
    figures = json.loads(capsys.readouterr().out)["runs"][0]
    assert (figures["documents"], figures["failed"]) == (len(lines) - failed, failed)
    found = values(load_run(str(run)))
    assert found is not None
    threshold = figures["coverage"]["99"]["threshold"]
    through = cal.straight_through(found.document, found.confidence, len(found.documents), threshold)
    assert through > 0 and figures["straight_through"] == pytest.approx(through * (len(lines) - failed) / len(lines))
