"""Planning a run: every check before anything is paid for or written (docs/running.md).

`plan_runs` and `plan_resumes` read and check everything, for one system or several side by side (a
config that cannot run is listed with its reason and the rest go ahead): the config with its `--set`s,
the keys, the dataset, its documents and golds, the folder's lock and, for a resume, that it asks the
same question and what is left to ask (records, spilled answers, vendor jobs to collect). A `Plan`
says what one system's run will do; the engine (`oeb.run.engine`) executes it.
"""

from __future__ import annotations

import dataclasses
import datetime
import functools
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, cast

from oeb import storage
from oeb.batch import files
from oeb.batch.files import BatchFile
from oeb.batch.sender import worst_case
from oeb.dataset import Dataset, Row, open_dataset
from oeb.errors import AdjudicationError, ConfigError, OebError, ResumeMismatch, RunFolderError
from oeb.gold.check import applying
from oeb.gold.entries import Adjudications
from oeb.gold.where import is_none
from oeb.run.cluster.session import choose
from oeb.run.folder.lock import ensure_free
from oeb.run.folder.run_folder import IDENTITY, TASK, RunFolder, identity, new_name
from oeb.run.plan._set import apply_sets
from oeb.run.plan.config import Config, check_tree, read_tree
from oeb.run.plan.selection import describe, select
from oeb.run.plan.spending import Estimate, Spending, estimate
from oeb.run.predict import jobs, spill
from oeb.run.predict.reuse import ReuseIndex
from oeb.systems import TRANSIENT_STATUSES, Adapter
from oeb.systems.batches import Batches

RETRYABLE = ("SystemTimeout", "SystemUnreachable")


