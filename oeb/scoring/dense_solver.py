"""The reference's dense solving of a large block, without pricing every pair.

Up to 64 million cells the reference prices every pair of rows into a matrix and solves it with
scipy's `linear_sum_assignment` (a shortest augmenting path, one search per row of the smaller
side; SCORING.md 5.5). Pricing is most of the work: every pair's shared values, and for rows with
nested arrays the best pairing of their nested rows. `dense_pairing` runs scipy's algorithm step
for step (rows in the same order, the same tie rule, the same order of its list of columns) on
exact weights for the pairs that share a rare value and a bound for every other pair of a row
(`oeb.scoring.blocks`): a search's choice depends on a pair only when the pair's distance reaches
the search's minimum, and while the lower bound of every unpriced pair of every row the search
has scanned stays above it, they cannot change a step. Otherwise those rows are priced in full and
the search runs again (a search changes nothing before it ends). When too many rows would be
priced in full it gives up (None) and the caller prices the whole matrix.

All weights are integers far below 2**53, so every distance and dual is an exact float: scipy's
shift of the costs by their minimum changes no comparison and is left out.
"""

from __future__ import annotations

import numpy as np

from oeb.scoring.blocks import INF, PricedBlock, beyond_their_floors

# Give up when more than this share of the rows (and at least `MIN_PRICED_ROWS`) are priced in full.
PRICED_SHARE = 0.25
MIN_PRICED_ROWS = 64


class _TooMuchPricing(Exception):
    pass


class _Rows:
    """Each row's pairs as scipy's costs (`-W`): the rare-value pairs listed with a floor (`-bound`)
    under the cost of every other pair, or, once priced in full, the cost of every column."""

    def __init__(self, block: PricedBlock) -> None:
        self.block = block
        self.n, self.m = block.n, block.m
        i, j = block.rare_pairs
        self.indptr = np.searchsorted(i, np.arange(self.n + 1))
        self.cols = j
        self.costs = -block.weights(i, j).astype(np.float64)
        self.floors = (-block.bounds.astype(np.float64)).tolist()
        self.full: dict[int, np.ndarray] = {}
        self.limit = max(MIN_PRICED_ROWS, int(PRICED_SHARE * self.n))

    def row(self, i: int) -> tuple[np.ndarray | None, np.ndarray, float]:
        """Listed columns, their costs and the floor; or None, every column's cost and inf."""
        found = self.full.get(i)
        if found is not None:
            return None, found, INF
        low, high = self.indptr[i], self.indptr[i + 1]
        return self.cols[low:high], self.costs[low:high], self.floors[i]

    def price_in_full(self, rows: set[int]) -> None:
        new = np.array(sorted(rows - self.full.keys()), dtype=np.int64)
        if len(self.full) + len(new) > self.limit:
            raise _TooMuchPricing
        for i, weights in zip(new.tolist(), self.block.row_weights(new), strict=True):
            self.full[i] = -weights.astype(np.float64)


def dense_pairing(block: PricedBlock) -> list[tuple[int, int]] | None:
    """What `linear_sum_assignment(-W)` returns for the block's rows (n <= m): each row's column,
    as pairs; None when too many rows would have to be priced in full."""
    rows = _Rows(block)
    solver = _Solver(rows)
    try:
        rows.price_in_full(beyond_their_floors(rows.indptr, rows.costs, rows.floors))
        for current in range(rows.n):
            while unsure := solver.search(current):
                rows.price_in_full(unsure)
    except _TooMuchPricing:
        return None
    return list(enumerate(solver.col4row.tolist()))


