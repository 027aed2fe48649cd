"""One writer per run folder: the lock `oeb run`, `oeb resume` and `oeb grade` hold while they write.

Two processes writing one folder would ask (and pay for) the same documents twice and interleave
their files, so the second one refuses, naming the holder. On local disk the lock is the kernel's:
`flock` on `<run>/.oeb-lock`, which the kernel drops when its process ends in any way, so a killed
run never blocks the next one. Object storage has no such lock: on s3:// the lock is an object
created only if absent (`If-None-Match: *`) and renewed every `HEARTBEAT_SECONDS` by its holder
(`If-Match` on its ETag). A lock whose holder is gone (a dead pid on this host) or whose heartbeat
is older than `STALE_SECONDS` is taken over, by one taker only (`If-Match` on the stale ETag); a
holder that finds its lock taken (it stalled that long) stops writing, and so does one that could
not renew it for `STALE_SECONDS` (storage unreachable): as a storage outage, exit 75, its unsaved
answers kept in the spill folder.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime
import errno
import fcntl
import json
import logging
import os
import random
import secrets
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Protocol

from fsspec.asyn import sync  # type: ignore[import-untyped]  # fsspec ships no type information

from oeb import _retry, storage
from oeb.errors import LockExpired, LockLost, RunLocked, StorageError, StorageNotFoundError

LOCK_NAME = ".oeb-lock"
log = logging.getLogger(__name__)

HEARTBEAT_SECONDS = 10.0
STALE_SECONDS = 60.0
"""An s3:// lock not renewed for this long is taken over (clocks of the hosts must agree to a few seconds)."""
RELEASE_SECONDS = 30.0
"""How long a release keeps trying through throttling and lost answers (at most `storage.retry_s`): a
lock left behind holds up the next command for `STALE_SECONDS`."""


class FolderLock(Protocol):
    def check(self) -> None:
        """Raise `LockLost` when the lock was taken over: the holder must stop writing."""

    def release(self) -> None: ...


@dataclass(frozen=True)
class Holder:
    """Who holds a lock: what they run, where, since when, and their last heartbeat (Unix time)."""

    command: str
    host: str
    pid: int
    since: str
    heartbeat: float
    token: str

    @classmethod
    def me(cls, command: str) -> Holder:
        now = datetime.datetime.now(datetime.UTC).replace(microsecond=0)
        return cls(command, socket.gethostname(), os.getpid(), now.isoformat(), time.time(), secrets.token_hex(8))

    @classmethod
    def parse(cls, data: bytes) -> Holder | None:
        try:
            return cls(**json.loads(data))
        except (ValueError, TypeError):
            return None  # being written, or not a lock oeb wrote

    def dumps(self) -> bytes:
        return json.dumps(asdict(self)).encode()

    def gone(self) -> bool:
        """True when the holder's process has ended (known only for a holder on this host)."""
        if self.host != socket.gethostname():
            return False
        try:
            os.kill(self.pid, 0)
        except ProcessLookupError:
            return True
        except PermissionError:
            return False
        return False

    def stale(self) -> bool:
        return self.gone() or time.time() - self.heartbeat > STALE_SECONDS

    def describe(self) -> str:
        age = max(0, round(time.time() - self.heartbeat))
        return f"{self.command} on host {self.host}, pid {self.pid}, since {self.since}, last heartbeat {age} s ago"


def _refusal(url: str, holder: Holder | None, remote: bool) -> RunLocked:
    who = holder.describe() if holder else "another oeb process"
    way = (
        f"; if that process is gone, wait {STALE_SECONDS:g} s for its lock to go stale or run again with --force-unlock"
        if remote
        else ""
    )
    return RunLocked(f"{url} is being written by {who}; wait for it to finish (or stop it), then run this again{way}")