@dataclass(frozen=True)
class Plan:
    """Everything one system's run will do, checked: the rows, the documents to ask, the folder and its files."""

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
    label: str = ""
    """The system's name in the progress and the leaderboard (its adapter's label unless two share it)."""
    pending: dict[str, dict[str, Any] | str] = field(default_factory=dict)
    """Documents whose job an earlier process submitted (`oeb.run.predict.jobs`): the saved asking, or why its
    file cannot be read (that document is submitted again). Those already recorded are stale."""
    estimate: Estimate | None = None
    """The estimated cost of the documents to ask (`oeb.run.plan.spending`)."""
    costs: tuple[dict[str, Any], ...] = ()
    """The costs of the records an earlier process saved: a resume's budget counts them."""
    batches: tuple[BatchFile, ...] = ()
    """The provider batches an earlier process sent (a system with `batch: true`): collected, not sent again."""
    reused: dict[str, str] = field(default_factory=dict)
    """Documents an earlier run answered to the same question (`--reuse`): doc_id -> that run's folder.
    Only the URL is kept: the record is read again and saved when the run goes ahead."""
    spilled: spill.Spilled | None = None
    """What an earlier process of this run kept in its spill folder when storage failed: saved into
    the run folder under the lock, before anything is asked (`oeb.run.predict.spill`)."""
    adjudications: Adjudications | None = None
    """The adjudication file grading applies, checked against the dataset (`dataset.adjudications`, else
    the dataset's own adjudications.yaml; None: the raw gold)."""

    def lines(self) -> list[str]:
        """The two plan lines shown before asking, with the concurrency (and the key that set it) and
        the Ray setup."""
        config = self.config
        count = f"{len(self.rows)} row{'s' if len(self.rows) != 1 else ''}"
        chosen = f" ({describe(self.selection)})" if self.selection else ""
        rate = config.ray.requests_per_second
        limit = f"at most {rate:g} starts/s" if rate else "no rate limit"
        where = choose(config.ray.address, documents=len(self.rows)).place()
        in_flight, key = config.concurrency()
        batches = config.adapter.batching()
        asking = (
            f"{in_flight} in flight (set by {key}) on {config.actors()} actors, {limit}"
            if batches is None
            else f"sent as {batches.provider} batches"
        )
        lines = [
            f"extract on {config.dataset} (manifest {config.manifest}): {count}{chosen}, graded by field_matching"
            + self._gold(),
            f"  {self.folder.url}: {'resumed' if self.resumed else 'new'} run, {len(self.to_ask)} documents to "
            f"predict with {config.system}, {asking}, {where}",
        ]
        options = config.adapter.shown_options()  # where the key goes, and what is not the default
        if options:
            lines.append(f"  {config.system} options: {', '.join(f'{k}={v!r}' for k, v in options.items())}")
        if self.reused:
            lines.append(f"  {len(self.reused)} answers will be reused from earlier runs (not asked, not paid)")
        if self.spilled:
            lines.append(
                f"  {len(self.spilled.records)} answers, {len(self.spilled.jobs)} job handles and "
                f"{len(self.spilled.batches)} provider batches kept in the spill folder {self.spilled.path} will be "
                "saved, not asked again"
            )
        asked = {row.doc_id for row in self.to_ask}
        collected = [saved for doc_id, saved in self.pending.items() if doc_id in asked]
        if collected:
            unreadable = sum(isinstance(saved, str) for saved in collected)
            again = f" ({unreadable} of them unreadable: submitted again)" if unreadable else ""
            lines.append(f"  {len(collected)} submitted jobs will be collected, not bought again{again}")
        if batches is not None:
            return lines + self._batch_lines(batches)
        if self.estimate is not None and self.to_ask:
            spent = spending.spent if (spending := spending_of(self)) is not None else None  # a resume's earlier costs
            lines += [f"  {line}" for line in self.estimate.lines(config.budget, spent)]
        return lines

    def _gold(self) -> str:
        """What the plan's first line says of the gold: the file applied, or that `none` was asked."""
        used = self.adjudications
        if used is not None:
            count = len(used.accepted)
            plural = "s" if count != 1 else ""
            return f" under {count} accepted adjudication{plural} of {used.url} (sha256 {used.short})"
        if is_none(self.config.adjudications or ""):
            return " against the raw gold (dataset.adjudications: none)"
        return ""

    def _batch_lines(self, batches: Batches) -> list[str]:
        """How a batch system sends its documents, each batch an earlier process left in flight, and
        the worst case the budget counts."""
        limits, budget = batches.limits, self.config.budget.usd
        lines = [
            f"  batches of at most {limits.requests:,} requests and {limits.bytes / 1e6:,.0f} MB, at "
            f"{batches.discount:g} of the standard price; answers within 24 hours"
        ]
        now = time.time()
        for batch in self.batches:
            lines.append(f"  {files.describe(batch, 'in flight', None, now)}: collected, not sent again")
        held = {held["doc_id"] for batch in self.batches for held in batch["documents"].values()}
        to_send = [row for row in self.to_ask if row.doc_id not in held]
        if not to_send:
            return lines
        if not batches.priced:
            return [*lines, "  cost: unknown until usd_per_mtok_in and usd_per_mtok_out are set (tokens are recorded)"]
        worst = worst_case(self.config.adapter, batches, self.dataset, to_send)
        said = f"worst case ${worst:,.2f} for {len(to_send)} documents (every answer at its output cap, batch price)"
        if budget is None:
            return [*lines, f"  {said}"]
        spent = (spending.spent["usd"] if (spending := spending_of(self)) is not None else None) or 0.0
        already = f" (${spent:,.2f} spent already)" if spent else ""
        return [*lines, f"  budget ${budget:,.2f}{already}: a batch is sent only while its worst case fits; {said}"]


@dataclass(frozen=True)
class Refused:
    """A config or run folder that cannot run, and why (one line)."""

    what: str
    error: OebError

    def line(self) -> str:
        return f"{self.what}: refused: {self.error}"


@dataclass(frozen=True)
class Plans:
    """The plan of a whole run: one `Plan` per system that can go ahead, and those refused."""

    plans: tuple[Plan, ...]
    refused: tuple[Refused, ...] = ()

    def lines(self) -> list[str]:
        """Every system's plan lines, then one line per refused config."""
        return [line for plan in self.plans for line in plan.lines()] + [r.line() for r in self.refused]


