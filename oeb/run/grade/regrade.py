"""Grading folders again: `oeb grade FOLDER` and `oeb grade s3://bucket/runs/` (docs/grading.md).

A run folder (it holds settings.json) is graded from its records whatever they hold, against the
dataset and rows it was run on; a brought folder (predictions/ only) against the dataset given.
Archived runs are regraded when the scorer or a gold changes. Grading them one after another would
leave a cluster idle at the end of each run, so every folder is planned first (a folder that cannot
be graded is reported and skipped), then all their scoring goes into one queue, largest first
whichever run it belongs to, and each folder's results are written when its documents are done.
The grading cache of each run decides what is scored: only documents whose prediction, gold, schema
or scorer changed. With `out`, each run's inputs are copied under `out` first (keeping its path
below the prefix) and graded there, so the archive itself is not touched.
"""

from __future__ import annotations

import contextlib
import logging
from dataclasses import dataclass
from typing import Any

from oeb import storage
from oeb.dataset import DEFAULT_MANIFEST, SAMPLE_DATASET, Dataset, Row, named_by_folder, open_dataset
from oeb.errors import OebError, RunFolderError, StorageError
from oeb.gold.check import applying
from oeb.gold.derivation import for_system, read_draft
from oeb.gold.where import configured
from oeb.run.cluster.session import session, timed, worker_env
from oeb.run.folder.run_folder import RunFolder
from oeb.run.grade import pages
from oeb.run.grade.results import SCORER
from oeb.run.grade.stage import Graded, Grader
from oeb.run.plan.config import Rows
from oeb.run.plan.selection import select

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
    """True for a folder that is not a run itself (no settings.json, no predictions/) but holds run folders."""
    if storage.exists(storage.join(url, SETTINGS)) or storage.is_dir(storage.join(url, "predictions")):
        return False
    return bool(find_runs(url))


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
    """Grade every run folder under `prefix` again, in one session (results beside each run, or
    under `out`), holding the lock of every folder written until its results are."""
    runs = find_runs(prefix)
    if not runs:
        raise RunFolderError(f"no run folder under {prefix} (a run folder holds settings.json); give a run or a prefix")
    skipped: dict[str, str] = {}
    opened: list[tuple[str, RunFolder, Dataset, tuple[Row, ...], bool]] = []
    for url in runs:
        try:
            opened.append((url, *open_folder(url)))
        except OebError as error:
            log.warning("%s skipped: %s", url, error)
            skipped[url] = str(error)
    documents = sum(len(rows) for _, _, _, rows, _ in opened)
    work = sum(_work(folder) for _, folder, _, _, _ in opened)
    graders: list[Grader] = []
    with contextlib.ExitStack() as stack, session(address, worker_env(), documents=documents, work=work):
        for url, folder, dataset, rows, brought in opened:
            try:
                with contextlib.ExitStack() as lock:
                    if out is not None:
                        folder = RunFolder(
                            storage.join(out, url.removeprefix(prefix.rstrip("/")).strip("/") or folder.name)
                        )
                    lock.enter_context(folder.locked("oeb grade", force=force_unlock))
                    if out is not None:
                        copy_run(url, folder.url)
                    draft = read_draft(dataset)  # and, on a drafted gold, the values this run helped decide
                    adjudicated = for_system(applying(configured(folder.url), dataset), draft, folder.settings() or {})
                    grader = lock.enter_context(
                        Grader(
                            folder,
                            dataset,
                            rows,
                            details=details,
                            partial=partial,
                            brought=brought,
                            adjudications=adjudicated,
                            draft=draft,
                        )
                    )
                    grader.plan()
                    stack.enter_context(lock.pop_all())
                    graders.append(grader)
            except OebError as error:
                log.warning("%s skipped: %s", url, error)
                skipped[url] = str(error)
        with timed("grading"):
            graded = {grader.folder.url: grader.finish() for grader in graders}
    nodes = frozenset(node for result in graded.values() for node in result.nodes)
    return Regraded(graded, skipped, nodes)


