"""A run from end to end: plan (every check, no call), then predict and grade (docs/running.md).

`plan_runs` and `plan_resumes` read and check everything before anything is paid for or written, for
one system or several side by side (a config that cannot run is listed with its reason and the rest
go ahead); `execute` writes each run folder (config.yaml and settings.json first, before Ray starts,
so a kill at any moment leaves no folder or one `oeb resume` continues), predicts every system's
documents in one driver loop, grades each system's selection, and says per system how it ended.
Grading a folder again is `oeb.run.regrade.grade_folder`.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import dataclasses
import datetime
import functools
import logging
import time
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

from oeb import _retry, storage
from oeb.batch import files
from oeb.batch.files import BatchFile
from oeb.batch.sender import worst_case
from oeb.dataset import Dataset, Row, open_dataset
from oeb.errors import ConfigError, NothingAnswered, OebError, ResumeMismatch, RunFolderError, StorageError
from oeb.run import jobs, spill
from oeb.run._set import apply_sets
from oeb.run.cluster import choose, session, worker_env
from oeb.run.config import Config, check_tree, read_tree
from oeb.run.folder import IDENTITY, TASK, RunFolder, identity, new_name
from oeb.run.grade_stage import Graded, Grader
from oeb.run.lock import ensure_free
from oeb.run.progress import RunProgress
from oeb.run.regrade import grade_folder, open_folder  # noqa: F401  (moved there; imported here by callers)
from oeb.run.reuse import ReuseIndex
from oeb.run.selection import describe, select
from oeb.run.spending import Estimate, Spending, estimate
from oeb.systems import TRANSIENT_STATUSES, Asking, reread
from oeb.systems.batches import Batches

log = logging.getLogger(__name__)

RETRYABLE = ("SystemTimeout", "SystemUnreachable")
EXIT_PRIORITY = (1, 75, 5, 4, 0)
"""A run of several systems exits with the first of these codes any system ended with (docs/running.md)."""


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
    """Documents whose job an earlier process submitted (`oeb.run.jobs`): the saved asking, or why its
    file cannot be read (that document is submitted again). Those already recorded are stale."""
    estimate: Estimate | None = None
    """The estimated cost of the documents to ask (`oeb.run.spending`)."""
    costs: tuple[dict[str, Any], ...] = ()
    """The costs of the records an earlier process saved: a resume's budget counts them."""
    batches: tuple[BatchFile, ...] = ()
    """The provider batches an earlier process sent (a system with `batch: true`): collected, not sent again."""
    reused: dict[str, str] = field(default_factory=dict)
    """Documents an earlier run answered to the same question (`--reuse`): doc_id -> that run's folder.
    Only the URL is kept: the record is read again and saved when the run goes ahead."""
    spilled: spill.Spilled | None = None
    """What an earlier process of this run kept in its spill folder when storage failed: saved into
    the run folder under the lock, before anything is asked (`oeb.run.spill`)."""

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
            f"extract on {config.dataset} (manifest {config.manifest}): {count}{chosen}, graded by field_matching",
            f"  {self.folder.url}: {'resumed' if self.resumed else 'new'} run, {len(self.to_ask)} documents to "
            f"predict with {config.system}, {asking}, {where}",
        ]
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
            spent = spending.spent if (spending := _spending(self)) is not None else None  # a resume's earlier costs
            lines += [f"  {line}" for line in self.estimate.lines(config.budget, spent)]
        return lines

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
        spent = (spending.spent["usd"] if (spending := _spending(self)) is not None else None) or 0.0
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


@dataclass(frozen=True)
class RunResult:
    """What a run gives back: the grading report, the limiter's statistics and where work ran."""

    report: dict[str, Any]
    predicted: dict[str, Any]
    graded_on: frozenset[str]


@dataclass(frozen=True)
class Ended:
    """How one system's run ended: graded (`result`), and the error it ends with, if any (a stop, a
    budget reached, nothing answered)."""

    plan: Plan
    result: RunResult | None
    error: OebError | None = None

    @property
    def exit_code(self) -> int:
        return 0 if self.error is None else self.error.exit_code


