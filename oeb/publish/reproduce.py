"""`oeb reproduce RUN`: run a published (or any graded) row again and test whether its score holds
(docs/publishing.md).

The run's settings.json says what was asked: the system and its options (with the endpoints it
used), the dataset at its pinned commit, the manifest and the rows. A new run asks the same
questions of the same documents, in a new folder, graded by this oeb; then the two are compared
document by document (`oeb.report.compare`, the reproduction minus the published run). The row is
reproduced when the 95% interval of the mean difference holds 0, or lies within `margin`. With
`reuse` nothing is asked: the published predictions are copied and graded again, which checks the
grading alone at no cost. Either way the provenance of the two gradings (scorer digest, oeb and
adapter versions, packages) and the options are set side by side, so a row that moved says why it may
have.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from oeb import storage
from oeb.dataset import named_by_folder
from oeb.errors import OebError, ReportError, StorageError
from oeb.report import Run, compare, load_run

if TYPE_CHECKING:
    from oeb.run.engine import Plans

TOP = 10
"""Documents shown as the ones that moved most."""


@dataclass(frozen=True)
class Reproduction:
    """A published run, its reproduction, their paired comparison (`oeb.report.compare`, B = the
    reproduction), whether the score held, and what differs between the two gradings and settings."""

    published: Run
    reproduced: Run
    comparison: dict[str, Any]
    holds: bool
    margin: float | None
    differences: list[str]
    reused: bool

    def summary(self) -> dict[str, Any]:
        """The outcome as JSON (`oeb reproduce --json`): whether it reproduced, the two folders, the paired
        analysis (reproduced minus published), every document that moved, and what differs."""
        return {
            "reproduced": self.holds,
            "margin": self.margin,
            "reused": self.reused,
            "published": {"url": self.published.url, "headline": self.comparison["a"]["headline"]},
            "reproduction": {"url": self.reproduced.url, "headline": self.comparison["b"]["headline"]},
            "paired": self.comparison["paired"],
            "moved": [{key: doc[key] for key in ("id", "accuracy", "delta", "moved")} for doc in self.moved(None)],
            "differences": self.differences,
        }

    def moved(self, top: int | None = TOP) -> list[dict[str, Any]]:
        """The documents whose accuracy changed, largest change first (the first `top`; None: all)."""
        docs = [doc for block in self.comparison["per_suite"].values() for doc in block["top"] if doc["delta"]]
        return sorted(docs, key=lambda doc: (-abs(doc["delta"]), doc["id"]))[:top]


_NOT_PUBLISHED = "<from you, not the published run>"
"""Stands in the rerun's config for an endpoint or local path the published run named (or that has no
default): the user's `--set` replaces it; left as it is, the rerun is refused."""


def _own_options(published: Run) -> tuple[str, dict[str, Any], list[str]]:
    """The published system, its options without endpoints and local paths (those at the adapter's
    default, or `_NOT_PUBLISHED` where the run named its own path or there is no usable default: none,
    or "" as azure-cu's endpoint), and the names of those the user must give."""
    from oeb.systems import adapter_class
    from oeb.systems._options import REQUIRED

    settings = published.settings
    if not all(isinstance(settings.get(key) or {}, dict) for key in ("options", "located")):
        raise ReportError(f"{published.url}'s settings.json holds options that are not a JSON object; restore it")
    system = str(settings["system"])
    cls = adapter_class(system)
    defaults = {info.name: info.default for info in cls.describe_options()}
    published_options = {**(settings.get("options") or {}), **(settings.get("located") or {})}
    options = {key: value for key, value in published_options.items() if key not in (*cls.located, *cls.paths)}
    needed = []
    for key in (*cls.located, *cls.paths):
        default = defaults.get(key, REQUIRED)
        unusable = default == REQUIRED or (key in cls.located and default == "")  # azure-cu's endpoint
        if unusable or (key in cls.paths and published_options.get(key, default) != default):
            options[key] = _NOT_PUBLISHED
            needed.append(key)
        else:
            options[key] = default
    return system, options, needed


