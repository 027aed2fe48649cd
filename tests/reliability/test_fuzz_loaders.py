"""Arbitrary JSON fed to everything that reads user input: the scorer, the manifest loader, the config
checker, the prediction reader and the record reader.

Each either succeeds or raises an `OebError` whose message is one line (readers that turn a bad file
into a document's failure return that instead); nothing else escapes. Every example runs under an
alarm, so an input that makes oeb hang fails the test instead of stalling it. The documents mix deep
nesting (up to 3,000 levels), integers of up to 5,000 digits, NaN and Infinity, and text that looks
like numbers, dates and JSON.
"""

from __future__ import annotations

import json
import signal
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import oeb
from oeb import _json
from oeb._manifest import Row, rows_from_table
from oeb.dataset import SAMPLE_DATASET
from oeb.errors import ConfigError, OebError
from oeb.run.folder.run_folder import RunFolder
from oeb.run.grade.task import _prediction
from oeb.run.plan.config import init_tree, load_config

SECONDS_PER_EXAMPLE = 20
"""Far above what any example takes (well under a second): only a hang reaches it, even on a loaded machine."""
FUZZ = settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))

TEXT = st.one_of(
    st.text(max_size=12),
    st.sampled_from(["NaN", "-Infinity", "1e400", "9" * 400, "2024-02-30", "$1,000.00", "{}", "[", "\x00", "a/b"]),
)
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(min_value=10**399, max_value=10**401),  # 400 digits
    st.floats(),  # NaN and the infinities included
    TEXT,
)


def json_values(leaves: st.SearchStrategy[Any] = SCALARS) -> st.SearchStrategy[Any]:
    return st.recursive(
        leaves,
        lambda children: st.lists(children, max_size=4) | st.dictionaries(TEXT, children, max_size=4),
        max_leaves=20,
    )


def wrapped(value: Any, levels: int) -> Any:
    for _ in range(levels):
        value = {"a": [value]}
    return value


DEEP = st.builds(wrapped, json_values(), st.sampled_from([0, 0, 0, 50, 200, 400]))
DOCUMENTS = st.one_of(json_values(), st.dictionaries(TEXT, DEEP, max_size=3))
SCHEMAS = st.one_of(
    DOCUMENTS,
    st.fixed_dictionaries(
        {"type": st.just("object"), "properties": st.dictionaries(TEXT, json_values(), max_size=3)},
        optional={"$defs": st.dictionaries(TEXT, json_values(), max_size=2), "$ref": TEXT},
    ),
)


def json_text(value: Any) -> str:
    return json.dumps(value)  # NaN and Infinity as the bare words Python writes


TEXTS = st.one_of(
    DOCUMENTS.map(json_text),
    st.text(max_size=40),
    st.sampled_from(["[" * 3_000 + "]" * 3_000, '{"a": ' + "9" * 5_000 + "}", '{"a": NaN}', "\ufeff{}", ""]),
)


@contextmanager
def within(seconds: int) -> Iterator[None]:
    """Fail with TimeoutError if the block runs longer than `seconds` (SIGALRM: tests run in the main thread)."""

    def hung(*_: object) -> None:
        raise TimeoutError(f"no answer within {seconds} s: a hang")

    previous = signal.signal(signal.SIGALRM, hung)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def one_line_or_success(call: Any, *args: Any) -> Any:
    """Call under the alarm: the result, or None after an `OebError` of one line (a config's several
    problems: a line saying how many, then one indented line each)."""
    with within(SECONDS_PER_EXAMPLE):
        try:
            return call(*args)
        except OebError as error:
            first, *rest = str(error).split("\n")
            if rest:
                assert first.endswith(f" has {len(rest)} problems:"), str(error)
                assert all(line.startswith("  ") and line.strip() and line.isprintable() for line in rest), str(error)
            return None


@FUZZ
@given(pred=DOCUMENTS, gold=DOCUMENTS, schema=SCHEMAS)
def test_the_scorer_scores_or_refuses_on_one_line(pred: Any, gold: Any, schema: Any) -> None:
    result = one_line_or_success(oeb.score, pred, gold, schema)
    assert result is None or 0.0 <= result["accuracy"] <= 1.0


MANIFEST_CELLS = st.one_of(TEXT, TEXTS, st.none())
SCHEMA_TEXTS = SCHEMAS.map(json_text)


