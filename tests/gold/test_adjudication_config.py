"""`dataset.adjudications` in a run config (docs/adjudication.md, "Where the file lives"): both forms of
`dataset`, `--set` on either, a run graded under the named file, a resume and a regrade of its folder
keeping it (the flag still wins), bad values refused in one line with exit 2 and nothing written."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
import yaml
from fixtures.services import S3_BUCKET
from goldruns import EXAMPLE, damaged_sample

from oeb import storage
from oeb.cli import main
from oeb.dataset import SAMPLE_DATASET
from oeb.errors import AdjudicationError, ConfigError
from oeb.run.plan.config import init_text, load_config

ENTRY = (
    "- {id: fix, doc_id: short__invoice_4417, address: customer, action: accept, values: [Amberline Foods],"
    " status: accepted, by: ann, reason: on the page}\n"
)
"""The damaged gold says `Amberline Fods`; the mock (seed 2, answering from the true gold) reads it right."""


def config(tmp_path: Path, dataset: object, name: str = "config.yaml") -> str:
    """The bundled mock config with `dataset` as given, answering from the sample's true gold."""
    tree = yaml.safe_load(EXAMPLE.read_text())
    tree["dataset"] = dataset
    tree["system"]["mock"] |= {"gold": str(Path(SAMPLE_DATASET) / "gold"), "seed": 2, "latency": 0}
    path = tmp_path / name
    path.write_text(yaml.safe_dump(tree, sort_keys=False))
    return str(path)


def test_both_forms_and_set(tmp_path: Path) -> None:
    short = load_config(config(tmp_path, "data", "short.yaml"))
    assert (short.dataset, short.adjudications, short.plain()["dataset"]) == ("data", None, "data")
    long = load_config(config(tmp_path, {"url": "data", "adjudications": "s3://b/adj.yaml"}, "long.yaml"))
    assert (long.dataset, long.adjudications) == ("data", "s3://b/adj.yaml")
    assert long.plain()["dataset"] == {"url": "data", "adjudications": "s3://b/adj.yaml"}
    assert load_config(config(tmp_path, {"url": "data"}, "url.yaml")).adjudications is None
    for path in ("short.yaml", "long.yaml", "url.yaml"):  # --set works on a config written either way
        changed = load_config(str(tmp_path / path), ["dataset.adjudications=none"])
        assert (changed.dataset, changed.adjudications) == ("data", "none")
        moved = load_config(str(tmp_path / path), ["dataset.url=other"])
        assert moved.dataset == "other" and moved.adjudications == (None if path != "long.yaml" else "s3://b/adj.yaml")
    replaced = load_config(str(tmp_path / "long.yaml"), ["dataset=other"])  # the whole key, as --set always does
    assert (replaced.dataset, replaced.adjudications) == ("other", None)
    both = load_config(str(tmp_path / "short.yaml"), ["dataset=other", "dataset.adjudications=a.yaml"])
    assert (both.dataset, both.adjudications) == ("other", "a.yaml")
    text = init_text("mock", "data")
    assert "adjudications" in text.split("\ndataset:")[0]  # oeb init explains the key above `dataset:`
    (tmp_path / "init.yaml").write_text(text)
    assert load_config(str(tmp_path / "init.yaml"), ["dataset.adjudications=x.yaml"]).adjudications == "x.yaml"


BAD = [
    ({"url": "d", "adjudication": "a.yaml"}, "dataset.adjudication is not a key a config has; did you mean dataset."),
    ({"url": "d", "adjudications": 5}, "dataset.adjudications must be a string or null, not 5"),
    ({"url": "d", "adjudications": ""}, "dataset.adjudications must have at least one character"),
    ({"adjudications": "a.yaml"}, "dataset.url is missing"),
    (["d"], "dataset must be a string, not ['d']"),
]
"""A bad `dataset` and what its one line says: a problem of the mapping exits 2 (`AdjudicationError`)."""


@pytest.mark.parametrize(("dataset", "says"), BAD)
def test_bad_values(tmp_path: Path, dataset: object, says: str) -> None:
    kind = ConfigError if "dataset.url" in says or "['d']" in says else AdjudicationError
    with pytest.raises(kind) as raised:
        load_config(config(tmp_path, dataset))
    assert says in str(raised.value) and "\n" not in str(raised.value)


