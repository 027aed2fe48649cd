"""The sample dataset shipped in the package, and the synthetic corpus script: both in the published
layout, both deterministic, both passing every check."""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from pathlib import Path

import pyarrow.parquet as pq
import pypdf
import pytest

from oeb.dataset import SAMPLE_DATASET, check_dataset

SCRIPTS = Path(__file__).resolve().parents[2] / "scripts"


def run_script(name: str, *args: str) -> str:
    done = subprocess.run([sys.executable, str(SCRIPTS / name), *args], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


def files(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def test_the_shipped_sample_is_what_the_script_writes(tmp_path: Path) -> None:
    run_script("make_sample_dataset.py", "--out", str(tmp_path))
    shipped, fresh = files(Path(SAMPLE_DATASET)), files(tmp_path)
    manifest = "manifest.parquet"
    assert pq.read_table(tmp_path / manifest).equals(pq.read_table(Path(SAMPLE_DATASET) / manifest))
    assert {k: v for k, v in fresh.items() if k != manifest} == {k: v for k, v in shipped.items() if k != manifest}


def test_the_sample_has_four_suites_and_nested_array_schemas() -> None:
    dataset = check_dataset(SAMPLE_DATASET)
    assert dataset.suites() == {"invoices": 4, "tables": 3, "research": 3, "forms": 2}
    arrays = [
        name
        for row in dataset.rows
        for name, prop in row.schema["properties"].items()
        if prop.get("type") == "array" and prop["items"].get("type") == "object"
    ]
    assert len(arrays) >= 10
    assert any(" " in row.doc_id and "[" in row.doc_id for row in dataset.rows)


@pytest.mark.parametrize("index", range(12))
def test_each_sample_pdf_parses_and_prints_its_gold(index: int) -> None:
    dataset = check_dataset(SAMPLE_DATASET)
    row = dataset.rows[index]
    reader = pypdf.PdfReader(dataset.document(row))
    text = "\n".join(page.extract_text() for page in reader.pages)
    gold = dataset.gold(row)
    first_string = next(value for value in gold.values() if isinstance(value, str))
    assert first_string in text
    assert len(reader.pages) >= (2 if row.suite == "tables" else 1)


@pytest.mark.slow  # two runs of the corpus script in subprocesses: about 10 s
def test_the_corpus_is_deterministic_and_has_the_published_shape(tmp_path: Path) -> None:
    small = ["--documents", "40", "--values", "6000", "--largest", "900", "--seed", "7"]
    for name in ("a", "b"):
        run_script("make_corpus.py", "--out", str(tmp_path / name), *small)
    assert files(tmp_path / "a") == files(tmp_path / "b")
    dataset = check_dataset(str(tmp_path / "a"))
    assert len(dataset.suites()) == 4 and len(dataset.rows) == 40
    leaves = {row.doc_id: count_leaves(gold) for row, gold in dataset.golds()}
    assert sum(leaves.values()) == 6000
    assert leaves["long__real_ofac_ssi_full"] == 900 == max(leaves.values())
    assert sorted(leaves.values())[20] < 150  # most documents are small
    assert sum(" " in doc_id and "[" in doc_id for doc_id in leaves) == 2


def test_the_corpus_script_writes_to_s3(s3_env) -> None:
    url = f"s3://oeb-tests/corpus/{uuid.uuid4().hex[:8]}"
    out = run_script("make_corpus.py", "--out", url, "--documents", "12", "--values", "400", "--largest", "100")
    assert "wrote 12 documents, 400 gold values" in out
    assert len(check_dataset(url).rows) == 12


def count_leaves(value: object) -> int:
    if isinstance(value, dict):
        return sum(count_leaves(v) for v in value.values())
    if isinstance(value, list):
        return sum(count_leaves(v) for v in value)
    return 1


def test_count_leaves_counts_scalars_in_nested_values() -> None:
    assert count_leaves(json.loads('{"a": 1, "b": [{"c": null}, 2], "d": {}}')) == 3
