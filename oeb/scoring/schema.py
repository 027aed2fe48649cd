"""Reading the JSON Schema the way the reference scorer does (`$ref`s, branches, open maps).

The schema is used for three things only: finding open maps (skipped), listing the declared
paths ("slots", which tell fabricated values from invented ones), and naming arrays for
`order_matters`. Types, enums and formats are never used to convert or validate values.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from oeb.errors import SchemaError

__all__ = ["ResolvedSchema", "resolve_schema"]

BRANCH_KEYS = ("anyOf", "oneOf", "allOf")
# The reference's inliner stops descending below this many dict/list levels.
REFERENCE_REF_DEPTH = 12

Slot = tuple[tuple[str, str | None], ...]


def resolve_schema(schema: dict[str, Any]) -> ResolvedSchema:
    """Inline every local `$ref` (the reference's way first, then without its depth limit)."""
    inlined = _inline_limited(schema, schema, 0)
    if _has_ref(inlined):
        # The reference refuses here; oeb resolves what is resolvable at any depth and names what is not.
        inlined = _inline_unlimited(schema, schema, ())
    return ResolvedSchema(inlined)


def _walk_pointer(root: dict[str, Any], ref: str) -> Any:
    node: Any = root
    for part in ref[2:].split("/"):
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node


def _merge(node: dict[str, Any], target: dict[str, Any]) -> dict[str, Any]:
    """The node's own keys win over the referenced schema's (siblings of `$ref` override)."""
    merged = {key: value for key, value in node.items() if key != "$ref"}
    for key, value in target.items():
        merged.setdefault(key, value)
    return merged


def _local_target(root: dict[str, Any], node: dict[str, Any]) -> dict[str, Any] | None:
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/"):
        target = _walk_pointer(root, ref)
        if isinstance(target, dict):
            return target
    return None


def _inline_limited(root: dict[str, Any], node: Any, depth: int) -> Any:
    if depth > REFERENCE_REF_DEPTH:
        return node
    if isinstance(node, list):
        return [_inline_limited(root, item, depth + 1) for item in node]
    if not isinstance(node, dict):
        return node
    target = _local_target(root, node)
    if target is not None:
        return _inline_limited(root, _merge(node, target), depth + 1)
    return {
        key: value if key == "$ref" else _inline_limited(root, value, depth + 1)
        for key, value in node.items()
        if key != "$defs"
    }


def _inline_unlimited(root: dict[str, Any], node: Any, expanding: tuple[str, ...]) -> Any:
    if isinstance(node, list):
        return [_inline_unlimited(root, item, expanding) for item in node]
    if not isinstance(node, dict):
        return node
    if "$ref" in node:
        ref = node["$ref"]
        target = _local_target(root, node)
        if target is None:
            raise SchemaError(
                f"the schema's $ref {ref!r} cannot be resolved: only local references of the form "
                "'#/$defs/Name' to an existing object can be scored; inline the referenced schema"
            )
        if ref in expanding:
            chain = " -> ".join((*expanding[expanding.index(ref) :], ref))
            raise SchemaError(
                f"the schema is recursive ($ref {chain}): a recursive schema cannot be scored "
                "consistently; flatten the recursion to the depth your documents use"
            )
        return _inline_unlimited(root, _merge(node, target), (*expanding, ref))
    return {key: _inline_unlimited(root, value, expanding) for key, value in node.items() if key != "$defs"}


def _has_ref(node: Any) -> bool:
    if isinstance(node, dict):
        return "$ref" in node or any(_has_ref(value) for value in node.values())
    if isinstance(node, list):
        return any(_has_ref(item) for item in node)
    return False


def read_node(node: Any) -> dict[str, Any]:
    """A schema node as the scorer reads it: the first non-null branch replaces the whole node."""
    if not isinstance(node, dict):
        return {}
    for key in BRANCH_KEYS:
        branches = node.get(key)
        if isinstance(branches, list):
            for branch in branches:
                if isinstance(branch, dict) and branch.get("type") != "null":
                    return branch
    return node


def is_open_map(node: dict[str, Any]) -> bool:
    """`additionalProperties` true or an object, here or in any branch (branches read raw)."""
    extra = node.get("additionalProperties")
    if extra is True or isinstance(extra, dict):
        return True
    for key in BRANCH_KEYS:
        branches = node.get(key)
        if isinstance(branches, list) and any(isinstance(b, dict) and is_open_map(b) for b in branches):
            return True
    return False


def property_schema(node: dict[str, Any], key: str) -> Any:
    properties = node.get("properties")
    return properties.get(key) if isinstance(properties, dict) else None


def items_schema(node: dict[str, Any]) -> Any:
    """Tuple-style `items` (a list) reads as an empty schema."""
    items = node.get("items")
    return items if isinstance(items, dict) else None


class ResolvedSchema:
    """A schema with its `$ref`s inlined, and what the scorer derives from it."""

    __slots__ = ("_slots", "root")

    def __init__(self, root: Any) -> None:
        self.root = root
        self._slots: frozenset[Slot] | None = None

    @property
    def slots(self) -> frozenset[Slot]:
        """Every declared path, with `("i", None)` for array steps; nothing in or under an open map."""
        if self._slots is None:
            self._slots = frozenset(_slots(self.root, ()))
        return self._slots

    def array_paths(self) -> set[tuple[tuple[str, Any], ...]]:
        """Paths of the arrays the schema declares (`type: "array"` or an `items` key)."""
        return set(_schema_arrays(self.root, ()))


def _slots(node: Any, path: Slot) -> Iterator[Slot]:
    node = read_node(node)
    if is_open_map(node):
        return
    properties = node.get("properties")
    if isinstance(properties, dict):
        for key, child in properties.items():
            yield (*path, ("k", key))
            yield from _slots(child, (*path, ("k", key)))
    if node.get("items") is not None:  # `items: null` offers no item slot (false, 0 and {} do)
        yield (*path, ("i", None))
        yield from _slots(items_schema(node), (*path, ("i", None)))


def _schema_arrays(node: Any, path: tuple[tuple[str, Any], ...]) -> Iterator[tuple[tuple[str, Any], ...]]:
    node = read_node(node)
    if node.get("type") == "array" or "items" in node:
        yield path
    properties = node.get("properties")
    if isinstance(properties, dict):
        for key, child in properties.items():
            yield from _schema_arrays(child, (*path, ("k", key)))
    if "items" in node:
        yield from _schema_arrays(items_schema(node), (*path, ("i", None)))


def array_name(path: tuple[tuple[str, Any], ...]) -> str:
    """How `order_matters` names an array: `invoice.lines`, `rows[*].tags`, `x['a.b']`.

    As in the printed form of addresses, a key is joined with a dot only to text before it, so a
    leading empty key adds nothing: two different arrays can have one name (see `score`).
    """
    text = ""
    for kind, name in path:
        if kind == "i":
            text += "[*]"
        elif "." in name or "[" in name or "]" in name:
            text += f"[{name!r}]"
        else:
            text += f".{name}" if text else name
    return text
