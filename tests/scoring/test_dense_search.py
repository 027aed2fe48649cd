"""The dense solver's search keeps the columns tied at the lowest distance between steps instead of
scanning every column; on matrices made of ties (few distinct weights, rows listed, bounded or
priced in full in any mix) its pairs must still be scipy's on the whole matrix."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
from hypothesis import strategies as st

from oeb.scoring import _dense_solver

sys.path.insert(0, str(Path(__file__).resolve().parent))

from budgets import property_test
from tables import scipy_dense_pairs


class MatrixBlock:
    """A block given by its weight matrix: the `listed` pairs as the rare ones, and for every other
    pair of a row a bound `slack` above the most they weigh (what `PricedBlock` gives the solver)."""

    def __init__(self, weights: np.ndarray, listed: np.ndarray, slack: int) -> None:
        self.matrix = weights
        self.n, self.m = weights.shape
        self.rare_pairs = tuple(side.astype(np.int64) for side in np.nonzero(listed))
        self.bounds = np.where(listed, 0, weights).max(axis=1) + slack

    def weights(self, i: np.ndarray, j: np.ndarray) -> np.ndarray:
        return self.matrix[i, j]

    def row_weights(self, rows: np.ndarray) -> np.ndarray:
        return self.matrix[rows]


@property_test(
    400,
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(1, 30),
    extra=st.integers(0, 6),
    values=st.sampled_from([2, 3, 5]),
    listed_share=st.sampled_from([0.0, 0.2, 0.6, 1.0]),
    slack=st.sampled_from([0, 1, 50]),
)
def test_the_pairs_are_scipys_on_matrices_of_ties(
    seed: int, n: int, extra: int, values: int, listed_share: float, slack: int
) -> None:
    rng = np.random.default_rng(seed)
    weights = rng.integers(0, values, size=(n, n + extra)) * 10
    block = MatrixBlock(weights, rng.random(weights.shape) < listed_share, slack)
    assert _dense_solver.dense_pairing(block) == scipy_dense_pairs(weights)