@FUZZ
@given(
    ids=st.lists(st.one_of(TEXT, st.sampled_from(["a", "A", "..", "a\nb"])), min_size=0, max_size=4),
    cells=st.data(),
)
def test_the_manifest_loader_loads_or_refuses_on_one_line(ids: list[str], cells: st.DataObject) -> None:
    column = st.lists(MANIFEST_CELLS, min_size=len(ids), max_size=len(ids))
    table = pa.table(
        {
            "doc_id": ids,
            "doc_path": cells.draw(column),
            "gt_path": cells.draw(st.one_of(column, st.just([f"gold/{doc_id}.json" for doc_id in ids]))),
            "schema": cells.draw(
                st.one_of(column, st.lists(SCHEMAS.map(json_text), min_size=len(ids), max_size=len(ids)))
            ),
            "suite": cells.draw(column),
        }
    )
    rows = one_line_or_success(rows_from_table, table, "manifest.parquet")
    assert rows is None or all(isinstance(row, Row) and isinstance(row.schema, dict) for row in rows)


VALID = init_tree("mock", SAMPLE_DATASET)
KEY_PATHS = [("timeout",), ("workers",), ("rows",), ("rows", "only"), ("ray",), ("ray", "rate_limit"), ("system",)]
KEY_PATHS += [("system", "mock"), ("system", "mock", "seed"), ("scorers",), ("dataset",), ("nosuch",)]


def with_value(path: tuple[str, ...], value: Any) -> dict[str, Any]:
    tree = json.loads(json.dumps(VALID))
    node = tree
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return tree


@FUZZ
@given(tree=st.one_of(json_values(), st.builds(with_value, st.sampled_from(KEY_PATHS), DOCUMENTS)))
def test_the_config_loader_accepts_or_refuses_on_one_line(tree: Any) -> None:
    """Any YAML document as a config file: a mapping is accepted or refused on one line; anything
    else (a list, a string, a number, null) is refused for not being a mapping."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "fuzz.yaml"
        path.write_text(json.dumps(tree), encoding="utf-8")  # JSON is YAML, and writes 800 levels deep
        if isinstance(tree, dict):
            one_line_or_success(load_config, str(path))
        else:
            with within(SECONDS_PER_EXAMPLE), pytest.raises(ConfigError, match="a config is a mapping") as refused:
                load_config(str(path))
            assert "\n" not in str(refused.value)


@FUZZ
@given(text=TEXTS)
def test_json_text_parses_or_raises_a_decode_error(text: str) -> None:
    with within(SECONDS_PER_EXAMPLE):
        try:
            _json.loads(text)
        except json.JSONDecodeError as error:
            assert "\n" not in str(error)


ROW = Row(1, "doc", "pdfs/doc.pdf", "gold/doc.json", {"type": "object"}, "other", {})


@FUZZ
@given(data=st.one_of(TEXTS.map(str.encode), st.binary(max_size=40)))
def test_a_prediction_file_is_read_or_becomes_the_documents_failure(data: bytes) -> None:
    with within(SECONDS_PER_EXAMPLE):
        value, failed = _prediction(ROW, data)
    assert (failed is None) or (value is None and failed["status"] == "failed" and "\n" not in failed["error"])


RECORDS = st.fixed_dictionaries({}, optional={"error": DOCUMENTS, "cost": DOCUMENTS, "output": DOCUMENTS}).map(
    json_text
)


@pytest.fixture(scope="module")
def run_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("run")
    (folder / "records").mkdir()
    return folder


@FUZZ
@given(
    data=st.one_of(
        TEXTS.map(str.encode), st.binary(max_size=40), DOCUMENTS.map(lambda v: json_text({"error": v}).encode())
    )
)
def test_a_record_file_is_read_or_counts_as_none(run_folder: Path, data: bytes) -> None:
    (run_folder / "records" / "doc.json").write_bytes(data)
    with within(SECONDS_PER_EXAMPLE):
        records = RunFolder(str(run_folder)).records(["doc"], {"records/doc.json": len(data)})
    record = records.get("doc")
    assert record is None or (isinstance(record, dict) and isinstance(record.get("error"), dict | None))


def test_a_record_as_the_engine_writes_it_is_read(run_folder: Path) -> None:
    """The shape check refuses only what the engine could not read: costs carry more than numbers."""
    cost = {"usd": 0.01, "credits": None, "source": "simulated", "tokens_in": None, "wall_s": 0.0, "attempts": 1}
    record = {"id": "doc", "output": {"a": 1}, "error": None, "cost": cost}
    (run_folder / "records" / "doc.json").write_text(json.dumps(record))
    assert RunFolder(str(run_folder)).records(["doc"], {"records/doc.json": 1}) == {"doc": record}
