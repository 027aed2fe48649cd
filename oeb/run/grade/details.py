"""What a grading leaves in `field_matching/details/` and knows of it: which documents' details files hold
verdicts changed by accepted adjudications, and under what (`adjudicated.json`), so a steady regrade
under the same file neither builds nor compares them again; and the tidying of stale files."""

from __future__ import annotations

from oeb import storage
from oeb.errors import StorageError
from oeb.run.folder.run_folder import RunFolder
from oeb.run.grade.results import SCORER

UNDER = "adjudicated.json"
"""`field_matching/adjudicated.json`: for each document whose details file holds verdicts changed by
accepted entries, what it was written under (`oeb.run.grade.task.details_under`), so a steady regrade
under the same file leaves it alone without building it again. Removed before a grading writes its
first details file, written again with summary.json: a grading stopped between leaves none, and the
next one compares the files themselves."""


def recorded(folder: RunFolder, listing: dict[str, int]) -> dict[str, str] | None:
    """`adjudicated.json` as the last grading wrote it (None: none, or unreadable: every adjudicated
    document's details are then built and compared)."""
    if f"{SCORER}/{UNDER}" not in listing:
        return None
    try:
        held = storage.read_json(folder.path(SCORER, UNDER))
    except (StorageError, ValueError):
        return None
    documents = held.get("documents") if isinstance(held, dict) else None
    if not isinstance(documents, dict):
        return None
    return {str(doc_id): under for doc_id, under in documents.items() if isinstance(under, str)}


def adjudicated_before(folder: RunFolder, listing: dict[str, int]) -> set[str] | None:
    """The documents the folder's last grading applied entries to (their scores.jsonl lines say so:
    `adjudications`, `excluded_values`); None when that file cannot be read, so every details file
    is rebuilt rather than one left stale."""
    if f"{SCORER}/scores.jsonl" not in listing:
        return set()
    try:
        lines = storage.read_jsonl(folder.path(f"{SCORER}/scores.jsonl"))
    except (StorageError, ValueError):
        return None
    return {
        str(line.get("id"))
        for line in lines
        if isinstance(line, dict) and ("adjudications" in line or "excluded_values" in line)
    }


def tidy(folder: RunFolder, listing: dict[str, int], scored: set[str], details: bool) -> None:
    """Leave details only for documents scored now; `--no-details` removes the folder."""
    prefix = f"{SCORER}/details/"
    if not details:
        storage.remove(folder.path(SCORER, "details"))
        return
    for path in listing:
        if path.startswith(prefix) and path.removeprefix(prefix).removesuffix(".jsonl") not in scored:
            storage.remove(folder.path(path))
