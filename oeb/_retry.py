"""The one retry policy of oeb's storage calls (docs/storage.md).

Object stores fail in small ways all the time (503 SlowDown, 500s, connections reset, reads that
stall or stop short) and a day-long run makes tens of thousands of calls. Every read, write, list and
delete of `oeb.storage` (and the run folder's lock, and the Hub's downloads) goes through `call`:
a transient fault is tried again with capped exponential back-off and full jitter (the AWS SDKs'
"standard" mode), until `storage.retry_s` seconds have passed since the first failure; then the call
raises `StorageDown`. A permanent fault (denied, no such bucket or file, a bad path) is raised at
once, and a local disk that is full or read-only (`DiskFull`) too: waiting does not free space.

The S3 client's own retries are turned down to one attempt (`client_options`), so this policy is the
only one and its console line tells the truth about what oeb is waiting for.
"""

from __future__ import annotations

import errno
import logging
import os
import random
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any, Literal

from oeb.errors import ConfigError, StorageDown

__all__ = [
    "RETRY_ENV",
    "TIMEOUT_ENV",
    "call",
    "client_options",
    "fault",
    "retry_seconds",
    "set_retry_seconds",
    "timeout_seconds",
]

log = logging.getLogger("oeb.storage")

RETRY_ENV = "OEB_STORAGE_RETRY_S"
"""How long a storage call keeps trying through transient faults (seconds); `storage.retry_s` of a
run's config sets it for the run, its Ray workers included (they get the driver's `OEB_*`)."""
DEFAULT_RETRY_S = 600.0
TIMEOUT_ENV = "OEB_STORAGE_TIMEOUT_S"
"""How long one S3 request may wait to connect or for the next bytes of an answer (seconds)."""
DEFAULT_TIMEOUT_S = 30.0
FIRST_WAIT_S = 0.1
"""The back-off's first ceiling: the n-th retry waits a random time up to FIRST_WAIT_S * 2**n ..."""
MAX_WAIT_S = 20.0
"""... and never more than this."""
NOTICE_AFTER_S = 2.0
"""A call failing for less than this says nothing (under load, every tenth request may fail once)."""
NOTICE_EVERY_S = 15.0
"""At most one console line per this many seconds for the whole process."""

TRANSIENT_STATUSES = frozenset({408, 429, 500, 502, 503, 504})
TRANSIENT_CODES = frozenset(
    {
        "SlowDown",
        "Throttling",
        "ThrottlingException",
        "ThrottledException",
        "RequestThrottled",
        "RequestLimitExceeded",
        "TooManyRequestsException",
        "BandwidthLimitExceeded",
        "RequestTimeout",
        "RequestTimeoutException",
        "InternalError",
        "ServiceUnavailable",
    }
)
_TRANSIENT_ERRNOS = frozenset(
    {
        errno.ECONNRESET,
        errno.ECONNREFUSED,
        errno.ECONNABORTED,
        errno.ETIMEDOUT,
        errno.EPIPE,
        errno.EBUSY,  # s3fs's translation of SlowDown and ServiceUnavailable
        errno.EAGAIN,
        errno.ENETUNREACH,
        errno.ENETDOWN,
        errno.EHOSTUNREACH,
        getattr(errno, "EREMOTEIO", errno.EIO),  # s3fs's translation of a 500 InternalError
    }
)
_FULL_ERRNOS = frozenset({errno.ENOSPC, errno.EROFS, getattr(errno, "EDQUOT", errno.ENOSPC)})
_TRANSIENT_CLASSES = {
    # module: class names whose instances (and subclasses') are transient: connection, timeout,
    # truncated or garbled answers. Looked up only when the module is loaded: nothing is imported.
    "botocore.exceptions": (
        "ConnectionError",  # EndpointConnectionError, ConnectTimeoutError, ...
        "HTTPClientError",  # ConnectionClosedError, ReadTimeoutError, ...
        "IncompleteReadError",
        "ResponseStreamingError",
    ),
    "botocore.parsers": ("ResponseParserError",),  # throttling answers are sometimes not XML
    "aiohttp": ("ClientConnectionError", "ClientPayloadError", "ServerTimeoutError"),
    "urllib3.exceptions": ("ProtocolError", "TimeoutError", "NewConnectionError"),
    "requests.exceptions": ("ConnectionError", "Timeout", "ChunkedEncodingError"),
    "httpx": ("TransportError",),
    "httpx2": ("TransportError",),  # huggingface_hub's transport
}

