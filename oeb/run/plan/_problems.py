"""The config checker: every problem of a config tree, one line each (`oeb.run.plan.config`).

A key missing at any level is named on one shared line, an unknown key with the nearest one (`did you
mean`), a value of the wrong kind with what it should be; the user's own text is quoted when it would
break the line.
"""

from __future__ import annotations

import datetime
import difflib
import math
import sys
from typing import Any

from oeb.errors import ConfigError, OebError


class Problems:
    """Collects every problem of a config tree, so one error lists them all, one line each: a key
    missing at any level on one shared line, an unknown key with the nearest one (`did you mean`)."""

    def __init__(self, optional: tuple[str, ...] = ()) -> None:
        self.optional = optional
        """Dotted keys a config may leave out."""
        self.found: list[str] = []
        self.seen: set[str] = set()
        self.missing: list[str] = []
        self.unknown: list[tuple[str, str, tuple[str, ...]]] = []
        """(prefix, the key as shown, the keys allowed there)."""
        self.kind: type[OebError] = ConfigError
        """The class of the error raised: the system's own (a missing key, an unknown system) when it
        is the config's only problem, so its exit code and handling stay the same."""

    def add(self, key: str, problem: str) -> None:
        # A key is the user's own text: one with a line break or a control character is quoted, so the
        # error stays on one line.
        self.found.append(f"{key if key.isprintable() else repr(key)} {problem}")

    def lines(self) -> list[str]:
        """Every problem once: unknown keys first (with what they may have meant), then the rest,
        then the keys still missing."""
        missing, lines = list(self.missing), []
        for prefix, key, allowed in self.unknown:
            absent = [name for name in allowed if f"{prefix}{name}" in missing]
            close = difflib.get_close_matches(key, absent, n=1, cutoff=0.6) or difflib.get_close_matches(
                key, allowed, n=1, cutoff=0.6
            )
            if close and f"{prefix}{close[0]}" in missing:
                missing.remove(f"{prefix}{close[0]}")
                lines.append(f"{prefix}{key} is not a key a config has; did you mean {prefix}{close[0]}?")
            elif close:
                lines.append(f"{prefix}{key} is not a key a config has; did you mean {prefix}{close[0]}?")
            else:
                lines.append(f"{prefix}{key} is not a key a config has; keys here: {', '.join(allowed)}")
        lines += self.found
        if missing:
            names = ", ".join(missing[:-1]) + f" and {missing[-1]}" if len(missing) > 1 else missing[0]
            verb = "are" if len(missing) > 1 else "is"
            lines.append(f"{names} {verb} missing; a config gives every key (oeb init SYSTEM writes one)")
        return list(dict.fromkeys(lines))

    def raise_if_any(self, where: str) -> None:
        lines = self.lines()
        if len(lines) == 1:
            raise self.kind(f"{where}: {lines[0]}")
        if lines:
            raise ConfigError(f"{where} has {len(lines)} problems:\n" + "\n".join(f"  {line}" for line in lines))

    def keys(self, node: dict[str, Any], prefix: str, allowed: tuple[str, ...]) -> None:
        for key in allowed:
            dotted = f"{prefix}{key}"
            if key in node:
                self.seen.add(dotted)
            elif dotted not in self.optional:
                self.missing.append(dotted)
        for key in node:
            if key not in allowed:
                shown = key if isinstance(key, str) and key.isprintable() and key else repr(key)  # one line
                self.unknown.append((prefix, shown, allowed))

    def value(self, node: dict[str, Any], key: str) -> tuple[bool, Any]:
        """Whether the dotted key was given (at a level that is a mapping), and its value."""
        name = key.rsplit(".", 1)[-1]
        return (key in self.seen and isinstance(node, dict) and name in node), node.get(name) if node else None

    def mapping(self, node: dict[str, Any], key: str, allowed: tuple[str, ...]) -> dict[str, Any]:
        present, value = self.value(node, key)
        if not present:
            return {}
        if not isinstance(value, dict):
            self.add(key, f"must be a mapping of {', '.join(allowed)}, not {value!r}")
            return {}
        self.keys(value, f"{key}.", allowed)
        return value

    def _bad(self, key: str, should: str, value: Any) -> None:
        hint = ""
        if should.startswith("a string") and value is not None:
            hint = f" (YAML read it as {_kind(value)}; quote it)"
        self.add(key, f"must be {should}, not {value!r}{hint}")

    def string(self, node: dict[str, Any], key: str, *, optional: bool = False) -> Any:
        present, value = self.value(node, key)
        if not present or (optional and value is None):
            return None
        if not isinstance(value, str):
            self._bad(key, "a string" + (" or null" if optional else ""), value)
        elif not value:
            self.add(key, "must have at least one character")
        return value

    def integer(self, node: dict[str, Any], key: str) -> int:
        present, value = self.value(node, key)
        if not present:
            return 0
        if not isinstance(value, int) or isinstance(value, bool):
            self._bad(key, "an integer", value)
            return 0
        if value < 0:
            self.add(key, f"must be 0 or more, not {value}")
        return value

    def number(self, node: dict[str, Any], key: str, *, positive: bool, optional: bool = False) -> Any:
        present, value = self.value(node, key)
        if not present or (optional and value is None):
            return None
        if not isinstance(value, int | float) or isinstance(value, bool):
            self._bad(key, "a number" + (" or null" if optional else ""), value)
            return None
        if (isinstance(value, float) and not math.isfinite(value)) or abs(value) > sys.float_info.max:
            self.add(key, f"must be a finite number, not {value!r}")
            return None
        elif positive and not value > 0:
            self.add(key, f"must be greater than 0, not {value!r}")
        return value

    def id_list(self, node: dict[str, Any], key: str) -> list[str] | None:
        present, value = self.value(node, key)
        if not present or value is None:
            return None
        if not isinstance(value, list):
            self.add(key, f"must be a list of ids or null, not {value!r}")
            return None
        for number, item in enumerate(value):
            if not isinstance(item, str):
                self._bad(f"{key}.{number}", "a string", item)
        return value

    def system(self, system: Any) -> tuple[str, dict[str, Any]]:
        if "system" not in self.seen:
            return "", {}
        example = "{datalab: {mode: balanced}}"
        if not isinstance(system, dict) or len(system) != 1:
            count = len(system) if isinstance(system, dict) else type(system).__name__
            self.add("system", f"is one system and its options, such as {example}; it has {count}")
            return "", {}
        [(name, options)] = system.items()
        if not isinstance(options, dict):
            self.add(f"system.{name}", f"must be a mapping of the system's options, not {options!r}")
            return "", {}
        return str(name), options


def _kind(value: Any) -> str:
    kinds: dict[type, str] = {bool: "a boolean", int: "an integer", float: "a number", list: "a list"}
    kinds |= {dict: "a mapping", datetime.date: "a date", datetime.datetime: "a date and time"}
    return next((kind for cls, kind in kinds.items() if type(value) is cls), type(value).__name__)
