"""`oeb explain`: why a value reads as it does, and whether two values count as equal."""

from __future__ import annotations

import argparse
from typing import Any

from oeb import _json
from oeb.cli._output import print_json
from oeb.scoring import Explanation, explain_value
from oeb.scoring.explain_text import explanation_text, verdict_line


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
        print(explanation_text(explanation))
    if len(explanations) == 2:
        print(verdict_line(*explanations))
    return 0


def _as_json(explanation: Explanation) -> dict[str, Any]:
    return {
        "value": explanation.value,
        "route": explanation.route,
        "key": explanation.key,
        "steps": [{"rule": s.rule, "before": s.before, "after": s.after} for s in explanation.steps],
    }
