"""The run folder (docs/architecture.md): the single source of truth of a run, on disk or in object storage.

A record is what marks a document done, so a document's prediction is written before its record:
a crash between the two writes causes a re-ask, never a record without its prediction. A failed
record is never written over a success (a resume asks only missing and failed documents), so no
stale prediction can sit beside a failed record; grading lets the record win anyway.
"""

from __future__ import annotations

import contextlib
import datetime
import json
import logging
import re
import secrets
from collections.abc import Iterable, Iterator
from typing import Any

from oeb import _json, storage
from oeb.errors import RunFolderError, StorageError, StorageFormatError, StorageNotFoundError, StorageOutage
from oeb.run.folder.lock import FolderLock, hold
from oeb.run.plan.config import to_yaml

log = logging.getLogger(__name__)

IDENTITY = ("system", "options", "dataset", "manifest", "task", "rows")
"""What a resume must ask exactly as the run did (after a JSON round trip)."""
TASK = "extract"


def new_name(label: str) -> str:
    """`<label>-<YYYYMMDD>-<HHMMSS>-<4 hex>`, the launch time in UTC; unsafe characters become `_`."""
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", label.replace("/", "__"))
    now = datetime.datetime.now(datetime.UTC)
    return f"{safe}-{now:%Y%m%d-%H%M%S}-{secrets.token_hex(2)}"


class RunFolder:
    """One run's folder, named by a URL (a path, `file://` or `s3://`)."""

    def __init__(self, url: str) -> None:
        self.url = str(storage.local_path(url)) if storage.is_local(url) else url.rstrip("/")
        self.name = self.url.rstrip("/").rsplit("/", 1)[-1]
        self.lock: FolderLock | None = None
        """The folder's lock while a command holds it (`locked`); every save checks it is still held."""

    def path(self, *parts: str) -> str:
        return storage.join(self.url, *parts)

    def record_url(self, doc_id: str) -> str:
        return self.path("records", f"{doc_id}.json")

    def prediction_url(self, doc_id: str) -> str:
        return self.path("predictions", f"{doc_id}.json")

    @contextlib.contextmanager
    def locked(self, command: str, *, force: bool = False) -> Iterator[None]:
        """Hold the folder's lock (`oeb.run.folder.lock`) while the block writes; first remove what writes
        of a killed process left."""
        with hold(self.url, command, force=force) as lock:
            self.lock = lock
            try:
                removed = self.remove_temporaries()
                if removed:
                    log.info("%s: removed %d temporary files of cut-short writes", self.name, len(removed))
                yield
            finally:
                self.lock = None

    def listing(self) -> dict[str, int]:
        """Every file of the run (relative path -> size), from one listing."""
        return storage.list_files(self.url)

    def write_config(self, tree: dict[str, Any]) -> None:
        """config.yaml: the config as resolved (what `oeb resume` reads)."""
        storage.write_text(self.path("config.yaml"), to_yaml(tree))

    def launch(self, tree: dict[str, Any], settings: dict[str, Any]) -> None:
        """Create a new run's folder holding config.yaml and settings.json, so that a kill at any
        moment leaves no folder or one that `oeb resume` continues. On local disk both are written
        into a hidden folder beside it, renamed into place at once; on object storage each file is
        one object and config.yaml comes first (a folder with config.yaml alone is resumed as a run
        that asked nothing yet)."""
        if not storage.is_local(self.url):
            self.write_config(tree)
            self.write_settings(settings)
            return
        final = storage.local_path(self.url)
        staging = final.parent / f".{final.name}.launch"
        staging.mkdir(parents=True)
        storage.write_text(str(staging / "config.yaml"), to_yaml(tree))
        storage.write_json(str(staging / "settings.json"), settings)
        staging.rename(final)

    def settings(self) -> dict[str, Any] | None:
        """settings.json, or None when the folder has none (a brought folder); corrupt -> refused."""
        try:
            settings = storage.read_json(self.path("settings.json"))
        except StorageNotFoundError:
            return None
        except StorageFormatError as error:
            raise RunFolderError(f"{error}; fix or remove settings.json") from None
        if not isinstance(settings, dict):
            raise RunFolderError(f"{self.path('settings.json')} is not a JSON object; fix or remove it")
        return settings

    def write_settings(self, settings: dict[str, Any]) -> None:
        """settings.json: what the run asks (its identity) and when it started."""
        storage.write_json(self.path("settings.json"), settings)

    def save(self, doc_id: str, record: dict[str, Any]) -> None:
        """Save one document's outcome: the prediction first (successes only), then the record."""
        if self.lock is not None:
            self.lock.check()
        if record.get("error") is None and not record.get("unread") and record.get("output") is not None:
            storage.write_json(self.prediction_url(doc_id), record["output"])
        storage.write_json(self.record_url(doc_id), record)

    def remove_temporaries(self) -> list[str]:
        """Delete what writes cut short by a killed process left on local disk: the temporary files
        (`.<name>.<random>.tmp`, `oeb.storage`) never renamed into place. Object storage has none.
        Only the holder of the folder's lock may call it: another writer's temporary files are live."""
        if not storage.is_local(self.url):
            return []
        root = storage.local_path(self.url)
        removed = sorted(str(path.relative_to(root)) for path in root.rglob(".*.tmp") if path.is_file())
        for path in removed:
            (root / path).unlink(missing_ok=True)
        return removed

    def records(self, doc_ids: Iterable[str], listing: dict[str, int]) -> dict[str, dict[str, Any]]:
        """The records that exist among `doc_ids` (an unreadable record counts as none: it is re-asked;
        storage that is down raises, since counting its records as none would buy them again)."""
        paths = [f"records/{doc_id}.json" for doc_id in doc_ids if f"records/{doc_id}.json" in listing]
        found = {}
        for path, content in storage.read_many(self.url, paths).items():
            if isinstance(content, StorageOutage):
                raise content
            if isinstance(content, StorageError):
                continue
            try:
                record = _json.loads(content.decode("utf-8"))
            except ValueError:
                continue
            if _is_record(record):
                found[path.removeprefix("records/").removesuffix(".json")] = record
        return found


def _is_record(value: Any) -> bool:
    """Whether a parsed file has the shape the engine reads from a record: an `error` that is null or
    an object, a `cost` that is null or an object whose `usd` and `credits` are null or numbers (a
    hand-edited file may have neither)."""
    if not isinstance(value, dict) or not isinstance(value.get("error"), dict | None):
        return False
    cost = value.get("cost")
    if cost is None:
        return True
    if not isinstance(cost, dict):
        return False
    amounts = [cost.get(unit) for unit in ("usd", "credits")]
    return all(a is None or (isinstance(a, int | float) and not isinstance(a, bool)) for a in amounts)


def identity(settings: dict[str, Any]) -> dict[str, Any]:
    """The keys of settings.json a resume must ask as the run did, as JSON reads them back."""
    same: dict[str, Any] = json.loads(json.dumps({key: settings.get(key) for key in IDENTITY}))
    return same
