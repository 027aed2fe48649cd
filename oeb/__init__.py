"""oeb: a benchmark harness for document-extraction systems."""

from oeb.scoring import (
    RESULTS,
    Explanation,
    Step,
    Verdict,
    canonical_key,
    explain_value,
    score,
    show_address,
    states_nothing,
)

__version__ = "0.1.0"

__all__ = [
    "RESULTS",
    "Explanation",
    "Step",
    "Verdict",
    "__version__",
    "canonical_key",
    "explain_value",
    "score",
    "show_address",
    "states_nothing",
]
