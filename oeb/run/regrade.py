"""Grading every run folder under a prefix again, together: `oeb grade s3://bucket/runs/`.

Archived runs are regraded when the scorer or a gold changes. Grading them one after another would
leave a cluster idle at the end of each run, so every folder is planned first (a folder that cannot
be graded is reported and skipped), then all their scoring tasks go into one queue on one Ray
session, largest first whichever run they belong to, and each folder's results are written when its
documents are done. The grading cache of each run decides what is scored: only documents whose
prediction, gold, schema or scorer changed. With `out`, each run's inputs are copied under `out`
first (keeping its path below the prefix) and graded there, so the archive itself is not touched.
"""

from __future__ import annotations

import contextlib
import logging
from dataclasses import dataclass

from oeb import storage
from oeb.errors import OebError, RunFolderError, StorageError
from oeb.run import pages
from oeb.run.cluster import ray_session, worker_env
from oeb.run.engine import open_folder
from oeb.run.folder import RunFolder
from oeb.run.grade_stage import Graded, Grading, finish, prepare, score_all
from oeb.run.results import SCORER

log = logging.getLogger(__name__)

SETTINGS = "settings.json"
_INPUTS = ("settings.json", "config.yaml", "records/", "predictions/")
"""What a copy to `out` takes from a run, whatever `out` holds already."""
_CACHES = (f"{SCORER}/cache/", f"{SCORER}/{pages.FILE}")
"""What a copy to `out` takes only where `out` has none yet: what grading there would otherwise redo."""


@dataclass(frozen=True)
class Regraded:
    """Each graded run (by the URL its results were written to), the runs skipped and why, and the
    nodes that ran scoring tasks."""

    runs: dict[str, Graded]
    skipped: dict[str, str]
    nodes: frozenset[str]


def find_runs(prefix: str) -> list[str]:
    """The run folders under `prefix` (folders holding settings.json, at any depth), from one listing."""
    listing = storage.list_files(prefix)
    folders = {path.removesuffix(SETTINGS).rstrip("/") for path in listing if path.rsplit("/", 1)[-1] == SETTINGS}
    return sorted(storage.join(prefix.rstrip("/"), folder) for folder in folders)


def is_prefix_of_runs(url: str) -> bool:
    """True for a folder that is not a run itself (no predictions/) but holds run folders."""
    return not storage.is_dir(storage.join(url, "predictions")) and bool(find_runs(url))


def copy_run(source: str, target: str) -> None:
    """Copy a run's inputs to `target`, and the grading caches `target` does not have yet."""
    existing = storage.list_files(target)
    paths = [
        path
        for path in storage.list_files(source)
        if path.startswith(_INPUTS) or (path.startswith(_CACHES) and path not in existing)
    ]
    for path, data in storage.read_many(source, paths).items():
        if isinstance(data, StorageError):
            raise data
        storage.write_bytes(storage.join(target, path), data)


def regrade(
    prefix: str,
    *,
    out: str | None = None,
    partial: bool = False,
    details: bool = True,
    address: str | None = None,
    force_unlock: bool = False,
) -> Regraded:
    """Grade every run folder under `prefix` again, in one Ray session (results beside each run, or
    under `out`), holding the lock of every folder written until its results are."""
    runs = find_runs(prefix)
    if not runs:
        raise RunFolderError(f"no run folder under {prefix} (a run folder holds settings.json); give a run or a prefix")
    skipped: dict[str, str] = {}
    gradings: list[Grading] = []
    with contextlib.ExitStack() as locks, ray_session(address, worker_env()):
        try:
            for url in runs:
                try:
                    with contextlib.ExitStack() as lock:
                        gradings.append(_prepare(url, prefix, out, partial, details, force_unlock, lock))
                        locks.enter_context(lock.pop_all())
                except OebError as error:
                    log.warning("%s skipped: %s", url, error)
                    skipped[url] = str(error)
        except BaseException:
            for grading in gradings:
                grading.out.discard()
            raise
        nodes = score_all(gradings)
        graded = {grading.folder.url: finish(grading, nodes) for grading in gradings}
    return Regraded(graded, skipped, frozenset(nodes))


def _prepare(
    url: str, prefix: str, out: str | None, partial: bool, details: bool, force: bool, lock: contextlib.ExitStack
) -> Grading:
    """One run's grading, its written folder locked (and, for `out`, its inputs copied there first)."""
    folder, dataset, rows, brought = open_folder(url)
    if out is not None:
        folder = RunFolder(storage.join(out, url.removeprefix(prefix.rstrip("/")).strip("/") or folder.name))
    lock.enter_context(folder.locked("oeb grade", force=force))
    if out is not None:
        copy_run(url, folder.url)
    return prepare(folder, dataset, rows, partial=partial, details=details, brought=brought)
