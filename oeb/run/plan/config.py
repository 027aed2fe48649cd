"""The run config: one YAML mapping that describes a run completely (docs/running.md).

The reference's keys (`dataset, manifest, scorers, rows, timeout, workers, system`) plus oeb's
`budget:` (the most a run may spend, docs/money.md) and `ray:` block (where Ray runs, how many actors
hold the system, the shared rate limit). Validation is strict, as the reference's: no extra keys, no
type coercion except int -> float for numbers, and every problem reported in one line naming the
dotted key and what the value should be. A config without a `ray:` or `budget:` block (one written
for the reference, or before budgets) gets the defaults.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Any

import yaml

from oeb import storage
from oeb._yaml import load_yaml
from oeb.errors import AdjudicationError, ConfigError, OebError, StorageFormatError, StorageNotFoundError
from oeb.run.plan._problems import Problems
from oeb.run.plan._set import apply_sets
from oeb.systems import Adapter, OptionError, get
from oeb.systems._options import problems as option_problems
from oeb.systems.registry import adapter_class

PUBLIC_DATASET = "hf://datasets/datalab-to/omni_extract_bench"
DEFAULT_TIMEOUT = 1800.0
DEFAULT_REQUESTS_PER_SECOND = 2.0
"""A safety cap above what a vendor's documented concurrency makes, as in the shipped configs."""
SCORERS = ("field_matching",)
KEYS = ("dataset", "manifest", "scorers", "rows", "timeout", "workers", "budget", "system", "ray", "storage", "slices")
ROW_KEYS = ("sample", "limit", "only")
BUDGET_KEYS = ("usd", "credits")
DATASET_KEYS = ("url", "adjudications")
"""`dataset:` written as a mapping: the dataset's URL and the adjudication file grading applies."""
OPTIONAL_KEYS = ("budget", "storage", "slices", "dataset.adjudications")
"""Keys a config may leave out: configs written before budgets existed run with no limit, before
`storage` with the storage defaults; `slices` (bucket edges of document traits) is read by `oeb
report --config` only (docs/slices.md); without `dataset.adjudications` the dataset's own
adjudications.yaml applies when it has one (docs/adjudication.md)."""
STORAGE_KEYS = ("retry_s",)
RAY_KEYS = ("address", "actors", "rate_limit")
RATE_KEYS = ("requests_per_second", "max_in_flight")


@dataclass(frozen=True)
class Rows:
    """Which manifest rows a run asks: `only` ids, else `sample` spread evenly, else the first `limit`."""

    sample: int = 0
    limit: int = 0
    only: tuple[str, ...] | None = None


@dataclass(frozen=True)
class SpendLimit:
    """The most a run may spend, dollars and credits apart (None: no limit in that unit). Not part of
    a run's identity: a resume may raise or lower it."""

    usd: float | None = None
    credits: float | None = None

    def plain(self) -> dict[str, float | None]:
        return {"usd": self.usd, "credits": self.credits}

    def __bool__(self) -> bool:
        return self.usd is not None or self.credits is not None


CONCURRENCY_RULE = (
    "documents in flight: ray.rate_limit.max_in_flight when it is above 0, else workers when it is above "
    "0, else the system's documented concurrency"
)
"""The one rule, for the plan and the docs to quote (docs/money.md, "How many documents in flight")."""


@dataclass(frozen=True)
class RayConfig:
    """Where the run's work goes and how fast it may call the system.

    `address` None starts a local Ray for the run; `auto`, `host:port` or `ray://host:port` joins a
    cluster. `actors` processes each hold one adapter (0: one per document in flight). One limiter
    per system allows `requests_per_second` starts (None: no cap) and `max_in_flight` documents at
    once (0: `workers` decides, see `Config.concurrency`).
    """

    address: str | None = None
    actors: int = 0
    requests_per_second: float | None = DEFAULT_REQUESTS_PER_SECOND
    max_in_flight: int = 0

    def plain(self) -> dict[str, Any]:
        rate = {"requests_per_second": self.requests_per_second, "max_in_flight": self.max_in_flight}
        return {"address": self.address, "actors": self.actors, "rate_limit": rate}


