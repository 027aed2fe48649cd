"""The rows of a flattened document: every array element with its values and nested arrays."""

from __future__ import annotations

from typing import Any

Step = tuple[str, Any]
Path = tuple[Step, ...]
Address = Path
# One scalar of one side: the path from its row (no index steps), its raw value and canonical key.
# Its address, its row's and that path, is put together only when a verdict is written.
Value = tuple[Path, Any, str]


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
        self.leaves: list[Value] = []
        self.arrays: dict[Path, Array] = {}  # relative path -> nested array
        self._priced: tuple[dict[Path, str], dict[Path, list[Row]]] | None = None
        self._content: tuple | None = None

    @property
    def is_object(self) -> bool:
        for value in self.leaves:
            if value[0] and value[0][0][0] == "k":
                return True
        return any(p and p[0][0] == "k" for p in self.arrays)
