"""Graded run folders as a report sees them: settings, scores.jsonl lines, recorded costs, the
documents' paths and page counts (documents.json), details.

Reads only the run folder (local or `s3://`, through `oeb.storage`), so a report can be made on any
machine that can read the folders, without the dataset.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from typing import Any

from oeb import _json, storage
from oeb.errors import ReportError, ReportMismatch, StorageNotFoundError
from oeb.run import pages
from oeb.scoring.score import RESULTS

_SAME = ("dataset", "manifest", "dataset_commit")
"""What runs must share (with their document set) to be put in one table."""


@dataclass(frozen=True)
class Run:
    """One graded run folder: its settings, its scores.jsonl lines, the recorded cost per unit and
    document (`costs["usd"][doc_id]`, also `"credits"`) and documents.json ({} when grading wrote none)."""

    url: str
    settings: dict[str, Any]
    lines: list[dict[str, Any]]
    costs: dict[str, dict[str, float]]
    documents: dict[str, Any]
    label: str = ""

    @property
    def name(self) -> str:
        return self.settings.get("run") or self.url.rstrip("/").rsplit("/", 1)[-1]

    @property
    def doc_ids(self) -> tuple[str, ...]:
        return tuple(line["id"] for line in self.lines)


def _read(url: str, what: str) -> Any:
    try:
        return storage.read_jsonl(url) if url.endswith(".jsonl") else storage.read_json(url)
    except StorageNotFoundError:
        raise ReportError(f"{url}: no {what}; give a run folder that `oeb run` or `oeb grade` graded") from None


def _costs(url: str, doc_ids: list[str]) -> dict[str, dict[str, float]]:
    """Per unit, what each document's record reports in it (documents reporting nothing are left out)."""
    listing = storage.list_files(storage.join(url, "records"))
    paths = [f"{doc_id}.json" for doc_id in doc_ids if f"{doc_id}.json" in listing]
    costs: dict[str, dict[str, float]] = {unit: {} for unit in pages.UNITS}
    for path, data in storage.read_many(storage.join(url, "records"), paths).items():
        if isinstance(data, Exception):
            raise data
        try:
            record = _json.loads(data)
        except ValueError:
            record = None
        cost = record.get("cost") if isinstance(record, dict) else None  # unreadable: no cost reported
        for unit in pages.UNITS:
            amount = cost.get(unit) if isinstance(cost, dict) else None
            if amount is not None and _number(amount):
                costs[unit][path.removesuffix(".json")] = float(amount)
    return costs


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _line_problem(line: Any) -> str | None:
    """Why a scores.jsonl line is not one `oeb grade` writes (a hand-edited or foreign file), or None."""
    if not isinstance(line, dict) or not isinstance(line.get("id"), str):
        return "is not an object with an id"
    if line.get("status") not in ("scored", "failed") or not isinstance(line.get("row"), dict | None):
        return f"of {line['id']} has no status scored or failed, or a row that is not an object"
    if line["status"] == "scored" and not all(_number(line.get(key)) for key in ("accuracy", "total", *RESULTS)):
        return f"of {line['id']} is scored but lacks its accuracy, total or verdict counts"
    return None


def load_run(url: str) -> Run:
    """A graded run folder; a one-line `ReportError` when it is not one."""
    url = url.rstrip("/")
    settings = _read(storage.join(url, "settings.json"), "settings.json")
    if not isinstance(settings, dict):
        raise ReportError(f"{storage.join(url, 'settings.json')} is not a JSON object; restore it")
    lines = _read(storage.join(url, "field_matching", "scores.jsonl"), "field_matching/scores.jsonl")
    for number, line in enumerate(lines, start=1):
        problem = _line_problem(line)
        if problem is not None:
            raise ReportError(
                f"{storage.join(url, 'field_matching', 'scores.jsonl')} line {number} {problem}; "
                f"grade the run again (oeb grade {url})"
            )
    return Run(url, settings, lines, _costs(url, [line["id"] for line in lines]), pages.read(url))


def _setting(run: Run) -> str:
    """The system setting as JSON text: the system and its options (two runs of one setting collide)."""
    return json.dumps([run.settings.get("system"), run.settings.get("options")], sort_keys=True)


def _labels(runs: list[Run]) -> list[str]:
    """Each run's system, plus the options that tell it apart from other runs of the same system."""
    labels = []
    for run in runs:
        system, options = run.settings.get("system", "?"), run.settings.get("options") or {}
        others = [r.settings.get("options") or {} for r in runs if r.settings.get("system") == system]
        differing = [key for key in options if any(other.get(key) != options[key] for other in others)]
        shown = ", ".join(f"{key}={json.dumps(options[key])}" for key in differing)
        labels.append(f"{system} ({shown})" if shown else system)
    return labels


def check_comparable(runs: list[Run], distinct: bool = True) -> None:
    """Refuse runs that would mix datasets, manifests, commits or document sets, or (`distinct`)
    repeat a system setting, which would give two rows of one name."""
    first = runs[0]
    for run in runs[1:]:
        for key in _SAME:
            if run.settings.get(key) != first.settings.get(key):
                raise ReportMismatch(
                    f"runs {first.name} and {run.name} differ in {key} ({first.settings.get(key)!r} vs "
                    f"{run.settings.get(key)!r}); report runs of one dataset together"
                )
        if set(run.doc_ids) != set(first.doc_ids):
            only_first = sorted(set(first.doc_ids) - set(run.doc_ids))
            only_run = sorted(set(run.doc_ids) - set(first.doc_ids))
            raise ReportMismatch(
                f"runs {first.name} and {run.name} differ in documents ({len(only_first)} only in {first.name}, "
                f"{len(only_run)} only in {run.name}, e.g. {(only_first or only_run)[0]!r}); "
                "report runs with the same rows selection together"
            )
    seen: dict[str, str] = {}
    for run in runs if distinct else ():
        if _setting(run) in seen:
            raise ReportError(
                f"runs {seen[_setting(run)]} and {run.name} are the same system setting; give one run per setting"
            )
        seen[_setting(run)] = run.name


def load_runs(urls: list[str], distinct: bool = True) -> list[Run]:
    """Graded runs that can share one table, each labelled by its system setting."""
    runs = [load_run(url) for url in urls]
    check_comparable(runs, distinct)
    return [replace(run, label=label) for run, label in zip(runs, _labels(runs), strict=True)]


def details(run: Run, doc_id: str) -> list[dict[str, Any]]:
    """A scored document's verdicts (details/<id>.jsonl); empty when the run kept no details for it."""
    try:
        return storage.read_jsonl(storage.join(run.url, "field_matching", "details", f"{doc_id}.jsonl"))
    except StorageNotFoundError:
        return []


def schema_sent(run: Run, doc_id: str) -> dict[str, Any] | None:
    """The schema the run sent for a document (its record's `sent`), or None without a record."""
    try:
        return storage.read_json(storage.join(run.url, "records", f"{doc_id}.json")).get("sent")
    except StorageNotFoundError:
        return None
