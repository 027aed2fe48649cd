"""A block of rows to pair, priced exactly pair by pair without its n × m matrix.

The solvers of huge blocks (`sparse_solver`, `dense_solver`) run the reference's algorithms on the
pairs that can change their path: the listed pairs, priced exactly, and for every other pair of a
row a bound on what it can weigh. Listed are the pairs sharing a value of a rare column and, where
the frequent columns are few, the pairs equal on most of them (a table of codes has no rare column,
but few rows alike on nearly every code); both are found by joins. These classes give both, and
price any row against every column when a solver needs it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import cached_property
from itertools import accumulate, combinations

import numpy as np

from oeb.scoring._tree import Named
from oeb.scoring._weights import Columns, assignment_values

# A column is joined pair by pair when it pairs at most this many rows per row of the block.
JOIN_PAIRS_PER_ROW = 4
# Pairs equal on most frequent columns are listed while they number at most this many per row of the
# block, and while the sets of columns to join on number at most NEAR_SUBSETS.
NEAR_PAIRS_PER_ROW = 32
NEAR_SUBSETS = 64
# Pairs are priced this many cells at a time.
PRICE_CHUNK_CELLS = 8_000_000
# Columns with up to this many nested rows are paired as blocks of one width, padded with zeros.
NESTED_PADDED_WIDTH = 4
# Rows with nested rows are paired this many cells (row × column × nested pair) at a time: few enough
# to stay in cache and to keep the distinct weight vectors of a batch few.
NESTED_CHUNK_CELLS = 1 << 20
# Distinct keys are found with a table when the largest is at most this many times their count.
DISTINCT_TABLE_SIZE = 16

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

    def row_counts(
        self, rows: np.ndarray, dtype: type = np.int64, gold: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """Equal and shared values of every pair of these rows with every gold row, or these gold rows
        (len(rows) × gold rows): one comparison per row or per column, whichever are fewer, and the
        shared values looked up by the set of columns each row has, which a block has few of."""
        g_codes, (column_sets, set_of_row) = self.g_codes, self.gold_column_sets
        if gold is not None:
            g_codes, set_of_row = g_codes[:, gold], set_of_row[gold]
        p_codes = self.p_codes[:, rows]
        matched: np.ndarray
        if len(rows) < len(g_codes):
            matched = np.empty((len(rows), g_codes.shape[1]), dtype=dtype)
            for out, p in zip(matched, p_codes.T, strict=True):
                np.sum(g_codes == p[:, None], axis=0, dtype=dtype, out=out)
        else:
            matched = np.zeros((len(rows), g_codes.shape[1]), dtype=dtype)
            for p, g in zip(p_codes, g_codes, strict=True):
                matched += p[:, None] == g
        has = (p_codes >= 0).T.astype(np.float32)  # float32: BLAS, and exact far past C columns
        shared = (has @ column_sets).astype(dtype).take(set_of_row, axis=1)
        return matched, shared

    @cached_property
    def gold_column_sets(self) -> tuple[np.ndarray, np.ndarray]:
        """The distinct sets of columns gold rows have (C × sets, 0/1), and each gold row's set."""
        present = (self.g_codes >= 0).astype(np.int8)
        one, set_of_row = _distinct(_row_keys(present))
        return present[:, one].astype(np.float32), set_of_row

    def row_codes(self, rows: np.ndarray, gold: np.ndarray | None = None) -> np.ndarray:
        """Every pair of these pred rows with every gold row (or these) as one small code, `matched ·
        (C+1) + shared` (C columns of values), in a len(rows) × m matrix: two bytes a pair on most tables."""
        base = len(self.p_codes) + 1
        dtype = np.int16 if base * base <= np.iinfo(np.int16).max else np.int32
        matched, shared = self.row_counts(rows, dtype, gold)
        matched *= base
        matched += shared
        return matched

    def code_costs(self, factor: float) -> np.ndarray:
        """The solver's cost of each code of `row_codes` (inf where no value is equal: no edge)."""
        base = len(self.p_codes) + 1
        matched, shared = np.divmod(np.arange(base * base, dtype=np.int64), base)
        return np.where(matched >= 1, -((matched * self.scale + shared).astype(np.float64) * factor), INF)

    @cached_property
    def code_values(self) -> np.ndarray:
        """`matched · scale + shared` of each code of `row_codes`, whether a value matches or not."""
        base = len(self.p_codes) + 1
        matched, shared = np.divmod(np.arange(base * base, dtype=np.int64), base)
        return matched * self.scale + shared

    @cached_property
    def code_weights(self) -> np.ndarray:
        """The weight of each code of `row_codes`."""
        return np.where(np.arange(len(self.code_values)) > len(self.p_codes), self.code_values, 0)

    @cached_property
    def rare_pairs(self) -> tuple[np.ndarray, np.ndarray]:
        """The listed pairs, sorted by pred row then gold row: every pair sharing a value of a rare
        column, and every pair equal on `near_columns` of the frequent columns."""
        everyone = np.arange(self.n)
        found = [_join(self.p_codes[[c]], everyone, self.g_codes[[c]]) for c in self.rare]
        found += [_join(self.p_codes[list(s)], everyone, self.g_codes[list(s)]) for s in self._near_subsets]
        return _unique_pairs(found, self.m)

    @cached_property
    def _near_subsets(self) -> list[tuple[int, ...]]:
        """Every set of `near_columns` frequent columns: the fewest for which the pairs equal on all
        of some set stay few (a table of codes has no rare column, but few rows alike on all of them)."""
        chosen: list[tuple[int, ...]] = []
        # Rare columns already list the pairs most rows pair by: the more of them, the fewer near pairs
        # are worth listing.
        budget = NEAR_PAIRS_PER_ROW * (self.n + self.m) // (1 + len(self.rare))
        for size in range(len(self.frequent), 0, -1):
            subsets = list(combinations(self.frequent, size))
            if len(subsets) > NEAR_SUBSETS:
                break
            sizes = accumulate(_join_size(self.p_codes[list(s)], self.g_codes[list(s)]) for s in subsets)
            if any(total > budget for total in sizes):  # stops at the first set past the budget
                break
            chosen = subsets
        return chosen

    @property
    def near_columns(self) -> int:
        """How many frequent columns a pair must have equal to be listed (one more than there are: none)."""
        return len(self._near_subsets[0]) if self._near_subsets else len(self.frequent) + 1

    def bound_counts(self) -> tuple[np.ndarray, np.ndarray]:
        """For each pred row, the most equal and shared values an unlisted pair can have: its frequent
        values, fewer than `near_columns` of them (a pair equal on that many is equal on all of some
        set joined on), and all its values."""
        present = self.p_codes >= 0
        frequent = np.minimum(present[self.frequent].sum(axis=0, dtype=np.int64), self.near_columns - 1)
        return frequent, present.sum(axis=0, dtype=np.int64)

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


