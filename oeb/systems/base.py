"""The adapter contract: what a system is given for one document and what it hands back.

An adapter is a frozen dataclass whose fields are its options (fixed for a whole run, so it can be
rebuilt anywhere — a thread, a process, a remote worker — from its name and options alone). Class
attributes carry everything that is not an option: name, description, API-key variables, default
workers and retry policy. The one method to write is `extract`; `prepare_schema` (the vendor's
schema dialect) and `read` (pulling the extraction out of the raw answer) are optional.
"""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, NamedTuple, Self

from oeb.grounding.cite import Cite as Cite
from oeb.systems import _options
from oeb.systems._reading import dig, extraction, number
from oeb.systems.calls import Call as Call
from oeb.systems.calls import Deadline as Deadline
from oeb.systems.calls import RetryPolicy as RetryPolicy
from oeb.systems.cost import Cost as Cost
from oeb.systems.cost import Price as Price
from oeb.systems.errors import DialectError, MissingKey, SystemFailed

if TYPE_CHECKING:
    from oeb.systems.batches import Batches


class Question(NamedTuple):
    """One document and the schema to fill, after the schema conventions (`question_schema`).

    `gold` is filled by the engine only for a system that simulates from the gold (`Adapter.uses_gold`,
    the offline `mock`): read through the dataset, wherever it lives. A vendor never sees it.
    """

    document: Path
    schema: dict[str, Any]
    gold: dict[str, Any] | None = None


_COST_FIELDS = (
    ("cost_breakdown.final_cost_cents", 0.01),
    ("total_cost", 0.01),
    ("usage.cost", 1.0),
    ("usage_info.cost", 1.0),
    ("cost", 1.0),
)


def scan_cost(raw: Any) -> Cost:
    """The first dollar figure found at the usual places of a raw answer, for adapters that report
    none. Reading a top-level `total_cost` as cents follows the reference, so
    recorded costs agree with its runs."""
    for path, scale in _COST_FIELDS:
        value = number(dig(raw, path))
        if value is not None:
            return Cost(usd=round(value * scale, 6), source=f"{path}={value}")
    return Cost()


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


