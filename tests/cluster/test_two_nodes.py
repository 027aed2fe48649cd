"""A run on a real 2-node cluster started with `ray start` (docs/cluster.md): the system's actors
and the grading tasks land on both nodes.

Run it alone (`pytest -m cluster -p no:xdist tests/cluster`): the in-process Ray of the other tests
would otherwise already be connected, and its loopback variable must not reach `ray start`.
"""

from __future__ import annotations

import pytest

from oeb.dataset import SAMPLE_DATASET
from oeb.run import engine
from oeb.run.plan.config import check_tree, init_tree

pytestmark = pytest.mark.cluster


def test_actors_and_grading_tasks_run_on_both_nodes(two_nodes, tmp_path) -> None:
    tree = init_tree("mock", SAMPLE_DATASET)
    tree["workers"] = 4
    tree["system"]["mock"]["latency"] = 0.2
    tree["ray"] = {
        "address": two_nodes.address,
        "actors": 2,
        "rate_limit": {"requests_per_second": None, "max_in_flight": 0},
    }
    result = engine.execute(engine.plan_run(check_tree(tree, where="test"), str(tmp_path)))
    assert len(result.predicted["nodes"]) == 2
    assert len(result.graded_on) == 2
    assert result.report["scorers"]["field_matching"]["headline"] == 1.0
