"""Generated tables for the solvers of large blocks, and scipy's answers on their whole matrix."""

from __future__ import annotations

import random

import numpy as np
from hypothesis import assume
from hypothesis import strategies as st
from scipy import sparse
from scipy.optimize import linear_sum_assignment
from scipy.sparse.csgraph import min_weight_full_bipartite_matching

from oeb.scoring._blocks import Block, NestedArrays, PricedBlock
from oeb.scoring._weights import Columns

# What the solvers' property tests draw: how noisy a prediction is, the cardinality of each column
# besides the id (1: every row equal there), and the scale of a pair's weight.
NOISES = st.sampled_from([0.0, 0.05, 0.2, 0.5])
CARDINALITIES = st.lists(st.sampled_from([1, 2, 3, 5, 40, 1000]), min_size=1, max_size=4)
SCALES = st.sampled_from([7, 100, 1000])


def table(rng: random.Random, rows: int, cardinalities: list[int], *, noise: float) -> tuple[list[dict], list[dict]]:
    """Gold rows with an id and a few columns of some cardinality; a prediction that drops, misreads,
    leaves out values, duplicates and invents rows (the ties the solver must break as scipy does)."""

    def values(present: float) -> dict:
        return {
            ("k", f"c{c}"): str(rng.randrange(card)) for c, card in enumerate(cardinalities) if rng.random() < present
        }

    gold = [{("k", "id"): f"id{r}", **values(1.0)} for r in range(rows)]
    pred = []
    for row in gold:
        if rng.random() < noise:
            continue
        row = dict(row)
        if rng.random() < noise:
            row[("k", "id")] = "wrong"
        if rng.random() < noise:
            row.pop(("k", "c0"), None)
        pred.append(row)
        if rng.random() < noise:
            pred.append(dict(row))
    pred.extend({("k", "id"): f"new{r}", **values(0.7)} for r in range(int(rows * noise) + rng.randrange(3)))
    rng.shuffle(pred)
    return pred, gold


def scipy_pairs(pred: list[dict], gold: list[dict], scale: int) -> list[tuple[int, int]]:
    """The reference's sparse method read literally: `[W·(n+m+1) | I_n]` built with scipy's sparse operations and
    solved by `min_weight_full_bipartite_matching(maximize=True)`; pairs kept in the real columns."""
    matched, shared = Columns(pred, gold).counts()
    weights = sparse.csr_array(np.where(matched >= 1, matched * scale + shared, 0).astype(np.float64))
    n, m = weights.shape
    graph = sparse.hstack([weights * float(n + m + 1), sparse.identity(n, format="csr")], format="csr")
    cols = min_weight_full_bipartite_matching(graph, maximize=True)[1]
    return sorted((i, int(j)) for i, j in enumerate(cols) if j < m and weights[i, j] > 0)


def nested_lists(rng: random.Random, rows: int, cardinality: int) -> list[list[dict]]:
    """Each row's nested rows (0 to 3 of them, two values each), as named values."""
    return [
        [
            {("k", "t"): str(rng.randrange(cardinality)), ("k", "n"): str(rng.randrange(3 * cardinality))}
            for _ in range(rng.choice([0, 0, 1, 2, 3]))
        ]
        for _ in range(rows)
    ]


def block_of(rng: random.Random, rows: list[dict], cols: list[dict], scale: int, nested: int) -> PricedBlock:
    """A block of these rows; with `nested` > 0, each row also holds a nested array (values of that cardinality)."""
    arrays = []
    if nested:
        arrays.append(NestedArrays(nested_lists(rng, len(rows), nested), nested_lists(rng, len(cols), nested), scale))
    return PricedBlock(Block(Columns(rows, cols), scale), arrays)


@st.composite
def priced_blocks(draw: st.DrawFn, *, smaller_side_first: bool) -> PricedBlock:
    """A block of a generated table against its prediction, flat or with nested arrays: the smaller
    side as its rows if `smaller_side_first` (as scipy takes a dense block), else either side."""
    rng = random.Random(draw(st.integers(0, 10**6)))
    pred, gold = table(rng, draw(st.integers(1, 60)), draw(CARDINALITIES), noise=draw(NOISES))
    if smaller_side_first:
        rows, cols = sorted((pred, gold), key=len)
        assume(rows)
    else:
        rows, cols = (gold, pred) if draw(st.booleans()) else (pred, gold)
    return block_of(rng, rows, cols, draw(SCALES), draw(st.sampled_from([0, 1, 2, 5])))


def scipy_dense_pairs(weights: np.ndarray) -> list[tuple[int, int]]:
    """`linear_sum_assignment(-W)` as the reference calls it (rows the smaller side)."""
    rows, cols = linear_sum_assignment(-weights.astype(np.float64))
    return list(zip(rows.tolist(), cols.tolist(), strict=True))
