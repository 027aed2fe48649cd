"""Pairing array elements (SCORING.md section 5).

Object keys mean the same on both sides, array positions do not: before addresses are compared,
each predicted array element takes the index of the gold element it is paired with. Arrays are
aligned outside in; rows are priced by how many values they share, and the assignment is solved
with the same solver, row order and size thresholds as the reference so that ties fall the same
way.

Each side is held as a tree of rows built once while flattening (the reference rebuilds rows from
address sets at every level); a row's content key and the worth of a candidate pair are computed
once and cached.
"""

from __future__ import annotations

from collections.abc import Iterable
from operator import itemgetter

import numpy as np
from scipy.optimize import linear_sum_assignment

from oeb.scoring.blocks import Block, NestedArrays, PricedBlock
from oeb.scoring.dense_solver import dense_pairing
from oeb.scoring.greedy_solver import greedy_pairing
from oeb.scoring.rows import Path, Row, Value
from oeb.scoring.schema import array_name
from oeb.scoring.sparse_solver import sparse_pairing
from oeb.scoring.weights import Columns, block_values

# Solver switches of the reference (SCORING.md 5.5).
PER_CELL_LIMIT = 256
DENSE_LIMIT = 64_000_000
NESTED_DENSE_LIMIT = 250_000_000
NESTED_MIXED_LIMIT = 500_000_000
NESTED_MAX_SIDE = 20_000
# Dense blocks from this many cells are solved without their matrix (oeb.scoring.dense_solver).
LAZY_FLAT_CELLS = 4_000_000
LAZY_NESTED_CELLS = 2_500
# The nested rows of this many pairs about to be aligned are priced in one block per path.
PRICED_TOGETHER_PAIRS = 20
# Nested rows of one block priced together in one matrix up to this many cells, else pair by pair.
INNER_MATRIX_LIMIT = 16_000_000
OUTER_PAIRS_PER_BATCH = 2_000_000
# The greedy pairing prices the free block in chunks of this many cells, keeping the heaviest cells.
GREEDY_CHUNK_CELLS = 8_000_000
GREEDY_TIER_CELLS = 4_000_000


