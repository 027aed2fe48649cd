"""SIGTERM stops an `oeb` command as Ctrl-C does, and can be told apart from it afterwards.

`ray job stop`, a pod's deletion, `timeout` and a cancelled CI job send SIGTERM. Python's default
would end the process on the spot, Ray's (installed by `ray.init`) with a bare `sys.exit`: no line
saying what was saved and how to continue. The handler raises KeyboardInterrupt, so every place that
stops cleanly on Ctrl-C stops cleanly here too, and remembers the signal: Ray turns an exception
raised while it waits into a plain KeyboardInterrupt, so the exception's type cannot carry it.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from types import FrameType

from oeb.errors import Interrupted, Terminated

__all__ = ["install", "kept", "stopped"]

_received = threading.Event()


def install() -> None:
    """Make SIGTERM stop this process as Ctrl-C does (only the main thread may set handlers)."""
    if _may_set():
        signal.signal(signal.SIGTERM, _handler)


@contextlib.contextmanager
def kept() -> Iterator[None]:
    """Around a call that sets a SIGTERM handler of its own (`ray.init`: a bare `sys.exit`), keep
    the one there was."""
    before = signal.getsignal(signal.SIGTERM) if _may_set() else None
    try:
        yield
    finally:
        if before is not None:
            signal.signal(signal.SIGTERM, before)


def stopped(detail: str = "") -> Interrupted:
    """What an interruption ends a command with: `Terminated` (exit 143) after SIGTERM, else
    `Interrupted` (Ctrl-C, exit 130); `detail` says what was kept and how to go on."""
    kind, what = (Terminated, "terminated (SIGTERM)") if _received.is_set() else (Interrupted, "interrupted")
    return kind(f"{what}: {detail}" if detail else what)


def _may_set() -> bool:
    return threading.current_thread() is threading.main_thread()


def _handler(signum: int, frame: FrameType | None) -> None:
    _received.set()
    raise KeyboardInterrupt