def config_tree(published: Run, sets: Sequence[str], limit: int | None) -> dict[str, Any]:
    """The config of a run that asks what the published run asked: its settings' system and options
    (less its endpoints and local paths: those come from `--set` alone), dataset commit, manifest, rows
    and time limit, over its config.yaml's pace, concurrency and budget when it has one (on a Ray of
    this machine); then `limit` and the `--set`s. A published folder never chooses where the user's key
    is sent, what is fetched or which local file is written."""
    from oeb.run.plan._set import apply_sets
    from oeb.run.plan.config import RayConfig, SpendLimit, read_tree

    settings = published.settings
    try:
        tree = read_tree(storage.join(published.url, "config.yaml"))
    except OebError:  # no config.yaml (or not one oeb reads): the defaults
        tree = {"workers": 0, "budget": SpendLimit().plain(), "ray": RayConfig().plain()}
    dataset = settings["dataset"]
    if settings.get("dataset_commit"):
        dataset = f"{dataset}@{settings['dataset_commit']}"
    rows = settings.get("rows") or {}
    system, options, needed = _own_options(published)
    tree |= {
        "dataset": dataset,
        "manifest": settings.get("manifest") or "manifest.parquet",
        "scorers": {"field_matching": {}},
        "rows": {"sample": rows.get("sample", 0), "limit": rows.get("limit", 0), "only": rows.get("only")},
        "timeout": settings.get("timeout_s") or tree.get("timeout") or 1800.0,
        "system": {system: options},
    }
    if isinstance(tree.get("ray"), dict):
        tree["ray"]["address"] = None  # the publisher's cluster is not this machine's
    if limit is not None:
        tree["rows"]["limit"] = limit
    tree = apply_sets(tree, list(sets))
    if tree.get("dataset") == dataset:  # not replaced by the user's --set dataset=...
        named_by_folder(settings["dataset"], published.url, "--set dataset=URL")
    given = tree["system"].get(system) if isinstance(tree.get("system"), dict) else None
    for key in needed:
        if isinstance(given, dict) and given.get(key) == _NOT_PUBLISHED:
            named = {**(settings.get("options") or {}), **(settings.get("located") or {})}.get(key)
            why = (
                f"{published.url} names {key}={named!r}, which a published run does not choose"
                if named not in (None, "")
                else f"{system} needs the option {key}, which has no default"
            )
            raise ReportError(f"{why}; give your own: --set system.{system}.{key}=VALUE")
    return tree


def _adapter(run: Run) -> str | None:
    """The adapter's package and version, from the first record the run kept (None without records)."""
    listing = storage.list_files(storage.join(run.url, "records"))
    first = next((f"{doc_id}.json" for doc_id in run.doc_ids if f"{doc_id}.json" in listing), None)
    if first is None:
        return None
    try:
        record = storage.read_json(storage.join(run.url, "records", first))
    except StorageError:
        return None
    package = record.get("package") if isinstance(record, dict) else None
    return package if isinstance(package, str) else None


def _short(value: Any) -> str:
    text = value if isinstance(value, str) else repr(value)
    return text[:16] if isinstance(value, str) and len(value) == 64 else text


def _gold(provenance: dict[str, Any]) -> str:
    """The adjudication file a grading applied, as its sha256's first 12 characters (`none`: the raw gold)."""
    used = provenance.get("adjudications")
    return str(used.get("sha256", "unrecorded"))[:12] if isinstance(used, dict) else "none"


def differences(published: Run, reproduced: Run) -> list[str]:
    """What differs between the two gradings and settings, one `what: published -> reproduced` each."""
    found = []
    a, b = published.provenance, reproduced.provenance
    for key, what in (("scorer", "scorer digest"), ("oeb", "oeb version"), ("manifest_sha256", "manifest")):
        if a.get(key) != b.get(key):
            found.append(f"{what}: {_short(a.get(key, 'unrecorded'))} -> {_short(b.get(key, 'unrecorded'))}")
    golds = _gold(a), _gold(b)
    if golds[0] != golds[1]:  # a reproduction under another adjudication file (or none) moves the score
        found.append(f"adjudications: {golds[0]} -> {golds[1]}")
    adapters = _adapter(published), _adapter(reproduced)
    if adapters[0] != adapters[1]:
        found.append(f"adapter: {adapters[0] or 'unrecorded'} -> {adapters[1] or 'unrecorded'}")
    packages_a, packages_b = a.get("packages") or {}, b.get("packages") or {}
    for name in sorted(set(packages_a) | set(packages_b)):
        if packages_a.get(name) != packages_b.get(name):
            found.append(f"{name}: {packages_a.get(name, 'absent')} -> {packages_b.get(name, 'absent')}")
    for key in ("options", "located", "rows"):
        before, after = published.settings.get(key) or {}, reproduced.settings.get(key) or {}
        for name in sorted(set(before) | set(after)):
            if before.get(name) != after.get(name):
                found.append(f"{key}.{name}: {before.get(name, 'absent')!r} -> {after.get(name, 'absent')!r}")
    return found


def holds(paired: dict[str, Any], margin: float | None) -> bool:
    """The rule: the 95% interval of the difference holds 0, or lies within ±margin."""
    low, high = paired["ci95"]
    return low <= 0 <= high or (margin is not None and -margin <= low and high <= margin)


