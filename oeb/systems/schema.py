"""The schema a system is sent: the conventions every system gets (step A, `question_schema`) and
the per-vendor dialects (step B), as the reference applies them.

Every function returns a new schema and leaves its input alone. Two documented differences from the
reference: the convention sentences are oeb's own wording, and step A removes `default` and
`evaluation_config` only where they are annotations, so a property literally named `default` keeps
its place in a `properties` map. `$ref` cycles are expanded once along each path, not 200 levels deep.
"""

from __future__ import annotations

import copy
from typing import Any, NamedTuple, cast

JSON = Any


class Convention(NamedTuple):
    id: str
    match: tuple[str, ...]
    exclude: tuple[str, ...]
    sentence: str

    def applies(self, name: str) -> bool:
        lowered = name.lower()
        return any(t in lowered for t in self.match) and not any(t in lowered for t in self.exclude)


CONVENTIONS = (
    Convention(
        "monetary_sign_magnitude",
        (
            "capex",
            "capital_expenditure",
            "dividends_paid",
            "share_repurchase",
            "repurchases",
            "interest_expense",
            "cost_of_revenue",
            "operating_expense",
            "income_tax_expense",
            "payments_of",
            "purchases_of",
            "distributions_paid",
        ),
        ("percent", "pct", "rate", "ratio", "days", "count", "number", "shares_"),
        "Report this amount as a positive magnitude: the field name already says which way the money "
        "goes, so an outflow printed in parentheses is not negative here.",
    ),
    Convention(
        "affiliation_org_only",
        ("affiliation",),
        (),
        "Give only the organisation's name, without street, city, postcode or department.",
    ),
    Convention(
        "author_name_as_printed",
        ("author", "authors"),
        ("count", "number"),
        "Copy each name exactly as the document prints it, initials included.",
    ),
)

BENCHMARK_KEYS = frozenset({"evaluation_config", "default"})
_UNIONS = ("anyOf", "oneOf", "allOf")


def _overlay(node: JSON, name: str | None) -> None:
    if isinstance(node, list):
        for item in node:
            _overlay(item, name)
        return
    if not isinstance(node, dict):
        return
    if name is not None:
        convention = next((c for c in CONVENTIONS if c.applies(name)), None)
        if convention is not None:
            description = str(node.get("description") or "").strip()
            if convention.sentence not in description:
                node["description"] = f"{description} {convention.sentence}".strip()
    for key, value in node.items():
        if key == "properties" and isinstance(value, dict):
            for prop, sub in value.items():
                _overlay(sub, prop)
        elif key == "$defs" and isinstance(value, dict):
            for definition, sub in value.items():
                _overlay(sub, definition)
        elif key == "items" or key in _UNIONS:
            _overlay(value, name)


def _strip(node: JSON, names: bool = False) -> JSON:
    """Drop benchmark-only annotation keys; keys of a `properties`/`$defs` map are names, kept."""
    if isinstance(node, list):
        return [_strip(v) for v in node]
    if not isinstance(node, dict):
        return node
    return {
        key: _strip(value, names=key in ("properties", "$defs", "definitions") and not names)
        for key, value in node.items()
        if names or key not in BENCHMARK_KEYS
    }


def question_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """Step A: what every system is asked, from the dataset's stored schema (conventions appended
    to matching descriptions, benchmark-only annotations removed)."""
    overlaid = copy.deepcopy(schema)
    _overlay(overlaid, None)
    return cast(dict[str, Any], _strip(overlaid))


def _first_type(kind: JSON) -> JSON:
    """A `type` list's first non-null member (`string` if none); other values unchanged."""
    if isinstance(kind, list):
        return next((t for t in kind if t != "null"), "string")
    return kind


def optional_by_omission(schema: dict[str, Any]) -> dict[str, Any]:
    """Datalab: a nullable property is made optional instead (no `type` lists)."""

    def walk(node: JSON) -> JSON:
        if not isinstance(node, dict):
            return node
        out = dict(node)
        if "type" in out:
            out["type"] = _first_type(out["type"])
        properties = node.get("properties")
        if isinstance(properties, dict):
            nullable = {
                k
                for k, v in properties.items()
                if isinstance(v, dict) and isinstance(v.get("type"), list) and "null" in v["type"]
            }
            out["properties"] = {k: walk(v) for k, v in properties.items()}
            required = node.get("required")
            if isinstance(required, list) and nullable & set(required):
                kept = [r for r in required if r not in nullable]
                if kept:
                    out["required"] = kept
                else:
                    del out["required"]
        if "items" in node:
            out["items"] = walk(node["items"])
        return out

    return cast(dict[str, Any], walk(schema))


MAX_DEPTH = 200


def inline_refs(schema: dict[str, Any]) -> dict[str, Any]:
    """Replace local `$ref`s by their targets (the referencing node's own keys win) and drop `$defs`.

    Unresolvable refs, refs deeper than `MAX_DEPTH` levels and refs already being expanded on the
    current path (a recursive schema) are left as they are.
    """

    def target(ref: str) -> JSON:
        node: JSON = schema
        for part in ref[1:].split("/")[1:] if ref.startswith("#/") else [None]:
            if part is None or not isinstance(node, dict):
                return None
            node = node.get(part.replace("~1", "/").replace("~0", "~"))
        return node

    def walk(node: JSON, depth: int, expanding: frozenset[str]) -> JSON:
        if depth > MAX_DEPTH:
            return node
        if isinstance(node, list):
            return [walk(v, depth + 1, expanding) for v in node]
        if not isinstance(node, dict):
            return node
        ref = node.get("$ref")
        if isinstance(ref, str) and ref not in expanding:
            found = target(ref)
            if isinstance(found, dict):
                merged = {**found, **{k: v for k, v in node.items() if k != "$ref"}}
                return walk(merged, depth, expanding | {ref})
        return {k: walk(v, depth + 1, expanding) for k, v in node.items() if k != "$defs"}

    return cast(dict[str, Any], walk(schema, 0, frozenset()))


