"""How much of each long check the fast subset runs (`make check`), and the rest marked slow.

The fast subset must stay short (docs: CONTRIBUTING.md), yet every property keeps a cheap
representative there: a property runs with `FEW` examples unmarked and with all of its examples
marked `slow` (`make test` and CI run both); a sweep over the reference corpus keeps every
`SAMPLED`th case and the pinned disagreements unmarked.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis.strategies import SearchStrategy

# Examples a property draws in the fast subset.
FEW = 15
# One corpus case in this many runs in the fast subset (the found_* ones always).
SAMPLED = 10
# Corpus cases larger than this (characters of JSON: medium tables) run only in the slow sweep.
LARGE_CASE = 20_000


def property_test(count: int, /, **strategies: SearchStrategy[Any]) -> Callable[[Callable[..., None]], Any]:
    """A hypothesis property over `strategies`, as two tests: `[few]` draws `FEW` examples, `[all]`
    (marked slow) draws `count`."""

    def decorate(prop: Callable[..., None]) -> Any:
        def test(examples: int) -> None:
            checked = given(**strategies)(prop)
            settings(max_examples=examples, deadline=None, suppress_health_check=[HealthCheck.too_slow])(checked)()

        test.__name__, test.__qualname__, test.__doc__ = prop.__name__, prop.__qualname__, prop.__doc__
        budgets = [pytest.param(min(FEW, count), id="few"), pytest.param(count, id="all", marks=pytest.mark.slow)]
        return pytest.mark.parametrize("examples", budgets)(test)

    return decorate


def corpus_params(lines: Sequence[dict[str, Any]]) -> list[Any]:
    """Corpus lines as parameters: every `SAMPLED`th small one and the pinned ones in the fast
    subset, the rest marked slow."""
    found = []
    for index, line in enumerate(lines):
        small = len(json.dumps([line["gold"], line["pred"]], default=repr)) <= LARGE_CASE
        fast = line["name"].startswith("found_") or (index % SAMPLED == 0 and small)
        found.append(pytest.param(line, id=line["name"], marks=() if fast else pytest.mark.slow))
    return found
