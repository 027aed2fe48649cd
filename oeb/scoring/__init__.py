"""The field-matching scorer: pure functions over JSON values, no files, no network, no Ray.

`score` is its front door; `canonical_key` and `explain_value` expose how a value is read.
"""

from oeb.scoring._flatten import states_nothing
from oeb.scoring.canonical import Explanation, Step, canonical_key, explain_value
from oeb.scoring.score import RESULTS, Verdict, score, show_address

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
