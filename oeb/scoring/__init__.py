"""The field-matching scorer: pure functions over JSON values, no files, no network, no Ray.

`score` is its front door; `canonical_key` and `explain_value` expose how a value is read.

`score` is loaded on first use: it brings the pairing solvers and scipy (about 0.6 s), which a process
that only reads verdicts (a run's driver, the reports) never needs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from oeb._lazy import loader
from oeb.scoring._flatten import states_nothing
from oeb.scoring.canonical import Explanation, Step, canonical_key, explain_value
from oeb.scoring.verdict import RESULTS, Verdict, show_address

if TYPE_CHECKING:
    from oeb.scoring._score import score

__all__ = [
    "RESULTS",
    "Explanation",
    "Step",
    "Verdict",
    "canonical_key",
    "explain_value",
    "score",
    "show_address",
    "states_nothing",
]


__getattr__ = loader(__name__, {"score": "oeb.scoring._score"})
