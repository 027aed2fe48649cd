"""What a user sees while a run predicts and grades, on stderr: one display for the whole run, however
many systems it asks side by side (docs/live.md shows both forms).

On a terminal: a rich live table, a row per system (done, failed, in flight, pace against its limit,
429s, spend, documents per second, time left) and the grading queue, with failures and notes printed
above it. Rich redraws it from its own thread at most `REFRESH_PER_SECOND` times a second, so an
event costs the driver a few counter updates, never a redraw.

Elsewhere (CI, a pipe, a Ray job's log): plain lines, each with the time since the run began: one per
saved document (failures with their error), one per note (a stop, a budget reached), one when a
system's pace is lowered after 429s and when it is back at its limit, and every `SUMMARY_SECONDS`
a one-line summary per system that moved and one for grading (also at the end), so a log of 6,200
documents stays readable and shows the run alive while vendors are slow.

When Ray is in use the same events are recorded as Ray metrics (`oeb.run.cluster.metrics`).
"""

from __future__ import annotations

import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TextIO

from rich.console import Console, RenderableType
from rich.live import Live
from rich.progress_bar import ProgressBar
from rich.table import Table
from rich.text import Text

from oeb import _fit
from oeb.run.cluster.metrics import RunMetrics

REFRESH_PER_SECOND = 1.0
"""Redraws of the live table. Drawing ten systems' rows took 20 ms of CPU on a loaded 2-core
machine (load 18), so once a second costs the driver about 2% of a core however fast documents come."""
SUMMARY_SECONDS = 30.0
"""Plain output: a summary per system this often."""
RATE_WINDOW = 60.0
"""Seconds of saved documents the rate (and so the time left) is taken over: recent enough to follow a
slowed vendor, long enough to be steady with minutes-long jobs."""
_MESSAGE_SHOWN = 160
_BAR = 20
"""The progress bar's width, when the console has room for it."""
SYSTEM_WIDTH = 16
"""A system label wider than this folds onto more lines rather than crowd out a figure."""
_LIVE_COLUMNS = (
    ("system", _fit.ALWAYS),
    ("progress", 9),
    ("done", _fit.ALWAYS),
    ("failed", _fit.ALWAYS),
    ("in flight", 2),
    ("retrying", 1),
    ("pace/s", 6),
    ("429s", 5),
    ("spend", 3),
    ("docs/s", 4),
    ("ETA", _fit.ALWAYS),
)
"""The live table's columns and which a narrow console keeps longest (higher numbers dropped first)."""


@dataclass
class _System:
    """What the display knows of one system."""

    name: str
    total: int
    done: int = 0
    failed: int = 0
    in_flight: int = 0
    started: int = 0
    throttled: int = 0
    pace: float | None = None
    limit: float | None = None
    usd: float | None = None
    credits: float | None = None
    spend_reported: bool = False
    recent: deque[float] = field(default_factory=deque)
    asking_since: float | None = None
    summarised: tuple[int, int, int] = (-1, -1, -1)
    retrying: int = 0
    """Documents waiting out a back-off before they are asked again."""
    retry_first: float | None = None
    retry_last: float | None = None
    """When (the display's clock) the first and the last of them may start."""

    def rate(self, now: float, began: float) -> float | None:
        """Documents saved per second over the last `RATE_WINDOW` seconds (or since the system began
        asking: the run's start-up is not the vendor's pace)."""
        while self.recent and self.recent[0] < now - RATE_WINDOW:
            self.recent.popleft()
        if not self.recent:
            return None
        since = began if self.asking_since is None else self.asking_since
        return len(self.recent) / max(min(RATE_WINDOW, now - since), 1e-9)

    def eta(self, now: float, began: float) -> str:
        """The time left at the recent pace, never before the last back-off is over (a document
        waiting 60 s to be asked again cannot be saved sooner)."""
        if self.done >= self.total:
            return "done"
        rate = self.rate(now, began)
        backoff = None if self.retry_last is None else max(0.0, self.retry_last - now)
        if not rate:
            return "–" if backoff is None else f"≥{clock(backoff)}"
        return clock(max(0, (self.total - self.done) / rate, backoff or 0))

    def retry_text(self, now: float) -> str:
        """`3, next 0:18`: documents waiting to be asked again, and when the first is; `0` when none."""
        if not self.retrying or self.retry_first is None:
            return "0"
        return f"{self.retrying:,}, next {clock(max(0.0, self.retry_first - now))}"

    def spend(self) -> str:
        parts = [f"${self.usd:,.2f}" if self.usd is not None else "", f"{self.credits:,g} cr" if self.credits else ""]
        return " + ".join(part for part in parts if part) or "–"

    def pace_text(self) -> str:
        if self.pace is None and self.limit is None:
            return "–"
        limit = "no limit" if self.limit is None else f"{self.limit:g}"
        return f"{self.pace or 0:.1f}/{limit}"


def clock(seconds: float) -> str:
    """`m:ss`, or `h:mm:ss` past an hour."""
    minutes, secs = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


