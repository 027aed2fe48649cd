"""Which solver pairs a block of items, chosen as the reference chooses, and run.

When two pairings are equally good, which one the reference returns is decided by its solver's
path, and that decides verdicts: so a block goes to the solver the reference would use, with the
rows in the same order. Up to its dense limit the reference prices the whole matrix and solves it
with scipy's `linear_sum_assignment` (oeb: the same call on small blocks, the port in
`_dense_solver` on large ones); past it, flat blocks go to scipy's sparse LAPJVsp (the port in
`_sparse_solver`), blocks with nested arrays on both sides stay dense up to further limits and are
paired greedily beyond them (`_greedy_solver`, or in tiers of the heaviest cells).
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import linear_sum_assignment  # type: ignore[import-untyped]  # scipy ships no stubs

from oeb.scoring._blocks import Block, NestedArrays, PricedBlock
from oeb.scoring._dense_solver import dense_pairing
from oeb.scoring._greedy_solver import greedy_pairing
from oeb.scoring._pricing import Pricing
from oeb.scoring._sparse_solver import sparse_pairing
from oeb.scoring._tree import Item, Path

# The reference's solver switches. Up to DENSE_LIMIT cells it solves the weight matrix densely.
# Past it, a block without nested arrays on both sides goes to its sparse solver; one with them stays
# dense while its smaller side has at most NESTED_MAX_SIDE items and it has at most NESTED_DENSE_LIMIT
# cells (or NESTED_MIXED_LIMIT, when its pairs' equal values number at least a ninth of its cells); beyond that
# it is paired greedily and the result says so (`matching_exact` false, `approximated`).
DENSE_LIMIT = 64_000_000
NESTED_DENSE_LIMIT = 250_000_000
NESTED_MIXED_LIMIT = 500_000_000
NESTED_MAX_SIDE = 20_000
# oeb's own switch: dense blocks from this many cells (flat) or with nested arrays on both sides
# from LAZY_NESTED_CELLS are solved by the port, without their matrix. Below, building the matrix
# and calling scipy is cheaper; nested pairs cost far more to price, so the port pays sooner there.
LAZY_FLAT_CELLS = 4_000_000
LAZY_NESTED_CELLS = 2_500
# Up to this many cells, a block the port would take whose columns are mostly frequent ones (codes,
# repeated names: many rows alike, many ties) has its whole matrix priced by the block's vectorised
# row pricing and goes to scipy instead: at about a thousand rows a side that is up to three times
# cheaper than the port's searches in Python. Where rare columns (ids) are most, a row's listed
# pairs mostly decide its search at the first step and the port is cheaper; past a few million
# cells the matrix (and scipy on it) costs more than the port saves.
WHOLE_MATRIX_CELLS = 1_500_000
# The greedy in tiers (nested items holding arrays of their own, where the lazy greedy cannot price
# them) prices the free block in chunks of GREEDY_CHUNK_CELLS cells and keeps about
# GREEDY_TIER_CELLS of the heaviest cells per tier: memory stays bounded whatever the block's size.
GREEDY_CHUNK_CELLS = 8_000_000
GREEDY_TIER_CELLS = 4_000_000

IndexPairs = list[tuple[int, int]]


class Solving:
    """Solves blocks of items as the reference would; says which blocks it paired greedily."""

    def __init__(self, pricing: Pricing) -> None:
        self.pricing = pricing
        self.approximated: set[int] = set()  # the larger side of each block paired greedily

    def assign(self, pi: list[Item], gi: list[Item]) -> IndexPairs:
        """The pairs (index in pi, index in gi) the reference's solver chooses for this block."""
        n, m = len(pi), len(gi)
        cells = n * m
        asked = cells >= LAZY_NESTED_CELLS or cells > DENSE_LIMIT  # smaller blocks need not know
        pricing = self.pricing
        common_nested = pricing.nested_paths(pi) & pricing.nested_paths(gi) if asked else set()
        if cells > DENSE_LIMIT and not self._solved_densely(pi, gi, common_nested):
            if not common_nested:
                return self._flat_huge(pi, gi)
            self.approximated.add(max(n, m))
            block = self._priced_block(pi, gi, common_nested)
            if block is None:
                return self._greedy(pi, gi)
            pairs = greedy_pairing(block)
            i, j = _sides(pairs)
            pricing.remember_worth(pi, gi, i, j, block.weights(i, j))
            return pairs
        if cells >= LAZY_FLAT_CELLS or common_nested:
            found = self._lazy_dense(pi, gi, common_nested)
            if found is not None:
                return found
        return self._dense(pi, gi)

    def _solved_densely(self, pi: list[Item], gi: list[Item], common_nested: set[Path]) -> bool:
        """Whether the reference solves a block past its dense limit densely all the same: only with
        nested arrays on both sides, up to its side and cell limits."""
        n, m = len(pi), len(gi)
        if not common_nested or min(n, m) > NESTED_MAX_SIDE:
            return False
        cells = n * m
        return cells <= NESTED_DENSE_LIMIT or (
            cells <= NESTED_MIXED_LIMIT and cells * 8 <= self.pricing.positives(pi, gi) * 72
        )

    def _dense(self, pi: list[Item], gi: list[Item]) -> IndexPairs:
        """The reference's dense solving on the whole weight matrix."""
        weights = self.pricing.matrix(pi, gi)
        pairs = dense_matrix_pairs(weights)
        i, j = _sides(pairs)
        self.pricing.remember_worth(pi, gi, i, j, weights[i, j])
        return pairs

    def _greedy(self, pi: list[Item], gi: list[Item]) -> IndexPairs:
        """The reference's greedy pairing (cells by weight, then row, then column; a pair when both
        are free), without its n x m matrix: in tiers of the heaviest cells among the rows and
        columns still free, each tier found by pricing the free block in chunks."""
        n, m = len(pi), len(gi)
        free_rows = np.ones(n, dtype=bool)
        free_cols = np.ones(m, dtype=bool)
        below = np.inf
        pairs: IndexPairs = []
        while free_rows.any() and free_cols.any():
            rows, cols, weights = self._heaviest_cells(pi, gi, free_rows, free_cols, below)
            if not len(weights):
                break
            below = float(weights.min())
            for i, j in greedy_order(rows, cols, weights):
                if free_rows[i] and free_cols[j]:
                    free_rows[i] = free_cols[j] = False
                    pairs.append((i, j))
        return pairs

    def _heaviest_cells(
        self, pi: list[Item], gi: list[Item], free_rows: np.ndarray, free_cols: np.ndarray, below: float
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The cells of the free block weighing less than `below`: the heaviest of them, about
        `GREEDY_TIER_CELLS`, with every cell as heavy as the lightest one kept."""
        rows_free = np.nonzero(free_rows)[0]
        cols_free = np.nonzero(free_cols)[0]
        gold = [gi[j] for j in cols_free]
        chunk = max(1, GREEDY_CHUNK_CELLS // len(cols_free))
        found_r: list[np.ndarray] = []
        found_c: list[np.ndarray] = []
        found_w: list[np.ndarray] = []
        for start in range(0, len(rows_free), chunk):
            part = rows_free[start : start + chunk]
            weights = self.pricing.matrix([pi[i] for i in part], gold)
            r, c = np.nonzero((weights > 0) & (weights < below))
            found_r.append(part[r])
            found_c.append(cols_free[c])
            found_w.append(weights[r, c])
            kept = sum(len(w) for w in found_w)
            if kept > 2 * GREEDY_TIER_CELLS:
                found_r, found_c, found_w = ([x] for x in _heaviest(found_r, found_c, found_w))
        return _heaviest(found_r, found_c, found_w)

    def _flat_huge(self, pi: list[Item], gi: list[Item]) -> IndexPairs:
        """Beyond the dense limit without nested arrays: the reference's sparse solver, run on the
        pairs that can change its path (`_sparse_solver`) instead of the whole matrix."""
        block = Block(self.pricing.columns(pi, gi), self.pricing.scale)
        pairs = sparse_pairing(block)
        i, j = _sides(pairs)
        self.pricing.remember_worth(pi, gi, i, j, block.weights(i, j))
        return pairs

    def _lazy_dense(self, pi: list[Item], gi: list[Item], common_nested: set[Path]) -> IndexPairs | None:
        """The dense solver's pairs without the dense matrix (`_dense_solver`), rows the smaller side
        as scipy takes them; None where that does not apply (nested items holding arrays of their
        own) or would not pay."""
        transposed = len(pi) > len(gi)
        block = self._priced_block(gi, pi, common_nested) if transposed else self._priced_block(pi, gi, common_nested)
        if block is None:
            return None
        if block.n * block.m <= WHOLE_MATRIX_CELLS and len(block.flat.rare) < len(block.flat.frequent):
            matrix = block.row_weights(np.arange(block.n)).astype(np.float64)
            pairs = dense_matrix_pairs(matrix)
            a, b = _sides(pairs)
            weights = matrix[a, b]
        else:
            found = dense_pairing(block)
            if found is None:
                return None
            pairs = found
            a, b = _sides(pairs)
            weights = block.weights(a, b)
        if transposed:
            self.pricing.remember_worth(pi, gi, b, a, weights)
            return [(j, i) for i, j in pairs]
        self.pricing.remember_worth(pi, gi, a, b, weights)
        return pairs

    def _priced_block(self, rows: list[Item], cols: list[Item], common_nested: set[Path]) -> PricedBlock | None:
        """These rows against these columns as a block the lazy solvers price pair by pair; None if
        some nested items hold arrays of their own (a flat block cannot price them)."""
        pricing = self.pricing
        nested = []
        for path in common_nested:
            row_lists, col_lists = self._nested_named(rows, path), self._nested_named(cols, path)
            if row_lists is None or col_lists is None:
                return None
            nested.append(NestedArrays(row_lists, col_lists, pricing.scale))
        return PricedBlock(Block(pricing.columns(rows, cols), pricing.scale), nested)

    def _nested_named(self, items: list[Item], path: Path) -> list[list[dict[Path, str]]] | None:
        """Each item's nested items at `path` as their named values; None if any holds arrays to pair."""
        priced, flat_named = self.pricing.priced, self.pricing.flat_named
        found: list[list[dict[Path, str]]] = []
        for item in items:
            inner = priced(item)[1].get(path)
            named = flat_named(inner) if inner else []  # most rows of a table hold none
            if named is None:
                return None
            found.append(named)
        return found


def dense_matrix_pairs(weights: np.ndarray) -> IndexPairs:
    """What scipy's `linear_sum_assignment` pairs in a weight matrix, as the reference calls it
    (the smaller side as rows, maximising); a single row or column takes its heaviest cell, the
    first of equals, which is what the solver returns."""
    n, m = weights.shape
    if n == 1:
        return [(0, int(np.argmax(weights[0])))]
    if m == 1:
        return [(int(np.argmax(weights[:, 0])), 0)]
    if n <= m:
        rows, cols = linear_sum_assignment(-weights)
        return list(zip(rows.tolist(), cols.tolist(), strict=True))
    rows, cols = linear_sum_assignment(-weights.T)
    return list(zip(cols.tolist(), rows.tolist(), strict=True))


def unique_best(weights: list[list[int]]) -> IndexPairs | None:
    """The positive-weight pairs that every best assignment of this block makes, when the weights
    alone decide them, else None. Along the smaller side (the rows the solver assigns), each line
    with a positive weight must have one heaviest cell, strictly, and no two lines' in the same
    place: then the sum of the lines' maxima, an upper bound, is reached only by taking those
    cells, so any exact solver returns them (lines without a positive weight take what is left,
    and pairs of weight 0 are not kept)."""
    rows = len(weights) <= len(weights[0])
    lines = weights if rows else [list(column) for column in zip(*weights, strict=True)]
    taken: set[int] = set()
    pairs: IndexPairs = []
    for a, line in enumerate(lines):
        top = max(line)
        if top <= 0:
            continue
        b = line.index(top)
        if b in taken or line.count(top) > 1:
            return None
        taken.add(b)
        pairs.append((a, b) if rows else (b, a))
    return pairs


def greedy_order(rows: np.ndarray, cols: np.ndarray, weights: np.ndarray) -> IndexPairs:
    """Cells in the reference's greedy order: heaviest first, then by row, then by column."""
    order = np.lexsort((cols, rows, -weights))
    return list(zip(rows[order].tolist(), cols[order].tolist(), strict=True))


def _sides(pairs: IndexPairs) -> tuple[np.ndarray, np.ndarray]:
    """The first and the second indices of some pairs, as two index arrays."""
    found = np.array(pairs, dtype=np.int64).reshape(len(pairs), 2)
    return found[:, 0], found[:, 1]


def _heaviest(
    rows: list[np.ndarray], cols: list[np.ndarray], weights: list[np.ndarray]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """About `GREEDY_TIER_CELLS` of the heaviest cells, never splitting cells of equal weight."""
    r, c, w = np.concatenate(rows), np.concatenate(cols), np.concatenate(weights)
    if len(w) > GREEDY_TIER_CELLS:
        cut = np.partition(w, len(w) - GREEDY_TIER_CELLS)[len(w) - GREEDY_TIER_CELLS]
        keep = w >= cut
        r, c, w = r[keep], c[keep], w[keep]
    return r, c, w
