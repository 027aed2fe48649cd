"""Job-protocol fakes for the scale benchmark (`scripts/bench_scale.py`): one vendor's job protocol on
127.0.0.1, so oeb's real adapters submit, poll and collect as they would against the vendor.

Each fake speaks one protocol (datalab, reducto, extend, llamaextract, azure-cu: the routes and answer
shapes the adapters read, docs/performance/scale.md), gives every job its own id, and finishes it a
latency after its submit, drawn from a log-normal distribution like real vendors' (a long right tail;
`--latency` is the mean, `--spread` the log-normal sigma, clipped to [mean/4, 4 x mean]). With `--jobs N`
the first N jobs take the distribution's N quantiles in an order shuffled by `--seed`, scaled so their
mean is exactly `--latency`: N independent draws sum to 1 or 2% more or less than N x the mean, and the
benchmark's bound assumes the mean. Jobs beyond the N are drawn at random. The answer is
the synthetic document's gold (`gold`), with one value wrong in every seventh document so grading has
something to find. Each document carries its id in its bytes (`MARKER`), which is how the fake counts the
jobs bought per document (the benchmark's "every job bought once").

Run as a process of its own (`python scripts/job_fakes.py --protocol reducto --latency 2`), so the
benchmark can measure the fake's CPU apart from oeb's: it prints its port, then serves until killed;
`GET /_stats` answers its counts (requests by route, jobs per document, first and last request, its own
CPU seconds).
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import random
import re
import statistics
import threading
import time
from collections import Counter, deque
from dataclasses import dataclass, field
from http.server import ThreadingHTTPServer
from typing import Any

import fake_http

PROTOCOLS = ("datalab", "reducto", "extend", "llamaextract", "azure-cu")
MARKER = b"%oeb-doc:"
"""A PDF comment line `%oeb-doc:<doc id>` in each synthetic document."""
_MARKED = re.compile(re.escape(MARKER) + rb"([A-Za-z0-9_.-]+)")

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "number": {"type": "string", "description": "invoice number"},
        "date": {"type": "string", "description": "issue date"},
        "total": {"type": "number", "description": "amount due"},
        "items": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"name": {"type": "string"}, "amount": {"type": "number"}},
            },
        },
    },
}


def gold(doc_id: str) -> dict[str, Any]:
    """The synthetic document's true extraction, from its id alone (the dataset and the fakes agree)."""
    n = int(re.sub(r"\D", "", doc_id) or 0)
    items = [{"name": f"item {n}-{k}", "amount": float(10 * k + n % 10)} for k in range(1, 2 + n % 4)]
    return {
        "number": f"INV-{n:05d}",
        "date": f"2026-{1 + n % 12:02d}-{1 + n % 28:02d}",
        "total": sum(item["amount"] for item in items),
        "items": items,
    }


def answer(doc_id: str) -> dict[str, Any]:
    """What the fake vendor extracts: the gold, with the total wrong in every seventh document."""
    found = gold(doc_id)
    n = int(re.sub(r"\D", "", doc_id) or 0)
    if n % 7 == 3:
        found["total"] += 1.0
    return found


def pdf(doc_id: str, padding: int = 0) -> bytes:
    """A small PDF naming its document (and `padding` bytes of comment, for larger uploads)."""
    return b"%PDF-1.4\n" + MARKER + doc_id.encode() + b"\n%" + b"x" * padding + b"\n%%EOF\n"


def _azure_value(value: Any) -> dict[str, Any]:
    """A value as Azure Content Understanding types a field."""
    if isinstance(value, dict):
        return {"type": "object", "valueObject": {k: _azure_value(v) for k, v in value.items()}}
    if isinstance(value, list):
        return {"type": "array", "valueArray": [_azure_value(v) for v in value]}
    if isinstance(value, bool):
        return {"type": "boolean", "valueBoolean": value}
    if isinstance(value, int | float):
        return {"type": "number", "valueNumber": value}
    return {"type": "string", "valueString": value}


