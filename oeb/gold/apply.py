"""Grading under accepted adjudications: oeb's own rule, applied to the reference scorer's output.

The scorer (`oeb.scoring`) stays the reference's: it scores the prediction against the dataset's gold
and pairs array rows exactly as the reference does. Accepted entries then change the verdicts at their
own gold-side addresses, and nothing else (docs/adjudication.md, "The grading rule"):

- `accept`: a `misread` whose predicted canonical key equals the key of an accepted reading is `matched`;
- `replace` (and `verify` with a value): the gold value there is the entry's; the verdict is judged
  again by the scorer's own canonical keys (`matched` / `misread` / `unfound`);
- `add`: as replace at an address where the gold stated nothing (a `fabricated` value there is judged
  again; with no prediction there the new gold value is `unfound`);
- `remove`: the verdict is dropped: the value is not graded.

The document's metrics are recomputed from the verdict counts as the scorer computes them. With no
accepted entry on a document, its result and verdicts are returned untouched (the same objects), so a
file with nothing accepted grades exactly as the reference scorer does.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from oeb.gold.entries import Entry
from oeb.scoring import RESULTS, canonical_key, show_address
from oeb.scoring.verdict import document_metrics

_GOLD_SIDE = ("matched", "misread", "unfound")
"""Verdicts with a gold value: the scorer's `expected` counts their values."""
_SKIPPED = "skipped_open_map"


@dataclass(frozen=True)
class Adjudicated:
    """A document's result and verdicts (details' JSON form) under its accepted entries; `marks` gives,
    per verdict, the id of the entry that changed it (None: unchanged); `applied` the ids of the
    entries that changed anything."""

    result: dict[str, Any]
    details: list[dict[str, Any]]
    marks: list[str | None]
    applied: tuple[str, ...]
    addresses: list[str] | None = None
    """Each verdict's printed address, when the caller gave them for the verdicts before (the grade
    stage prints them once for verdicts.parquet and for the entries' lookup)."""


def parse_address(text: str) -> list[list[Any]]:
    """A printed address (`line_items[2].amount`) as the scorer's [kind, name] steps. Keys holding `.`
    or `[` cannot be told apart from steps: such an address is refused."""
    steps: list[list[Any]] = []
    position = 0
    while position < len(text):
        if text[position] == "[":
            end = text.find("]", position)
            if end < 0 or not text[position + 1 : end].isdigit():
                raise ValueError(f"{text!r}: an index must be [N]")
            steps.append(["i", int(text[position + 1 : end])])
            position = end + 1
            continue
        if text[position] == ".":
            if not steps:
                raise ValueError(f"{text!r} starts with a dot")
            position += 1
        end = position
        while end < len(text) and text[end] not in ".[":
            end += 1
        if end == position:
            raise ValueError(f"{text!r} has an empty key")
        steps.append(["k", text[position:end]])
        position = end
    if not steps:
        raise ValueError("the address is empty")
    return steps


def _reading_order(address: Sequence[Sequence[Any]]) -> tuple[tuple[str, bool, int, str], ...]:
    """The scorer's order of verdicts: keys alphabetically, indices numerically."""
    return tuple(
        (kind, isinstance(name, str), name if isinstance(name, int) else 0, str(name)) for kind, name in address
    )


def _judged(verdict: dict[str, Any], value: Any) -> dict[str, Any]:
    """The verdict with `value` as its gold, judged by canonical keys as the scorer judges a pair."""
    key = canonical_key(value)
    result = "unfound" if verdict["pred_canon"] is None else "matched" if verdict["pred_canon"] == key else "misread"
    return {**verdict, "gold_raw": value, "gold_canon": key, "result": result}


