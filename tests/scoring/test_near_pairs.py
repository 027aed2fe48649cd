"""Tables of low-cardinality codes without an id: no column is rare, so the solvers of large blocks
list the pairs equal on most frequent columns (joins on sets of them) and bound every other pair by
one value fewer. The bound must hold for every unlisted pair, and every solver must still return
scipy's pairs (or the greedy rule's) on the whole matrix, ties included, whatever the listing."""

from __future__ import annotations

import random
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import strategies as st

from oeb.scoring import _blocks, _dense_solver, _greedy_solver
from oeb.scoring._blocks import Block, PricedBlock
from oeb.scoring._sparse_solver import sparse_pairing
from oeb.scoring._weights import Columns

sys.path.insert(0, str(Path(__file__).resolve().parent))

from budgets import property_test
from tables import SCALES, block_of, scipy_dense_pairs, scipy_pairs
from test_lazy_greedy import greedy_on_the_matrix

# How many listed pairs per row the tests allow: none (no set joined), a few (only the sets of all
# or nearly all columns), every pair.
BUDGETS = st.sampled_from([0, 1, 2, 4, 16, 10**6])


def codes_table(
    rng: random.Random, rows: int, cardinalities: list[int], noise: float = 0.1
) -> tuple[list[dict], list[dict]]:
    """Rows of codes, many alike; a prediction that drops, duplicates, misreads, leaves out and invents."""

    def row(present: float) -> dict:
        return {("k", f"c{c}"): str(rng.randrange(k)) for c, k in enumerate(cardinalities) if rng.random() < present}

    gold = [row(1 - noise / 2) for _ in range(rows)]
    pred = []
    for values in gold:
        if rng.random() < noise:
            continue
        values = dict(values)
        if rng.random() < 2 * noise:
            c = rng.randrange(len(cardinalities))
            values[("k", f"c{c}")] = str(rng.randrange(cardinalities[c]))
        pred.extend([values] * (1 + (rng.random() < noise)))
    pred.extend(row(0.8) for _ in range(rng.randrange(3)))
    rng.shuffle(pred)
    return pred, gold


@st.composite
def code_tables(draw: st.DrawFn) -> tuple[list[dict], list[dict]]:
    rng = random.Random(draw(st.integers(0, 10**6)))
    cardinalities = draw(st.lists(st.sampled_from([1, 2, 3, 5, 8]), min_size=1, max_size=6))
    pred, gold = codes_table(rng, draw(st.integers(1, 60)), cardinalities, draw(st.sampled_from([0.02, 0.1, 0.3])))
    return (pred, gold) if pred else (gold, gold)


def listed_at(budget: int, block: Block) -> Block:
    """The block with its pairs listed (and its bounds set) at this budget of near pairs per row."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_blocks, "NEAR_PAIRS_PER_ROW", budget)
        block.bounds  # noqa: B018 - made and kept now, at this budget, with the listing it rests on
    return block


@property_test(200, tables=code_tables(), budget=BUDGETS, scale=SCALES)
def test_every_unlisted_pair_weighs_at_most_its_rows_bound(
    tables: tuple[list[dict], list[dict]], budget: int, scale: int
) -> None:
    block = listed_at(budget, Block(Columns(*tables), scale))
    i, j = block.rare_pairs
    weights = block.row_codes(np.arange(block.n))
    weights = np.where(weights > len(block.p_codes), block.code_values[weights], 0)
    unlisted = np.ones_like(weights, dtype=bool)
    unlisted[i, j] = False
    assert (weights <= block.bounds[:, None])[unlisted].all()


@property_test(
    200, tables=code_tables(), budget=BUDGETS, scale=SCALES, nested=st.sampled_from([0, 2]), seed=st.integers(0, 99)
)
def test_the_dense_port_returns_scipys_pairs(
    tables: tuple[list[dict], list[dict]], budget: int, scale: int, nested: int, seed: int
) -> None:
    rows, cols = sorted(tables, key=len)
    block = block_of(random.Random(seed), rows, cols, scale, nested)
    listed_at(budget, block.flat)
    assert _dense_solver.dense_pairing(block) == scipy_dense_pairs(block.row_weights(np.arange(block.n)))


@property_test(200, tables=code_tables(), budget=BUDGETS, scale=SCALES)
def test_the_sparse_port_returns_scipys_pairs(tables: tuple[list[dict], list[dict]], budget: int, scale: int) -> None:
    block = listed_at(budget, Block(Columns(*tables), scale))
    assert sorted(sparse_pairing(block)) == scipy_pairs(*tables, scale)


@property_test(100, tables=code_tables(), budget=BUDGETS, scale=SCALES)
def test_the_greedy_returns_the_rules_pairs(tables: tuple[list[dict], list[dict]], budget: int, scale: int) -> None:
    block = PricedBlock(listed_at(budget, Block(Columns(*tables), scale)), [])
    assert _greedy_solver.greedy_pairing(block) == greedy_on_the_matrix(block.row_weights(np.arange(block.n)))


def test_a_table_of_codes_is_solved_pricing_few_rows_in_full() -> None:
    """Rows alike on every code pair with each other through the listed pairs: the dense port solves a
    table of codes (no rare column) instead of handing it back to the matrix."""
    rng = random.Random(11)
    pred, gold = codes_table(rng, 600, [3, 5, 4, 6, 2, 8], noise=0.03)
    rows, cols = sorted((pred, gold), key=len)
    block = PricedBlock(Block(Columns(rows, cols), 100), [])
    assert block.flat.near_columns <= 5
    assert _dense_solver.dense_pairing(block) == scipy_dense_pairs(block.row_weights(np.arange(block.n)))
