"""The leaderboard's latency: median and 95th percentile of the documents' wall time, from the records."""

from __future__ import annotations

import json

import numpy as np
import pytest
from conftest import GOLD, PREDICTIONS

from oeb.cli import main


@pytest.mark.parametrize("form", ["json", "text", "md"])
def test_latency_is_the_records_wall_times_and_none_for_a_brought_folder(make_run, capsys, form: str) -> None:
    walls = [0.5 + 3.0 * number for number in range(len(GOLD))]
    costs = {doc_id: {"usd": 0.01, "wall_s": wall} for doc_id, wall in zip(GOLD, walls, strict=True)}
    timed = make_run("perfect", costs=costs)
    mine = make_run("mine", PREDICTIONS["sloppy"], brought=True)
    assert main(["report", timed, mine, "--format", form]) == 0
    out = capsys.readouterr().out
    p50, p95 = np.percentile(walls, [50, 95])
    if form == "json":
        rows = {row["system"]: row for row in json.loads(out)["rows"]}
        assert rows["mock"]["latency_p50_s"] == pytest.approx(p50)
        assert rows["mock"]["latency_p95_s"] == pytest.approx(p95)
        assert rows["mine"]["latency_p50_s"] is None and rows["mine"]["latency_p95_s"] is None
    else:
        assert "latency" in out and f"{p50:.2f}" in out and f"{p95:.2f}" in out
        lines = [line.replace("┃", "|").replace("│", "|") for line in out.splitlines()]
        header = next(line.split("|") for line in lines if "latency p50/p95" in line)
        column = [cell.strip() for cell in header].index("latency p50/p95")
        cells = {
            row[1].strip(): row[column].strip() for row in (line.split("|") for line in lines) if len(row) > column
        }
        assert cells["mock"] == f"{p50:.2f}/{p95:.2f} s" and cells["mine"] == "–"
