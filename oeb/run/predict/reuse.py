"""Answers an earlier run already paid for (`oeb run --reuse RUN_OR_PREFIX`, docs/money.md).

A document's earlier answer is reused when the question is identical: the same system, the same
options except those that only say where the system is reached (`Adapter.located`, such as a base
URL), the same PDF bytes, the same schema as asked (after the conventions) and the same adapter
package and version. The last three come from the record's `question` block; a record without one
(written before it existed) is never reused, nor is a failed or unread record. Earlier answers are
looked up by document id: a run over the same dataset, or over another that names the same PDF
alike. The engine saves the found record with `reused_from` (the run that paid for it).

`load` takes run folders, or prefixes holding run folders at any depth (local or `s3://`), with one
listing per URL given; it reads each run's settings.json, and records only when asked for them.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from oeb import storage
from oeb.dataset import Dataset, Row
from oeb.errors import RunFolderError, StorageError
from oeb.run.folder.run_folder import RunFolder
from oeb.run.plan.config import Config
from oeb.systems import Adapter, Question, question_identity, question_schema

SETTINGS = "settings.json"
RECORDS = "records/"


@dataclass(frozen=True)
class EarlierRun:
    """A run folder that may hold answers: its URL, system, options (less located ones) and records."""

    url: str
    system: str
    options: dict[str, Any]
    records: frozenset[str]
    """Document ids that have a record."""


class ReuseIndex:
    """The earlier runs `--reuse` named, asked document by document."""

    def __init__(self, runs: Sequence[EarlierRun]) -> None:
        self.runs = tuple(runs)

    @classmethod
    def load(cls, urls: Sequence[str]) -> ReuseIndex:
        """The run folders under `urls`; refuses (one line, `RunFolderError`) a URL that cannot be listed or
        that holds no run folder."""
        runs: list[EarlierRun] = []
        for url in urls:
            runs += _runs_under(url)
        return cls(runs)

    def find(self, config: Config, dataset: Dataset, row: Row) -> tuple[dict[str, Any], str] | None:
        """An earlier answer to the question `config` asks of `row`, and the run that paid for it."""
        return self.find_many(config, dataset, [row]).get(row.doc_id)

    def find_many(self, config: Config, dataset: Dataset, rows: Sequence[Row]) -> dict[str, tuple[dict[str, Any], str]]:
        """`find` for every row, by document id; each run's records are read concurrently, and a
        document's PDF is hashed only when an earlier run holds a record of it. The newest answer wins."""
        adapter = config.adapter
        options = _unlocated(adapter, adapter.options())
        runs = [
            run
            for run in self.runs
            if run.system == adapter.name and _unlocated(adapter, adapter.with_defaults(run.options)) == options
        ]
        wanted = {row.doc_id: row for row in rows if any(row.doc_id in run.records for run in runs)}
        asked: dict[str, dict[str, Any]] = {}
        found: dict[str, tuple[dict[str, Any], str]] = {}
        for run in runs:
            ids = [doc_id for doc_id in wanted if doc_id in run.records]
            listed = {f"{RECORDS}{doc_id}.json": 0 for doc_id in ids}
            for doc_id, record in RunFolder(run.url).records(ids, listed).items():
                if doc_id not in asked:
                    asked[doc_id] = _question(adapter, dataset, wanted[doc_id])
                if not _answers(record, asked[doc_id]):
                    continue
                earlier = found.get(doc_id)
                if earlier is None or str(record.get("captured_at")) > str(earlier[0].get("captured_at")):
                    found[doc_id] = (record, str(record.get("reused_from") or run.url))
        return found


def _unlocated(adapter: Adapter, options: dict[str, Any]) -> dict[str, Any]:
    """The options that change the answer: all but those saying where the system is reached."""
    plain: dict[str, Any] = json.loads(json.dumps({k: v for k, v in options.items() if k not in adapter.located}))
    return plain


def _question(adapter: Adapter, dataset: Dataset, row: Row) -> dict[str, Any]:
    """The question block a record of `row` asked now would carry."""
    return question_identity(adapter, Question(dataset.document(row), question_schema(dict(row.schema))))


def _answers(record: dict[str, Any], question: dict[str, Any]) -> bool:
    """Whether `record` is a successful answer to this very question (its run's system and options
    were compared already: a run folder asks one system with one set of options)."""
    if record.get("error") is not None or record.get("unread") or record.get("output") is None:
        return False
    asked = record.get("question")
    if not isinstance(asked, dict) or question.get("pdf_sha256") is None:
        return False
    return all(asked.get(key) == question.get(key) for key in ("pdf_sha256", "schema_sha256", "adapter"))


def _runs_under(url: str) -> list[EarlierRun]:
    """The run folders at or under `url`, from one listing."""
    root = str(storage.local_path(url)) if storage.is_local(url) else url.rstrip("/")
    try:
        listing = storage.list_files(root)
    except StorageError as error:
        raise RunFolderError(f"--reuse {url}: cannot be read ({error})") from None
    folders = sorted(path.removesuffix(SETTINGS).rstrip("/") for path in listing if path.rsplit("/", 1)[-1] == SETTINGS)
    if not folders:
        raise RunFolderError(
            f"--reuse {url}: not a run folder (one holds settings.json and records/) nor a prefix holding "
            "run folders; give an earlier run's folder or the --out it ran under"
        )
    return [_run(storage.join(root, folder) if folder else root, folder, listing) for folder in folders]


def _run(url: str, folder: str, listing: dict[str, int]) -> EarlierRun:
    """One run folder of a listing, from its settings.json."""
    prefix = f"{folder}/{RECORDS}" if folder else RECORDS
    records = frozenset(
        path.removeprefix(prefix).removesuffix(".json")
        for path in listing
        if path.startswith(prefix) and path.endswith(".json") and "/" not in path.removeprefix(prefix)
    )
    try:
        settings = storage.read_json(storage.join(url, SETTINGS))
    except StorageError as error:
        raise RunFolderError(f"--reuse: the run {url} cannot be read ({error})") from None
    if not isinstance(settings, dict) or not isinstance(settings.get("options"), dict):
        raise RunFolderError(
            f"--reuse: {storage.join(url, SETTINGS)} is not a run's settings (no options); fix or remove it"
        )
    return EarlierRun(url, str(settings.get("system")), settings["options"], records)
