"""Small blocks whose best pairing is the only one are paired without a solver (`unique_best`).

Its answer must be the pairs of positive weight that scipy's solver, called as the reference calls
it, keeps; when it answers None the usual path runs, so it may refuse but never be wrong. Matrices
are drawn with few distinct weights so that ties, shared maxima and empty lines are common.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
from hypothesis import strategies as st

from oeb.scoring._solving import dense_matrix_pairs, unique_best

sys.path.insert(0, str(Path(__file__).resolve().parent))

from budgets import property_test

SMALL = st.integers(1, 5).flatmap(
    lambda n: st.integers(1, 5).flatmap(
        lambda m: st.lists(
            st.lists(st.sampled_from([0, 0, 101, 102, 203, 304]), min_size=m, max_size=m), min_size=n, max_size=n
        )
    )
)


@property_test(500, weights=SMALL)
def test_a_unique_best_pairing_is_the_solvers(weights: list[list[int]]) -> None:
    found = unique_best(weights)
    if found is None:
        return
    matrix = np.array(weights, dtype=np.float64)
    expected = sorted((i, j) for i, j in dense_matrix_pairs(matrix) if matrix[i, j] > 0)
    assert sorted(found) == expected


def test_it_answers_where_the_maxima_are_strict_and_apart_and_refuses_otherwise() -> None:
    assert unique_best([[0, 203], [101, 0]]) == [(0, 1), (1, 0)]
    assert unique_best([[0, 0, 0], [0, 102, 101]]) == [(1, 1)]  # an empty row takes what is left
    assert unique_best([[101], [203], [0]]) == [(1, 0)]  # more rows than columns: along the columns
    assert unique_best([[101, 101]]) is None  # two heaviest cells: the solver's order decides
    assert unique_best([[203, 101], [203, 0]]) is None  # both rows want the first column