def _join_size(p_codes: np.ndarray, g_codes: np.ndarray) -> int:
    """How many pairs `_join` finds on these columns, without listing them."""
    p_codes = p_codes[:, (p_codes >= 0).all(axis=0)]
    g_codes = g_codes[:, (g_codes >= 0).all(axis=0)]
    keys = _row_keys(np.concatenate([p_codes, g_codes], axis=1))
    p_keys, g_keys = keys[: p_codes.shape[1]], keys[p_codes.shape[1] :]
    top = int(keys.max(initial=0)) + 1
    if top <= DISTINCT_TABLE_SIZE * (len(keys) + 1):  # small keys: count each side's by a table
        return int(np.bincount(p_keys, minlength=top) @ np.bincount(g_keys, minlength=top))
    g_keys = np.sort(g_keys)
    return int((np.searchsorted(g_keys, p_keys, side="right") - np.searchsorted(g_keys, p_keys)).sum())


def _row_keys(codes: np.ndarray) -> np.ndarray:
    """One integer per column of `codes` (non-negative), equal exactly when the columns are equal."""
    radices = (codes.max(axis=1, initial=0).astype(np.int64) + 1).tolist()
    if math.prod(radices) >= 2**62:
        inverse: np.ndarray = np.unique(codes, axis=1, return_inverse=True)[1]
        return inverse.reshape(-1)
    places = [math.prod(radices[row + 1 :]) for row in range(len(radices))]
    keys: np.ndarray = np.array(places, dtype=np.int64) @ codes
    return keys


