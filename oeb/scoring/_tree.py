"""A flattened document as a tree: every array item with its values and the arrays nested in it.

The scorer's "item" is one element of an array in a document (or the document's root), the unit
that pairing moves; the metrics still call paired object items rows (`gold_rows`, `pred_rows`).
"""

from __future__ import annotations

from typing import Any

# One part of a path: ("k", key) for an object key, ("i", index) for an array position.
Part = tuple[str, Any]
# Parts from somewhere (an item, an array) down to a value or an array.
Path = tuple[Part, ...]
# A path from the document's root: where a value or an item is.
Address = Path
# One scalar of one side: its path from its item (no index parts), its raw value and canonical key.
# Its address, its item's and that path, is put together only when a verdict is written.
Value = tuple[Path, Any, str]
# How pricing sees an item: its values by path (positional arrays flattened into them), and its
# nested arrays to pair, by path.
Named = dict[Path, str]
Priced = tuple[Named, dict[Path, list["Item"]]]


class Array:
    """The items of one array on one side, in order of first appearance."""

    __slots__ = ("items", "pattern")

    def __init__(self, pattern: Path) -> None:
        self.pattern = pattern  # the array's path with `("i", None)` for every index part
        self.items: dict[Any, Item] = {}


class Item:
    """An array element (or the document root): its own values and the arrays nested in it."""

    __slots__ = ("_content", "_priced", "address", "arrays", "index", "label", "leaves", "pattern")

    def __init__(self, index: Any, pattern: Path, address: Path) -> None:
        self.index = index
        self.label: Any = index  # the index it ends with after renumbering
        self.pattern = pattern
        self.address = address  # where it is in its document, with its own index (not its label)
        self.leaves: list[Value] = []
        self.arrays: dict[Path, Array] = {}  # relative path -> nested array
        self._priced: Priced | None = None
        self._content: tuple[Any, ...] | None = None

    @property
    def is_object(self) -> bool:
        """Whether the item is an object (it holds a keyed value or array), which makes it a row."""
        for value in self.leaves:
            if value[0] and value[0][0][0] == "k":
                return True
        return any(p and p[0][0] == "k" for p in self.arrays)


# A pairing's pair: the pred item, the gold item, and the pair's equal values and shared worth.
Pair = tuple[Item, Item, int, int]