@dataclass(frozen=True)
class Config:
    """A checked config; `adapter` is the system built from its options (defaults filled in)."""

    dataset: str
    manifest: str
    rows: Rows
    timeout: float
    workers: int
    adapter: Adapter
    system: str
    ray: RayConfig
    budget: SpendLimit = SpendLimit()
    adjudications: str | None = None
    """`dataset.adjudications`: the adjudication file grading applies (any fsspec URL; `none`: the raw
    gold; None: the dataset's own adjudications.yaml when it has one; `oeb.gold.check.applying`)."""
    retry_s: float | None = None
    """`storage.retry_s`: how long storage calls retry transient faults (None: `OEB_STORAGE_RETRY_S`,
    else 600 s; `oeb._retry`)."""

    def plain(self) -> dict[str, Any]:
        """The resolved config as config.yaml stores it (options re-emitted from the adapter)."""
        dataset: str | dict[str, str] = self.dataset  # the short form unless it names a file
        if self.adjudications is not None:
            dataset = {"url": self.dataset, "adjudications": self.adjudications}
        return {
            "dataset": dataset,
            "manifest": self.manifest,
            "scorers": {"field_matching": {}},
            "rows": {"sample": self.rows.sample, "limit": self.rows.limit, "only": _list(self.rows.only)},
            "timeout": self.timeout,
            "workers": self.workers,
            "budget": self.budget.plain(),
            "system": {self.system: self.adapter.options()},
            "ray": self.ray.plain(),
            "storage": {"retry_s": self.retry_s},
        }

    def concurrency(self) -> tuple[int, str]:
        """Documents asked at once and the key that decided it (`CONCURRENCY_RULE`): the first of
        `ray.rate_limit.max_in_flight`, `workers` that is set, else the system's documented default.
        One key decides, never the smaller of two, so a raised cap is never undone by a default."""
        if self.ray.max_in_flight:
            return self.ray.max_in_flight, "ray.rate_limit.max_in_flight"
        if self.workers:
            return self.workers, "workers"
        return type(self.adapter).workers, f"the default of {self.system}"

    def in_flight(self) -> int:
        """Documents asked at once (`concurrency` without its reason)."""
        return self.concurrency()[0]

    def actors(self) -> int:
        """Processes holding the system: `ray.actors`, never more than the documents in flight."""
        return min(self.ray.actors or self.in_flight(), self.in_flight())


def _list(value: tuple[str, ...] | None) -> list[str] | None:
    return None if value is None else list(value)


def to_yaml(tree: dict[str, Any]) -> str:
    """Block YAML in the given key order, quoting only where YAML needs it."""
    return yaml.safe_dump(tree, sort_keys=False, allow_unicode=True, default_flow_style=False)


def init_tree(system: str, dataset: str = PUBLIC_DATASET, options: dict[str, Any] | None = None) -> dict[str, Any]:
    """A complete config for `system` with every option at its default but those `options` give
    (`oeb init`, `--option K=V`)."""
    adapter = get(system, options)
    default = type(adapter).workers
    ray = RayConfig(actors=default, max_in_flight=default)
    return {
        "dataset": dataset,
        "manifest": "manifest.parquet",
        "scorers": {"field_matching": {}},
        "rows": {"sample": 0, "limit": 0, "only": None},
        "timeout": DEFAULT_TIMEOUT,
        "workers": 0,
        "budget": SpendLimit().plain(),
        "system": {system: adapter.options()},
        "ray": ray.plain(),
    }


INIT_COMMENTS = {
    "dataset": (
        "A folder, an s3:// prefix or hf://datasets/OWNER/NAME@COMMIT. As a mapping it also names the",
        "adjudication file grading applies: dataset: {url: ..., adjudications: URL} (any fsspec URL; none:",
        "the raw gold; left out: the dataset's own adjudications.yaml when it has one). docs/adjudication.md",
    ),
    "workers": (
        "Documents in flight: ray.rate_limit.max_in_flight when above 0, else workers when above 0, else",
        "the system's documented concurrency. One key decides (the plan names it), never the smaller.",
    ),
    "budget": (
        "The most this run may spend, dollars and credits apart (null: no limit). The plan estimates the",
        "cost from the system's published price; documents stop starting before the budget could be",
        "passed. A resume may change it: oeb resume RUN --set budget.usd=100 (docs/money.md).",
    ),
    "ray": (
        "requests_per_second caps starts (submits, polls, retries) of every actor together; a 429",
        "slows it down and it recovers step by step after a quiet period.",
    ),
}
"""What `oeb init` explains above a top-level key of the config it writes."""