def _rename_ids(node: JSON) -> JSON:
    if isinstance(node, list):
        return [_rename_ids(v) for v in node]
    if not isinstance(node, dict):
        return node
    out = {k: _rename_ids(v) for k, v in node.items()}
    properties = out.get("properties")
    if isinstance(properties, dict) and "id" in properties:
        out["properties"] = {("id__" if k == "id" else k): v for k, v in properties.items()}
        if isinstance(out.get("required"), list):
            out["required"] = ["id__" if r == "id" else r for r in out["required"]]
    return out


_STRICT_KEYS = ("type", "enum", "properties", "items", "required", "description")
_ITEM_KEYS = ("type", "properties", "items", "required")
_SCALARS = frozenset({"string", "number", "integer", "boolean"})


def _strict(node: JSON, where: str) -> JSON:
    """Extend's allowlist dialect; `where` is `root`, `property` or `item` (nullability differs)."""
    if not isinstance(node, dict):
        return node
    if "type" not in node and "enum" not in node:
        for union in _UNIONS:
            branches = node.get(union)
            if isinstance(branches, list):
                branch = next((b for b in branches if isinstance(b, dict) and b.get("type") != "null"), None)
                if branch is not None:
                    siblings = {k: v for k, v in node.items() if k not in _UNIONS}
                    return _strict({**branch, **siblings}, where)
                break
    out = {k: node[k] for k in _STRICT_KEYS if k in node}
    if "type" in out:
        out["type"] = _first_type(out["type"])
    elif "properties" in out and "enum" not in out:
        out = {"type": "object", **out}
    kind = out.get("type")
    if isinstance(out.get("properties"), dict):
        out["properties"] = {k: _strict(v, "property") for k, v in out["properties"].items()}
    if "items" in out:
        out["items"] = _strict(out["items"], "item")
    if where == "item":
        if kind in _SCALARS:
            return {"type": kind}
        return {k: out[k] for k in _ITEM_KEYS if k in out}
    if where == "property":
        if kind in _SCALARS:
            out["type"] = [kind, "null"]
        if isinstance(out.get("enum"), list) and None not in out["enum"]:
            out["enum"] = [*out["enum"], None]
    return out


def extend_dialect(schema: dict[str, Any]) -> dict[str, Any]:
    """Extend: `id` renamed `id__` (reserved), `$ref`s inlined, then the strict allowlist dialect."""
    return cast(dict[str, Any], _strict(inline_refs(_rename_ids(schema)), "root"))


def restore_ids(value: JSON) -> JSON:
    """Undo Extend's `id` → `id__` renaming in an answer."""
    if isinstance(value, list):
        return [restore_ids(v) for v in value]
    if isinstance(value, dict):
        return {("id" if k == "id__" else k): restore_ids(v) for k, v in value.items()}
    return value


_JSON_TYPES = ((bool, "boolean"), (int, "integer"), (float, "number"), (str, "string"))


def _enum_type(members: list[Any]) -> str | list[str]:
    names = sorted({next((n for t, n in _JSON_TYPES if isinstance(m, t)), "string") for m in members if m is not None})
    names = names or ["string"]
    if None in members:
        names.append("null")
    return names[0] if len(names) == 1 else names


def llama_dialect(schema: dict[str, Any]) -> dict[str, Any]:
    """LlamaExtract: `$ref`s inlined, every `$`-key dropped, enums typed, open maps made `true`."""

    def drop_dollars(node: JSON) -> JSON:
        if isinstance(node, list):
            return [drop_dollars(v) for v in node]
        if isinstance(node, dict):
            return {k: drop_dollars(v) for k, v in node.items() if not k.startswith("$")}
        return node

    def typed(node: JSON) -> JSON:
        if not isinstance(node, dict):
            return node
        out = dict(node)
        if isinstance(out.get("enum"), list) and "type" not in out:
            out["type"] = _enum_type(out["enum"])
        if isinstance(out.get("additionalProperties"), dict):
            out["additionalProperties"] = True
        for union in _UNIONS:
            if isinstance(out.get(union), list):
                out[union] = [typed(b) for b in out[union]]
        if isinstance(out.get("properties"), dict):
            out["properties"] = {k: typed(v) for k, v in out["properties"].items()}
        if "items" in out:
            out["items"] = typed(out["items"])
        return out

    return cast(dict[str, Any], typed(drop_dollars(inline_refs(schema))))


def azure_field_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """Azure Content Understanding's `fieldSchema` (not JSON Schema), from the root's properties.

    Like the reference, `$ref`s are not resolved (a `$ref` property becomes a string), so results
    stay comparable with the published Azure runs.
    """

    def properties(node: JSON) -> dict[str, Any]:
        props = node.get("properties") if isinstance(node, dict) else None
        return {k: field(v) for k, v in props.items()} if isinstance(props, dict) else {}

    def field(node: JSON) -> dict[str, Any]:
        node = node if isinstance(node, dict) else {}
        kind = _first_type(node.get("type"))
        description = node.get("description") or ""
        if kind == "object":
            return {"type": "object", "description": description, "properties": properties(node)}
        if kind == "array":
            items = node.get("items") if isinstance(node.get("items"), dict) else {}
            if _first_type(items.get("type")) == "object":
                item = {"type": "object", "properties": properties(items)}
            else:
                item = {"type": "string"}
            return {"type": "array", "description": description, "items": item}
        simple = {"number": "number", "integer": "number", "boolean": "boolean"}.get(kind, "string")
        return {"type": simple, "description": description}

    return {"fields": properties(schema)}
