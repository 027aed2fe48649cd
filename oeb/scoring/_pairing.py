"""Pairing array items: each predicted item takes the index of the gold item it is paired with.

Object keys mean the same on both sides, array positions do not: before addresses are compared,
the items of every array are paired with the gold's, outside in, each nested array within the pair
that holds it. What pairs are worth is `_pricing`'s (with `_nested` pricing nested arrays in
batches), which solver pairs a block is `_solving`'s; this module drives them over the two trees.
"""

from __future__ import annotations

import weakref

from oeb.scoring._nested import UNIQUE_CHECK_CELLS
from oeb.scoring._pricing import Pricing
from oeb.scoring._solving import Solving, unique_best
from oeb.scoring._tree import Item, Pair


class Aligner:
    """Pairs the items of every array of a prediction with the gold's, as the reference does."""

    def __init__(self, scale: int, positional: frozenset[str] | bool) -> None:
        self.pricing = Pricing(scale, positional, weakref.WeakMethod(self.best_pairing))
        self.solving = Solving(self.pricing)

    @property
    def approximated(self) -> set[int]:
        """The larger side of every block that was paired greedily (the reference's fallback)."""
        return self.solving.approximated

    def align(self, pred: Item, gold: Item | None) -> None:
        """Renumber the arrays nested in `pred` against those in `gold`, outside in."""
        if gold is None:
            return
        for path, p_array in pred.arrays.items():
            g_array = gold.arrays.get(path)
            if g_array is None:
                continue
            if self.pricing.is_positional(p_array.pattern):
                for index, p_item in p_array.items.items():
                    self.align(p_item, g_array.items.get(index))
                continue
            pairs = self.best_pairing(list(p_array.items.values()), list(g_array.items.values()))
            for p_item in p_array.items.values():
                p_item.label = f"p{p_item.index}"
            for p_item, g_item, _, _ in pairs:
                p_item.label = g_item.index
            self.pricing.nested.price_together(self.pricing, pairs)
            for p_item, g_item, _, _ in pairs:
                self.align(p_item, g_item)

    def best_pairing(self, pred_items: list[Item], gold_items: list[Item]) -> list[Pair]:
        """The pairs the reference keeps: its solver's choice among the items in content order,
        without the pairs that share no equal value."""
        if not pred_items or not gold_items:
            return []
        pricing = self.pricing
        if len(pred_items) * len(gold_items) <= UNIQUE_CHECK_CELLS:
            weights = [[pricing.weight(p, g) for g in gold_items] for p in pred_items]
            found = unique_best(weights)
            if found is not None:
                return [(pred_items[i], gold_items[j], *pricing.worth(pred_items[i], gold_items[j])) for i, j in found]
        pi = pricing.in_content_order(pred_items)
        gi = pricing.in_content_order(gold_items)
        kept = []
        for i, j in self.solving.assign(pi, gi):
            matched, shared = pricing.worth(pi[i], gi[j])
            if matched >= 1:
                kept.append((pi[i], gi[j], matched, shared))
        return kept