@dataclass(frozen=True)
class Outcome:
    """A whole run's end: each system's, and the configs refused at the plan."""

    ended: tuple[Ended, ...]
    refused: tuple[Refused, ...] = field(default=())

    @property
    def exit_code(self) -> int:
        """The highest-priority code among the systems (and 1 for a refused config), in the order 1 > 75 > 5 > 4 > 0."""
        codes = {ended.exit_code for ended in self.ended} | {1 for _ in self.refused}
        return next((code for code in EXIT_PRIORITY if code in codes), max(codes, default=0))

    def lines(self) -> list[str]:
        """One line per system that did not end cleanly, and per refused config."""
        return [f"{e.plan.folder.name}: {e.error}" for e in self.ended if e.error] + [r.line() for r in self.refused]


def _checked(config: Config, opened: dict[tuple[str, str], Dataset]) -> tuple[Dataset, tuple[Row, ...], dict[str, Any]]:
    """The plan's checks in the reference's order: keys, manifest, rows, documents, every gold. A
    dataset already opened for another system of the run is shared (read and checked once)."""
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
    return _plan_new(config, out, {})


def _plan_new(config: Config, out: str, opened: dict[tuple[str, str], Dataset]) -> Plan:
    dataset, rows, selection = _checked(config, opened)
    name = new_name(config.adapter.label)
    folder = RunFolder(storage.join(out, name))
    settings = _settings(config, dataset, name, selection)
    cost = estimate(config.adapter, dataset, rows)
    return Plan(config, dataset, rows, selection, folder, settings, rows, {}, False, label=config.adapter.label,
                estimate=cost)  # fmt: skip


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


def _retryable(record: dict[str, Any]) -> bool:
    error = record.get("error") or {}
    return error.get("type") in RETRYABLE or error.get("status") in TRANSIENT_STATUSES


def _to_ask(rows: Sequence[Row], records: dict[str, dict[str, Any]], retry_failed: bool) -> tuple[Row, ...]:
    return tuple(row for row in rows if row.doc_id not in records or (retry_failed and _retryable(records[row.doc_id])))


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
    dataset, rows, selection = _checked(config, opened)
    settings = _settings(config, dataset, folder.name, selection)
    label = config.adapter.label
    if stored is None:  # killed between config.yaml and settings.json: nothing was asked yet
        cost = estimate(config.adapter, dataset, rows)
        return Plan(config, dataset, rows, selection, folder, settings, rows, {}, True, retry_failed, label,
                    estimate=cost)  # fmt: skip
    _same_question(folder, stored, settings)
    settings["started"], settings["launch"] = stored.get("started"), stored.get("launch", {})
    listing = folder.listing()  # one listing of the folder, however many records it holds
    records = folder.records([row.doc_id for row in rows], listing)
    spilled = spill.pending(folder.url)
    records = {doc_id: r for doc_id, r in spilled.records.items() if doc_id in {row.doc_id for row in rows}} | records
    unread = {doc_id: record for doc_id, record in records.items() if record.get("unread")}
    to_ask = _to_ask(rows, records, retry_failed)
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
                pending, cost, costs, batches, spilled=spilled or None)  # fmt: skip


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
    """Run one plan (`execute_all`), raising the error it ended with."""
    [ended] = execute_all([plan], details=details, force_unlock=force_unlock).ended
    if ended.error is not None:
        raise ended.error
    assert ended.result is not None
    return ended.result


