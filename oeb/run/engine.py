"""A run from end to end: plan (every check, no call), then on Ray predict and grade (HARNESS.md §3).

`plan_run` and `plan_resume` read and check everything before anything is paid for or written;
`execute` writes the run folder, predicts the documents the plan lists and grades the selection.
`grade_folder` grades a run folder (or a folder of brought predictions) again.
"""

from __future__ import annotations

import datetime
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from oeb import storage
from oeb.dataset import DEFAULT_MANIFEST, SAMPLE_DATASET, Dataset, Row, open_dataset
from oeb.errors import ResumeMismatch, RunFolderError
from oeb.run._set import apply_sets
from oeb.run.cluster import ray_session, worker_env
from oeb.run.config import Config, Rows, check_tree, read_tree
from oeb.run.folder import IDENTITY, TASK, RunFolder, identity, new_name
from oeb.run.grade_stage import Graded, grade
from oeb.run.lock import ensure_free
from oeb.run.selection import describe, select
from oeb.systems import TRANSIENT_STATUSES, reread

log = logging.getLogger(__name__)

RETRYABLE = ("SystemTimeout", "SystemUnreachable")


@dataclass(frozen=True)
class Plan:
    """Everything a run will do, checked: the rows, the documents to ask, the folder and its files."""

    config: Config
    dataset: Dataset
    rows: tuple[Row, ...]
    selection: dict[str, Any]
    folder: RunFolder
    settings: dict[str, Any]
    to_ask: tuple[Row, ...]
    unread: dict[str, dict[str, Any]]
    resumed: bool
    retry_failed: bool = False

    def lines(self) -> list[str]:
        """The two plan lines shown before asking (§3.2), with the Ray setup."""
        config = self.config
        count = f"{len(self.rows)} row{'s' if len(self.rows) != 1 else ''}"
        chosen = f" ({describe(self.selection)})" if self.selection else ""
        rate = config.ray.requests_per_second
        limit = f"at most {rate:g} starts/s" if rate else "no rate limit"
        where = f"Ray at {config.ray.address}" if config.ray.address else "a local Ray"
        return [
            f"extract on {config.dataset} (manifest {config.manifest}): {count}{chosen}, graded by field_matching",
            f"  {self.folder.url}: {'resumed' if self.resumed else 'new'} run, {len(self.to_ask)} documents to "
            f"predict with {config.system}, {config.in_flight()} in flight on {config.actors()} actors, "
            f"{limit}, on {where}",
        ]


@dataclass(frozen=True)
class RunResult:
    """What a run gives back: the grading report, the limiter's statistics and where work ran."""

    report: dict[str, Any]
    predicted: dict[str, Any]
    graded_on: frozenset[str]


def _checked(config: Config) -> tuple[Dataset, tuple[Row, ...], dict[str, Any]]:
    """The plan's checks in the reference's order: keys, manifest, rows, documents, every gold."""
    config.adapter.check_keys()
    dataset = open_dataset(config.dataset, config.manifest)
    rows, selection = select(dataset.rows, config.rows)
    dataset.check_documents(rows)
    dataset.check_golds()
    return dataset, rows, selection


def _settings(config: Config, dataset: Dataset, name: str, selection: dict[str, Any]) -> dict[str, Any]:
    adapter = config.adapter
    options = adapter.options()
    located = {key: options[key] for key in adapter.located}
    named = dataset.settings()
    settings: dict[str, Any] = {
        "run": name,
        "system": adapter.name,
        "options": {key: value for key, value in options.items() if key not in located},
        "dataset": named["dataset"],
        "manifest": named["manifest"],
        "task": TASK,
        "rows": selection,
    }
    if dataset.commit:
        settings["dataset_commit"] = dataset.commit
    settings["timeout_s"] = config.timeout
    if located:
        settings["located"] = located
    settings["started"] = datetime.datetime.now(datetime.UTC).replace(microsecond=0).isoformat()
    settings["launch"] = {}
    return settings


def _tree(config: Config, dataset: Dataset) -> dict[str, Any]:
    """config.yaml: the config as resolved, a local dataset as its absolute path."""
    tree = config.plain()
    if storage.is_local(config.dataset):
        tree["dataset"] = dataset.identity
    return tree


def plan_run(config: Config, out: str) -> Plan:
    """A new run of `config` in a new folder under `out`."""
    dataset, rows, selection = _checked(config)
    name = new_name(config.adapter.label)
    folder = RunFolder(storage.join(out, name))
    settings = _settings(config, dataset, name, selection)
    return Plan(config, dataset, rows, selection, folder, settings, rows, {}, resumed=False)


def _retryable(record: dict[str, Any]) -> bool:
    error = record.get("error") or {}
    return error.get("type") in RETRYABLE or error.get("status") in TRANSIENT_STATUSES


def _to_ask(rows: Sequence[Row], records: dict[str, dict[str, Any]], retry_failed: bool) -> tuple[Row, ...]:
    return tuple(row for row in rows if row.doc_id not in records or (retry_failed and _retryable(records[row.doc_id])))


