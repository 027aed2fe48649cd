"""Ray faults: a worker process killed (SIGKILL) mid-predict or mid-grade costs no record and
changes no score.

The processes are found as this test process's grandchildren (driver -> raylet -> worker) by the
title Ray gives a worker while it runs: `ray::SystemActor...` for an actor, `ray::_grade_task` for a
grading task. Scores are compared with an undisturbed run of the same question.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import signal
import threading
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from fixtures.datasets import write_manifest
from run.conftest import mock_config

from oeb.run import engine
from oeb.run.folder.run_folder import RunFolder

pytestmark = pytest.mark.ray

SCHEMA = {
    "type": "object",
    "properties": {
        "number": {"type": "string"},
        "items": {
            "type": "array",
            "items": {"type": "object", "properties": {"name": {"type": "string"}, "qty": {"type": "number"}}},
        },
    },
}


def _dataset(folder: Path, items: list[int]) -> Path:
    """One document per entry of `items`, its gold an invoice with that many line items."""
    ids = [f"doc_{n:03d}" for n in range(len(items))]
    (folder / "pdfs").mkdir(parents=True)
    (folder / "gold").mkdir()
    for doc_id, count in zip(ids, items, strict=True):
        gold = {"number": doc_id, "items": [{"name": f"item {i}", "qty": i} for i in range(count)]}
        (folder / "pdfs" / f"{doc_id}.pdf").write_bytes(b"%PDF-1.4\n%%EOF\n")
        (folder / "gold" / f"{doc_id}.json").write_text(json.dumps(gold))
    columns = {
        "doc_id": ids,
        "doc_path": [f"pdfs/{i}.pdf" for i in ids],
        "gt_path": [f"gold/{i}.json" for i in ids],
        "schema": [json.dumps(SCHEMA)] * len(ids),
    }
    write_manifest(folder, columns)
    return folder


def _workers(prefix: str) -> list[int]:
    """This process's grandchildren (Ray workers of its in-process cluster) whose title starts with `prefix`."""
    parents: dict[int, int] = {}
    titles: dict[int, str] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            titles[int(entry.name)] = (entry / "cmdline").read_bytes().split(b"\0")[0].decode(errors="replace")
        except OSError:
            continue
        parents[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
    me = os.getpid()
    return [pid for pid, title in titles.items() if title.startswith(prefix) and parents.get(parents.get(pid, 0)) == me]


class _Killer(threading.Thread):
    """SIGKILLs the first worker titled `title` once `ready()` holds; `killed` is its pid."""

    def __init__(self, title: str, ready: Callable[[], bool], settle: float = 0.0) -> None:
        super().__init__(daemon=True)
        self.title, self.ready, self.settle = title, ready, settle
        self.killed: int | None = None
        self.stopped = threading.Event()

    def run(self) -> None:
        while not self.stopped.is_set():
            found = _workers(self.title) if self.ready() else []
            if found:
                time.sleep(self.settle)
                if self.title in Path(f"/proc/{found[0]}/cmdline").read_bytes().decode(errors="replace"):
                    os.kill(found[0], signal.SIGKILL)
                    self.killed = found[0]
                    return
            time.sleep(0.02)


class _CountingFolder(RunFolder):
    """The run folder, counting how often each document's outcome is saved."""

    def __init__(self, url: str) -> None:
        super().__init__(url)
        self.saves: Counter[str] = Counter()

    def save(self, doc_id: str, record: dict[str, Any]) -> None:
        self.saves[doc_id] += 1
        super().save(doc_id, record)


def _verdicts(folder: Path) -> list[str]:
    rows = pq.read_table(folder / "field_matching" / "verdicts.parquet").to_pylist()
    return sorted(json.dumps(row, sort_keys=True, default=str) for row in rows)


def _scores(folder: Path) -> dict[str, dict[str, Any]]:
    lines = (folder / "field_matching" / "scores.jsonl").read_text().splitlines()
    return {line["id"]: line for line in map(json.loads, lines)}


def test_an_actor_killed_mid_predict_is_replaced_and_the_run_ends_as_an_undisturbed_one(
    ray_cluster, tmp_path: Path
) -> None:
    documents = 24
    dataset = _dataset(tmp_path / "data", [3] * documents)
    calls = tmp_path / "calls.log"
    changes = {
        "system.mock.latency": 0.4,
        "system.mock.misread": 0.3,
        "system.mock.calls_log": str(calls),
        "workers": 4,
        "ray.actors": 2,
    }
    undisturbed = engine.execute(engine.plan_run(mock_config(changes, dataset), str(tmp_path / "calm")))
    calls.unlink()

    plan = engine.plan_run(mock_config(changes, dataset), str(tmp_path / "killed"))
    folder = _CountingFolder(plan.folder.url)
    records = Path(folder.url) / "records"
    killer = _Killer("ray::SystemActor", lambda: records.is_dir() and len(list(records.iterdir())) >= 4)
    killer.start()
    try:
        result = engine.execute(dataclasses.replace(plan, folder=folder))
    finally:
        killer.stopped.set()
        killer.join()

    assert killer.killed is not None
    assert sorted(folder.saves) == sorted(_scores(Path(folder.url))) and set(folder.saves.values()) == {1}
    asked = Counter(line.split("\t")[0] for line in calls.read_text().splitlines())
    assert set(asked) == set(folder.saves)
    again = [doc_id for doc_id, count in asked.items() if count > 1]
    assert len(again) <= 2 and max(asked.values()) <= 2  # only the calls in flight on the killed actor
    calm = tmp_path / "calm" / undisturbed.report["run"]
    assert _scores(Path(folder.url)) == _scores(calm)
    summary, calm_summary = result.report["scorers"]["field_matching"], undisturbed.report["scorers"]["field_matching"]
    assert _comparable(summary) == _comparable(calm_summary)


def _comparable(summary: dict) -> dict:
    """A summary without what differs between two gradings of the same answers: the run's name and
    when it was graded."""
    return summary | {"run": None, "provenance": summary["provenance"] | {"graded_at": None}}


def test_a_grading_task_killed_mid_grade_is_retried_and_scores_the_same(ray_cluster, tmp_path: Path) -> None:
    dataset = _dataset(tmp_path / "data", [20_000, 5, 5, 5])  # the large one takes over a second to score
    calm = tmp_path / "calm"
    (calm / "predictions").mkdir(parents=True)
    for gold in (dataset / "gold").iterdir():
        answer = json.loads(gold.read_text())
        answer["items"] = answer["items"][::2]
        (calm / "predictions" / gold.name).write_text(json.dumps(answer))
    killed = tmp_path / "killed"
    shutil.copytree(calm, killed)
    engine.grade_folder(str(calm), dataset=str(dataset))

    killer = _Killer("ray::_grade_task", lambda: True, settle=0.3)
    killer.start()
    try:
        engine.grade_folder(str(killed), dataset=str(dataset))
    finally:
        killer.stopped.set()
        killer.join()

    assert killer.killed is not None
    assert _scores(killed) == _scores(calm)
    assert _verdicts(killed) == _verdicts(calm)
