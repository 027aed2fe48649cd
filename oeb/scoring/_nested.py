"""Nested arrays priced in batches: the best pairing of the nested items of many pairs at once.

Pricing a pair of items includes the best pairing of every nested array both hold. Done pair by
pair, that is one small assignment per pair; here the nested items of many pairs are priced in one
weight matrix and the value of each pair's small block is read from it (`block_values`), and the
nested items of pairs about to be aligned are priced in one block per path beforehand.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np

from oeb.scoring._blocks import Block
from oeb.scoring._tree import Item, Named, Pair, Path, Priced
from oeb.scoring._weights import Columns, block_values

# Blocks of up to this many cells (nested arrays of a few items, most of them) are first priced pair
# by pair in plain Python: when that shows their best pairing is the only one (`_solving.unique_best`),
# no solver, matrix or content order is needed, and if not, the matrix reads the pairs' kept worth.
# So they are left out of the blocks priced together below. Larger blocks are cheaper the usual way.
UNIQUE_CHECK_CELLS = 16
# When a pairing keeps at least this many pairs, their flat nested items are priced in one block per
# path before each pair's nested arrays are aligned: below it, the block costs more than it spares.
PRICED_TOGETHER_PAIRS = 20
# A batch of pred items is priced against all gold nested items in one matrix of at most this many
# cells (about 128 MB of float64); an item whose nested array alone is larger is priced pair by pair.
INNER_MATRIX_LIMIT = 16_000_000
# A batch covers at most this many outer pairs (pred items × gold items), keeping its index arrays small.
OUTER_PAIRS_PER_BATCH = 2_000_000


class Pricing(Protocol):
    """What this module asks of `oeb.scoring._pricing.Pricing`, which holds a `NestedPricing` and
    passes itself to it: named here, so the module below does not import the one above."""

    scale: int

    def pair(self, pred_items: list[Item], gold_items: list[Item]) -> list[Pair]: ...
    def is_positional(self, pattern: Path) -> bool: ...
    def priced(self, item: Item) -> Priced: ...
    def matrix(self, pi: list[Item], gi: list[Item]) -> np.ndarray: ...
    def nested_paths(self, items: list[Item]) -> set[Path]: ...
    def flat_named(self, items: list[Item]) -> list[Named] | None: ...


class NestedPricing:
    """The nested part of a `Pricing`'s work, for many pairs at once. The pricing is passed to each
    call, not kept: a reference back to it would be a cycle, which keeps every item alive until
    Python's cycle collector runs."""

    def __init__(self) -> None:
        self._priced_in: dict[int, tuple[Block, int]] = {}  # items priced together: index (gold: -1-index)

    def add(self, pricing: Pricing, pi: list[Item], gi: list[Item], matched: np.ndarray, shared: np.ndarray) -> None:
        """Add the best pairing of every nested array two items both hold, for all such pairs.

        The nested items of a batch of pred items are priced against all gold nested items in one
        matrix, batches sized so that the matrix stays within `INNER_MATRIX_LIMIT` cells.
        """
        for path in pricing.nested_paths(pi) & pricing.nested_paths(gi):
            p_outer, p_inner, p_spans = _inner_items(pricing, pi, path)
            g_outer, g_inner, g_spans = _inner_items(pricing, gi, path)
            start = 0
            while start < len(p_outer):
                end, inner_items = start, 0
                while end < len(p_outer):
                    size = int(p_spans[end, 1] - p_spans[end, 0])
                    too_many = (inner_items + size) * len(g_inner) > INNER_MATRIX_LIMIT
                    if end > start and (too_many or (end - start) * len(g_outer) >= OUTER_PAIRS_PER_BATCH):
                        break
                    inner_items += size
                    end += 1
                items = p_outer[start:end]
                if inner_items * len(g_inner) > INNER_MATRIX_LIMIT:  # one item with a huge nested array
                    self._add_pair_by_pair(pricing, pi, gi, items, g_outer, path, matched, shared)
                else:
                    low, high = int(p_spans[start, 0]), int(p_spans[end - 1, 1])
                    inner = pricing.matrix(p_inner[low:high], g_inner).astype(np.int64)
                    cells_p = np.repeat(p_spans[start:end] - low, len(g_outer), axis=0)
                    cells_g = np.tile(g_spans, (len(items), 1))
                    values = block_values(inner, cells_p, cells_g).reshape(len(items), len(g_outer))
                    where = np.ix_(items, g_outer)
                    matched[where] += values // pricing.scale
                    shared[where] += values % pricing.scale
                start = end

    def _add_pair_by_pair(
        self,
        pricing: Pricing,
        pi: list[Item],
        gi: list[Item],
        p_outer: list[int],
        g_outer: list[int],
        path: Path,
        matched: np.ndarray,
        shared: np.ndarray,
    ) -> None:
        priced, pair = pricing.priced, pricing.pair
        for i in p_outer:
            for j in g_outer:
                for _, _, m, s in pair(priced(pi[i])[1][path], priced(gi[j])[1][path]):
                    matched[i, j] += m
                    shared[i, j] += s

    def price_together(self, pricing: Pricing, pairs: list[Pair]) -> None:
        """Price the flat nested items of all these pairs in one block per path, before each pair's
        small nested arrays are aligned one by one (`priced_together` then reads their cells)."""
        if len(pairs) < PRICED_TOGETHER_PAIRS:
            return
        found: dict[Path, tuple[list[Item], list[Item]]] = {}
        for p_item, g_item, _, _ in pairs:
            for path, p_array in p_item.arrays.items():
                g_array = g_item.arrays.get(path)
                if g_array is None or len(p_array.items) * len(g_array.items) <= UNIQUE_CHECK_CELLS:
                    continue
                if not pricing.is_positional(p_array.pattern):
                    p_items, g_items = found.setdefault(path, ([], []))
                    p_items.extend(p_array.items.values())
                    g_items.extend(g_array.items.values())
        for p_items, g_items in found.values():
            p_named, g_named = pricing.flat_named(p_items), pricing.flat_named(g_items)
            if p_named is None or g_named is None:
                continue
            block = Block(Columns(p_named, g_named), pricing.scale)
            self._priced_in.update((id(item), (block, index)) for index, item in enumerate(p_items))
            self._priced_in.update((id(item), (block, -1 - index)) for index, item in enumerate(g_items))

    def priced_together(self, pi: list[Item], gi: list[Item]) -> np.ndarray | None:
        """The weights of a small block whose items were all priced in one block, if they were."""
        if not self._priced_in:
            return None
        first = self._priced_in.get(id(pi[0]))
        if first is None:
            return None
        block = first[0]
        p_index: list[int] = []
        g_index: list[int] = []
        for items, indices in ((pi, p_index), (gi, g_index)):
            for item in items:
                found = self._priced_in.get(id(item))
                if found is None or found[0] is not block:
                    return None
                indices.append(found[1])
        if min(p_index) < 0 or max(g_index) >= 0:
            return None
        i = np.repeat(np.array(p_index), len(gi))
        j = np.tile(-1 - np.array(g_index), len(pi))
        return block.weights(i, j).astype(np.float64).reshape(len(pi), len(gi))


def _inner_items(pricing: Pricing, items: list[Item], path: Path) -> tuple[list[int], list[Item], np.ndarray]:
    """The items that hold `path`, all their nested items there in one list, and each one's span."""
    outer: list[int] = []
    inner: list[Item] = []
    spans: list[tuple[int, int]] = []
    for index, item in enumerate(items):
        nested = pricing.priced(item)[1].get(path)
        if nested:
            outer.append(index)
            spans.append((len(inner), len(inner) + len(nested)))
            inner.extend(nested)
    return outer, inner, np.array(spans, dtype=np.int64).reshape(-1, 2)
