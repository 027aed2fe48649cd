"""`oeb dataset init`: a dataset without gold from a folder of PDFs and a schema (docs/own-documents.md).

The dataset is in oeb's layout (`pdfs/<doc_id>.pdf`, `schemas/<name>.json`, `manifest.parquet`) with
an empty gt_path column: `oeb.dataset` opens it as gold-less, runs predict on it, and grading waits
for a gold drafted from the runs (`oeb.gold.draft`). A PDF that cannot be read (or is encrypted) is
left out with one line naming it; the manifest is written last, so a dataset that stopped half way
is never opened.
"""

from __future__ import annotations

import fnmatch
import io
import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

import pyarrow as pa  # type: ignore[import-untyped]  # pyarrow ships no type information

from oeb import storage
from oeb._manifest import is_file_name
from oeb.dataset import DEFAULT_MANIFEST
from oeb.errors import SchemaError, UsageError

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Source:
    """One PDF found: the file, its path relative to the folder given (for --schema-for), its schema's file."""

    path: Path
    relative: str
    schema: Path


@dataclass(frozen=True)
class Initialised:
    """What `init_dataset` wrote: the documents by id, and the PDFs left out with the reason."""

    url: str
    written: dict[str, str]
    left_out: list[tuple[str, str]]


def read_schema(path: Path) -> dict[str, Any]:
    """A JSON Schema file, checked as JSON Schema (its meta-schema) and as the scorer reads it; one
    line (`UsageError`) otherwise."""
    import jsonschema  # type: ignore[import-untyped]

    from oeb.schema_refs import check_references
    from oeb.scoring.schema import resolve_schema

    try:
        schema = json.loads(path.read_text(encoding="utf-8-sig"))
    except OSError as error:
        raise UsageError(f"the schema {path} cannot be read ({error.strerror}); give a JSON Schema file") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise UsageError(f"the schema {path} is not JSON ({error}); give a JSON Schema file") from None
    if not isinstance(schema, dict) or not schema:
        raise UsageError(f'the schema {path} is not a JSON object; a JSON Schema is an object such as {{"type": ...}}')
    try:
        jsonschema.validators.validator_for(schema).check_schema(schema)
    except jsonschema.SchemaError as error:
        where = "/".join(str(part) for part in error.absolute_path) or "the top"
        raise UsageError(f"the schema {path} is not JSON Schema (at {where}: {error.message}); fix it") from None
    try:
        check_references(schema, str(path))
        resolve_schema(schema)
    except SchemaError as error:
        raise UsageError(f"the schema {path} cannot be used to score: {error}") from None
    return schema


def _pdfs(given: Path) -> list[tuple[Path, str]]:
    """The PDFs of a file or folder (recursively, in path order), each with its path relative to it."""
    if given.is_dir():
        found = sorted(p for p in given.rglob("*") if p.is_file() and p.suffix.lower() == ".pdf")
        return [(path, path.relative_to(given).as_posix()) for path in found]
    if given.is_file():
        return [(given, given.name)]
    raise UsageError(f"no file or folder at {given}; give PDF files or folders holding them")


def parse_schema_for(pairs: Sequence[str]) -> list[tuple[str, Path]]:
    """`GLOB=FILE` pairs, in the order given (the first glob that matches a PDF picks its schema)."""
    parsed = []
    for pair in pairs:
        glob, separator, file = pair.partition("=")
        if not separator or not glob or not file:
            raise UsageError(f"--schema-for {pair!r}: write GLOB=FILE, e.g. 'invoices/*.pdf=invoice.json'")
        parsed.append((glob, Path(file)))
    return parsed


