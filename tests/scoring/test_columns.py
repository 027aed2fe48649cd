"""`Columns.counts` gives, for every pred × gold pair, the equal and the shared values of the two
rows exactly as pricing the pair alone does, whichever way a column is counted:
densely, by a join of equal codes (large blocks, rare values), rows of one shape or of many."""

from __future__ import annotations

import random
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import strategies as st

from oeb.scoring import _weights
from oeb.scoring._weights import Columns

sys.path.insert(0, str(Path(__file__).resolve().parent))

from budgets import property_test


def _pair_by_pair(pred: list[dict], gold: list[dict]) -> tuple[np.ndarray, np.ndarray]:
    matched = np.zeros((len(pred), len(gold)), dtype=np.int64)
    shared = np.zeros((len(pred), len(gold)), dtype=np.int64)
    for i, p in enumerate(pred):
        for j, g in enumerate(gold):
            both = p.keys() & g.keys()
            shared[i, j] = len(both)
            matched[i, j] = sum(p[s] == g[s] for s in both)
    return matched, shared


def _rows(rng: random.Random, count: int, cardinalities: list[int], present: float) -> list[dict]:
    rows = []
    for _ in range(count):
        row = {
            (("k", f"c{c}"),): f"v{rng.randrange(card)}"
            for c, card in enumerate(cardinalities)
            if rng.random() < present
        }
        if rng.random() < 0.2:  # another insertion order: another shape with the same suffixes
            row = dict(reversed(row.items()))
        rows.append(row)
    return rows


@property_test(
    60,
    seed=st.integers(0, 10**6),
    n=st.integers(0, 40),
    m=st.integers(0, 40),
    cardinalities=st.lists(st.sampled_from([1, 2, 5, 30, 10_000]), min_size=1, max_size=5),
    present=st.sampled_from([1.0, 0.7, 0.2]),
    small_block_cells=st.sampled_from([0, 65_536]),
)
def test_counts_are_those_of_each_pair(
    seed: int, n: int, m: int, cardinalities: list[int], present: float, small_block_cells: int
) -> None:
    rng = random.Random(seed)
    pred, gold = _rows(rng, n, cardinalities, present), _rows(rng, m, cardinalities, present)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_weights, "SMALL_BLOCK_CELLS", small_block_cells)  # 0: every sparse column joined
        matched, shared = Columns(pred, gold).counts()
    expected_matched, expected_shared = _pair_by_pair(pred, gold)
    assert (matched == expected_matched).all()
    assert (shared == expected_shared).all()
