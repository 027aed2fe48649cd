"""Pair counts for whole blocks of rows at once, with numpy instead of one pair at a time.

Everything here computes numbers that are identical to pricing each pair separately:
equal values and shared suffixes of every pred × gold pair, and the best-pairing value of
many small nested blocks. Only the way they are computed differs.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from itertools import chain, permutations

import numpy as np
from scipy import sparse  # type: ignore[import-untyped]  # scipy ships no stubs
from scipy.optimize import linear_sum_assignment  # type: ignore[import-untyped]

from oeb.scoring._tree import Named, Path

# A column whose equal-value pairs cover more than this share of the block is compared densely.
DENSE_COLUMN_SHARE = 1 / 16
# Blocks up to this many cells compare every column densely (a join costs more than it spares).
SMALL_BLOCK_CELLS = 65_536
# Brute force over every injective assignment of a small block up to this many assignments.
MAX_PERMUTATIONS = 720
# Brute force prices this many cells (block × assignment × row) at a time.
PERMUTATION_CHUNK_CELLS = 1 << 20
# Below this many cells of brute force, first finding the blocks whose row maxima sit in distinct
# columns costs more than it spares.
DISTINCT_MAXIMA_CELLS = 1 << 16
# Distinct key-sets whose overlaps are tabulated pairwise; more are counted with a sparse product.
MAX_SIGNATURE_PAIRS = 40_000


class Columns:
    """The named values of a block's pred and gold rows as integer codes, one column per suffix.

    Equal keys of a column have equal codes, which is what every way of counting equal values
    needs: dense comparisons of codes, joins of the rows sharing a code, per-pair lookups. Codes
    are found a column at a time (rows of one shape transposed with `zip`, keys numbered with a
    dict), not a value at a time.
    """

    def __init__(self, pred: Sequence[Named], gold: Sequence[Named]) -> None:
        self.pred, self.gold = pred, gold
        self.n, self.m = len(pred), len(gold)
        p_columns, g_columns = _by_suffix(pred), _by_suffix(gold)
        self.columns: list[tuple[np.ndarray, np.ndarray]] = []  # pred codes (-1 lacks it), gold codes (-2)
        self.pairs: list[int] = []  # equal-value pairs per column
        for suffix in dict.fromkeys(chain(p_columns, g_columns)):
            p_rows, p_keys = p_columns.get(suffix, ([], []))
            g_rows, g_keys = g_columns.get(suffix, ([], []))
            numbers = {key: code for code, key in enumerate(dict.fromkeys(chain(p_keys, g_keys)))}
            p_found = np.fromiter(map(numbers.__getitem__, p_keys), dtype=np.int32, count=len(p_keys))
            g_found = np.fromiter(map(numbers.__getitem__, g_keys), dtype=np.int32, count=len(g_keys))
            p_codes = np.full(self.n, -1, dtype=np.int32)
            g_codes = np.full(self.m, -2, dtype=np.int32)
            p_codes[p_rows] = p_found
            g_codes[g_rows] = g_found
            self.columns.append((p_codes, g_codes))
            per_code = np.bincount(p_found, minlength=len(numbers)) @ np.bincount(g_found, minlength=len(numbers))
            self.pairs.append(int(per_code))

    def codes(self, column: int) -> tuple[np.ndarray, np.ndarray]:
        """Integer codes of a column's keys per row: -1 where a pred row lacks it, -2 a gold row."""
        return self.columns[column]

    def counts(self) -> tuple[np.ndarray, np.ndarray]:
        """For every pred × gold pair: how many suffixes hold equal keys, and how many both have."""
        n, m = self.n, self.m
        matched = np.zeros((n, m), dtype=np.int32)
        scattered: list[np.ndarray] = []
        for (p_codes, g_codes), pairs in zip(self.columns, self.pairs, strict=True):
            if not pairs:
                continue
            if pairs > n * m * DENSE_COLUMN_SHARE or n * m <= SMALL_BLOCK_CELLS:
                matched += p_codes[:, None] == g_codes[None, :]
            else:
                scattered.append(_equal_pairs(p_codes, g_codes, m))
        if scattered:
            np.add.at(matched.reshape(-1), np.concatenate(scattered), 1)
        return matched, self.shared_counts()

    def signatures(self) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """Each row's key-set id and a table of how many suffixes two key-sets share (None: too many)."""
        ids: dict[frozenset[Path], int] = {}
        p_sig = np.array([ids.setdefault(frozenset(named), len(ids)) for named in self.pred], dtype=np.int64)
        p_count = len(ids)
        g_sig = np.array([ids.setdefault(frozenset(named), len(ids)) for named in self.gold], dtype=np.int64)
        distinct = list(ids)
        if p_count * (len(distinct) - p_count + 1) > MAX_SIGNATURE_PAIRS:
            return None
        table = np.array([[len(a & b) for b in distinct] for a in distinct[:p_count]], dtype=np.int32)
        return p_sig, g_sig, table.reshape(p_count, len(distinct))

    def shared_counts(self) -> np.ndarray:
        """Suffixes both rows have: tabulated per distinct key-set, which tables rarely have many of."""
        found = self.signatures()
        if found is not None:
            p_sig, g_sig, table = found
            counts: np.ndarray = table[p_sig][:, g_sig].reshape(self.n, self.m)
            return counts
        suffixes: dict[object, int] = {}

        def incidence(rows: Sequence[Named]) -> tuple[list[int], list[int]]:
            r, c = [], []
            for index, named in enumerate(rows):
                for suffix in named:
                    r.append(index)
                    c.append(suffixes.setdefault(suffix, len(suffixes)))
            return r, c

        (pr, pc), (gr, gc) = incidence(self.pred), incidence(self.gold)
        width = max(len(suffixes), 1)
        p = sparse.csr_array((np.ones(len(pr)), (pr, pc)), shape=(self.n, width))
        g = sparse.csr_array((np.ones(len(gr)), (gr, gc)), shape=(self.m, width))
        product: np.ndarray = (p @ g.T).toarray().astype(np.int32)
        return product