class Aligner:
    """Pairs the rows of every array of a prediction with the gold's, as the reference does."""

    def __init__(self, scale: int, positional: frozenset[str] | bool) -> None:
        self.scale = scale
        self.positional = positional
        self.approximated: set[int] = set()
        self._worth: dict[tuple[int, int], tuple[int, int]] = {}
        self._names: dict[Path, bool] = {}
        self._texts: dict[Path, tuple[tuple[str, str], ...]] = {}  # rows of a table share their suffixes
        self._orders: dict[tuple[Path, ...], list[tuple[tuple[tuple[str, str], ...], int]]] = {}
        self._priced_in: dict[int, tuple[Block, int]] = {}  # nested rows priced together: index (gold: -1-index)

    # --- which arrays are compared by position ---------------------------------------------

    def is_positional(self, pattern: Path) -> bool:
        if self.positional is True or self.positional is False:
            return self.positional
        found = self._names.get(pattern)
        if found is None:
            found = self._names[pattern] = array_name(pattern) in self.positional
        return found

    # --- a row as pricing sees it ------------------------------------------------------------

    def priced(self, row: Row) -> tuple[dict[Path, str], dict[Path, list[Row]]]:
        """Named values (positional arrays flattened into them) and the nested arrays to pair."""
        if row._priced is None:
            named: dict[Path, str] = {suffix: key for suffix, _, key in row.leaves}
            nested: dict[Path, list[Row]] = {}
            for path, array in row.arrays.items():
                if self.positional and self.is_positional(array.pattern):
                    for index, child in array.rows.items():
                        for suffix, _, key in _all_leaves(child):
                            named[(*path, ("i", index), *suffix)] = key
                else:
                    nested[path] = list(array.rows.values())
            row._priced = (named, nested)
        return row._priced

    def content_key(self, row: Row) -> tuple:
        if row._content is None:
            named, nested = self.priced(row)
            nested_keys = [(self._as_text(path), sorted(map(self.content_key, rows))) for path, rows in nested.items()]
            row._content = (self._sorted_named(named), sorted(nested_keys) if len(nested_keys) > 1 else nested_keys)
        return row._content

    def _sorted_named(self, named: dict[Path, str]) -> list[tuple[tuple[tuple[str, str], ...], str]]:
        """`sorted((text of suffix, key) ...)`: the rows of a table share their suffixes, so the order
        is found once per set of suffixes. Not for suffixes with names that are not text: `1` and
        `True` are one dict key but two texts, and `1` and `"1"` read alike (keys break the tie)."""
        order = self._order(tuple(named))
        if order is None:
            return sorted((self._as_text(suffix), key) for suffix, key in named.items())
        keys = list(named.values())
        return [(text, keys[k]) for text, k in order]

    def _order(self, shape: tuple[Path, ...]) -> list[tuple[tuple[tuple[str, str], ...], int]] | None:
        """Each suffix's text and place, in the order of the texts; None for names that are not text."""
        order = self._orders.get(shape)
        if order is None:
            if not all(type(name) is str for suffix in shape for kind, name in suffix if kind == "k"):
                return None
            texts = [self._as_text(suffix) for suffix in shape]
            ranked = sorted(range(len(texts)), key=texts.__getitem__)
            self._orders[shape] = order = [(texts[k], k) for k in ranked]
        return order

    def in_content_order(self, rows: list[Row]) -> list[Row]:
        """The rows sorted by content key, as the reference takes them (SCORING.md 5.4). When all hold
        the same suffixes (in the same order) and no nested array, as a table's rows mostly do, their
        content keys differ only in their keys: sorting by the keys, taken in the suffixes' order,
        gives the same order without building the content keys."""
        if not rows:
            return []
        priced = [self.priced(row) for row in rows]
        shape = tuple(priced[0][0])
        order = self._order(shape)
        if order is None or not all(not nested and tuple(named) == shape for named, nested in priced):
            return sorted(rows, key=self.content_key)
        if len(order) < 2:  # one key each (a list of one), or none: all equal, the order kept
            keys = [list(named.values()) for named, _ in priced]
        else:
            pick = itemgetter(*(k for _, k in order))
            keys = [pick(list(named.values())) for named, _ in priced]
        return [rows[i] for i in sorted(range(len(rows)), key=keys.__getitem__)]

    def _as_text(self, path: Path) -> tuple[tuple[str, str], ...]:
        """A path with every name as text, as content keys compare it."""
        found = self._texts.get(path)
        if found is None:
            found = tuple((kind, str(name)) for kind, name in path)
            # Kept only for text keys: `1`, `1.0` and `True` are one dict key but three texts.
            if all(type(name) is str for kind, name in path if kind == "k"):
                self._texts[path] = found
        return found

    # --- what a candidate pair is worth --------------------------------------------------------

    def worth(self, p: Row, g: Row) -> tuple[int, int]:
        cache_key = (id(p), id(g))
        found = self._worth.get(cache_key)
        if found is not None:
            return found
        p_named, p_nested = self.priced(p)
        g_named, g_nested = self.priced(g)
        matched = shared = 0
        small, large = (p_named, g_named) if len(p_named) <= len(g_named) else (g_named, p_named)
        for suffix, key in small.items():
            other = large.get(suffix)
            if other is not None:
                shared += 1
                matched += other == key
        for path in p_nested.keys() & g_nested.keys():
            for _, _, m, s in self.best_pairing(p_nested[path], g_nested[path]):
                matched += m
                shared += s
        self._worth[cache_key] = (matched, shared)
        return matched, shared

    def weight(self, p: Row, g: Row) -> int:
        matched, shared = self.worth(p, g)
        return matched * self.scale + shared if matched >= 1 else 0

    # --- best pairing of two row sets ----------------------------------------------------------

    def best_pairing(self, pred_rows: list[Row], gold_rows: list[Row]) -> list[tuple[Row, Row, int, int]]:
        if not pred_rows or not gold_rows:
            return []
        pi = self.in_content_order(pred_rows)
        gi = self.in_content_order(gold_rows)
        kept = []
        for i, j in self._assign(pi, gi):
            matched, shared = self.worth(pi[i], gi[j])
            if matched >= 1:
                kept.append((pi[i], gi[j], matched, shared))
        return kept

    def _assign(self, pi: list[Row], gi: list[Row]) -> list[tuple[int, int]]:
        n, m = len(pi), len(gi)
        cells = n * m
        asked = cells >= LAZY_NESTED_CELLS or cells > DENSE_LIMIT  # smaller blocks need not know
        common_nested = self._nested_paths(pi) & self._nested_paths(gi) if asked else set()
        if cells > DENSE_LIMIT and not self._solved_densely(pi, gi, common_nested):
            if not common_nested:
                return self._flat_huge(pi, gi)
            self.approximated.add(max(n, m))
            block = self._priced_block(pi, gi, common_nested)
            if block is None:
                return self._greedy(pi, gi)
            pairs = greedy_pairing(block)
            i, j = _sides(pairs)
            self._remember_worth(pi, gi, i, j, block.weights(i, j))
            return pairs
        if cells >= LAZY_FLAT_CELLS or common_nested:
            found = self._lazy_dense(pi, gi, common_nested)
            if found is not None:
                return found
        return self._dense(pi, gi)

    def _solved_densely(self, pi: list[Row], gi: list[Row], common_nested: set[Path]) -> bool:
        """Whether the reference solves a block past its dense limit densely all the same: only with
        nested arrays on both sides, up to its side and cell limits (SCORING.md 5.5)."""
        n, m = len(pi), len(gi)
        if not common_nested or min(n, m) > NESTED_MAX_SIDE:
            return False
        cells = n * m
        return cells <= NESTED_DENSE_LIMIT or (
            cells <= NESTED_MIXED_LIMIT and cells * 8 <= self._positives(pi, gi) * 72
        )

    def _dense(self, pi: list[Row], gi: list[Row]) -> list[tuple[int, int]]:
        """The reference's dense solving on the whole weight matrix."""
        weights = self._weights(pi, gi)
        pairs = _dense(weights)
        i, j = _sides(pairs)
        self._remember_worth(pi, gi, i, j, weights[i, j])
        return pairs

    def _greedy(self, pi: list[Row], gi: list[Row]) -> list[tuple[int, int]]:
        """The reference's greedy pairing (cells by weight, then row, then column; a pair when both
        are free), without its n x m matrix: in tiers of the heaviest cells among the rows and
        columns still free, each tier found by pricing the free block in chunks."""
        n, m = len(pi), len(gi)
        free_rows = np.ones(n, dtype=bool)
        free_cols = np.ones(m, dtype=bool)
        below = np.inf
        pairs: list[tuple[int, int]] = []
        while free_rows.any() and free_cols.any():
            rows, cols, weights = self._heaviest_cells(pi, gi, free_rows, free_cols, below)
            if not len(weights):
                break
            below = float(weights.min())
            for i, j in _greedy_order(rows, cols, weights):
                if free_rows[i] and free_cols[j]:
                    free_rows[i] = free_cols[j] = False
                    pairs.append((i, j))
        return pairs

    def _heaviest_cells(
        self, pi: list[Row], gi: list[Row], free_rows: np.ndarray, free_cols: np.ndarray, below: float
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The cells of the free block weighing less than `below`: the heaviest of them, about
        `GREEDY_TIER_CELLS`, with every cell as heavy as the lightest one kept."""
        rows_free = np.nonzero(free_rows)[0]
        cols_free = np.nonzero(free_cols)[0]
        gold = [gi[j] for j in cols_free]
        chunk = max(1, GREEDY_CHUNK_CELLS // len(cols_free))
        found_r, found_c, found_w = [], [], []
        for start in range(0, len(rows_free), chunk):
            part = rows_free[start : start + chunk]
            weights = self._weights([pi[i] for i in part], gold)
            r, c = np.nonzero((weights > 0) & (weights < below))
            found_r.append(part[r])
            found_c.append(cols_free[c])
            found_w.append(weights[r, c])
            kept = sum(len(w) for w in found_w)
            if kept > 2 * GREEDY_TIER_CELLS:
                found_r, found_c, found_w = ([x] for x in _heaviest(found_r, found_c, found_w))
        rows, cols, weights = _heaviest(found_r, found_c, found_w)
        return rows, cols, weights

    def _flat_huge(self, pi: list[Row], gi: list[Row]) -> list[tuple[int, int]]:
        """Beyond the dense limit without nested arrays: the reference's sparse solver, run on the
        pairs that can change its path (`oeb.scoring.sparse_solver`) instead of the whole matrix."""
        block = Block(self._columns(pi, gi), self.scale)
        pairs = sparse_pairing(block)
        i, j = _sides(pairs)
        self._remember_worth(pi, gi, i, j, block.weights(i, j))
        return pairs

    def _lazy_dense(self, pi: list[Row], gi: list[Row], common_nested: set[Path]) -> list[tuple[int, int]] | None:
        """The dense solver's pairs without the dense matrix (`oeb.scoring.dense_solver`), rows the
        smaller side as scipy takes them; None where that does not apply (nested rows holding
        arrays of their own) or would not pay."""
        transposed = len(pi) > len(gi)
        block = self._priced_block(gi, pi, common_nested) if transposed else self._priced_block(pi, gi, common_nested)
        if block is None:
            return None
        pairs = dense_pairing(block)
        if pairs is None:
            return None
        a, b = _sides(pairs)
        weights = block.weights(a, b)
        if transposed:
            self._remember_worth(pi, gi, b, a, weights)
            return [(j, i) for i, j in pairs]
        self._remember_worth(pi, gi, a, b, weights)
        return pairs

    def _priced_block(self, rows: list[Row], cols: list[Row], common_nested: set[Path]) -> PricedBlock | None:
        """These rows against these columns as a block the lazy solvers price pair by pair; None if
        some nested rows hold arrays of their own (a flat block cannot price them)."""
        nested = []
        for path in common_nested:
            row_lists, col_lists = self._nested_values(rows, path), self._nested_values(cols, path)
            if row_lists is None or col_lists is None:
                return None
            nested.append(NestedArrays(row_lists, col_lists, self.scale))
        return PricedBlock(Block(self._columns(rows, cols), self.scale), nested)

    def _remember_worth(self, pi: list[Row], gi: list[Row], i: np.ndarray, j: np.ndarray, weights: np.ndarray) -> None:
        """What the chosen pairs (pi[i[k]], gi[j[k]]) are worth, for `best_pairing` to keep them:
        their weights are known from where they were chosen, so they are not priced again."""
        for a, b, weight in zip(i.tolist(), j.tolist(), weights.tolist(), strict=True):
            if weight:
                self._worth[(id(pi[a]), id(gi[b]))] = divmod(int(weight), self.scale)

    def _nested_values(self, rows: list[Row], path: Path) -> list[list[dict[Path, str]]] | None:
        """Each row's nested rows at `path` as their named values; None if any holds arrays to pair."""
        found = []
        for row in rows:
            named = self._flat_named(self.priced(row)[1].get(path, []))
            if named is None:
                return None
            found.append(named)
        return found

    def _flat_named(self, rows: list[Row]) -> list[dict[Path, str]] | None:
        """The named values of these rows; None if any holds arrays to pair (a flat block cannot price it)."""
        priced = [self.priced(row) for row in rows]
        if any(nested for _, nested in priced):
            return None
        return [named for named, _ in priced]

    def _columns(self, pi: list[Row], gi: list[Row]) -> Columns:
        """The named values of a block, column by column, as pricing sees them."""
        return Columns([self.priced(p)[0] for p in pi], [self.priced(g)[0] for g in gi])

    def _nested_paths(self, rows: list[Row]) -> set[Path]:
        paths: set[Path] = set()
        for row in rows:
            paths.update(self.priced(row)[1])
        return paths

    def _weights(self, pi: list[Row], gi: list[Row]) -> np.ndarray:
        """The pair-weight matrix: equal values times `scale` plus shared addresses, 0 without a match."""
        n, m = len(pi), len(gi)
        if n * m < PER_CELL_LIMIT:
            found = self._priced_together(pi, gi) if self._priced_in else None
            if found is not None:
                return found
            return np.array([[self.weight(p, g) for g in gi] for p in pi], dtype=np.float64).reshape(n, m)
        matched, shared = self._columns(pi, gi).counts()
        self._add_nested(pi, gi, matched, shared)
        return _combined(matched, shared, self.scale)

    def _add_nested(self, pi: list[Row], gi: list[Row], matched: np.ndarray, shared: np.ndarray) -> None:
        """Add the best pairing of every nested array two rows both hold, for all such pairs.

        The nested rows of a batch of pred rows are priced against all gold nested rows in one
        matrix, batches sized so that the matrix stays within `INNER_MATRIX_LIMIT` cells.
        """
        for path in self._nested_paths(pi) & self._nested_paths(gi):
            p_outer, p_inner, p_spans = self._inner_rows(pi, path)
            g_outer, g_inner, g_spans = self._inner_rows(gi, path)
            start = 0
            while start < len(p_outer):
                end, inner_rows = start, 0
                while end < len(p_outer):
                    size = int(p_spans[end, 1] - p_spans[end, 0])
                    too_many = (inner_rows + size) * len(g_inner) > INNER_MATRIX_LIMIT
                    if end > start and (too_many or (end - start) * len(g_outer) >= OUTER_PAIRS_PER_BATCH):
                        break
                    inner_rows += size
                    end += 1
                rows = p_outer[start:end]
                if inner_rows * len(g_inner) > INNER_MATRIX_LIMIT:  # one row with a huge nested array
                    self._add_nested_pair_by_pair(pi, gi, rows, g_outer, path, matched, shared)
                else:
                    low, high = int(p_spans[start, 0]), int(p_spans[end - 1, 1])
                    inner = self._weights(p_inner[low:high], g_inner).astype(np.int64)
                    cells_p = np.repeat(p_spans[start:end] - low, len(g_outer), axis=0)
                    cells_g = np.tile(g_spans, (len(rows), 1))
                    values = block_values(inner, cells_p, cells_g).reshape(len(rows), len(g_outer))
                    where = np.ix_(rows, g_outer)
                    matched[where] += values // self.scale
                    shared[where] += values % self.scale
                start = end

    def _add_nested_pair_by_pair(
        self,
        pi: list[Row],
        gi: list[Row],
        p_outer: list[int],
        g_outer: list[int],
        path: Path,
        matched: np.ndarray,
        shared: np.ndarray,
    ) -> None:
        for i in p_outer:
            for j in g_outer:
                for _, _, m, s in self.best_pairing(self.priced(pi[i])[1][path], self.priced(gi[j])[1][path]):
                    matched[i, j] += m
                    shared[i, j] += s

    def _inner_rows(self, rows: list[Row], path: Path) -> tuple[list[int], list[Row], np.ndarray]:
        """The rows that hold `path`, all their nested rows there in one list, and each one's span."""
        outer: list[int] = []
        inner: list[Row] = []
        spans: list[tuple[int, int]] = []
        for index, row in enumerate(rows):
            nested = self.priced(row)[1].get(path)
            if nested:
                outer.append(index)
                spans.append((len(inner), len(inner) + len(nested)))
                inner.extend(nested)
        return outer, inner, np.array(spans, dtype=np.int64).reshape(-1, 2)

    def _positives(self, pi: list[Row], gi: list[Row]) -> int:
        counts: dict[tuple[Path, str], list[int]] = {}
        for side, rows in ((0, pi), (1, gi)):
            for row in rows:
                for item in self.priced(row)[0].items():
                    counts.setdefault(item, [0, 0])[side] += 1
        return min(len(pi) * len(gi), sum(a * b for a, b in counts.values()))

    # --- the driver ----------------------------------------------------------------------------

    def align(self, pred: Row, gold: Row | None) -> None:
        """Renumber the arrays nested in `pred` against those in `gold`, outside in."""
        if gold is None:
            return
        for path, p_array in pred.arrays.items():
            g_array = gold.arrays.get(path)
            if g_array is None:
                continue
            if self.is_positional(p_array.pattern):
                for index, p_row in p_array.rows.items():
                    self.align(p_row, g_array.rows.get(index))
                continue
            pairs = self.best_pairing(list(p_array.rows.values()), list(g_array.rows.values()))
            for p_row in p_array.rows.values():
                p_row.label = f"p{p_row.index}"
            for p_row, g_row, _, _ in pairs:
                p_row.label = g_row.index
            if len(pairs) >= PRICED_TOGETHER_PAIRS:
                self._price_nested_together(pairs)
            for p_row, g_row, _, _ in pairs:
                self.align(p_row, g_row)

    def _price_nested_together(self, pairs: list[tuple[Row, Row, int, int]]) -> None:
        """Price the flat nested rows of all these pairs in one block per path, before each pair's
        small nested arrays are aligned one by one (`_weights` then reads their cells from it)."""
        found: dict[Path, tuple[list[Row], list[Row]]] = {}
        for p_row, g_row, _, _ in pairs:
            for path, p_array in p_row.arrays.items():
                g_array = g_row.arrays.get(path)
                if g_array is not None and not self.is_positional(p_array.pattern):
                    p_rows, g_rows = found.setdefault(path, ([], []))
                    p_rows.extend(p_array.rows.values())
                    g_rows.extend(g_array.rows.values())
        for p_rows, g_rows in found.values():
            p_named, g_named = self._flat_named(p_rows), self._flat_named(g_rows)
            if p_named is None or g_named is None:
                continue
            block = Block(Columns(p_named, g_named), self.scale)
            self._priced_in.update((id(row), (block, index)) for index, row in enumerate(p_rows))
            self._priced_in.update((id(row), (block, -1 - index)) for index, row in enumerate(g_rows))

    def _priced_together(self, pi: list[Row], gi: list[Row]) -> np.ndarray | None:
        """The weights of a small block whose rows were all priced in one block, if they were."""
        first = self._priced_in.get(id(pi[0]))
        if first is None:
            return None
        block = first[0]
        p_index, g_index = [], []
        for rows, indices in ((pi, p_index), (gi, g_index)):
            for row in rows:
                found = self._priced_in.get(id(row))
                if found is None or found[0] is not block:
                    return None
                indices.append(found[1])
        if min(p_index) < 0 or max(g_index) >= 0:
            return None
        i = np.repeat(np.array(p_index), len(gi))
        j = np.tile(-1 - np.array(g_index), len(pi))
        return block.weights(i, j).astype(np.float64).reshape(len(pi), len(gi))


def _all_leaves(row: Row) -> Iterable[Value]:
    """Every leaf under a row, with its suffix relative to the row (index steps included)."""
    yield from row.leaves
    for path, array in row.arrays.items():
        for index, child in array.rows.items():
            for suffix, raw, key in _all_leaves(child):
                yield (*path, ("i", index), *suffix), raw, key


def _sides(pairs: list[tuple[int, int]]) -> tuple[np.ndarray, np.ndarray]:
    """The first and the second indices of some pairs, as two index arrays."""
    found = np.array(pairs, dtype=np.int64).reshape(len(pairs), 2)
    return found[:, 0], found[:, 1]


def _dense(weights: np.ndarray) -> list[tuple[int, int]]:
    n, m = weights.shape
    # One row (or column): scipy's solver takes its heaviest cell, the first of equals.
    if n == 1:
        return [(0, int(np.argmax(weights[0])))]
    if m == 1:
        return [(int(np.argmax(weights[:, 0])), 0)]
    if n <= m:
        rows, cols = linear_sum_assignment(-weights)
        return list(zip(rows.tolist(), cols.tolist(), strict=True))
    rows, cols = linear_sum_assignment(-weights.T)
    return list(zip(cols.tolist(), rows.tolist(), strict=True))


def _combined(matched: np.ndarray, shared: np.ndarray, scale: int) -> np.ndarray:
    """`matched * scale + shared` where a value matches, else 0, as float64 (what the solver takes)."""
    weights = matched.astype(np.float64)
    weights *= scale
    weights += shared
    weights[matched < 1] = 0.0
    return weights


def _greedy_order(rows: np.ndarray, cols: np.ndarray, weights: np.ndarray) -> list[tuple[int, int]]:
    order = np.lexsort((cols, rows, -weights))
    return list(zip(rows[order].tolist(), cols[order].tolist(), strict=True))


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
