"""Graded run folders as a report sees them: settings, scores.jsonl lines, recorded costs, the
documents' paths and page counts (documents.json), the grading's provenance, details.

A folder `oeb run` made has settings.json; a brought folder (predictions of one's own graded with
`oeb grade mine/ --dataset D`) has none: it is labelled by its folder name and names its dataset in
summary.json's `provenance`. Reads only the folder (local, `s3://` or a published `hf://` folder,
through `oeb.storage`), so a report can be made on any machine that can read the folders, without the
dataset. An `hf://` folder is read at the commit its revision names when it is opened.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from typing import Any

from oeb import _json, storage
from oeb._manifest import is_file_name
from oeb.errors import OebError, ReportError, ReportMismatch, StorageError, StorageNotFoundError
from oeb.formats import DocumentEntry
from oeb.gold.apply import Adjudicated
from oeb.run.grade import pages
from oeb.scoring import RESULTS

_SAME = ("dataset", "manifest", "dataset_commit")
"""What runs must share (with their document set) to be put in one table."""
_RESULTS = "field_matching"


@dataclass(frozen=True)
class Run:
    """One graded folder: its settings ({} for a brought folder), its scores.jsonl lines, the recorded
    cost per unit and document (`costs["usd"][doc_id]`, also `"credits"`), documents.json ({} when
    grading wrote none), summary.json's `provenance` ({} when grading recorded none) and each
    document's wall time in seconds as its record reports it (`cost.wall_s`; {} without records)."""

    url: str
    settings: dict[str, Any]
    lines: list[dict[str, Any]]
    costs: dict[str, dict[str, float]]
    documents: dict[str, DocumentEntry]
    label: str = ""
    provenance: dict[str, Any] = field(default_factory=dict)
    wall_s: dict[str, float] = field(default_factory=dict)
    regraded: dict[str, Adjudicated] = field(default_factory=dict, repr=False)
    """The documents read again under the gold a reader chose (`oeb.report.adjudicated`), whose verdicts
    then stand in for those grading wrote (verdicts.parquet, details/), which may be another file's."""

    @property
    def name(self) -> str:
        """The run's name, or the folder's name for a brought folder."""
        return str(self.settings.get("run") or self.url.rstrip("/").rsplit("/", 1)[-1])

    @property
    def brought(self) -> bool:
        """Predictions of one's own graded by `oeb grade` (no settings.json naming a system)."""
        return not self.settings.get("system")

    @property
    def doc_ids(self) -> tuple[str, ...]:
        return tuple(line["id"] for line in self.lines)

    def named(self, key: str) -> Any:
        """`dataset`, `manifest` or `dataset_commit`: from settings.json, else from the provenance
        grading wrote (a brought folder's only record of what it was graded against; and a run over a
        gold-less dataset graded against the gold drafted from it: docs/own-documents.md)."""
        if key in self.settings and "draft" not in self.provenance:
            return self.settings[key]
        return self.provenance.get(key)

    @property
    def scorer(self) -> str | None:
        """The digest of the scorer that graded the run (provenance, and every scores.jsonl line);
        several joined by "+" when its lines were graded by different scorers; None when unrecorded."""
        digests = {line["scorer"] for line in self.lines if isinstance(line.get("scorer"), str)}
        if isinstance(self.provenance.get("scorer"), str):
            digests.add(self.provenance["scorer"])
        return "+".join(sorted(digests)) or None


def _read(url: str) -> Any:
    return storage.read_jsonl(url) if url.endswith(".jsonl") else storage.read_json(url)


def _goldless_dataset(url: str) -> OebError | None:
    """The one line for a run over a gold-less dataset (no gold, so nothing to report yet), or None."""
    from oeb.dataset import named_by_folder, open_dataset

    try:
        settings = storage.read_json(storage.join(url, "settings.json"))
        dataset = open_dataset(named_by_folder(settings.get("dataset"), url), settings.get("manifest"))
    except (OebError, AttributeError, TypeError):
        return None
    return dataset.no_gold() if dataset.goldless else None


