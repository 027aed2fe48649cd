"""Document preparation and flattening (the rules: docs/scorer.md).

Preparation unwraps `{"value": ..., "confidence": ...}` envelopes on both sides and drops
`<key>_citations` / `<key>_meta` sidecars beside their key in the prediction. Flattening puts every
scalar in the row that holds it (an array element, or the root), under its path from that row, while
skipping open maps; a scalar's address, `("k", key)` and `("i", index)` steps, is its row's and that path.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable
from itertools import chain, compress
from operator import not_
from typing import Any, NamedTuple

from oeb.scoring._tree import Address, Array, Item, Part
from oeb.scoring.schema import is_open_map, items_schema, property_schema, read_node

__all__ = ["SchemaView", "Survey", "states_nothing"]

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


class Survey(NamedTuple):
    """What one walk over a raw document finds, so that most documents need no second one: whether
    some object could be an envelope (a `value` key) or a sidecar's sibling (a key with a sidecar
    suffix; looked for in predictions only), and whether some object has the empty key (only then
    can two arrays share a name)."""

    envelopes: bool
    sidecars: bool
    empty_keys: bool


_SIDECAR_ENDINGS = tuple(suffix + "\0" for suffix in SIDECAR_SUFFIXES)
_SCALARS = frozenset((str, int, float, bool, type(None)))
_SCALAR_VALUES = frozenset((str, int, float, bool))  # scalars that state something unless blank


_ROWS = frozenset((dict,))


def _has_sidecar_suffix(keys: Iterable[Any]) -> bool:
    try:
        text = "\0".join(keys) + "\0"  # one scan of the joined keys, not one call per key
    except TypeError:  # a key that is not text (a document built in Python)
        return any(isinstance(key, str) and key.endswith(SIDECAR_SUFFIXES) for key in keys)
    return any(ending in text for ending in _SIDECAR_ENDINGS)


def survey(document: Any, *, prediction: bool) -> Survey:
    envelopes = sidecars = empty_keys = False
    stack = [document]
    items: Collection[Any]
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            envelopes = envelopes or "value" in value
            empty_keys = empty_keys or "" in value
            sidecars = sidecars or (prediction and _has_sidecar_suffix(value))
            items = value.values()
        elif isinstance(value, list):
            items = value
            if value and _ROWS.issuperset(map(type, value)):  # a table's rows: their keys and values at once
                keys = set().union(*value)
                envelopes = envelopes or "value" in keys
                empty_keys = empty_keys or "" in keys
                sidecars = sidecars or (prediction and _has_sidecar_suffix(keys))
                items = list(chain.from_iterable(map(dict.values, value)))
        else:
            continue
        if not _SCALARS.issuperset(map(type, items)):  # one C pass rules out most rows of a table
            # C passes again: every value that is not a scalar (containers, and the odd other type)
            stack.extend(compress(items, map(not_, map(_SCALARS.__contains__, map(type, items)))))
    return Survey(envelopes, sidecars, empty_keys)


def prepare(document: Any, found: Survey, *, prediction: bool) -> dict[str, Any]:
    """The document with envelopes unwrapped and (in a prediction) sidecars dropped; the document
    itself, uncopied, when its survey found neither."""
    if not (found.envelopes or found.sidecars):
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


class SchemaView:
    """A schema node read once: its branch-unwrapped form, whether it is an open map, and the views
    of its properties and items as they are asked for (a table's rows ask the same ones).

    A view also holds the path from the nearest enclosing row to the values it reads (`relative`,
    ending with its own `step`): the same for every row of a table, so one tuple serves them all,
    and for both sides when both are flattened with one view. Views are shared by text keys only:
    `1` and `True` are one dict key but two different steps.
    """

    __slots__ = ("_items", "cells", "children", "node", "open", "relative", "step")

    def __init__(self, schema: Any, step: Part | None = None, relative: Address = ()) -> None:
        self.node = read_node(schema)
        self.open = is_open_map(self.node)
        self.step = step
        self.relative = relative
        self.children: dict[str, SchemaView] = {}
        # The path of each text key's values where they are read as they are (the key's view is not
        # an open map): a table's cells, looked up once per cell.
        self.cells: dict[str, Address] = {}
        self._items: SchemaView | None = None

    def child(self, key: Any) -> SchemaView:
        found = self.children.get(key) if type(key) is str else None
        if found is None:
            step = ("k", key)
            found = SchemaView(property_schema(self.node, key), step, (*self.relative, step))
            if type(key) is str:
                self.children[key] = found
                if not found.open:
                    self.cells[key] = found.relative
        return found

    def items(self) -> SchemaView:
        if self._items is None:
            self._items = SchemaView(items_schema(self.node))
        return self._items


def flatten(
    document: dict[str, Any], view: SchemaView, absent: Callable[[Any], bool], key_of: Callable[[Any], str]
) -> tuple[Item, int, list[Address]]:
    """Every non-absent scalar with its canonical key, in document order.

    Returns the document as a tree of items (each array element that holds a value is one), how
    many values it holds, and the addresses of the open maps that were skipped.
    """
    return _Flattening(absent, key_of).run(document, view)


class _Flattening:
    """One document's walk. A class, not nested closures: two closures calling each other are a
    reference cycle, which would keep every leaf alive until the cycle collector ran."""

    __slots__ = ("absent", "key_of", "skipped", "values")

    def __init__(self, absent: Callable[[Any], bool], key_of: Callable[[Any], str]) -> None:
        self.absent = absent
        self.key_of = key_of
        self.values = 0
        self.skipped: list[Address] = []

    def run(self, document: dict[str, Any], view: SchemaView) -> tuple[Item, int, list[Address]]:
        root = Item(None, (), ())
        if view.open:
            self.skipped.append(())
        elif document:
            self.walk(document, view, root)
        return root, self.values, self.skipped

    def walk(self, value: Any, here: SchemaView, row: Item) -> None:
        """`value` is a non-empty object or array in `row`, read with the (not open) view `here`."""
        visit = self.visit
        if isinstance(value, dict):
            if self.absent is not states_nothing:
                for key, item in value.items():
                    visit(item, here.child(key), row)
                return
            cells, append, key_of = here.cells, row.leaves.append, self.key_of
            added = 0
            for key, item in value.items():
                kind = type(item)
                relative = cells.get(key) if kind in _SCALAR_VALUES and type(key) is str else None
                if relative is not None:
                    # `visit` inline for a table's cells: under the default rule only blank text is absent
                    if kind is not str or item.strip():
                        added += 1
                        append((relative, item, key_of(item)))
                else:
                    visit(item, here.child(key), row)
            self.values += added
            return
        child_view = here.items()
        array = Array((*row.pattern, *here.relative))
        row_pattern = (*array.pattern, ("i", None))
        where = (*row.address, *here.relative)
        walk, rows_walked = self.walk, not child_view.open  # a table's rows: `visit` inline
        for index, item in enumerate(value):
            child = Item(index, row_pattern, (*where, ("i", index)))
            if rows_walked and type(item) is dict and item:
                walk(item, child_view, child)
            else:
                visit(item, child_view, child)
            if child.leaves or child.arrays:
                array.items[index] = child
        if array.items:
            row.arrays[here.relative] = array

    def visit(self, value: Any, here: SchemaView, row: Item) -> None:
        if here.open:
            self.skipped.append((*row.address, *here.relative))
        elif isinstance(value, (dict, list)) and value:
            self.walk(value, here, row)
        elif not self.absent(value):
            self.values += 1
            row.leaves.append((here.relative, value, self.key_of(value)))
