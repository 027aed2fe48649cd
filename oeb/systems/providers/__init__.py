"""The LLM providers' own wire protocols, one module each, behind one small interface: build a
request for a PDF and a schema, send it, read the reply; and, for those that sell batches, send many
requests as one batch, poll it and read its results (docs/systems/llm.md).

A provider knows HTTP and its own JSON only: no Ray, no run folder, no budget. The LLM adapter
(`oeb.systems.llm`) picks one by its `provider` option and prices what it reports.
"""

from __future__ import annotations

import base64
import datetime
import json
import re
from abc import ABC, abstractmethod
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from oeb.systems._http import Session, held
from oeb.systems._reading import number, reading
from oeb.systems.calls import Deadline
from oeb.systems.errors import SystemFailed

SYSTEM_PROMPT = """\
You are a document extraction system. You receive a PDF document and a JSON Schema.
Fill the schema from the document, following each field's description.
Read the whole document before answering.
Copy literal values (names, identifiers, dates, amounts) exactly as printed; do not reformat them.
Work carefully through values that must be derived or computed.
List every item of an array; never truncate or summarise a list.
Give numbers as JSON numbers and booleans as JSON booleans.
Use null when the document does not hold a value; use [] only for a list that applies but is empty.
Answer with one JSON object matching the schema and nothing else."""
LEAD_IN = "Extract the information from this document according to the following JSON Schema."
BATCH_TIMEOUT = 600.0
"""Seconds one batch request (an upload, a create, a poll, a results download) may take."""


def user_text(schema: dict[str, Any]) -> str:
    """The user turn's text: the lead-in, then the schema as an indented JSON fence."""
    return f"{LEAD_IN}\n\n```json\n{json.dumps(schema, indent=2)}\n```"


def pdf_base64(document: Path) -> str:
    return base64.b64encode(document.read_bytes()).decode()


def count(value: Any) -> int | None:
    """A token count, or None when the provider sent none."""
    found = number(value)
    return None if found is None else int(found)


def jsonl(text: str) -> list[Any]:
    """The JSON values of a results file, one a line (blank lines skipped); a line that is not JSON
    is a malformed answer."""
    values = []
    for line in text.splitlines():
        if line.strip():
            with reading("a batch result line", status=200, body=line[:2000]):
                values.append(json.loads(line))
    return values


@dataclass(frozen=True)
class Reply:
    """One answer of a model, read: what it wrote (text to parse, or an object already), whether it
    stopped at the output cap, its tokens, and a dollar figure where the provider reports one."""

    content: str | dict[str, Any] | None
    finish: Any = None
    truncated: bool = False
    tokens_in: int | None = None
    tokens_out: int | None = None
    usd: float | None = None
    usage: Any = None
    model: str | None = None
    id: str | None = None
    error: str | None = None
    """The provider's reason when it gave no answer at all (worth asking again)."""


@dataclass(frozen=True)
class BatchLimits:
    """A provider's published limits on one batch: requests, and bytes of what is sent."""

    requests: int
    bytes: int
    source: str


@dataclass(frozen=True)
class BatchStatus:
    """A poll's reading: the provider's own state word, whether the batch has ended (results can be
    read; requests without one are to be sent again), and its request counts as the provider gives them."""

    state: str
    ended: bool
    counts: dict[str, Any]
    failure: SystemFailed | None = None
    """The provider's reason when the batch failed as a whole (OpenAI `failed` with `errors`, a
    Gemini operation's `error`): no request of it was answered."""


Results = dict[str, Reply | SystemFailed]
"""A batch's results by custom id: a reply, or the request's failure (status 429/5xx when sending
it again may help)."""


