"""`oeb dataset init` and a gold-less dataset through check, run, grade and report (docs/own-documents.md)."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import pypdf
import pytest

from oeb import storage
from oeb.cli import main
from oeb.dataset import SAMPLE_DATASET, check_dataset, open_dataset

SCHEMA = {"type": "object", "properties": {"total": {"type": "number"}, "customer": {"type": "string"}}}
OTHER = {"type": "object", "properties": {"title": {"type": "string"}}}


def pdf(encrypted: bool = False) -> bytes:
    writer = pypdf.PdfWriter()
    writer.add_blank_page(width=200, height=200)
    if encrypted:
        writer.encrypt("secret")
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


@pytest.fixture
def pdfs(tmp_path: Path) -> Path:
    folder = tmp_path / "pdfs"
    (folder / "invoices").mkdir(parents=True)
    (folder / "papers").mkdir()
    (folder / "invoices" / "a.pdf").write_bytes(pdf())
    (folder / "papers" / "a.pdf").write_bytes(pdf())  # the same name: made unique
    (folder / "papers" / "B.PDF").write_bytes(pdf())
    (folder / "papers" / "locked.pdf").write_bytes(pdf(encrypted=True))
    (folder / "papers" / "broken.pdf").write_bytes(b"%PDF-1.7 not really")
    (tmp_path / "schema.json").write_text(json.dumps(SCHEMA))
    (tmp_path / "paper.json").write_text(json.dumps(OTHER))
    return folder


def test_init_writes_a_goldless_dataset(pdfs: Path, folder_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    schema, paper = pdfs.parent / "schema.json", pdfs.parent / "paper.json"
    code = main(
        [
            "dataset",
            "init",
            str(pdfs),
            "--schema",
            str(schema),
            "--schema-for",
            f"papers/*={paper}",
            "--out",
            folder_url,
        ]
    )
    assert code == 0
    err = capsys.readouterr().err
    assert "locked.pdf: it is encrypted" in err and "broken.pdf: it is not a readable PDF" in err
    dataset = check_dataset(folder_url)
    assert dataset.goldless
    assert [row.doc_id for row in dataset.rows] == ["a", "B", "a-2"]
    schemas = {row.doc_id: dict(row.schema) for row in dataset.rows}
    assert schemas == {"a": SCHEMA, "B": OTHER, "a-2": OTHER}
    assert storage.read_bytes(storage.join(folder_url, "pdfs", "a-2.pdf")) == pdf()
    assert storage.exists(storage.join(folder_url, "schemas", "paper.json"))
    # a second init to the same place is refused, the dataset untouched
    assert main(["dataset", "init", str(pdfs), "--schema", str(schema), "--out", folder_url]) == 2
    assert [row.doc_id for row in open_dataset(folder_url).rows] == ["a", "B", "a-2"]


def test_bad_input_is_one_line(pdfs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"type": "objekt"}))
    out = tmp_path / "ds"
    assert main(["dataset", "init", str(pdfs), "--schema", str(bad), "--out", str(out)]) == 2
    assert "is not JSON Schema" in capsys.readouterr().err and not out.exists()
    only_bad = tmp_path / "only"
    only_bad.mkdir()
    shutil.copy(pdfs / "papers" / "broken.pdf", only_bad)
    assert (
        main(["dataset", "init", str(only_bad), "--schema", str(pdfs.parent / "schema.json"), "--out", str(out)]) == 2
    )
    assert "no readable PDF" in capsys.readouterr().err and not out.exists()
    assert main(["dataset", "init", str(pdfs), "--schema", str(bad), "--schema-for", "x", "--out", str(out)]) == 2


def test_goldless_dataset_through_check_run_grade_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sample = Path(SAMPLE_DATASET)
    schema = tmp_path / "schema.json"
    schema.write_text(json.dumps({"type": "object", "properties": {"x": {"type": "string"}}}))
    out = tmp_path / "ds"
    assert main(["dataset", "init", str(sample / "pdfs"), "--schema", str(schema), "--out", str(out)]) == 0
    capsys.readouterr()
    assert main(["check", "--dataset", str(out)]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["gold"] is None and "gold-less dataset" in captured.err
    config = Path(__file__).parents[2] / "oeb" / "examples" / "mock.yaml"
    sets = [f"dataset={out}", f"system.mock.gold={sample / 'gold'}", "system.mock.latency=0"]
    arguments = ["run", "--config", str(config), "-y", "--out", str(tmp_path / "runs")]
    for change in sets:
        arguments += ["--set", change]
    assert main(arguments) == 0
    captured = capsys.readouterr()
    assert "no gold yet" in captured.out and "oeb gold draft" in captured.out
    (run,) = (tmp_path / "runs").iterdir()
    assert len(list((run / "predictions").iterdir())) == 12
    assert not (run / "field_matching").exists()
    for verb in ("grade", "report"):
        assert main([verb, str(run)]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "has no gold yet" in err[0]