def init_text(system: str, dataset: str = PUBLIC_DATASET, options: dict[str, Any] | None = None) -> str:
    """`init_tree` as YAML, with `INIT_COMMENTS` above their keys."""
    lines = []
    for line in to_yaml(init_tree(system, dataset, options)).splitlines(keepends=True):
        key = line.split(":", 1)[0]
        lines += [f"# {comment}\n" for comment in INIT_COMMENTS.get(key, ()) if not line.startswith(" ")]
        lines.append(line)
    return "".join(lines)


def read_tree(url: str) -> dict[str, Any]:
    """The YAML mapping in a config file, local or in storage (a missing `ray:` block gets the defaults)."""
    missing = ConfigError(f"no config at {url}; give a YAML file (oeb init SYSTEM > config.yaml writes one)")
    if storage.is_local(url) and not storage.local_path(url).is_file():
        raise missing
    try:
        text = storage.read_text(url)
    except StorageNotFoundError:
        raise missing from None
    except StorageFormatError as error:
        raise ConfigError(f"{error}; a config is UTF-8 YAML") from None
    try:
        tree = load_yaml(text)
    except yaml.YAMLError as error:
        problem = " ".join(str(error).split())
        raise ConfigError(f"{url} is not YAML: {problem}") from None
    if not isinstance(tree, dict):
        raise ConfigError(f"{url}: a config is a mapping of {', '.join(KEYS)}; oeb init SYSTEM writes one")
    if "ray" not in tree:
        tree["ray"] = RayConfig().plain()
    if "storage" not in tree:  # present, so that --set storage.retry_s=... finds its key
        tree["storage"] = {"retry_s": None}
    if isinstance(tree.get("dataset"), dict):  # present, so that --set dataset.adjudications=... finds its key
        tree["dataset"].setdefault("adjudications", None)
    budget = tree.get("budget") or {}
    if isinstance(budget, dict):  # every unit present, so that --set budget.credits=... finds its key
        tree["budget"] = SpendLimit().plain() | budget
    return tree


def load_config(path: str, sets: list[str] | None = None) -> Config:
    """Read, apply `--set`s, and check a config; a `ConfigError` names every problem at once."""
    return check_tree(apply_sets(read_tree(path), sets or []), where=path)


def check_tree(tree: dict[str, Any], where: str) -> Config:
    problems = Problems(OPTIONAL_KEYS)
    problems.keys(tree, "", KEYS)
    dataset, adjudications = _dataset(problems, tree)
    manifest = problems.string(tree, "manifest")
    _check_scorers(tree.get("scorers"), problems)
    rows = problems.mapping(tree, "rows", ROW_KEYS)
    sample = problems.integer(rows, "rows.sample")
    limit = problems.integer(rows, "rows.limit")
    only = problems.id_list(rows, "rows.only")
    timeout = problems.number(tree, "timeout", positive=True)
    workers = problems.integer(tree, "workers")
    budget = _budget(problems, tree)
    system = tree.get("system")
    ray = problems.mapping(tree, "ray", RAY_KEYS)
    rate = problems.mapping(ray, "ray.rate_limit", RATE_KEYS)
    address = problems.string(ray, "ray.address", optional=True)
    actors = problems.integer(ray, "ray.actors")
    rps = problems.number(rate, "ray.rate_limit.requests_per_second", positive=True, optional=True)
    max_in_flight = problems.integer(rate, "ray.rate_limit.max_in_flight")
    stored = problems.mapping(tree, "storage", STORAGE_KEYS)
    retry_s = problems.number(stored, "storage.retry_s", positive=False, optional=True)
    if retry_s is not None and retry_s < 0:
        problems.add("storage.retry_s", f"must be 0 or more (or null: the default), not {retry_s!r}")
    name, options = problems.system(system)
    adapter = _adapter(name, options, problems) if name else None
    problems.raise_if_any(where)
    assert adapter is not None  # a config without a system has a problem
    return Config(
        dataset=dataset,
        manifest=manifest,
        rows=Rows(sample, limit, None if only is None else tuple(only)),
        timeout=float(timeout),
        workers=workers,
        adapter=adapter,
        system=name,
        ray=RayConfig(address, actors, None if rps is None else float(rps), max_in_flight),
        budget=budget,
        adjudications=adjudications,
        retry_s=None if retry_s is None else float(retry_s),
    )