def _checked(
    config: Config, opened: dict[tuple[str, str], Dataset]
) -> tuple[Dataset, tuple[Row, ...], dict[str, Any], Adjudications | None]:
    """The plan's checks in the reference's order: keys, manifest, rows, documents, every gold; then
    the adjudication file grading will apply (`oeb adjudicate check`'s checks of its accepted
    entries). A dataset already opened for another system of the run is shared (read and checked once)."""
    config.adapter.check_keys()
    batches = config.adapter.batching()
    if batches is not None and config.budget.usd is not None and not batches.priced:
        raise ConfigError(
            f"budget.usd needs the price of a {config.system} batch, which oeb does not know: set "
            "usd_per_mtok_in and usd_per_mtok_out (the provider's standard prices per million tokens)"
        )
    key = (config.dataset, config.manifest)
    if key not in opened:
        opened[key] = open_dataset(config.dataset, config.manifest)
    dataset = opened[key]
    rows, selection = select(dataset.rows, config.rows)
    dataset.check_documents(rows)
    dataset.check_golds()
    try:
        adjudications = applying(_absolute(config.adjudications), dataset)
    except AdjudicationError as error:
        if config.adjudications is None:  # the dataset's own file: the error names it
            raise
        said = str(error).replace("give --adjudications none", "set dataset.adjudications: none")
        raise AdjudicationError(f"dataset.adjudications: {said}") from None
    return dataset, rows, selection, adjudications


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


def config_tree(config: Config, dataset: Dataset) -> dict[str, Any]:
    """config.yaml: the config as resolved, a local dataset and adjudication file as absolute paths
    (so a resume or regrade from another directory reads the same ones)."""
    url = dataset.identity if storage.is_local(config.dataset) else config.dataset
    return dataclasses.replace(config, dataset=url, adjudications=_absolute(config.adjudications)).plain()


def _absolute(adjudications: str | None) -> str | None:
    """`dataset.adjudications` with a local path made absolute (`none` and other URLs as given)."""
    if adjudications is None or is_none(adjudications) or not storage.is_local(adjudications):
        return adjudications
    return str(storage.local_path(adjudications).resolve())


def plan_run(config: Config, out: str) -> Plan:
    """A new run of `config` in a new folder under `out`."""
    return _plan_new(config, out, {})


def _plan_new(config: Config, out: str, opened: dict[tuple[str, str], Dataset]) -> Plan:
    dataset, rows, selection, adjudications = _checked(config, opened)
    name = new_name(config.adapter.label)
    folder = RunFolder(storage.join(out, name))
    settings = _settings(config, dataset, name, selection)
    cost = estimate(config.adapter, dataset, rows)
    return Plan(config, dataset, rows, selection, folder, settings, rows, {}, False, label=config.adapter.label,
                estimate=cost, adjudications=adjudications)  # fmt: skip


def plan_runs(paths: Sequence[str], out: str, sets: Sequence[str] = (), reuse: Sequence[str] = ()) -> Plans:
    """New runs of the configs at `paths`, side by side, each in its own folder under `out`. A `--set`
    applies to every config that has its path (refused when none has it). With one config its
    refusal is raised; with several, a config that cannot run is listed with its reason. `reuse`
    names earlier runs (folders or prefixes) whose answers to the same questions are taken, not asked."""
    opened: dict[tuple[str, str], Dataset] = {}
    trees = _with_sets({path: functools.partial(read_tree, path) for path in paths}, sets)
    index = ReuseIndex.load(reuse) if reuse else None

    def plan(path: str) -> Plan:
        planned = _plan_new(check_tree(trees[path](), where=path), out, opened)
        if index is None:
            return planned
        found = index.find_many(planned.config, planned.dataset, planned.rows)
        reused = {doc_id: url for doc_id, (_, url) in found.items()}
        cost = estimate(planned.config.adapter, planned.dataset, [r for r in planned.rows if r.doc_id not in reused])
        return dataclasses.replace(planned, reused=reused, estimate=cost)

    return _gathered(paths, plan)


