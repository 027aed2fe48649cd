"""The one resolver for a dataset's JSON Schema references: everything is resolved inside the schema.

Datasets come from the Hub and from strangers, and a benchmark job in CI or on a cluster must not be
steerable by the data it grades into requesting internal addresses. So nothing a schema names is ever
fetched: a `$ref`, `$dynamicRef` or `$recursiveRef` must land inside the schema itself (on the schema
or on a subschema it names with `$id`), and a `$schema` or `$id` URL is only a name (a known draft's
meta-schema ships with jsonschema; an unknown one is read as Draft 2020-12).

This module is the one entry point for every reader of a dataset's schema; a new reader (a validator,
the `oeb view` explorer, a vendor's schema dialect) goes through it, never through jsonschema's
defaults, which download what a schema refers to:

- the manifest check (`oeb._manifest`) calls `check_references` on every row, so `oeb check`, `run`,
  `grade`, `audit`, `report` and the explorer refuse the dataset at opening, in one line naming the
  document, the keyword and the URL, before anything is asked, graded or shown;
- the gold audit's validator (`oeb.report.audit`, behind `oeb audit` and `oeb report --audit`) is built
  on `local_registry`, whose retrieval refuses, so even a schema that got past the check fetches nothing.

A reference inside the schema that points at nothing is left to the scorer's own refusal
(`oeb.scoring.schema`), which names it with the fix.
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
_NOT_A_STRING_ID = "{document}: the schema holds an $id that is not a string; give a URI or remove it"
_FIX = "inline the referenced schema under $defs and refer to it as '#/$defs/Name'"


class _NotFetched(Exception):
    """Raised by the registry's retrieval: oeb never fetches what a schema names."""


def _refuse_retrieval(uri: str) -> Any:
    raise _NotFetched(uri)


def _resource(schema: Mapping[str, Any], document: str) -> referencing.Resource[Any]:
    import referencing
    import referencing.jsonschema

    for keyword in ("$schema", "$id"):
        if keyword in schema and not isinstance(schema[keyword], str):
            raise SchemaError(
                f"{document}: the schema's {keyword} {schema[keyword]!r} is not a string; give a URI or remove it"
            )
    # An unknown `$schema` is only a name: the schema is read as Draft 2020-12, never fetched.
    return referencing.Resource.from_contents(schema, default_specification=referencing.jsonschema.DRAFT202012)


def _references(resource: referencing.Resource[Any], base: str, document: str) -> Iterator[tuple[str, str, str]]:
    """(keyword, value, base URI) of every reference, each with the base its enclosing `$id`s set.

    The walk is the draft's own (jsonschema's `referencing`): `properties` values are schemas, an
    `enum` or `const` is data, so a property named `$ref` or `$id` is never mistaken for a keyword."""
    try:
        own_id = resource.id()
    except (AttributeError, TypeError):  # a non-string $id: referencing calls str methods on it
        raise SchemaError(_NOT_A_STRING_ID.format(document=document)) from None
    if own_id and not own_id.startswith("#"):
        base = urldefrag(urljoin(base, own_id)).url
    contents = resource.contents
    if isinstance(contents, Mapping):
        for keyword in REFERENCE_KEYWORDS:
            if isinstance(contents.get(keyword), str):
                yield keyword, contents[keyword], base
    for sub in resource.subresources():
        yield from _references(sub, base, document)


def local_registry(schema: Mapping[str, Any], document: str = "the schema") -> referencing.Registry[Any]:
    """A registry holding only the schema and the subschemas it names with `$id`; retrieving any other
    URI raises (as `referencing.exceptions.Unretrievable`), so a validator built on it fetches nothing."""
    import referencing

    resource = _resource(schema, document)
    registry: referencing.Registry[Any] = referencing.Registry(retrieve=_refuse_retrieval)  # type: ignore[call-arg]
    try:
        crawled: referencing.Registry[Any] = registry.with_resource(resource.id() or "", resource).crawl()
    except (AttributeError, TypeError):  # a non-string $id below the root: referencing calls str methods on it
        raise SchemaError(_NOT_A_STRING_ID.format(document=document)) from None
    return crawled


def check_references(schema: Mapping[str, Any], document: str) -> None:
    """Refuse (SchemaError naming `document`, the keyword and the URL) a schema with a reference that
    leaves it; nothing is fetched, whatever the schema says."""
    if not any(keyword in str(schema) for keyword in REFERENCE_KEYWORDS):
        return  # most schemas hold no reference: `referencing` (about 0.2 s to import) is not needed
    found = list(_references(_resource(schema, document), "", document))
    registry = local_registry(schema, document)
    for keyword, value, base in found:
        target = urldefrag(urljoin(base, value)).url
        if target not in registry:
            named = repr(value) if target == value else f"{value!r} (that is, {target!r})"
            raise SchemaError(
                f"{document}: the schema's {keyword} {named} points outside the schema, and oeb never "
                f"fetches what a dataset names; {_FIX}"
            )
