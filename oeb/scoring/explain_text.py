"""What `oeb explain` prints: how the scorer reads a value, and whether two values count as equal
(`oeb view` shows the same text beside a verdict)."""

from __future__ import annotations

import json
from typing import Any

from oeb.scoring._flatten import states_nothing
from oeb.scoring.canonical import Explanation, explain_value


def kind(value: Any) -> str:
    """How the value came: null, a JSON boolean or number, or text."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "JSON boolean"
    if isinstance(value, int | float):
        return "JSON number"
    return "text"


def explanation_text(explanation: Explanation) -> str:
    """The value, its route, every step that changed it and its canonical key, one per line."""
    value = explanation.value
    lines = [f"{json.dumps(value, ensure_ascii=False)}  ({kind(value)}, {explanation.route} route)"]
    for step in explanation.steps:
        lines.append(f"  {step.rule}: {step.before!r} -> {step.after!r}")
    if not explanation.steps:
        lines.append("  no step changed it")
    lines.append(f"  canonical key: {explanation.key!r}")
    return "\n".join(lines)


def verdict_line(first: Explanation, second: Explanation) -> str:
    """Whether two read values are equal for scoring, in one line, with the verdict the pair gets
    as gold then prediction: a side that states nothing (null, blank, empty) makes it unfound or
    fabricated, not misread."""
    if first.key == second.key:
        return f"equal: both read as {first.key!r}"
    none_first, none_second = states_nothing(first.value), states_nothing(second.value)
    if none_first and none_second:
        return f"both state nothing ({first.key!r}, {second.key!r}): no verdict, as gold and prediction"
    outcome = "unfound" if none_second else "fabricated" if none_first else "misread"
    return f"different: {first.key!r} != {second.key!r} (this pair would be {outcome})"


def pair_text(first: Any, second: Any) -> str:
    """`oeb explain FIRST SECOND`'s text for two JSON scalars."""
    a, b = explain_value(first), explain_value(second)
    return "\n".join((explanation_text(a), explanation_text(b), verdict_line(a, b)))
