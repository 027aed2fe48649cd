"""Gold values against their schema: what `oeb audit` reports as gold_invalid and what
`oeb adjudicate check` refuses in an entry's value.

Only what a value itself says is checked (type, enum, const, format, pattern), not the document's
shape: a gold leaves out what the document does not state, so `required` is no error, and a null is
the gold stating nothing. Schema references resolve inside the schema only (`oeb.schema_refs`).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import jsonschema  # type: ignore[import-untyped]
import referencing.exceptions

from oeb.errors import SchemaError
from oeb.schema_refs import local_registry
from oeb.scoring import show_address

CHECKED = frozenset({"type", "enum", "const", "format", "pattern"})
"""The schema keywords a gold value is checked against."""


@dataclass(frozen=True)
class _Validator:
    """A schema's validator, built once per distinct schema (datasets repeat a few schemas)."""

    check: jsonschema.protocols.Validator | None
    problem: str


_VALIDATORS: dict[str, _Validator] = {}


def _validator(schema: dict[str, Any]) -> _Validator:
    key = json.dumps(schema, sort_keys=True)
    if key not in _VALIDATORS:
        cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
        try:
            cls.check_schema(schema)
            check = cls(schema, registry=local_registry(schema), format_checker=cls.FORMAT_CHECKER)
            _VALIDATORS[key] = _Validator(check, "")
        except jsonschema.SchemaError as error:
            _VALIDATORS[key] = _Validator(None, error.message)
        except SchemaError as error:  # the dataset check refuses these first; no validator, nothing fetched
            _VALIDATORS[key] = _Validator(None, str(error))
    return _VALIDATORS[key]


def _address(path: Sequence[Any]) -> tuple[tuple[str, Any], ...]:
    return tuple(("i", step) if isinstance(step, int) else ("k", step) for step in path)


def schema_errors(schema: dict[str, Any], gold: dict[str, Any]) -> Iterator[tuple[str, Any, str]]:
    """Each gold value the schema refuses: its printed address, the value and why."""
    validator = _validator(schema)
    if validator.check is None:
        return
    try:
        errors = list(validator.check.iter_errors(gold))
    except referencing.exceptions.Unresolvable:  # points at nothing in the schema (outside: refused at opening)
        return
    for error in errors:
        if error.validator not in CHECKED or (error.validator == "type" and error.instance is None):
            continue
        yield show_address(_address(list(error.absolute_path))), error.instance, error.message