def execute_all(
    plans: Sequence[Plan], *, details: bool = True, force_unlock: bool = False, refused: Sequence[Refused] = ()
) -> Outcome:
    """Write each run folder, predict what the plans list side by side (one driver loop), grading each
    document as soon as its record is saved, then finish each system's grading; hold every folder's
    lock throughout (`force_unlock` takes an s3:// lock whose holder seems alive). A system that
    stops or reaches its budget is not graded (its folder waits for `oeb resume`); the others go on.
    New folders get config.yaml and settings.json before anything else starts."""
    from oeb.run.predict import Job, Predicted, predict_jobs  # Ray actors: imported only when a run goes ahead

    chosen = [plan.config.retry_s for plan in plans if plan.config.retry_s is not None]
    if chosen:  # before the first write; Ray workers get it with the driver's OEB_* variables
        _retry.set_retry_seconds(max(chosen))
    for plan in plans:
        if not plan.resumed:
            _launch(plan)
    with contextlib.ExitStack() as held:
        for plan in plans:
            command = "oeb resume" if plan.resumed else "oeb run"
            held.enter_context(plan.folder.locked(command, force=force_unlock))
        documents = sum(len(plan.rows) for plan in plans)
        held.enter_context(session(plans[0].config.ray.address, worker_env(), documents=documents))
        graders = {
            plan.label: held.enter_context(Grader(plan.folder, plan.dataset, plan.rows, details=details))
            for plan in plans
        }
        work = []
        for plan in plans:
            to_ask = _reused(plan, _prepared(plan), graders[plan.label])
            work.append(
                Job(plan.label, plan.config, plan.dataset, to_ask, plan.folder, _collect(plan), _spending(plan))
            )
        progress = held.enter_context(RunProgress([job.label for job in work], {j.label: len(j.rows) for j in work}))

        def saved(job: Job, doc_id: str, record: dict[str, Any]) -> None:
            graders[job.label].add(doc_id, record)
            _show_grading(progress, graders.values())

        # A system that is done finishes its grading at once, on a thread, while the others still ask:
        # only the last system's finish is left after the last answer. Left before the graders: a
        # failed run waits for the finishes under way.
        finishing = held.enter_context(concurrent.futures.ThreadPoolExecutor(2, thread_name_prefix="oeb-finish"))
        finished: dict[str, concurrent.futures.Future[Graded]] = {}

        def done(job: Job, stage: Predicted) -> None:
            if stage.stopped is None:
                finished[job.label] = finishing.submit(graders[job.label].finish)

        predicted = predict_jobs(work, progress, on_saved=saved, on_done=done)
        ended = []
        for plan, stage in zip(plans, predicted, strict=True):
            if stage.stopped is not None:
                graders[plan.label].abandon(stage.stopped)
                ended.append(Ended(plan, None, stage.stopped))
                continue
            future = finished.get(plan.label)
            graded = future.result() if future is not None else graders[plan.label].finish()
            _show_grading(progress, graders.values())
            result = RunResult(graded.report, stage.stats, graded.nodes)
            ended.append(Ended(plan, result, _nothing_answered(plan, graded.report)))
    return Outcome(tuple(ended), tuple(refused))


def _show_grading(progress: RunProgress, graders: Iterable[Grader]) -> None:
    """The grading queue in the live view: documents handed to grading and not scored yet, and scored."""
    waiting = sum(grader.outstanding for grader in graders)
    scored = sum(grader.queued - grader.outstanding for grader in graders)
    progress.grading(waiting, 0, scored)


def _reused(plan: Plan, to_ask: tuple[Row, ...], grader: Grader) -> tuple[Row, ...]:
    """Save the answers the plan reuses (each read from its earlier run and saved with `reused_from`,
    one at a time), hand them to grading; the documents still to ask. One that can no longer be read
    is asked."""
    if not plan.reused:
        return to_ask
    left = []
    for row in to_ask:
        url = plan.reused.get(row.doc_id)
        try:
            record = None if url is None else storage.read_json(RunFolder(url).record_url(row.doc_id))
        except StorageError as error:
            log.warning(
                "%s: the answer to reuse for %s cannot be read (%s); it is asked", plan.label, row.doc_id, error
            )
            record = None
        if not isinstance(record, dict):
            left.append(row)
            continue
        plan.folder.save(row.doc_id, record | {"reused_from": url})
        grader.add(row.doc_id, record)
    log.info("%s: %d answers reused from earlier runs", plan.folder.name, len(to_ask) - len(left))
    return tuple(left)


def _collect(plan: Plan) -> dict[str, Asking]:
    """The jobs to collect: each pending document's saved asking; an unreadable handle becomes a
    fresh asking that submits again and records why."""
    collect = {}
    asked = {row.doc_id for row in plan.to_ask}
    for doc_id, saved in plan.pending.items():
        if doc_id not in asked:
            continue
        if isinstance(saved, str):
            log.warning("%s: %s; it is submitted again", plan.folder.name, saved)
            collect[doc_id] = Asking.unreadable(saved)
        else:
            collect[doc_id] = Asking.from_json(saved)
    return collect


