"""What a user sees while documents are predicted, on stderr.

On a terminal: a live bar with done, failed and in-flight counts, the rate and the time left, and
failures printed above it. Elsewhere (CI, a pipe): one line per saved document, so a log shows
every step.
"""

from __future__ import annotations

import sys
import time
from typing import Any, TextIO

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

_MESSAGE_SHOWN = 160


class PredictProgress:
    """Counts saved documents and shows them; use as a context manager around the predict stage."""

    def __init__(self, run: str, total: int, stream: TextIO | None = None) -> None:
        self.run = run
        self.total = total
        self.done = 0
        self.failed = 0
        self.usd: float | None = None
        self.stream = stream or sys.stderr
        self.started = time.monotonic()
        self.console = Console(file=self.stream, stderr=stream is None)
        self.bar: Progress | None = None
        if self.console.is_terminal and total:
            self.bar = Progress(
                TextColumn("[bold]{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("failed {task.fields[failed]}  in flight {task.fields[in_flight]}"),
                TextColumn("{task.fields[rate]}"),
                TimeRemainingColumn(),
                console=self.console,
            )
            self.task = self.bar.add_task(run, total=total, failed=0, in_flight=0, rate="")

    def __enter__(self) -> PredictProgress:
        if self.bar is not None:
            self.bar.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.bar is not None:
            self.bar.stop()

    def in_flight(self, count: int) -> None:
        if self.bar is not None:
            self.bar.update(self.task, in_flight=count)

    def saved(self, doc_id: str, record: dict[str, Any]) -> None:
        """One document's record was written."""
        self.done += 1
        error = record.get("error")
        usd = (record.get("cost") or {}).get("usd")
        if usd is not None:
            self.usd = (self.usd or 0.0) + usd
        if error:
            self.failed += 1
            message = str(error.get("message", ""))[:_MESSAGE_SHOWN]
            self._print(f"{self.run}: {doc_id} failed: {error.get('type')}: {message}")
        if self.bar is None:
            cost = "no cost reported" if self.usd is None else f"cost ${self.usd:.2f}"
            self._print(f"{self.run}: {self.done}/{self.total} {doc_id} (failed {self.failed}, {cost})")
            return
        elapsed = max(time.monotonic() - self.started, 1e-9)
        rate = f"{self.done / elapsed:.1f} docs/s"
        self.bar.update(self.task, completed=self.done, failed=self.failed, rate=rate)

    def _print(self, line: str) -> None:
        if self.bar is not None:
            self.bar.console.print(line, markup=False, highlight=False)
        else:
            print(line, file=self.stream, flush=True)
