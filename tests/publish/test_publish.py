"""`oeb publish` to the fake Hub (through huggingface_hub's own commit path) and to moto's S3, the
published folders read back by report and compare, the secret check before any upload, and
`oeb reproduce` of published mock runs: one that reproduces, one whose predictions were damaged."""

from __future__ import annotations

import hashlib
import json
import shutil
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from fixtures.datasets import publish as put_on_hub
from fixtures.fake_hub import FakeHub
from fixtures.services import S3_BUCKET

from oeb import storage
from oeb._hub import parse_location
from oeb.cli import main
from oeb.dataset import SAMPLE_DATASET
from oeb.publish.reproduce import holds
from oeb.publish.scan import Scanner
from oeb.report import compare, leaderboard, load_runs

DAMAGED = 6
"""Of the sample's 12 documents: enough for the 95% interval of the difference to leave 0."""


@pytest.fixture(scope="module")
def runs(fake_hub: FakeHub, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Three graded mock runs of the sample, on the Hub: seeds 0 and 1, and a seed-0 run whose
    predictions were damaged on disk and graded again (settings unchanged, scores lower)."""
    dataset = put_on_hub(fake_hub, Path(SAMPLE_DATASET), f"acme/sample-{uuid.uuid4().hex[:6]}")
    made = {}
    for name, seed in (("seed0", 0), ("seed1", 1), ("damaged", 0)):
        out = tmp_path_factory.mktemp(name)
        sets = ["--set", f"dataset={dataset}", "--set", f"system.mock.seed={seed}", "--set", "system.mock.latency=0"]
        assert main(["run", "--config", "oeb/examples/mock.yaml", *sets, "-y", "--out", str(out)]) == 0
        [made[name]] = [str(path) for path in out.iterdir()]
    predictions = sorted(Path(made["damaged"], "predictions").iterdir())
    for path in predictions[:DAMAGED]:
        path.write_text("{}")  # every value unfound
    assert main(["grade", made["damaged"]]) == 0
    return made


def _repo(hub: FakeHub) -> str:
    repo_id = f"acme/results-{uuid.uuid4().hex[:6]}"
    hub.repo(repo_id).mkdir(parents=True)
    return repo_id


def _name(url: str) -> str:
    return url.rstrip("/").rsplit("/", 1)[-1]


def _json(capsys: pytest.CaptureFixture[str], *args: str) -> Any:
    assert main(list(args)) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.slow
def test_two_runs_are_published_in_one_commit_and_read_back(runs, fake_hub, capsys) -> None:
    repo_id = _repo(fake_hub)
    dest = f"hf://datasets/{repo_id}"
    before = len(fake_hub.commits)
    assert main(["publish", runs["seed0"], runs["seed1"], dest, "--message", "two mock runs"]) == 0
    assert "files written in commit" in capsys.readouterr().out
    [commit] = fake_hub.commits[before:]
    assert commit["summary"] == "two mock runs"
    files = fake_hub.files(repo_id)
    for run in (runs["seed0"], runs["seed1"]):
        name = _name(run)
        assert f"{name}/settings.json" in files and f"{name}/field_matching/scores.parquet" in files
        assert f"{name}/records/short__invoice_4417.json" in files and f"{name}/config.yaml" in files
        assert not any(path.startswith(f"{name}/field_matching/cache/") for path in files)
        assert files[f"{name}/field_matching/scores.jsonl"] == Path(run, "field_matching/scores.jsonl").read_bytes()
    assert any(path.endswith(".parquet") for path in commit["paths"])  # LFS files went up too

    local = leaderboard(load_runs([runs["seed0"], runs["seed1"]]))
    results = json.loads(files["results.json"])
    assert [(row["system"], row["headline"]) for row in results["rows"]] == [
        (row["system"], row["headline"]) for row in local["rows"]
    ]
    assert {row["folder"] for row in results["rows"]} == {_name(runs["seed0"]), _name(runs["seed1"])}
    assert results["dataset_commit"] == local["dataset_commit"] and "url" not in results["rows"][0]
    front, body = files["README.md"].decode().removeprefix("---\n").split("\n---\n", 1)
    assert "oeb" in yaml.safe_load(front)["tags"]
    assert local["dataset_commit"] in body and local["rows"][0]["scorer"] in body
    assert "| mock (seed=0) |" in body and "| mock (seed=1) |" in body

    published = [f"{dest}/{_name(runs['seed0'])}", f"{dest}/{_name(runs['seed1'])}"]
    board = _json(capsys, "report", *published, "--format", "json")
    assert [row["headline"] for row in board["rows"]] == [row["headline"] for row in local["rows"]]
    assert all(f"@{fake_hub.commit(repo_id)}/" in row["url"] for row in board["rows"])  # pinned to one commit
    paired = _json(capsys, "compare", *published, "--format", "json")["paired"]
    a, b = load_runs([runs["seed0"], runs["seed1"]])
    assert paired == compare(a, b)["paired"]
    findings = _json(capsys, "audit", *published, "--min-agree", "2", "--format", "json")
    assert findings["runs"] == ["mock (seed=0)", "mock (seed=1)"] and findings["dataset"] == local["dataset"]
    pinned = f"{published[0]}@{fake_hub.commit(repo_id)}"  # a revision after the folder, as DEST takes it
    seed0 = next(row for row in local["rows"] if row["run"] == _name(runs["seed0"]))
    assert _json(capsys, "report", pinned, "--format", "json")["rows"][0]["headline"] == seed0["headline"]

    whole = _json(capsys, "report", dest, "--format", "json")  # the destination itself: read as its runs
    assert sorted(row["headline"] for row in whole["rows"]) == sorted(row["headline"] for row in local["rows"])

    assert main(["publish", runs["seed0"], runs["seed1"], dest]) == 0
    assert "nothing new" in capsys.readouterr().out
    assert len(fake_hub.commits) == before + 1 and fake_hub.files(repo_id) == files

    # A new run of the seed-0 setting takes its row; the seed-1 row, read from the Hub, stays.
    assert main(["publish", runs["damaged"], dest]) == 0
    capsys.readouterr()
    rows = json.loads(fake_hub.files(repo_id)["results.json"])["rows"]
    assert {row["system"]: row["folder"] for row in rows} == {
        "mock (seed=0)": _name(runs["damaged"]),
        "mock (seed=1)": _name(runs["seed1"]),
    }
    assert len(fake_hub.commits) == before + 2


@pytest.mark.slow
def test_runs_are_published_to_s3_as_to_the_hub(runs, s3_env, capsys) -> None:
    dest = f"s3://{S3_BUCKET}/{uuid.uuid4().hex}/bench"
    assert main(["publish", runs["seed1"], dest, "--no-records"]) == 0
    capsys.readouterr()
    listed = storage.list_files(dest)
    name = _name(runs["seed1"])
    assert {"README.md", "results.json", f"{name}/settings.json"} <= set(listed)
    assert not any(path.startswith(f"{name}/records/") for path in listed)
    board = _json(capsys, "report", f"{dest}/{name}", "--format", "json")
    assert board["rows"][0]["headline"] == leaderboard(load_runs([runs["seed1"]]))["rows"][0]["headline"]
    assert main(["publish", runs["seed1"], dest, "--no-records"]) == 0
    assert "nothing new" in capsys.readouterr().out


def _planted(runs: dict[str, str], tmp_path: Path, plant: Callable[[Path], None]) -> str:
    copy = tmp_path / _name(runs["seed1"])
    shutil.copytree(runs["seed1"], copy)
    plant(copy)
    return str(copy)


def _in_record(text: str) -> Callable[[Path], None]:
    def plant(folder: Path) -> None:
        path = folder / "records" / "short__invoice_4418.json"
        record = json.loads(path.read_text())
        record["raw"] = {"echo": f"you sent {text}"}
        path.write_text(json.dumps(record))

    return plant


@pytest.mark.slow
@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("hf_" + "Q" * 34, "the value of HF_TOKEN"),
        ("Authorization: Bearer " + "x" * 40, "shaped like a bearer token"),
        ("sk-" + "a1" * 16, "shaped like an API key"),
        ("AIza" + "Sy0-" * 8 + "abc", "shaped like a Google API key"),
        ("gemini-users-own-key", "the value of GEMINI_API_KEY"),
        (str(Path.home() / "keys" / "gold.json"), f"the local path {Path.home()}"),
    ],
)
def test_a_secret_or_local_path_is_refused_before_any_upload(
    runs, fake_hub, tmp_path, monkeypatch, capsys, text: str, found: str
) -> None:
    monkeypatch.setenv("HF_TOKEN", "hf_" + "Q" * 34)
    monkeypatch.setenv("GEMINI_API_KEY", "gemini-users-own-key")
    repo_id = _repo(fake_hub)
    folder = _planted(runs, tmp_path, _in_record(text))
    requests, commits = len(fake_hub.requests), len(fake_hub.commits)
    assert main(["publish", folder, f"hf://datasets/{repo_id}"]) == 1
    error = capsys.readouterr().err.strip()
    assert len(error.splitlines()) == 1 and f"{_name(folder)}/records/short__invoice_4418.json holds" in error
    assert found in error and "nothing was uploaded" in error and "Q" * 34 not in error
    assert len(fake_hub.commits) == commits and fake_hub.files(repo_id) == {}
    assert not [r for r in fake_hub.requests[requests:] if r.startswith(("POST", "PUT"))]
    # the same run without its records holds nothing to refuse
    assert main(["publish", folder, f"hf://datasets/{repo_id}", "--no-records"]) == 0


@pytest.mark.slow
def test_the_run_folder_path_is_a_local_path(runs, tmp_path, capsys) -> None:
    folder = _planted(
        runs, tmp_path, lambda copy: (copy / "predictions" / "note.json").write_text(json.dumps(str(copy)))
    )
    assert main(["publish", folder, str(tmp_path / "dest")]) == 1
    assert f"the local path {folder} (the run's local folder)" in capsys.readouterr().err
    assert not (tmp_path / "dest").exists()


@pytest.mark.slow
def test_a_missing_hub_dataset_is_refused_with_the_way_to_create_it(runs, fake_hub, capsys) -> None:
    assert main(["publish", runs["seed1"], "hf://datasets/acme/never-made"]) == 1
    assert "create the dataset first" in capsys.readouterr().err


@pytest.mark.slow
def test_a_card_oeb_did_not_write_is_never_overwritten(runs, fake_hub, capsys) -> None:
    repo_id = _repo(fake_hub)
    (fake_hub.repo(repo_id) / "README.md").write_text("---\nlicense: cc-by-4.0\n---\n# The dataset's own card\n")
    assert main(["publish", runs["seed1"], f"hf://datasets/{repo_id}"]) == 1
    assert "has a README.md that oeb publish did not write" in capsys.readouterr().err
    assert main(["publish", runs["seed1"], f"hf://datasets/{repo_id}/results@main"]) == 0  # a folder, on a branch
    files = fake_hub.files(repo_id)
    assert files["README.md"].startswith(b"---\nlicense") and "results/README.md" in files
    assert (
        f"oeb report hf://datasets/{repo_id}@main/results/{_name(runs['seed1'])}" in files["results/README.md"].decode()
    )
    assert f"results/{_name(runs['seed1'])}/settings.json" in files


@pytest.mark.parametrize(
    ("url", "repo_id", "path", "revision"),
    [
        ("hf://datasets/o/n", "o/n", "", None),
        ("hf://datasets/o/n/bench/run-1", "o/n", "bench/run-1", None),
        ("hf://datasets/o/n/bench@v2", "o/n", "bench", "v2"),
        ("hf://datasets/o/n@v2/bench", "o/n", "bench", "v2"),
        ("hf://datasets/o/n@v2", "o/n", "", "v2"),
    ],
)
def test_hub_locations(url: str, repo_id: str, path: str, revision: str | None) -> None:
    location = parse_location(url)
    assert (location.repo_id, location.path, location.revision) == (repo_id, path, revision)


@pytest.fixture(scope="module")
def on_hub(runs, fake_hub) -> dict[str, str]:
    """The seed-0 run and the damaged one, published each to its own Hub dataset."""
    published = {}
    for name in ("seed0", "damaged"):
        repo_id = f"acme/repro-{uuid.uuid4().hex[:6]}"
        fake_hub.repo(repo_id).mkdir(parents=True)
        assert main(["publish", runs[name], f"hf://datasets/{repo_id}"]) == 0
        published[name] = f"hf://datasets/{repo_id}/{_name(runs[name])}"
    return published


@pytest.mark.slow
def test_a_published_mock_run_reproduces(on_hub, tmp_path, capsys) -> None:
    assert main(["reproduce", on_hub["seed0"], "--out", str(tmp_path), "-y"]) == 0
    out = capsys.readouterr().out
    assert "paired over 12 documents" in out and "reproduced: the 95% interval holds 0" in out
    [folder] = tmp_path.iterdir()
    assert json.loads((folder / "settings.json").read_text())["system"] == "mock"
    assert main(["reproduce", on_hub["seed0"], "--out", str(tmp_path), "-y", "--rows.limit", "3"]) == 0
    assert "paired over 3 documents" in capsys.readouterr().out
    # a rerun that answers nothing is a broken set-up, not a score that moved
    broken = ["--rows.limit", "2", "--set", "system.mock.malformed=1.0"]
    assert main(["reproduce", on_hub["seed0"], "--out", str(tmp_path), "-y", *broken]) == 5
    assert "not reproduced" not in capsys.readouterr().err


@pytest.mark.slow
def test_a_damaged_published_run_does_not_reproduce_and_names_what_moved(on_hub, runs, tmp_path, capsys) -> None:
    assert main(["reproduce", on_hub["damaged"], "--out", str(tmp_path), "-y"]) == 3
    captured = capsys.readouterr()
    assert "oeb reproduce: not reproduced" in captured.err and f"{DAMAGED} documents moved" in captured.err
    damaged = sorted(path.stem for path in Path(runs["damaged"], "predictions").iterdir())[:DAMAGED]
    moved = captured.out.split("documents that moved most", 1)[1]
    assert all(f"  {doc_id}: " in moved for doc_id in damaged)
    # its answers graded again give its published scores: the grading itself holds
    assert main(["reproduce", on_hub["damaged"], "--out", str(tmp_path), "--reuse", "--json"]) == 0
    captured = capsys.readouterr()
    outcome = json.loads(captured.out)
    assert outcome["reproduced"] and outcome["reused"] and outcome["moved"] == [] and outcome["differences"] == []
    assert outcome["paired"]["ci95"] == [0.0, 0.0] and "graded again from its answers" in captured.err


@pytest.mark.slow
def test_a_run_on_a_local_dataset_is_refused(runs, tmp_path, capsys) -> None:
    def local(copy: Path) -> None:
        settings = json.loads((copy / "settings.json").read_text())
        (copy / "settings.json").write_text(json.dumps(settings | {"dataset": str(tmp_path / "data")}))

    assert main(["publish", _planted(runs, tmp_path, local), str(tmp_path / "dest")]) == 1
    assert f"was run on the local dataset {tmp_path / 'data'}" in capsys.readouterr().err
    assert not (tmp_path / "dest").exists()


@pytest.mark.parametrize(
    ("ci", "margin", "expected"),
    [
        ((-0.02, 0.01), None, True),
        ((0.0, 0.0), None, True),
        ((0.001, 0.004), None, False),
        ((0.001, 0.004), 0.005, True),
        ((-0.03, -0.001), 0.01, False),
    ],
)
def test_the_rule_of_a_reproduction(ci: tuple[float, float], margin: float | None, expected: bool) -> None:
    assert holds({"ci95": list(ci)}, margin) is expected


def test_the_scan_reads_parquet_values_and_tells_folders_apart(monkeypatch, tmp_path) -> None:
    import io

    import pyarrow as pa
    import pyarrow.parquet as pq

    monkeypatch.setenv("REDUCTO_API_KEY", "rk-live-" + "7" * 24)
    buffer = io.BytesIO()
    pq.write_table(pa.table({"pred_raw": ["fine", "rk-live-" + "7" * 24] * 50}), buffer, compression="zstd")
    scanner = Scanner.for_folders([str(tmp_path / "run")])
    assert scanner.problem("run/field_matching/verdicts.parquet", buffer.getvalue()) == "the value of REDUCTO_API_KEY"
    assert scanner.problem("run/settings.json", b'{"system": "reducto"}') is None
    assert scanner.problem("run/x.json", json.dumps(str(tmp_path / "run" / "gold.json")).encode()) == (
        f"the local path {tmp_path / 'run'} (the run's local folder)"
    )
    assert scanner.problem("run/x.json", json.dumps(str(tmp_path / "running")).encode()) is None  # another folder


@pytest.mark.slow
def test_no_gold_publishes_no_gold_value_and_the_same_numbers(runs, tmp_path, monkeypatch, capsys) -> None:
    """--no-gold: verdicts.parquet's gold columns empty, no details/, the card saying so; the scores
    are whole. A local destination is named relatively in the card (no path of this machine)."""
    import pyarrow.parquet as pq

    monkeypatch.chdir(tmp_path)  # the working folder is a local path the scan refuses: the card must not name it
    assert main(["publish", runs["seed0"], "dest", "--no-gold", "--no-records"]) == 0
    capsys.readouterr()
    folder = tmp_path / "dest" / _name(runs["seed0"])
    verdicts = pq.read_table(folder / "field_matching" / "verdicts.parquet")
    assert verdicts.num_rows > 100
    assert verdicts["gold_raw"].null_count == verdicts["gold_canon"].null_count == verdicts.num_rows
    assert not (folder / "field_matching" / "details").exists()
    gold = Path(SAMPLE_DATASET) / "gold"
    values = {v for path in gold.iterdir() for v in _strings(json.loads(path.read_text())) if " " in v or "-" in v}
    graded = " ".join(path.read_text(errors="replace") for path in (folder / "field_matching").rglob("*.json*"))
    assert values and not [value for value in values if value in graded]
    card = (tmp_path / "dest" / "README.md").read_text()
    assert "gold: none published (`oeb publish --no-gold`)" in card and str(tmp_path) not in card
    assert f"oeb report ./{folder.name} " in card
    published = _json(capsys, "report", str(folder), "--format", "json")["rows"][0]["headline"]
    assert published == _json(capsys, "report", runs["seed0"], "--format", "json")["rows"][0]["headline"]


def _strings(value: Any) -> list[str]:
    if isinstance(value, dict):
        return [text for item in value.values() for text in _strings(item)]
    if isinstance(value, list):
        return [text for item in value for text in _strings(item)]
    return [value] if isinstance(value, str) else []


def test_the_registry_names_every_key_variable_without_importing_an_adapter() -> None:
    """The scan's list of key variables is the classes' own, read without importing any adapter."""
    import subprocess
    import sys

    from oeb.systems import adapter_class
    from oeb.systems.registry import KEY_VARIABLES, LLM, SHIPPED

    assert set(KEY_VARIABLES) == {*SHIPPED, LLM}
    for name, variables in KEY_VARIABLES.items():
        assert adapter_class(name).key_variables() == variables, name
    assert "GEMINI_API_KEY" in KEY_VARIABLES[LLM]
    probe = (
        "import sys; from oeb.publish.scan import secret_variables; names = secret_variables(); "
        "from oeb.systems.registry import SHIPPED; "
        "print([m for m in sys.modules if m in {t.split(':')[0] for t in SHIPPED.values()} or m == 'oeb.systems.llm'])"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_the_adjudications_a_run_was_graded_under_are_published_and_reproduced(runs, s3_env, tmp_path, capsys) -> None:
    """The file goes beside the runs and into the card; reproduce grades under it, refuses another
    file in its place in one line, and takes another named by --adjudications."""
    from oeb.gold import entries

    graded = _planted(runs, tmp_path, lambda folder: None)
    adjudications = tmp_path / "adjudications.yaml"
    adjudications.write_text(  # saved with a byte-order mark, as some editors save UTF-8: its sha256 is the bytes'
        "\ufeff- {id: fix, doc_id: short__invoice_4417, address: customer, action: accept, values: [Amberline Fods],"
        " status: accepted, by: ann, reason: the page shows both}\n"
    )
    assert main(["grade", graded, "--adjudications", str(adjudications)]) == 0
    dest = f"s3://{S3_BUCKET}/{uuid.uuid4().hex}/bench"
    assert main(["publish", graded, dest, "--no-records"]) == 0
    capsys.readouterr()
    assert storage.read_bytes(f"{dest}/adjudications.yaml") == adjudications.read_bytes()
    card = storage.read_text(f"{dest}/README.md")
    assert entries.load(str(adjudications)).sha256 == hashlib.sha256(adjudications.read_bytes()).hexdigest()
    sha = entries.load(str(adjudications)).short
    assert f"+ 1 adjudication (sha256 {sha})" in card and "gold error: unmeasured" in card
    table = storage.read_json(f"{dest}/results.json")
    assert table["gold"]["adjudications"] == "adjudications.yaml" and table["gold"]["accepted"] == 1
    published = f"{dest}/{_name(graded)}"
    out = str(tmp_path / "again")
    assert main(["reproduce", published, "--reuse", "--out", out, "-y"]) == 0
    [again] = list(Path(out).iterdir())
    summary = json.loads((again / "field_matching" / "summary.json").read_text())
    assert summary["provenance"]["adjudications"]["sha256"] == entries.load(str(adjudications)).sha256
    storage.write_text(f"{dest}/adjudications.yaml", adjudications.read_text().replace("ann", "bob"))
    capsys.readouterr()
    assert main(["reproduce", published, "--reuse", "--out", out, "-y"]) == 2
    err = capsys.readouterr().err.strip()
    assert "is not the adjudication file" in err and len(err.splitlines()) == 1
    assert main(["reproduce", published, "--reuse", "--out", out, "-y", "--adjudications", str(adjudications)]) == 0
