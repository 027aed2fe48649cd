"""The one resolver for a dataset's JSON Schema references: everything is resolved inside the schema.

Datasets come from the Hub and from strangers, so nothing a schema names is ever fetched: a `$ref`,
`$dynamicRef` or `$recursiveRef` must land inside the schema itself, and a `$schema` or `$id` URL is
only a name (a known draft's meta-schema ships with jsonschema; an unknown one is read as Draft
2020-12). Every reader of a dataset's schema goes through here: the manifest check (so `check`, `run`,
`grade`, `report` and the explorer refuse at opening), and the gold audit's validator.

`check_references(schema, document)` refuses a schema in one line naming the document, the keyword
and the URL; `local_registry(schema, document)` is the `referencing.Registry` to hand to a jsonschema
validator (`validator_class(schema, registry=...)`), whose retrieval refuses the same way.
`referencing` is imported only for schemas that hold a reference (it costs about 0.2 s).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import urldefrag, urljoin

from oeb.errors import SchemaError

if TYPE_CHECKING:
    import referencing

__all__ = ["REFERENCE_KEYWORDS", "check_references", "local_registry"]

REFERENCE_KEYWORDS = ("$ref", "$dynamicRef", "$recursiveRef")
# Values that are data, not schemas: a "$ref" key inside them is not a reference.
_DATA_KEYWORDS = frozenset({"enum", "const", "default", "examples"})
_FIX = "inline the referenced schema under $defs and refer to it as '#/$defs/Name'"


class _NotFetched(Exception):
    """Raised by the registry's retrieval: oeb never fetches what a schema names."""


def _refuse_retrieval(uri: str) -> Any:
    raise _NotFetched(uri)


def _references(node: Any, base: str) -> Iterator[tuple[str, str, str]]:
    """(keyword, value, base URI) of every reference in a schema, with the base each nested `$id` sets."""
    if isinstance(node, list):
        for item in node:
            yield from _references(item, base)
        return
    if not isinstance(node, Mapping):
        return
    own_id = node.get("$id", node.get("id"))
    if isinstance(own_id, str) and not own_id.startswith("#"):
        base = urldefrag(urljoin(base, own_id)).url
    for key, value in node.items():
        if key in REFERENCE_KEYWORDS and isinstance(value, str):
            yield key, value, base
        elif key not in _DATA_KEYWORDS:
            yield from _references(value, base)


def _root_uri(schema: Mapping[str, Any]) -> str:
    own_id = schema.get("$id", schema.get("id"))
    return urldefrag(own_id).url if isinstance(own_id, str) and not own_id.startswith("#") else ""


def local_registry(schema: Mapping[str, Any]) -> referencing.Registry[Any]:
    """A registry holding only the schema and the subschemas it names with `$id`; retrieving any other
    URI raises (as `referencing.exceptions.Unretrievable`), so a validator built on it fetches nothing."""
    import referencing
    import referencing.jsonschema

    # An unknown `$schema` is only a name: the schema is read as Draft 2020-12, never fetched.
    resource = referencing.Resource.from_contents(schema, default_specification=referencing.jsonschema.DRAFT202012)
    registry: referencing.Registry[Any] = referencing.Registry(retrieve=_refuse_retrieval)  # type: ignore[call-arg]
    crawled: referencing.Registry[Any] = registry.with_resource(_root_uri(schema), resource).crawl()
    return crawled


def check_references(schema: Mapping[str, Any], document: str) -> None:
    """Refuse (SchemaError naming `document`, the keyword and the URL) unless every reference in the
    schema resolves inside it; nothing is fetched, whatever the schema says."""
    found = list(_references(schema, _root_uri(schema)))
    if not found:
        return
    import referencing.exceptions

    registry = local_registry(schema)
    for keyword, value, base in found:
        outside = urldefrag(urljoin(base, value)).url
        if outside not in registry:
            raise SchemaError(
                f"{document}: the schema's {keyword} {value!r} names {outside!r}, outside the schema, and "
                f"oeb never fetches what a dataset names; {_FIX}"
            )
        try:
            registry.resolver(base_uri=base).lookup(value)
        except referencing.exceptions.Unresolvable:
            raise SchemaError(
                f"{document}: the schema's {keyword} {value!r} points at nothing inside the schema; "
                f"point it at an existing subschema ({_FIX})"
            ) from None