@pytest.fixture(scope="module")
def damaged(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return damaged_sample(tmp_path_factory.mktemp("adjconfig"))


def refused(arguments: list[str], says: str, capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    assert main(arguments) == 2
    err = capsys.readouterr().err
    assert says in err and len(err.strip().splitlines()) == 1, err


def test_a_bad_value_writes_nothing(damaged: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    wrong = tmp_path / "adj.yaml"
    wrong.write_text(ENTRY.replace("address: customer", "address: colour"))
    path = config(tmp_path, {"url": str(damaged), "adjudications": str(wrong)})
    refused(["run", "--config", path, "-y", "--out", str(out)], "dataset.adjudications: ", capsys)
    refused(["run", "--config", path, "-y", "--out", str(out)], "no gold value at colour", capsys)
    typo = ["run", "--config", path, "-y", "--out", str(out), "--set", "dataset={url: x, adjudication: y}"]
    refused(typo, "did you mean dataset.adjudications?", capsys)
    refused([*typo[:-1], "dataset.adjudications=[a]"], "dataset.adjudications must be a string", capsys)
    assert not out.exists()


def adjudicated(folder: Path) -> list[tuple[str, str, str]]:
    """The verdicts an adjudication changed: (document, address, entry id)."""
    table = pq.read_table(folder / "field_matching" / "verdicts.parquet").to_pylist()
    return [(row["id"], row["address"], row["adjudication"]) for row in table if row["adjudication"] is not None]


def used(folder: Path) -> str | None:
    summary = json.loads((folder / "field_matching" / "summary.json").read_text())
    return (summary["provenance"].get("adjudications") or {}).get("url")


def test_a_run_grades_under_the_configured_file(
    damaged: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The plan names the file, the verdict carries the entry's id, config.yaml keeps the file (as an
    absolute path) for a resume or regrade of the folder, settings.json's dataset stays a string."""
    (tmp_path / "adj.yaml").write_text(ENTRY)
    monkeypatch.chdir(tmp_path)  # a relative path, as a user writes it beside the config
    path = config(tmp_path, str(damaged))
    capsys.readouterr()
    assert main(["run", "--config", path, "--out", "out", "--set", "dataset.adjudications=adj.yaml"]) == 0
    plan = capsys.readouterr().err.splitlines()[0]
    assert f"under 1 accepted adjudication of {tmp_path / 'adj.yaml'}" in plan
    [folder] = (tmp_path / "out").iterdir()
    fixed = [("short__invoice_4417", "customer", "fix")]
    assert adjudicated(folder) == fixed and used(folder) == str(tmp_path / "adj.yaml")
    stored = yaml.safe_load((folder / "config.yaml").read_text())["dataset"]
    assert stored == {"url": str(damaged), "adjudications": str(tmp_path / "adj.yaml")}
    assert json.loads((folder / "settings.json").read_text())["dataset"] == str(damaged)
    monkeypatch.chdir(SAMPLE_DATASET)  # elsewhere: the folder's own paths still name the file
    assert main(["grade", str(folder), "--adjudications", "none"]) == 0  # the flag wins
    assert adjudicated(folder) == [] and used(folder) is None
    assert main(["grade", str(folder)]) == 0  # without it: the folder's configured file
    assert adjudicated(folder) == fixed
    for again in (["grade", str(tmp_path / "out")], ["resume", str(folder), "-y"]):  # a prefix of runs; a resume
        assert main(["grade", str(folder), "--adjudications", "none"]) == 0 and adjudicated(folder) == []
        assert main(again) == 0
        assert adjudicated(folder) == fixed, again
    assert main(["resume", str(folder), "-y", "--set", "dataset.adjudications=none"]) == 0
    assert adjudicated(folder) == [] and used(folder) is None
    assert yaml.safe_load((folder / "config.yaml").read_text())["dataset"]["adjudications"] == "none"
    assert main(["grade", str(folder)]) == 0 and adjudicated(folder) == []
    assert main(["report", str(folder), "--format", "json"]) == 0  # a reader of the folder's dataset


def test_a_folder_names_no_url_to_fetch(damaged: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A stranger's config.yaml cannot make `oeb grade` fetch a URL: one line, exit 2, nothing graded."""
    out = tmp_path / "out"
    assert main(["run", "--config", config(tmp_path, str(damaged)), "-y", "--out", str(out)]) == 0
    [folder] = out.iterdir()
    assert isinstance(yaml.safe_load((folder / "config.yaml").read_text())["dataset"], str)  # the short form kept
    tree = yaml.safe_load((folder / "config.yaml").read_text())
    tree["dataset"] = {"url": str(damaged), "adjudications": "https://127.0.0.1:9/adj.yaml"}
    (folder / "config.yaml").write_text(yaml.safe_dump(tree))
    before = (folder / "field_matching" / "summary.json").read_bytes()
    refused(["grade", str(folder)], "does not read on a run folder's word", capsys)
    assert (folder / "field_matching" / "summary.json").read_bytes() == before
    assert main(["grade", str(folder), "--adjudications", "none"]) == 0  # the user's own word is taken


def test_a_file_in_s3(damaged: Path, tmp_path: Path, s3_env: dict[str, str]) -> None:
    """Any fsspec URL: a file in (moto's) S3 is graded under, kept as given in config.yaml, and a
    regrade of the folder reads it there again."""
    url = f"s3://{S3_BUCKET}/adjconfig/adjudications.yaml"
    storage.write_text(url, ENTRY)
    out = tmp_path / "out"
    path = config(tmp_path, {"url": str(damaged), "adjudications": url})
    assert main(["run", "--config", path, "-y", "--out", str(out)]) == 0
    [folder] = out.iterdir()
    assert adjudicated(folder) == [("short__invoice_4417", "customer", "fix")] and used(folder) == url
    assert yaml.safe_load((folder / "config.yaml").read_text())["dataset"]["adjudications"] == url
    storage.write_text(url, ENTRY.replace("status: accepted", "status: rejected"))  # the decision reversed
    assert main(["grade", str(folder)]) == 0
    assert adjudicated(folder) == [] and used(folder) == url


def _run_under_entry(damaged: Path, tmp_path: Path) -> tuple[Path, Path, Callable[[], str]]:
    """A run graded under ENTRY: the adjudication file, the run folder, and the verdict its details
    file holds for the entry's address (`customer` of short__invoice_4417)."""
    adjudications = tmp_path / "adj.yaml"
    adjudications.write_text(ENTRY)
    path = config(tmp_path, {"url": str(damaged), "adjudications": str(adjudications)})
    assert main(["run", "--config", path, "-y", "--out", str(tmp_path / "out")]) == 0
    [folder] = (tmp_path / "out").iterdir()
    details = folder / "field_matching" / "details" / "short__invoice_4417.jsonl"

    def customer() -> str:
        lines = map(json.loads, details.read_text().splitlines())
        return next(v["result"] for v in lines if v["address"] == [["k", "customer"]])

    return adjudications, folder, customer


def test_a_regrade_under_the_same_file_keeps_the_details(damaged: Path, tmp_path: Path) -> None:
    """An adjudicated document's details file is rewritten only when its verdicts change: a regrade under
    the same file leaves it alone (bench-adjudicate), a changed entry rewrites it."""
    adjudications, folder, customer = _run_under_entry(damaged, tmp_path)
    details = folder / "field_matching" / "details" / "short__invoice_4417.jsonl"
    assert customer() == "matched"
    before = details.stat()
    assert main(["grade", str(folder)]) == 0 and adjudicated(folder) == [("short__invoice_4417", "customer", "fix")]
    after = details.stat()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)
    adjudications.write_text(ENTRY.replace("[Amberline Foods]", "[Someone Else]"))
    assert main(["grade", str(folder)]) == 0 and adjudicated(folder) == []
    assert customer() == "misread"


def test_a_regrade_without_the_file_takes_its_changes_out_of_the_details(damaged: Path, tmp_path: Path) -> None:
    """A document adjudicated by the last grading is rebuilt when no entry names it now: its details
    file went on holding the entry's verdict (stale beside the right verdicts.parquet)."""
    _, folder, customer = _run_under_entry(damaged, tmp_path)
    assert customer() == "matched"
    assert main(["grade", str(folder), "--adjudications", "none"]) == 0 and adjudicated(folder) == []
    assert customer() == "misread"


REPLACE = ENTRY.replace("action: accept, values: [Amberline Foods]", "action: replace, value: Amberline Foods")


def recorded(folder: Path) -> dict[str, str]:
    """`adjudicated.json`: what each adjudicated document's details file was written under."""
    held = folder / "field_matching" / "adjudicated.json"
    return dict(json.loads(held.read_text())["documents"]) if held.exists() else {}


def test_a_value_edited_in_place_regrades_its_document(damaged: Path, tmp_path: Path) -> None:
    """A steady regrade compares the digest recorded for a details file (`adjudicated.json`), not the
    file: an entry's value edited under the same id changes the digest, so its document is rewritten."""
    adjudications, folder, customer = _run_under_entry(damaged, tmp_path)
    adjudications.write_text(REPLACE)
    assert main(["grade", str(folder)]) == 0 and customer() == "matched"
    first = recorded(folder)
    assert list(first) == ["short__invoice_4417"]
    assert main(["grade", str(folder)]) == 0 and recorded(folder) == first  # steady: nothing rewritten
    adjudications.write_text(REPLACE.replace("value: Amberline Foods", "value: Amberline Foodz"))
    assert main(["grade", str(folder)]) == 0 and customer() == "misread"
    assert adjudicated(folder) == [("short__invoice_4417", "customer", "fix")]
    assert recorded(folder) != first
    assert main(["grade", str(folder), "--adjudications", "none"]) == 0 and recorded(folder) == {}


def test_a_stopped_grading_leaves_no_record_of_details_it_rewrote(
    damaged: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A grading that rewrote a details file and then stopped before its results must not leave the
    record saying the file holds the verdicts under the earlier entry: the next grading under that
    entry would keep the stopped grading's verdicts."""
    from oeb.run.grade.stage import Grader

    adjudications, folder, customer = _run_under_entry(damaged, tmp_path)
    assert customer() == "matched" and recorded(folder)
    adjudications.write_text(ENTRY.replace("status: accepted", "status: rejected"))
    with monkeypatch.context() as patched:

        def stopped(self: Grader) -> None:
            raise KeyboardInterrupt

        patched.setattr(Grader, "_write", stopped)
        assert main(["grade", str(folder)]) != 0  # Ctrl-C once its details were written
    assert customer() == "misread" and recorded(folder) == {}  # rewritten, and the record gone
    adjudications.write_text(ENTRY)
    assert main(["grade", str(folder)]) == 0 and customer() == "matched"


def report_json(arguments: list[str], capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    capsys.readouterr()
    assert main(["report", *arguments, "--format", "json"]) == 0
    board: dict[str, Any] = json.loads(capsys.readouterr().out)
    return board


def test_readers_take_the_configured_file(damaged: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`oeb report`, `oeb compare` and `oeb view` without --adjudications read a run under the file its
    config.yaml names, as `oeb grade` did (not the raw gold beside the dataset); runs configured with
    different files are refused in one line asking for --adjudications."""
    adjudications, folder, _ = _run_under_entry(damaged, tmp_path)
    named = report_json([str(folder)], capsys)
    assert named["gold"]["adjudications"] == str(adjudications) and named["gold"]["applied"] == ["fix"]
    flagged = report_json([str(folder), "--adjudications", str(adjudications)], capsys)
    raw = report_json([str(folder), "--adjudications", "none"], capsys)
    assert named["rows"] == flagged["rows"] and "gold" not in raw
    assert raw["rows"][0]["headline"] < named["rows"][0]["headline"]  # the entry turns a misread to matched
    other = tmp_path / "other"
    path = config(tmp_path, {"url": str(damaged), "adjudications": "none"}, "other.yaml")
    assert main(["run", "--config", path, "-y", "--out", str(other)]) == 0
    [raw_run] = other.iterdir()
    for verb in (["report", str(folder), str(raw_run), "--all-runs"], ["compare", str(folder), str(raw_run)]):
        refused(verb, "graded under different adjudication files", capsys)
        capsys.readouterr()
        assert main([*verb, "--adjudications", str(adjudications), "--format", "json"]) == 0, verb
    exported = tmp_path / "site"
    assert main(["view", str(folder), "--export", str(exported)]) == 0
    assert str(adjudications) in (exported / "api" / "runs.json").read_text()


def test_verdicts_shown_are_those_of_the_gold_read(
    damaged: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Per-field counts (`oeb report --by field`), the HTML report's verdicts and the view's pages show
    the verdicts the numbers count under the gold read, not those grading wrote: a run graded under the
    file and read under none shows the scorer's misread, unmarked; read under the file, matched with
    the entry's id (a run graded under the file showed its matched under none, and a raw run its misread
    under the file)."""
    from oeb.report import load_runs
    from oeb.report.adjudicated import under_gold
    from oeb.report.runs import details

    adjudications, folder, _ = _run_under_entry(damaged, tmp_path)
    for gold, result, mark in (("none", "misread", None), (str(adjudications), "matched", "fix")):
        capsys.readouterr()
        assert main(["report", str(folder), "--by", "field", "--format", "json", "--adjudications", gold]) == 0
        [fields] = json.loads(capsys.readouterr().out)["runs"]
        counts = next(row["counts"] for row in fields["fields"] if row["path"] == "customer")
        assert counts["misread"] == (result == "misread"), gold
        [run] = under_gold(load_runs([str(folder)]), gold).runs
        verdict = next(v for v in details(run, "short__invoice_4417") if v["address"] == [["k", "customer"]])
        assert verdict["result"] == result, gold
        site = tmp_path / f"site-{mark}"
        assert main(["view", str(folder), "--export", str(site), "--adjudications", gold]) == 0
        page = json.loads((site / "api" / "runs" / "0" / "documents" / "short__invoice_4417.json").read_text())
        shown = next(v for v in page["verdicts"] if v["address"] == "customer")
        assert (shown["result"], shown.get("adjudication")) == (result, mark), gold
