"""What items are worth to each other, and the order pairing takes them in.

A candidate pair of items is worth its equal values and its shared paths (values both sides have),
plus the best pairing of every nested array both hold; its weight is `equal · scale + shared`,
0 when no value is equal. Items are taken in the order of their content keys, the reference's order,
which decides how ties fall. Each item's view and content key are computed once and kept on it.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Iterable
from operator import itemgetter
from typing import Any

import numpy as np

from oeb.scoring._nested import NestedPricing
from oeb.scoring._tree import Item, Named, Pair, Path, Priced, Value
from oeb.scoring._weights import Columns
from oeb.scoring.schema import array_name

# Blocks under this many cells are priced pair by pair, as the reference prices them cell by
# cell; from here on a block's columns are compared as integer codes, all pairs at once.
PER_CELL_LIMIT = 256

# One pair of items chosen by a pairing, with what it is worth: (pred, gold, equal, shared).
TextPath = tuple[tuple[str, str], ...]
PairingMethod = Callable[[list[Item], list[Item]], list[Pair]]


class Pricing:
    """Prices items against each other. `pairing` gives the best pairing of two lists of nested
    items; it is held weakly, since it holds this pricing (a cycle would keep every item alive until
    Python's cycle collector ran)."""

    def __init__(
        self, scale: int, positional: frozenset[str] | bool, pairing: weakref.WeakMethod[PairingMethod]
    ) -> None:
        self.scale = scale
        self.positional = positional
        self._pairing = pairing
        self.nested = NestedPricing()
        self._worth: dict[tuple[int, int], tuple[int, int]] = {}
        self._names: dict[Path, bool] = {}
        self._texts: dict[Path, TextPath] = {}  # items of a table share their paths
        self._orders: dict[tuple[Path, ...], list[tuple[TextPath, int]]] = {}

    def pair(self, pred_items: list[Item], gold_items: list[Item]) -> list[Pair]:
        """The best pairing of two lists of nested items (the aligner's)."""
        pairing = self._pairing()
        assert pairing is not None, "a pricing outlived its aligner"
        return pairing(pred_items, gold_items)

    # --- which arrays are compared by position -------------------------------------------------

    def is_positional(self, pattern: Path) -> bool:
        """Whether the array at `pattern` is compared position by position (`order_matters`)."""
        if self.positional is True or self.positional is False:
            return self.positional
        found = self._names.get(pattern)
        if found is None:
            found = self._names[pattern] = array_name(pattern) in self.positional
        return found

    # --- an item as pricing sees it ----------------------------------------------------------

    def priced(self, item: Item) -> Priced:
        """Named values (positional arrays flattened into them) and the nested arrays to pair."""
        if item._priced is None:
            named: Named = {suffix: key for suffix, _, key in item.leaves}
            nested: dict[Path, list[Item]] = {}
            for path, array in item.arrays.items():
                if self.positional and self.is_positional(array.pattern):
                    for index, child in array.items.items():
                        for suffix, _, key in _all_leaves(child):
                            named[(*path, ("i", index), *suffix)] = key
                else:
                    nested[path] = list(array.items.values())
            item._priced = (named, nested)
        return item._priced

    def content_key(self, item: Item) -> tuple[Any, ...]:
        """The key the reference sorts items by: named values as text, then nested content keys."""
        if item._content is None:
            named, nested = self.priced(item)
            item._content = (self._sorted_named(named), self._nested_key(nested))
        return item._content

    def _nested_key(self, nested: dict[Path, list[Item]]) -> list[tuple[TextPath, list[tuple[Any, ...]]]]:
        """The second part of a content key: each nested array's path as text and its items' keys, sorted."""
        found = [(self._as_text(path), sorted(map(self.content_key, items))) for path, items in nested.items()]
        return sorted(found) if len(found) > 1 else found

    def _sorted_named(self, named: Named) -> list[tuple[TextPath, str]]:
        """`sorted((text of suffix, key) ...)`: the items of a table share their paths, so the order
        is found once per set of paths. Not for paths with names that are not text: `1` and `True`
        are one dict key but two texts, and `1` and `"1"` read alike (keys break the tie)."""
        order = self._order(tuple(named))
        if order is None:
            return sorted((self._as_text(suffix), key) for suffix, key in named.items())
        keys = list(named.values())
        return [(text, keys[k]) for text, k in order]

    def _order(self, shape: tuple[Path, ...]) -> list[tuple[TextPath, int]] | None:
        """Each path's text and place, in the order of the texts; None for names that are not text."""
        order = self._orders.get(shape)
        if order is None:
            if not all(type(name) is str for suffix in shape for kind, name in suffix if kind == "k"):
                return None
            texts = [self._as_text(suffix) for suffix in shape]
            ranked = sorted(range(len(texts)), key=texts.__getitem__)
            self._orders[shape] = order = [(texts[k], k) for k in ranked]
        return order

    def in_content_order(self, items: list[Item]) -> list[Item]:
        """The items sorted by content key, as the reference takes them. When all hold the same paths
        (in the same order), as a table's rows mostly do, the named parts of their content keys
        differ only in their keys: sorting by the keys, taken in the paths' order, then by the
        nested part (empty for items without nested arrays) gives the same order without building
        the named parts."""
        if not items:
            return []
        priced = [self.priced(item) for item in items]
        shape = tuple(priced[0][0])
        order = self._order(shape)
        if order is None or not all(tuple(named) == shape for named, _ in priced):
            return sorted(items, key=self.content_key)
        keys: list[Any]
        if len(order) < 2:  # one key each (a list of one), or none: all equal
            keys = [list(named.values()) for named, _ in priced]
        else:
            pick = itemgetter(*(k for _, k in order))
            keys = [pick(list(named.values())) for named, _ in priced]
        if any(nested for _, nested in priced):
            keys = [
                (key, self._nested_key(nested) if nested else []) for key, (_, nested) in zip(keys, priced, strict=True)
            ]
        return [items[i] for i in sorted(range(len(items)), key=keys.__getitem__)]

    def _as_text(self, path: Path) -> TextPath:
        """A path with every name as text, as content keys compare it."""
        found = self._texts.get(path)
        if found is None:
            found = tuple((kind, str(name)) for kind, name in path)
            # Kept only for text keys: `1`, `1.0` and `True` are one dict key but three texts.
            if all(type(name) is str for kind, name in path if kind == "k"):
                self._texts[path] = found
        return found

    # --- what a candidate pair is worth --------------------------------------------------------

    def worth(self, p: Item, g: Item) -> tuple[int, int]:
        """Equal and shared values of a pair, nested arrays' best pairings included (kept)."""
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
            for _, _, m, s in self.pair(p_nested[path], g_nested[path]):
                matched += m
                shared += s
        self._worth[cache_key] = (matched, shared)
        return matched, shared

    def weight(self, p: Item, g: Item) -> int:
        """The pair's weight: `equal · scale + shared`, 0 when no value is equal."""
        matched, shared = self.worth(p, g)
        return matched * self.scale + shared if matched >= 1 else 0

    def remember_worth(self, pi: list[Item], gi: list[Item], i: np.ndarray, j: np.ndarray, weights: np.ndarray) -> None:
        """What the chosen pairs (pi[i[k]], gi[j[k]]) are worth, for the pairing to keep them: their
        weights are known from where they were chosen, so they are not priced again."""
        for a, b, weight in zip(i.tolist(), j.tolist(), weights.tolist(), strict=True):
            if weight:
                self._worth[(id(pi[a]), id(gi[b]))] = divmod(int(weight), self.scale)

    # --- many pairs at once --------------------------------------------------------------------

    def matrix(self, pi: list[Item], gi: list[Item]) -> np.ndarray:
        """The pair-weight matrix (float64, what the reference's solvers take)."""
        n, m = len(pi), len(gi)
        if n * m < PER_CELL_LIMIT:
            found = self.nested.priced_together(pi, gi)
            if found is not None:
                return found
            return np.array([[self.weight(p, g) for g in gi] for p in pi], dtype=np.float64).reshape(n, m)
        matched, shared = self.columns(pi, gi).counts()
        self.nested.add(self, pi, gi, matched, shared)
        return _combined(matched, shared, self.scale)

    def columns(self, pi: list[Item], gi: list[Item]) -> Columns:
        """The named values of a block, column by column."""
        return Columns([self.priced(p)[0] for p in pi], [self.priced(g)[0] for g in gi])

    def nested_paths(self, items: list[Item]) -> set[Path]:
        """The paths of the nested arrays (to pair) that any of these items holds."""
        paths: set[Path] = set()
        for item in items:
            paths.update(self.priced(item)[1])
        return paths

    def flat_named(self, items: list[Item]) -> list[Named] | None:
        """The named values of these items; None if any holds arrays to pair (a flat block cannot price it)."""
        priced = [self.priced(item) for item in items]
        if any(nested for _, nested in priced):
            return None
        return [named for named, _ in priced]

    def positives(self, pi: list[Item], gi: list[Item]) -> int:
        """Equal values over all pairs of the block (a pair counted once per equal value), at most its
        cells: past the dense limit this decides whether the reference still solves densely."""
        counts: dict[tuple[Path, str], list[int]] = {}
        for side, items in ((0, pi), (1, gi)):
            for item in items:
                for value in self.priced(item)[0].items():
                    counts.setdefault(value, [0, 0])[side] += 1
        return min(len(pi) * len(gi), sum(a * b for a, b in counts.values()))


def _all_leaves(item: Item) -> Iterable[Value]:
    """Every leaf under an item, with its path relative to the item (index parts included)."""
    yield from item.leaves
    for path, array in item.arrays.items():
        for index, child in array.items.items():
            for suffix, raw, key in _all_leaves(child):
                yield (*path, ("i", index), *suffix), raw, key


def _combined(matched: np.ndarray, shared: np.ndarray, scale: int) -> np.ndarray:
    """`matched * scale + shared` where a value matches, else 0, as float64 (what the solver takes)."""
    weights = matched.astype(np.float64)
    weights *= scale
    weights += shared
    weights[matched < 1] = 0.0
    return weights
