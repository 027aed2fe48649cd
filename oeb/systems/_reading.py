"""Shared rules for reading vendor answers, as the reference reads them.

Citation and confidence envelopes are not stripped here: the scorer normalises them identically for
every vendor. Adapters only unwrap what their format forces.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from oeb.systems.errors import SystemFailed

_FENCE = re.compile(r"^\s*```(?:json)?[ \t]*\n(.*?)\n?```\s*$", re.DOTALL | re.IGNORECASE)


@contextmanager
def reading(what: str, **details: Any) -> Iterator[None]:
    """Turn the errors of a malformed answer (a missing key, a wrong type) into `SystemFailed`.

    `details` (status, body, cost, job_id) are attached to the failure.
    """
    try:
        yield
    except (ValueError, KeyError, IndexError, TypeError, AttributeError) as error:
        raise SystemFailed(f"malformed answer while reading {what}: {error!r}", **details) from error


def model_json(text: str) -> Any:
    """Parse JSON given bare or inside one Markdown code fence; raise `ValueError` otherwise."""
    match = _FENCE.match(text)
    return json.loads(match.group(1) if match else text)


def merge_answers(value: Any) -> dict[str, Any] | None:
    """One object from an answer that may be a list of partial objects (one per extraction pass).

    A key keeps its first value unless that value is empty (null, [] or {}), which a later one
    replaces.
    """
    if isinstance(value, dict):
        return value or None
    if not isinstance(value, list):
        return None
    merged: dict[str, Any] = {}
    for part in value:
        if isinstance(part, dict):
            for key, item in part.items():
                if key not in merged or merged[key] in (None, [], {}):
                    merged[key] = item
    return merged or None


def extraction(value: Any, **details: Any) -> dict[str, Any]:
    """`value` if it is a non-empty JSON object, else the failure that says what it is instead."""
    if isinstance(value, dict) and value:
        return value
    shown = json.dumps(value)[:200] if value is not None else "null"
    raise SystemFailed(f"the answer holds no extraction (a non-empty JSON object); it holds {shown}", **details)


def number(value: Any) -> float | None:
    """A numeric price or count; booleans are not numbers."""
    return value if isinstance(value, int | float) and not isinstance(value, bool) else None


def dig(value: Any, path: str) -> Any:
    """The value at a dotted path through nested objects, or None."""
    for part in path.split("."):
        if not isinstance(value, dict):
            return None
        value = value.get(part)
    return value
