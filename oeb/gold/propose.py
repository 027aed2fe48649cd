"""`oeb adjudicate propose`: the gold audit's findings as `proposed` entries for a person to decide.

- gold_disagrees: `accept` of the value the agreeing systems give (the gold is kept; theirs counts too);
- gold_missing: `add` of that value;
- gold_invalid: `replace` by the value systems agree on there when they do, else `remove`;
- mojibake: `replace` by the repaired text.

short_answer findings are about a system, not the gold, and give no entry. Each entry's reason names
the agreeing systems; its evidence is where the proposed value (else the gold's) stands on the PDF.
An entry's id is a digest of its document, address and action, so proposing again finds the same
entries: decided ones are never overwritten, proposed ones are refreshed.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Sequence
from typing import Any, Protocol

from oeb.gold.entries import Adjudications, Entry


class Finding(Protocol):
    """What a proposal is made from: one of `oeb audit`'s findings."""

    @property
    def doc_id(self) -> str: ...
    @property
    def address(self) -> str: ...
    @property
    def kind(self) -> str: ...
    @property
    def gold(self) -> Any: ...
    @property
    def consensus(self) -> Any: ...
    @property
    def agree(self) -> int: ...
    @property
    def of(self) -> int: ...
    @property
    def systems(self) -> list[str]: ...
    @property
    def note(self) -> str: ...


_ACTIONS = {"gold_disagrees": "accept", "gold_missing": "add", "mojibake": "replace"}


def entry_id(doc_id: str, address: str, action: str) -> str:
    return "p-" + hashlib.sha256(f"{doc_id}\0{address}\0{action}".encode()).hexdigest()[:12]


def _reason(finding: Finding) -> str:
    if finding.kind == "gold_invalid":
        return f"the gold breaks its schema: {finding.note}"
    if finding.kind == "mojibake":
        return finding.note
    systems = ", ".join(finding.systems)
    gold = "states nothing here" if finding.gold is None else f"says {finding.gold!r}"
    return f"{finding.agree} of {finding.of} systems ({systems}) give {finding.consensus!r}; the gold {gold}"


def entries_of(findings: Sequence[Finding]) -> list[Entry]:
    """One proposed entry per fixable finding (an invalid gold value takes the agreed value when the
    systems agree on one there)."""
    agreed = {(f.doc_id, f.address): f for f in findings if f.kind == "gold_disagrees"}
    found: list[Entry] = []
    for finding in findings:
        key = (finding.doc_id, finding.address)
        if finding.kind == "gold_invalid":
            consensus = agreed.get(key)
            if consensus is not None and not isinstance(consensus.consensus, dict | list):
                action, value = "replace", consensus.consensus
            else:
                action, value = "remove", None
        elif finding.kind in _ACTIONS:
            if finding.kind == "gold_disagrees" and any(
                f.kind == "gold_invalid" and (f.doc_id, f.address) == key for f in findings
            ):
                continue  # proposed as a replace by its gold_invalid finding
            action, value = _ACTIONS[finding.kind], finding.consensus
        else:
            continue
        if value is not None and isinstance(value, dict | list):
            continue
        made = Entry(
            entry_id(finding.doc_id, finding.address, action),
            finding.doc_id,
            finding.address,
            action,
            reason=_reason(finding),
            values=(value,) if action == "accept" else (),
        )
        found.append(dataclasses.replace(made, value=value) if action in ("add", "replace") else made)
    return found


def merge(existing: Adjudications, proposed: Sequence[Entry]) -> tuple[Adjudications, int, int]:
    """The file with the proposals merged in: a decided entry (by id, or on the same document and
    address with the same action) is never overwritten; returns the file, entries added and refreshed."""
    decided = {(e.doc_id, e.address, e.action) for e in existing.entries if e.status != "proposed"}
    by_id = {e.id: e for e in existing.entries}
    added = refreshed = 0
    fresh = []
    for entry in proposed:
        old = by_id.get(entry.id)
        if (entry.doc_id, entry.address, entry.action) in decided or (old is not None and old.status != "proposed"):
            continue
        if old is None:
            added += 1
        elif old != entry:
            refreshed += 1
        fresh.append(entry)
    return existing.replaced(fresh), added, refreshed
