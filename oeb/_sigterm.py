"""SIGTERM stops an `oeb` command as Ctrl-C does, and can be told apart from it afterwards.

`ray job stop`, a pod's deletion, `timeout` and a cancelled CI job send SIGTERM. Python's default
would end the process on the spot, Ray's (installed by `ray.init`) with a bare `sys.exit`: no line
saying what was saved and how to continue. The handler raises KeyboardInterrupt, so every place that
stops cleanly on Ctrl-C stops cleanly here too, and remembers the signal: Ray turns an exception
raised while it waits into a plain KeyboardInterrupt, so the exception's type cannot carry it.
"""

from __future__ import annotations

import signal
import threading
from types import FrameType

__all__ = ["install", "received"]

_received = threading.Event()


def install() -> None:
    """Make SIGTERM stop this process as Ctrl-C does (only the main thread may set handlers)."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _handler)


def received() -> bool:
    """Whether SIGTERM arrived: an interruption is a termination (exit 143), not a Ctrl-C (130)."""
    return _received.is_set()


def _handler(signum: int, frame: FrameType | None) -> None:
    _received.set()
    raise KeyboardInterrupt
