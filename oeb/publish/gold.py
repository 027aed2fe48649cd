"""`oeb publish --no-gold`: the graded files with no gold value in them.

A graded folder holds the gold of every document it was graded against: verdicts.parquet has each
verdict's gold value (raw and canonical), details/ the same per document, and a failed document's
error in the scores may quote its gold. A private benchmark's gold must stay private while its
scores are published, so with `--no-gold` verdicts.parquet is published with those two columns
null, details/ is left out, and the scores' errors keep only their kind (`SystemFailed`). The
numbers are untouched: `oeb report` of the published folder gives the same table.
"""

from __future__ import annotations

import io
import json

import pyarrow as pa  # type: ignore[import-untyped]  # pyarrow ships no type information
import pyarrow.parquet as pq  # type: ignore[import-untyped]

GOLD_COLUMNS = ("gold_raw", "gold_canon")
LEFT_OUT = ("field_matching/details/",)


def _kind(error: object) -> object:
    """An error's kind (the text before its first colon), or the value as it is when not text."""
    return error.split(":", 1)[0].strip() if isinstance(error, str) else error


def _verdicts(data: bytes) -> bytes:
    table = pq.read_table(io.BytesIO(data))
    for name in GOLD_COLUMNS:
        if name in table.column_names:
            index = table.column_names.index(name)
            table = table.set_column(index, name, pa.nulls(len(table), table.schema.field(name).type))
    out = io.BytesIO()
    pq.write_table(table, out)
    return out.getvalue()


def _scores_jsonl(data: bytes) -> bytes:
    lines = []
    for text in data.decode("utf-8").splitlines():
        if text.strip():
            line = json.loads(text)
            if isinstance(line, dict) and "error" in line:
                line["error"] = _kind(line["error"])
            lines.append(json.dumps(line, ensure_ascii=False))
    return ("\n".join(lines) + "\n").encode() if lines else b""


def _scores_parquet(data: bytes) -> bytes:
    table = pq.read_table(io.BytesIO(data))
    if "error" in table.column_names and pa.types.is_string(table.schema.field("error").type):
        kinds = pa.array([_kind(error) for error in table["error"].to_pylist()], pa.string())
        table = table.set_column(table.column_names.index("error"), "error", kinds)
    out = io.BytesIO()
    pq.write_table(table, out)
    return out.getvalue()


_CHANGED = {
    "field_matching/verdicts.parquet": _verdicts,
    "field_matching/scores.jsonl": _scores_jsonl,
    "field_matching/scores.parquet": _scores_parquet,
}


def without_gold(files: dict[str, bytes]) -> dict[str, bytes]:
    """A run folder's files to publish (path under the run folder -> bytes) with no gold value."""
    kept = {}
    for path, data in files.items():
        if path.startswith(LEFT_OUT):
            continue
        change = _CHANGED.get(path)
        kept[path] = change(data) if change else data
    return kept
