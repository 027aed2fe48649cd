"""Saving the records of the predict stage on threads of their own, off the driver loop.

A save that fails for good (storage down past `storage.retry_s`, a full disk) goes to the run's spill
folder (`oeb.run.predict.spill`), which `oeb resume` imports.
"""

from __future__ import annotations

import concurrent.futures
import queue
from typing import Any

from oeb.dataset import Row
from oeb.errors import StorageOutage
from oeb.run.predict import jobs
from oeb.run.predict.spill import Spill
from oeb.run.predict.system_run import SystemRun


class Saver:
    """Saves records on threads of their own: each save is two atomic writes with an fsync (or two
    PUTs) and a job handle's removal, and on the driver loop they held up every system's next start
    (in a ten-system run they were most of the loop's time). A document's files keep their order on
    one thread (prediction, record, then its handle removed); the loop takes the finished saves
    (`finished`) to count, show and grade them. Closing waits for the saves queued: paid answers."""

    THREADS = 2

    def __init__(self) -> None:
        self._pool = concurrent.futures.ThreadPoolExecutor(self.THREADS, thread_name_prefix="oeb-save")
        self._done: queue.SimpleQueue[tuple[SystemRun, Row, dict[str, Any], BaseException | None, bool]]
        self._done = queue.SimpleQueue()
        self.outage: StorageOutage | None = None
        """The storage failure that stopped saving: every save after it goes to the spill folder."""
        self.handled = False
        """Whether the loop has stopped the systems for the outage."""

    def save(self, run: SystemRun, row: Row, record: dict[str, Any], handle: bool) -> None:
        """Queue the document's record (and, with `handle`, its job handle's removal after it)."""
        run.saving += 1
        self._pool.submit(self._write, run, row, record, handle)

    def _write(self, run: SystemRun, row: Row, record: dict[str, Any], handle: bool) -> None:
        error, outage = None, self.outage  # storage down for good: no save is tried, it could only wait again
        if outage is None:
            try:
                run.job.folder.save(row.doc_id, record)
                if handle:
                    jobs.remove(run.job.folder.url, row.doc_id)
            except StorageOutage as failure:
                outage = failure
            except BaseException as failure:  # raised by the loop when it takes this save
                error = failure
        if outage is not None:
            self.failed(run, outage)
            self.spill(run).keep(row.doc_id, record)  # a record even local disk refuses is counted lost
        self._done.put((run, row, record, error, outage is not None))

    def failed(self, run: SystemRun, outage: StorageOutage) -> None:
        """Storage failed for good: the first outage is the run's cause."""
        self.outage = self.outage or outage
        run.outage = run.outage or self.outage

    def spill(self, run: SystemRun) -> Spill:
        """The system's spill folder (made on first use)."""
        if run.spill is None:
            run.spill = Spill(run.job.folder.url, str(self.outage))
        return run.spill

    def finished(self, timeout: float = 0.0) -> list[tuple[SystemRun, Row, dict[str, Any]]]:
        """The saves done since the last call (waiting up to `timeout` seconds for one), without those
        that went to the spill folder; raises a save's failure (a lost lock, a bug), which ends the run
        as it always did."""
        done: list[tuple[SystemRun, Row, dict[str, Any], BaseException | None, bool]] = []
        try:
            done.append(self._done.get(timeout=timeout) if timeout > 0 else self._done.get_nowait())
            while True:
                done.append(self._done.get_nowait())
        except queue.Empty:
            pass
        for run, _, _, error, _ in done:
            run.saving -= 1
            if error is not None:
                raise error
        return [(run, row, record) for run, row, record, _, spilled in done if not spilled]

    def close(self) -> None:
        self._pool.shutdown(wait=True)