class _LocalLock:
    """`flock` on the lock file; the holder is written into it for the refusal message."""

    def __init__(self, url: str, command: str) -> None:
        self.path = storage.local_path(url) / LOCK_NAME
        self.path.parent.mkdir(parents=True, exist_ok=True)
        while True:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o666)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                raise _refusal(url, _read_local(self.path), remote=False) from None
            if _same_file(fd, self.path):
                break
            os.close(fd)  # the holder removed the file as we opened it: lock the new one
        self.fd = fd
        os.ftruncate(fd, 0)
        os.pwrite(fd, Holder.me(command).dumps(), 0)

    def check(self) -> None:
        """A kernel lock cannot be taken from a live holder."""

    def release(self) -> None:
        self.path.unlink(missing_ok=True)  # while locked: a newcomer that opened it finds it gone, locks a new one
        os.close(self.fd)


def _same_file(fd: int, path: Path) -> bool:
    try:
        return os.fstat(fd).st_ino == os.stat(path).st_ino
    except FileNotFoundError:
        return False


def _read_local(path: Path) -> Holder | None:
    try:
        return Holder.parse(path.read_bytes())
    except OSError:
        return None


def _local_holder(url: str) -> Holder | None:
    path = storage.local_path(url) / LOCK_NAME
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return _read_local(path) or Holder("another oeb process", "?", 0, "?", time.time(), "")
    finally:
        os.close(fd)  # closing drops the probe's shared lock
    return None


