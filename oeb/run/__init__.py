"""The run engine's front door: plan a run of one or several systems, execute it, resume it, grade
a folder again (docs/running.md). Its rooms, by stage: the plan (`oeb.run.plan`), predicting
(`oeb.run.predict`), grading (`oeb.run.grade`), the run folder (`oeb.run.folder`) and the cluster
plumbing (`oeb.run.cluster`); `oeb.run.planning` checks a run and `oeb.run.engine` executes it.

    from oeb import run
    plans = run.plan_runs(["configs/mock.yaml"], "runs")
    outcome = run.execute_all(plans.plans, refused=plans.refused)

The names below are loaded when first used, so importing `oeb.run` (or one of its light modules,
such as `oeb.run.plan.config`) neither imports Ray nor the grading stack, and changes nothing.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from oeb.run.engine import Ended, Outcome, RunResult, execute, execute_all
    from oeb.run.grade.regrade import grade_folder
    from oeb.run.planning import Plan, Plans, Refused, plan_resume, plan_resumes, plan_run, plan_runs

__all__ = [
    "Ended",
    "Outcome",
    "Plan",
    "Plans",
    "Refused",
    "RunResult",
    "execute",
    "execute_all",
    "grade_folder",
    "plan_resume",
    "plan_resumes",
    "plan_run",
    "plan_runs",
]

_PLANNING = ("Plan", "Plans", "Refused", "plan_resume", "plan_resumes", "plan_run", "plan_runs")
_HOME = {"grade_folder": "oeb.run.grade.regrade"} | dict.fromkeys(_PLANNING, "oeb.run.planning")
"""Where a name of `__all__` lives when not in `oeb.run.engine`."""


def __getattr__(name: str) -> Any:
    """Load a name of `__all__` from its module on first use."""
    if name not in __all__:
        raise AttributeError(f"module 'oeb.run' has no attribute {name!r}")
    return getattr(importlib.import_module(_HOME.get(name, "oeb.run.engine")), name)
