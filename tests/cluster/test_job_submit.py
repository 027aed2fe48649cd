"""`make bench` with RAY_ADDRESS set, on the real 2-node cluster: `scripts/submit.py` hands `oeb run` to
the head's Jobs API with the dataset and the run folder on S3 (moto), and the nodes, started with
their own credentials but no other AWS setting, get the storage settings (endpoint, region) from the
job's runtime env only, and no credential from it. Then the archived run is
regraded from S3 after one gold file changed: only that document is scored again.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from fixtures.datasets import upload

from oeb import storage
from oeb.dataset import SAMPLE_DATASET, open_dataset
from oeb.run.grade.regrade import find_runs

pytestmark = pytest.mark.cluster

REPO = Path(__file__).resolve().parents[2]


def _oeb_job(two_nodes, dataset: str, out: str) -> str:
    """Submit the mock config as `make bench` does and wait for it; the job's submission id."""
    gold = Path(SAMPLE_DATASET) / "gold"  # mock answers from a local gold folder (it cannot read s3://)
    # Answers come two at a time, 0.8 s apart: longer than small documents wait for company
    # (scheduler.HOLD_SECONDS), so each pair is a grading task of its own, about seven tasks to
    # spread over the nodes (answers 0.2 s apart made about five, four of them on one node, and once
    # in a CI run all of them).
    sets = [f"dataset={dataset}", f"system.mock.gold={gold}", "workers=2", "ray.actors=2", "system.mock.latency=0.8",
            "ray.rate_limit.requests_per_second=null", "ray.rate_limit.max_in_flight=0"]  # fmt: skip
    command = [sys.executable, "scripts/submit.py", "--config", "oeb/examples/mock.yaml", "--out", out,
               "--address", two_nodes.dashboard, "--python", sys.executable]  # fmt: skip
    for assignment in sets:
        command += ["--set", assignment]
    done = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:] + done.stdout[-3000:]
    assert "12 documents scored, 0 of them from the cache" in done.stdout  # the job's log, followed
    return re.search(r"job (raysubmit_\w+)", done.stderr).group(1)


def _placement(dashboard: str, job_id: str) -> tuple[set[str], set[str]]:
    """The nodes the job's system actors and grading tasks ran on (Ray's state API on the head)."""
    from ray.util.state import list_actors, list_tasks

    deadline = time.monotonic() + 30
    while True:  # task events reach the head a little after the tasks end
        actors = list_actors(address=dashboard, filters=[("job_id", "=", job_id)], detail=True)
        tasks = list_tasks(address=dashboard, filters=[("job_id", "=", job_id), ("name", "=", "_grade_task")],
                           detail=True)  # fmt: skip
        actor_nodes = {actor.node_id for actor in actors if actor.class_name == "SystemActor"}
        task_nodes = {task.node_id for task in tasks if task.node_id}
        if (len(actor_nodes) == 2 and len(task_nodes) == 2) or time.monotonic() > deadline:
            return actor_nodes, task_nodes
        time.sleep(1)


def _changed(value):
    """The gold with its first text value changed."""
    if isinstance(value, str):
        return value + " (changed)"
    if isinstance(value, dict):
        for key, item in value.items():
            if (changed := _changed(item)) != item:
                return {**value, key: changed}
    if isinstance(value, list):
        for index, item in enumerate(value):
            if (changed := _changed(item)) != item:
                return [*value[:index], changed, *value[index + 1 :]]
    return value


def test_a_submitted_run_uses_both_nodes_and_a_regrade_scores_only_the_changed_gold(two_nodes, s3_env) -> None:
    from ray.job_submission import JobSubmissionClient

    prefix = f"s3://oeb-tests/cluster-{uuid.uuid4().hex[:8]}"
    dataset = upload(Path(SAMPLE_DATASET), f"{prefix}/data")
    out = f"{prefix}/runs"
    submission = _oeb_job(two_nodes, dataset, out)

    job_id = JobSubmissionClient(two_nodes.dashboard).get_job_info(submission).job_id
    actor_nodes, task_nodes = _placement(two_nodes.dashboard, job_id)
    assert len(actor_nodes) == 2, actor_nodes
    assert len(task_nodes) == 2, task_nodes
    [run] = find_runs(out)
    summary = storage.read_json(storage.join(run, "field_matching", "summary.json"))
    assert summary["scored"]["rows"] == 12 and summary["failed"] == 0

    row = open_dataset(dataset).rows[0]
    gold_url = storage.join(dataset, row.gt_path)
    gold = storage.read_json(gold_url)
    storage.write_json(gold_url, _changed(gold))
    cache_url = storage.join(run, "field_matching", "cache", f"{row.doc_id}.json")
    before = storage.read_json(cache_url)["key"]

    command = [sys.executable, "-m", "oeb", "grade", f"{out}/", "--address", two_nodes.address]
    regraded = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=180)
    assert regraded.returncode == 0, regraded.stderr[-3000:]
    assert "12 documents scored, 11 of them from the cache" in regraded.stderr
    assert "leaderboard" in regraded.stderr
    assert [report["run"] for report in json.loads(regraded.stdout)["runs"]] == [run.rsplit("/", 1)[-1]]
    assert storage.read_json(cache_url)["key"] != before
