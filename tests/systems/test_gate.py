"""A step's gate (`predict_attempt(gate=...)`): the caller's wait for a slot of the system's in-flight
cap, made right before the step's paid request. A job vendor that uploads first makes its free
requests (the upload, a project lookup) before the gate, so they overlap the wait; every other step
waits before its first request. The wait is not the document's time, and a gate that refuses
(`NotStarted`) ends the step with nothing bought. Real adapters against the fake vendors on 127.0.0.1."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import pytest

from oeb.systems import (
    Adapter,
    Call,
    Deadline,
    NotStarted,
    Question,
    Submitted,
    adapter_class,
    get,
    predict_attempt,
    question_schema,
)
from systems.conftest import FAST
from systems.fake_vendor import FakeVendor
from systems.vendors import SCHEMA, VENDORS, Vendor

each_vendor = pytest.mark.parametrize("vendor", VENDORS, indirect=True, ids=str)


def _step(vendor: Vendor, fake: FakeVendor, pdf: Path, gate: Any, timeout: float = 5.0) -> Any:
    system = get(vendor.system, vendor.options(fake.url))
    return predict_attempt(system, Question(pdf, question_schema(SCHEMA)), timeout=timeout, policy=FAST, gate=gate)


@each_vendor
def test_the_gate_comes_right_before_the_paid_request(vendor: Vendor, fake: FakeVendor, pdf: Path) -> None:
    seen: list[list[str]] = []
    _step(vendor, fake, pdf, lambda: seen.append([r.path for r in fake.sent()]))
    paths = [r.path for r in fake.sent()]
    [before] = seen  # called once
    if adapter_class(vendor.system).uploads_first:
        assert before == paths[: paths.index(vendor.submit[1])] and before  # the upload is made, the job not
    else:
        assert before == []


def test_the_vendors_that_upload_first() -> None:
    assert {v.system for v in VENDORS if adapter_class(v.system).uploads_first} == {"reducto", "extend", "llamaextract"}


@each_vendor
def test_a_refusing_gate_buys_nothing(vendor: Vendor, fake: FakeVendor, pdf: Path) -> None:
    def refuse() -> None:
        raise NotStarted("stopped while it waited")

    with pytest.raises(NotStarted):
        _step(vendor, fake, pdf, refuse)
    assert fake.sent(*vendor.submit) == []


@pytest.mark.parametrize("vendor", [v for v in VENDORS if v.system in ("mistral", "extend")], indirect=True, ids=str)
def test_the_wait_at_the_gate_is_not_the_documents_time(vendor: Vendor, fake: FakeVendor, pdf: Path) -> None:
    called = time.time()
    outcome = _step(vendor, fake, pdf, lambda: time.sleep(0.6), timeout=0.5)  # the wait alone is past the limit
    if isinstance(outcome, Submitted):
        assert outcome.asking.started >= called + 0.55  # a later attempt counts from after the wait
    else:
        assert outcome["error"] is None and outcome["cost"]["wall_s"] < 0.5


@dataclass(frozen=True)
class _Forgetful(Adapter):
    """Says it uploads first, but its submit never calls `deadline.start()`: a bug the step catches."""

    name: ClassVar[str] = "forgetful"
    uploads_first: ClassVar[bool] = True

    def submit(self, document: Path, schema: dict[str, Any], deadline: Deadline) -> dict[str, Any]:
        return {"job_id": "j1"}

    def collect(self, handle: dict[str, Any], deadline: Deadline) -> Call:
        return Call(raw={"extraction": {"invoice": "A-1"}})


def test_an_adapter_that_uploads_first_must_open_the_gate(pdf: Path) -> None:
    with pytest.raises(TypeError, match=r"never called deadline\.start\(\)"):
        predict_attempt(_Forgetful(), Question(pdf, question_schema(SCHEMA)), timeout=5.0, policy=FAST)