@dataclass
class Job:
    doc_id: str
    submitted: float
    ready: float
    seen: float | None = None
    """When a poll first found the job done (the system-wide monotonic clock)."""


@dataclass
class JobFake:
    """One vendor's job protocol; `serve` answers requests until the process ends."""

    protocol: str
    latency: float = 2.0
    spread: float = 0.5
    seed: int = 0
    planned: int = 0
    """How many jobs take the distribution's quantiles (`--jobs`) before jobs are drawn at random."""
    jobs: dict[str, Job] = field(default_factory=dict)
    files: dict[str, str] = field(default_factory=dict)
    bought: Counter[str] = field(default_factory=Counter)
    routes: Counter[str] = field(default_factory=Counter)
    first: float | None = None
    last: float | None = None
    recent: deque[str] = field(default_factory=lambda: deque(maxlen=200))

    def __post_init__(self) -> None:
        if self.protocol not in PROTOCOLS:
            raise SystemExit(f"job_fakes: unknown protocol {self.protocol!r}; give one of {', '.join(PROTOCOLS)}")
        self._random = random.Random(self.seed)
        self._plan = self._quantiles(self.planned)
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self.url = ""

    def draw(self) -> float:
        """One job's seconds: the next planned one, else log-normal with mean `latency`, clipped to
        [latency/4, 4 x latency]."""
        if self._plan:
            return self._plan.pop()
        if self.spread <= 0:
            return self.latency
        return self._clipped(self._random.lognormvariate(self._mu(), self.spread))

    def _quantiles(self, count: int) -> list[float]:
        """`count` jobs' seconds: the clipped distribution's quantiles at (i + 1/2) / count, scaled to
        a mean of exactly `latency`, in an order the seed shuffles."""
        if count <= 0 or self.spread <= 0:
            return [self.latency] * max(count, 0)
        normal = statistics.NormalDist(self._mu(), self.spread)
        seconds = [self._clipped(math.exp(normal.inv_cdf((i + 0.5) / count))) for i in range(count)]
        scale = self.latency * count / math.fsum(seconds)
        seconds = [s * scale for s in seconds]
        self._random.shuffle(seconds)
        return seconds

    def _mu(self) -> float:
        return math.log(self.latency) - self.spread**2 / 2

    def _clipped(self, seconds: float) -> float:
        return min(max(seconds, self.latency / 4), 4 * self.latency)

    def _file(self, body: bytes) -> str:
        """Keep an upload; its id."""
        with self._lock:
            file_id = f"file_{next(self._ids)}"
            self.files[file_id] = _doc_id(body)
        return file_id

    def _submit(self, doc_id: str) -> str:
        """Start (and count) a job for `doc_id`; its id."""
        now = time.monotonic()
        with self._lock:
            job_id = f"job_{next(self._ids)}"
            self.jobs[job_id] = Job(doc_id, now, now + self.draw())
            self.bought[doc_id] += 1
            self.recent.append(job_id)
        return job_id

    def _job(self, job_id: str) -> tuple[Job | None, bool]:
        job, now = self.jobs.get(job_id), time.monotonic()
        ready = job is not None and now >= job.ready
        if ready and job is not None and job.seen is None:
            job.seen = now
        return job, ready

    def stats(self) -> dict[str, Any]:
        """The fake's counts: requests by route, jobs per document, its first and last request (the
        system-wide monotonic clock), its own CPU seconds, and each job's timeline: when it was
        submitted, how long it ran, when a poll first found it done, and how long after it was done
        that was."""
        with self._lock:
            per_document = Counter(self.bought.values())
            return {
                "protocol": self.protocol,
                "requests": sum(self.routes.values()),
                "routes": dict(self.routes),
                "documents": len(self.bought),
                "jobs": sum(self.bought.values()),
                "jobs_per_document": {str(k): v for k, v in sorted(per_document.items())},
                "first": self.first,
                "last": self.last,
                "cpu_seconds": time.process_time(),
                "submitted": sorted(job.submitted for job in self.jobs.values()),
                "late": [job.seen - job.ready for job in self.jobs.values() if job.seen is not None],
                "durations": [job.ready - job.submitted for job in self.jobs.values()],
                "seen": sorted(job.seen for job in self.jobs.values() if job.seen is not None),
            }

    def answer(self, method: str, path: str, body: bytes) -> tuple[int, Any, dict[str, str]]:
        """Status, JSON body and headers for one request."""
        now = time.monotonic()
        with self._lock:
            self.first = self.first if self.first is not None else now
            self.last = now
        if path == "/_stats":
            return 200, self.stats(), {}
        kind, reply = _PROTOCOLS[self.protocol](self, method, path, body)
        with self._lock:
            self.routes[kind] += 1
        return reply


