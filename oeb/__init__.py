"""oeb: a benchmark harness for document-extraction systems.

The scorer's names are loaded on first use: `import oeb` (and so every `oeb` command, even
`oeb --version`) does not pay for numpy and scipy until something scores.
"""

from __future__ import annotations

import importlib.metadata
from typing import TYPE_CHECKING

from oeb._lazy import loader

if TYPE_CHECKING:
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


def _version() -> str:
    """The installed package's version (pyproject.toml, the one source); a tree that is not
    installed says so."""
    try:
        return importlib.metadata.version("oeb")
    except importlib.metadata.PackageNotFoundError:
        return "0+unknown"


__version__ = _version()

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


__getattr__ = loader(__name__, dict.fromkeys(set(__all__) - {"__version__"}, "oeb.scoring"))
