"""A manifest table turned into checked rows: checks 1 and 5-9 of docs/datasets.md, in that order.

Pure functions over a pyarrow table; nothing here touches a file. Each refusal is a
`ManifestError` naming the manifest, the row (numbered from 1) and the fix.
"""

from __future__ import annotations

import unicodedata
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

import pyarrow as pa  # type: ignore[import-untyped]  # pyarrow ships no type information

from oeb import _json
from oeb.errors import ManifestError, SchemaError
from oeb.schema_refs import check_references
from oeb.scoring.schema import resolve_schema

REQUIRED_COLUMNS = ("doc_id", "doc_path", "gt_path", "schema")
OTHER_SUITE = "other"
_KNOWN_COLUMNS = (*REQUIRED_COLUMNS, "suite")
_DUPLICATE_GROUPS_SHOWN = 3


@dataclass(frozen=True)
class Row:
    """One checked manifest row: a document, its gold and the JSON Schema it is asked against.

    Paths are relative to the dataset root, in normalised POSIX form (`./pdfs/a.pdf` -> `pdfs/a.pdf`).
    """

    number: int
    doc_id: str
    doc_path: str
    gt_path: str
    schema: Mapping[str, Any]
    suite: str
    extra: Mapping[str, Any]


def normalised_manifest_path(manifest: str) -> str:
    """The manifest's path inside the dataset in POSIX form, refusing one outside it (step 1)."""
    problem = _relative_path_problem(manifest)
    if problem is not None:
        raise ManifestError(
            f"manifest {manifest!r} is not a path inside the dataset ({problem}); "
            "give it relative to the dataset, e.g. manifests/sample.parquet"
        )
    return PurePosixPath(manifest).as_posix()


def rows_from_table(table: pa.Table, manifest: str) -> tuple[Row, ...]:
    """The rows after steps 5-9: columns, ids and paths, non-empty, unique ids, then schema and suite."""
    missing = [column for column in REQUIRED_COLUMNS if column not in table.column_names]
    if missing:
        raise ManifestError(
            f"{manifest} has no column {missing[0]!r}; a manifest needs the columns "
            f"{', '.join(REQUIRED_COLUMNS)} and this one has {', '.join(table.column_names) or 'none'}"
        )
    records = table.to_pylist()
    if is_goldless(table):  # the gold's place once drafted, so every row is checked as usual
        records = [record | {"gt_path": GOLDLESS_GOLD.format(doc_id=record["doc_id"])} for record in records]
    paths = [_checked_paths(number, record, manifest) for number, record in enumerate(records, start=1)]
    if not records:
        raise ManifestError(f"{manifest} names no rows; add one row per document")
    _check_unique_ids([doc_id for doc_id, _, _ in paths], manifest)
    return tuple(
        Row(
            number=number,
            doc_id=doc_id,
            doc_path=doc_path,
            gt_path=gt_path,
            schema=_schema(record["schema"], f"{manifest} row {number} ({doc_id})"),
            suite=_suite(record.get("suite"), f"{manifest} row {number} ({doc_id})"),
            extra={key: value for key, value in record.items() if key not in _KNOWN_COLUMNS},
        )
        for number, record, (doc_id, doc_path, gt_path) in zip(range(1, len(records) + 1), records, paths, strict=True)
    )


GOLDLESS_GOLD = "gold/{doc_id}.json"
"""Where a gold-less dataset's rows will have their gold once it is drafted (`oeb gold draft`)."""


def is_goldless(table: pa.Table) -> bool:
    """A manifest whose gt_path column holds no value at all: a dataset without gold yet
    (`oeb dataset init`, docs/own-documents.md). A column with some values is an ordinary manifest."""
    return (
        "gt_path" in table.column_names and table.num_rows > 0 and table.column("gt_path").null_count == table.num_rows
    )


def is_file_name(doc_id: object) -> bool:
    """True for an id that is one path component: it names `records/<id>.json` and friends. A control
    character (a NUL, a newline) is refused too: no file system takes a NUL, and a newline would split
    every one-line message and log line that names the id."""
    return (
        isinstance(doc_id, str)
        and doc_id not in ("", ".", "..")
        and PurePosixPath(doc_id).name == doc_id
        and not _has_control_character(doc_id)
    )


def _has_control_character(text: str) -> bool:
    return any(unicodedata.category(char) == "Cc" for char in text)