def _dataset(problems: Problems, tree: dict[str, Any]) -> tuple[Any, str | None]:
    """`dataset: URL`, or `dataset: {url: URL, adjudications: URL}`: the URL and the file (None: not named).
    A problem of the mapping, when the config's only one, exits 2 as an adjudication file's would."""
    present, value = problems.value(tree, "dataset")
    if not present or not isinstance(value, dict):
        return problems.string(tree, "dataset"), None
    before = len(problems.found) + len(problems.unknown)
    problems.keys(value, "dataset.", DATASET_KEYS)
    url = problems.string(value, "dataset.url")
    adjudications = problems.string(value, "dataset.adjudications", optional=True)
    if len(problems.found) + len(problems.unknown) > before:
        problems.kind = AdjudicationError
    return url, adjudications if isinstance(adjudications, str) else None


def _adapter(name: str, options: dict[str, Any], problems: Problems) -> Adapter | None:
    """The system built from its options, or None with every problem of its name or options added,
    each on its own line (the adapter's own checks only once the options are of the right kinds)."""
    shown = f"system.{name if name.isprintable() else repr(name)}"  # the user's own text: one line, always
    try:
        cls = adapter_class(name)
    except OebError as error:
        problems.found.append(f"{shown}: {error}")
        problems.kind = type(error)
        return None
    given = dict(options)
    if "/" in name:
        given.setdefault("model", name)
    found = option_problems(cls, given)
    for problem in found:
        problems.found.append(f"{shown}: {problem}")
        problems.kind = OptionError
    if found:
        return None
    try:
        return get(name, options)
    except OebError as error:
        problems.found.append(f"{shown}: {error}")
        problems.kind = type(error)
        return None


def _check_scorers(scorers: Any, problems: Problems) -> None:
    if "scorers" not in problems.seen:
        return
    if not isinstance(scorers, dict):
        problems.add("scorers", f"must be a mapping such as {{field_matching: {{}}}}, not {scorers!r}")
        return
    if not scorers:
        problems.add("scorers", "needs at least one entry, such as field_matching: {}")
    for name, value in scorers.items():
        entries = value if isinstance(value, list) else [value]
        if not all(isinstance(entry, dict) for entry in entries):
            problems.add(f"scorers.{name}", "is the scorer's options (such as {}) or a list of them")
        elif name not in SCORERS:
            close = difflib.get_close_matches(str(name), SCORERS, n=1)
            hint = f"did you mean {close[0]}? " if close else ""
            problems.add(f"scorers.{name}", f"is not a scorer; {hint}the scorers are {', '.join(SCORERS)}")
        elif any(entries):
            option = next(iter(next(e for e in entries if e)))
            problems.add(f"scorers.{name}", f"has no option {option!r}: field_matching takes none")
        elif len(entries) > 1:
            problems.add(f"scorers.{name}", "names one results folder twice (the same scorer, the same options)")


def _budget(problems: Problems, tree: dict[str, Any]) -> SpendLimit:
    """`budget: {usd: ..., credits: ...}`: each unit optional, a number of 0 or more or null."""
    present, value = problems.value(tree, "budget")
    if not present or value is None:
        return SpendLimit()
    if not isinstance(value, dict):
        problems.add("budget", f"must be a mapping such as {{usd: 50, credits: null}}, not {value!r}")
        return SpendLimit()
    for key in value:
        if key not in BUDGET_KEYS:
            shown = key if isinstance(key, str) and key.isprintable() else repr(key)
            close = difflib.get_close_matches(str(key), BUDGET_KEYS, n=1)
            hint = f"did you mean budget.{close[0]}? " if close else ""
            problems.add(f"budget.{shown}", f"is not a unit a budget has; {hint}the units are {', '.join(BUDGET_KEYS)}")
    problems.seen.update(f"budget.{unit}" for unit in BUDGET_KEYS if unit in value)
    amounts = []
    for unit in BUDGET_KEYS:
        amount = problems.number(value, f"budget.{unit}", positive=False, optional=True)
        if amount is not None and amount < 0:
            problems.add(f"budget.{unit}", f"must be 0 or more (or null: no limit), not {amount!r}")
        amounts.append(None if amount is None else float(amount))
    return SpendLimit(*amounts)
