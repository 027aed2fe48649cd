"""Rows priced against every column at once (`row_weights`, what the lazy dense solver asks for when a
row reaches its floor) weigh exactly what pricing each pair on its own gives, and the best pairing of
small nested blocks is scipy's optimum, whichever shortcut (kinds of nested rows, distinct weight
vectors, padded spans, brute force, distinct row maxima) computes it."""

from __future__ import annotations

import random
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import strategies as st
from scipy.optimize import linear_sum_assignment

from oeb.scoring import _blocks, _weights
from oeb.scoring._blocks import Block, NestedArrays, PricedBlock
from oeb.scoring._weights import Columns, assignment_values

sys.path.insert(0, str(Path(__file__).resolve().parent))

from budgets import property_test

# Ways of cutting the work that must not change a number: tables or sorts for distinct keys, spans
# padded together or one width at a time, rows and pairs priced a few at a time.
VARIANTS = [
    {},
    {"DISTINCT_TABLE_SIZE": 0},
    {"NESTED_PADDED_WIDTH": 1},
    {"NESTED_PADDED_WIDTH": 6, "NESTED_CHUNK_CELLS": 1, "PRICE_CHUNK_CELLS": 1},
]


def named_rows(rng: random.Random, count: int, columns: int, cardinality: int, present: float) -> list[dict]:
    """Rows of named values, some missing, from few distinct keys (duplicates and ties everywhere)."""
    return [
        {("k", f"c{c}"): str(rng.randrange(cardinality)) for c in range(columns) if rng.random() < present}
        for _ in range(count)
    ]


def nested_rows(rng: random.Random, count: int, cardinality: int, longest: int) -> list[list[dict]]:
    """Each row's nested rows: none (often), or up to `longest` of them."""
    return [named_rows(rng, rng.choice([0, 0, rng.randint(1, longest)]), 2, cardinality, 0.85) for _ in range(count)]


def pairwise(block: PricedBlock, rows: np.ndarray) -> np.ndarray:
    """`weights` of every pair of these rows with every column, one pair at a time."""
    i, j = np.repeat(rows, block.m), np.tile(np.arange(block.m), len(rows))
    return block.weights(i, j).reshape(len(rows), block.m)


@property_test(
    300,
    seed=st.integers(0, 10**6),
    n=st.integers(1, 14),
    m=st.integers(0, 14),
    columns=st.integers(0, 4),
    cardinality=st.sampled_from([1, 2, 3, 8]),
    nested=st.integers(0, 2),
    longest=st.sampled_from([2, 4, 7]),
    scale=st.sampled_from([1, 3, 7, 100]),
    variant=st.sampled_from(VARIANTS),
)
def test_rows_priced_in_full_weigh_what_each_pair_weighs(
    seed: int,
    n: int,
    m: int,
    columns: int,
    cardinality: int,
    nested: int,
    longest: int,
    scale: int,
    variant: dict[str, int],
) -> None:
    rng = random.Random(seed)
    flat = Block(
        Columns(named_rows(rng, n, columns, cardinality, 0.8), named_rows(rng, m, columns, cardinality, 0.8)), scale
    )
    arrays = [
        NestedArrays(nested_rows(rng, n, cardinality, longest), nested_rows(rng, m, cardinality, longest), scale)
        for _ in range(nested)
    ]
    block = PricedBlock(flat, arrays)
    every = np.arange(n)
    some = np.array([rng.randrange(n) for _ in range(rng.randint(1, 3))])  # a few rows, repeats included
    with pytest.MonkeyPatch.context() as patch:
        for name, value in variant.items():
            patch.setattr(_blocks, name, value)
        for rows in (every, some):
            got = block.row_weights(rows)
            assert got.dtype == np.int64
            assert np.array_equal(got, pairwise(block, rows))


def scipy_values(blocks_: np.ndarray) -> list[int]:
    values = []
    for block in blocks_:
        r, c = linear_sum_assignment(block, maximize=True)
        values.append(int(block[r, c].sum()))
    return values


@property_test(
    200,
    seed=st.integers(0, 10**6),
    k=st.integers(1, 5),
    extra=st.integers(0, 4),
    count=st.sampled_from([0, 1, 7, 900]),
    top=st.sampled_from([1, 2, 5, 1000]),
    zeros=st.sampled_from([0.0, 0.5]),
)
def test_assignment_values_are_scipys_optimum(
    seed: int, k: int, extra: int, count: int, top: int, zeros: float
) -> None:
    """Ties and zeros everywhere; many blocks take the distinct-maxima test first, wide ones scipy."""
    rng = np.random.default_rng(seed)
    found = rng.integers(0, top + 1, size=(count, k, k + extra))
    found[rng.random(found.shape) < zeros] = 0
    assert assignment_values(found).tolist() == scipy_values(found)


def test_blocks_past_the_brute_force_are_solved_by_scipy() -> None:
    rng = np.random.default_rng(3)
    found = rng.integers(0, 3, size=(40, 4, 9))  # 3,024 assignments each: more than MAX_PERMUTATIONS
    assert _weights._permutation_count(9, 4) > _weights.MAX_PERMUTATIONS
    assert assignment_values(found).tolist() == scipy_values(found)


def test_rows_of_a_table_wider_than_one_integer_key() -> None:
    """70 columns: the sets of columns rows have no longer fit one integer key and are told apart otherwise."""
    rng = random.Random(5)
    block = PricedBlock(Block(Columns(named_rows(rng, 6, 70, 2, 0.5), named_rows(rng, 9, 70, 2, 0.5)), 100), [])
    rows = np.arange(6)
    assert np.array_equal(block.row_weights(rows), pairwise(block, rows))
