"""Huge nested blocks paired greedily as the reference pairs them: cells by
weight, heaviest first, then row, then column, a pair when both are free. oeb takes them in that
order while pricing rows in full only when their bound could put a cell ahead; the pairs must be
those of the rule read literally on the whole matrix."""

from __future__ import annotations

import random
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import strategies as st

import oeb
from oeb.scoring import _greedy_solver, _solving
from oeb.scoring._blocks import PricedBlock

sys.path.insert(0, str(Path(__file__).resolve().parent))

import reference_cases as rc
from budgets import corpus_params, property_test
from tables import priced_blocks


def greedy_on_the_matrix(weights: np.ndarray) -> list[tuple[int, int]]:
    rows, cols = np.nonzero(weights > 0)
    taken_rows, taken_cols, pairs = set(), set(), []
    for i, j in _solving.greedy_order(rows, cols, weights[rows, cols]):
        if i not in taken_rows and j not in taken_cols:
            taken_rows.add(i)
            taken_cols.add(j)
            pairs.append((i, j))
    return pairs


@property_test(
    300,
    block=priced_blocks(smaller_side_first=False),
    batch=st.sampled_from([1, 64]),
    chunk=st.sampled_from([1, 2, 64]),
)
def test_the_pairs_are_the_greedy_rule_on_the_whole_matrix(block: PricedBlock, batch: int, chunk: int) -> None:
    expected = greedy_on_the_matrix(block.row_weights(np.arange(block.n)))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_greedy_solver, "PRICED_ROWS_PER_BATCH", batch)
        patch.setattr(_greedy_solver, "OFFER_CHUNK", chunk)
        assert _greedy_solver.greedy_pairing(block) == expected


@pytest.mark.parametrize("noise", [0.0, 0.1, 0.4])
def test_whole_documents_score_as_with_the_greedy_in_tiers(monkeypatch, noise: float) -> None:
    """Verdicts included, `approximated` and `matching_exact` too, with the reference's limits for
    nested tables lowered so that the greedy path is taken."""
    rng = random.Random(11)
    gold_rows = [
        {
            "uid": f"U{r % 90}",
            "kind": rng.choice("abc"),
            "aliases": [
                {"type": rng.choice(["aka", "fka"]), "name": rng.choice("xyzw")} for _ in range(rng.randint(0, 3))
            ],
        }
        for r in range(100)
    ]
    pred_rows = [dict(r) for r in gold_rows if rng.random() >= noise]
    pred_rows += [dict(rng.choice(gold_rows)) for _ in range(int(noise * 30))]
    rng.shuffle(pred_rows)
    gold, pred = {"rows": gold_rows}, {"rows": pred_rows}
    schema = {"type": "object"}
    monkeypatch.setattr(_solving, "DENSE_LIMIT", 100)
    monkeypatch.setattr(_solving, "NESTED_MAX_SIDE", 10)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_solving.Solving, "_priced_block", lambda self, rows, cols, nested: None)  # the greedy in tiers
        expected = oeb.score(pred, gold, schema, verdicts=True)
    assert expected["matching_exact"] is False
    assert oeb.score(pred, gold, schema, verdicts=True) == expected


SAMPLE = rc.corpus(Path(__file__).resolve().parent / "data" / "reference_random.jsonl")[::5]


@pytest.mark.parametrize("line", corpus_params(SAMPLE))
def test_corpus_cases_forced_greedy_score_as_with_the_greedy_in_tiers(monkeypatch, line: dict) -> None:
    """Every nested block of the reference corpus forced past the limits (so paired greedily)."""
    monkeypatch.setattr(_solving, "DENSE_LIMIT", 0)
    monkeypatch.setattr(_solving, "NESTED_MAX_SIDE", 0)

    def scored() -> object:
        try:
            return oeb.score(
                line["pred"], line["gold"], line["schema"], verdicts=True, **rc.score_kwargs(line.get("options"))
            )
        except oeb.errors.OebError as error:
            return type(error)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_solving.Solving, "_priced_block", lambda self, rows, cols, nested: None)
        expected = scored()
    assert scored() == expected
