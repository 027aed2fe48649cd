"""Scoring frees what it built as it returns: nothing is left for Python's cycle collector.

A reference cycle anywhere in the scorer's structures (two closures calling each other, a row
pointing back at its parent) keeps every leaf of a document alive until the collector runs, and
that collection then lands in the middle of the next caller's work: on a 9,000-row table it was a
fifth of the time of a scoring. One collection checks many scorings at once; a failure names the
first case that leaves a cycle behind.
"""

from __future__ import annotations

import gc
import random
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import reference_cases as rc
from tables import nested_lists, table

import oeb
from oeb.scoring import _nested, _solving, _sparse_solver
from tests.scoring.conftest import read_jsonl

EXAMPLES, CORPUS = read_jsonl("scoring_examples.jsonl"), read_jsonl("reference_random.jsonl")
CASES: list[dict[str, Any]] = EXAMPLES + CORPUS[::4]
# What the sweeps score: the examples and a quarter of the corpus (slow), or a sample of both.
SWEEPS = [
    pytest.param(EXAMPLES[::4] + CORPUS[::40], id="sample"),
    pytest.param(CASES, id="quarter", marks=pytest.mark.slow),
]


def _large_tables() -> list[dict[str, Any]]:
    rng = random.Random(7)
    found = []
    for rows, nested in ((300, False), (120, True)):
        pred, gold = table(rng, rows, [3, 40, 1000], noise=0.2)
        if nested:
            for side in (pred, gold):
                for row, lines in zip(side, nested_lists(rng, len(side), 5), strict=True):
                    row["lines"] = lines
        found.append({"name": f"table_{rows}", "schema": {"type": "object"}, "gold": {"t": gold}, "pred": {"t": pred}})
    return found


def _score(case: dict[str, Any]) -> None:
    with suppress(oeb.errors.OebError):
        oeb.score(case["pred"], case["gold"], case["schema"], verdicts=True, **rc.score_kwargs(case.get("options")))


@contextmanager
def _collector_off() -> Iterator[None]:
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def _left_for_the_collector(
    cases: list[dict[str, Any]], score: Callable[[dict[str, Any]], None] = _score
) -> str | None:
    """The name of the first case whose scoring leaves unreachable cycles, or None. With the
    collector off, everything made since the last collection stays in its youngest generation:
    collecting that one alone finds any cycle the scorings left, without a walk over the heap."""
    with _collector_off():
        for case in cases:
            score(case)
        if gc.collect(0) == 0:
            return None
        for case in cases:
            score(case)
            if gc.collect(0):
                return case["name"]
    return "some case, but not when scored alone"


@pytest.mark.parametrize("cases", SWEEPS)
def test_scoring_leaves_no_cycles(cases: list[dict[str, Any]]) -> None:
    assert _left_for_the_collector(cases + _large_tables()) is None


@pytest.mark.parametrize("cases", SWEEPS)
def test_the_solvers_for_large_blocks_leave_no_cycles(
    monkeypatch: pytest.MonkeyPatch, cases: list[dict[str, Any]]
) -> None:
    monkeypatch.setattr(_solving, "LAZY_FLAT_CELLS", 0)
    monkeypatch.setattr(_solving, "LAZY_NESTED_CELLS", 0)
    monkeypatch.setattr(_solving, "WHOLE_MATRIX_CELLS", 0)
    monkeypatch.setattr(_nested, "PRICED_TOGETHER_PAIRS", 1)
    assert _left_for_the_collector(cases[::3] + _large_tables()) is None
    monkeypatch.setattr(_solving, "DENSE_LIMIT", 100)
    monkeypatch.setattr(_sparse_solver, "KEPT_CELLS", 0)
    assert _left_for_the_collector(_large_tables()) is None


def test_a_cycle_is_found() -> None:
    """The check itself can fail: the case whose scoring leaves a cycle behind is named."""

    def leaky(case: dict[str, Any]) -> None:
        _score(case)
        if case["name"] == "leaks":
            cycle: list[Any] = []
            cycle.append(cycle)

    cases = [*CASES[:3], {**CASES[3], "name": "leaks"}, *CASES[4:6]]
    assert _left_for_the_collector(cases, leaky) == "leaks"


def test_the_cycle_collector_is_paused_during_a_scoring_and_left_as_it_was() -> None:
    running: list[bool] = []

    def absent(value: Any) -> bool:  # called for every value while the document is flattened
        running.append(gc.isenabled())
        return value is None

    assert gc.isenabled()
    oeb.score({"a": 1, "b": [2, 3]}, {"a": 1}, {"type": "object"}, absent=absent)
    assert running and not any(running)
    assert gc.isenabled()
    with _collector_off():
        oeb.score({"a": 1}, {"a": 1}, {"type": "object"})
        assert not gc.isenabled()
