"""Large dense blocks solved without their matrix: scipy's `linear_sum_assignment` step for step on
the pairs that can change its path. The pairs must be scipy's on the whole matrix, ties included."""

from __future__ import annotations

import random
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import strategies as st

import oeb
import oeb.scoring._flatten
from oeb.scoring import _blocks, _dense_solver, _nested, _pairing, _solving
from oeb.scoring._blocks import Block, NestedArrays, PricedBlock
from oeb.scoring._weights import Columns

sys.path.insert(0, str(Path(__file__).resolve().parent))

from budgets import property_test
from tables import priced_blocks, scipy_dense_pairs, table


@property_test(300, block=priced_blocks(smaller_side_first=True))
def test_the_pairs_are_scipys_on_the_whole_matrix(block: PricedBlock) -> None:
    weights = block.row_weights(np.arange(block.n))
    assert _dense_solver.dense_pairing(block) == scipy_dense_pairs(weights)


@property_test(100, seed=st.integers(0, 10**6), nested=st.sampled_from([0, 1, 2, 5]))
def test_pairs_are_priced_as_the_reference_prices_them(seed: int, nested: int) -> None:
    """Pairs priced one by one, rows priced against every column, and the scorer's own pricing of
    the same rows (pair by pair) agree."""
    rng = random.Random(seed)
    rows = [
        {
            "k": rng.choice("abc"),
            "n": rng.randrange(5),
            "tags": [{"t": rng.choice("xyz"), "w": rng.randrange(3)} for _ in range(rng.randint(0, 3))],
        }
        for _ in range(rng.randint(1, 12))
    ]
    other = [dict(row, n=rng.randrange(5)) for row in rows] + [{"k": "a", "tags": [{"t": "x"}]}]
    aligner = _pairing.Aligner(scale=[100, 7][nested % 2], positional=frozenset())
    p_rows = oeb.scoring._flatten.flatten(
        {"rows": rows}, oeb.scoring._flatten.SchemaView({}), oeb.states_nothing, oeb.canonical_key
    )[0]
    g_rows = oeb.scoring._flatten.flatten(
        {"rows": other}, oeb.scoring._flatten.SchemaView({}), oeb.states_nothing, oeb.canonical_key
    )[0]
    pi = list(p_rows.arrays[(("k", "rows"),)].items.values())
    gi = list(g_rows.arrays[(("k", "rows"),)].items.values())
    expected = np.array([[aligner.pricing.weight(p, g) for g in gi] for p in pi], dtype=np.int64)
    path = (("k", "tags"),)
    arrays = [
        NestedArrays(
            aligner.solving._nested_named(pi, path), aligner.solving._nested_named(gi, path), aligner.pricing.scale
        )
    ]
    flat = Block(
        Columns([aligner.pricing.priced(p)[0] for p in pi], [aligner.pricing.priced(g)[0] for g in gi]),
        aligner.pricing.scale,
    )
    block = PricedBlock(flat, arrays)
    assert (block.row_weights(np.arange(len(pi))) == expected).all()
    i, j = np.nonzero(np.ones_like(expected))
    assert (block.weights(i, j) == expected[i, j]).all()
    # The bound holds for every pair that shares no rare value.
    rare = set(zip(*(x.tolist() for x in block.rare_pairs), strict=True))
    for a, b in zip(i.tolist(), j.tolist(), strict=True):
        if (a, b) not in rare:
            assert expected[a, b] <= block.bounds[a]


def test_too_much_pricing_gives_the_block_back_to_the_matrix(monkeypatch) -> None:
    rng = random.Random(4)
    pred, gold = table(rng, 40, [2, 3], noise=0.5)
    small, large = sorted((pred, gold), key=len)
    monkeypatch.setattr(_blocks, "NEAR_PAIRS_PER_ROW", 0)  # every row's bound high: searches need pricing
    block = PricedBlock(Block(Columns(small, large), 100), [])
    monkeypatch.setattr(_dense_solver, "MIN_PRICED_ROWS", 0)
    monkeypatch.setattr(_dense_solver, "PRICED_SHARE", 0.0)
    assert _dense_solver.dense_pairing(block) is None


