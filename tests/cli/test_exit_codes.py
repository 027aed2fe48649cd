"""The error tree drawn in `oeb/errors.py` and the exit-code table of docs/exit-codes.md say what the
code does: every public error class is drawn under its real parent, and every exit code written down
is the class's `exit_code`. A class added without being drawn, or a code changed on one side only,
fails here."""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import pytest

import oeb.errors

ROOT = Path(__file__).resolve().parents[2]
TREE_LINE = re.compile(r"^(?P<indent>[ │├└─]*)(?P<name>[A-Z]\w+)\b(?P<rest>.*)$")


def _tree() -> dict[str, tuple[str | None, int | None]]:
    """Each drawn class -> (its parent in the drawing, the exit code written beside it or None)."""
    doc = oeb.errors.__doc__ or ""
    lines = doc[doc.index("    OebError") :].split("\n\n")[0].splitlines()
    drawn: dict[str, tuple[str | None, int | None]] = {}
    stack: list[tuple[int, str]] = []
    for line in lines:
        match = TREE_LINE.match(line)
        if match is None:
            continue
        depth, name = len(match["indent"]), match["name"]
        while stack and stack[-1][0] >= depth:
            stack.pop()
        code = re.search(r"\bexit (\d+)", match["rest"])
        drawn[name] = (stack[-1][1] if stack else None, int(code[1]) if code else None)
        stack.append((depth, name))
    return drawn


def _error_classes() -> dict[str, str | None]:
    """Every class in oeb/ that descends from OebError -> its nearest public ancestor of that kind,
    read from the source so that no module (nor Ray) has to be imported to find them."""
    bases: dict[str, list[str]] = {}
    for path in sorted((ROOT / "oeb").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                bases[node.name] = [b.id for b in node.bases if isinstance(b, ast.Name)]

    def is_error(name: str) -> bool:
        return name == "OebError" or any(is_error(base) for base in bases.get(name, []))

    def public_parent(name: str) -> str | None:
        for base in bases[name]:
            if is_error(base):
                return base if not base.startswith("_") else public_parent(base)
        return None

    return {name: public_parent(name) for name in bases if is_error(name) and not name.startswith("_")}


def _cls(name: str) -> type[oeb.errors.OebError]:
    for module in ("oeb.errors", "oeb.systems.errors"):
        found = getattr(importlib.import_module(module), name, None)
        if isinstance(found, type):
            return found
    pytest.fail(f"{name} is drawn in the error tree but is neither in oeb.errors nor in oeb.systems.errors")


def test_every_error_class_is_drawn_under_its_parent() -> None:
    drawn, classes = _tree(), _error_classes()
    assert set(classes) - set(drawn) == set(), "add these classes to the tree at the top of oeb/errors.py"
    assert set(drawn) - set(classes) == set(), "the tree draws classes the code does not define"
    assert {name: parent for name, (parent, _) in drawn.items()} == classes


def test_the_exit_codes_drawn_are_the_classes_codes() -> None:
    """A class drawn without a code exits as its nearest ancestor in the drawing that has one."""
    drawn = _tree()
    for name in drawn:
        ancestor: str | None = name
        while ancestor is not None and drawn[ancestor][1] is None:
            ancestor = drawn[ancestor][0]
        expected = drawn[ancestor][1] if ancestor is not None else None
        assert _cls(name).exit_code == expected, f"{name} exits {_cls(name).exit_code}; the tree says {expected}"


def test_the_documented_exit_codes_are_the_classes_codes() -> None:
    table = (ROOT / "docs" / "exit-codes.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\|\s*(\d+)\s*\|.*\|(.*)\|\s*$", table, flags=re.MULTILINE)
    assert {int(code) for code, _ in rows} == {0, 1, 2, 3, 4, 5, 75, 130, 141, 143}
    named = 0
    for code, raised_as in rows:
        for name in re.findall(r"`(\w+)`", raised_as):
            assert _cls(name).exit_code == int(code), f"docs/exit-codes.md gives {name} exit {code}"
            named += 1
    assert named >= 6