def _spending(plan: Plan) -> Spending | None:
    """The system's spend against its budget, counting what earlier processes recorded (None: no budget)."""
    if not plan.config.budget:
        return None
    spending = Spending(plan.config.budget, plan.estimate or Estimate(plan.config.system, 0), plan.config.in_flight())
    for cost in plan.costs:
        spending.add({"cost": cost})
    return spending


def _launch(plan: Plan) -> None:
    """A new run's folder with config.yaml and settings.json (`RunFolder.launch`), before the lock,
    Ray or any call: a kill at any moment leaves no folder, or one that `oeb resume` continues."""
    plan.folder.launch(_tree(plan.config, plan.dataset), plan.settings)


def _prepared(plan: Plan) -> tuple[Row, ...]:
    """What to ask, under the folder's lock: a resume writes its config and settings again (a resume
    may change timeout, workers, the ray block and the budget), reads its unread answers again and
    reads the records again (a process that wrote the folder between the plan and the lock saved
    answers that must not be paid for twice)."""
    folder = plan.folder
    if not plan.resumed:
        return plan.to_ask
    folder.write_config(_tree(plan.config, plan.dataset))
    folder.write_settings(plan.settings)
    _import_spill(plan)
    for doc_id, record in plan.unread.items():
        folder.save(doc_id, reread(plan.config.adapter, record))
    records = folder.records([row.doc_id for row in plan.to_ask], folder.listing())
    to_ask = _to_ask(plan.to_ask, records, plan.retry_failed)
    asked = {row.doc_id for row in to_ask}
    for doc_id in plan.pending:
        if doc_id not in asked:  # its record was saved, the kill came before the handle was removed
            jobs.remove(folder.url, doc_id)
    done = len(plan.rows) - len(to_ask)
    if done:
        rest = f"{len(to_ask)} to predict" if to_ask else "nothing to predict"
        log.info("%s: %d of %d rows were done in an earlier run; %s", folder.name, done, len(plan.rows), rest)
    return to_ask


def _import_spill(plan: Plan) -> None:
    """Save what the spill folder kept into the run folder (a record the folder has already wins),
    write back its job handles, then remove it: from here the run folder holds everything."""
    spilled, folder = plan.spilled, plan.folder
    if not spilled:
        return
    saved = folder.records(spilled.records, folder.listing())
    for doc_id, record in spilled.records.items():
        if doc_id not in saved:
            folder.save(doc_id, record)
    for doc_id, asking in spilled.jobs.items():
        if doc_id not in saved and doc_id not in spilled.records:
            jobs.write(folder.url, doc_id, asking)
    for batch in spilled.batches.values():  # its documents saved meanwhile are skipped when it is collected
        files.write(folder.url, cast(BatchFile, batch))
    spill.clear(folder.url)
    log.info(
        "%s: saved %d answers, %d job handles and %d provider batches from the spill folder %s",
        folder.name,
        len(spilled.records),
        len(spilled.jobs),
        len(spilled.batches),
        spilled.path,
    )


def _nothing_answered(plan: Plan, report: dict[str, Any]) -> NothingAnswered | None:
    """The end of a run whose every document failed: a broken set-up, not a result. Names the most
    common error (type and one message) with its count."""
    summary = report["scorers"]["field_matching"]
    if summary["rows"] == 0 or summary["failed"] < summary["rows"]:
        return None
    folder = plan.folder
    records = folder.records([row.doc_id for row in plan.rows], folder.listing())
    kinds: Counter[str] = Counter()
    example: dict[str, dict[str, Any]] = {}
    for record in records.values():
        kind = str((record.get("error") or {}).get("type"))
        kinds[kind] += 1
        example.setdefault(kind, record)
    rows = summary["rows"]
    if not kinds:
        return NothingAnswered(f"no document was answered ({rows} of {rows} failed); check the config (oeb check)")
    kind, count = kinds.most_common(1)[0]
    message = " ".join(str((example[kind].get("error") or {}).get("message", "")).split())[:200]
    then = f"oeb resume {folder.url} --retry-failed" if _retryable(example[kind]) else "run again"
    return NothingAnswered(
        f"no document was answered ({summary['failed']} of {rows} failed); most common error: {kind}: {message} "
        f"({count} of {rows}); fix the set-up (oeb check tests the config, key and endpoint), then {then}"
    )
