"""The reference's dense solving of a large block, without pricing every pair.

Up to 64 million cells the reference prices every pair of rows into a matrix and solves it with
scipy's `linear_sum_assignment` (a shortest augmenting path, one search per row of the smaller
side). Pricing is most of the work: every pair's shared values, and for rows with
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

import heapq
from typing import cast

import numpy as np

from oeb.scoring._blocks import INF, PricedBlock, beyond_their_floors, lowest_listed

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
        # What a search scans of each row: its listed columns, their costs and its floor, as lists (a
        # handful of pairs, faster in plain Python), made when first scanned; once priced in full,
        # None, every column's cost, inf.
        self._bounds, self._cols, self._costs = self.indptr.tolist(), self.cols.tolist(), self.costs.tolist()
        self.row: list[tuple[list[int], list[float], float] | tuple[None, np.ndarray, float] | None] = [None] * self.n
        # Each row's first step while no dual of its listed columns has moved (most rows: a search
        # lowers only the duals of the columns it passes through, and a row's own is 0 until it is
        # searched): its lowest listed cost and the columns there, found for all rows at once.
        lowest = lowest_listed(self.indptr, self.costs)
        at_lowest = np.flatnonzero(self.costs == lowest[i])
        self.lowest = lowest.tolist()
        self.lowest_cols = j[at_lowest].tolist()
        self.lowest_bounds = np.searchsorted(i[at_lowest], np.arange(self.n + 1)).tolist()
        # Which rows list each column (CSC), to mark rows whose first step is no longer that one.
        by_column = np.argsort(j, kind="stable")
        self.column_bounds = np.searchsorted(j[by_column], np.arange(self.m + 1)).tolist()
        self.listing = i[by_column].tolist()
        self.moved = [False] * self.n  # rows priced in full or listing a column whose dual moved
        self.column_moved = [False] * self.m

    def scanned(self, i: int) -> tuple[list[int], list[float], float] | tuple[None, np.ndarray, float]:
        """Row i as a search scans it."""
        found = self.row[i]
        if found is None:
            low, high = self._bounds[i], self._bounds[i + 1]
            found = self.row[i] = self._cols[low:high], self._costs[low:high], self.floors[i]
        return found

    def dual_moved(self, j: int) -> None:
        """Column j's dual has moved: the rows listing it need their first step found again."""
        if not self.column_moved[j]:
            self.column_moved[j] = True
            moved = self.moved
            for i in self.listing[self.column_bounds[j] : self.column_bounds[j + 1]]:
                moved[i] = True

    def price_in_full(self, rows: set[int]) -> None:
        new = np.array(sorted(rows - self.full.keys()), dtype=np.int64)
        if len(self.full) + len(new) > self.limit:
            raise _TooMuchPricing
        for i, weights in zip(new.tolist(), self.block.row_weights(new), strict=True):
            self.full[i] = -weights.astype(np.float64)
            self.row[i] = None, self.full[i], INF
            self.moved[i] = True


def dense_pairing(block: PricedBlock) -> list[tuple[int, int]] | None:
    """What `linear_sum_assignment(-W)` returns for the block's rows (n <= m): each row's column,
    as pairs; None when too many rows would have to be priced in full."""
    rows = _Rows(block)
    solver = _Solver(rows)
    try:
        rows.price_in_full(beyond_their_floors(rows.indptr, rows.costs, rows.floors))
        for current in range(rows.n):
            solver.search(current)
    except _TooMuchPricing:
        return None
    return list(enumerate(solver.col4row))


class _Solver:
    """scipy's `solve` of rectangular_lsap.cpp: duals, assignments, one search per row."""

    def __init__(self, rows: _Rows) -> None:
        self.rows = rows
        self.nc = rows.m
        # Lists where only single entries are read (faster in plain Python); v and row4col both ways,
        # as rows priced in full read all of v and the tied columns many entries of row4col.
        self.u = [0.0] * rows.n
        self.v = np.zeros(rows.m, dtype=np.float64)
        self.v_list = [0.0] * rows.m
        self.col4row = [-1] * rows.n
        self.row4col = np.full(rows.m, -1, dtype=np.int64)
        self.row4col_list = [-1] * rows.m
        # What every search starts from (copied, several times cheaper than made afresh): no column
        # reached, and scipy's list of columns, nc-1 ... 0 (each column's place, the column at each place).
        self.no_costs = np.full(rows.m, INF)
        self.places = np.arange(rows.m - 1, -1, -1)

    def search(self, current: int) -> None:
        """Find and apply row `current`'s shortest augmenting path."""
        if not self._one_step(current):
            _Search(self, current).run()

    def _one_step(self, current: int) -> bool:
        """The common case, cheaply: the search's first step reaches a free column among the listed
        pairs of the row (every other pair too far). u[current] is 0 and no column has moved yet."""
        rows, row4col = self.rows, self.row4col_list
        if rows.moved[current]:
            cols, costs, floor = rows.scanned(current)
            if not cols:
                return False
            v = self.v_list
            r = [cost - v[j] for j, cost in zip(cols, costs, strict=True)]
            lowest = min(r)
            ties = [j for j, x in zip(cols, r, strict=True) if x == lowest]
        else:  # no dual of its columns has moved: the step found for every row at the start
            lowest, floor = rows.lowest[current], rows.floors[current]
            ties = rows.lowest_cols[rows.lowest_bounds[current] : rows.lowest_bounds[current + 1]]
        if not floor > lowest:  # also a row with none listed (lowest inf)
            return False
        # The list of columns starts as nc-1 ... 0: the last free one in it is the lowest column.
        for j in ties:
            if row4col[j] == -1:
                break
        else:
            return False
        self.u[current] += lowest
        self.row4col[j] = self.row4col_list[j] = current
        self.col4row[current] = j
        return True


