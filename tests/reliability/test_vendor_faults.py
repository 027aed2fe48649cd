"""Vendor faults through the whole engine: a real adapter (Mistral's) against a real HTTP fake that
injects faults into about 30% of the documents, with the production retry schedule. (A run this
small answers in the driver's process; on Ray the same rules hold: tests/run.)

Every document must end answered or recorded as failed with the kind of failure its fault calls for,
within its time budget and the rate limit (every request the vendor sees counts, retries included);
a credential or credit failure stops the run, keeps every answer already paid for, and a resume asks
only what is missing.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from systems.fake_vendor import FakeVendor, Reply, Request
from systems.vendors import ANSWER

from oeb.errors import RunStopped
from oeb.run import engine
from oeb.run.plan.config import Config, check_tree, init_tree
from reliability.conftest import inline_document, vendor_dataset

pytestmark = pytest.mark.slow

TIMEOUT = 40.0
"""Each document's time limit: room for one production back-off (20-22 s) and a second attempt, even
when the run's 429s have slowed the system's starts (docs/money.md, "429 storms"), and not for a
second back-off (60 s), so a persistent 5xx ends as a spent time limit after 2 attempts."""
RATE = 2.0
"""Low enough that the first attempts of 48 documents take longer than a back-off: the retries of the
documents that fail early come while fresh documents are started at the full rate."""
IN_FLIGHT = 4
JITTER = 0.2
"""How much sooner than booked a request may reach the vendor relative to the one before it: the
limiter books starts 10 ms further apart than the rate asks, but the time a call takes to be
delivered and a thread to wake varies by tens of milliseconds on a busy machine (130 ms seen at a
load of 10 to 40 on 2 cores). A retry not booked at
all lands within 0.5 s of a fresh start, which no jitter explains."""
OK = Reply(200, {"model": "mistral-ocr-2512", "pages": [], "document_annotation": json.dumps(ANSWER)})


@dataclass(frozen=True)
class Fault:
    replies: tuple[Reply, ...]
    """What the vendor answers to this document's requests in order, the last one repeating."""
    error: str | None
    status: int | None
    attempts: int


FAULTS = {
    "429 then an answer": Fault((Reply(429, {"message": "slow down"}, {"Retry-After": "1"}), OK), None, None, 2),
    "429 asking to wait past the budget": Fault(
        (Reply(429, {"message": "slow down"}, {"Retry-After": "3600"}),), "SystemTimeout", None, 1
    ),
    "500 then an answer": Fault((Reply(500, "internal error"), OK), None, None, 2),
    "500 every time": Fault((Reply(500, "internal error"),), "SystemTimeout", None, 2),
    "connection reset": Fault((Reply(reset=True),), "SystemUnreachable", None, 1),
    "no answer within the budget": Fault((Reply(200, OK.body, delay=TIMEOUT + 5),), "SystemTimeout", None, 1),
    "malformed JSON": Fault((Reply(200, '{"document_annotation": "{\\"invoice'),), "SystemFailed", 200, 1),
    "empty 200": Fault((Reply(200, b""),), "SystemFailed", 200, 1),
    "200 holding no extraction": Fault((Reply(200, {"model": "m", "pages": []}),), "Unreadable", None, 1),
}
HEALTHY = Fault((OK,), None, None, 1)


class Scripted:
    """The fake's answer to Mistral's OCR request, chosen by the document the request carries."""

    def __init__(self, plan: dict[str, Fault]) -> None:
        self.plan = plan
        self.queues = {doc_id: list(fault.replies) for doc_id, fault in plan.items()}
        self.asked: dict[str, list[Request]] = {}
        self.served: dict[str, list[int]] = {}
        self._lock = threading.Lock()

    def __call__(self, request: Request) -> Reply:
        doc_id = inline_document(request)
        with self._lock:
            queue = self.queues[doc_id]
            reply = queue.pop(0) if len(queue) > 1 else queue[0]
            self.asked.setdefault(doc_id, []).append(request)
            if not reply.reset and reply.delay < TIMEOUT:
                self.served.setdefault(doc_id, []).append(reply.status)
        return reply


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeVendor]:
    monkeypatch.setenv("MISTRAL_API_KEY", "sk-mistral-fault-test-key")
    with FakeVendor() as server:
        yield server


def _config(dataset: Path, url: str, *, workers: int, rate: float | None, timeout: float) -> Config:
    tree = init_tree("mistral", str(dataset))
    tree["system"]["mistral"]["base_url"] = url
    tree["timeout"] = timeout
    tree["workers"] = workers
    tree["ray"] = {"address": None, "actors": 1, "rate_limit": {"requests_per_second": rate, "max_in_flight": 0}}
    return check_tree(tree, where="test config")


def _records(folder: Path) -> dict[str, dict[str, Any]]:
    return {path.stem: json.loads(path.read_text()) for path in (folder / "records").glob("*.json")}


def _most_in_one_second(times: list[float], second: float = 1.0) -> int:
    times = sorted(times)
    return max(sum(1 for t in times[i:] if t < start + second) for i, start in enumerate(times))


