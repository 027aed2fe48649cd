"""Which manifest rows a run asks (docs/running.md), and how settings.json records the choice.

The recorded form is part of a run's identity, so a `sample` or `limit` that selects every row is
recorded as `{}`: the same question as "all rows".
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from oeb.dataset import Row
from oeb.errors import SelectionError
from oeb.run.plan.config import Rows

_SHOWN = 3


def select(rows: Sequence[Row], choice: Rows) -> tuple[tuple[Row, ...], dict[str, Any]]:
    """The selected rows in manifest order, and the selection as settings.json records it."""
    if choice.sample and choice.limit:
        raise SelectionError(
            f"rows.sample is {choice.sample} and rows.limit is {choice.limit}: give one of them (set the other "
            "to 0); sample spreads its rows over the manifest, limit takes the first ones"
        )
    selected = list(rows)
    recorded: dict[str, Any] = {}
    if choice.only is not None:
        known = {row.doc_id for row in rows}
        unknown = [doc_id for doc_id in choice.only if doc_id not in known]
        if unknown:
            more = f" and {len(unknown) - _SHOWN} more" if len(unknown) > _SHOWN else ""
            shown = ", ".join(unknown[:_SHOWN]) + more
            raise SelectionError(
                f"rows.only asks for {len(unknown)} row{'s' if len(unknown) > 1 else ''} that the dataset "
                f"does not have ({shown}); check the ids against the manifest"
            )
        wanted = set(choice.only)
        selected = [row for row in rows if row.doc_id in wanted]
        recorded["only"] = sorted(wanted)
    if choice.sample and choice.sample < len(selected):
        count = len(selected)
        selected = [selected[i * count // choice.sample] for i in range(choice.sample)]
        recorded["sample"] = choice.sample
    if choice.limit and choice.limit < len(selected):
        selected = selected[: choice.limit]
        recorded["limit"] = choice.limit
    if not selected:
        raise SelectionError("no rows selected; check rows.only, rows.sample and rows.limit")
    return tuple(selected), recorded


def describe(choice: dict[str, Any]) -> str:
    """The active selection for the plan line: `only a, b`, `only 12 ids`, `sample 2`, `limit 2`."""
    parts = []
    for key, value in choice.items():
        if key == "only":
            parts.append(f"only {', '.join(value)}" if len(value) <= _SHOWN else f"only {len(value)} ids")
        else:
            parts.append(f"{key} {value}")
    return "; ".join(parts)
