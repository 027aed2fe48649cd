"""Pairing array elements (SCORING.md section 5).

Object keys mean the same on both sides, array positions do not: before addresses are compared,
each predicted array element takes the index of the gold element it is paired with. Arrays are
aligned outside in; rows are priced by how many values they share, and the assignment is solved
with the same solver, row order and size thresholds as the reference so that ties fall the same
way.

Each side is held as a tree of rows built once from its flattened leaves (the reference rebuilds
rows from address sets at every level); a row's content key and the worth of a candidate pair are
computed once and cached.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
from scipy import sparse
from scipy.optimize import linear_sum_assignment
from scipy.sparse.csgraph import min_weight_full_bipartite_matching

from oeb.scoring.schema import array_name

Step = tuple[str, Any]
Path = tuple[Step, ...]

# Solver switches of the reference (SCORING.md 5.5).
PER_CELL_LIMIT = 256
DENSE_LIMIT = 64_000_000
NESTED_DENSE_LIMIT = 250_000_000
NESTED_MIXED_LIMIT = 500_000_000
NESTED_MAX_SIDE = 20_000


class Leaf:
    """One scalar of one side: its address, raw value and canonical key."""

    __slots__ = ("address", "key", "raw")

    def __init__(self, address: Path, raw: Any, key: str) -> None:
        self.address = address
        self.raw = raw
        self.key = key


class Array:
    """The rows of one array on one side, in order of first appearance."""

    __slots__ = ("pattern", "rows")

    def __init__(self, pattern: Path) -> None:
        self.pattern = pattern  # the array's path with `("i", None)` for every index step
        self.rows: dict[Any, Row] = {}


class Row:
    """An array element (or the document root): its own values and the arrays nested in it."""

    __slots__ = ("_content", "_priced", "arrays", "index", "label", "leaves", "pattern")

    def __init__(self, index: Any, pattern: Path) -> None:
        self.index = index
        self.label: Any = index  # the index it ends with after renumbering
        self.pattern = pattern
        self.leaves: list[tuple[Path, Leaf]] = []  # suffix without index steps -> leaf
        self.arrays: dict[Path, Array] = {}  # relative path -> nested array
        self._priced: tuple[dict[Path, str], dict[Path, list[Row]]] | None = None
        self._content: tuple | None = None

    @property
    def is_object(self) -> bool:
        return any(s[0][0] == "k" for s, _ in self.leaves if s) or any(p and p[0][0] == "k" for p in self.arrays)


def build_tree(leaves: Iterable[Leaf]) -> Row:
    """Group a side's leaves into rows: each array of the document becomes an `Array` of `Row`s."""
    root = Row(None, ())
    for leaf in leaves:
        row = root
        address = leaf.address
        start = 0
        while True:
            cut = next((i for i in range(start, len(address)) if address[i][0] == "i"), -1)
            if cut < 0:
                row.leaves.append((address[start:], leaf))
                break
            path = address[start:cut]
            array = row.arrays.get(path)
            if array is None:
                array = row.arrays[path] = Array((*row.pattern, *path))
            index = address[cut][1]
            child = array.rows.get(index)
            if child is None:
                child = array.rows[index] = Row(index, (*array.pattern, ("i", None)))
            row = child
            start = cut + 1
    return root


