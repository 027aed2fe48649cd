"""Blocks past the dense limit: the reference's sparse solver, run without its matrix, returns the
pairs scipy returns on the whole matrix, ties included; huge nested blocks are paired greedily."""

from __future__ import annotations

import random
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import assume
from hypothesis import strategies as st

import oeb
import oeb.scoring._flatten
from oeb.scoring import _pairing, _solving, _sparse_solver
from oeb.scoring._blocks import Block
from oeb.scoring._sparse_solver import sparse_pairing
from oeb.scoring._weights import Columns

sys.path.insert(0, str(Path(__file__).resolve().parent))

from budgets import property_test
from tables import CARDINALITIES, NOISES, SCALES, scipy_pairs, table


@property_test(
    300,
    seed=st.integers(0, 10**6),
    rows=st.integers(1, 80),
    noise=NOISES,
    cardinalities=CARDINALITIES,
    scale=SCALES,
    swap=st.booleans(),
)
def test_the_pairs_are_scipys_on_the_whole_matrix(
    seed: int, rows: int, noise: float, cardinalities: list[int], scale: int, swap: bool
) -> None:
    rng = random.Random(seed)
    pred, gold = table(rng, rows, cardinalities, noise=noise)
    if swap:  # more pred rows than gold rows, and the other way round
        pred, gold = gold, pred
    assume(pred and gold)
    assert sorted(sparse_pairing(Block(Columns(pred, gold), scale))) == scipy_pairs(pred, gold, scale)


@pytest.mark.parametrize("seed", range(6))
def test_rows_priced_at_every_scan_past_the_memory_budget_give_the_same_pairs(monkeypatch, seed: int) -> None:
    rng = random.Random(seed)
    pred, gold = table(rng, 120, [2, 5, 40], noise=0.2)
    monkeypatch.setattr(_sparse_solver, "KEPT_CELLS", 0)
    assert sorted(sparse_pairing(Block(Columns(pred, gold), 1000))) == scipy_pairs(pred, gold, 1000)


def test_rows_scanned_one_edge_at_a_time_or_with_numpy_give_the_same_pairs(monkeypatch) -> None:
    rng = random.Random(5)
    pred, gold = table(rng, 150, [2, 3, 40], noise=0.2)
    expected = scipy_pairs(pred, gold, 1000)
    for few in (0, 10**6):
        monkeypatch.setattr(_sparse_solver, "FEW_EDGES", few)
        assert sorted(sparse_pairing(Block(Columns(pred, gold), 1000))) == expected


def test_a_clean_table_is_solved_from_its_ids_alone() -> None:
    """Every row pairs with its twin through a rare value: no row is priced against every gold row."""
    rng = random.Random(3)
    pred, gold = table(rng, 300, [2, 5, 40], noise=0.0)
    edges = _sparse_solver._Edges(_sparse_solver.Block(Columns(pred, gold), 1000))
    x = _sparse_solver.lapjvsp(edges)
    assert not edges.full
    assert sorted((i, int(j)) for i, j in enumerate(x) if j < edges.m) == scipy_pairs(pred, gold, 1000)


def reference_method(solving: _solving.Solving, pi: list, gi: list) -> list[tuple[int, int]]:
    """What the reference does past the dense limit, on the whole matrix."""
    pricing = solving.pricing
    return scipy_pairs([pricing.priced(p)[0] for p in pi], [pricing.priced(g)[0] for g in gi], pricing.scale)


@pytest.mark.parametrize("noise", [0.0, 0.05, 0.3])
def test_score_past_the_dense_limit_is_the_reference_methods(monkeypatch, noise: float) -> None:
    """Whole documents, verdicts included, with the dense limit lowered so that the sparse path runs."""
    rng = random.Random(11)
    gold_rows = [
        {"id": f"R{r}", "flag": rng.random() < 0.5, "kind": rng.choice("abcde"), "n": rng.randrange(30)}
        for r in range(150)
    ]
    pred_rows = [dict(r) for r in gold_rows if rng.random() >= noise]
    pred_rows += [dict(rng.choice(gold_rows)) for _ in range(int(noise * 40))]
    pred_rows += [{"id": "new", "flag": True, "kind": rng.choice("abcde")} for _ in range(int(noise * 20))]
    rng.shuffle(pred_rows)
    gold, pred = {"rows": gold_rows}, {"rows": pred_rows}
    schema = {"type": "object", "properties": {"rows": {"type": "array", "items": {"type": "object"}}}}
    monkeypatch.setattr(_solving, "DENSE_LIMIT", 100)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_solving.Solving, "_flat_huge", reference_method)
        expected = oeb.score(pred, gold, schema, verdicts=True)
    assert oeb.score(pred, gold, schema, verdicts=True) == expected


def nested_rows(rng: random.Random, count: int) -> dict:
    return {
        "rows": [
            {"k": rng.choice("abc"), "tags": [rng.choice("xyz") for _ in range(rng.randint(0, 3))]}
            for _ in range(count)
        ]
    }


def sorted_rows(document: dict, aligner: _pairing.Aligner) -> list:
    """The rows of `document["rows"]` in the order pairing sorts them (by content key)."""
    tree = oeb.scoring._flatten.flatten(
        document, oeb.scoring._flatten.SchemaView({}), oeb.states_nothing, oeb.canonical_key
    )[0]
    return sorted(tree.arrays[(("k", "rows"),)].items.values(), key=aligner.pricing.content_key)


@property_test(40, seed=st.integers(0, 10**6), tier=st.integers(1, 6), chunk=st.integers(1, 40))
def test_greedy_in_tiers_is_the_reference_greedy(seed: int, tier: int, chunk: int) -> None:
    """Past the reference's limits for nested tables it pairs greedily; oeb does so in bounded tiers."""
    rng = random.Random(seed)
    gold, pred = nested_rows(rng, rng.randint(1, 14)), nested_rows(rng, rng.randint(1, 14))
    aligner = _pairing.Aligner(scale=100, positional=frozenset())
    p_rows, g_rows = sorted_rows(pred, aligner), sorted_rows(gold, aligner)
    weights = aligner.pricing.matrix(p_rows, g_rows)
    rows, cols = np.nonzero(weights > 0)
    expected, taken_r, taken_c = [], set(), set()
    for i, j in _solving.greedy_order(rows, cols, weights[rows, cols]):
        if i not in taken_r and j not in taken_c:
            taken_r.add(i)
            taken_c.add(j)
            expected.append((i, j))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_solving, "GREEDY_TIER_CELLS", tier)
        patch.setattr(_solving, "GREEDY_CHUNK_CELLS", chunk)
        assert aligner.solving._greedy(p_rows, g_rows) == expected
