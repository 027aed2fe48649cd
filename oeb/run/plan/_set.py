"""`--set path=value`: replace one value that a config already has (docs/running.md).

Keys may contain dots (model ids such as `openai/gpt-5.6-sol`), so every way of splitting the path
is tried and exactly one existing key path must match. Values are read as YAML (`150`, `true`,
`[a, b]`, `{x: {}}`, `null`); an empty value is the empty string.
"""

from __future__ import annotations

import difflib
from typing import Any

import yaml

from oeb._yaml import load_yaml
from oeb.errors import ConfigError

Path = tuple[str, ...]

SHORT = {"dataset": ("url", "adjudications")}
"""Keys a config may write short, as a string standing for one key of their mapping (`dataset: URL`
is `dataset: {url: URL, adjudications: null}`): a `--set` under such a key widens it first."""


def apply_sets(tree: dict[str, Any], assignments: list[str]) -> dict[str, Any]:
    """The config tree with each `path=value` applied in order (the tree is not modified)."""
    tree = yaml.safe_load(yaml.safe_dump(tree))  # a deep copy that stays plain YAML
    for assignment in assignments:
        path, value = parse_assignment(assignment)
        _widen(tree, path)
        *parents, last = _resolve(tree, path)
        node = tree
        for key in parents:
            node = node[key]
        node[last] = value
    return tree


def _widen(tree: dict[str, Any], path: str) -> None:
    """The short form of the key `path` goes under, as its mapping (`SHORT`), in place."""
    for key, (named, *others) in SHORT.items():
        if path.startswith(f"{key}.") and isinstance(tree.get(key), str):
            tree[key] = {named: tree[key]} | dict.fromkeys(others)


def parse_assignment(assignment: str, flag: str = "--set", example: str = "rows.sample=5") -> tuple[str, Any]:
    """`path=value` as given to `flag`: the path and the value read as YAML (`5`, `null`, `[a, b]`)."""
    path, equals, text = assignment.partition("=")
    if not equals or not path.strip():
        raise ConfigError(f"{flag} {assignment!r}: write {'path' if flag == '--set' else 'name'}=value, e.g. {example}")
    if not text.strip():
        return path.strip(), ""
    try:
        return path.strip(), load_yaml(text)
    except yaml.YAMLError as error:
        problem = str(error).splitlines()[0]
        raise ConfigError(f"{flag} {assignment!r}: the value is not YAML ({problem}); quote it") from None


def _readings(node: Any, parts: list[str], prefix: str) -> list[Path]:
    """Every split of `parts` into keys that exist under `node`."""
    if not parts:
        return [()]
    if isinstance(node, list):
        raise ConfigError(f"--set {prefix}.{'.'.join(parts)}: {prefix} is a list; set it whole: {prefix}=[...]")
    if not isinstance(node, dict):
        return []
    found: list[Path] = []
    for cut in range(1, len(parts) + 1):
        key = ".".join(parts[:cut])
        if key in node:
            inner = f"{prefix}.{key}" if prefix else key
            found += [(key, *rest) for rest in _readings(node[key], parts[cut:], inner)]
    return found


def _resolve(tree: dict[str, Any], path: str) -> Path:
    readings = _readings(tree, path.split("."), "")
    if len(readings) == 1:
        return readings[0]
    if readings:
        shown = " and ".join(" -> ".join(repr(k) for k in reading) for reading in readings)
        raise ConfigError(f"--set {path}: the path reads two ways ({shown}); edit the config file instead")
    raise ConfigError(f"--set {path}: {_unknown(tree, path.split('.'))}")


def _unknown(tree: dict[str, Any], parts: list[str]) -> str:
    """Why a path names nothing: the closest existing key, or what its parent does have."""
    node: Any = tree
    depth = 0
    while depth < len(parts) and isinstance(node, dict):
        for cut in range(len(parts) - 1, depth, -1):
            key = ".".join(parts[depth:cut])
            if key in node:
                node, depth = node[key], cut
                break
        else:
            break
    parent = ".".join(parts[:depth])
    keys = sorted(str(key) for key in node) if isinstance(node, dict) else []  # YAML keys may be numbers
    wanted = ".".join(parts[depth:])
    close = difflib.get_close_matches(wanted, keys, n=1) or difflib.get_close_matches(parts[depth], keys, n=1)
    full = ".".join(parts)
    if close:
        return f"the config has no key {full}; did you mean {'.'.join([*parts[:depth], close[0]])}?"
    where = parent or "the config"
    if keys:
        return f"the config has no key {full}; {where} has {', '.join(keys)}"
    return f"the config has no key {full}; {where} has nothing"
