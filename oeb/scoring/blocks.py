"""A block of rows to pair, priced exactly pair by pair without its n × m matrix.

The solvers of huge blocks (`sparse_solver`, `dense_solver`) run the reference's algorithms on the
pairs that can change their path: the pairs sharing a value of a rare column (found by a join),
priced exactly, and for every other pair of a row a bound on what it can weigh. These classes give
both, and price any row against every column when a solver needs it.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cached_property

import numpy as np

from oeb.scoring.weights import Columns, Named, assignment_values

# A column is joined pair by pair when it pairs at most this many rows per row of the block.
JOIN_PAIRS_PER_ROW = 4
# Pairs are priced this many cells at a time.
PRICE_CHUNK_CELLS = 8_000_000

INF = float("inf")


class Block:
    """A flat block as integer codes (one row per column of values), pricing any pairs exactly."""

    def __init__(self, columns: Columns, scale: int) -> None:
        self.scale = scale
        self.n, self.m = columns.n, columns.m
        codes = [columns.codes(c) for c in range(len(columns.columns))]
        self.p_codes = np.array([p for p, _ in codes], dtype=np.int32).reshape(len(codes), self.n)
        self.g_codes = np.array([g for _, g in codes], dtype=np.int32).reshape(len(codes), self.m)
        limit = JOIN_PAIRS_PER_ROW * (self.n + self.m)
        self.rare = [c for c, pairs in enumerate(columns.pairs) if 0 < pairs <= limit]
        self.frequent = [c for c, pairs in enumerate(columns.pairs) if pairs > limit]

    def counts(self, i: np.ndarray, j: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Equal and shared values of each pair (i[k], j[k])."""
        matched = np.empty(len(i), dtype=np.int64)
        shared = np.empty(len(i), dtype=np.int64)
        step = max(1, PRICE_CHUNK_CELLS // max(len(self.p_codes), 1))
        for start in range(0, len(i), step):
            a, b = i[start : start + step], j[start : start + step]
            p, g = self.p_codes[:, a], self.g_codes[:, b]
            matched[start : start + len(a)] = (p == g).sum(axis=0, dtype=np.int64)
            shared[start : start + len(a)] = ((p >= 0) & (g >= 0)).sum(axis=0, dtype=np.int64)
        return matched, shared

    def weights(self, i: np.ndarray, j: np.ndarray) -> np.ndarray:
        """The exact weight of each pair (i[k], j[k])."""
        return _weights(*self.counts(i, j), self.scale)

    def row_counts(self, rows: np.ndarray, dtype: type = np.int64) -> tuple[np.ndarray, np.ndarray]:
        """Equal and shared values of every pair of these rows with every column (len(rows) × m)."""
        matched = np.zeros((len(rows), self.m), dtype=dtype)
        shared = np.zeros((len(rows), self.m), dtype=dtype)
        for p, g in zip(self.p_codes[:, rows], self.g_codes, strict=True):
            matched += p[:, None] == g[None, :]
            shared += (p >= 0)[:, None] & (g >= 0)[None, :]
        return matched, shared

    def row_codes(self, rows: np.ndarray) -> np.ndarray:
        """Every pair of these pred rows with every gold row as one small code, `matched · (C+1) +
        shared` (C columns of values), in a len(rows) × m matrix: two bytes a pair on most tables."""
        base = len(self.p_codes) + 1
        matched, shared = self.row_counts(rows, np.int16 if base * base <= np.iinfo(np.int16).max else np.int32)
        matched *= base
        matched += shared
        return matched

    def code_costs(self, factor: float) -> np.ndarray:
        """The solver's cost of each code of `row_codes` (inf where no value is equal: no edge)."""
        base = len(self.p_codes) + 1
        matched, shared = np.divmod(np.arange(base * base, dtype=np.int64), base)
        return np.where(matched >= 1, -((matched * self.scale + shared).astype(np.float64) * factor), INF)

    @cached_property
    def rare_pairs(self) -> tuple[np.ndarray, np.ndarray]:
        """Every pair sharing a value of a rare column, sorted by pred row then gold row."""
        everyone = np.arange(self.n)
        found = [_join(self.p_codes[[c]], everyone, self.g_codes[[c]]) for c in self.rare]
        return _unique_pairs(found, self.m)

    def bound_counts(self) -> tuple[np.ndarray, np.ndarray]:
        """For each pred row, the most equal and shared values a pair sharing no rare value can have:
        its frequent values, and all its values."""
        present = self.p_codes >= 0
        return present[self.frequent].sum(axis=0, dtype=np.int64), present.sum(axis=0, dtype=np.int64)

    @cached_property
    def bounds(self) -> np.ndarray:
        """For each pred row, the most any pair sharing no rare value can weigh (0: such pairs weigh 0)."""
        return _weights(*self.bound_counts(), self.scale)


def _join(p_codes: np.ndarray, rows: np.ndarray, g_codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Pairs of `rows` and gold rows equal on every given column."""
    p_codes = p_codes[:, rows]
    valid_p = (p_codes >= 0).all(axis=0)
    valid_g = (g_codes >= 0).all(axis=0)
    rows, p_codes = rows[valid_p], p_codes[:, valid_p]
    g_index = np.nonzero(valid_g)[0]
    keys = _row_keys(np.concatenate([p_codes, g_codes[:, g_index]], axis=1))
    p_keys, g_keys = keys[: len(rows)], keys[len(rows) :]
    order = np.argsort(g_keys, kind="stable")
    g_order, sorted_keys = g_index[order], g_keys[order]
    lo = np.searchsorted(sorted_keys, p_keys, side="left")
    hi = np.searchsorted(sorted_keys, p_keys, side="right")
    counts = hi - lo
    total = int(counts.sum())
    i = np.repeat(rows, counts)
    offsets = np.repeat(lo - np.concatenate([[0], np.cumsum(counts)[:-1]]), counts)
    j = g_order[np.arange(total) + offsets]
    return i.astype(np.int64), j.astype(np.int64)


def _row_keys(codes: np.ndarray) -> np.ndarray:
    """One integer per column of `codes` (non-negative), equal exactly when the columns are equal."""
    radices = codes.max(axis=1, initial=0).astype(np.int64) + 1
    if np.prod(radices.astype(np.float64)) >= 2.0**62:
        return np.unique(codes, axis=1, return_inverse=True)[1].reshape(-1)
    keys = np.zeros(codes.shape[1], dtype=np.int64)
    for row, radix in zip(codes, radices.tolist(), strict=True):
        keys *= radix
        keys += row
    return keys


def _unique_pairs(found: list[tuple[np.ndarray, np.ndarray]], m: int) -> tuple[np.ndarray, np.ndarray]:
    if not found:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    flat = np.concatenate([i.astype(np.int64) * m + j for i, j in found])
    flat.sort()  # then drop repeats: several times faster than np.unique's hashing on these sizes
    if len(flat):
        flat = flat[np.concatenate([[True], flat[1:] != flat[:-1]])]
    return flat // m, flat % m


def beyond_their_floors(indptr: np.ndarray, costs: np.ndarray, floors: list[float]) -> set[int]:
    """Rows (listed as CSR `indptr`/`costs`) whose lowest listed cost does not beat their floor (a
    row with none listed: never): a search from them would price them in full, so do it at once."""
    best = np.full(len(indptr) - 1, INF)
    listed = np.flatnonzero(np.diff(indptr))
    best[listed] = np.minimum.reduceat(costs, indptr[listed])
    return set(np.flatnonzero(np.array(floors) <= best).tolist())


def _weights(matched: np.ndarray, shared: np.ndarray, scale: int) -> np.ndarray:
    return np.where(matched >= 1, matched * scale + shared, 0)


class NestedArrays:
    """One nested path that rows on both sides hold: every row's nested rows there, as spans of one
    flat inner block, so that the best-pairing value of any pairs of rows is priced at once."""

    def __init__(self, row_lists: Sequence[Sequence[Named]], col_lists: Sequence[Sequence[Named]], scale: int) -> None:
        self.scale = scale
        self.r_start, self.r_len, inner_r = _spans(row_lists)
        self.c_start, self.c_len, inner_c = _spans(col_lists)
        self.inner = Block(Columns(inner_r, inner_c), scale)
        self.r_values = np.array([sum(len(named) for named in rows) for rows in row_lists], dtype=np.int64)

    def counts(self, i: np.ndarray, j: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """What the best pairing of the nested rows adds to each pair (i[k], j[k]): equal and shared values."""
        matched = np.zeros(len(i), dtype=np.int64)
        shared = np.zeros(len(i), dtype=np.int64)
        both = np.flatnonzero((self.r_len[i] > 0) & (self.c_len[j] > 0))
        heights, widths = self.r_len[i[both]], self.c_len[j[both]]
        shapes = heights * (int(widths.max(initial=0)) + 1) + widths
        for shape in np.unique(shapes):
            members = both[shapes == shape]
            k, width = int(self.r_len[i[members[0]]]), int(self.c_len[j[members[0]]])
            rows = self.r_start[i[members]][:, None, None] + np.arange(k)[None, :, None]
            cols = self.c_start[j[members]][:, None, None] + np.arange(width)[None, None, :]
            rows, cols = np.broadcast_arrays(rows, cols)
            blocks = self.inner.weights(rows.ravel(), cols.ravel()).reshape(len(members), k, width)
            values = assignment_values(blocks if k <= width else blocks.transpose(0, 2, 1))
            matched[members], shared[members] = np.divmod(values, self.scale)
        return matched, shared

    def row_counts(self, rows: np.ndarray, m: int) -> tuple[np.ndarray, np.ndarray]:
        """`counts` of every pair of these rows with every column (len(rows) × m): the nested rows
        of rows with as many of them priced against all nested rows of the columns in one matrix,
        then cut into blocks of one shape at a time."""
        matched = np.zeros((len(rows), m), dtype=np.int64)
        shared = np.zeros((len(rows), m), dtype=np.int64)
        heights = self.r_len[rows]
        widths = self.c_len
        for k in np.unique(heights[heights > 0]).tolist():
            group = np.flatnonzero(heights == k)
            inner_rows = (self.r_start[rows[group]][:, None] + np.arange(k)).ravel()
            inner = _weights(*self.inner.row_counts(inner_rows), self.scale).reshape(len(group), k, -1)
            for width in np.unique(widths[widths > 0]).tolist():
                members = np.flatnonzero(widths == width)
                cols = self.c_start[members][:, None] + np.arange(width)
                blocks = inner[:, :, cols].transpose(0, 2, 1, 3).reshape(-1, k, width)  # (row, member) blocks
                values = assignment_values(blocks if k <= width else blocks.transpose(0, 2, 1))
                found = np.divmod(values.reshape(len(group), len(members)), self.scale)
                matched[np.ix_(group, members)], shared[np.ix_(group, members)] = found
        return matched, shared


def _spans(lists: Sequence[Sequence[Named]]) -> tuple[np.ndarray, np.ndarray, list[Named]]:
    lengths = np.array([len(rows) for rows in lists], dtype=np.int64)
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)
    return starts, lengths, [named for rows in lists for named in rows]


class PricedBlock:
    """A block whose rows hold flat values and nested arrays of flat rows: any pairs priced exactly,
    and for every row a bound on the weight of the pairs that share no rare value."""

    def __init__(self, flat: Block, nested: list[NestedArrays]) -> None:
        self.flat, self.nested = flat, nested
        self.scale = flat.scale
        self.n, self.m = flat.n, flat.m

    @property
    def rare_pairs(self) -> tuple[np.ndarray, np.ndarray]:
        return self.flat.rare_pairs

    def weights(self, i: np.ndarray, j: np.ndarray) -> np.ndarray:
        matched, shared = self.flat.counts(i, j)
        for nested in self.nested:
            more_matched, more_shared = nested.counts(i, j)
            matched += more_matched
            shared += more_shared
        return _weights(matched, shared, self.scale)

    def row_weights(self, rows: np.ndarray) -> np.ndarray:
        """Every pair of these rows with every column, as a len(rows) × m matrix."""
        matched, shared = self.flat.row_counts(rows)
        for nested in self.nested:
            more_matched, more_shared = nested.row_counts(rows, self.m)
            matched += more_matched
            shared += more_shared
        return _weights(matched, shared, self.scale)

    @cached_property
    def bounds(self) -> np.ndarray:
        """The most a pair sharing no rare value can weigh: it can match each frequent value and each
        nested value at most once."""
        matched, shared = self.flat.bound_counts()
        for nested in self.nested:
            matched += nested.r_values
            shared += nested.r_values
        return _weights(matched, shared, self.scale)
