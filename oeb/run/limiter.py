"""One rate limiter per system, shared by every actor that calls it: a Ray actor.

Two limits: `per_second` starts (a token bucket holding one token: starts are granted one at a
time, each at least 1/per_second after the one before, so no one-second window ever holds more than
`per_second` of them, however late the event loop wakes) and `max_in_flight` calls at once. The
limiter is asynchronous, so waiting callers cost no thread.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import ray


@ray.remote(num_cpus=0, max_concurrency=10_000)
class RateLimiter:
    """Grants starts to the system's actors; keeps the start times so a run can show its rate."""

    def __init__(self, per_second: float | None, max_in_flight: int) -> None:
        self.interval = 1.0 / per_second if per_second else 0.0
        self.max_in_flight = max_in_flight
        self.slots: asyncio.Semaphore | None = None
        self.turn: asyncio.Lock | None = None
        self.next_start = 0.0
        self.in_flight = 0
        self.peak_in_flight = 0
        self.starts: list[float] = []

    async def acquire(self) -> None:
        """Wait for a free slot, then for the next start time; the caller then makes its call."""
        if self.turn is None:  # created on the actor's event loop
            self.turn = asyncio.Lock()
            self.slots = asyncio.Semaphore(self.max_in_flight) if self.max_in_flight else None
        if self.slots is not None:
            await self.slots.acquire()
        async with self.turn:
            while (wait := self.next_start - time.monotonic()) > 0:
                await asyncio.sleep(wait)
            now = time.monotonic()
            self.next_start = now + self.interval
        self.in_flight += 1
        self.peak_in_flight = max(self.peak_in_flight, self.in_flight)
        self.starts.append(now)

    async def release(self) -> None:
        """The call ended (answered, failed or raised)."""
        self.in_flight -= 1
        if self.slots is not None:
            self.slots.release()

    async def stats(self) -> dict[str, Any]:
        """Start times (monotonic seconds, this actor's clock) and the most calls seen at once."""
        return {"starts": list(self.starts), "peak_in_flight": self.peak_in_flight}