def _by_suffix(rows: Sequence[Named]) -> dict[object, tuple[list[int], list[str]]]:
    """Each suffix's rows and keys. Rows of one shape (a table's rows mostly share theirs) are
    transposed together: C loops instead of one Python step per value."""
    shapes: dict[tuple[Path, ...], list[int]] = {}
    first = tuple(rows[0]) if rows else ()
    if all(map(first.__eq__, map(tuple, rows))):  # one shape: no shape hashed per row (its paths are one object)
        shapes[first] = list(range(len(rows)))
    else:
        for index, named in enumerate(rows):
            shapes.setdefault(tuple(named), []).append(index)
    found: dict[object, tuple[list[int], list[str]]] = {}
    for shape, indices in shapes.items():
        chosen = rows if len(indices) == len(rows) else [rows[index] for index in indices]
        keys_by_suffix = zip(*map(dict.values, chosen), strict=True)
        for suffix, keys in zip(shape, keys_by_suffix, strict=True):
            entry = found.get(suffix)
            if entry is None:
                entry = found[suffix] = ([], [])
            entry[0].extend(indices)
            entry[1].extend(keys)
    return found


def _equal_pairs(p_codes: np.ndarray, g_codes: np.ndarray, m: int) -> np.ndarray:
    """Every pair (as `i * m + j`) whose codes in one column are equal, by a sort-and-search join."""
    order = np.argsort(g_codes, kind="stable")
    sorted_codes = g_codes[order]
    low = np.searchsorted(sorted_codes, p_codes, side="left")
    high = np.searchsorted(sorted_codes, p_codes, side="right")
    counts = high - low
    i = np.repeat(np.arange(len(p_codes), dtype=np.int64), counts)
    starts = np.repeat(low - np.concatenate([[0], np.cumsum(counts)[:-1]]), counts)
    pairs: np.ndarray = i * m + order[np.arange(len(i)) + starts]
    return pairs


def block_values(weights: np.ndarray, p_spans: np.ndarray, g_spans: np.ndarray) -> np.ndarray:
    """The best-pairing value of many blocks of one weight matrix.

    `weights` prices every inner pred row against every inner gold row; block b is the rows
    `p_spans[b, 0] : p_spans[b, 1]` against the columns `g_spans[b, 0] : g_spans[b, 1]`. The value of a
    block is the largest total weight of an assignment: the same for every optimal assignment, so
    no tie-breaking is involved.
    """
    heights = p_spans[:, 1] - p_spans[:, 0]
    widths = g_spans[:, 1] - g_spans[:, 0]
    values = np.zeros(len(p_spans), dtype=np.int64)
    shapes = heights * (widths.max(initial=0) + 1) + widths
    for shape in np.unique(shapes):
        members = np.nonzero(shapes == shape)[0]
        k, width = int(heights[members[0]]), int(widths[members[0]])
        if not k or not width:
            continue
        rows = p_spans[members, 0][:, None] + np.arange(k)
        cols = g_spans[members, 0][:, None] + np.arange(width)
        blocks = weights[rows[:, :, None], cols[:, None, :]]
        values[members] = assignment_values(blocks if k <= width else blocks.transpose(0, 2, 1))
    return values


def assignment_values(blocks: np.ndarray) -> np.ndarray:
    """Maximum assignment value of each block (k rows <= width columns), cheapest exact method first."""
    count, k, width = blocks.shape
    if k == 1:
        return blocks[:, 0, :].max(axis=1)
    values = np.zeros(count, dtype=np.int64)
    rest = np.arange(count)
    assignments = _permutation_count(width, k)
    brute_force = assignments <= MAX_PERMUTATIONS
    if not brute_force or count * assignments * k > DISTINCT_MAXIMA_CELLS:
        # When the positive row maxima sit in distinct columns, taking them is optimal (an upper bound met).
        row_max = blocks.max(axis=2)
        best_col = blocks.argmax(axis=2)
        positive = row_max > 0
        used = np.where(positive, best_col, -1 - np.arange(k))
        used.sort(axis=1)
        distinct = (np.diff(used, axis=1) != 0).all(axis=1)
        values[distinct] = row_max[distinct].sum(axis=1)
        rest = np.nonzero(~distinct)[0]
    if brute_force:
        # Every injective assignment of every block at once: three numpy calls, whatever k and width.
        chosen = _injections(width, k)
        step = max(1, PERMUTATION_CHUNK_CELLS // (assignments * k))
        for start in range(0, len(rest), step):
            part = rest[start : start + step]
            values[part] = blocks[part][:, np.arange(k), chosen].sum(axis=2).max(axis=1)
        return values
    for b in rest:
        r, c = linear_sum_assignment(blocks[b], maximize=True)
        values[b] = blocks[b][r, c].sum()
    return values


@cache
def _injections(width: int, k: int) -> np.ndarray:
    """Every injective assignment of k rows to `width` columns: each one's column of every row."""
    return np.array(list(permutations(range(width), k)), dtype=np.intp).reshape(-1, k)


def _permutation_count(width: int, k: int) -> int:
    total = 1
    for x in range(width - k + 1, width + 1):
        total *= x
    return total
