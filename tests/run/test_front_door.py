"""`oeb.run` is a front door: its names load on first use, and importing it imports neither Ray nor
the grading stack and changes no environment variable."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import oeb.run
from oeb.run import engine
from oeb.run.grade import regrade

CHECK = """
import json, os, sys
before = dict(os.environ)
import oeb.run, oeb.run.plan.config
print(json.dumps({"ray": "ray" in sys.modules, "engine": "oeb.run.engine" in sys.modules,
                  "env": sorted(set(os.environ.items()) ^ set(before.items()))}))
"""


def test_importing_the_front_door_loads_nothing_heavy_and_sets_nothing() -> None:
    found = json.loads(subprocess.run([sys.executable, "-c", CHECK], capture_output=True, check=True).stdout)
    assert found == {"ray": False, "engine": False, "env": []}


DRIVER = """
import json, sys
import oeb, oeb.report, oeb.run.engine, oeb.cli.run, oeb.cli.resume, oeb.cli.grade, oeb.cli.report, oeb.cli.compare
heavy = sorted(name for name in ("scipy", "ftfy", "jsonschema") if name in sys.modules)
import oeb.scoring._score  # the module first: the package's `score` must still be the function
from oeb.scoring import score
from oeb.report import render_html
print(json.dumps({"heavy": heavy, "score": [oeb.score is score, callable(score)], "html": render_html.__module__}))
"""


def test_a_runs_driver_and_the_reports_load_neither_the_solvers_nor_the_audit() -> None:
    """What plans, asks and reads verdicts does not load scipy (0.6 s) or the HTML report's gold audit
    (ftfy, jsonschema): they are loaded on first use."""
    found = json.loads(subprocess.run([sys.executable, "-c", DRIVER], capture_output=True, check=True).stdout)
    assert found == {"heavy": [], "score": [True, True], "html": "oeb.report.html"}


def test_its_names_are_the_engines() -> None:
    assert oeb.run.plan_runs is engine.plan_runs and oeb.run.execute_all is engine.execute_all
    assert oeb.run.grade_folder is regrade.grade_folder
    assert set(oeb.run.__all__) <= set(dir(engine)) | {"grade_folder"}
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        oeb.run.nothing  # noqa: B018