def plan_resumes(
    urls: Sequence[str], sets: Sequence[str] = (), retry_failed: bool = False, force_unlock: bool = False
) -> Plans:
    """Resumes of the run folders at `urls`, side by side (as `plan_runs`: a `--set` applies where
    its path exists; a folder that cannot be resumed is listed with its reason when there are several)."""
    opened: dict[tuple[str, str], Dataset] = {}
    urls = list(dict.fromkeys(urls))
    readers = {url: _config_reader(RunFolder(url)) for url in urls}
    trees = _with_sets(readers, sets)

    def plan(url: str) -> Plan:
        return _plan_resume(url, trees[url], retry_failed, force_unlock, opened)

    return _gathered(urls, plan)


def _gathered(names: Sequence[str], plan: Any) -> Plans:
    """Each name's plan, or its refusal (raised when it is the only one, or when none can run);
    the systems' labels made unique and one Ray address for all."""
    plans: list[Plan] = []
    refused: list[Refused] = []
    for name in names:
        try:
            plans.append(plan(name))
        except OebError as error:
            if len(names) == 1:
                raise
            refused.append(Refused(name, error))
    if not plans:
        raise OebError("no config can run: " + "; ".join(r.line() for r in refused))
    addresses = {p.config.ray.address for p in plans}
    if len(addresses) > 1:
        shown = ", ".join(sorted(str(address) for address in addresses))
        raise ConfigError(
            f"the configs name different ray.address ({shown}); one run uses one Ray: give --set ray.address=..."
        )
    return Plans(_labelled(plans), tuple(refused))


def _labelled(plans: list[Plan]) -> tuple[Plan, ...]:
    """Plans whose labels are unique: a second config of one system is `label#2`."""
    seen: Counter[str] = Counter()
    unique = []
    for plan in plans:
        label = plan.label or plan.config.adapter.label
        seen[label] += 1
        unique.append(dataclasses.replace(plan, label=label if seen[label] == 1 else f"{label}#{seen[label]}"))
    return tuple(unique)


def _with_sets(readers: dict[str, Any], sets: Sequence[str]) -> dict[str, Any]:
    """Per name a function giving its config tree with the `--set`s that apply to it. With one name
    every `--set` must apply; with several a `--set` applies where its path exists and is refused
    only when it applies nowhere (a name whose tree cannot be read is refused on its own)."""
    if len(readers) == 1 or not sets:
        return {name: (lambda read=read: apply_sets(read(), list(sets))) for name, read in readers.items()}
    trees: dict[str, dict[str, Any] | OebError] = {}
    for name, read in readers.items():
        try:
            trees[name] = read()
        except OebError as error:
            trees[name] = error
    for assignment in sets:
        first: ConfigError | None = None
        applied = False
        for name, tree in trees.items():
            if isinstance(tree, OebError):
                continue
            try:
                trees[name] = apply_sets(tree, [assignment])
                applied = True
            except ConfigError as error:
                first = first or error
        if not applied and first is not None:
            raise ConfigError(f"{first} (in none of the {len(readers)} configs)")
    return {name: (lambda tree=tree: _given(tree)) for name, tree in trees.items()}


def _given(tree: dict[str, Any] | OebError) -> dict[str, Any]:
    if isinstance(tree, OebError):
        raise tree
    return tree


def _config_reader(folder: RunFolder) -> Any:
    """A function reading the folder's config.yaml (refusing a folder that has none)."""

    def read() -> dict[str, Any]:
        config_url = folder.path("config.yaml")
        if not storage.exists(config_url):
            raise RunFolderError(f"{folder.url} has no config.yaml; give a run folder that oeb run made")
        return read_tree(config_url)

    return read


