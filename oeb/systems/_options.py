"""Checking user-given options against an adapter's dataclass fields (docs/systems/index.md).

Options are part of a run's identity, so they must be plain JSON and must round-trip: an int given
for a float option becomes a float (`0` and `0.0` name one run), a list for a tuple option a tuple.
"""

from __future__ import annotations

import dataclasses
import difflib
import json
import math
import types
import typing
from dataclasses import MISSING
from typing import Any, NamedTuple

from oeb.systems.errors import OptionError

_SIMPLE = {str: "str", int: "int", float: "float", bool: "bool", list: "list", dict: "dict", tuple: "tuple"}


class OptionInfo(NamedTuple):
    """One option as `oeb systems NAME` shows it."""

    name: str
    default: Any  # `REQUIRED` when the option has no default
    help: str
    choices: tuple[Any, ...]


REQUIRED = "(required)"


def describe(cls: type) -> list[OptionInfo]:
    infos = []
    for field in dataclasses.fields(cls):
        if field.default is not MISSING:
            default = field.default
        elif field.default_factory is not MISSING:
            default = field.default_factory()
        else:
            default = REQUIRED
        meta = field.metadata
        infos.append(OptionInfo(field.name, default, meta.get("help", ""), tuple(meta.get("choices", ()))))
    return infos


MAX_DEPTH = 256
"""Values nested deeper are not plain here: JSON encoders and `repr` recurse, and no option or
answer of a real system nests this deep."""


def is_plain(value: Any) -> bool:
    """Whether `value` is plain JSON (finite numbers, str-keyed objects) nested at most `MAX_DEPTH`
    levels. Read without recursion, so a hostile value deeper than Python's stack is just not plain."""
    stack = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if item is None or isinstance(item, str | bool | int):
            continue
        if isinstance(item, float):
            if not math.isfinite(item):
                return False
            continue
        if depth >= MAX_DEPTH:
            return False
        if isinstance(item, list | tuple):
            stack.extend((child, depth + 1) for child in item)
        elif isinstance(item, dict) and all(isinstance(key, str) for key in item):
            stack.extend((child, depth + 1) for child in item.values())
        else:
            return False
    return True


def plain(value: Any) -> Any:
    """An option value as JSON stores it (tuples become lists)."""
    return json.loads(json.dumps(value))


def _accepted(annotation: Any) -> tuple[type | None, ...] | None:
    """The simple types an annotation allows (None for null), or None when it is not simple."""
    if annotation is type(None):
        return (None,)
    origin = typing.get_origin(annotation)
    if origin in (types.UnionType, typing.Union):
        members = [_accepted(a) for a in typing.get_args(annotation)]
        if any(m is None for m in members):
            return None
        return tuple(t for m in members for t in m)  # type: ignore[union-attr]
    base = origin or annotation
    return (base,) if base in _SIMPLE else None


def _fits(value: Any, kind: type | None) -> bool:
    if kind is None:
        return value is None
    if kind is float:
        return isinstance(value, int | float) and not isinstance(value, bool)
    if kind is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if kind is tuple:
        return isinstance(value, list | tuple)
    return isinstance(value, kind)


def _coerce(value: Any, kinds: tuple[type | None, ...]) -> Any:
    if isinstance(value, int) and not isinstance(value, bool) and float in kinds and int not in kinds:
        return float(value)
    if isinstance(value, list) and tuple in kinds:
        return tuple(value)
    return value


def _type_names(kinds: tuple[type | None, ...]) -> str:
    return " or ".join("null" if k is None else _SIMPLE[k] for k in kinds)


def validate(cls: type, options: dict[str, Any]) -> dict[str, Any]:
    """The keyword arguments to build `cls` from user `options`, or an `OptionError` naming every
    problem of them (`problems`)."""
    found = problems(cls, options)
    if found:
        raise OptionError("; ".join(found))
    hints = typing.get_type_hints(cls)
    checked = {}
    for key, value in options.items():
        kinds = _accepted(hints[key])
        checked[key] = value if kinds is None else _coerce(value, kinds)
    return checked


def problems(cls: type, options: dict[str, Any]) -> list[str]:
    """Every problem of user `options` for `cls`, one sentence each: unknown names (with the nearest
    option), missing values, values that are not plain JSON or of a wrong type."""
    fields = {f.name: f for f in dataclasses.fields(cls)}
    name = getattr(cls, "name", cls.__name__)
    listing = ", ".join(fields) or "none"
    found = []
    for key in options:
        if key not in fields:
            close = difflib.get_close_matches(str(key), list(fields), n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            found.append(f"{name} has no option {key!r}{hint}; its options are: {listing}")
    missing = [
        f for f in fields.values() if f.default is MISSING and f.default_factory is MISSING and f.name not in options
    ]
    if missing:
        names = ", ".join(f.name for f in missing)
        found.append(f"{name} needs a value for the option(s) {names}, which have no default")
    hints = typing.get_type_hints(cls)
    for key, value in options.items():
        if key not in fields:
            continue
        if not is_plain(value):
            found.append(
                f"option {key!r} of {name} must be plain JSON (finite numbers, text keys, nested at most "
                f"{MAX_DEPTH} levels), not this {type(value).__name__}"
            )
            continue
        kinds = _accepted(hints[key])
        if kinds is not None and not any(_fits(value, k) for k in kinds):
            found.append(f"option {key!r} of {name} takes {_type_names(kinds)}, not {value!r} ({type(value).__name__})")
    return found
