"""Blocks past the dense limit: the proved pairing is the reference solver's, or at least as good."""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import oeb
import oeb.scoring.document
from oeb.scoring import pairing
from oeb.scoring.certified import certified_pairing
from oeb.scoring.weights import Columns

SCALE = 1_000


def table(rng: random.Random, rows: int, cardinalities: list[int], *, noise: float) -> tuple[list[dict], list[dict]]:
    """Gold rows with an id and a few low-cardinality columns; a prediction that drops, misreads and invents."""
    gold = [
        {("k", "id"): f"id{r}", **{("k", f"c{c}"): str(rng.randrange(card)) for c, card in enumerate(cardinalities)}}
        for r in range(rows)
    ]
    pred = []
    for row in gold:
        if rng.random() < noise:
            continue
        row = dict(row)
        if rng.random() < noise:
            row[("k", "id")] = "wrong"
        pred.append(row)
    for r in range(int(rows * noise)):
        pred.append({("k", "id"): f"new{r}", ("k", "c0"): "0"})
    rng.shuffle(pred)
    return pred, gold


def weight_matrix(pred: list[dict], gold: list[dict]) -> np.ndarray:
    matched, shared = Columns(pred, gold).counts()
    return np.where(matched >= 1, matched * SCALE + shared, 0).astype(np.float64)


def reference_pairs(pred: list[dict], gold: list[dict]) -> list[tuple[int, int]]:
    """The reference's sparse solving of the block, as oeb runs it below its memory limit."""
    return sorted(pairing._sparse(*Columns(pred, gold).counts(), SCALE))


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10**6), rows=st.integers(1, 40), noise=st.sampled_from([0.0, 0.1, 0.3]))
def test_sparse_solving_builds_the_matrix_section_5_5_describes(seed: int, rows: int, noise: float) -> None:
    """`[W·(n+m+1) | I_n]` from scipy's own sparse operations, solved: the same pairs, ties included."""
    from scipy import sparse
    from scipy.sparse.csgraph import min_weight_full_bipartite_matching

    rng = random.Random(seed)
    pred, gold = table(rng, rows, [2, 3], noise=noise)
    assume(pred)  # an empty side is never solved
    weights = sparse.csr_array(weight_matrix(pred, gold))
    n, m = weights.shape
    graph = sparse.hstack([weights * float(n + m + 1), sparse.identity(n, format="csr")], format="csr")
    cols = min_weight_full_bipartite_matching(graph, maximize=True)[1]
    expected = sorted((i, int(j)) for i, j in enumerate(cols) if j < m and weights[i, j] > 0)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(pairing, "SPARSE_BUILD_CELLS", rng.choice([1, 7, 10**6]))  # one row or several at a time
        assert reference_pairs(pred, gold) == expected


def total(weights: np.ndarray, pairs: list[tuple[int, int]]) -> float:
    return float(sum(weights[i, j] for i, j in pairs))


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10**6), rows=st.integers(5, 60), noise=st.sampled_from([0.0, 0.02, 0.1, 0.3]))
def test_the_pairing_is_optimal_and_certified_ones_are_the_solvers(seed: int, rows: int, noise: float) -> None:
    rng = random.Random(seed)
    pred, gold = table(rng, rows, [2, 5, rng.choice([3, 40])], noise=noise)
    found = certified_pairing(Columns(pred, gold), SCALE)
    assert found.optimal
    weights = weight_matrix(pred, gold)
    expected = reference_pairs(pred, gold)
    assert total(weights, found.pairs) == total(weights, expected)
    assert all(weights[i, j] > 0 for i, j in found.pairs)
    if found.certified:
        assert sorted(found.pairs) == expected


def test_clean_tables_are_certified() -> None:
    rng = random.Random(3)
    pred, gold = table(rng, 300, [2, 5, 40], noise=0.0)
    found = certified_pairing(Columns(pred, gold), SCALE)
    assert found.optimal and found.certified


def test_exact_duplicates_are_not_certified() -> None:
    gold = [{("k", "id"): "a", ("k", "x"): "1"}, {("k", "id"): "b", ("k", "x"): "2"}]
    pred = [gold[0], dict(gold[0]), gold[1]]
    found = certified_pairing(Columns(pred, gold), SCALE)
    assert found.optimal and not found.certified


@pytest.mark.parametrize("noise", [0.0, 0.05])
def test_score_past_the_dense_limit_agrees_with_the_reference_method(monkeypatch, noise: float) -> None:
    rng = random.Random(11)
    gold_rows = [
        {"id": f"R{r}", "flag": rng.random() < 0.5, "kind": rng.choice("abcde"), "n": rng.randrange(30)}
        for r in range(150)
    ]
    pred_rows = [dict(r) for r in gold_rows if rng.random() >= noise]
    rng.shuffle(pred_rows)
    gold, pred = {"rows": gold_rows}, {"rows": pred_rows}
    schema = {"type": "object", "properties": {"rows": {"type": "array", "items": {"type": "object"}}}}
    expected = oeb.score(pred, gold, schema, verdicts=True)
    monkeypatch.setattr(pairing, "DENSE_LIMIT", 100)
    monkeypatch.setattr(pairing, "SPARSE_SOLVER_CELLS", 100)
    assert oeb.score(pred, gold, schema, verdicts=True) == expected


def nested_rows(rng: random.Random, count: int) -> dict:
    return {
        "rows": [
            {"k": rng.choice("abc"), "tags": [rng.choice("xyz") for _ in range(rng.randint(0, 3))]}
            for _ in range(count)
        ]
    }


def sorted_rows(document: dict, aligner: pairing.Aligner) -> list:
    """The rows of `document["rows"]` in the order pairing sorts them (by content key)."""
    tree = oeb.scoring.document.flatten(document, {}, oeb.states_nothing, oeb.canonical_key)[0]
    return sorted(tree.arrays[(("k", "rows"),)].rows.values(), key=aligner.content_key)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10**6), tier=st.integers(1, 6), chunk=st.integers(1, 40))
def test_greedy_in_tiers_is_the_reference_greedy(seed: int, tier: int, chunk: int) -> None:
    """Past the reference's limits for nested tables it pairs greedily; oeb does so in bounded tiers."""
    rng = random.Random(seed)
    gold, pred = nested_rows(rng, rng.randint(1, 14)), nested_rows(rng, rng.randint(1, 14))
    aligner = pairing.Aligner(scale=100, positional=frozenset())
    p_rows, g_rows = sorted_rows(pred, aligner), sorted_rows(gold, aligner)
    weights = aligner._weights(p_rows, g_rows)
    rows, cols = np.nonzero(weights > 0)
    expected, taken_r, taken_c = [], set(), set()
    for i, j in pairing._greedy_order(rows, cols, weights[rows, cols]):
        if i not in taken_r and j not in taken_c:
            taken_r.add(i)
            taken_c.add(j)
            expected.append((i, j))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(pairing, "GREEDY_TIER_CELLS", tier)
        patch.setattr(pairing, "GREEDY_CHUNK_CELLS", chunk)
        assert aligner._greedy(p_rows, g_rows) == expected