class Provider(ABC):
    """One provider's protocol for one model: `complete` asks once; a provider with `limits` also
    batches (`entry`, `create`, `status`, `results`)."""

    name = ""
    key = ""
    """The environment variable holding the API key."""
    base_url = ""
    limits: BatchLimits | None = None
    tokens_per_page = 3000
    """Input tokens one PDF page may cost at most, for a batch's worst-case price."""

    def __init__(
        self, model: str, base_url: str, api_key: str, max_tokens: int, temperature: float | None = None
    ) -> None:
        self.model = model
        self.url = base_url.rstrip("/")
        self.api_key = api_key
        self.max_tokens = max_tokens
        self.temperature = temperature
        """None: not sent, the provider's default applies (some models refuse any other)."""

    def sampling(self) -> dict[str, Any]:
        """The sampling options of every request, direct or batched: the same on both paths."""
        return {} if self.temperature is None else {"temperature": self.temperature}

    @abstractmethod
    def complete(self, document: Path, schema: dict[str, Any], deadline: Deadline) -> Reply:
        """One request answered; `SystemFailed` (with its HTTP status) when the provider refuses it."""

    batch_path = ""
    """Where a batch is polled, `{batch_id}` standing for the id its handle holds."""

    def headers(self) -> dict[str, str]:
        """The provider's key, in its header."""
        return {"Authorization": f"Bearer {self.api_key}"}

    def session(self, deadline: Deadline) -> Session:
        return Session(self.name, deadline, base_url=self.url, headers=self.headers())

    def batch(self, handle: dict[str, Any], deadline: Deadline) -> dict[str, Any]:
        """The batch of `handle` as the provider describes it now (one poll)."""
        batch_id = held(handle, "batch_id", self.name)
        with self.session(deadline) as http:
            found: dict[str, Any] = http.json(
                "GET", self.batch_path.format(batch_id=batch_id), "a batch poll", timeout=BATCH_TIMEOUT
            )
        return found

    def valid_id(self, custom_id: str) -> bool:
        """Whether a batch request may carry `custom_id` (by default any non-empty text)."""
        return bool(custom_id)

    def entry(self, custom_id: str, document: Path, schema: dict[str, Any]) -> dict[str, Any]:
        """One request of a batch, as the provider takes it (plain JSON)."""
        raise NotImplementedError

    def create(self, entries: list[dict[str, Any]], tag: str, deadline: Deadline) -> dict[str, Any]:
        """Send a batch marked with `tag` where the provider keeps a mark (`find` looks for it); the
        handle to poll it (plain JSON: its id under `batch_id`, never a key)."""
        raise NotImplementedError

    def find(
        self, tag: str, requests: int, since: float, known: frozenset[str], deadline: Deadline
    ) -> dict[str, Any] | None:
        """The handle of the batch `create` sent with `tag` (`requests` requests, at or after `since`,
        wall clock) when the provider accepted it though its answer was lost; None when it holds no
        such batch. Batches of `known` ids (the run's others) are never it. `SystemFailed` when the
        provider cannot say (or names several candidates)."""
        raise NotImplementedError

    def status(self, handle: dict[str, Any], deadline: Deadline) -> BatchStatus:
        raise NotImplementedError

    def results(self, handle: dict[str, Any], deadline: Deadline) -> Results:
        """An ended batch's results by custom id (a request with none is absent)."""
        raise NotImplementedError


FIND_SKEW = 600.0
"""Seconds of clock difference allowed between oeb and a provider when a lost batch is looked up."""
FIND_PAGES = 50
"""Pages of a provider's batch list read at most when a lost batch is looked up."""


def timestamp(value: Any) -> float | None:
    """An RFC 3339 time (or Unix seconds) as Unix seconds; None when it is neither."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    if not isinstance(value, str):
        return None
    text = re.sub(r"(\.\d{6})\d+", r"\1", value.strip()).replace("Z", "+00:00")
    try:
        moment = datetime.datetime.fromisoformat(text)
    except ValueError:
        return None
    return (moment if moment.tzinfo else moment.replace(tzinfo=datetime.UTC)).timestamp()


def batch_failure(provider: str, batch_id: str, code: Any, message: Any, status: int | None) -> SystemFailed:
    """A batch that failed as a whole, as every one of its requests' failure: the provider's code and
    message kept, its HTTP status the one the same refusal would have had on a direct call."""
    return SystemFailed(
        f"the {provider} batch {batch_id} failed as a whole: {code}: {message}"[:2000],
        status=status,
        body={"code": code, "message": message},
    )


def request_failure(what: str, status: int | None, message: str, body: Any = None) -> SystemFailed:
    """A batch request that failed, as the synchronous path would have failed."""
    return SystemFailed(f"{what}: {message}"[:2000], status=status, body=body)
