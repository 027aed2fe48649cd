"""The dense solver's search keeps the columns tied at the lowest distance between steps instead of
scanning every column; on matrices made of ties (few distinct weights, rows listed, bounded or
priced in full in any mix) its pairs must still be scipy's on the whole matrix."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
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


def contested(rng: np.random.Generator, n: int, extra: int, hot_share: float) -> tuple[np.ndarray, np.ndarray]:
    """A matrix of ties where rows compete for a pool of columns: each row's heaviest pairs (30) are
    in the pool and listed, with a few others; every other pair of a row weighs at most 20, its
    bound exactly. Searches climb past the heaviest level and reach rows whose unlisted pairs might
    tie there: the port prices such rows in the middle of a search."""
    m = n + extra
    weights = rng.integers(0, 3, size=(n, m)) * 10
    pool = rng.choice(m, size=max(1, m // 4), replace=False)
    weights[:, pool] = np.where(rng.random((n, len(pool))) < hot_share, 30, weights[:, pool])
    return weights, (weights == 30) | (rng.random(weights.shape) < 0.1)


@property_test(
    300,
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(5, 40),
    extra=st.integers(0, 3),
    hot_share=st.sampled_from([0.1, 0.3, 0.6]),
)
def test_a_search_that_prices_rows_midway_goes_on_as_scipy(seed: int, n: int, extra: int, hot_share: float) -> None:
    rng = np.random.default_rng(seed)
    weights, listed = contested(rng, n, extra, hot_share)
    assert _dense_solver.dense_pairing(MatrixBlock(weights, listed, 0)) == scipy_dense_pairs(weights)


def test_rows_priced_midway_change_no_pair(monkeypatch: pytest.MonkeyPatch) -> None:
    """A search that reaches rows whose unpriced pairs might tie prices them and goes on from where
    it is (it is not started again): the pairs are scipy's."""
    weights, listed = contested(np.random.default_rng(3), 40, 2, 0.3)
    priced_midway = []
    price = _dense_solver._Search._price_unsure

    def counted(search: _dense_solver._Search, lowest: float) -> None:
        priced_midway.append(lowest)
        price(search, lowest)

    monkeypatch.setattr(_dense_solver._Search, "_price_unsure", counted)
    monkeypatch.setattr(_dense_solver, "PRICED_SHARE", 1.0)
    assert _dense_solver.dense_pairing(MatrixBlock(weights, listed, 0)) == scipy_dense_pairs(weights)
    assert priced_midway
