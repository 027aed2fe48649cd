"""The reference's sparse solving of a huge flat block, without its n × (m + n) matrix.

Past 64 million cells the reference solves `[W·(n+m+1) | I_n]` with scipy's
`min_weight_full_bipartite_matching` (LAPJVsp). Which of several equal pairings it
returns depends on the solver's path through the whole matrix, so `sparse_pairing` runs that very
algorithm, step for step (the same order of rows and columns, the same float operations), but
prices a row's pairs only as far as the algorithm can see them:

- every pair sharing a value of a rare column is priced exactly (a join on that column);
- any other pair of pred row `i` shares only values of frequent columns, so it weighs at most
  `bound[i]`, and its reduced cost in a search is at least a known floor. The algorithm's steps
  depend on an edge only when the edge's reduced cost reaches the search's minimum distance; while
  the floor of every row the search has scanned stays above that minimum, the unpriced pairs cannot
  change a single step. When a floor reaches it, that row is priced in full and the search is run
  again (nothing is changed before a search ends, so running it again is exact).

Rows of a clean table pair with their twin through a rare value (an id), far above any floor, and
are never priced in full; duplicates, invented rows and the rows they contend with are.
"""

from __future__ import annotations

from collections.abc import Iterable
from itertools import pairwise

import numpy as np

from oeb.scoring._blocks import INF, PRICE_CHUNK_CELLS, Block, beyond_their_floors

# Pairs of rows priced in full kept for later scans (two bytes each on most tables); past this,
# rows are priced again at each scan.
KEPT_CELLS = 600_000_000
# Rows with at most this many edges are scanned edge by edge, larger ones with numpy.
FEW_EDGES = 24