def _not_graded(url: str) -> OebError:
    """Why a folder without scores cannot be reported, with the command that grades it."""
    if not storage.is_dir(url):
        return ReportError(f"no folder at {url}; give a folder that `oeb run` or `oeb grade` graded")
    if storage.exists(storage.join(url, "settings.json")):
        goldless = _goldless_dataset(url)
        if goldless is not None:
            return goldless
        return ReportError(f"{url} is not graded (no {_RESULTS}/scores.jsonl); grade it first: oeb grade {url}")
    if storage.is_dir(storage.join(url, "predictions")):
        return ReportError(
            f"{url} is not graded (no {_RESULTS}/scores.jsonl); grade it first: oeb grade {url} --dataset DATASET"
        )
    published = _published(url)
    if published:
        shown = " ".join(storage.join(url, folder) for folder in published[:2])
        return ReportError(
            f"{url} holds {len(published)} published run folders (its results.json lists them), not one run; "
            f"give the folders: oeb report {shown}{' ...' if len(published) > 2 else ''}"
        )
    return ReportError(
        f"{url} holds no graded run (no settings.json, predictions/ or {_RESULTS}/scores.jsonl); "
        "give a folder that `oeb run` or `oeb grade` graded"
    )


def _published(url: str) -> list[str]:
    """The run folders an `oeb publish` destination lists in its results.json ([] for any other folder)."""
    try:
        table = storage.read_json(storage.join(url, "results.json"))
    except StorageError:
        return []
    rows = table.get("rows") if isinstance(table, dict) else None
    return [row["folder"] for row in rows or () if isinstance(row, dict) and isinstance(row.get("folder"), str)]


def _costs(url: str, doc_ids: list[str]) -> tuple[dict[str, dict[str, float]], dict[str, float]]:
    """Per unit, what each document's record reports in it (documents reporting nothing are left out),
    and each document's wall time (`cost.wall_s`) where its record reports one."""
    listing = storage.list_files(storage.join(url, "records"))
    paths = [f"{doc_id}.json" for doc_id in doc_ids if f"{doc_id}.json" in listing]
    costs: dict[str, dict[str, float]] = {unit: {} for unit in pages.UNITS}
    walls: dict[str, float] = {}
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
        wall = cost.get("wall_s") if isinstance(cost, dict) else None
        if isinstance(wall, int | float) and not isinstance(wall, bool) and wall >= 0:
            walls[path.removesuffix(".json")] = float(wall)
    return costs, walls


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _line_problem(line: Any) -> str | None:
    """Why a scores.jsonl line is not one `oeb grade` writes (a hand-edited or foreign file), or None."""
    if not isinstance(line, dict) or not isinstance(line.get("id"), str):
        return "is not an object with an id"
    if not is_file_name(line["id"]):  # ids name files (records/<id>.json, an export's pages): never a path
        return f"names the document {line['id']!r}, which is not a file name (one path component)"
    if line.get("status") not in ("scored", "failed") or not isinstance(line.get("row"), dict | None):
        return f"of {line['id']} has no status scored or failed, or a row that is not an object"
    if line["status"] == "scored" and not all(_number(line.get(key)) for key in ("accuracy", "total", *RESULTS)):
        return f"of {line['id']} is scored but lacks its accuracy, total or verdict counts"
    return None


def _provenance(url: str) -> dict[str, Any]:
    """summary.json's `provenance`, {} when grading wrote none (graded by an older oeb)."""
    try:
        summary = storage.read_json(storage.join(url, _RESULTS, "summary.json"))
    except StorageNotFoundError:
        return {}
    provenance = summary.get("provenance") if isinstance(summary, dict) else None
    return provenance if isinstance(provenance, dict) else {}


def load_run(url: str) -> Run:
    """A graded run folder or graded brought folder; a one-line `ReportError` when it is neither. An
    `hf://` folder is pinned to one commit first, so a push meanwhile cannot mix two versions."""
    url = storage.pinned(url.rstrip("/"))
    scores = storage.join(url, _RESULTS, "scores.jsonl")
    try:
        lines = _read(scores)
    except StorageNotFoundError:
        raise _not_graded(url) from None
    try:
        settings = _read(storage.join(url, "settings.json"))
    except StorageNotFoundError:
        settings = {}  # a brought folder: what it was graded against is in the provenance
    if not isinstance(settings, dict):
        raise ReportError(f"{storage.join(url, 'settings.json')} is not a JSON object; restore it")
    for number, line in enumerate(lines, start=1):
        problem = _line_problem(line)
        if problem is not None:
            raise ReportError(f"{scores} line {number} {problem}; grade the run again (oeb grade {url})")
    ids = [line["id"] for line in lines]
    costs, walls = _costs(url, ids)
    return Run(url, settings, lines, costs, pages.read(url), provenance=_provenance(url), wall_s=walls)