def _rerun(
    published: Run, sets: Sequence[str], limit: int | None, out: str, confirm: Callable[[Plans], None] | None
) -> str:
    """A new run of the published settings under `out` (its plan shown to `confirm` first); its folder's URL."""
    from oeb.run import engine
    from oeb.run.plan.config import check_tree

    tree = config_tree(published, sets, limit)
    plan = engine.plan_run(check_tree(tree, where=f"the settings of {published.url}"), out)
    if confirm is not None:
        confirm(engine.Plans((plan,)))
    outcome = engine.execute_all([plan])
    [ended] = outcome.ended
    if ended.error is not None:  # stopped, over budget, or nothing answered: no reproduction to compare
        raise ended.error
    return plan.folder.url


def _regrade(published: Run, out: str, adjudications: str) -> str:
    """The published run's settings and answers copied under `out` and graded by this oeb; its URL."""
    from oeb.run.folder.run_folder import new_name
    from oeb.run.grade.regrade import copy_run, grade_folder

    target = storage.join(out, new_name(f"{published.settings['system']}-regraded"))
    copy_run(published.url, target)
    # without records/, a failed document has no prediction: failed again
    grade_folder(target, partial=True, adjudications=adjudications)
    return target


def adjudications_of(published: Run, given: str | None) -> str:
    """The adjudication file to grade the reproduction under: `given` (`none`: the raw gold), else the
    one the published run was graded under (published beside it, else where it was graded), refused
    in one line when its digest is not the recorded one."""
    import hashlib

    from oeb.errors import AdjudicationError
    from oeb.gold.where import readable_on_word

    if given is not None:
        return given
    recorded = published.provenance.get("adjudications")
    if not isinstance(recorded, dict):
        return "none"
    beside = storage.join(published.url.rstrip("/").rsplit("/", 1)[0], "adjudications.yaml")
    url = beside if storage.exists(beside) else str(recorded.get("url"))
    if url != beside and not readable_on_word(url):  # a published run never chooses what oeb fetches
        raise AdjudicationError(
            f"{published.url} names the adjudication file {url!r}, which oeb does not read on a published "
            "run's word (only a local path, s3:// or hf://) and which is not published beside it; give "
            "--adjudications URL (or none)"
        )
    try:
        data = storage.read_bytes(url)
    except StorageError:
        raise AdjudicationError(
            f"{published.url} was graded under an adjudication file that cannot be read at {url}; give "
            "--adjudications URL (or none)"
        ) from None
    if hashlib.sha256(data).hexdigest() != recorded.get("sha256"):
        raise AdjudicationError(
            f"{url} is not the adjudication file {published.url} was graded under (sha256 "
            f"{str(recorded.get('sha256'))[:12]}); give --adjudications URL to grade under another"
        )
    return url


def reproduce(
    url: str,
    *,
    sets: Sequence[str] = (),
    limit: int | None = None,
    out: str = "runs",
    margin: float | None = None,
    reuse: bool = False,
    confirm: Callable[[Plans], None] | None = None,
    adjudications: str | None = None,
) -> Reproduction:
    """Run (or with `reuse`, grade) the graded run at `url` again and compare (see the module's
    docstring); `confirm` sees the new run's plan before anything is asked, and may refuse it."""
    published = load_run(url)
    published = dataclasses.replace(published, label=str(published.settings.get("system") or published.name))
    if published.brought:
        raise ReportError(
            f"{published.url} has no settings.json naming a system: there is nothing to ask again; "
            "reproduce a folder that oeb run made"
        )
    if reuse and (sets or limit is not None):
        raise ReportError("--reuse grades the published answers as they are; leave out --set and --rows.limit")
    if reuse:  # graded against the dataset the folder names: never a URL on its word
        named_by_folder(published.settings.get("dataset"), published.url, "--set dataset=URL, without --reuse")
    gold = adjudications_of(published, adjudications)
    if reuse:
        folder = _regrade(published, out, gold)
    else:
        from oeb.run.grade.regrade import grade_folder

        folder = _rerun(published, sets, limit, out, confirm)
        grade_folder(folder, partial=True, adjudications=gold)  # from the cache, under the published file
    reproduced = dataclasses.replace(load_run(folder), label=published.label)
    ids = set(reproduced.doc_ids)
    same = dataclasses.replace(published, lines=[line for line in published.lines if line["id"] in ids])
    comparison = compare(same, reproduced, top=max(len(ids), 1))  # every document: `moved` ranks them all
    if comparison["paired"]["ci95"] is None:
        raise ReportError(f"{published.url} and {folder} share no document to compare; check --rows.limit and --set")
    return Reproduction(
        published=same,
        reproduced=reproduced,
        comparison=comparison,
        holds=holds(comparison["paired"], margin),
        margin=margin,
        differences=differences(published, reproduced),
        reused=reuse,
    )