class RunProgress:
    """The display of a whole run; use as a context manager around its predict and grade stages.

    `systems` are the run's labels in display order and `totals` the documents each will save in
    this run. `console` replaces the one made on `stream` (a width, a forced terminal); `metrics` None
    records Ray metrics when Ray is in use; `clock` is injectable for tests.
    """

    def __init__(
        self,
        systems: list[str],
        totals: dict[str, int],
        stream: TextIO | None = None,
        *,
        console: Console | None = None,
        metrics: bool | None = None,
        summary_seconds: float = SUMMARY_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.systems = {name: _System(name, totals.get(name, 0)) for name in systems}
        self.console = console or Console(file=stream or sys.stderr, stderr=stream is None)
        self.stream = self.console.file
        self.terminal = self.console.is_terminal
        self.metrics = RunMetrics.if_ray() if metrics is None else RunMetrics() if metrics else None
        self.grading_counts = (0, 0, 0)
        self.summary_seconds = summary_seconds
        self.clock = clock
        self.began = clock()
        self._live: Live | None = None
        self._lock = threading.Lock()
        self._stopped = threading.Event()
        self._summaries: threading.Thread | None = None

    def __enter__(self) -> RunProgress:
        self.began = self.clock()
        if self.terminal:
            self._live = Live(
                console=self.console,
                get_renderable=self.table,
                refresh_per_second=REFRESH_PER_SECOND,
                redirect_stdout=False,
                redirect_stderr=False,
            )
            self._live.start()
        elif self.summary_seconds > 0:
            self._summaries = threading.Thread(target=self._summarise_often, name="oeb-progress", daemon=True)
            self._summaries.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stopped.set()
        if self._summaries is not None:
            self._summaries.join()
        if self._live is not None:
            self._live.stop()  # draws the table a last time, left on screen
        else:
            self.summary(every=True)

    @property
    def done(self) -> int:
        """Documents saved so far, all systems together."""
        return sum(system.done for system in self.systems.values())

    # events -------------------------------------------------------------------------------------

    def in_flight(self, system: str, n: int) -> None:
        """`n` documents of `system` are being asked now (the driver says so at every turn of its
        loop: only a change reaches the metrics)."""
        state = self.systems[system]
        if n == state.in_flight:
            return
        state.in_flight = n
        if state.asking_since is None:
            state.asking_since = self.clock()
        if self.metrics:
            self.metrics.set("in_flight", system, n)

    def retrying(self, system: str, waiting: int, first_in: float | None, last_in: float | None) -> None:
        """`waiting` documents of `system` wait out a back-off; the first may start in `first_in`
        seconds, the last in `last_in` (None when none waits)."""
        state, now = self.systems[system], self.clock()
        state.retrying = waiting
        state.retry_first = None if first_in is None else now + first_in
        state.retry_last = None if last_in is None else now + last_in

    def started(self, system: str, n: int = 1) -> None:
        """`n` attempts (a submit, a retry, a collection) were started at `system`."""
        self.systems[system].started += n
        if self.metrics:
            self.metrics.count("requests_started", system, n)

    def saved(self, system: str, doc_id: str, record: dict[str, Any]) -> None:
        """One document's record was written."""
        state = self.systems[system]
        state.done += 1
        state.recent.append(self.clock())
        if state.asking_since is None:  # saved before anything was said in flight: count from the start
            state.asking_since = self.began
        error = record.get("error")
        state.failed += bool(error)
        if not state.spend_reported:
            cost = record.get("cost") or {}
            if cost.get("usd") is not None:
                state.usd = (state.usd or 0.0) + cost["usd"]
            if cost.get("credits") is not None:
                state.credits = (state.credits or 0.0) + cost["credits"]
        if self.metrics:
            self.metrics.count("documents_done", system)
            if error:
                self.metrics.count("documents_failed", system)
            if not state.spend_reported:
                self._spend_metrics(state)
        if error:
            message = " ".join(str(error.get("message", "")).split())[:_MESSAGE_SHOWN]
            status = f" (status {error['status']})" if error.get("status") is not None else ""
            self._line(f"{system}: {state.done}/{state.total} {doc_id} failed: {error.get('type')}{status}: {message}")
        elif not self.terminal:
            self._line(f"{system}: {state.done}/{state.total} {doc_id} saved (failed {state.failed}, {state.spend()})")

    def throttled(self, system: str) -> None:
        """`system` answered a 429 (rate limited)."""
        self.systems[system].throttled += 1
        if self.metrics:
            self.metrics.count("throttled", system)

    def pace(self, system: str, current: float | None, limit: float | None) -> None:
        """The starts per second `system`'s limiter allows now, against its configured limit. A plain
        log says when the pace is lowered and when it is back at the limit (not each step between)."""
        state = self.systems[system]
        before, state.pace, state.limit = state.pace, current, limit
        if current == before:
            return
        if self.metrics and current is not None:
            self.metrics.set("pace", system, current)
        if self.terminal or current is None or before is None:
            return
        if current < before:
            of = "" if limit is None else f" (limit {limit:g})"
            self._line(f"{system}: pace lowered to {current:.1f} starts/s{of} after 429s ({state.throttled} so far)")
        elif limit is not None and current >= limit:
            self._line(f"{system}: pace back at its limit, {limit:g} starts/s")

    def spend(self, system: str, usd: float | None, credits: float | None) -> None:
        """What `system` has spent so far (the run's own count, which then replaces the records' sum)."""
        state = self.systems[system]
        state.usd, state.credits, state.spend_reported = usd, credits, True
        if self.metrics:
            self._spend_metrics(state)

    def grading(self, queued: int, running: int, done: int) -> None:
        """The run's grading queue: documents waiting, being graded, graded."""
        self.grading_counts = (queued, running, done)
        if self.metrics:
            self.metrics.grading(queued, running)

    def graded(self, system: str, seconds: float) -> None:
        """One document of `system` was graded in `seconds`."""
        if self.metrics:
            self.metrics.graded(system, seconds)

    def note(self, system: str, text: str) -> None:
        """Something the user must see about `system` (a stop, a budget reached), printed as it is."""
        self._line(f"{system}: {text}")

    # output -------------------------------------------------------------------------------------

    def _spend_metrics(self, state: _System) -> None:
        assert self.metrics is not None
        if state.usd is not None:
            self.metrics.set("spend_usd", state.name, state.usd)
        if state.credits is not None:
            self.metrics.set("spend_credits", state.name, state.credits)

    def _line(self, text: str) -> None:
        if self._live is not None:
            self._live.console.print(Text(text), soft_wrap=True)
            return
        with self._lock:
            self.stream.write(f"[{clock(self.clock() - self.began)}] {text}\n")
            self.stream.flush()

    def _grading_text(self) -> str:
        queued, running, done = self.grading_counts
        return f"grading: {done:,} graded, {queued:,} queued, {running:,} running"

    def table(self) -> Table:
        """The live view as it is now (what rich redraws), as wide as the console: the columns that
        do not fit are left out (the progress bar first), never a figure cut."""
        now = self.clock()
        states = list(self.systems.values())
        done, total = sum(s.done for s in states), sum(s.total for s in states)
        title = (
            f"oeb: {len(states)} system{'s' if len(states) != 1 else ''}, {done:,} of {total:,} documents, "
            f"{clock(now - self.began)} elapsed"
        )
        rows = [self._cells(s, now) for s in states]
        columns = [
            _fit.column(header, [row[i] for row in rows], priority, SYSTEM_WIDTH if header == "system" else None)
            for i, (header, priority) in enumerate(_LIVE_COLUMNS)
        ]
        kept = _fit.fit(columns, self.console.width)
        dropped = [column.header for column in columns if column not in kept]
        caption = self._grading_text() + (f"; not shown at this width: {', '.join(dropped)}" if dropped else "")
        table = Table(title=title, title_justify="left", caption=caption, caption_justify="left")
        shown = [columns.index(column) for column in kept]
        for column, size in zip(kept, _fit.widths(kept, self.console.width), strict=True):
            left = column.header in ("system", "progress")
            table.add_column(column.header, justify="left" if left else "right", width=size, overflow="fold")
        for s, row in zip(states, rows, strict=True):
            cells: list[RenderableType] = [Text(cell) for cell in row]
            cells[1] = ProgressBar(total=max(s.total, 1), completed=s.done, width=_BAR)
            cells[3] = Text(row[3], style="red" if s.failed else "")
            cells[7] = Text(row[7], style="yellow" if s.throttled else "")
            table.add_row(*(cells[i] for i in shown))
        return table

    def _cells(self, s: _System, now: float) -> list[str]:
        """A system's row as text (the progress bar's cell holds its width in spaces)."""
        rate = s.rate(now, self.began)
        return [
            s.name,
            " " * _BAR,
            f"{s.done:,}/{s.total:,}",
            f"{s.failed:,}",
            f"{s.in_flight}",
            s.retry_text(now),
            s.pace_text(),
            f"{s.throttled:,}",
            s.spend(),
            "–" if rate is None else f"{rate:.1f}",
            s.eta(now, self.began),
        ]

    def summary(self, every: bool = False) -> None:
        """Plain output: a line per system that moved since the last summary (`every`: all of them),
        then the grading queue."""
        now = self.clock()
        for s in self.systems.values():
            if not every and not s.retrying and (s.done, s.in_flight, s.retrying) == s.summarised:
                continue
            s.summarised = (s.done, s.in_flight, s.retrying)
            rate = s.rate(now, self.began)
            pace = s.pace_text() + ("" if s.pace is None and s.limit is None else " starts/s")
            waiting = f", {s.retry_text(now).replace(', next', ' waiting to retry, next in')}" if s.retrying else ""
            self._line(
                f"{s.name}: {s.done:,}/{s.total:,} done, {s.failed:,} failed, {s.in_flight} in flight{waiting}, pace "
                f"{pace}, {s.throttled:,} 429s, spent {s.spend()}, "
                f"{'–' if rate is None else f'{rate:.1f}'} docs/s, ETA {s.eta(now, self.began)}"
            )
        self._line(self._grading_text())

    def _summarise_often(self) -> None:
        while not self._stopped.wait(self.summary_seconds):
            self.summary()