def _distinct(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """One index of each distinct key, and the distinct key of each (an id 0, 1, ...): by a table when
    the keys are small, several times faster than np.unique's sort."""
    top = int(keys.max(initial=0))
    if top > DISTINCT_TABLE_SIZE * (len(keys) + 1):
        return np.unique(keys, return_index=True, return_inverse=True)[1:]
    present = np.zeros(top + 1, dtype=bool)
    present[keys] = True
    ids = (np.cumsum(present) - 1)[keys]
    one = np.empty(int(ids.max(initial=-1)) + 1, dtype=np.int64)
    one[ids] = np.arange(len(keys))
    return one, ids


def _unique_pairs(found: list[tuple[np.ndarray, np.ndarray]], m: int) -> tuple[np.ndarray, np.ndarray]:
    if not found:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    flat = np.concatenate([i.astype(np.int64) * m + j for i, j in found])
    flat.sort()  # then drop repeats: several times faster than np.unique's hashing on these sizes
    if len(flat):
        flat = flat[np.concatenate([[True], flat[1:] != flat[:-1]])]
    return flat // m, flat % m


def lowest_listed(indptr: np.ndarray, costs: np.ndarray) -> np.ndarray:
    """Each row's lowest listed cost (rows listed as CSR `indptr`/`costs`; inf for a row with none)."""
    best = np.full(len(indptr) - 1, INF)
    listed = np.flatnonzero(np.diff(indptr))
    best[listed] = np.minimum.reduceat(costs, indptr[listed])
    return best


def beyond_their_floors(indptr: np.ndarray, costs: np.ndarray, floors: list[float]) -> set[int]:
    """Rows (listed as CSR `indptr`/`costs`) whose lowest listed cost does not beat their floor (a
    row with none listed: never): a search from them would price them in full, so do it at once."""
    return set(np.flatnonzero(np.array(floors) <= lowest_listed(indptr, costs)).tolist())


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

    def row_values(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """What the best pairing of the nested rows adds to every pair of these rows with every column
        (`matched · scale + shared`): the places in `rows` of the rows holding nested rows (the others
        add nothing), and their values (those rows × columns), rows with as many nested rows at once."""
        heights = self.r_len[rows]
        holding = np.flatnonzero(heights)
        values = np.zeros((len(holding), len(self.c_len)), dtype=np.int64)
        heights = heights[holding]
        for k in np.unique(heights).tolist():
            group = np.flatnonzero(heights == k)
            step = max(1, NESTED_CHUNK_CELLS // (k * max(len(self.c_len), 1) * NESTED_PADDED_WIDTH))
            for start in range(0, len(group), step):
                part = group[start : start + step]
                values[part] = self._best_pairings(self.r_start[rows[holding[part]]][:, None] + np.arange(k))
        return holding, values

    def _best_pairings(self, inner_rows: np.ndarray) -> np.ndarray:
        """The best-pairing value of each row's k nested rows (`inner_rows`: rows × k) with each
        column's span of nested rows. A nested row weighs the same as any other of its kind (equal
        values), so only one of each kind is priced. One row: the span's maximum. More: a span's
        value depends only on the weights of its nested rows against the k rows (a zero column added
        to a narrow span changes nothing), so spans whose nested rows weigh the same, in the order of
        their kinds, are paired once: a row's spans have few distinct such weights."""
        count, k = inner_rows.shape
        kinds = self._kinds[1]
        codes = self._codes(inner_rows.ravel())
        weight_of = self.inner.code_weights
        values = np.zeros((count, len(self.c_len)), dtype=np.int64)
        if k == 1:
            filled = np.flatnonzero(self.c_len)
            if len(filled):
                weights = weight_of[codes[:, kinds[: self.inner.m]]]
                values[:, filled] = np.maximum.reduceat(weights, self.c_start[filled], axis=1)
            return values
        codes = codes.reshape(count, k, -1)
        vectors = _distinct(_row_keys(codes.transpose(1, 0, 2).reshape(k, -1)))[1].reshape(count, -1)
        if count > 1:  # each row's own vectors numbered 0, 1, ... (a row has few): its spans' keys stay small
            seen = np.zeros((count, int(vectors.max()) + 1), dtype=bool)
            seen[np.arange(count)[:, None], vectors] = True
            vectors = np.take_along_axis(np.cumsum(seen, axis=1) - 1, vectors, axis=1)
        for members, span_kinds in self._column_blocks:
            width = len(span_kinds)
            spans: np.ndarray = vectors[:, span_kinds]  # (row, slot, member)
            if count > 1:  # the row is part of a span's key
                row = np.broadcast_to(np.arange(count)[:, None, None], (count, 1, len(members)))
                spans = np.concatenate([row, spans], axis=1)
            one, which = _distinct(_row_keys(spans.transpose(1, 0, 2).reshape(spans.shape[1], -1)))
            rows, member = np.divmod(one, len(members))
            block_kinds = span_kinds[:, member].T[:, None, :]
            blocks = weight_of[codes[rows[:, None, None], np.arange(k)[None, :, None], block_kinds]]
            found = assignment_values(blocks if k <= width else blocks.transpose(0, 2, 1))
            values[:, members] = found[which].reshape(count, len(members))
        return values

    def _codes(self, inner_rows: np.ndarray) -> np.ndarray:
        """`row_codes` of these nested pred rows against one nested gold row of each kind, then the
        zero kind. Nested pred rows repeat frequent values too: each kind is priced once."""
        one_of_kind, kind_of_row = self._pred_kinds
        wanted = kind_of_row[inner_rows]
        priced, table = self._kind_codes
        new = np.unique(wanted[~priced[wanted]])
        if len(new):
            codes = self.inner.row_codes(one_of_kind[new], self._kinds[0])
            if len(table) < len(one_of_kind):  # the first kinds priced: the table's type is theirs
                table = np.zeros((len(one_of_kind), codes.shape[1] + 1), dtype=codes.dtype)
                self._kind_codes = priced, table
            table[new, :-1] = codes  # the zero kind's column stays 0
            priced[new] = True
        kind_codes: np.ndarray = table[wanted]
        return kind_codes

    @cached_property
    def _kind_codes(self) -> tuple[np.ndarray, np.ndarray]:
        """Which kinds of nested pred rows `_codes` has priced, and their codes (kinds × columns + 1),
        filled in as kinds are asked for (an empty table until the first are)."""
        return np.zeros(len(self._pred_kinds[0]), dtype=bool), np.zeros((0, 0), dtype=np.int16)

    @cached_property
    def _pred_kinds(self) -> tuple[np.ndarray, np.ndarray]:
        """One nested pred row of each kind (the same values in every column), and each one's kind."""
        return _distinct(_row_keys(self.inner.p_codes.astype(np.int64) + 1))

    @cached_property
    def _kinds(self) -> tuple[np.ndarray, np.ndarray]:
        """One nested gold row of each kind (the same values in every column), and the kind of each
        nested gold row, then of the zero column `inner.m` that pads narrow spans (a kind of its own)."""
        one, kinds = _distinct(_row_keys(self.inner.g_codes.astype(np.int64) + 2))
        return one, np.append(kinds, len(one))

    @cached_property
    def _column_blocks(self) -> list[tuple[np.ndarray, np.ndarray]]:
        """Columns with nested rows, grouped to be cut as blocks of one width: each group's columns and
        the kinds of their nested rows (width × columns, each column's sorted), narrow spans padded
        with the zero kind."""
        widths, kinds = self.c_len, self._kinds[1]
        narrow = np.flatnonzero((widths > 0) & (widths <= NESTED_PADDED_WIDTH))
        groups = []
        if len(narrow):
            offsets = np.arange(int(widths[narrow].max()))
            cols = np.where(offsets < widths[narrow][:, None], self.c_start[narrow][:, None] + offsets, self.inner.m)
            groups.append((narrow, cols))
        for width in np.unique(widths[widths > NESTED_PADDED_WIDTH]).tolist():
            members = np.flatnonzero(widths == width)
            groups.append((members, self.c_start[members][:, None] + np.arange(width)))
        return [(members, np.ascontiguousarray(np.sort(kinds[cols], axis=1).T)) for members, cols in groups]


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
        """Every pair of these rows with every column, as a len(rows) × m matrix: `weights` summed as
        values, a pair matching where its flat values or any nested pairing match."""
        codes = self.flat.row_codes(rows)
        weights: np.ndarray = self.flat.code_weights[codes]
        if not self.nested:
            return weights
        # Rows holding nested rows (few, mostly) again: a pair matching only in a nested pairing
        # weighs its flat values too.
        found = [nested.row_values(rows) for nested in self.nested]
        holding = np.unique(np.concatenate([places for places, _ in found]))
        held = codes[holding]
        values = self.flat.code_values[held]
        matches = held > len(self.flat.p_codes)  # at least one equal value
        for places, more in found:
            at = np.searchsorted(holding, places)
            values[at] += more
            matches[at] |= more >= self.scale
        values *= matches
        weights[holding] = values
        return weights

    @cached_property
    def bounds(self) -> np.ndarray:
        """The most a pair sharing no rare value can weigh: it can match each frequent value and each
        nested value at most once."""
        matched, shared = self.flat.bound_counts()
        for nested in self.nested:
            matched += nested.r_values
            shared += nested.r_values
        return _weights(matched, shared, self.scale)