def test_a_third_of_documents_faulty_each_ends_as_its_fault_says_in_budget_and_rate(
    fake: FakeVendor, tmp_path: Path
) -> None:
    ids = vendor_dataset(tmp_path / "data", 48)
    # The faults go to the first documents, those retried first: they are started in the first 5 s,
    # and their retries, 20-22 s later, come while the last fresh documents are being started.
    kinds = [*FAULTS, *["429 then an answer"] * 4, *["500 then an answer"] * 2, "connection reset"]
    kinds.sort(key=lambda kind: FAULTS[kind].attempts, reverse=True)
    faulty = ids[: len(kinds)]
    plan = {doc_id: HEALTHY for doc_id in ids}
    plan.update((doc_id, FAULTS[kind]) for doc_id, kind in zip(faulty, kinds, strict=True))
    script = Scripted(plan)
    fake.on("POST", "/v1/ocr", script)

    # Few calls at once: a retry waiting out its back-off holds none, or the fresh documents would wait.
    config = _config(tmp_path / "data", fake.url, workers=IN_FLIGHT, rate=RATE, timeout=TIMEOUT)
    run = engine.plan_run(config, str(tmp_path / "runs"))
    result = engine.execute(run)
    folder = Path(run.folder.url)
    records = _records(folder)

    assert sorted(records) == ids  # every document ends answered or recorded as failed
    for doc_id, fault in plan.items():
        record = records[doc_id]
        error = record["error"] or {}
        outcome = (error.get("type"), error.get("status"), record["cost"]["attempts"])
        assert outcome == (fault.error, fault.status, fault.attempts), doc_id
        assert len(script.asked[doc_id]) == fault.attempts, doc_id
        assert (record["output"] == ANSWER) == (fault.error is None), doc_id
        assert (folder / "predictions" / f"{doc_id}.json").exists() == (fault.error is None), doc_id
        # Within the budget, by the record's own clock and by the server's and the driver's (the
        # last request is cut at what remains of the budget; closing it takes a moment).
        assert record["cost"]["wall_s"] <= TIMEOUT + 0.5, doc_id
        first_request = script.asked[doc_id][0].received
        saved = (folder / "records" / f"{doc_id}.json").stat().st_mtime - _monotonic_offset()
        assert saved - first_request <= TIMEOUT + 2.0, doc_id
    assert "HTTP 500" in records[faulty[kinds.index("500 every time")]]["error"]["message"]

    # Every request the vendor saw, first attempts and retries: none over the rate in any second
    # (give or take the delivery jitter), though the retries came while fresh documents were being
    # started at the full rate. The run's first request is left out: the actor's first call also
    # sets up its HTTP client (70 ms here, more on a busy machine), a known gap of first calls.
    requests = [request.received for request in fake.sent("POST", "/v1/ocr")]
    assert len(requests) == sum(fault.attempts for fault in plan.values())
    last_fresh = max(asked[0].received for asked in script.asked.values())
    assert sum(asked[1].received < last_fresh for asked in script.asked.values() if len(asked) > 1) >= 3
    requests.remove(script.asked[ids[0]][0].received)
    starts = sorted(result.predicted["starts"])  # booked by the driver, retries included
    assert len(starts) == len(requests) + 1
    assert min(b - a for a, b in itertools.pairwise(starts)) >= 1 / RATE - 0.005, starts
    assert _most_in_one_second(starts) <= RATE
    gaps = [round(b - a, 3) for a, b in itertools.pairwise(sorted(requests))]
    assert _most_in_one_second(requests, 1.0 - JITTER) <= RATE, gaps
    assert result.predicted["peak_in_flight"] <= IN_FLIGHT


def _monotonic_offset() -> float:
    """Wall clock minus the monotonic clock, to compare file times with request arrivals."""
    return time.time() - time.monotonic()


def test_an_account_failure_stops_the_run_keeping_every_paid_answer_then_resume_finishes(
    fake: FakeVendor, tmp_path: Path
) -> None:
    ids = vendor_dataset(tmp_path / "data", 10)
    refusal = Reply(402, {"message": "insufficient credits: top up your account"})
    plan = {doc_id: HEALTHY for doc_id in ids} | {"doc_004": Fault((refusal,), None, None, 1)}
    script = Scripted(plan)
    fake.on("POST", "/v1/ocr", script)
    config = _config(tmp_path / "data", fake.url, workers=2, rate=None, timeout=10.0)
    run = engine.plan_run(config, str(tmp_path / "runs"))
    folder = Path(run.folder.url)

    with pytest.raises(RunStopped) as stopped:
        engine.execute(run)
    message = str(stopped.value)
    assert "\n" not in message
    assert "AccountFailure" in message and f"oeb resume {folder}" in message
    paid = {doc_id for doc_id, statuses in script.served.items() if 200 in statuses}
    kept = {path.stem: path.read_bytes() for path in (folder / "records").glob("*.json")}
    assert set(kept) == paid  # every answer the vendor gave is saved, and nothing else
    assert "doc_004" not in kept
    assert len(script.asked) < len(ids)  # documents not yet asked were not asked after the refusal

    script.queues["doc_004"] = [OK]  # the user fixed the account
    resumed = engine.plan_resume(str(folder))
    assert {row.doc_id for row in resumed.to_ask} == set(ids) - paid
    engine.execute(resumed)
    records = _records(folder)
    assert sorted(records) == ids
    assert all(record["error"] is None for record in records.values())
    assert all((folder / "records" / f"{d}.json").read_bytes() == kept[d] for d in kept)  # not written again
    assert all(len(script.asked[doc_id]) == 1 for doc_id in paid)  # nothing paid for was asked twice