Fault = Literal["transient", "full"]

_notice_lock = threading.Lock()
_last_notice = -float("inf")


def retry_seconds() -> float:
    """`OEB_STORAGE_RETRY_S`, else the default (600 s); a value that is not a number >= 0 is refused."""
    return _seconds(RETRY_ENV, DEFAULT_RETRY_S, zero=True)


def timeout_seconds() -> float:
    """`OEB_STORAGE_TIMEOUT_S`, else the default (30 s)."""
    return _seconds(TIMEOUT_ENV, DEFAULT_TIMEOUT_S, zero=False)


def _seconds(name: str, default: float, *, zero: bool) -> float:
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        value = float("nan")
    if not (value >= 0 if zero else value > 0) or value == float("inf"):
        bound = "0 or more" if zero else "more than 0"
        raise ConfigError(f"{name}={raw!r} is not a number of seconds ({bound}); set it to e.g. {default:g}")
    return value


def set_retry_seconds(seconds: float) -> None:
    """Make `seconds` this process's retry time (a run's `storage.retry_s`), and its Ray workers'."""
    os.environ[RETRY_ENV] = f"{seconds:g}"


S3FS_ATTEMPTS = 1
"""s3fs's own attempts per call (an attribute of its filesystem, not an option): this module retries."""


def client_options() -> dict[str, Any]:
    """s3fs options: botocore's retries off (this module retries), request timeouts on."""
    timeout = timeout_seconds()
    config = {
        "connect_timeout": timeout,
        "read_timeout": timeout,
        "retries": {"max_attempts": 1, "mode": "standard"},
    }
    return {"config_kwargs": config}


_hub_timed = threading.Lock()
_hub_installed = False


def hub_timeouts() -> None:
    """Give every request of huggingface_hub the storage timeout (`timeout_seconds`) where it asks
    for none: its client has no timeout and most of its API calls pass none, so a Hub that accepts a
    connection and never answers held `oeb report hf://...` forever. Installed once per process."""
    global _hub_installed
    with _hub_timed:
        if _hub_installed:
            return
        import huggingface_hub

        default = huggingface_hub.utils._http.default_client_factory

        def timed() -> Any:
            client = default()
            hooks = client.event_hooks
            client.event_hooks = hooks | {"request": [*hooks.get("request", []), _timed_request]}
            return client

        huggingface_hub.set_client_factory(timed)
        _hub_installed = True


def _timed_request(request: Any) -> None:
    """An httpx request hook: no limit asked, the storage timeout applies (read now: a run sets it)."""
    limits = request.extensions.get("timeout") or {}
    if not any(value is not None for value in limits.values()):
        seconds = timeout_seconds()
        request.extensions["timeout"] = {"connect": seconds, "read": seconds, "write": seconds, "pool": seconds}


def call[T](attempt: Callable[[], T], action: str, url: str, *, answered_only: bool = False) -> T:
    """`attempt()`, tried again through transient faults until `storage.retry_s` has passed since
    the first one; then `StorageDown`, naming what was tried, where, for how long and the last fault.
    Anything else `attempt` raises is raised at once. With `answered_only`, only faults the service
    answered (a 5xx, a 429: it is there but busy) are tried again; one that cannot be reached is
    raised at once, for a caller with somewhere else to look (the Hub's cache)."""
    budget = retry_seconds()
    first: float | None = None
    tries = 0
    while True:
        try:
            return attempt()
        except Exception as error:
            if fault(error) != "transient" or (answered_only and not _answered(error)):
                raise
            now = time.monotonic()
            first = now if first is None else first
            tries += 1
            waited = now - first
            if waited >= budget:
                raise StorageDown(
                    f"cannot {action} {url}: the storage kept failing for {waited:.0f} s ({tries} attempts; "
                    f"storage.retry_s is {budget:g}); last: {_describe(error)}; check the endpoint (AWS_ENDPOINT_URL, "
                    "HF_ENDPOINT) and the network, or wait longer (storage.retry_s, OEB_STORAGE_RETRY_S)"
                ) from error
            pause = min(random.uniform(0.0, min(MAX_WAIT_S, FIRST_WAIT_S * 2**tries)), budget - waited)
            log.debug("storage: %s %s failed (%s); again in %.2f s", action, url, _describe(error), pause)
            _notice(action, url, waited, tries, budget, error)
            time.sleep(pause)