def _doc_id(body: bytes) -> str:
    found = _MARKED.search(body)
    return found.group(1).decode() if found else "unknown"


Reply = tuple[int, Any, dict[str, str]]
NOT_FOUND: Reply = (404, {"error": "no such job"}, {})


def _datalab(fake: JobFake, method: str, path: str, body: bytes) -> tuple[str, Reply]:
    if method == "POST" and path == "/api/v1/extract":
        job_id = fake._submit(_doc_id(body))
        return "submit", (200, {"request_id": job_id, "request_check_url": f"{fake.url}{path}/{job_id}"}, {})
    job, ready = fake._job(path.rsplit("/", 1)[-1])
    if method != "GET" or job is None:
        return "other", NOT_FOUND
    if not ready:
        return "poll", (200, {"status": "processing"}, {})
    done = {
        "status": "complete",
        "extraction_schema_json": json.dumps(answer(job.doc_id)),
        "cost_breakdown": {"final_cost_cents": 2},
    }
    return "poll", (200, done, {})


def _reducto(fake: JobFake, method: str, path: str, body: bytes) -> tuple[str, Reply]:
    if method == "POST" and path == "/upload":
        return "upload", (200, {"file_id": f"reducto://{fake._file(body)}"}, {})
    if method == "POST" and path == "/extract_async":
        doc_id = fake.files.get(json.loads(body)["input"].removeprefix("reducto://"), "unknown")
        return "submit", (200, {"job_id": fake._submit(doc_id)}, {})
    if method == "GET" and path == "/jobs":
        with fake._lock:  # other threads submit meanwhile
            recent = [(job_id, fake.jobs[job_id]) for job_id in reversed(fake.recent)]
        listing = [{"job_id": job_id, "duration": round(job.ready - job.submitted, 3)} for job_id, job in recent]
        return "listing", (200, {"jobs": listing}, {})
    job, ready = fake._job(path.removeprefix("/job/"))
    if method != "GET" or job is None:
        return "other", NOT_FOUND
    if not ready:
        return "poll", (200, {"status": "Pending", "result": None}, {})
    result = {"usage": {"num_pages": 1, "credits": 2}, "result": [answer(job.doc_id)]}
    return "poll", (200, {"status": "Completed", "result": result}, {})


def _extend(fake: JobFake, method: str, path: str, body: bytes) -> tuple[str, Reply]:
    if method == "POST" and path == "/files/upload":
        return "upload", (200, {"object": "file", "id": fake._file(body)}, {})
    if method == "POST" and path == "/extract_runs":
        run_id = fake._submit(fake.files.get(json.loads(body)["file"]["id"], "unknown"))
        return "submit", (200, {"object": "extract_run", "id": run_id, "status": "PROCESSING"}, {})
    run_id = path.removeprefix("/extract_runs/")
    job, ready = fake._job(run_id)
    if method != "GET" or job is None:
        return "other", NOT_FOUND
    if not ready:
        return "poll", (200, {"extractRun": {"id": run_id, "status": "processing"}}, {})
    done = {
        "object": "extract_run",
        "id": run_id,
        "status": "PROCESSED",
        "output": {"value": answer(job.doc_id)},
        "usage": {"totalCredits": 4},
    }
    return "poll", (200, done, {})


