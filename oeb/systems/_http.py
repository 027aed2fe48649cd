"""HTTP plumbing shared by the vendor adapters: one place that turns statuses and transport errors
into the failure taxonomy, and one poll loop that never abandons a job already paid for."""

from __future__ import annotations

import email.utils
import functools
import ssl
import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import httpx

from oeb.systems._reading import reading
from oeb.systems.calls import Deadline
from oeb.systems.errors import JobLost, SystemFailed, SystemTimeout, SystemUnreachable

USER_AGENT = "oeb"


@functools.cache
def _tls() -> ssl.SSLContext:
    """One TLS context for every client: loading the CA bundle per client costs more than a request."""
    return httpx.create_ssl_context()


def retry_after(headers: Mapping[str, str]) -> float | None:
    """Seconds a vendor asked us to wait (`Retry-After` as seconds or an HTTP date)."""
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        try:
            return max(0.0, email.utils.parsedate_to_datetime(value).timestamp() - time.time())
        except (TypeError, ValueError):
            return None


def status_failure(system: str, what: str, response: httpx.Response) -> SystemFailed:
    text = response.text
    return SystemFailed(
        f"{system} answered HTTP {response.status_code} to {what}: {text[:300]}",
        status=response.status_code,
        body=text,
        retry_after=retry_after(response.headers),
    )


def transport_failure(system: str, what: str, error: BaseException) -> SystemFailed:
    """A client-side timeout is a `SystemTimeout`; any other transport error `SystemUnreachable`.

    Callers chain the original error (`raise ... from error`) so a refused connection stays visible
    to `predict`, which stops the run for it.
    """
    if isinstance(error, TimeoutError | httpx.TimeoutException):
        return SystemTimeout(f"{system} did not answer {what} in time ({type(error).__name__})")
    return SystemUnreachable(f"could not reach {system} for {what}: {type(error).__name__}: {error}")


def held(handle: dict[str, Any], key: str, system: str) -> str:
    """The id a job handle holds under `key`; a handle without it cannot be collected (`JobLost`)."""
    value = handle.get(key) if isinstance(handle, dict) else None
    if not isinstance(value, str) or not value:
        raise JobLost(f"the {system} job handle holds no {key} ({str(handle)[:200]})")
    return value


class Session:
    """One document's requests to one vendor: a client plus the deadline every request is cut to."""

    def __init__(self, system: str, deadline: Deadline, *, base_url: str = "", headers: dict[str, str]) -> None:
        self.system = system
        self.deadline = deadline
        self.client = httpx.Client(base_url=base_url, headers={"User-Agent": USER_AGENT, **headers}, verify=_tls())

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        self.client.close()

    def send(
        self, method: str, url: str, what: str, *, timeout: float, expect: int | None = None, **kwargs: Any
    ) -> httpx.Response:
        """One request, cut to the remaining deadline; a non-2xx status (or not `expect`) fails."""
        limit = max(0.001, min(timeout, self.deadline.remaining()))
        try:
            response = self.client.request(method, url, timeout=limit, **kwargs)
        except httpx.TransportError as error:
            raise transport_failure(self.system, what, error) from error
        status = response.status_code
        if (expect is not None and status != expect) or not 200 <= status < 300:
            raise status_failure(self.system, what, response)
        return response

    def json(self, method: str, url: str, what: str, *, timeout: float, **kwargs: Any) -> Any:
        """`send`, then the body as JSON (a body that is not JSON is a malformed answer)."""
        response = self.send(method, url, what, timeout=timeout, **kwargs)
        with reading(f"the answer to {what}", status=response.status_code, body=response.text):
            return response.json()

    def poll(self, fetch: Callable[[], Any], *, interval: float, what: str) -> Iterator[Any]:
        """Yield each successful poll's result until the caller stops. Polls start `interval` apart
        (start to start: the time a poll takes is not added to the wait, or every poll would see a
        finished job later). A job just submitted is first polled one interval after its submit (a
        poll at once only costs a request: no job is done that soon); one collected later, or
        resumed, at once.

        A failed poll (transport error or transient status) is retried with growing waits, up to the
        policy's limit of consecutive failures, so a running, already-billed job is not abandoned
        for a short outage; any other failing status ends the loop at once.
        """
        polls = failures = 0
        if self.deadline.submitted is not None:
            self.deadline.sleep(self.deadline.submitted + interval - time.time())
        while True:
            self.deadline.check(f"{what} was still running after {polls} polls")
            polls += 1
            started = time.time()
            try:
                result = fetch()
            except SystemFailed as error:
                outage = error.transient or (isinstance(error, SystemUnreachable | SystemTimeout))
                failures += 1
                if not outage or failures >= self.deadline.policy.poll_failures:
                    raise
                self.deadline.sleep(self.deadline.policy.poll_delay(failures))
                continue
            failures = 0
            yield result
            self.deadline.sleep(started + interval - time.time())