def _aliased_rows(noise: float) -> tuple[dict, dict, dict]:
    """A table of ids, two code columns and a nested alias array; `noise` of its rows dropped,
    duplicated or invented in the prediction."""
    rng = random.Random(7)
    gold_rows = [
        {
            "uid": f"U{r}",
            "kind": rng.choice("abc"),
            "country": rng.choice(["Cuba", "Iran", "Syria"]),
            "aliases": [
                {"type": rng.choice(["aka", "fka"]), "name": rng.choice("xyzw")} for _ in range(rng.randint(0, 3))
            ],
        }
        for r in range(120)
    ]
    pred_rows = [dict(r) for r in gold_rows if rng.random() >= noise]
    pred_rows += [dict(rng.choice(gold_rows)) for _ in range(int(noise * 30))]
    pred_rows += [
        {"uid": "new", "kind": "a", "aliases": [{"type": "aka", "name": "x"}]} for _ in range(int(noise * 20))
    ]
    rng.shuffle(pred_rows)
    schema = {"type": "object", "properties": {"rows": {"type": "array", "items": {"type": "object"}}}}
    return {"rows": pred_rows}, {"rows": gold_rows}, schema


def _scored_with_the_matrix(monkeypatch: pytest.MonkeyPatch, pred: dict, gold: dict, schema: dict) -> dict:
    """The verdicts with every block priced whole pair by pair and solved by scipy (as the reference does)."""
    with monkeypatch.context() as patched:
        patched.setattr(_solving, "LAZY_FLAT_CELLS", 10**12)
        patched.setattr(_solving, "LAZY_NESTED_CELLS", 10**12)
        patched.setattr(_nested, "PRICED_TOGETHER_PAIRS", 10**12)
        return oeb.score(pred, gold, schema, verdicts=True)


@pytest.mark.parametrize("dense_limit", [None, 1_000])
@pytest.mark.parametrize("noise", [0.0, 0.05, 0.3])
def test_whole_documents_score_as_with_the_matrix(monkeypatch, noise: float, dense_limit: int | None) -> None:
    """Verdicts included, with nested arrays, whichever way each block is solved; also past the dense
    limit (lowered), where the reference still solves blocks with nested arrays densely."""
    if dense_limit is not None:
        monkeypatch.setattr(_solving, "DENSE_LIMIT", dense_limit)
    pred, gold, schema = _aliased_rows(noise)
    expected = _scored_with_the_matrix(monkeypatch, pred, gold, schema)
    monkeypatch.setattr(_solving, "LAZY_FLAT_CELLS", 0)
    monkeypatch.setattr(_solving, "LAZY_NESTED_CELLS", 0)
    monkeypatch.setattr(_solving, "WHOLE_MATRIX_CELLS", 0)
    monkeypatch.setattr(_nested, "PRICED_TOGETHER_PAIRS", 1)
    solved: list[int] = []

    def counted(block: PricedBlock) -> list[tuple[int, int]] | None:
        solved.append(block.n * block.m)
        return _dense_solver.dense_pairing(block)

    monkeypatch.setattr(_solving, "dense_pairing", counted)
    assert oeb.score(pred, gold, schema, verdicts=True) == expected
    assert dense_limit is None or max(solved) > dense_limit, "a block past the dense limit solved by the port"


@pytest.mark.parametrize("noise", [0.05, 0.3])
def test_a_block_of_mostly_frequent_columns_priced_whole_by_rows_scores_as_with_the_matrix(monkeypatch, noise) -> None:
    """Blocks the port would take, with more code columns than id columns, priced whole by the block's
    row pricing and solved by scipy: the port is never called, and every verdict is the same."""
    pred, gold, schema = _aliased_rows(noise)
    expected = _scored_with_the_matrix(monkeypatch, pred, gold, schema)
    monkeypatch.setattr(_solving, "LAZY_NESTED_CELLS", 0)

    def refused(block: PricedBlock) -> None:
        raise AssertionError(f"the port was called on a {block.n} x {block.m} block")

    monkeypatch.setattr(_solving, "dense_pairing", refused)
    assert oeb.score(pred, gold, schema, verdicts=True) == expected