class _ObjectLock:
    """The lock object on s3://, created if absent, renewed and released by its ETag."""

    def __init__(self, url: str, command: str, force: bool) -> None:
        self.url = storage.join(url, LOCK_NAME)
        self.fs, path = storage.filesystem(self.url)  # the configured s3fs (endpoint, profile)
        self.bucket, self.key, _ = self.fs.split_path(path)
        self.holder = Holder.me(command)
        self.lost = False
        self.etag = self._take(url, force)
        self.renewed = time.monotonic()
        """When the lock was last written (taken or renewed): past `STALE_SECONDS` it may be another's."""
        self._stop = threading.Event()
        self._beat = threading.Thread(target=self._renew, name="oeb-lock-heartbeat", daemon=True)
        self._beat.start()

    def _take(self, url: str, force: bool) -> str:
        etag = self._put(IfNoneMatch="*")
        if etag is not None:
            return etag
        found = self._get()
        if found is not None:
            holder, seen = found
            if not (force or holder is None or holder.stale()):
                raise _refusal(url, holder, remote=True)
            etag = self._put(IfMatch=seen)  # only one taker can replace the ETag it saw
        else:
            etag = self._put(IfNoneMatch="*")  # released meanwhile
        if etag is None:
            raise _refusal(url, (self._get() or (None, ""))[0], remote=True)
        return etag

    def _put(self, *, retry: bool = True, **condition: str) -> str | None:
        """PUT the holder under `condition`: the new ETag, or None when the condition failed. With
        `retry`, transient faults are tried again (`oeb._retry`); a PUT whose answer was lost may have
        been stored, so a failed condition first reads the lock: holding exactly what was sent, it is ours."""

        def put() -> str | None:
            try:
                reply = self.fs.call_s3(
                    "put_object", Bucket=self.bucket, Key=self.key, Body=self.holder.dumps(), **condition
                )
            except (FileExistsError, FileNotFoundError):
                return None  # If-None-Match met an object; If-Match met none
            except OSError as error:
                if error.errno == errno.EINVAL and "condition" in str(error).lower():
                    return None  # If-Match met another ETag (HTTP 412)
                raise
            return str(reply["ETag"])

        if retry:
            etag = storage.retried(self.url, "write the lock", put)
        else:
            with storage.storage_errors(self.url, "write the lock"):
                etag = put()
        if etag is None:
            found = self._get()
            if found is not None and found[0] == self.holder:
                return found[1]
        return etag

    def _get(self) -> tuple[Holder | None, str] | None:
        async def fetch() -> tuple[bytes, str]:
            reply = await self.fs._call_s3("get_object", Bucket=self.bucket, Key=self.key)
            async with reply["Body"] as body:
                return await body.read(), reply["ETag"]

        try:
            data, etag = storage.retried(self.url, "read the lock", lambda: sync(self.fs.loop, fetch))
        except StorageNotFoundError:
            return None
        return Holder.parse(data), etag

    def expired(self) -> bool:
        """Whether the lock went unrenewed for `STALE_SECONDS`: any process may have taken it over since,
        as this one would have, so it is given up even if storage answers again."""
        return time.monotonic() - self.renewed > STALE_SECONDS

    def _renew(self) -> None:
        """One renewal a beat, each a single attempt (a heartbeat that waited out storage's retries
        would hold up the release). While storage is down the lock is not renewed: a renewal after a
        short outage succeeds (`If-Match`: no process took the lock over meanwhile); past
        `STALE_SECONDS` without one the lock counts as lost, and no renewal is tried again."""
        while not self._stop.wait(HEARTBEAT_SECONDS):
            if self.expired():
                return
            self.holder = dataclasses.replace(self.holder, heartbeat=time.time())
            try:
                etag = self._put(retry=False, IfMatch=self.etag)
            except StorageError:
                continue  # storage unreachable: try again at the next beat, until the lock is stale
            if etag is None:
                self.lost = True
                return
            if self.expired():  # written late: too late to count, another may have taken it meanwhile
                return
            self.etag, self.renewed = etag, time.monotonic()

    def check(self) -> None:
        if self.lost:
            raise LockLost(
                f"{self.url} was taken over by another process while this one stalled for over {STALE_SECONDS:g} s; "
                "this process stops writing. Check what the other process did, then run oeb resume again"
            )
        if self.expired():
            raise LockExpired(
                f"the lock {self.url} was not renewed for over {STALE_SECONDS:g} s (storage unreachable), so another "
                "process may hold it now: this one stops saving"
            )

    def release(self) -> None:
        self._stop.set()
        self._beat.join()
        if self.lost:
            return
        deadline = time.monotonic() + min(RELEASE_SECONDS, _retry.retry_seconds())  # storage down: not longer
        while True:  # a conditional DELETE repeated after a lost answer finds the lock gone: released
            try:
                self.fs.call_s3("delete_object", Bucket=self.bucket, Key=self.key, IfMatch=self.etag)
                return
            except Exception as error:
                transient = _retry.fault(error) == "transient"
                if not transient and isinstance(error, OSError):
                    return  # gone, or no longer ours: nothing to release
                if not transient:
                    raise
                if time.monotonic() >= deadline:
                    log.warning("%s: the lock could not be released (%s); it is free once stale, %g s after its last "
                                "heartbeat", self.url, error, STALE_SECONDS)  # fmt: skip
                    return
                time.sleep(random.uniform(0.0, 0.5))


def holder(url: str) -> Holder | None:
    """Who holds the lock of the run folder `url`, or None when it is free (or its holder is stale)."""
    if storage.is_local(url):
        return _local_holder(url)
    try:
        data = storage.read_bytes(storage.join(url, LOCK_NAME))
    except StorageNotFoundError:
        return None
    found = Holder.parse(data)
    return None if found is not None and found.stale() else found


def ensure_free(url: str, *, force: bool = False) -> None:
    """Refuse early (before a plan is shown) when another process writes the folder."""
    found = None if force else holder(url)
    if found is not None:
        raise _refusal(url, found, remote=not storage.is_local(url))


@contextlib.contextmanager
def hold(url: str, command: str, *, force: bool = False) -> Iterator[FolderLock]:
    """Hold the lock of the run folder `url` while the block writes it; refused (`RunLocked`)
    when a live process holds it. `force` takes an s3:// lock from a holder that is not stale."""
    lock: FolderLock = _LocalLock(url, command) if storage.is_local(url) else _ObjectLock(url, command, force)
    try:
        yield lock
    finally:
        lock.release()