def _llamaextract(fake: JobFake, method: str, path: str, body: bytes) -> tuple[str, Reply]:
    if method == "GET" and path == "/api/v1/projects":
        return "project", (200, [{"id": "proj_1"}], {})
    if method == "POST" and path == "/api/v1/beta/files":
        return "upload", (200, {"id": fake._file(body)}, {})
    if method == "POST" and path == "/api/v2/extract":
        job_id = fake._submit(fake.files.get(json.loads(body)["file_input"], "unknown"))
        return "submit", (200, {"id": job_id, "status": "PENDING"}, {})
    job_id = path.removeprefix("/api/v2/extract/")
    job, ready = fake._job(job_id)
    if method != "GET" or job is None:
        return "other", NOT_FOUND
    if not ready:
        return "poll", (200, {"id": job_id, "status": "RUNNING"}, {})
    done = {
        "id": job_id,
        "status": "SUCCESS",
        "extract_result": answer(job.doc_id),
        "created_at": "2026-12-01T10:00:00Z",
        "updated_at": f"2026-12-01T10:00:{min(job.ready - job.submitted, 59.0):06.3f}Z",
        "total_cost": 3,
    }
    return "poll", (200, done, {})


def _azure(fake: JobFake, method: str, path: str, body: bytes) -> tuple[str, Reply]:
    analyzers = "/contentunderstanding/analyzers/"
    if method == "PUT" and path.startswith(analyzers):
        location = f"{fake.url}/ops/{path.removeprefix(analyzers)}?api-version=v"
        return "analyzer", (201, {}, {"Operation-Location": location})
    if method == "GET" and path.startswith("/ops/"):
        return "analyzer", (200, {"status": "Succeeded"}, {})
    if method == "POST" and path.startswith(analyzers) and path.endswith(":analyze"):
        job_id = fake._submit(_doc_id(body))
        location = f"{fake.url}/contentunderstanding/analyzerResults/{job_id}?api-version=v"
        return "submit", (202, {}, {"Operation-Location": location})
    job, ready = fake._job(path.removeprefix("/contentunderstanding/analyzerResults/"))
    if method != "GET" or job is None:
        return "other", NOT_FOUND
    if not ready:
        return "poll", (200, {"status": "Running"}, {})
    fields = {name: _azure_value(value) for name, value in answer(job.doc_id).items()}
    return "poll", (200, {"status": "Succeeded", "result": {"contents": [{"fields": fields}]}}, {})


_PROTOCOLS = {
    "datalab": _datalab,
    "reducto": _reducto,
    "extend": _extend,
    "llamaextract": _llamaextract,
    "azure-cu": _azure,
}


def server(fake: JobFake, port: int = 0) -> ThreadingHTTPServer:
    """A threaded HTTP/1.1 server on 127.0.0.1 answering for `fake` (not yet serving)."""

    def answer(request: fake_http.Request) -> fake_http.Reply:
        status, body, headers = fake.answer(request.method, request.path, request.body)
        return fake_http.Reply(status, body, headers)

    httpd = fake_http.server(answer, port)
    host, bound = httpd.server_address[:2]
    fake.url = f"http://{host!s}:{bound}"
    return httpd


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--protocol", required=True, choices=PROTOCOLS)
    parser.add_argument("--latency", type=float, default=2.0, help="mean seconds a job takes")
    parser.add_argument("--spread", type=float, default=0.5, help="log-normal sigma of a job's seconds (0: fixed)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--jobs", type=int, default=0, help="jobs that take the distribution's quantiles")
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    fake = JobFake(args.protocol, args.latency, args.spread, args.seed, args.jobs)
    httpd = server(fake, args.port)
    print(fake.url, flush=True)
    httpd.serve_forever(poll_interval=0.5)


if __name__ == "__main__":
    main()