def plan_resume(url: str, sets: Sequence[str] = (), retry_failed: bool = False, force_unlock: bool = False) -> Plan:
    """Continue the run in `url`: the same question, asking only what has no record (and, with
    `retry_failed`, failures that asking again may fix). Refused while another process writes it."""
    folder = RunFolder(url)
    config_url = folder.path("config.yaml")
    if not storage.exists(config_url):
        raise RunFolderError(f"{folder.url} has no config.yaml; give a run folder that oeb run made")
    ensure_free(folder.url, force=force_unlock)
    stored = folder.settings()
    if stored is None:
        parent = folder.url.rsplit("/", 1)[0]
        raise RunFolderError(
            f"there is no run named {folder.name} under {parent} (no settings.json: the launch stopped before "
            "predicting); start it again with oeb run --config " + config_url
        )
    config = check_tree(apply_sets(read_tree(config_url), list(sets)), where=config_url)
    dataset, rows, selection = _checked(config)
    settings = _settings(config, dataset, folder.name, selection)
    _same_question(folder, stored, settings)
    settings["started"], settings["launch"] = stored.get("started"), stored.get("launch", {})
    records = folder.records([row.doc_id for row in rows], folder.listing())
    unread = {doc_id: record for doc_id, record in records.items() if record.get("unread")}
    to_ask = _to_ask(rows, records, retry_failed)
    return Plan(config, dataset, rows, selection, folder, settings, to_ask, unread, True, retry_failed)


def _same_question(folder: RunFolder, stored: dict[str, Any], settings: dict[str, Any]) -> None:
    """Refuse a resume that would put two different runs' answers in one folder."""
    before, now = identity(stored), identity(settings)
    differing = [key for key in IDENTITY if before[key] != now[key]]
    if differing:
        raise ResumeMismatch(
            f"{folder.name} was run with other {', '.join(differing)} than this resume asks (e.g. {differing[0]}: "
            f"{before[differing[0]]!r}, now {now[differing[0]]!r}); resume with the same system, options, dataset "
            "and rows, or start a new run with oeb run"
        )
    if stored.get("dataset_commit") != settings.get("dataset_commit"):
        raise ResumeMismatch(
            f"{folder.name} ran on commit {stored.get('dataset_commit')} of {stored['dataset']}, which now resolves "
            f"to {settings.get('dataset_commit')}; resume with dataset {stored['dataset']}@"
            f"{stored.get('dataset_commit')}, or start a new run"
        )


def execute(plan: Plan, *, details: bool = True, force_unlock: bool = False) -> RunResult:
    """Write the run folder, predict what the plan lists, then grade the whole selection, holding
    the folder's lock throughout (`force_unlock` takes an s3:// lock whose holder seems alive)."""
    from oeb.run.predict import predict_rows  # Ray actors: imported only when a run goes ahead

    config, folder = plan.config, plan.folder
    command = "oeb resume" if plan.resumed else "oeb run"
    with (
        folder.locked(command, force=force_unlock),
        ray_session(config.ray.address, worker_env()),
    ):
        to_ask = _unanswered(plan) if plan.resumed else plan.to_ask
        folder.write_config(_tree(config, plan.dataset))
        folder.write_settings(plan.settings)
        for doc_id, record in plan.unread.items():
            folder.save(doc_id, reread(config.adapter, record))
        done = len(plan.rows) - len(to_ask)
        if plan.resumed and done:
            rest = f"{len(to_ask)} to predict" if to_ask else "nothing to predict"
            log.info("%s: %d of %d rows were done in an earlier run; %s", folder.name, done, len(plan.rows), rest)
        predicted = predict_rows(config, plan.dataset, to_ask, folder)
        graded = grade(folder, plan.dataset, plan.rows, details=details)
    return RunResult(graded.report, predicted, graded.nodes)


def _unanswered(plan: Plan) -> tuple[Row, ...]:
    """The plan's documents to ask, read again under the lock: a process that wrote the folder
    between the plan and the lock saved answers that must not be paid for twice."""
    folder = plan.folder
    records = folder.records([row.doc_id for row in plan.to_ask], folder.listing())
    return _to_ask(plan.to_ask, records, plan.retry_failed)


def grade_folder(
    url: str,
    *,
    dataset: str | None = None,
    manifest: str | None = None,
    partial: bool = False,
    details: bool = True,
    address: str | None = None,
    force_unlock: bool = False,
) -> Graded:
    """Grade a run folder, or a brought folder of predictions, against its dataset (§3.9), holding
    the folder's lock."""
    folder, opened, rows, brought = open_folder(url, dataset=dataset, manifest=manifest)
    with folder.locked("oeb grade", force=force_unlock), ray_session(address, worker_env()):
        return grade(folder, opened, rows, partial=partial, details=details, brought=brought)


def open_folder(
    url: str, *, dataset: str | None = None, manifest: str | None = None
) -> tuple[RunFolder, Dataset, tuple[Row, ...], bool]:
    """A folder to grade, checked: the folder, its dataset, the rows it answers, whether it was brought
    (no settings.json)."""
    folder = RunFolder(url)
    if not storage.is_dir(folder.url):
        raise RunFolderError(f"no folder at {url}; give the folder holding predictions/<id>.json")
    if not storage.is_dir(folder.path("predictions")):
        if folder.name == "predictions":
            parent = folder.url.rsplit("/", 1)[0]
            raise RunFolderError(f"{url} is the predictions folder itself; give its parent, {parent}")
        raise RunFolderError(f"{url} has no predictions/; a folder to grade holds predictions/<id>.json")
    settings = folder.settings() or {}
    brought = not settings.get("system")
    named = settings.get("dataset")
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
    for key in ("dataset", "manifest"):
        if settings.get(key) != dataset.settings()[key]:
            raise RunFolderError(
                f"{folder.url} answers the {key} {settings.get(key)}, not {dataset.settings()[key]}; grade it "
                f"with the {key} it was run on"
            )