def retryable(record: dict[str, Any]) -> bool:
    error = record.get("error") or {}
    return error.get("type") in RETRYABLE or error.get("status") in TRANSIENT_STATUSES


def still_to_ask(rows: Sequence[Row], records: dict[str, dict[str, Any]], retry_failed: bool) -> tuple[Row, ...]:
    return tuple(row for row in rows if row.doc_id not in records or (retry_failed and retryable(records[row.doc_id])))


def plan_resume(url: str, sets: Sequence[str] = (), retry_failed: bool = False, force_unlock: bool = False) -> Plan:
    """Continue the run in `url`: the same question, asking only what has no record (and, with
    `retry_failed`, failures that asking again may fix). Refused while another process writes it."""
    [plan] = plan_resumes([url], sets, retry_failed, force_unlock).plans
    return plan


def _plan_resume(
    url: str, tree: Any, retry_failed: bool, force_unlock: bool, opened: dict[tuple[str, str], Dataset]
) -> Plan:
    folder = RunFolder(url)
    config_url = folder.path("config.yaml")
    read = tree()
    ensure_free(folder.url, force=force_unlock)
    stored = folder.settings()
    config = check_tree(read, where=config_url)
    dataset, rows, selection, adjudications = _checked(config, opened)
    settings = _settings(config, dataset, folder.name, selection)
    label = config.adapter.label
    if stored is None:  # killed between config.yaml and settings.json: nothing was asked yet
        cost = estimate(config.adapter, dataset, rows)
        return Plan(config, dataset, rows, selection, folder, settings, rows, {}, True, retry_failed, label,
                    estimate=cost, adjudications=adjudications)  # fmt: skip
    _same_question(folder, stored, settings, config.adapter)
    settings["started"], settings["launch"] = stored.get("started"), stored.get("launch", {})
    listing = folder.listing()  # one listing of the folder, however many records it holds
    records = folder.records([row.doc_id for row in rows], listing)
    spilled = spill.pending(folder.url)
    records = {doc_id: r for doc_id, r in spilled.records.items() if doc_id in {row.doc_id for row in rows}} | records
    unread = {doc_id: record for doc_id, record in records.items() if record.get("unread")}
    to_ask = still_to_ask(rows, records, retry_failed)
    handles = jobs.pending(folder.url) if any(path.startswith(f"{jobs.FOLDER}/") for path in listing) else {}
    pending = dict(spilled.jobs) | dict(handles)  # those of documents recorded are stale: removed under the lock
    costs = tuple(record["cost"] for record in records.values() if record.get("cost"))
    cost = estimate(config.adapter, dataset, [row for row in to_ask if row.doc_id not in pending])
    asked = {row.doc_id for row in to_ask}
    live = [*files.live(folder.url), *spilled.batches.values()] if config.adapter.batching() else []
    batches = tuple(
        cast(BatchFile, batch) for batch in live if any(h["doc_id"] in asked for h in batch["documents"].values())
    )
    return Plan(config, dataset, rows, selection, folder, settings, to_ask, unread, True, retry_failed, label,
                pending, cost, costs, batches, spilled=spilled or None, adjudications=adjudications)  # fmt: skip


def _same_question(folder: RunFolder, stored: dict[str, Any], settings: dict[str, Any], adapter: Adapter) -> None:
    """Refuse a resume that would put two different runs' answers in one folder (an option the
    adapter gained since the folder was written counts at its default)."""
    if isinstance(stored.get("options"), dict) and stored.get("system") == settings.get("system"):
        stored = stored | {"options": adapter.with_defaults(stored["options"])}
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


def spending_of(plan: Plan) -> Spending | None:
    """The system's spend against its budget, counting what earlier processes recorded (None: no budget)."""
    if not plan.config.budget:
        return None
    spending = Spending(plan.config.budget, plan.estimate or Estimate(plan.config.system, 0), plan.config.in_flight())
    for cost in plan.costs:
        spending.add({"cost": cost})
    return spending
