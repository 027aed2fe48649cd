"""The reference's greedy pairing of a huge nested block, without pricing every pair.

Past its limits for blocks with nested arrays (a side over 20,000 rows, or more than 500 million
cells) the reference prices every cell and pairs greedily: cells by weight,
heaviest first, then by row, then by column, a pair whenever both are still free. `greedy_pairing`
takes the cells in that very order while pricing only what can come first. The pairs that share a
value of a rare column are priced exactly (`oeb.scoring.blocks`); every other pair of a row weighs
at most the row's bound. Before a cell is taken, every free row whose bound could put one of its
unpriced cells ahead of it (heavier, or as heavy and earlier) is priced in full. Each free row
offers one cell at a time, its first in that order whose column is still free, so the queue holds
one cell per row, and a row whose twin shares a rare value is paired without ever being priced in
full.
"""

from __future__ import annotations

import heapq
from itertools import pairwise

import numpy as np

from oeb.scoring._blocks import PricedBlock

# Rows priced in full at once (each a row of the block's width).
PRICED_ROWS_PER_BATCH = 64
# A row's next offer is looked for this many cells at a time.
OFFER_CHUNK = 64


def greedy_pairing(block: PricedBlock) -> list[tuple[int, int]]:
    """The pairs (row, column) the reference's greedy pairing takes in this block."""
    return _Greedy(block).run()


class _Greedy:
    def __init__(self, block: PricedBlock) -> None:
        self.block = block
        i, j = block.rare_pairs
        weights = block.weights(i, j)
        positive = weights > 0
        i, j, weights = i[positive], j[positive], weights[positive]
        order = np.lexsort((j, -weights, i))  # by row, then heaviest first, then column
        i, j, weights = i[order], j[order], weights[order]
        spans = list(pairwise(np.searchsorted(i, np.arange(block.n + 1)).tolist()))
        # Each row's cells in the order it offers them: its listed cells, or every cell once priced.
        self.cols = [j[a:b] for a, b in spans]
        self.weights = [weights[a:b] for a, b in spans]
        self.cursor = [0] * block.n
        self.free_row = [True] * block.n
        self.free_col = np.ones(block.m, dtype=bool)
        self.offered: list[tuple[int, int] | None] = [None] * block.n  # each row's cell in the queue
        self.queue: list[tuple[int, int, int]] = []  # (-weight, row, column)
        # Rows whose unpriced cells may weigh something, heaviest bound first.
        self.unpriced = [(-bound, row) for row, bound in enumerate(block.bounds.tolist()) if bound > 0]
        heapq.heapify(self.unpriced)

    def run(self) -> list[tuple[int, int]]:
        for row in range(self.block.n):
            self._offer(row)
        pairs: list[tuple[int, int]] = []
        while True:
            self._price_rows_ahead()
            if not self.queue:
                return pairs
            weight, row, col = heapq.heappop(self.queue)
            if not self.free_row[row] or self.offered[row] != (-weight, col):
                continue  # the row was paired, or priced in full and offers another cell
            if self.free_col[col]:
                self.free_row[row] = False
                self.free_col[col] = False
                pairs.append((row, col))
            else:  # its column was taken: the row offers its next cell with a free one
                self._offer(row)

    def _offer(self, row: int) -> None:
        """Queue the row's first cell, from its cursor on, whose column is still free (if any)."""
        cols, start = self.cols[row], self.cursor[row]
        while start < len(cols):
            free = np.flatnonzero(self.free_col[cols[start : start + OFFER_CHUNK]])
            if len(free):
                start += int(free[0])
                self.cursor[row] = start
                weight, col = int(self.weights[row][start]), int(cols[start])
                self.offered[row] = (weight, col)
                heapq.heappush(self.queue, (-weight, row, col))
                return
            start += OFFER_CHUNK
        self.cursor[row] = start
        self.offered[row] = None

    def _price_rows_ahead(self) -> None:
        """Price in full every free row whose bound could put an unpriced cell of it ahead of the
        queue's first cell (heavier, or as heavy and in an earlier or the same row)."""
        while True:
            due: list[int] = []
            while self.unpriced and len(due) < PRICED_ROWS_PER_BATCH:
                bound, row = -self.unpriced[0][0], self.unpriced[0][1]
                if not self.free_row[row]:
                    heapq.heappop(self.unpriced)
                    continue
                if self.queue:
                    weight, first = -self.queue[0][0], self.queue[0][1]
                    if bound < weight or (bound == weight and row > first):
                        break
                heapq.heappop(self.unpriced)
                due.append(row)
            if not due:
                return
            self._price(due)

    def _price(self, rows: list[int]) -> None:
        for row, weights in zip(rows, self.block.row_weights(np.array(rows, dtype=np.int64)), strict=True):
            cols = np.flatnonzero((weights > 0) & self.free_col)
            weights = weights[cols]
            order = np.lexsort((cols, -weights))
            self.cols[row], self.weights[row], self.cursor[row] = cols[order], weights[order], 0
            self._offer(row)
