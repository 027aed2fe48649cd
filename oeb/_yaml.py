"""The one YAML reader of files a user gives (configs, adjudication files): `yaml.safe_load` with the
limits that keep a hostile file from crashing or hanging oeb."""

from __future__ import annotations

import re
from typing import Any

import yaml

_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
"""libyaml's safe loader when PyYAML was built with it: the same documents, about ten times faster."""

MAX_VALUES = 100_000
"""More values than any config holds: a file past it is a YAML alias bomb (`&a [*b, *b, ...]`)."""
MAX_DEPTH = 100


def _safe_load(text: str) -> Any:
    """libyaml's safe loader, and PyYAML's own where libyaml refuses: libyaml rejects some documents
    PyYAML reads (a JSON string escaping a surrogate pair, `"\\ud800\\udc00"`), and a refusal is then
    PyYAML's, with its line and column, as before libyaml was used."""
    try:
        return yaml.load(text, Loader=_LOADER)
    except yaml.YAMLError:
        if _LOADER is yaml.SafeLoader:
            raise
        return yaml.load(text, Loader=yaml.SafeLoader)


def load_yaml(text: str) -> Any:
    """`yaml.safe_load`, refusing as a `yaml.YAMLError` what would crash or hang oeb: nesting deeper than
    MAX_DEPTH (PyYAML takes seconds per thousand `[` and then overflows Python's stack), and aliases
    that expand past MAX_VALUES values (a "billion laughs" file)."""
    too_deep = yaml.YAMLError(f"it nests more than {MAX_DEPTH} levels deep; a config needs a few")
    depth = 0
    for bracket in re.findall(r"[][{}]", text):  # flow nesting, before PyYAML spends time on it
        depth = max(0, depth + (1 if bracket in "[{" else -1))
        if depth > MAX_DEPTH:
            raise too_deep
    try:
        value = _safe_load(text)
    except RecursionError:
        raise too_deep from None
    count, stack = 0, [(value, 0)]
    while stack:
        node, level = stack.pop()
        count += 1
        if count > MAX_VALUES or level > MAX_DEPTH:
            raise yaml.YAMLError(
                f"it holds more than {MAX_VALUES:,} values or {MAX_DEPTH} levels once its aliases (*name) are "
                "expanded; write the values out"
            )
        children = node.values() if isinstance(node, dict) else node if isinstance(node, list) else ()
        stack.extend((child, level + 1) for child in children)
    return value