class _Solver:
    """scipy's `solve` of rectangular_lsap.cpp: duals, assignments, one search per row."""

    def __init__(self, rows: _Rows) -> None:
        self.rows = rows
        self.nc = rows.m
        self.u = np.zeros(rows.n, dtype=np.float64)
        self.v = np.zeros(rows.m, dtype=np.float64)
        self.col4row = np.full(rows.n, -1, dtype=np.int64)
        self.row4col = np.full(rows.m, -1, dtype=np.int64)

    def search(self, current: int) -> set[int]:
        """Find and apply row `current`'s shortest augmenting path; or, changing nothing, return the
        rows whose unpriced pairs might have changed it."""
        if self._one_step(current):
            return set()
        return _Search(self, current).run()

    def _one_step(self, current: int) -> bool:
        """The common case, cheaply: the search's first step reaches a free column among the listed
        pairs of the row (every other pair too far). u[current] is 0 and no column has moved yet."""
        cols, costs, floor = self.rows.row(current)
        if cols is None or not len(cols):
            return False
        r = costs - self.v[cols]
        lowest = r.min()
        if not floor > lowest:
            return False
        ties = cols[r == lowest]
        free = ties[self.row4col[ties] == -1]
        # The list of columns starts as nc-1 ... 0: the last free one in it is the lowest column.
        j = int(free[0]) if len(free) else int(ties[-1])
        if self.row4col[j] != -1:
            return False
        self.u[current] += lowest
        self.row4col[j], self.col4row[current] = current, j
        return True


class _Search:
    """One `augmenting_path` of scipy's solver, then its dual updates and augmentation."""

    def __init__(self, solver: _Solver, current: int) -> None:
        self.solver = solver
        self.current = current
        nc = solver.nc
        self.spc = np.full(nc, INF)  # shortest path costs; inf here may stand for an unpriced pair
        self.open_spc = np.full(nc, INF)  # the same, inf for columns taken out of the list
        self.path = np.full(nc, -1, dtype=np.int64)
        self.done = np.zeros(nc, dtype=bool)  # SC: columns taken out of the list
        self.rows_seen: list[int] = []  # SR
        self.columns_seen: list[int] = []
        self.position = np.arange(nc - 1, -1, -1)  # each column's place in scipy's list of columns
        self.at = np.arange(nc - 1, -1, -1)  # the column at each place
        self.remaining = nc
        self.floors: list[tuple[int, float]] = []  # rows scanned with unpriced pairs, and their floor
        self.lowest_floor = INF

    def run(self) -> set[int]:
        solver, spc, open_spc = self.solver, self.spc, self.open_spc
        u, v = solver.u, solver.v
        min_val = 0.0
        i = self.current
        while True:
            self.rows_seen.append(i)
            cols, costs, floor = solver.rows.row(i)
            if cols is None:
                r = min_val + costs - u[i] - v
                better = np.flatnonzero((r < spc) & ~self.done)
                r = r[better]
            else:
                open_ = ~self.done[cols]
                cols, costs = cols[open_], costs[open_]
                r = min_val + costs - u[i] - v[cols]
                keep = r < spc[cols]
                better, r = cols[keep], r[keep]
                low = min_val + floor - u[i]
                self.floors.append((i, low))
                self.lowest_floor = min(self.lowest_floor, low)
            self.path[better], spc[better], open_spc[better] = i, r, r
            lowest = open_spc.min()
            if not self.lowest_floor > lowest:
                return {row for row, low in self.floors if not low > lowest}
            j = self._pick(np.flatnonzero(open_spc == lowest))
            min_val = lowest
            self._take_out(j)
            if solver.row4col[j] == -1:
                self._apply(j, min_val)
                return set()
            i = int(solver.row4col[j])

    def _pick(self, ties: np.ndarray) -> int:
        """scipy's choice among the columns at the lowest distance: the last free one in its list of
        columns, else the first one."""
        positions = self.position[ties]
        free = self.solver.row4col[ties] == -1
        if free.any():
            return int(ties[free][np.argmax(positions[free])])
        return int(ties[np.argmin(positions)])

    def _take_out(self, j: int) -> None:
        """`remaining[index] = remaining[--num_remaining]`: the last column of the list moves to j's place."""
        self.done[j] = True
        self.open_spc[j] = INF
        self.columns_seen.append(j)
        self.remaining -= 1
        here, last = self.position[j], self.at[self.remaining]
        self.at[here], self.position[last] = last, here

    def _apply(self, sink: int, min_val: float) -> None:
        solver, spc = self.solver, self.spc
        solver.u[self.current] += min_val
        for i in self.rows_seen[1:]:
            solver.u[i] += min_val - spc[solver.col4row[i]]
        for j in self.columns_seen:
            solver.v[j] -= min_val - spc[j]
        j = sink
        while True:
            i = int(self.path[j])
            solver.row4col[j] = i
            solver.col4row[i], j = j, int(solver.col4row[i])
            if i == self.current:
                return
