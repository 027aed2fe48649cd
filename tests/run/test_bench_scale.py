"""The scale benchmark's parts: each job-protocol fake answers oeb's real adapter with its document's
answer and counts one job bought per document; the synthetic dataset opens and checks as a real one."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from oeb.dataset import open_dataset
from oeb.systems import Question, get, predict, question_schema

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
bench: Any = importlib.import_module("bench_scale")  # scripts are no package: loaded by path
fakes: Any = importlib.import_module("job_fakes")


@pytest.fixture
def fake(request: pytest.FixtureRequest) -> Iterator[Any]:
    job_fake = fakes.JobFake(request.param, latency=0.15, spread=0.5, seed=1)
    httpd = fakes.server(job_fake)
    thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield job_fake
    httpd.shutdown()
    httpd.server_close()


@pytest.mark.parametrize("fake", fakes.PROTOCOLS, indirect=True)
def test_each_fake_answers_the_real_adapter_once_per_document(
    fake: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(bench.KEYS[fake.protocol], "bench-fake")
    where = {"endpoint": fake.url} if fake.protocol == "azure-cu" else {"base_url": fake.url}
    adapter = get(fake.protocol, where | {"poll_interval": 0.02})
    for doc_id in ("doc_00003", "doc_00004"):
        document = tmp_path / f"{doc_id}.pdf"
        document.write_bytes(fakes.pdf(doc_id, padding=2000))
        record = predict(adapter, Question(document, question_schema(fakes.SCHEMA)), timeout=30)
        assert record["output"] == fakes.answer(doc_id)
    assert fakes.answer("doc_00003") != fakes.gold("doc_00003")
    assert fakes.answer("doc_00004") == fakes.gold("doc_00004")
    stats = fake.stats()
    assert stats["jobs_per_document"] == {"1": 2} and stats["documents"] == 2
    assert stats["routes"]["poll"] >= 2 and stats["routes"].get("other", 0) == 0


def test_a_job_takes_its_drawn_latency_around_the_mean() -> None:
    fake = fakes.JobFake("datalab", latency=2.0, spread=0.5, seed=3)
    draws = [fake.draw() for _ in range(4000)]
    assert 1.9 < sum(draws) / len(draws) < 2.1
    assert min(draws) >= 0.5 and max(draws) <= 8.0 and max(draws) > 4.0  # a long right tail, clipped
    assert fakes.JobFake("reducto", latency=2.0, spread=0).draw() == 2.0


def test_planned_jobs_take_the_mean_exactly_in_a_shuffled_order() -> None:
    fake = fakes.JobFake("extend", latency=2.0, spread=0.5, seed=4, planned=620)
    planned = [fake.draw() for _ in range(620)]
    assert sum(planned) == pytest.approx(620 * 2.0, rel=1e-9)  # the bound's N x latency, not a draw's
    assert min(planned) >= 0.5 and 7.5 < max(planned) <= 8.1  # the same clipped long tail
    assert planned != sorted(planned) and planned != sorted(planned, reverse=True)
    again = fakes.JobFake("extend", latency=2.0, spread=0.5, seed=4, planned=620)
    assert [again.draw() for _ in range(620)] == planned  # the seed decides the order
    assert fake.draw() != fake.draw()  # past the plan: random draws


def test_the_synthetic_dataset_opens_and_checks(tmp_path: Path) -> None:
    dataset = open_dataset(str(bench.make_dataset(tmp_path / "data", 12)))
    assert [row.doc_id for row in dataset.rows][:2] == ["doc_00000", "doc_00001"]
    dataset.check_documents(dataset.rows)
    dataset.check_golds()
    assert len({label for label, _, _ in bench.SYSTEMS}) == len(bench.SYSTEMS) == 10
    assert {protocol for _, protocol, _ in bench.SYSTEMS} == set(fakes.PROTOCOLS)


def test_the_census_counts_the_cpu_of_the_runs_processes_only() -> None:
    burn = "import time\nt = time.process_time()\nwhile time.process_time() - t < 0.4: pass\ntime.sleep(1.5)"
    with bench.Census() as census:
        tagged = subprocess.Popen([sys.executable, "-c", burn], env=os.environ | {bench.CENSUS_TAG: census.value})
        other = subprocess.Popen([sys.executable, "-c", burn])
        tagged.wait()
        other.wait()
    counted = {kind: found for kind, found in census.totals().items() if found[0]}
    assert list(counted) == ["other processes"]  # one process: not the driver, an actor or a Ray daemon
    processes, seconds = counted["other processes"]
    assert processes == 1 and 0.35 <= seconds < 1.0
