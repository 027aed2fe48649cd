"""`oeb explain`: why a value reads as it does, and whether two values count as equal."""

from __future__ import annotations

import argparse
import json
from typing import Any

from oeb import _json
from oeb.cli._output import print_json
from oeb.scoring import Explanation, explain_value


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add `oeb explain` (showing how values become canonical keys) to the command line."""
    parser = subparsers.add_parser(
        "explain",
        help="show a value's canonical form and the steps that produced it",
        description="Show how the scorer reads a value: its route (number, date, time, text, boolean), every "
        "step that changed it and its canonical key. With a second value, say whether the two are equal for "
        'scoring. A value that parses as a JSON scalar (12.5, true, null, "12") is taken as that JSON value; '
        "anything else is text. --text takes both as text.",
    )
    parser.add_argument("value", help="the value, e.g. '$1,234.50' or 2024-03-31")
    parser.add_argument("other", nargs="?", help="a second value to compare with the first")
    parser.add_argument("--text", action="store_true", help="read the values as text, never as JSON")
    parser.add_argument("--json", action="store_true", help="print the explanation as JSON")
    parser.set_defaults(run=run)


def read_value(text: str, as_text: bool) -> Any:
    """A command-line value as the scorer would see it: a JSON scalar when it parses as one (`12.5`,
    `true`, `"12"`), else the text itself; always the text with `--text`."""
    if as_text:
        return text
    try:
        value = _json.loads(text)
    except ValueError:
        return text
    return value if not isinstance(value, (list, dict)) else text


def run(args: argparse.Namespace) -> int:
    """Carry out `oeb explain` and return its exit code (docs/exit-codes.md)."""
    values = [read_value(v, args.text) for v in (args.value, args.other) if v is not None]
    explanations = [explain_value(v) for v in values]
    equal = len(explanations) == 2 and explanations[0].key == explanations[1].key
    if args.json:
        report: dict[str, Any] = {"values": [_as_json(e) for e in explanations]}
        if len(explanations) == 2:
            report["equal"] = equal
        print_json(report)
        return 0
    for explanation in explanations:
        print(_as_text(explanation))
    if len(explanations) == 2:
        a, b = explanations
        if equal:
            print(f"equal: both read as {a.key!r}")
        else:
            print(f"different: {a.key!r} != {b.key!r} (this pair would be misread)")
    return 0


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "JSON boolean"
    if isinstance(value, (int, float)):
        return "JSON number"
    return "text"


def _as_text(explanation: Explanation) -> str:
    value = explanation.value
    lines = [f"{json.dumps(value, ensure_ascii=False)}  ({_kind(value)}, {explanation.route} route)"]
    for step in explanation.steps:
        lines.append(f"  {step.rule}: {step.before!r} -> {step.after!r}")
    if not explanation.steps:
        lines.append("  no step changed it")
    lines.append(f"  canonical key: {explanation.key!r}")
    return "\n".join(lines)


def _as_json(explanation: Explanation) -> dict[str, Any]:
    return {
        "value": explanation.value,
        "route": explanation.route,
        "key": explanation.key,
        "steps": [{"rule": s.rule, "before": s.before, "after": s.after} for s in explanation.steps],
    }
