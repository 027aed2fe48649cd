"""oeb.score against the reference's saved answers for ~1,600 random cases.

`data/reference_random.jsonl` holds seeded random scoring cases (flat and nested objects, tables
with nested arrays, ties, envelopes, sidecars, open maps, `$ref`s, `order_matters`, `absent`,
unicode and number formats, medium tables, argument errors) with the answer of the reference
scorer (omni-extract-bench 1.0.0) for each, in the line format of `scoring_examples.jsonl`. It was
made by the differential tester, which needs the reference installed:

    uv run python scripts/compare_reference.py --reference PYTHON --cases 1600 --seed 1 --max-rows 4 \\
        --max-medium-rows 120 --save-corpus tests/scoring/data/reference_random.jsonl

The first lines (`found_*`) are minimised disagreements the tester found, pinned whatever the
random cases hit; `scripts/compare_reference.py --oeb-only FILE` replays the file outside pytest.

Each case here must agree exactly: every result key in order (floats compared exactly, `int`
and `float` told apart), every verdict (address, raw values, canonical keys, result) in order,
and for an error the exception type (oeb's errors subclass `TypeError`/`ValueError`). oeb is also
held to the documented shapes (builtin types, verdicts as named tuples with tuple addresses), must
leave its arguments unchanged, and must give the same numbers with `verdicts=False`. Lines with
`reference_raises` are schemas the reference refuses only because of its `$ref` depth limit:
there oeb may raise that error too, or must give exactly the reference's answer for the same
schema with its refs inlined beforehand.
"""

from __future__ import annotations

import copy
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import reference_cases as rc
from budgets import corpus_params

import oeb
from oeb.scoring import _nested, _solving

CORPUS = Path(__file__).resolve().parent / "data" / "reference_random.jsonl"
LINES = rc.corpus(CORPUS)


def test_the_corpus_is_there() -> None:
    assert CORPUS.exists(), f"{CORPUS} is missing (see this module's docstring to make it)"
    assert len(LINES) >= 1000
    assert CORPUS.stat().st_size < 6_000_000
    names = [line["name"] for line in LINES]
    assert len(set(names)) == len(names), "case names are unique"
    for line in LINES:
        assert {"name", "rule", "schema", "gold", "pred", "expected"} <= line.keys()


@pytest.mark.parametrize("line", corpus_params(LINES))
def test_oeb_agrees_with_the_reference(line: dict[str, Any]) -> None:
    diffs = rc.replay(oeb.score, line)
    assert not diffs, f"{line['name']} ({line['rule']}):\n{rc.describe(diffs)}"


@pytest.mark.parametrize("line", corpus_params(LINES[::3]))
def test_oeb_agrees_with_the_reference_with_every_block_solved_lazily(monkeypatch, line: dict[str, Any]) -> None:
    """Every dense block, however small, through `oeb.scoring.dense_solver`, and the nested rows of
    every set of pairs priced together (both are what large documents use)."""
    monkeypatch.setattr(_solving, "LAZY_FLAT_CELLS", 0)
    monkeypatch.setattr(_solving, "LAZY_NESTED_CELLS", 0)
    monkeypatch.setattr(_solving, "WHOLE_MATRIX_CELLS", 0)
    monkeypatch.setattr(_nested, "PRICED_TOGETHER_PAIRS", 1)
    diffs = rc.replay(oeb.score, line)
    assert not diffs, f"{line['name']} ({line['rule']}):\n{rc.describe(diffs)}"


# The comparison itself must be able to fail: these tamper with a saved answer in the ways a
# wrong scorer could differ and check that each one is caught.


def _outcome(expected: dict[str, Any]) -> dict[str, Any]:
    """A candidate outcome that gives exactly `expected`."""
    if "raises" in expected:
        return {"raises": expected["raises"], "raises_mro": [expected["raises"], "Exception", "object"]}
    types = {key: type(value).__name__ for key, value in expected.items()}
    return {"result": copy.deepcopy(expected), "types": types, "problems": []}


def _sample(predicate: Any) -> dict[str, Any]:
    found = [line for line in LINES if predicate(line["expected"])]
    assert found, "the corpus has a case of this shape"
    return found[0]


def test_an_exact_copy_agrees() -> None:
    for line in LINES[:200]:
        assert rc.compare(line["expected"], rc.roundtrip(_outcome(line["expected"]))) == []


@pytest.mark.parametrize(
    ("tamper", "kind"),
    [
        (lambda r: r.__setitem__("accuracy", r["accuracy"] + 1e-15), "metric"),
        (lambda r: r.__setitem__("total", float(r["total"])), "metric"),
        (lambda r: r.__setitem__("matching_exact", 1), "metric"),
        (lambda r: r.__setitem__("skipped_open_maps", [*r["skipped_open_maps"], "x"]), "metric"),
        (lambda r: r.update({"recall": r.pop("recall")}), "result-keys"),
        (lambda r: r["verdicts"][0].__setitem__(3, str(r["verdicts"][0][3]) + "x"), "canonical-key"),
        (lambda r: r["verdicts"][0].__setitem__(5, "misread?"), "verdict-result"),
        (lambda r: r["verdicts"][0][0].append(["k", "extra"]), "verdict-address"),
        (lambda r: r["verdicts"].reverse(), "verdict-order"),
        (lambda r: r["verdicts"][0].__setitem__(1, [r["verdicts"][0][1]]), "verdict-raw"),
    ],
)
def test_a_tampered_answer_is_caught(tamper: Any, kind: str) -> None:
    line = _sample(lambda e: "verdicts" in e and len(e["verdicts"]) >= 2 and e["verdicts"][0][1] is not None)
    outcome = _outcome(line["expected"])
    tamper(outcome["result"])
    diffs = rc.compare(line["expected"], rc.roundtrip(outcome))
    assert kind in {d.kind for d in diffs}, rc.describe(diffs)


def test_a_wrong_exception_or_a_result_instead_of_one_is_caught() -> None:
    raising = _sample(lambda e: e.get("raises") == "TypeError")
    wrong = {"raises": "ValueError", "raises_mro": ["ScoreOptionError", "ValueError", "Exception"]}
    assert [d.kind for d in rc.compare(raising["expected"], wrong)] == ["exception-type"]
    subclass = {"raises": "ScoreArgumentError", "raises_mro": ["ScoreArgumentError", "TypeError", "Exception"]}
    assert rc.compare(raising["expected"], subclass) == []
    scored = _sample(lambda e: "verdicts" in e)
    assert [d.kind for d in rc.compare(raising["expected"], _outcome(scored["expected"]))] == ["reference-raises"]
    assert [d.kind for d in rc.compare(scored["expected"], wrong)] == ["candidate-raises"]


def test_non_builtin_result_types_are_caught() -> None:
    line = _sample(lambda e: "verdicts" in e)
    outcome = _outcome(line["expected"])
    outcome["types"]["approximated"] = "tuple"
    outcome["problems"] = ["accuracy: numpy.float64 0.5"]
    kinds = {d.kind for d in rc.compare(line["expected"], outcome)}
    assert {"type", "result-shape"} <= kinds
