"""The spill folder: answers a run could not save because its storage failed, kept on local disk.

When a run's storage stays down past `storage.retry_s`, or its disk is full or read-only, the answers
already bought and not yet saved would be lost with the process. They are written here instead, one
file per document (`records/<id>.json`, and `jobs/<id>.json` for a vendor job whose handle could not
be written into the run folder; `batches/<name>.json` for a provider batch whose file could not be),
under a folder named after the run and a digest of its URL, so two runs of one name never share it.
`oeb resume` imports them into the run folder before it asks anything (`pending`, then `clear`), so
nothing is bought twice. Where the spill folders live:
`OEB_SPILL_DIR`, else `$XDG_CACHE_HOME/oeb/spill`, else `~/.cache/oeb/spill` (docs/storage.md).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import shutil
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from oeb import _json

log = logging.getLogger(__name__)

SPILL_ENV = "OEB_SPILL_DIR"
RECORDS = "records"
JOBS = "jobs"
BATCHES = "batches"
RUN_FILE = "run.json"


def root() -> Path:
    """Where spill folders are made: `OEB_SPILL_DIR`, else the user's cache folder."""
    chosen = os.environ.get(SPILL_ENV)
    if chosen:
        return Path(chosen).expanduser()
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "oeb" / "spill"


def folder_of(run_url: str) -> Path:
    """The spill folder of the run folder at `run_url`: its name and a digest of the whole URL."""
    name = run_url.rstrip("/").rsplit("/", 1)[-1] or "run"
    digest = hashlib.sha256(run_url.rstrip("/").encode()).hexdigest()[:12]
    return root() / f"{name}-{digest}"


@dataclass
class Spill:
    """One run's spill, filled from the driver's save threads (one lock for the counts)."""

    run_url: str
    cause: str
    path: Path = field(init=False)
    kept: int = 0
    jobs_kept: int = 0
    batches_kept: int = 0
    lost: list[str] = field(default_factory=list)
    """Documents whose answer could not be kept anywhere (their job handles are printed)."""
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def __post_init__(self) -> None:
        self.path = folder_of(self.run_url)

    def keep(self, doc_id: str, record: dict[str, Any]) -> bool:
        """Write the document's record into the spill; False (and the document counted lost) when
        even local disk refuses."""
        return self._write(RECORDS, doc_id, record)

    def keep_job(self, doc_id: str, asking: dict[str, Any]) -> bool:
        """Write a submitted job's handle that the run folder could not take; printed when even that fails."""
        if self._write(JOBS, doc_id, asking):
            return True
        log.warning("%s: its vendor job could not be written anywhere; collect it by hand: %s", doc_id,
                    json.dumps(asking, ensure_ascii=False))  # fmt: skip
        return False

    def keep_batch(self, batch: dict[str, Any]) -> bool:
        """Write a provider batch's file (`oeb.batch.files`) that the run folder could not take;
        printed when even that fails, so the batch can still be collected by hand."""
        if self._write(BATCHES, str(batch["name"]), batch):
            return True
        log.warning("a provider batch could not be written anywhere; its documents are paid for: %s",
                    json.dumps(batch, ensure_ascii=False))  # fmt: skip
        return False

    def _write(self, kind: str, doc_id: str, value: dict[str, Any]) -> bool:
        target = self.path / kind / f"{doc_id}.json"
        temporary = target.with_name(f".{target.name}.tmp")
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            about = self.path / RUN_FILE
            if not about.exists():
                about.write_text(json.dumps({"run": self.run_url, "cause": self.cause}, ensure_ascii=False) + "\n")
            temporary.write_text(json.dumps(value, ensure_ascii=False) + "\n", encoding="utf-8")
            os.replace(temporary, target)
        except OSError as error:
            with contextlib.suppress(OSError):
                temporary.unlink(missing_ok=True)
            with self._lock:
                self.lost.append(doc_id)
            log.warning("%s: cannot keep %s in the spill folder %s: %s", self.run_url, doc_id, self.path, error)
            return False
        with self._lock:
            if kind == RECORDS:
                self.kept += 1
            elif kind == JOBS:
                self.jobs_kept += 1
            else:
                self.batches_kept += 1
        return True

    def line(self) -> str:
        """What was kept where, for the run's stop line."""
        parts = [f"{self.kept} answers"] if self.kept else []
        parts += [f"{self.jobs_kept} vendor job handles"] if self.jobs_kept else []
        parts += [f"{self.batches_kept} provider batches"] if self.batches_kept else []
        kept = f"{' and '.join(parts)} not saved are kept in {self.path}" if parts else "no answer was left unsaved"
        lost = f"; {len(self.lost)} could not be kept anywhere (asked again on resume)" if self.lost else ""
        return kept + lost


@dataclass(frozen=True)
class Spilled:
    """What a spill folder holds for a run: records and job handles by document."""

    path: Path
    records: dict[str, dict[str, Any]]
    jobs: dict[str, dict[str, Any]]
    batches: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Provider batch files by name."""

    def __bool__(self) -> bool:
        return bool(self.records or self.jobs or self.batches)


def pending(run_url: str) -> Spilled:
    """The spill of the run at `run_url` (empty when there is none); unreadable files are skipped
    with a warning (their documents are asked again)."""
    path = folder_of(run_url)
    found: dict[str, dict[str, dict[str, Any]]] = {RECORDS: {}, JOBS: {}, BATCHES: {}}
    for kind, kept in found.items():
        folder = path / kind
        if not folder.is_dir():
            continue
        for file in sorted(folder.glob("*.json")):
            if file.name.startswith("."):
                continue
            try:
                value = _json.loads(file.read_text(encoding="utf-8"))
            except (OSError, ValueError) as error:
                log.warning("%s: cannot read %s (%s); that document is asked again", run_url, file, error)
                continue
            if isinstance(value, dict):
                kept[file.stem] = value
    return Spilled(path, found[RECORDS], found[JOBS], found[BATCHES])


def clear(run_url: str) -> None:
    """Remove the run's spill once the run folder holds everything in it."""
    shutil.rmtree(folder_of(run_url), ignore_errors=True)