def setting(run: Run) -> str:
    """The system setting as JSON text: the system and its options (two runs of one setting collide);
    a brought folder is its own setting."""
    if run.brought:
        return json.dumps(["brought", run.url])
    return json.dumps([run.settings.get("system"), run.settings.get("options")], sort_keys=True)


def _labels(runs: list[Run]) -> list[str]:
    """Each run's system, plus the options that tell it apart from other runs of the same system; a
    brought folder's name."""
    labels = []
    for run in runs:
        if run.brought:
            labels.append(run.name)
            continue
        system, options = run.settings.get("system", "?"), run.settings.get("options") or {}
        others = [r.settings.get("options") or {} for r in runs if r.settings.get("system") == system]
        differing = [key for key in options if any(other.get(key) != options[key] for other in others)]
        shown = ", ".join(f"{key}={json.dumps(options[key])}" for key in differing)
        labels.append(f"{system} ({shown})" if shown else system)
    return labels


def check_comparable(runs: list[Run], distinct: bool = True) -> None:
    """Refuse runs that would mix datasets, manifests, commits or document sets, or (`distinct`)
    repeat a system setting, which would give two rows of one name. A brought folder graded before
    grading recorded its dataset is checked by its documents alone."""
    named = [run for run in runs if run.named("dataset") is not None]
    for run in named[1:]:
        for key in _SAME:
            if run.named(key) != named[0].named(key):
                raise ReportMismatch(
                    f"runs {named[0].name} and {run.name} differ in {key} ({named[0].named(key)!r} vs "
                    f"{run.named(key)!r}); give runs of one dataset together"
                )
    first = runs[0]
    for run in runs[1:]:
        if set(run.doc_ids) != set(first.doc_ids):
            only_first = sorted(set(first.doc_ids) - set(run.doc_ids))
            only_run = sorted(set(run.doc_ids) - set(first.doc_ids))
            raise ReportMismatch(
                f"runs {first.name} and {run.name} differ in documents ({len(only_first)} only in {first.name}, "
                f"{len(only_run)} only in {run.name}, e.g. {(only_first or only_run)[0]!r}); "
                "give runs with the same rows selection together"
            )
    seen: dict[str, str] = {}
    for run in runs if distinct else ():
        if setting(run) in seen:
            raise ReportError(
                f"runs {seen[setting(run)]} and {run.name} are the same system setting; give one run per setting"
            )
        seen[setting(run)] = run.name


def check_scorers(runs: list[Run]) -> None:
    """Refuse runs graded by different scorers (their numbers are not the same measure): a one-line
    `ReportMismatch` naming two of them and the ways out."""
    first = runs[0]
    for run in runs[1:]:
        if run.scorer != first.scorer:
            raise ReportMismatch(
                f"runs {first.name} and {run.name} were graded by different scorers ({first.scorer or 'unrecorded'} "
                f"vs {run.scorer or 'unrecorded'}); grade them again with one oeb (oeb grade RUN), or pass "
                "--mixed-scorers to rank them anyway with a scorer column"
            )


def labelled(runs: list[Run], distinct: bool = True) -> list[Run]:
    """Runs checked to share one table (`check_comparable`), each labelled by its system setting."""
    check_comparable(runs, distinct)
    return [replace(run, label=label) for run, label in zip(runs, _labels(runs), strict=True)]


def load_runs(urls: list[str], distinct: bool = True) -> list[Run]:
    """Graded runs that can share one table, each labelled by its system setting."""
    return labelled([load_run(url) for url in urls], distinct)


def details(run: Run, doc_id: str) -> list[dict[str, Any]]:
    """A scored document's verdicts (details/<id>.jsonl, or as read again under the chosen gold: `regraded`);
    empty when the run kept no details for it."""
    if doc_id in run.regraded:
        return run.regraded[doc_id].details
    try:
        verdicts: list[dict[str, Any]] = storage.read_jsonl(
            storage.join(run.url, _RESULTS, "details", f"{doc_id}.jsonl")
        )
    except StorageNotFoundError:
        return []
    return verdicts


def schema_sent(run: Run, doc_id: str) -> dict[str, Any] | None:
    """The schema the run sent for a document (its record's `sent`), or None without a record."""
    try:
        record = storage.read_json(storage.join(run.url, "records", f"{doc_id}.json"))
    except StorageNotFoundError:
        return None
    sent = record.get("sent") if isinstance(record, dict) else None
    return sent if isinstance(sent, dict) else None
