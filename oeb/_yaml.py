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


class _UniqueKeys:
    """A safe loader refusing a key written twice in one mapping (YAML keeps the last one silently: a
    hand-edited entry with two `status:` lines would be read as whichever came last). Keys a merge
    (`<<: *name`) brings in may be overridden, as YAML means them to be."""

    def construct_mapping(self, node: Any, deep: bool = False) -> Any:
        seen: set[str] = set()
        for key, _ in node.value:
            if isinstance(key, yaml.ScalarNode) and key.tag != "tag:yaml.org,2002:merge":
                if key.value in seen:
                    raise yaml.constructor.ConstructorError(
                        None, None, f"the key {key.value!r} is written twice in one mapping", key.start_mark
                    )
                seen.add(key.value)
        return super().construct_mapping(node, deep=deep)  # type: ignore[misc]


class _UniqueFast(_UniqueKeys, _LOADER):  # type: ignore[misc,valid-type]
    pass


class _UniqueSlow(_UniqueKeys, yaml.SafeLoader):
    pass


def _safe_load(text: str, unique_keys: bool = False) -> Any:
    """libyaml's safe loader, and PyYAML's own where libyaml refuses: libyaml rejects some documents
    PyYAML reads (a JSON string escaping a surrogate pair, `"\\ud800\\udc00"`), and a refusal is then
    PyYAML's, with its line and column, as before libyaml was used."""
    fast, slow = (_UniqueFast, _UniqueSlow) if unique_keys else (_LOADER, yaml.SafeLoader)
    try:
        return yaml.load(text, Loader=fast)
    except yaml.YAMLError:
        if fast is slow or _LOADER is yaml.SafeLoader:
            raise
        return yaml.load(text, Loader=slow)


def load_yaml(text: str, unique_keys: bool = False) -> Any:
    """`yaml.safe_load`, refusing as a `yaml.YAMLError` what would crash or hang oeb: nesting deeper than
    MAX_DEPTH (PyYAML takes seconds per thousand `[` and then overflows Python's stack), and aliases
    that expand past MAX_VALUES values (a "billion laughs" file); with `unique_keys`, a key written
    twice in one mapping (a hand-edited file's second `status:`)."""
    too_deep = yaml.YAMLError(f"it nests more than {MAX_DEPTH} levels deep; a config needs a few")
    depth = 0
    for bracket in re.findall(r"[][{}]", text):  # flow nesting, before PyYAML spends time on it
        depth = max(0, depth + (1 if bracket in "[{" else -1))
        if depth > MAX_DEPTH:
            raise too_deep
    try:
        value = _safe_load(text, unique_keys)
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