class Aligner:
    """Pairs the rows of every array of a prediction with the gold's, as the reference does."""

    def __init__(self, scale: int, positional: frozenset[str] | bool) -> None:
        self.scale = scale
        self.positional = positional
        self.approximated: set[int] = set()
        self._worth: dict[tuple[int, int], tuple[int, int]] = {}
        self._names: dict[Path, bool] = {}

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
            named: dict[Path, str] = {suffix: leaf.key for suffix, leaf in row.leaves}
            nested: dict[Path, list[Row]] = {}
            for path, array in row.arrays.items():
                if self.positional and self.is_positional(array.pattern):
                    for index, child in array.rows.items():
                        for suffix, leaf in _all_leaves(child):
                            named[(*path, ("i", index), *suffix)] = leaf.key
                else:
                    nested[path] = list(array.rows.values())
            row._priced = (named, nested)
        return row._priced

    def content_key(self, row: Row) -> tuple:
        if row._content is None:
            named, nested = self.priced(row)
            row._content = (
                sorted((_as_text(suffix), key) for suffix, key in named.items()),
                sorted(
                    (_as_text(path), sorted(self.content_key(child) for child in rows)) for path, rows in nested.items()
                ),
            )
        return row._content

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
        pi = sorted(pred_rows, key=self.content_key)
        gi = sorted(gold_rows, key=self.content_key)
        kept = []
        for i, j in self._assign(pi, gi):
            matched, shared = self.worth(pi[i], gi[j])
            if matched >= 1:
                kept.append((pi[i], gi[j], matched, shared))
        return kept

    def _assign(self, pi: list[Row], gi: list[Row]) -> list[tuple[int, int]]:
        n, m = len(pi), len(gi)
        cells = n * m
        if cells <= DENSE_LIMIT:
            return _dense(self._weights(pi, gi))
        common_nested = self._nested_paths(pi) & self._nested_paths(gi)
        if not common_nested:
            return _sparse(self._sparse_weights(pi, gi), n, m)
        if min(n, m) <= NESTED_MAX_SIDE and cells <= NESTED_DENSE_LIMIT:
            return _dense(self._weights(pi, gi))
        if min(n, m) <= NESTED_MAX_SIDE and cells <= NESTED_MIXED_LIMIT:
            weights = self._weights(pi, gi)
            if cells * 8 <= self._positives(pi, gi) * 72:
                return _dense(weights)
            self.approximated.add(max(n, m))
            return _greedy(weights)
        self.approximated.add(max(n, m))
        return _greedy(self._weights(pi, gi))

    def _nested_paths(self, rows: list[Row]) -> set[Path]:
        paths: set[Path] = set()
        for row in rows:
            paths.update(self.priced(row)[1])
        return paths

    def _weights(self, pi: list[Row], gi: list[Row]) -> np.ndarray:
        n, m = len(pi), len(gi)
        if n * m < PER_CELL_LIMIT:
            return np.array([[self.weight(p, g) for g in gi] for p in pi], dtype=np.float64).reshape(n, m)
        matched, shared = self._named_counts(pi, gi)
        by_path: dict[Path, tuple[list[int], list[int]]] = {}
        for side, rows in ((0, pi), (1, gi)):
            for index, row in enumerate(rows):
                for path in self.priced(row)[1]:
                    by_path.setdefault(path, ([], []))[side].append(index)
        cells: set[tuple[int, int]] = set()
        for p_indices, g_indices in by_path.values():
            cells.update((i, j) for i in p_indices for j in g_indices)
        for i, j in cells:
            matched[i, j], shared[i, j] = self.worth(pi[i], gi[j])
        return np.where(matched >= 1, matched * float(self.scale) + shared, 0.0)

    def _named_counts(self, pi: list[Row], gi: list[Row]) -> tuple[np.ndarray, np.ndarray]:
        """Equal values and shared suffixes of every pair, as two sparse products."""
        values: dict[tuple[Path, str], int] = {}
        suffixes: dict[Path, int] = {}
        incidence = []
        for rows in (pi, gi):
            v_rows, v_cols, s_rows, s_cols = [], [], [], []
            for index, row in enumerate(rows):
                for suffix, key in self.priced(row)[0].items():
                    v_rows.append(index)
                    v_cols.append(values.setdefault((suffix, key), len(values)))
                    s_rows.append(index)
                    s_cols.append(suffixes.setdefault(suffix, len(suffixes)))
            incidence.append((v_rows, v_cols, s_rows, s_cols))
        (pv_r, pv_c, ps_r, ps_c), (gv_r, gv_c, gs_r, gs_c) = incidence
        n, m = len(pi), len(gi)

        def product(p_r: list[int], p_c: list[int], g_r: list[int], g_c: list[int], width: int) -> np.ndarray:
            p = sparse.csr_array((np.ones(len(p_r)), (p_r, p_c)), shape=(n, width))
            g = sparse.csr_array((np.ones(len(g_r)), (g_r, g_c)), shape=(m, width))
            return (p @ g.T).toarray()

        return (
            product(pv_r, pv_c, gv_r, gv_c, max(len(values), 1)),
            product(ps_r, ps_c, gs_r, gs_c, max(len(suffixes), 1)),
        )

    def _sparse_weights(self, pi: list[Row], gi: list[Row]) -> sparse.csr_array:
        matched, shared = self._named_counts(pi, gi)
        return sparse.csr_array(np.where(matched >= 1, matched * float(self.scale) + shared, 0.0))

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
            for p_row, g_row, _, _ in pairs:
                self.align(p_row, g_row)


def _all_leaves(row: Row) -> Iterable[tuple[Path, Leaf]]:
    """Every leaf under a row, with its suffix relative to the row (index steps included)."""
    yield from row.leaves
    for path, array in row.arrays.items():
        for index, child in array.rows.items():
            for suffix, leaf in _all_leaves(child):
                yield (*path, ("i", index), *suffix), leaf


def _as_text(path: Path) -> tuple[tuple[str, str], ...]:
    return tuple((kind, str(name)) for kind, name in path)


def _dense(weights: np.ndarray) -> list[tuple[int, int]]:
    n, m = weights.shape
    if n <= m:
        rows, cols = linear_sum_assignment(-weights)
        return list(zip(rows.tolist(), cols.tolist(), strict=True))
    rows, cols = linear_sum_assignment(-weights.T)
    return list(zip(cols.tolist(), rows.tolist(), strict=True))


def _sparse(weights: sparse.csr_array, n: int, m: int) -> list[tuple[int, int]]:
    graph = sparse.hstack([weights * float(n + m + 1), sparse.identity(n, format="csr")], format="csr")
    rows = np.arange(n)
    cols = min_weight_full_bipartite_matching(graph, maximize=True)[1]
    real = cols < m
    return [(i, j) for i, j in zip(rows[real].tolist(), cols[real].tolist(), strict=True) if weights[i, j] > 0]


def _greedy(weights: np.ndarray) -> list[tuple[int, int]]:
    rows, cols = np.nonzero(weights > 0)
    order = np.lexsort((cols, rows, -weights[rows, cols]))
    taken_rows: set[int] = set()
    taken_cols: set[int] = set()
    pairs = []
    for i, j in zip(rows[order].tolist(), cols[order].tolist(), strict=True):
        if i not in taken_rows and j not in taken_cols:
            taken_rows.add(i)
            taken_cols.add(j)
            pairs.append((i, j))
    return pairs