def _relative_path_problem(path: object) -> str | None:
    """Why `path` is not a relative path to a file inside the dataset, or None when it is one."""
    if not isinstance(path, str) or not path:
        return "it is not a non-empty string"
    if _has_control_character(path):
        return "it holds a control character"
    pure = PurePosixPath(path)
    if pure.is_absolute():
        return "it is absolute"
    if ".." in pure.parts:
        return "it contains '..'"
    if not pure.suffix:
        return "it has no suffix"
    return None


def _checked_paths(number: int, record: Mapping[str, Any], manifest: str) -> tuple[str, str, str]:
    """Step 6 for one row: the id, then the document path, then the gold path."""
    doc_id = record["doc_id"]
    if not is_file_name(doc_id):
        raise ManifestError(
            f"{manifest} row {number}: doc_id {doc_id!r} is not a file name (one path component); "
            "it names the row's prediction and record, so use an id like short__invoice_4417 (no '/', no control "
            "characters)"
        )
    doc_path = record["doc_path"]
    problem = _relative_path_problem(doc_path)
    if problem is not None:
        raise ManifestError(
            f"{manifest} row {number} ({doc_id}): doc_path {doc_path!r} is not a relative path to a file "
            f"inside the dataset ({problem}); use e.g. pdfs/{doc_id}.pdf"
        )
    gt_path = record["gt_path"]
    problem = _relative_path_problem(gt_path)
    if problem is None and PurePosixPath(gt_path).name != f"{doc_id}.json":
        problem = f"its file name is not {doc_id}.json"
    if problem is not None:
        raise ManifestError(
            f"{manifest} row {number} ({doc_id}): gt_path {gt_path!r} is not a relative path inside the "
            f"dataset named for its row ({problem}); use e.g. gold/{doc_id}.json"
        )
    return doc_id, PurePosixPath(doc_path).as_posix(), PurePosixPath(gt_path).as_posix()


def _check_unique_ids(doc_ids: Sequence[str], manifest: str) -> None:
    """Step 8: ids name files, so they must differ ignoring case (macOS and Windows disks)."""
    groups: dict[str, list[str]] = defaultdict(list)
    for doc_id in doc_ids:
        groups[doc_id.casefold()].append(doc_id)
    repeated = [group for group in groups.values() if len(group) > 1]
    if repeated:
        shown = "; ".join(" and ".join(group) for group in repeated[:_DUPLICATE_GROUPS_SHOWN])
        hidden = len(repeated) - _DUPLICATE_GROUPS_SHOWN
        more = f" (and {hidden} more)" if hidden > 0 else ""
        raise ManifestError(
            f"{manifest}: doc_ids occur more than once ignoring case: {shown}{more}; "
            "make every doc_id unique ignoring case"
        )


def _schema(raw: object, where: str) -> dict[str, Any]:
    """Step 9: the schema cell is JSON text (str or bytes) holding a non-empty JSON object."""
    try:
        if not isinstance(raw, str | bytes):
            raise ValueError(f"a {type(raw).__name__}, not text")
        schema = _json.loads(raw)
    except ValueError as error:
        raise ManifestError(
            f"{where}: schema is not JSON ({error}); the schema column holds the JSON Schema "
            "as text, written with json.dumps"
        ) from error
    if not isinstance(schema, dict) or not schema:
        raise ManifestError(
            f"{where}: schema {repr(raw)[:80]} is not a non-empty JSON object; "
            "it must be the JSON Schema of the extraction"
        )
    try:  # refused now, not after a run has paid for every answer that could then never be graded
        check_references(schema, where)
    except SchemaError as error:
        raise ManifestError(str(error)) from None
    try:
        resolve_schema(schema)
    except SchemaError as error:
        raise ManifestError(f"{where}: the scorer cannot use the schema: {error}") from None
    except RecursionError:
        raise ManifestError(f"{where}: the schema nests too deeply to score (hundreds of levels); flatten it") from None
    return schema


def _suite(suite: object, where: str) -> str:
    """Step 9: a string names the suite; null, blank or no column at all mean `other`."""
    if suite is None or (isinstance(suite, str) and not suite.strip()):
        return OTHER_SUITE
    if not isinstance(suite, str):
        raise ManifestError(f"{where}: suite {suite!r} is not a string; give a string, or null (meaning {OTHER_SUITE})")
    return suite
