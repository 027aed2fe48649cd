"""`oeb publish RUN... DEST`: graded run folders, their leaderboard card and results.json, put where
the data lives (docs/publishing.md).

Each run folder goes under `DEST/<its folder name>/` as `oeb report` reads it: settings, config,
predictions, `field_matching/` (its grading cache left out: any grading rebuilds it) and, unless
`records=False`, the records (raw vendor answers can be large, or under the vendor's licence). The
card and results.json at DEST hold one row per system setting over every run published there: the
new runs, and the runs already listed in results.json whose setting no new run has. Every file is
checked for secrets and local paths before anything is sent; then only the files that differ from
what DEST holds are written, on the Hub in one commit, and nothing at all when none differ.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from oeb import storage
from oeb.errors import PublishError, ReportMismatch, StorageError, StorageNotFoundError
from oeb.gold.entries import Adjudications, from_bytes
from oeb.publish.card import card, folder_name, results, setting, setting_key
from oeb.publish.destination import CARD, RESULTS, Destination, open_destination
from oeb.publish.gold import without_gold
from oeb.publish.scan import Scanner
from oeb.report import Run, leaderboard, load_run
from oeb.report.runs import labelled

PUBLISHED = ("settings.json", "config.yaml", "predictions/", "field_matching/")
RECORDS = "records/"
LEFT_OUT = ("field_matching/cache/",)
"""The grading cache: what a grading keeps for itself, rebuilt by any grading."""


@dataclass(frozen=True)
class Published:
    """What a publish did: the destination, the files written (none: nothing new), those already
    there, the commit or folder written, and the rows of the card."""

    destination: str
    written: tuple[str, ...]
    unchanged: int
    made: str | None
    rows: list[dict[str, Any]]


def _files_of(run: Run, records: bool, gold: bool = True) -> dict[str, bytes]:
    """The run folder's files to publish, by their path under DEST (without `gold`: no gold value)."""
    kept = (*PUBLISHED, RECORDS) if records else PUBLISHED
    paths = [
        path
        for path in storage.list_files(run.url)
        if path.startswith(kept)
        and not path.startswith(LEFT_OUT)
        and not any(part.startswith(".") for part in path.split("/"))
    ]
    name = folder_name(run)
    files = {}
    for path, data in sorted(storage.read_many(run.url, paths).items()):
        if isinstance(data, StorageError):
            raise data
        files[path] = data
    if not gold:
        files = without_gold(files)
    return {f"{name}/{path}": data for path, data in files.items()}


ADJUDICATIONS = "adjudications.yaml"
"""The adjudication file the runs were graded under, published beside them (docs/adjudication.md)."""


def _adjudications(runs: Sequence[Run]) -> tuple[bytes, Adjudications] | None:
    """The file the runs were graded under (their provenance names it), read again and checked to be
    the same bytes; runs graded under different files cannot share a card."""
    recorded = [run.provenance.get("adjudications") for run in runs]
    named = {(r["url"], r["sha256"]) for r in recorded if isinstance(r, dict)}
    if not named:
        return None
    if len(named) > 1 or len([r for r in recorded if r]) != len(runs):
        raise PublishError(
            "the runs were graded under different adjudication files (or some under none); grade them under "
            "one: oeb grade RUN --adjudications URL"
        )
    ((url, sha256),) = named
    data = storage.read_bytes(url)
    if hashlib.sha256(data).hexdigest() != sha256:
        raise PublishError(
            f"{url} changed since the runs were graded under it (sha256 {sha256[:12]}); grade them again under "
            "it, then publish"
        )
    return data, from_bytes(data, url)


def _earlier(destination: Destination) -> list[dict[str, Any]]:
    """The rows results.json at DEST lists (none when nothing was published there). A README.md
    without results.json beside it is someone's own card (a dataset's): it is never overwritten."""
    url = destination.location(RESULTS)
    try:
        table = storage.read_json(url)
    except StorageNotFoundError:
        if storage.exists(destination.location(CARD)):
            raise PublishError(
                f"{destination.address} has a README.md that oeb publish did not write (no results.json beside "
                "it); publish to a folder of its own, DEST/PATH, so that card is kept"
            ) from None
        return []
    rows = table.get("rows") if isinstance(table, dict) else None
    if not isinstance(rows, list) or not all(
        isinstance(row, dict) and isinstance(row.get("folder"), str) and isinstance(row.get("setting"), dict)
        for row in rows
    ):
        raise PublishError(f"{url} is not a results.json oeb wrote (rows with folder and setting); move it away")
    return rows


def publish(
    urls: Sequence[str], dest: str, *, records: bool = True, gold: bool = True, message: str | None = None
) -> Published:
    """Publish the graded runs at `urls` to `dest` (see the module's docstring); without `gold`, no
    published file holds a gold value (`oeb.publish.gold`) and the card says so."""
    runs = [load_run(url) for url in urls]
    for run in runs:
        dataset = run.named("dataset")
        if isinstance(dataset, str) and storage.is_local(dataset):
            raise PublishError(
                f"{run.url} was run on the local dataset {dataset}, which nobody else can read or reproduce; "
                "put the dataset on the Hub (hf upload ORG/NAME FOLDER --repo-type dataset), run on its "
                "hf:// address, and publish that run"
            )
    names = [folder_name(run) for run in runs]
    if len(set(names)) < len(names):
        twice = next(name for name in names if names.count(name) > 1)
        raise PublishError(f"two runs are named {twice}: each is published under its folder's name; rename one")
    destination = open_destination(dest)
    settings = {setting_key(setting(run)) for run in runs}
    kept = [
        load_run(destination.location(row["folder"]))
        for row in _earlier(destination)
        if setting_key(row["setting"]) not in settings and row["folder"] not in names
    ]
    try:
        every = labelled([*runs, *kept])
    except ReportMismatch as error:
        if not kept:
            raise
        raise PublishError(
            f"{destination.address} holds results these runs cannot share a table with ({error}); "
            "publish them to another folder, DEST/PATH"
        ) from error
    board = leaderboard(every, mixed_scorers=True)
    used = _adjudications(runs)
    if used is not None:
        from oeb.report.adjudicated import Gold, annotate

        board = annotate(board, Gold(every, used[1]))
        board["gold"]["adjudications"] = ADJUDICATIONS  # published beside the runs
    table = results(board, every)
    files: dict[str, bytes] = {}
    if used is not None:
        files[ADJUDICATIONS] = used[0]
    for run in runs:
        files |= _files_of(run, records, gold)
    files[RESULTS] = (json.dumps(table, indent=2, ensure_ascii=False) + "\n").encode()
    files[CARD] = card(board, table, destination.address, gold=gold).encode()
    local = [run.url for run in runs if storage.is_local(run.url)]
    Scanner.for_folders(local + ([dest] if storage.is_local(dest) else [])).check(files)
    same = destination.unchanged(files)
    new = {path: data for path, data in files.items() if path not in same}
    made = None
    if new:
        made = destination.write(new, message or f"oeb publish: {', '.join(names)}")
    return Published(destination.address, tuple(new), len(same), made, table["rows"])
