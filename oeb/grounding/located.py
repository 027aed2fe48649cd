"""Where each gold value of many documents is printed, located with a process per core.

Locating is CPU work in Python (reading a page's text layer, indexing its words, placing the
values): the first `oeb report --grounding` of a 620-document dataset reads two million words, so
the documents are shared among processes (spawned: the report may hold threads). A few documents
are located in this process: a process takes about half a second to start.
"""

from __future__ import annotations

import itertools
import logging
import os
from collections import deque
from collections.abc import Iterable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from multiprocessing import get_context
from typing import Any

from oeb._gc import cyclic_gc_paused
from oeb.grounding.verdicts import Evidence
from oeb.locate import Label, PdfPages, index_of, locate_values
from oeb.locate.match import needle

log = logging.getLogger("oeb.report")

Job = tuple[str, bytes, Sequence[tuple[str, Any]], Mapping[str, Label]]
"""One document to locate: its id, its PDF's bytes, its gold values (address, value) and the
values' labels by folded path."""

PER_PROCESS = 32
"""Documents per process at least: fewer than twice this are located here."""
_AHEAD = 4
"""Documents handed to each process ahead of the ones it is locating."""


def located_evidence(
    data: bytes, values: Sequence[tuple[str, Any]], labels: Mapping[str, Label]
) -> dict[str, Evidence]:
    """Each value's printed places in the PDF's text layer, by address (no OCR: a scanned page is no
    evidence): the locator's row-aware place, or every candidate place of a value it calls
    ambiguous; no places where it is not found. Nothing for a PDF that cannot be read."""
    with cyclic_gc_paused():  # millions of small objects, no cycles
        try:
            index = index_of(PdfPages(data, use_ocr=False))
        except Exception:  # a damaged PDF locates nothing: its values are unverifiable
            return {}
        evidence = {}
        for (address, value), place in zip(values, locate_values(index, values, labels), strict=True):
            if place is None or place.page is None or place.bbox is None:
                evidence[address] = Evidence()
            elif place.status == "ambiguous":  # every candidate place counts
                wanted = needle(value)
                places = index.places(wanted) if wanted is not None else []
                evidence[address] = Evidence(tuple((p.page, p.bbox) for p in places) or ((place.page, place.bbox),))
            else:
                evidence[address] = Evidence(((place.page, place.bbox),))
        return evidence


def _one(job: Job) -> dict[str, Evidence]:
    return located_evidence(job[1], job[2], job[3])


def processes(documents: int) -> int:
    """How many processes locate `documents`: one per core this process may use, each with at
    least `PER_PROCESS` documents (1: this process alone)."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return max(1, min(cores, documents // PER_PROCESS))


def locate_all(jobs: Iterable[Job], documents: int) -> Iterator[tuple[str, dict[str, Evidence]]]:
    """Each job's (doc_id, evidence), in the jobs' order, with `processes(documents)` processes; the
    jobs are read as the processes need them (a dataset's PDFs are not all held at once). Should the
    processes fail (a script calling this with no `if __name__ == "__main__"` guard: a spawned
    process imports it again), the documents left are located here."""
    jobs = iter(jobs)
    workers = processes(documents)
    pending: deque[tuple[Job, Future[dict[str, Evidence]]]] = deque()
    if workers > 1:
        try:
            with ProcessPoolExecutor(workers, mp_context=get_context("spawn")) as pool:
                for job in itertools.chain(jobs, [None]):
                    if job is not None:
                        pending.append((job, pool.submit(_one, job)))
                    while pending and (job is None or len(pending) > workers * _AHEAD):
                        done, future = pending[0]
                        yield done[0], future.result()
                        pending.popleft()
        except (BrokenProcessPool, OSError) as error:
            log.warning("oeb: locating in %d processes failed (%s); locating here", workers, error)
    for job in itertools.chain([done for done, _ in pending], jobs):
        yield job[0], _one(job)