def _recount(result: dict[str, Any], moves: Counter[str]) -> dict[str, Any]:
    """The document's metrics after its verdict counts moved by `moves` (a verdict changed from one
    result to another: -1 and +1; dropped: -1; added: +1), as the scorer computes them."""
    counts = {kind: result[kind] + moves[kind] for kind in RESULTS}
    expected = sum(counts[kind] for kind in _GOLD_SIDE)
    asserted = result["asserted"] + sum(moves[kind] for kind in RESULTS if kind != "unfound")
    return {**result, **document_metrics(counts, asserted, expected)}


def adjudicate(
    result: dict[str, Any],
    details: list[dict[str, Any]],
    entries: Sequence[Entry],
    addresses: list[str] | None = None,
) -> Adjudicated:
    """One document's scored result and verdicts under its accepted entries (docstring of the module);
    `addresses`, each verdict's printed address when the caller has them (else printed here). Only
    the verdicts at an entry's address are looked at: a large document costs one pass of lookups."""
    active = {entry.address: entry for entry in entries if entry.effect is not None}
    if not active:
        return Adjudicated(result, details, [None] * len(details), (), addresses)
    shown = addresses if addresses is not None else [show_address(verdict["address"]) for verdict in details]
    changes: dict[int, tuple[dict[str, Any] | None, str]] = {}
    applied: dict[str, None] = {}
    used: set[str] = set()
    moves: Counter[str] = Counter()
    for i in [i for i, address in enumerate(shown) if address in active]:
        verdict, entry = details[i], active[shown[i]]
        if verdict["result"] == _SKIPPED:
            continue
        used.add(entry.address)
        changed = _changed(verdict, entry)
        if changed is verdict:
            continue
        applied[entry.id] = None
        changes[i] = (changed, entry.id)
        moves[verdict["result"]] -= 1
        if changed is not None:
            moves[changed["result"]] += 1
    added = []
    for address, entry in active.items():
        if address in used or entry.effect not in ("replace", "add"):
            continue
        steps = parse_address(address)
        blank = {"address": steps, "gold_raw": None, "pred_raw": None, "gold_canon": None}
        verdict = _judged(blank | {"pred_canon": None, "result": "unfound"}, entry.value)
        added.append((verdict, entry.id, show_address(tuple(map(tuple, steps)))))
        moves[verdict["result"]] += 1
        applied[entry.id] = None
    if not applied:
        return Adjudicated(result, details, [None] * len(details), (), addresses)
    rows: list[dict[str, Any] | None] = list(details)
    marks: list[str | None] = [None] * len(details)
    places = list(shown)
    for i, (changed, entry_id) in changes.items():
        rows[i], marks[i] = changed, entry_id
    out = [row for row in rows if row is not None]
    if len(out) < len(rows):  # dropped verdicts: not graded
        kept = [i for i, row in enumerate(rows) if row is not None]
        marks, places = [marks[i] for i in kept], [places[i] for i in kept]
    if added:  # a new verdict where neither side stated a value: put in the scorer's reading order
        out += [verdict for verdict, _, _ in added]
        marks += [entry_id for _, entry_id, _ in added]
        places += [place for _, _, place in added]
        order = sorted(range(len(out)), key=lambda i: (out[i]["result"] != _SKIPPED, _reading_order(out[i]["address"])))
        out, marks, places = [out[i] for i in order], [marks[i] for i in order], [places[i] for i in order]
    return Adjudicated(_recount(result, moves), out, marks, tuple(applied), places)


def _changed(verdict: dict[str, Any], entry: Entry) -> dict[str, Any] | None:
    """The verdict under the entry: itself when unchanged, None when dropped."""
    effect = entry.effect
    if effect == "remove":
        return None
    if effect == "accept":
        readings = {canonical_key(value) for value in entry.values}
        if verdict["result"] == "misread" and verdict["pred_canon"] in readings:
            return {**verdict, "result": "matched"}
        return verdict
    if verdict["result"] in ("invented_item", "invented_field"):
        return verdict
    judged = _judged(verdict, entry.value)
    same = all(judged[key] == verdict[key] for key in ("gold_raw", "gold_canon", "result"))
    return verdict if same else judged
