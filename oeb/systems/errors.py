"""What can go wrong when a system is asked about one document, sorted by what the run does next.

* **Transient** — a `SystemFailed` whose HTTP `status` is in `TRANSIENT_STATUSES` (429, 5xx). The
  document is asked again inside its time limit (`oeb.systems.predict_attempt` says when).
  Transience is decided by the status alone, never by message text, so the same class covers both
  kinds.
* **Final** — any other `SystemFailed`, and its never-retried kinds `SystemTimeout`,
  `SystemUnreachable`, `Unreadable` and `DialectError`. (`JobLost`, a job the vendor forgot, is
  submitted again once instead.) Recorded as the document's `error`; the
  document scores 0 and the run goes on.
* **Stop the run** — `StopRun` and its kinds: a credential, credit or billing problem
  (`AccountFailure`), a refused connection (`ConnectionRefused`), a missing API key (`MissingKey`),
  an answer whose reader crashed (`ReadCrashed`). Continuing would only burn budget or money on
  failures; the user fixes the cause and resumes.

* **Not started** — `NotStarted`: the caller's gate (`Deadline.start`) refused the step before its
  paid request, because the system was stopped while the call waited for a slot. Nothing was bought
  and nothing is recorded; a resume asks the document.

Configuration mistakes (`UnknownSystem`, `OptionError`, `PluginError`) are raised before any call.
Every class is an `OebError`, so the CLI prints its message on one line. No message here ever holds
an API key: `predict` redacts the keys of the system it runs from everything it returns or raises.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from oeb.errors import OebError, RunStopped

if TYPE_CHECKING:
    from oeb.systems.cost import Cost

TRANSIENT_STATUSES = frozenset({429, 500, 502, 503, 504, 520, 521, 522, 523, 524})
"""HTTP statuses worth asking again: rate limits and server-side outages."""

ACCOUNT_STATUSES = frozenset({401, 402, 403})
"""A key refused (401), no payment (402), a key or account without the right (403)."""
ACCOUNT_PHRASES = (
    "exceeded the maximum number of credits",
    "subscription has expired",
    "insufficient_quota",
    "insufficient credits",
    "api_key_invalid",
)
"""Vendor wording that means the account, not the document, is the problem (as the reference reads it;
Google answers a wrong key with a 400 whose `ErrorInfo.reason` is `API_KEY_INVALID`)."""


class SystemFailed(OebError):
    """The system did not answer this document usefully: an error status, a vendor-reported failure
    or a malformed answer.

    Carries what the record needs: `status` (HTTP status or None), `body` (the vendor's error text,
    stored as the record's `raw`), `sent` (the schema as sent), `cost` (what failed attempts were
    billed), `job_id`, and `retry_after` (seconds the vendor asked us to wait, from `Retry-After`).
    """

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        body: Any = None,
        sent: Any = None,
        cost: Cost | None = None,
        job_id: str | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.body = body
        self.sent = sent
        self.cost = cost
        self.job_id = job_id
        self.retry_after = retry_after

    @property
    def message(self) -> str:
        return str(self.args[0]) if self.args else ""

    @property
    def transient(self) -> bool:
        """Whether asking again may help: only the status decides."""
        return self.status in TRANSIENT_STATUSES

    @property
    def account_failure(self) -> bool:
        """Whether the account (key, credits, subscription) is at fault rather than the document.

        The phrase check on the message applies at any status, as the reference does (a Datalab 200
        saying "insufficient credits" stops the run); the body is only consulted for error statuses.
        """
        if self.status in ACCOUNT_STATUSES:
            return True
        texts = [self.message]
        if self.status is not None and self.status >= 400 and self.body is not None:
            texts.append(str(self.body))
        return any(phrase in text.lower() for text in texts for phrase in ACCOUNT_PHRASES)


class _NeverRetried(SystemFailed):
    @property
    def transient(self) -> bool:
        return False


class SystemTimeout(_NeverRetried):
    """The document's time limit ran out: while polling, on a client-side timeout, across retries,
    or because the answer came back after the limit (the answer is still kept as `raw`)."""


class SystemUnreachable(_NeverRetried):
    """The connection failed with no answer (DNS, reset, TLS), other than a refused connection."""


class Unreadable(_NeverRetried):
    """An answer came back but holds no usable extraction; `raw` is kept so a fixed reader can
    re-read it without a new call."""


class DialectError(_NeverRetried):
    """The vendor's schema dialect cannot express this schema; no call is made."""


class JobLost(_NeverRetried):
    """A job vendor no longer knows the job a handle names (forgotten, expired), or the handle cannot
    be used. The document is submitted again at once, once, and its record says `resubmitted`."""


class AccountFailure(RunStopped, PermissionError):
    """The vendor refused the account: bad key (401, Google's 400 `API_KEY_INVALID`), no credits or
    payment (402), no permission (403), expired subscription, exhausted quota."""


class ConnectionRefused(RunStopped, ConnectionError):
    """Nothing listens at the system's address: a local server is not started or a URL is wrong."""


class MissingKey(RunStopped):
    """An environment variable holding the system's API key is unset or empty."""


class ReadCrashed(RunStopped):
    """The adapter's reader crashed on a paid answer (a bug). `record` holds the answer, marked
    `unread`, for the engine to save before stopping; a resume re-reads it with no new call."""

    def __init__(self, message: str, record: dict[str, Any]) -> None:
        super().__init__(message)
        self.record = record


class NotStarted(OebError):
    """The step ended before its paid request: its system was stopped while it waited for a slot."""


class UnknownSystem(OebError, ValueError):
    """No shipped system, plugin or `org/model` id has this name."""


class OptionError(OebError, ValueError):
    """A system option is unknown, missing, of the wrong type or out of range."""


class PluginError(OebError):
    """An installed `oeb.systems` plugin cannot be used (import failure, bad class, name clash)."""


class Unusable(SystemFailed):
    """An LLM's answer worth asking again for (no answer, not JSON, not a non-empty object): in a
    batch, its document is sent again in a later batch."""

    @property
    def transient(self) -> bool:
        return True
