"""An adjudication entry's evidence box as the evidence of its gold value (docs/grounding.md).

A person who decided an entry and marked where the value stands on the page (`evidence: {page,
bbox}`, PDF points from the top-left) said where the gold is printed: that box is the value's
evidence, in place of the places oeb's locator found, so a value the locator could not find becomes
verifiable and one it found in several places (ambiguous) is judged against the one the person chose.
Only entries decided `accepted` count (`verify` entries too: they confirm the gold where it stands):

- with a page and a box: that place is the evidence;
- `replace` or `add` (or `verify` with a value) without a box: the gold is a new value that the
  locator did not look for, so it has no evidence (unverifiable) rather than the old value's place;
- `remove`: the address has no gold, so no evidence;
- `accept` or `verify` without a box: the located places stand (the gold did not change).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from oeb.grounding.verdicts import Box, Evidence

if TYPE_CHECKING:
    from oeb.gold.entries import Entry

NEW_VALUE = ("replace", "add")


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def marked(evidence: Mapping[str, Any] | None) -> tuple[int, Box] | None:
    """The entry's page and box, when it gives both and the box is not empty."""
    if not evidence:
        return None
    page, box = evidence.get("page"), evidence.get("bbox")
    if not (isinstance(page, int) and not isinstance(page, bool) and page >= 1):
        return None
    if not (isinstance(box, list | tuple) and len(box) == 4 and all(_number(v) for v in box)):
        return None
    x0, y0, x1, y1 = (float(v) for v in box)
    return (page, (x0, y0, x1, y1)) if x1 > x0 and y1 > y0 else None


def _changes(entry: Entry) -> str | None:
    """What the entry does to its gold value: `replace`, `add`, `remove`, or None (kept)."""
    if entry.action == "verify":
        return "replace" if entry.has_value else None
    return entry.action if entry.action in (*NEW_VALUE, "remove") else None


def with_entries(
    evidence: Mapping[str, Mapping[str, Evidence]], entries: Iterable[Entry]
) -> dict[str, dict[str, Evidence]]:
    """Each document's evidence by address, with the decided entries' boxes in place of the located
    places (the rules above); `evidence` itself is left as it was (it may be a cache's)."""
    out = {doc_id: dict(by) for doc_id, by in evidence.items()}
    for entry in entries:
        if entry.status != "accepted":
            continue
        by = out.setdefault(entry.doc_id, {})
        change, place = _changes(entry), marked(entry.evidence)
        if change == "remove":
            by.pop(entry.address, None)
        elif place is not None:
            by[entry.address] = Evidence((place,))
        elif change in NEW_VALUE:
            by[entry.address] = Evidence()
    return out