class _Search:
    """One `augmenting_path` of scipy's solver, then its dual updates and augmentation.

    scipy scans every remaining column at every step for the lowest distance; here a step costs
    about what its row lists. The open columns at the lowest distance (the tied ones) are kept
    between steps: a step takes one out, a scanned row adds those it lowers to that distance (or
    starts them afresh below it), and only when none is left, or a row priced in full lowers a
    column to it, are they found again among all the columns (a row priced in full costs a few
    passes over the columns anyway). scipy picks among them by their place in its list of columns,
    where a step moves one column (the last) to the place of the one taken out: a column never
    moved is at place nc-1-column, so those come in order of their index (`tied`, walked from its
    end), the few moved ones from a heap of (place, column) updated at each move.
    """

    def __init__(self, solver: _Solver, current: int) -> None:
        self.solver = solver
        self.current = current
        nc = self.nc = solver.nc
        # Shortest path costs of the open columns (inf: not reached, or through an unpriced pair);
        # nan once taken out of the list: no scan lowers it, no lowest distance counts it.
        self.spc = solver.no_costs.copy()
        self.path = np.empty(nc, dtype=np.int64)
        self.position = solver.places.copy()  # each column's place in scipy's list of columns
        self.at = solver.places.copy()  # the column at each place
        self.rows_seen: list[int] = []  # SR
        self.columns_seen: list[int] = []  # SC, in the order taken out
        self.taken_at: list[float] = []  # the distance each of columns_seen was taken out at
        # Rows scanned with unpriced pairs: each one's floor (the least distance of those pairs) and base.
        self.floors: list[tuple[int, float, float]] = []
        self.lowest_floor = INF
        # Every open column is at `level` or beyond (None: not known). Those at `level` are the free
        # ones in `tied_free`, and the others in `tied[: next_tied + 1]` or the heap `tied_moved`;
        # entries no longer at `level` (taken out) or, in the heap, at that place are stale. At inf
        # nothing is kept: no step picks there.
        self.level: float | None = INF
        self.tied: list[int] = []
        self.next_tied = -1
        self.tied_moved: list[tuple[int, int]] = []
        self.tied_free: list[int] = []

    def run(self) -> None:
        solver = self.solver
        row4col, scanned = solver.row4col_list, solver.rows.scanned
        spc, position, at, columns_seen, taken_at = self.spc, self.position, self.at, self.columns_seen, self.taken_at
        remaining = self.nc  # columns still in the list
        min_val = 0.0
        i = self.current
        while True:
            self.rows_seen.append(i)
            cols, costs, floor = scanned(i)
            if cols is None:
                self._scan_full(i, cast(np.ndarray, costs), min_val)
            else:
                self._scan_listed(i, cols, cast(list[float], costs), floor, min_val)
            lowest, j = self._lowest()
            while not self.lowest_floor > lowest:
                self._price_unsure(lowest)
                lowest, j = self._lowest()
            min_val = lowest
            # Take j out: `remaining[index] = remaining[--num_remaining]` moves the last column to j's place.
            spc[j] = np.nan
            columns_seen.append(j)
            taken_at.append(min_val)
            remaining -= 1
            here, last = position[j], at[remaining]
            at[here], position[last] = last, here
            if last != j and spc[last] == self.level:
                heapq.heappush(self.tied_moved, (int(here), int(last)))
            i = row4col[j]
            if i == -1:
                self._apply(j, min_val)
                return

    def _scan_listed(self, i: int, cols: list[int], costs: list[float], floor: float, min_val: float) -> None:
        """Row i's listed pairs, one by one; its floor bounds the distance of every other pair."""
        spc, path, v = self.spc, self.path, self.solver.v_list
        base = min_val - self.solver.u[i]  # exact: every term is an integer
        low = base + floor
        self.floors.append((i, low, base))
        if low < self.lowest_floor:
            self.lowest_floor = low
        for j, cost in zip(cols, costs, strict=True):
            r = base + cost - v[j]
            if r < spc[j]:  # never for a column taken out (nan)
                path[j], spc[j] = i, r
                if self.level is not None and not r > self.level:
                    self._tie(j, r, self.level)

    def _price_unsure(self, lowest: float) -> None:
        """Price in full the scanned rows whose unpriced pairs might reach `lowest`, and go on as if
        they had been priced before the search began. That search would have taken the same
        columns up to here: at each step its lowest distance was below every such row's floor,
        which bounds those pairs' distances (a dual v only falls), so they only lower the
        distances of open columns, as each row's scan (in order, the first row to reach the least
        distance kept) would have. Saves searching again from the start."""
        unsure = [(i, base) for i, low, base in self.floors if not low > lowest]
        rows = self.solver.rows
        rows.price_in_full({i for i, _ in unsure})
        self.floors = [entry for entry in self.floors if entry[1] > lowest]
        self.lowest_floor = min((low for _, low, _ in self.floors), default=INF)
        spc, path = self.spc, self.path
        rank = {row: k for k, row in enumerate(self.rows_seen)}
        reached = np.flatnonzero(spc < INF)  # nan: taken out
        found_at = np.full(self.nc, len(rank))  # the place in the scans of the row each distance is from
        found_at[reached] = [rank[row] for row in path[reached].tolist()]
        for i, base in sorted(unsure, key=lambda entry: rank[entry[0]]):
            r = rows.full[i] - self.solver.v
            r += base
            better = (r < spc) | ((r == spc) & (rank[i] < found_at))  # never for a column taken out (nan)
            spc[better] = r[better]
            path[better] = i
            found_at[better] = rank[i]
        self.level = None

    def _tie(self, j: int, r: float, level: float) -> None:
        """Column j, just lowered to r, joins the tied columns at `level` (alone if r is below them)."""
        if r < level:
            self.level, self.tied, self.next_tied, self.tied_moved, self.tied_free = r, [], -1, [], []
        if self.solver.row4col_list[j] == -1:
            self.tied_free.append(j)
        else:
            heapq.heappush(self.tied_moved, (int(self.position[j]), j))

    def _scan_full(self, i: int, costs: np.ndarray, min_val: float) -> None:
        """Row i, priced in full, against every column; the tied columns are found again if it
        brings any to their distance."""
        r = costs - self.solver.v
        r += min_val - self.solver.u[i]
        better = r < self.spc  # never for a column taken out (nan)
        np.minimum(self.spc, r, out=self.spc)
        np.putmask(self.path, better, i)
        if self.level is not None and (better & (r <= self.level)).any():
            self.level = None

    def _lowest(self) -> tuple[float, int]:
        """The lowest distance of an open column, and scipy's choice among the columns there: the
        last free one in its list of columns, else the first one (-1 at inf)."""
        level = self.level
        if level == INF:
            return INF, -1
        if level is not None:
            if self.tied_free:
                return level, max(self.tied_free, key=self.position.__getitem__)
            j = self._first_tied()
            if j >= 0:
                return level, j
        return self._find_tied()

    def _first_tied(self) -> int:
        """The tied column first in scipy's list (-1: none left). A moved column still in `tied`
        looks later there than it is, but its entry in the heap, truly earlier, comes first."""
        spc, position, level = self.spc, self.position, self.level
        tied, k = self.tied, self.next_tied
        while k >= 0 and spc[tied[k]] != level:
            k -= 1
        self.next_tied = k
        heap = self.tied_moved
        while heap and (spc[heap[0][1]] != level or position[heap[0][1]] != heap[0][0]):
            heapq.heappop(heap)
        if k >= 0 and not (heap and heap[0][0] < self.nc - 1 - tied[k]):
            return tied[k]
        return heap[0][1] if heap else -1

    def _find_tied(self) -> tuple[float, int]:
        """`_lowest` from all the columns."""
        spc = self.spc
        level = float(np.fmin.reduce(spc))
        if not level < INF:  # nothing reached (nan: every column taken out)
            self.level = INF
            return INF, -1
        self.level = level
        tied = np.flatnonzero(spc == level)
        free = tied[self.solver.row4col[tied] == -1]
        if len(free):
            j = int(free[np.argmax(self.position[free])])
            self.tied, self.next_tied, self.tied_moved, self.tied_free = [], -1, [], [j]
            return level, j
        self.tied, self.next_tied, self.tied_free = tied.tolist(), len(tied) - 1, []
        places = self.position[tied]
        moved = places != self.nc - 1 - tied
        self.tied_moved = list(zip(places[moved].tolist(), tied[moved].tolist(), strict=True))
        heapq.heapify(self.tied_moved)
        return level, self._first_tied()

    def _apply(self, sink: int, min_val: float) -> None:
        solver = self.solver
        solver.u[self.current] += min_val
        # Row rows_seen[k + 1] was reached through column columns_seen[k].
        for i, spc in zip(self.rows_seen[1:], self.taken_at, strict=False):
            solver.u[i] += min_val - spc
        for j, spc in zip(self.columns_seen, self.taken_at, strict=True):
            if spc != min_val:
                solver.v_list[j] -= min_val - spc
                solver.v[j] = solver.v_list[j]
                solver.rows.dual_moved(j)
        j = sink
        while True:
            i = int(self.path[j])
            solver.row4col[j] = solver.row4col_list[j] = i
            solver.col4row[i], j = j, solver.col4row[i]
            if i == self.current:
                return
