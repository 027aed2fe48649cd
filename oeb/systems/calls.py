"""One call to a vendor: the answer as received (`Call`), how often and how long to ask again
(`RetryPolicy`), and one document's time limit over all its attempts (`Deadline`).

Below the adapter contract (`oeb.systems.base`), which re-exports them, so the HTTP session, the
providers and the provider batches use them without importing the contract that uses them.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from oeb.systems.cost import Cost
from oeb.systems.errors import OptionError, SystemTimeout


@dataclass
class Call:
    """One answer as received: `raw` is stored whole (plain JSON) so it can be re-read later."""

    raw: Any
    cost: Cost = Cost()
    job_id: str | None = None
    sent: Any = None


@dataclass(frozen=True)
class RetryPolicy:
    """How long to wait before asking again, for whole attempts and for failed polls.

    Attempt waits grow exponentially (20, 60, 120 s by default, the reference's schedule), get up to
    `jitter` of extra random wait so parallel workers do not retry in lockstep, and are never shorter
    than a vendor's `Retry-After`. Short waits inside one attempt (2, 4, 8, 16, 30 s...) keep a paid
    job alive through failed polls and space out an LLM's re-asks; tests shrink both.
    """

    retries: int = 3
    backoff: float = 20.0
    multiplier: float = 3.0
    max_backoff: float = 120.0
    jitter: float = 0.1
    poll_backoff: float = 2.0
    max_poll_backoff: float = 30.0
    poll_failures: int = 60

    def __post_init__(self) -> None:
        if self.retries < 0 or min(self.backoff, self.multiplier, self.jitter, self.poll_backoff) < 0:
            raise OptionError("a retry policy needs non-negative retries, waits and jitter")

    def delay(self, retry: int, retry_after: float | None = None) -> float:
        """Seconds to wait before retry number `retry` (1-based)."""
        wait = min(self.max_backoff, self.backoff * self.multiplier ** (retry - 1))
        wait += wait * self.jitter * random.random()
        return max(wait, retry_after or 0.0)

    def poll_delay(self, failures: int) -> float:
        """Seconds to wait after `failures` consecutive failed polls."""
        return min(self.max_poll_backoff, self.poll_backoff * 2.0 ** (min(failures, 5) - 1))


class Deadline:
    """One document's time limit, shared by every attempt, poll and back-off sleep (named a deadline,
    not a budget: a budget is money).

    It also carries the retry policy (for poll retries inside adapters) and the attempt number, so
    simulated systems can vary their behaviour per attempt deterministically. `spent` is what earlier
    attempts already used, when a document's next attempt runs elsewhere (`predict_attempt`).
    """

    def __init__(
        self,
        seconds: float,
        *,
        policy: RetryPolicy | None = None,
        clock: Callable[[], float] = time.monotonic,
        spent: float = 0.0,
    ) -> None:
        self.seconds = seconds
        self.policy = policy or RetryPolicy()
        self.attempt = 1
        self.submitted: float | None = None
        """When the job being collected was submitted (`time.time()`), if known: `Session.poll`
        makes its first poll one interval after it."""
        self.gate: Callable[[], None] | None = None
        """The caller's wait before the paid request (a free slot of the system's in-flight cap),
        called once by `start`; it raises `NotStarted` if the system stopped meanwhile."""
        self.waited = 0.0
        """Seconds spent in the gate: they do not count against the limit."""
        self.begun = False
        """Whether `start` was called: the paid part of the step has begun."""
        self._clock = clock
        self._start = clock() - spent

    def start(self) -> None:
        """The paid part of the step begins: wait at the caller's gate, once. The step calls it
        before asking; a job adapter with `uploads_first` calls it in `submit`, after its free
        requests (an upload) and right before the request that starts the job, so the upload is
        made while the call still waits for a slot (docs/running.md)."""
        gate, self.gate, self.begun = self.gate, None, True
        if gate is not None:
            began = self._clock()
            gate()
            self.waited = self._clock() - began
            self._start += self.waited

    def elapsed(self) -> float:
        return self._clock() - self._start

    def remaining(self) -> float:
        return max(0.0, self.seconds - self.elapsed())

    def expired(self) -> bool:
        return self.elapsed() >= self.seconds

    def check(self, what: str) -> None:
        """Give up if the time is spent; `what` says what was still going on."""
        if self.expired():
            raise SystemTimeout(f"timed out at the {self.seconds:g}-second limit while {what}")

    def sleep(self, seconds: float) -> None:
        time.sleep(max(0.0, min(seconds, self.remaining())))
