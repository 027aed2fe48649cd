"""Document preparation and flattening (SCORING.md sections 2.1, 2.2 and 3).

Preparation unwraps `{"value": ..., "confidence": ...}` envelopes on both sides and drops
`<key>_citations` / `<key>_meta` sidecars beside their key in the prediction. Flattening maps every
scalar to its address, a tuple of `("k", key)` and `("i", index)` steps, while skipping open maps.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from oeb.scoring.rows import Address, Array, Leaf, Row
from oeb.scoring.schema import is_open_map, items_schema, property_schema, read_node

__all__ = ["states_nothing"]

ENVELOPE_METADATA = frozenset(
    (
        "citations",
        "citation",
        "confidence",
        "score",
        "reasoning",
        "evidence",
        "provenance",
        "source",
        "sources",
        "page",
        "pages",
        "bbox",
        "span",
        "spans",
        "offset",
        "offsets",
        "extraction_status",
        "status",
        "meta",
    )
)
SIDECAR_SUFFIXES = ("_citations", "_meta")


def states_nothing(value: Any) -> bool:
    """The default `absent` rule: null, empty containers and blank strings are not values."""
    if value is None:
        return True
    if isinstance(value, str):
        return not value.strip()
    if isinstance(value, (list, dict)):
        return not value
    return False


def unwrap_envelopes(value: Any) -> Any:
    if isinstance(value, dict):
        if "value" in value and len(value) > 1 and all(k == "value" or k in ENVELOPE_METADATA for k in value):
            return unwrap_envelopes(value["value"])
        return {key: unwrap_envelopes(item) for key, item in value.items()}
    if isinstance(value, list):
        return [unwrap_envelopes(item) for item in value]
    return value


def _is_sidecar(key: str, siblings: dict[str, Any]) -> bool:
    return any(key.endswith(suffix) and key[: -len(suffix)] in siblings for suffix in SIDECAR_SUFFIXES)


def drop_sidecars(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: drop_sidecars(item) for key, item in value.items() if not _is_sidecar(key, value)}
    if isinstance(value, list):
        return [drop_sidecars(item) for item in value]
    return value


def _may_need_preparing(document: Any, prediction: bool) -> bool:
    """Whether some object could be an envelope (has a `value` key) or a sidecar's sibling (a key
    with a sidecar suffix): most documents have neither and are used as they are, uncopied."""
    stack = [document]
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            if "value" in value:
                return True
            if prediction and any(isinstance(key, str) and key.endswith(SIDECAR_SUFFIXES) for key in value):
                return True
            stack.extend(item for item in value.values() if isinstance(item, (dict, list)))
        else:
            stack.extend(item for item in value if isinstance(item, (dict, list)))
    return False


def prepare(document: Any, *, prediction: bool) -> dict[str, Any]:
    if not _may_need_preparing(document, prediction):
        return document if isinstance(document, dict) else {}
    prepared = unwrap_envelopes(document)
    if prediction:
        prepared = drop_sidecars(prepared)
    return prepared if isinstance(prepared, dict) else {}


def array_paths(document: Any) -> set[Address]:
    """The path of every array in a document (empty ones included), `("i", None)` for each index."""
    found: set[Address] = set()
    stack: list[tuple[Any, Address]] = [(document, ())]
    while stack:
        value, path = stack.pop()
        if isinstance(value, dict):
            stack.extend((item, (*path, ("k", key))) for key, item in value.items())
        elif isinstance(value, list):
            found.add(path)
            element = (*path, ("i", None))
            stack.extend((item, element) for item in value if isinstance(item, (dict, list)))
    return found


class _SchemaView:
    """A schema node read once: its branch-unwrapped form, whether it is an open map, and the views
    of its properties and items as they are asked for (a table's rows ask the same ones)."""

    __slots__ = ("_items", "children", "node", "open")

    def __init__(self, schema: Any) -> None:
        self.node = read_node(schema)
        self.open = is_open_map(self.node)
        self.children: dict[Any, _SchemaView] = {}
        self._items: _SchemaView | None = None

    def child(self, key: Any) -> _SchemaView:
        found = self.children.get(key)
        if found is None:
            found = self.children[key] = _SchemaView(property_schema(self.node, key))
        return found

    def items(self) -> _SchemaView:
        if self._items is None:
            self._items = _SchemaView(items_schema(self.node))
        return self._items


def flatten(
    document: dict[str, Any], schema: Any, absent: Callable[[Any], bool], key_of: Callable[[Any], str]
) -> tuple[Row, list[Leaf], list[Address]]:
    """Every non-absent scalar with its address and canonical key, in document order.

    Returns the document as a tree of rows (each array element that holds a value is a row), the
    leaves in document order, and the addresses of the open maps that were skipped.
    """
    return _Flattening(absent, key_of).run(document, _SchemaView(schema))


class _Flattening:
    """One document's walk. A class, not nested closures: two closures calling each other are a
    reference cycle, which would keep every leaf alive until the cycle collector ran."""

    __slots__ = ("absent", "key_of", "leaves", "skipped")

    def __init__(self, absent: Callable[[Any], bool], key_of: Callable[[Any], str]) -> None:
        self.absent = absent
        self.key_of = key_of
        self.leaves: list[Leaf] = []
        self.skipped: list[Address] = []

    def run(self, document: dict[str, Any], view: _SchemaView) -> tuple[Row, list[Leaf], list[Address]]:
        root = Row(None, ())
        if view.open:
            self.skipped.append(())
        elif document:
            self.walk(document, view, (), root, ())
        return root, self.leaves, self.skipped

    def walk(self, value: Any, here: _SchemaView, address: Address, row: Row, relative: Address) -> None:
        """`value` is a non-empty object or array at `address`, read with the (not open) view `here`."""
        visit = self.visit
        if isinstance(value, dict):
            for key, item in value.items():
                step = ("k", key)
                visit(item, here.child(key), (*address, step), row, (*relative, step))
            return
        child_view = here.items()
        array = Array((*row.pattern, *relative))
        row_pattern = (*array.pattern, ("i", None))
        for index, item in enumerate(value):
            child = Row(index, row_pattern)
            visit(item, child_view, (*address, ("i", index)), child, ())
            if child.leaves or child.arrays:
                array.rows[index] = child
        if array.rows:
            row.arrays[relative] = array

    def visit(self, value: Any, here: _SchemaView, address: Address, row: Row, relative: Address) -> None:
        if here.open:
            self.skipped.append(address)
        elif isinstance(value, (dict, list)) and value:
            self.walk(value, here, address, row, relative)
        elif not self.absent(value):
            leaf = Leaf(address, value, self.key_of(value))
            self.leaves.append(leaf)
            row.leaves.append((relative, leaf))
