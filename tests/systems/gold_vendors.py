"""Fake vendors that answer every document of a dataset right, each in its vendor's protocol and
answer shape, so a whole run through the engine can be graded.

A fake knows the dataset only as its PDFs' bytes and golds: it recognises a document by the bytes
the adapter sends (a multipart upload, a base64 data URL or a raw body), refuses a wrong key (401)
and a schema that is not that document's (400), keeps each job "still working" for one poll, then
answers the document's gold as the vendor would. Prices vary by document so a mixed-up record shows.
It counts the documents in its hands at once (submitted, not yet answered), so the concurrency a run
allows is also seen from the vendor's side.

The job vendors also play the job protocol's hard cases, for the crash tests: they count the jobs
created per document (`created`: what a run paid for), can take `job_seconds` per job instead of
one poll, can forget jobs (`forget`: their polls then answer 404), can answer the next submits
429 with a Retry-After (`throttle`) and can hold every new submit (`held`), so a test kills a run
exactly when each job the vendor took has had time to be written down.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import itertools
import json
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from oeb.dataset import Dataset
from systems.fake_vendor import FakeVendor, Reply, Request

LATENCY = 0.1
"""Seconds a one-request vendor (Mistral, an LLM) takes to answer, so overlapping calls overlap."""
NO_RETRY = {"x-should-retry": "false"}


@dataclass(frozen=True)
class Document:
    doc_id: str
    number: int
    """Its position in the manifest: sets its price, so each record's cost is its own."""
    gold: dict[str, Any]
    properties: frozenset[str]