def grade_folder(
    url: str,
    *,
    dataset: str | None = None,
    manifest: str | None = None,
    partial: bool = False,
    details: bool = True,
    address: str | None = None,
    force_unlock: bool = False,
    adjudications: str | None = None,
) -> Graded:
    """Grade a run folder, or a brought folder of predictions, against its dataset, holding the
    folder's lock; in this process or on Ray as `oeb.run.cluster.session` decides for its size. The
    adjudication file (`adjudications`, else the one the folder's config.yaml names, else the dataset's
    own) is checked before anything is graded."""
    folder, opened, rows, brought = open_folder(url, dataset=dataset, manifest=manifest)
    if opened.goldless:
        raise opened.no_gold()
    draft = read_draft(opened)
    given = adjudications if adjudications is not None else configured(folder.url)
    adjudicated = for_system(applying(given, opened), draft, folder.settings() or {})
    with (
        folder.locked("oeb grade", force=force_unlock),
        session(address, worker_env(), documents=len(rows), work=_work(folder)),
        timed("grading"),
        Grader(
            folder,
            opened,
            rows,
            partial=partial,
            details=details,
            brought=brought,
            adjudications=adjudicated,
            draft=draft,
        ) as grader,
    ):
        return grader.finish()


def _work(folder: RunFolder) -> int:
    """The bytes a grading of `folder` scores, about: its predictions and as much gold (one listing)."""
    return 2 * sum(size for path, size in folder.listing().items() if path.startswith("predictions/"))


def open_folder(
    url: str, *, dataset: str | None = None, manifest: str | None = None
) -> tuple[RunFolder, Dataset, tuple[Row, ...], bool]:
    """A folder to grade, checked: the folder, its dataset, the rows it answers, whether it was brought
    (no settings.json). A run folder needs no predictions/ (all its documents may have failed)."""
    folder = RunFolder(url)
    if not storage.is_dir(folder.url):
        raise RunFolderError(f"no folder at {url}; give the folder holding predictions/<id>.json")
    settings = folder.settings() or {}
    if not settings and not storage.is_dir(folder.path("predictions")):
        if folder.name == "predictions":
            parent = folder.url.rsplit("/", 1)[0]
            raise RunFolderError(f"{url} is the predictions folder itself; give its parent, {parent}")
        raise RunFolderError(f"{url} has no predictions/; a folder to grade holds predictions/<id>.json")
    brought = not settings.get("system")
    named = settings.get("dataset")
    if named and dataset is None:  # a URL to fetch only when the user names it (--dataset)
        named = named_by_folder(named, folder.url)
    if named and settings.get("dataset_commit"):
        named = f"{named}@{settings['dataset_commit']}"
    opened = open_dataset(dataset or named or SAMPLE_DATASET, manifest or settings.get("manifest") or DEFAULT_MANIFEST)
    if not brought:
        _same_dataset(folder, settings, opened)
    chosen = settings.get("rows") or {}
    rows, _ = select(opened.rows, Rows(chosen.get("sample", 0), chosen.get("limit", 0), _ids(chosen.get("only"))))
    return folder, opened, rows, brought


def _ids(only: list[str] | None) -> tuple[str, ...] | None:
    return None if only is None else tuple(only)


def _same_dataset(folder: RunFolder, settings: dict[str, Any], dataset: Dataset) -> None:
    draft = read_draft(dataset)
    if draft is not None and all(settings.get(key) == draft.source.get(key) for key in ("dataset", "manifest")):
        return  # a gold drafted from this run's gold-less dataset: the same documents and PDFs
    for key in ("dataset", "manifest"):
        if settings.get(key) != dataset.settings()[key]:
            raise RunFolderError(
                f"{folder.url} answers the {key} {settings.get(key)}, not {dataset.settings()[key]}; grade it "
                f"with the {key} it was run on"
            )
