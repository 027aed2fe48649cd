"""`--reuse`: an earlier answer is found only for the very same question (system, options but where
the system is reached, PDF bytes, schema as asked, adapter version), never a failed one; in run
folders and prefixes of them, on disk and on S3 (moto); anything else is refused in one line."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from fixtures.services import S3_BUCKET

from oeb import storage
from oeb.dataset import open_dataset
from oeb.errors import RunFolderError
from oeb.run.plan.config import Config, check_tree, init_tree
from oeb.run.predict.reuse import ReuseIndex
from oeb.systems import Question, question_identity, question_schema


def _config(system: str, dataset: Path, **options: Any) -> Config:
    tree = init_tree(system, str(dataset))
    tree["system"][system] |= options
    return check_tree(tree, where="test")


def _write_run(url: str, config: Config, dataset: Path, *, captured_at: str = "2026-01-01T00:00:00", **changes) -> str:
    """A run folder as a run leaves it: settings.json and a record per document of `dataset`, each
    answered (changes: `error`, `question`... replace a record's keys for the documents they name)."""
    adapter = config.adapter
    opened = open_dataset(str(dataset))
    options = adapter.options()
    storage.write_json(
        storage.join(url, "settings.json"),
        {"system": adapter.name, "options": {k: v for k, v in options.items() if k not in adapter.located}},
    )
    for row in opened.rows:
        question = Question(opened.document(row), question_schema(dict(row.schema)))
        record = {
            "system": adapter.name,
            "options": options,
            "question": question_identity(adapter, question),
            "output": {"number": row.doc_id},
            "error": None,
            "cost": {"usd": 0.01, "credits": None, "wall_s": 1.0, "attempts": 1},
            "captured_at": captured_at,
        }
        record |= changes.get(row.doc_id, {})
        storage.write_json(storage.join(url, "records", f"{row.doc_id}.json"), record)
    return url


def _found(index: ReuseIndex, config: Config, dataset: Path) -> dict[str, str]:
    opened = open_dataset(str(dataset))
    return {doc_id: url for doc_id, (_, url) in index.find_many(config, opened, opened.rows).items()}


@pytest.fixture
def earlier(tmp_path: Path, many_rows: Path) -> tuple[Path, Config]:
    """A datalab run over the 40 invoices under `tmp_path/runs`."""
    config = _config("datalab", many_rows)
    _write_run(str(tmp_path / "runs" / "datalab-1"), config, many_rows)
    return tmp_path / "runs", config


def test_the_same_question_finds_the_earlier_answer_whatever_the_base_url(earlier, many_rows: Path) -> None:
    runs, config = earlier
    index = ReuseIndex.load([str(runs / "datalab-1")])
    opened = open_dataset(str(many_rows))
    record, url = index.find(config, opened, opened.rows[0])
    assert url == str(runs / "datalab-1") and record["output"] == {"number": "invoice_000"}
    elsewhere = _config("datalab", many_rows, base_url="http://127.0.0.1:9/proxy")
    assert len(_found(index, elsewhere, many_rows)) == 40
    assert _found(index, _config("datalab", many_rows, mode="accurate"), many_rows) == {}  # another option
    assert _found(index, _config("mock", many_rows), many_rows) == {}  # another system


def test_another_pdf_or_schema_is_asked_again(earlier, tmp_path: Path, many_rows: Path) -> None:
    runs, config = earlier
    changed = tmp_path / "changed"
    shutil.copytree(many_rows, changed)
    (changed / "pdfs" / "invoice_001.pdf").write_bytes(b"%PDF-1.4\n% another document\n%%EOF\n")
    table = pq.read_table(changed / "manifest.parquet").to_pydict()
    schema = json.loads(table["schema"][2])
    schema["properties"]["number"]["description"] = "the invoice number"
    table["schema"][2] = json.dumps(schema)
    pq.write_table(pq.read_table(changed / "manifest.parquet").from_pydict(table), changed / "manifest.parquet")
    found = _found(ReuseIndex.load([str(runs)]), config, changed)
    assert len(found) == 38 and "invoice_001" not in found and "invoice_002" not in found


def test_failed_unread_and_unfingerprinted_records_and_other_versions_are_never_reused(
    tmp_path: Path, many_rows: Path
) -> None:
    config = _config("datalab", many_rows)
    error = {"type": "SystemFailed", "status": 500, "transient": True, "message": "boom", "traceback": ""}
    changes: dict[str, dict[str, Any]] = {
        "invoice_000": {"error": error, "output": None},
        "invoice_001": {"unread": True},
        "invoice_002": {"question": None},
        "invoice_003": {"question": {"pdf_sha256": "x", "schema_sha256": "y", "adapter": "oeb 0.0.1"}},
    }
    url = _write_run(str(tmp_path / "run"), config, many_rows, **changes)
    (tmp_path / "run" / "records" / "invoice_004.json").write_text("{cut short")
    assert sorted(set(_found(ReuseIndex.load([url]), config, many_rows)) & {f"invoice_00{n}" for n in range(6)}) == [
        "invoice_005"
    ]


def test_a_prefix_holds_many_runs_and_the_newest_answer_wins(tmp_path: Path, many_rows: Path) -> None:
    config = _config("datalab", many_rows)
    old = _write_run(str(tmp_path / "out" / "a" / "datalab-old"), config, many_rows)
    new = _write_run(str(tmp_path / "out" / "b" / "datalab-new"), config, many_rows, captured_at="2026-06-01T00:00:00")
    _write_run(str(tmp_path / "out" / "mock-1"), _config("mock", many_rows), many_rows)
    index = ReuseIndex.load([str(tmp_path / "out"), old])
    assert len(index.runs) == 4 and set(_found(index, config, many_rows).values()) == {new}
    _write_run(
        str(tmp_path / "chained"), config, many_rows, captured_at="2027-01-01", invoice_000={"reused_from": "s3://x/y"}
    )
    assert _found(ReuseIndex.load([str(tmp_path / "chained")]), config, many_rows)["invoice_000"] == "s3://x/y"


def test_runs_on_s3_are_found_with_one_listing(s3_env, many_rows: Path) -> None:
    config = _config("datalab", many_rows)
    prefix = f"s3://{S3_BUCKET}/reuse-test"
    _write_run(f"{prefix}/datalab-1", config, many_rows)
    found = _found(ReuseIndex.load([f"{prefix}/"]), config, many_rows)
    assert len(found) == 40 and set(found.values()) == {f"{prefix}/datalab-1"}


@pytest.mark.parametrize(
    ("where", "says"),
    [
        ("nothing", "not a run folder (one holds settings.json and records/) nor a prefix holding run folders"),
        ("empty", "not a run folder"),
        ("bad-settings", "bad-settings/settings.json is not JSON"),
        ("no-options", "is not a run's settings (no options); fix or remove it"),
    ],
)
def test_what_is_not_a_run_or_cannot_be_read_is_refused_in_one_line(tmp_path: Path, where: str, says: str) -> None:
    (tmp_path / "empty" / "predictions").mkdir(parents=True)
    (tmp_path / "bad-settings").mkdir()
    (tmp_path / "bad-settings" / "settings.json").write_text("{broken")
    (tmp_path / "no-options").mkdir()
    (tmp_path / "no-options" / "settings.json").write_text("[]")
    with pytest.raises(RunFolderError) as refused:
        ReuseIndex.load([str(tmp_path / where)])
    assert says in str(refused.value) and "\n" not in str(refused.value)


def test_an_unreachable_bucket_is_refused_in_one_line(s3_env) -> None:
    with pytest.raises(RunFolderError, match=r"^--reuse s3://no-such-bucket-oeb/runs: "):
        ReuseIndex.load(["s3://no-such-bucket-oeb/runs"])


def test_a_run_written_before_an_option_existed_is_reused_as_at_that_options_default(
    tmp_path: Path, many_rows: Path
) -> None:
    config = _config("reducto", many_rows)
    url = _write_run(str(tmp_path / "reducto-1"), config, many_rows)
    settings = storage.read_json(storage.join(url, "settings.json"))
    del settings["options"]["citations"]  # reducto's citations option came later
    storage.write_json(storage.join(url, "settings.json"), settings)
    index = ReuseIndex.load([url])
    assert len(_found(index, config, many_rows)) == 40
    assert _found(index, _config("reducto", many_rows, citations=True), many_rows) == {}  # not the default