@dataclass(frozen=True)
class Adapter:
    """Base of every system. Subclasses are frozen dataclasses whose fields are their options; give
    each field a default and `metadata={"help": ...}` (and `"choices"` for documented values)."""

    name: ClassVar[str] = ""
    description: ClassVar[str] = ""
    keys: ClassVar[tuple[str, ...]] = ()
    stand_ins: ClassVar[Mapping[str, str]] = {}
    workers: ClassVar[int] = 5
    retry: ClassVar[RetryPolicy] = RetryPolicy()
    located: ClassVar[tuple[str, ...]] = ()
    """Options that say where the system is reached (a base URL, an endpoint): where its key is sent."""
    paths: ClassVar[tuple[str, ...]] = ()
    """Options naming a local file or folder. Neither these nor `located` are taken from a published
    run folder (`oeb reproduce`): a stranger's folder must not choose where a key goes or what is written."""
    price: ClassVar[Price | None] = None
    """The published list price (None where the vendor publishes none usable per page or document)."""
    submits: ClassVar[bool] = False
    """True for a job vendor: `submit` returns a handle and `collect` polls it to the answer, so a run
    can write the handle down and collect it after a crash instead of paying again. Set by itself for
    a class that defines both."""
    uploads_first: ClassVar[bool] = False
    """True for a job vendor whose `submit` makes free requests before the job's (an upload, a
    lookup) and calls `deadline.start()` between them, so they overlap the wait for a slot."""
    key_notes: ClassVar[tuple[str, ...]] = ()
    """Other key variables some option values need instead of `keys` (`oeb systems` shows them)."""
    uses_gold: ClassVar[bool] = False
    """True for a system that simulates answers from the gold: the engine then fills `Question.gold`."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "name" not in cls.__dict__:
            cls.name = _snake(cls.__name__)
        if "submits" not in cls.__dict__:
            cls.submits = cls.submit is not Adapter.submit and cls.collect is not Adapter.collect

    @classmethod
    def from_options(cls, options: Mapping[str, Any] | None = None) -> Self:
        """Build from user options, refusing unknown names, missing values and wrong types."""
        return cls(**_options.validate(cls, dict(options or {})))

    @classmethod
    def describe_options(cls) -> list[_options.OptionInfo]:
        """Each option's name, default (`"(required)"` if none), help and documented choices."""
        return _options.describe(cls)

    @classmethod
    def with_defaults(cls, options: Mapping[str, Any]) -> dict[str, Any]:
        """`options` as a run folder recorded them, with every option added to the adapter since at its
        default: a folder written before an option existed still resumes, and its answers are reused."""
        added = {
            info.name: _options.plain(info.default)
            for info in cls.describe_options()
            if info.name not in options
            and info.name not in cls.located  # settings.json leaves out where the system is reached
            and not (isinstance(info.default, str) and info.default == _options.REQUIRED)
        }
        return {**options, **added}

    def options(self) -> dict[str, Any]:
        """Every option as plain JSON, in declaration order: what records and settings store."""
        return {f.name: _options.plain(getattr(self, f.name)) for f in dataclasses.fields(self)}

    def shown_options(self) -> dict[str, Any]:
        """What a plan shows of the options: where the system is reached (always: that is where its key
        goes) and every other option not at its default."""
        defaults = {info.name: info.default for info in self.describe_options()}
        return {k: v for k, v in self.options().items() if k in type(self).located or v != defaults[k]}

    @property
    def label(self) -> str:
        """Prefix of run folders."""
        return self.name

    def env(self, variable: str) -> str:
        """An API key from the environment, read at call time and never stored."""
        for candidate in (variable, self.stand_ins.get(variable)):
            if candidate and os.environ.get(candidate):
                return os.environ[candidate]
        raise MissingKey(f"{self.label} needs the environment variable {variable}: export it and run again")

    @classmethod
    def key_variables(cls) -> tuple[str, ...]:
        """Every variable that may hold this system's key, whatever its options: `keys` and their
        stand-ins (`oeb publish` searches for their values; the registry lists the shipped ones)."""
        return tuple(dict.fromkeys(v for key in cls.keys for v in (key, cls.stand_ins.get(key)) if v))

    def key_names(self) -> tuple[str, ...]:
        """The key variables these options need (`keys`, unless an option picks another service)."""
        return type(self).keys

    def missing_keys(self) -> list[str]:
        """Which of `key_names` are unset (a stand-in variable counts as set)."""
        return [v for v in self.key_names() if not any(os.environ.get(n) for n in (v, self.stand_ins.get(v)) if n)]

    def check_keys(self) -> None:
        """Refuse before any call when a key variable is unset."""
        for variable in self.missing_keys():
            self.env(variable)

    def secrets(self) -> list[str]:
        """Values of this system's key variables, so they can be redacted from anything it returns."""
        names = [*self.key_names(), *(self.stand_ins.get(k) for k in self.key_names())]
        return [os.environ[n] for n in names if n and os.environ.get(n)]

    def prepare_schema(self, schema: dict[str, Any]) -> dict[str, Any]:
        """Reshape the schema into what the vendor accepts; raise `DialectError` if it cannot."""
        return schema

    def published_price(self) -> Price | None:
        """The price to estimate with: the class's `price`, unless the options set one (mock's `usd`)."""
        return type(self).price

    def batching(self) -> Batches | None:
        """The system's batch endpoint when its options ask for batches (the engine then sends its
        documents in batches, `oeb.batch`), else None: one request per document."""
        return None

    def extract(self, document: Path, schema: dict[str, Any], deadline: Deadline) -> Call:
        """Do every request for one attempt within `deadline`; return the answer as received or raise
        `SystemFailed`. Never return an empty answer. A job vendor need not write it: it submits, then
        collects."""
        if type(self).submits:
            return self.collect(self.submit(document, schema, deadline), deadline)
        raise NotImplementedError

    def submit(self, document: Path, schema: dict[str, Any], deadline: Deadline) -> dict[str, Any]:
        """A job vendor's first half: upload and start the job; return its handle, plain JSON holding the
        job id and whatever `collect` needs (never a key), or raise `SystemFailed`."""
        raise NotImplementedError

    def collect(self, handle: dict[str, Any], deadline: Deadline) -> Call:
        """A job vendor's second half: poll the job of `handle` to its answer, as `extract` returns it.
        Raise `JobLost` (or fail with 404/410) when the vendor no longer knows the job."""
        raise NotImplementedError

    def read(self, raw: Any) -> dict[str, Any]:
        """The extraction inside a raw answer; raise `SystemFailed` if there is none."""
        return extraction(raw.get("extraction") if isinstance(raw, dict) else None)

    def cites(self, raw: Any) -> list[Cite]:
        """Where the raw answer says each predicted value came from and how sure it is, in oeb's one
        shape (docs/grounding.md); none by default. Read from the kept raw answer at grading time, so
        a run is grounded again without asking the vendor again."""
        return []

    def _sent(self, question: Question) -> dict[str, Any]:
        try:
            return self.prepare_schema(question.schema)
        except DialectError as error:
            error.sent = question.schema
            raise

    def call(self, question: Question, deadline: Deadline) -> Call:
        """One attempt: dialect, extract, the generic cost scan, and `sent` attached either way."""
        sent = self._sent(question)
        try:
            answer = self.extract(question.document, sent, deadline)
        except SystemFailed as error:
            error.sent = sent
            raise
        return _finished(answer, sent)

    def submit_question(self, question: Question, deadline: Deadline) -> dict[str, Any]:
        """A job vendor's submit of one question: dialect, then `submit`; `sent` attached to a failure."""
        sent = self._sent(question)
        try:
            return self.submit(question.document, sent, deadline)
        except SystemFailed as error:
            error.sent = sent
            raise

    def collect_question(self, question: Question, handle: dict[str, Any], deadline: Deadline) -> Call:
        """`collect` with what `call` adds: the generic cost scan and `sent` (the dialect is
        deterministic, so the schema sent is rebuilt rather than kept in the handle)."""
        sent = self._sent(question)
        try:
            answer = self.collect(handle, deadline)
        except SystemFailed as error:
            error.sent = sent
            raise
        return _finished(answer, sent)


def _finished(answer: Call, sent: dict[str, Any]) -> Call:
    if isinstance(answer, Call):
        if not answer.cost.priced:
            answer.cost = answer.cost + scan_cost(answer.raw)
        answer.sent = sent
    return answer