class _Edges:
    """Each pred row's edges as the solver sees them: gold columns ascending, then the row's escape
    column, with costs `-(W·(n+m+1))` and `-1` (the reference's matrix, negated to minimise), and a
    floor under the cost of every pair not listed (inf when every pair is listed)."""

    def __init__(self, block: Block) -> None:
        self.block = block
        self.n, self.m = block.n, block.m
        self.factor = float(self.n + self.m + 1)
        i, j = block.rare_pairs
        # Listed edges of all rows in one CSR-like pair of arrays, each row's escape column last.
        self.indptr = np.searchsorted(i, np.arange(self.n + 1)) + np.arange(self.n + 1)
        escapes = self.indptr[1:] - 1
        listed = np.ones(self.indptr[-1], dtype=bool)
        listed[escapes] = False
        self.cols = np.empty(self.indptr[-1], dtype=np.int64)
        self.cols[listed], self.cols[escapes] = j, self.m + np.arange(self.n)
        self.costs = np.empty(self.indptr[-1], dtype=np.float64)
        self.costs[listed], self.costs[escapes] = self._costs(block.weights(i, j)), -1.0
        bounds = block.bounds
        self.floors = np.where(bounds > 0, -(bounds.astype(np.float64) * self.factor), INF).tolist()
        self.code_costs = block.code_costs(self.factor)
        self.full: dict[int, np.ndarray | None] = {}  # codes of rows priced in full; None: priced at each scan
        self.kept = 0
        # Each listed row's edges again as plain lists: a search's first step reads a handful of
        # edges, cheaper in Python than in numpy's calls.
        bounds, cols, costs = self.indptr.tolist(), self.cols.tolist(), self.costs.tolist()
        self.lists = [(cols[low:high], costs[low:high]) for low, high in pairwise(bounds)]

    def _costs(self, weights: np.ndarray) -> np.ndarray:
        return -(weights.astype(np.float64) * self.factor)

    def row(self, i: int) -> tuple[np.ndarray | None, np.ndarray, float]:
        """A listed row: its columns, their costs and its floor. A row priced in full: None, the
        cost of every gold column (inf where there is no edge; its escape is implied) and inf."""
        if i in self.full:
            codes = self.full[i]
            if codes is None:
                codes = self.block.row_codes(np.array([i]))[0]
            return None, self.code_costs.take(codes), INF
        low, high = self.indptr[i], self.indptr[i + 1]
        return self.cols[low:high], self.costs[low:high], self.floors[i]

    def price_in_full(self, rows: Iterable[int]) -> None:
        """Price these rows against every gold row: their floors no longer hold anything back. Past
        `KEPT_CELLS` a row is not kept but priced again each time it is scanned."""
        rows = np.array(sorted(set(rows) - self.full.keys()), dtype=np.int64)
        step = max(1, PRICE_CHUNK_CELLS // max(self.m, 1))
        for start in range(0, len(rows), step):
            part = rows[start : start + step]
            if self.kept + len(part) * self.m > KEPT_CELLS:
                self.full.update(dict.fromkeys(part.tolist()))
                continue
            self.full.update(zip(part.tolist(), self.block.row_codes(part), strict=True))
            self.kept += len(part) * self.m


def sparse_pairing(block: Block) -> list[tuple[int, int]]:
    """The pairs (pred index, gold index) the reference's sparse solver returns for this block."""
    edges = _Edges(block)
    edges.price_in_full(beyond_their_floors(edges.indptr, edges.costs, edges.floors))
    return [(i, j) for i, j in enumerate(lapjvsp(edges).tolist()) if j < edges.m]


def lapjvsp(edges: _Edges) -> np.ndarray:
    """scipy's LAPJVsp on the n × (m + n) graph `edges`: each row's column.

    A port of scipy's `_lapjvsp` for a graph with more columns than rows (where scipy skips the
    initialisation and searches from every row in order), reading rows through `edges`.
    """
    solver = _Solver(edges.n, edges.m + edges.n, edges)
    for i0 in range(edges.n):
        while unsure := solver.search(i0):
            edges.price_in_full(unsure)
    return solver.x


class _Search:
    """The state of one search: tentative distances, the row each column was reached from (and the
    cost of that edge), settled columns, and the columns at the current minimum still to scan."""

    def __init__(self, nc: int, i0: int, cols: np.ndarray, costs: np.ndarray, reduced: np.ndarray) -> None:
        self.d = np.full(nc, INF)
        self.lab = np.empty(nc, dtype=np.int64)
        self.lab_cost = np.empty(nc, dtype=np.float64)
        self.open = np.ones(nc, dtype=bool)  # not settled yet
        self.d[cols], self.lab[cols], self.lab_cost[cols] = reduced, i0, costs
        self.todo: list[int] = []
        self.scanned: list[int] = []
        self.last = 0  # columns scanned before the current minimum: their duals move at the end

    def settle(self, columns: np.ndarray) -> None:
        self.open[columns] = False
        self.todo.extend(columns.tolist())


class _Solver:
    def __init__(self, nr: int, nc: int, edges: _Edges) -> None:
        self.nc = nc
        self.edges = edges
        self.v = np.zeros(nc, dtype=np.float64)
        self.x = np.full(nr, -1, dtype=np.int64)
        self.y = np.full(nc, -1, dtype=np.int64)
        self.x_cost = np.zeros(nr, dtype=np.float64)  # the cost of each row's edge to its column
        self.v_list, self.y_list = [0.0] * nc, [-1] * nc  # the same as v and y, for single reads

    def search(self, i0: int) -> set[int]:
        """One shortest augmenting path from free row i0, applied; or, without changing anything,
        the rows whose unlisted edges might have changed it (to be priced in full first)."""
        if i0 not in self.edges.full:
            done = self._first_step(i0)
            if done is not None:
                return done
        v, y = self.v, self.y
        cols, costs, floor = self.edges.row(i0)
        if cols is None:
            cols = np.append(np.flatnonzero(costs != INF), self.edges.m + i0)
            costs = np.append(costs[cols[:-1]], -1.0)
        reduced = costs - v[cols]
        min_diff = reduced.min()
        if floor <= min_diff:
            return {i0}
        at_min = cols[reduced == min_diff]
        free = at_min[y[at_min] == -1]
        if len(free):
            self._assign(i0, int(free[0]), float(costs[np.searchsorted(cols, free[0])]))
            return set()
        search = _Search(self.nc, i0, cols, costs, reduced)
        search.settle(at_min)
        floors: list[tuple[int, float]] = [(i0, floor)] if floor != INF else []
        while True:
            j0 = search.todo.pop()
            i = int(y[j0])
            search.scanned.append(j0)
            h = self.x_cost[i] - v[j0] - min_diff
            cols, costs, floor = self.edges.row(i)
            if floor != INF:
                lowest = floor - h
                if lowest <= min_diff:
                    return {i}
                floors.append((i, lowest))
            if cols is None:
                sink = self._scan_all(search, i, costs, h, min_diff)
            elif len(cols) <= FEW_EDGES:
                sink = self._scan_few(search, i, *self.edges.lists[i], h, min_diff)
            else:
                sink = self._scan(search, i, cols, costs, h, min_diff)
            if sink >= 0:
                self._augment(search, i0, sink, min_diff)
                return set()
            if search.todo:
                continue
            search.last = len(search.scanned)
            candidates = search.open & (search.d != INF)
            min_diff = search.d[candidates].min()
            unsure = {row for row, lowest in floors if lowest <= min_diff}
            if unsure:
                return unsure
            at_min = np.nonzero(candidates & (search.d == min_diff))[0]
            free = at_min[y[at_min] == -1]
            if len(free):
                self._augment(search, i0, int(free[0]), min_diff)
                return set()
            search.settle(at_min)

    def _first_step(self, i0: int) -> set[int] | None:
        """The search's first step for a listed row, in plain Python: done (the row's floor reached,
        or a free column at the lowest reduced cost, taken) or None (a search is needed)."""
        cols, costs = self.edges.lists[i0]
        v, y = self.v_list, self.y_list
        reduced = [cost - v[j] for j, cost in zip(cols, costs, strict=True)]
        min_diff = min(reduced)
        if self.edges.floors[i0] <= min_diff:
            return {i0}
        for j, cost, r in zip(cols, costs, reduced, strict=True):
            if r == min_diff and y[j] == -1:
                self._assign(i0, j, cost)
                return set()
        return None

    def _assign(self, i: int, j: int, cost: float) -> None:
        self.y[j] = self.y_list[j] = i
        self.x[i], self.x_cost[i] = j, cost

    def _scan(self, search: _Search, i: int, cols: np.ndarray, costs: np.ndarray, h: float, min_diff: float) -> int:
        """Relax row i's edges (`h`: its offset): the first free column reached at `min_diff`, else -1
        with the other columns reached there settled."""
        open_ = search.open[cols]
        cols, costs = cols[open_], costs[open_]
        vj = costs - self.v[cols] - h
        better = vj < search.d[cols]
        cols, costs, vj = cols[better], costs[better], vj[better]
        search.d[cols], search.lab[cols], search.lab_cost[cols] = vj, i, costs
        reached = cols[vj == min_diff]
        free = reached[self.y[reached] == -1]
        if len(free):
            return int(free[0])
        search.settle(reached)
        return -1

    def _scan_all(self, search: _Search, i: int, costs: np.ndarray, h: float, min_diff: float) -> int:
        """`_scan` for a row priced in full: its cost for every gold column, then its escape."""
        m = len(costs)
        vj = costs - self.v[:m]
        vj -= h
        better = vj < search.d[:m]
        better &= search.open[:m]
        if better.any():  # most scans of a row priced in full lower no column: nothing to update
            cols = np.flatnonzero(better)
            vj = vj[cols]
            search.d[cols], search.lab[cols], search.lab_cost[cols] = vj, i, costs[cols]
            reached = cols[vj == min_diff]
            free = reached[self.y[reached] == -1]
            if len(free):
                return int(free[0])
            search.settle(reached)
        return self._scan_few(search, i, [m + i], [-1.0], h, min_diff)

    def _scan_few(self, search: _Search, i: int, cols: list[int], costs: list[float], h: float, min_diff: float) -> int:
        """`_scan` edge by edge, as scipy does: cheaper than numpy's calls for a few edges."""
        v, y, d, open_ = self.v_list, self.y_list, search.d, search.open
        for j, cost in zip(cols, costs, strict=True):
            if not open_[j]:
                continue
            vj = cost - v[j] - h
            if vj < d[j]:
                d[j], search.lab[j], search.lab_cost[j] = vj, i, cost
                if vj == min_diff:
                    if y[j] == -1:
                        return j
                    open_[j] = False
                    search.todo.append(j)
        return -1

    def _augment(self, search: _Search, i0: int, sink: int, min_diff: float) -> None:
        """Move the duals of the columns scanned before the last minimum, then flip the path to `sink`."""
        moved = np.array(search.scanned[: search.last], dtype=np.int64)
        self.v[moved] += search.d[moved] - min_diff
        for j, value in zip(moved.tolist(), self.v[moved].tolist(), strict=True):
            self.v_list[j] = value
        j = sink
        while True:
            i = int(search.lab[j])
            self.y[j] = self.y_list[j] = i
            k, j = j, int(self.x[i])
            self.x[i], self.x_cost[i] = k, search.lab_cost[k]
            if i == i0:
                return
