"""Fixtures of the systems tests: a started fake vendor, the vendor cases, keys, a PDF, and `ask`,
which runs the real adapter through `oeb.systems.predict` with tiny waits."""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from oeb.dataset import SAMPLE_DATASET
from oeb.systems import Question, RetryPolicy, azure_cu, get, predict, question_schema
from systems.fake_vendor import FakeVendor
from systems.vendors import SCHEMA, VENDORS, Vendor

FAST = RetryPolicy(backoff=0.01, jitter=0.0, poll_backoff=0.01, max_poll_backoff=0.05, poll_failures=4)
"""The production schedule (20/60/120 s, polls 2..30 s, 60 failed polls in a row before giving up) shrunk
so every test runs in well under a second; the failed polls too, since a test that outlasts them sends
that many (60 cost 3 s per vendor)."""
KEY = "sk-sentinel-0123456789abcdef"
DOCUMENTS = 30
"""Documents of the `thirty` dataset."""
PDF = b"%PDF-1.4\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF\n"


@pytest.fixture(autouse=True)
def _isolated(monkeypatch: pytest.MonkeyPatch) -> None:
    """Loopback never goes through a proxy; no real key leaks in; Azure's analyzer cache is per test."""
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    for vendor in VENDORS:
        monkeypatch.delenv(vendor.key, raising=False)
    for variable in ("OPENAI_API_KEY", "LLAMAPARSE_API_KEY", "EXTEND_WORKSPACE_ID"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setattr(azure_cu, "_ANALYZERS", set())


@pytest.fixture
def fake() -> Iterator[FakeVendor]:
    with FakeVendor() as server:
        yield server


@pytest.fixture
def pdf(tmp_path: Path) -> Path:
    path = tmp_path / "invoice_4417.pdf"
    path.write_bytes(PDF)
    return path


@pytest.fixture(params=VENDORS, ids=str)
def vendor(request: pytest.FixtureRequest, fake: FakeVendor, monkeypatch: pytest.MonkeyPatch) -> Vendor:
    """Each vendor in turn, its happy path installed on `fake` and its key set to the sentinel."""
    case: Vendor = request.param
    case.install(fake)
    monkeypatch.setenv(case.key, KEY)
    return case


@pytest.fixture(scope="module")
def thirty(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sample's 12 documents copied to 30, each PDF made distinct by a trailing comment."""
    folder = tmp_path_factory.mktemp("thirty")
    sample = Path(SAMPLE_DATASET)
    table = pq.read_table(sample / "manifest.parquet").to_pylist()
    rows = []
    for n in range(DOCUMENTS):
        row = dict(table[n % len(table)])
        doc_id = f"{row['doc_id']}-{n}"
        pdf, gold = folder / "pdfs" / f"{doc_id}.pdf", folder / "gold" / f"{doc_id}.json"
        pdf.parent.mkdir(exist_ok=True)
        gold.parent.mkdir(exist_ok=True)
        pdf.write_bytes((sample / row["doc_path"]).read_bytes() + f"\n% copy {n}\n".encode())
        shutil.copy(sample / row["gt_path"], gold)
        rows.append(row | {"doc_id": doc_id, "doc_path": f"pdfs/{doc_id}.pdf", "gt_path": f"gold/{doc_id}.json"})
    pq.write_table(
        pa.Table.from_pylist(rows, schema=pq.read_schema(sample / "manifest.parquet")), folder / "manifest.parquet"
    )
    return folder


Ask = Callable[..., dict[str, Any]]


@pytest.fixture
def ask(fake: FakeVendor, pdf: Path) -> Ask:
    """Run `system` (default: the current vendor) on the PDF against the fake; return the record."""

    def run(vendor: Vendor, *, timeout: float = 5.0, schema: dict[str, Any] = SCHEMA, **options: Any) -> dict[str, Any]:
        adapter = get(vendor.system, {**vendor.options(fake.url), **options})
        return predict(adapter, Question(pdf, question_schema(schema)), timeout=timeout, policy=FAST)

    return run
