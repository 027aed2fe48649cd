"""A folder of run folders read as its runs (local, S3, a Hub dataset), the newest run of each setting
taken with one line naming the older ones, and `--all-runs` keeping every run as its own row."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest
from conftest import PREDICTIONS, write_run
from fixtures.datasets import publish

from oeb import storage
from oeb.cli import main
from oeb.report.folders import load_folders, run_urls


def _runs(folder: str, dataset: str) -> dict[str, str]:
    """Three graded runs under `folder`: `perfect`, and two runs of one setting (`sloppy`), the second newer."""
    urls = {
        "perfect": write_run(folder, "perfect", PREDICTIONS["perfect"], dataset),
        "old": write_run(folder, "sloppy-old", PREDICTIONS["sloppy"], dataset),
        "new": write_run(folder, "sloppy-new", PREDICTIONS["sloppy"], dataset),
    }
    for key, started in (("old", "2026-12-01T10:00:00+00:00"), ("new", "2026-12-02T10:00:00+00:00")):
        settings = storage.read_json(storage.join(urls[key], "settings.json"))
        settings |= {"options": {"name": "sloppy"}, "started": started}
        storage.write_json(storage.join(urls[key], "settings.json"), settings)
    return urls


@pytest.fixture
def local_runs(tmp_path, dataset) -> tuple[str, dict[str, str]]:
    folder = str(tmp_path / "runs")
    return folder, _runs(folder, dataset)


def _report(args: list[str], capsys) -> tuple[list[str], str]:
    assert main(["report", *args, "--format", "json"]) == 0
    captured = capsys.readouterr()
    return [row["run"] for row in json.loads(captured.out)["rows"]], captured.err


def test_a_folder_of_runs_is_read_as_its_newest_runs(local_runs, capsys) -> None:
    folder, urls = local_runs
    rows, err = _report([folder], capsys)
    assert rows == ["perfect", "sloppy-new"]
    assert err.count("\n") == 1 and "sloppy-old (older than sloppy-new)" in err and "--all-runs" in err
    assert _report([f"{url}/" for url in urls.values()], capsys) == (rows, err)  # runs/*/ as a shell gives it
    rows, err = _report([folder, "--all-runs"], capsys)
    assert sorted(rows) == ["perfect", "sloppy-new", "sloppy-old"] and err == ""
    assert main(["report", folder, "--all-runs", "--format", "md"]) == 0
    out = capsys.readouterr().out
    assert 'mock (name="sloppy") · sloppy-old |' in out and 'mock (name="sloppy") · sloppy-new |' in out


def test_compare_audit_and_view_take_folders_too(local_runs, tmp_path, capsys) -> None:
    from oeb.view.api import open_view

    folder, urls = local_runs
    assert main(["compare", urls["perfect"], folder, "--format", "json"]) == 1  # two settings: which?
    assert "RUN_B" in capsys.readouterr().err
    sloppy = str(tmp_path / "sloppy-only")
    for key in ("old", "new"):
        for path in storage.list_files(urls[key]):
            name = urls[key].rsplit("/", 1)[1]
            storage.write_bytes(storage.join(sloppy, name, path), storage.read_bytes(storage.join(urls[key], path)))
    assert main(["compare", urls["perfect"], sloppy, "--format", "json"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["b"]["run"] == "sloppy-new" and "sloppy-old" in captured.err
    assert main(["audit", folder, "--format", "json", "--min-agree", "2"]) == 0
    assert len(json.loads(capsys.readouterr().out)["runs"]) == 2
    assert main(["audit", folder, "--all-runs", "--format", "json", "--min-agree", "3"]) == 0
    assert len(json.loads(capsys.readouterr().out)["runs"]) == 3
    assert [run.name for run in open_view([folder]).runs] == ["perfect", "sloppy-new"]
    assert len(open_view([folder], all_runs=True).runs) == 3


def test_a_folder_of_runs_on_s3(dataset, s3_env, capsys) -> None:
    folder = f"s3://oeb-tests/folders/{uuid.uuid4().hex[:8]}"
    urls = _runs(folder, dataset)
    assert run_urls(folder) == sorted(urls.values())
    rows, err = _report([folder], capsys)
    assert rows == ["perfect", "sloppy-new"] and "sloppy-old" in err


def test_a_folder_of_runs_on_the_hub(dataset, fake_hub, tmp_path) -> None:
    local = str(tmp_path / "published")
    _runs(str(Path(local, "runs")), dataset)
    url = publish(fake_hub, Path(local), f"acme/runs-{uuid.uuid4().hex[:8]}")
    assert [run.name for run in load_folders([url])] == ["perfect", "sloppy-new"]


def test_a_folder_holding_no_run_still_says_so(tmp_path, capsys) -> None:
    (tmp_path / "empty" / "notes").mkdir(parents=True)
    assert main(["report", str(tmp_path / "empty")]) == 1
    assert "holds no graded run" in capsys.readouterr().err