def sources(pdfs: Sequence[str], schema: Path, schema_for: Sequence[tuple[str, Path]]) -> list[Source]:
    """Every PDF given, with its schema file: the first --schema-for glob matching its relative path, else
    --schema."""
    found = []
    for given in pdfs:
        for path, relative in _pdfs(Path(given)):
            chosen = next((file for glob, file in schema_for if fnmatch.fnmatchcase(relative, glob)), schema)
            found.append(Source(path, relative, chosen))
    if not found:
        raise UsageError(f"no PDF in {', '.join(pdfs)}; give PDF files or folders holding *.pdf")
    return found


def pdf_problem(data: bytes) -> str | None:
    """Why a PDF cannot be benchmarked (encrypted, unreadable, no pages), or None."""
    import pypdf

    logging.getLogger("pypdf").setLevel(logging.ERROR)
    try:
        reader = pypdf.PdfReader(io.BytesIO(data))
        if reader.is_encrypted:
            return "it is encrypted; save a copy without a password"
        if not reader.pages:
            return "it has no pages"
    except Exception as error:  # a third-party parser on any file: unreadable is the answer
        return f"it is not a readable PDF ({type(error).__name__})"
    return None


def unique_id(stem: str, taken: set[str]) -> str:
    """The file name without `.pdf`, made unique ignoring case (`-2`, `-3`, ...)."""
    doc_id = stem if is_file_name(stem) else "document"
    candidate, number = doc_id, 1
    while candidate.casefold() in taken:
        number += 1
        candidate = f"{doc_id}-{number}"
    taken.add(candidate.casefold())
    return candidate


def init_dataset(pdfs: Sequence[str], schema: str, schema_for: Sequence[str], out: str) -> Initialised:
    """Write the gold-less dataset at `out` (local, s3://, hf://); refused when `out` holds a manifest."""
    pairs = parse_schema_for(schema_for)
    schemas = {path: read_schema(path) for path in {Path(schema), *(file for _, file in pairs)}}
    found = sources(pdfs, Path(schema), pairs)
    out = out.rstrip("/")
    if storage.exists(storage.join(out, DEFAULT_MANIFEST)):
        raise UsageError(f"{out} already holds a dataset ({DEFAULT_MANIFEST}); give a new --out")
    names = _schema_names(schemas)
    taken: set[str] = set()
    rows: list[dict[str, Any]] = []
    left_out: list[tuple[str, str]] = []
    written: dict[str, str] = {}
    for source in found:
        data = source.path.read_bytes()
        problem = pdf_problem(data)
        if problem is not None:
            log.warning("left out %s: %s", source.path, problem)
            left_out.append((str(source.path), problem))
            continue
        doc_id = unique_id(PurePosixPath(source.relative).stem, taken)
        storage.write_bytes(storage.join(out, "pdfs", f"{doc_id}.pdf"), data)
        text = json.dumps(schemas[source.schema], ensure_ascii=False, sort_keys=True)
        rows.append({"doc_id": doc_id, "doc_path": f"pdfs/{doc_id}.pdf", "gt_path": None, "schema": text})
        written[doc_id] = str(source.path)
    if not rows:
        raise UsageError(f"no readable PDF among the {len(found)} given; nothing was written")
    for path, name in names.items():
        storage.write_json(storage.join(out, "schemas", name), schemas[path])
    table = pa.table(
        {
            "doc_id": pa.array([r["doc_id"] for r in rows], pa.string()),
            "doc_path": pa.array([r["doc_path"] for r in rows], pa.string()),
            "gt_path": pa.array([None] * len(rows), pa.string()),
            "schema": pa.array([r["schema"] for r in rows], pa.string()),
        }
    )
    storage.write_parquet(storage.join(out, DEFAULT_MANIFEST), table)  # last: the dataset exists once whole
    return Initialised(out, written, left_out)


def _schema_names(schemas: dict[Path, dict[str, Any]]) -> dict[Path, str]:
    """Each schema file's name in the dataset's schemas/ (made unique)."""
    names: dict[Path, str] = {}
    taken: set[str] = set()
    for path in sorted(schemas):
        names[path] = unique_id(path.stem, taken) + ".json"
    return names