def fault(error: BaseException) -> Fault | None:
    """What kind of storage fault `error` is: `transient` (worth trying again), `full` (a local disk
    full or read-only), or None (permanent, or not a storage fault). An HTTP status anywhere in the
    exception's chain decides first (s3fs wraps botocore's answers in OSErrors and PermissionErrors)."""
    chain = list(_chain(error))
    client_side = any(_client_side(link) for link in chain)
    for link in chain:
        status, code = _answer(link, client_side)
        if code in TRANSIENT_CODES:
            return "transient"
        if status is not None:
            return "transient" if status in TRANSIENT_STATUSES else None
    for link in chain:
        if isinstance(link, OSError) and link.errno in _FULL_ERRNOS:
            return "full"
        if isinstance(link, ConnectionError | TimeoutError):
            return "transient"
        if isinstance(link, OSError) and link.errno in _TRANSIENT_ERRNOS:
            return "transient"
        if _library_transient(link):
            return "transient"
    return None


def _answered(error: BaseException) -> bool:
    chain = list(_chain(error))
    client_side = any(_client_side(link) for link in chain)
    return any(_answer(link, client_side) != (None, None) for link in chain)


def _client_side(error: BaseException) -> bool:
    """Whether the client itself failed to read an answer: botocore's `HTTPClientError` (the HTTP
    library raised), or aiohttp's parser refusing what came back. aiohttp then carries a status of its
    own making (400 `Bad status line` for a connection closed before any answer), not the store's."""
    module = type(error).__module__
    if module.startswith("aiohttp.http_exceptions") or module.startswith("aiohttp._http_parser"):
        return True
    return module.startswith("botocore") and any(c.__name__ == "HTTPClientError" for c in type(error).__mro__)


def _chain(error: BaseException) -> Iterator[BaseException]:
    seen: set[int] = set()
    link: BaseException | None = error
    while link is not None and id(link) not in seen:
        seen.add(id(link))
        yield link
        link = link.__cause__ or link.__context__


def _answer(error: BaseException, client_side: bool = False) -> tuple[int | None, str | None]:
    """The HTTP status and the S3 error code an exception carries, when it carries an answer:
    botocore's `ClientError.response`, an httpx/requests `response`, aiohttp's `status` (unless the
    client failed to read the answer: `client_side`)."""
    response = getattr(error, "response", None)
    if isinstance(response, dict):  # botocore
        status = response.get("ResponseMetadata", {}).get("HTTPStatusCode")
        code = response.get("Error", {}).get("Code")
        return (int(status) if isinstance(status, int) else None), (str(code) if code else None)
    status = getattr(response, "status_code", None)
    if isinstance(status, int):
        return status, None
    status = getattr(error, "status", None)
    if isinstance(status, int) and type(error).__module__.startswith("aiohttp") and not client_side:
        return status, None
    return None, None


def _library_transient(error: BaseException) -> bool:
    for module_name, names in _TRANSIENT_CLASSES.items():
        module = sys.modules.get(module_name)
        if module is None:
            continue
        classes = tuple(c for c in (getattr(module, name, None) for name in names) if isinstance(c, type))
        if classes and isinstance(error, classes):
            return True
    return False


def _describe(error: BaseException) -> str:
    """The fault in a few words: the store's answer (`503 SlowDown: ...`) when there was one, else the exception."""
    text = " ".join(str(error).split())[:200]
    for link in _chain(error):
        status, code = _answer(link)
        if status is not None or code is not None:
            said = " ".join(str(part) for part in (status, code) if part is not None)
            return f"{said}: {text}" if text else said
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


def _notice(action: str, url: str, waited: float, tries: int, budget: float, error: BaseException) -> None:
    """The console line while a call keeps failing: what, where, how long so far; one per
    `NOTICE_EVERY_S` for the whole process, none for a call that fails only briefly."""
    global _last_notice
    if waited < NOTICE_AFTER_S:
        return
    now = time.monotonic()
    with _notice_lock:
        if now - _last_notice < NOTICE_EVERY_S:
            return
        _last_notice = now
    log.warning(
        "storage: cannot %s %s for %.0f s so far (%d attempts, last: %s); trying again for up to %.0f s more "
        "(storage.retry_s)",
        action,
        url,
        waited,
        tries,
        _describe(error),
        budget - waited,
    )
