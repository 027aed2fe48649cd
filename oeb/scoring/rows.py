"""The rows of a flattened document: every array element with its values and nested arrays."""

from __future__ import annotations

from typing import Any

Step = tuple[str, Any]
Path = tuple[Step, ...]
Address = Path


class Leaf:
    """One scalar of one side: its raw value and canonical key (its address is its row's and the
    suffix it is held under, put together only when a verdict is written)."""

    __slots__ = ("key", "raw")

    def __init__(self, raw: Any, key: str) -> None:
        self.raw = raw
        self.key = key


class Array:
    """The rows of one array on one side, in order of first appearance."""

    __slots__ = ("pattern", "rows")

    def __init__(self, pattern: Path) -> None:
        self.pattern = pattern  # the array's path with `("i", None)` for every index step
        self.rows: dict[Any, Row] = {}


class Row:
    """An array element (or the document root): its own values and the arrays nested in it."""

    __slots__ = ("_content", "_priced", "address", "arrays", "index", "label", "leaves", "pattern")

    def __init__(self, index: Any, pattern: Path, address: Path) -> None:
        self.index = index
        self.label: Any = index  # the index it ends with after renumbering
        self.pattern = pattern
        self.address = address  # where it is in its document, with its own index (not its label)
        self.leaves: list[tuple[Path, Leaf]] = []  # suffix without index steps -> leaf
        self.arrays: dict[Path, Array] = {}  # relative path -> nested array
        self._priced: tuple[dict[Path, str], dict[Path, list[Row]]] | None = None
        self._content: tuple | None = None

    @property
    def is_object(self) -> bool:
        for suffix, _ in self.leaves:
            if suffix and suffix[0][0] == "k":
                return True
        return any(p and p[0][0] == "k" for p in self.arrays)
