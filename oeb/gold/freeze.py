"""`oeb gold freeze DATASET`: a person's decisions on a drafted gold, written into the gold itself.

Every decided entry of the dataset's adjudications.yaml is applied to the gold files (a value put by
replace, add or a corrected verify; removed by remove), and its value's row in gold_derivation.parquet
says who decided and when: `reviewed` (the person kept the drafted value, or picked one there),
`corrected` (another value), `absent` (a rejected proposal: the document states nothing there, or a
removed value). The gold gets a new version (its content digest). The entries stay in the file, the
record of the decisions; applied again at grading they change nothing.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from oeb.dataset import Dataset
from oeb.gold.check import _put_into
from oeb.gold.derivation import PROPOSED, Derived, Draft
from oeb.gold.draft import rewrite
from oeb.gold.entries import Adjudications, Entry
from oeb.scoring import canonical_key


@dataclass(frozen=True)
class Frozen:
    version: str
    reviewed: int
    corrected: int
    absent: int


def _status(entry: Entry, before: Derived | None) -> str | None:
    """The derivation status an entry gives its value (None: it changes nothing of the gold)."""
    if entry.status == "rejected":
        return "absent" if entry.id.startswith(PROPOSED) else None
    effect = entry.effect
    if effect is None:
        return "reviewed" if entry.status == "accepted" and entry.action == "verify" else None
    if effect == "remove":
        return "absent"
    if effect == "accept":
        return "reviewed"
    if before is not None and before.value is not None and canonical_key(before.value) == canonical_key(entry.value):
        return before.status if before.by_person else "reviewed"  # a freeze run again keeps what it said
    if before is not None and before.status == "undecided":  # a system's reading picked, or another value
        picked = canonical_key(entry.value) in {canonical_key(reading) for _, reading in before.readings}
        return "reviewed" if picked else "corrected"
    return "corrected"


def freeze(dataset: Dataset, draft: Draft, adjudications: Adjudications) -> Frozen:
    """Apply the decided entries to the drafted gold and its derivation; write both (a new version)."""
    rows = {(value.doc_id, value.address): value for value in draft.values}
    golds = {row.doc_id: gold for row, gold in dataset.golds()}
    k, n = draft.k, draft.n
    for entry in adjudications.entries:
        if entry.doc_id not in golds:
            continue
        before = rows.get((entry.doc_id, entry.address))
        status = _status(entry, before)
        if status is None:
            continue
        gold = golds[entry.doc_id]
        value: Any = None
        if status in ("reviewed", "corrected") and entry.effect in ("replace", "add"):
            value = entry.value
            _put_into(gold, entry.address, value)
        elif status == "absent":
            pass  # a rejected proposal added nothing; a remove entry stays in the file, applied at grading
        else:
            value = before.value if before is not None else None
        base = before or Derived(entry.doc_id, entry.address, None, (), k, n, "drafted")
        rows[(entry.doc_id, entry.address)] = dataclasses.replace(
            base, value=value, status=status, reviewer=entry.by, date=entry.date
        )
    values = list(rows.values())
    version = rewrite(dataset, golds, values)
    count = {s: sum(1 for v in values if v.status == s) for s in ("reviewed", "corrected", "absent")}
    return Frozen(version, count["reviewed"], count["corrected"], count["absent"])


def settled(adjudications: Adjudications, dataset: Dataset) -> Adjudications:
    """The file with each accepted `add` whose value the gold now holds (a freeze wrote it) turned into
    a `replace` of the same value: applied again it changes nothing, and `oeb adjudicate check` (which
    refuses an add where the gold has a value) still passes. A freeze cut short is simply run again."""
    from oeb.gold.check import leaves

    wanted = {entry.doc_id for entry in adjudications.entries if entry.action == "add" and entry.status == "accepted"}
    if not wanted:
        return adjudications
    rows = [row for row in dataset.rows if row.doc_id in wanted]
    present = {row.doc_id: dict(leaves(gold)) for row, gold in dataset.golds(rows)}
    changed = [
        dataclasses.replace(entry, action="replace")
        for entry in adjudications.entries
        if entry.action == "add"
        and entry.status == "accepted"
        and entry.address in present.get(entry.doc_id, {})
        and canonical_key(present[entry.doc_id][entry.address]) == canonical_key(entry.value)
    ]
    return adjudications.replaced(changed) if changed else adjudications