class Refused(Exception):
    """A request the vendor turns down, answered with `status` and the message as its error."""

    def __init__(self, status: int, message: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.headers = headers or {}


class GoldVendor:
    """The state every fake shares: the documents by their bytes, jobs, the key, what was answered."""

    key_header = "authorization"
    key_prefix = "Bearer "
    raw_exact = True
    """False where the record's `raw` is rebuilt by a client library that adds fields (the OpenAI SDK)."""

    def __init__(self, fake: FakeVendor, dataset: Dataset, key: str) -> None:
        self.fake, self.key = fake, key
        self.documents: dict[str, Document] = {}
        for number, (row, gold) in enumerate(dataset.golds()):
            digest = hashlib.sha256(dataset.document(row).read_bytes()).hexdigest()
            properties = frozenset(row.schema.get("properties", {}))
            self.documents[digest] = Document(row.doc_id, number, gold, properties)
        self.files: dict[str, bytes] = {}
        self.jobs: dict[str, Document] = {}
        self.polls: Counter[str] = Counter()
        self.served: dict[str, Any] = {}
        """Each document's final answer body, by doc_id."""
        self.asked: dict[str, Any] = {}
        """Each document's request body, by doc_id, where the record repeats some of it."""
        self.job_of: dict[str, str] = {}
        self.answered: Counter[str] = Counter()
        self.created: Counter[str] = Counter()
        """Jobs created per doc_id: what a run paid for."""
        self.job_seconds: float | None = None
        """Seconds a job takes from its creation; None: done at its second poll."""
        self.throttled = 0
        self.retry_after = 0.0
        self.started: dict[str, float] = {}
        self.finished: set[str] = set()
        self.busy = self.peak = 0
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._open = threading.Event()
        self._open.set()
        self._holds = 0
        self.install()

    def install(self) -> None:
        raise NotImplementedError

    def route(self, method: str, path: str, handler: Callable[[Request], Reply], *, prefix: bool = False) -> None:
        """Serve `handler` after the key check; a `Refused` becomes the vendor's error answer."""

        def guarded(request: Request) -> Reply:
            try:
                if request.headers.get(self.key_header) != self.key_prefix + self.key:
                    raise Refused(401, "invalid API key")
                return handler(request)
            except Refused as refused:
                return Reply(refused.status, {"error": {"message": str(refused)}}, NO_RETRY | refused.headers)

        (self.fake.on_prefix if prefix else self.fake.on)(method, path, guarded)

    def new_id(self, kind: str) -> str:
        with self._lock:
            return f"{kind}_{next(self._ids)}"

    def upload(self, pdf: bytes, kind: str = "file") -> str:
        file_id = self.new_id(kind)
        self.files[file_id] = pdf
        return file_id

    def uploaded(self, file_id: Any) -> bytes:
        if file_id not in self.files:
            raise Refused(404, f"no file {file_id}")
        return self.files[file_id]

    def document(self, pdf: bytes, schema: Any) -> Document:
        """The document these bytes are, checked against the schema that came with them."""
        document = self.documents.get(hashlib.sha256(pdf).hexdigest())
        if document is None:
            raise Refused(400, "not a document of the dataset")
        sent = frozenset(schema) if isinstance(schema, dict) else frozenset()
        if sent != document.properties:
            raise Refused(400, f"the schema sent names {sorted(sent)}, not the fields of {document.doc_id}")
        return document

    def start(self, document: Document) -> str:
        """A job for `document`; it stays in the vendor's hands until its answer is served. A throttled
        submit creates nothing and answers 429 with its Retry-After; one that came while submits were
        `held` creates nothing and answers 503."""
        holds = self._holds
        self._open.wait()
        with self._lock:
            if self._holds != holds:
                raise Refused(503, "held while its caller was killed")
            if self.throttled:
                self.throttled -= 1
                raise Refused(429, "too many requests", {"Retry-After": f"{self.retry_after:g}"})
        job = self.new_id("job")
        with self._lock:
            self.jobs[job] = document
            self.job_of[document.doc_id] = job
            self.created[document.doc_id] += 1
            self.started[job] = time.monotonic()
            self.busy += 1
            self.peak = max(self.peak, self.busy)
        return job

    def poll(self, job: str) -> Document | None:
        """The job's document once it is done (after `job_seconds`, else from the second poll on), None
        while it is still working; 404 for a job it does not know or has forgotten."""
        with self._lock:
            document = self.jobs.get(job)
            if document is None:
                raise Refused(404, f"no job {job}")
            self.polls[job] += 1
            if self.job_seconds is None:
                done = self.polls[job] >= 2
            else:
                done = time.monotonic() - self.started[job] >= self.job_seconds
            if not done:
                return None
            if job not in self.finished:
                self.finished.add(job)
                self.busy -= 1
                self.answered[document.doc_id] += 1
            return document

    def forget(self, doc_id: str | None = None) -> set[str]:
        """Forget the jobs of `doc_id` (all jobs when None), as a vendor that expired them: their
        polls answer 404 from now on. Returns the documents whose jobs were forgotten."""
        with self._lock:
            gone = {job: document for job, document in self.jobs.items() if doc_id in (None, document.doc_id)}
            for job in gone:
                del self.jobs[job]
                if job not in self.finished:
                    self.busy -= 1
            return {document.doc_id for document in gone.values()}

    @contextlib.contextmanager
    def held(self) -> Iterator[None]:
        """Hold every submit that comes from now on (it waits, creating nothing); when the block ends,
        those held create nothing and answer 503 (their caller was killed meanwhile)."""
        self._open.clear()
        try:
            yield
        finally:
            with self._lock:
                self._holds += 1
            self._open.set()

    def throttle(self, submits: int, retry_after: float) -> None:
        """Answer the next `submits` submits 429 with `Retry-After: retry_after`."""
        with self._lock:
            self.throttled, self.retry_after = submits, retry_after

    def work(self, document: Document) -> None:
        """A request that is the whole job (no polling): `document` is in hand for `LATENCY` seconds."""
        with self._lock:
            self.busy += 1
            self.peak = max(self.peak, self.busy)
        time.sleep(LATENCY)
        with self._lock:
            self.busy -= 1
            self.answered[document.doc_id] += 1

    def finish(self, document: Document, body: Any) -> Any:
        self.served[document.doc_id] = body
        return body

    def cost(self, document: Document) -> dict[str, Any]:
        """The record's cost fields for `document`, in the vendor's units."""
        return {"usd": None, "credits": None}

    def raw(self, document: Document) -> Any:
        """The record's `raw` for `document`: by default the final body served."""
        return self.served[document.doc_id]

    def job_id(self, document: Document) -> str | None:
        return self.job_of[document.doc_id]


def _path_id(request: Request) -> str:
    return request.path.rsplit("/", 1)[1]


class Datalab(GoldVendor):
    key_header, key_prefix = "x-api-key", ""

    def install(self) -> None:
        self.route("POST", "/api/v1/extract", self.submit)
        self.route("GET", "/api/v1/extract/", self.check, prefix=True)

    def submit(self, request: Request) -> Reply:
        form = request.form()
        document = self.document(form["file"][2], json.loads(form["page_schema"][2]).get("properties"))
        job = self.start(document)
        return Reply(200, {"request_id": job, "request_check_url": f"{self.fake.url}/api/v1/extract/{job}"})

    def check(self, request: Request) -> Reply:
        document = self.poll(_path_id(request))
        if document is None:
            return Reply(200, {"status": "processing"})
        done = {
            "status": "complete",
            "extraction_schema_json": json.dumps(document.gold),
            "page_count": 1,
            "cost_breakdown": {"final_cost_cents": 100 + document.number},
        }
        return Reply(200, self.finish(document, done))

    def cost(self, document: Document) -> dict[str, Any]:
        return {"usd": (100 + document.number) / 100, "credits": None, "source": "cost_breakdown.final_cost_cents"}


class Reducto(GoldVendor):
    def install(self) -> None:
        self.route("POST", "/upload", lambda request: Reply(200, {"file_id": self.reducto_file(request)}))
        self.route("POST", "/extract_async", self.submit)
        self.route("GET", "/job/", self.check, prefix=True)
        self.route("GET", "/jobs", self.listing)

    def reducto_file(self, request: Request) -> str:
        return "reducto://" + self.upload(request.form()["file"][2])

    def submit(self, request: Request) -> Reply:
        body = request.json()
        pdf = self.uploaded(body["input"].removeprefix("reducto://"))
        document = self.document(pdf, body["instructions"]["schema"].get("properties"))
        return Reply(200, {"job_id": self.start(document)})

    def check(self, request: Request) -> Reply:
        document = self.poll(_path_id(request))
        if document is None:
            return Reply(200, {"status": "Pending", "result": None})
        keys = list(document.gold)
        half = len(keys) // 2  # deep extract answers in passes: the first leaves the rest null
        passes = [
            {key: document.gold[key] if n < half else None for n, key in enumerate(keys)},
            {key: document.gold[key] for key in keys[half:]},
        ]
        usage = {"num_pages": 1, "credits": 2 * (document.number + 1)}
        return Reply(200, self.finish(document, {"status": "Completed", "result": {"usage": usage, "result": passes}}))

    def listing(self, request: Request) -> Reply:
        with self._lock:
            jobs = [{"job_id": job, "duration": 10 + d.number} for job, d in self.jobs.items()]
        return Reply(200, {"jobs": jobs})

    def cost(self, document: Document) -> dict[str, Any]:
        return {"usd": None, "credits": 2 * (document.number + 1), "source": "usage.credits"}

    def raw(self, document: Document) -> Any:
        return {**self.served[document.doc_id], "latency_s": 10 + document.number}


class Extend(GoldVendor):
    def install(self) -> None:
        self.route("POST", "/files/upload", self.file)
        self.route("POST", "/extract_runs", self.submit)
        self.route("GET", "/extract_runs/", self.check, prefix=True)

    def file(self, request: Request) -> Reply:
        return Reply(200, {"object": "file", "id": self.upload(request.form()["file"][2])})

    def submit(self, request: Request) -> Reply:
        body = request.json()
        schema = body["config"]["schema"]
        if '"id"' in json.dumps(schema.get("properties")) or "$ref" in json.dumps(schema):
            raise Refused(400, "the schema holds a reserved `id` property or a $ref")
        document = self.document(self.uploaded(body["file"]["id"]), schema.get("properties"))
        return Reply(200, {"object": "extract_run", "id": self.start(document), "status": "PROCESSING"})

    def check(self, request: Request) -> Reply:
        run = _path_id(request)
        document = self.poll(run)
        if document is None:
            return Reply(200, {"extractRun": {"object": "extract_run", "id": run, "status": "PROCESSING"}})
        done = {
            "object": "extract_run",
            "id": run,
            "status": "PROCESSED",
            "output": {"value": document.gold, "metadata": {}},
            "usage": {"totalCredits": 4 * (document.number + 1)},
        }
        return Reply(200, self.finish(document, done))

    def cost(self, document: Document) -> dict[str, Any]:
        return {"usd": None, "credits": 4 * (document.number + 1), "source": "usage.totalCredits"}


class LlamaExtract(GoldVendor):
    PROJECT = "proj_gold"

    def install(self) -> None:
        self.route("GET", "/api/v1/projects", lambda request: Reply(200, [{"id": self.PROJECT, "name": "Default"}]))
        self.route("POST", "/api/v1/beta/files", self.file)
        self.route("POST", "/api/v2/extract", self.submit)
        self.route("GET", "/api/v2/extract/", self.check, prefix=True)

    def file(self, request: Request) -> Reply:
        form = request.form()
        if form["purpose"][2] != b"extract":
            raise Refused(422, "purpose must be extract")
        return Reply(200, {"id": self.upload(form["file"][2])})

    def submit(self, request: Request) -> Reply:
        if request.query.get("project_id") != self.PROJECT:
            raise Refused(404, "no such project")
        body = request.json()
        schema = body["configuration"]["data_schema"]
        if '"$' in json.dumps(schema):
            raise Refused(422, "$-prefixed keys are not allowed in data_schema")
        document = self.document(self.uploaded(body["file_input"]), schema.get("properties"))
        self.asked[document.doc_id] = body
        return Reply(200, {"id": self.start(document), "status": "PENDING"})

    def check(self, request: Request) -> Reply:
        job = _path_id(request)
        document = self.poll(job)
        if document is None:
            return Reply(200, {"id": job, "status": "RUNNING"})
        done = {
            "id": job,
            "status": "SUCCESS",
            "extract_result": document.gold,
            "created_at": "2026-11-29T10:00:00Z",
            "updated_at": f"2026-11-29T10:00:{10 + document.number}Z",
        }
        return Reply(200, self.finish(document, done))

    def raw(self, document: Document) -> Any:
        tier = self.asked[document.doc_id]["configuration"]["tier"]
        return {**self.served[document.doc_id], "tier": tier, "server_latency_s": 10.0 + document.number}


def _data_url(url: str) -> bytes:
    prefix = "data:application/pdf;base64,"
    if not url.startswith(prefix):
        raise Refused(400, "the document must be a PDF data URL")
    return base64.b64decode(url.removeprefix(prefix))


class Mistral(GoldVendor):
    def install(self) -> None:
        self.route("POST", "/v1/ocr", self.ocr)

    def ocr(self, request: Request) -> Reply:
        body = request.json()
        annotation = body["document_annotation_format"]["json_schema"]["schema"]
        document = self.document(_data_url(body["document"]["document_url"]), annotation.get("properties"))
        self.work(document)
        answer = {
            "model": "mistral-ocr-2512",
            "pages": [{"index": 0, "markdown": document.doc_id}],
            "document_annotation": json.dumps(document.gold),
            "usage_info": {"pages_processed": 1, "cost": 0.001 * (document.number + 1)},
        }
        return Reply(200, self.finish(document, answer))

    def cost(self, document: Document) -> dict[str, Any]:
        return {"usd": round(0.001 * (document.number + 1), 6), "credits": None, "source": "usage_info.cost"}

    def job_id(self, document: Document) -> str | None:
        return None


ANALYZERS = "/contentunderstanding/analyzers/"


def _azure_node(value: Any, field: dict[str, Any]) -> dict[str, Any]:
    """`value` as Azure returns a field: typed, with its value under the key of its type."""
    kind = field.get("type", "string")
    if value is None:
        return {"type": kind}
    if kind == "object":
        inner = field.get("properties", {})
        return {"type": kind, "valueObject": {k: _azure_node(v, inner.get(k, {})) for k, v in value.items()}}
    if kind == "array":
        return {"type": kind, "valueArray": [_azure_node(v, field.get("items", {})) for v in value]}
    key = {"number": "valueNumber", "boolean": "valueBoolean"}.get(kind, "valueString")
    return {"type": kind, key: value, "confidence": 0.9, "spans": [{"offset": 0, "length": 1}]}


class AzureCU(GoldVendor):
    key_header, key_prefix = "ocp-apim-subscription-key", ""

    def install(self) -> None:
        self.analyzers: dict[str, dict[str, Any]] = {}
        self.analyzer_of: dict[str, str] = {}
        """The analyzer each analysis job runs."""
        self.route("PUT", ANALYZERS, self.create, prefix=True)
        self.route("GET", ANALYZERS, self.operation, prefix=True)
        self.route("POST", ANALYZERS, self.analyze, prefix=True)
        self.route("GET", "/contentunderstanding/analyzerResults/", self.check, prefix=True)

    def create(self, request: Request) -> Reply:
        analyzer = request.path.removeprefix(ANALYZERS)
        with self._lock:
            if analyzer in self.analyzers:
                return Reply(409, {"error": {"code": "Conflict", "message": f"{analyzer} exists"}})
            self.analyzers[analyzer] = request.json()
        location = f"{self.fake.url}{ANALYZERS}{analyzer}/operations/{self.new_id('op')}?api-version=v"
        return Reply(201, {"analyzerId": analyzer, "status": "creating"}, {"Operation-Location": location})

    def operation(self, request: Request) -> Reply:
        op = _path_id(request)
        with self._lock:
            self.polls[op] += 1
            return Reply(200, {"id": op, "status": "Running" if self.polls[op] < 2 else "Succeeded"})

    def analyze(self, request: Request) -> Reply:
        analyzer = request.path.removeprefix(ANALYZERS).removesuffix(":analyze")
        created = self.analyzers.get(analyzer)
        if created is None or not request.path.endswith(":analyze"):
            raise Refused(404, f"no analyzer {analyzer}")
        document = self.document(request.body, created["fieldSchema"]["fields"])
        job = self.start(document)
        self.analyzer_of[job] = analyzer
        location = f"{self.fake.url}/contentunderstanding/analyzerResults/{job}?api-version=v"
        return Reply(202, {"id": job, "status": "Running"}, {"Operation-Location": location})

    def check(self, request: Request) -> Reply:
        job = _path_id(request)
        document = self.poll(job)
        if document is None:
            return Reply(200, {"id": job, "status": "Running"})
        analyzer = self.analyzer_of[job]
        fields = self.analyzers[analyzer]["fieldSchema"]["fields"]
        nodes = {k: _azure_node(v, fields.get(k, {})) for k, v in document.gold.items()}
        result = {"analyzerId": analyzer, "contents": [{"kind": "document", "markdown": "", "fields": nodes}]}
        return Reply(200, self.finish(document, {"id": job, "status": "Succeeded", "result": result}))

    def job_id(self, document: Document) -> str | None:
        return self.analyzer_of[self.job_of[document.doc_id]]


class OpenRouter(GoldVendor):
    raw_exact = False

    def install(self) -> None:
        self.route("POST", "/api/v1/chat/completions", self.complete)

    def complete(self, request: Request) -> Reply:
        body = request.json()
        file = body["messages"][1]["content"][0]["file"]
        schema = body["response_format"]["json_schema"]["schema"]
        document = self.document(_data_url(file["file_data"]), schema.get("properties"))
        self.asked[document.doc_id] = body
        self.work(document)
        n = document.number
        message = {"role": "assistant", "content": f"```json\n{json.dumps(document.gold)}\n```"}
        completion = {
            "id": f"gen-{document.doc_id}",
            "object": "chat.completion",
            "created": 1,
            "model": body["model"],
            "choices": [{"index": 0, "finish_reason": "stop", "message": message}],
            "usage": {
                "prompt_tokens": 1000 + n,
                "completion_tokens": 100 + n,
                "total_tokens": 1100 + 2 * n,
                "cost": 0.01 * (n + 1),
            },
        }
        return Reply(200, self.finish(document, completion))

    def cost(self, document: Document) -> dict[str, Any]:
        n = document.number
        return {"usd": round(0.01 * (n + 1), 6), "source": "usage.cost", "tokens_in": 1000 + n, "tokens_out": 100 + n}

    def raw(self, document: Document) -> Any:
        served, asked = self.served[document.doc_id], self.asked[document.doc_id]
        return {
            "extraction": document.gold,
            "calls": [{"usage": served["usage"], "model": served["model"]}],
            "finish_reason": "stop",
            "max_output_tokens": asked["max_tokens"],
            "model": asked["model"],
        }

    def job_id(self, document: Document) -> str | None:
        return f"gen-{document.doc_id}"
