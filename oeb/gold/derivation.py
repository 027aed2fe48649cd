"""A drafted gold's record (docs/own-documents.md): `drafted.json` (who drafted it, K of N, the gold's
version) and `gold_derivation.parquet` (per value: the systems that agreed, its status, who reviewed it).

`excluded` is leave-drafters-out grading: a drafted value counts for a system when K systems other
than it agree on it, or a person reviewed it; otherwise the system is graded without it (a `remove`
entry for that system only, applied after scoring as any adjudication is: `oeb.gold.apply`).
Undecided values are not graded for anyone.
"""

from __future__ import annotations

import dataclasses
import hashlib
import io
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa  # type: ignore[import-untyped]  # pyarrow ships no type information
import pyarrow.parquet as pq  # type: ignore[import-untyped]

from oeb.dataset import Dataset
from oeb.errors import AdjudicationError, OebError
from oeb.gold.entries import Adjudications, Entry

DRAFTED = "drafted.json"
DERIVATION = "gold_derivation.parquet"
STATUSES = ("drafted", "reviewed", "corrected", "undecided", "absent")
EXCLUDED = "excluded-"
"""Ids of the per-system remove entries of leave-drafters-out grading start with this."""
UNDECIDED = "undecided-"
PROPOSED = "draft-"
"""Ids of the review queue's entries for undecided values (`oeb gold draft` proposes them)."""

SCHEMA = pa.schema(
    [
        ("doc_id", pa.string()),
        ("address", pa.string()),
        ("value", pa.string()),
        ("systems", pa.list_(pa.string())),
        ("k", pa.int32()),
        ("n", pa.int32()),
        ("status", pa.string()),
        ("reviewer", pa.string()),
        ("date", pa.string()),
        ("readings", pa.string()),
    ]
)
"""`value` and `readings` ({system: value}) are JSON text; `systems` those that agreed on `value`."""


@dataclass(frozen=True)
class Derived:
    """One row of gold_derivation.parquet (`value` decoded; None for undecided and absent)."""

    doc_id: str
    address: str
    value: Any
    systems: tuple[str, ...]
    k: int
    n: int
    status: str
    reviewer: str | None = None
    date: str | None = None
    readings: tuple[tuple[str, Any], ...] = ()

    @property
    def decided(self) -> bool:
        return self.status in ("drafted", "reviewed", "corrected")

    @property
    def by_person(self) -> bool:
        return self.status in ("reviewed", "corrected", "absent")


@dataclass(frozen=True)
class Draft:
    """drafted.json: the systems (keys in order), K, the gold-less dataset drafted from, the gold's version."""

    systems: tuple[dict[str, str], ...]
    k: int
    source: dict[str, str]
    version: str
    values: tuple[Derived, ...]

    @property
    def n(self) -> int:
        return len(self.systems)

    def counts(self) -> dict[str, int]:
        """Values by status, and `values` (decided or undecided, not absent)."""
        found = {status: sum(1 for v in self.values if v.status == status) for status in STATUSES}
        return found | {"values": sum(found[s] for s in ("drafted", "reviewed", "corrected", "undecided"))}

    def caption(self) -> str:
        """`gold: drafted by N systems (K of N), R of V values reviewed; ...` (leaderboard and card)."""
        counts = self.counts()
        reviewed = counts["reviewed"] + counts["corrected"]
        line = (
            f"gold: drafted by {self.n} systems ({self.k} of {self.n}), {reviewed} of {counts['values']} values "
            "reviewed; each system graded without its own deciding votes"
        )
        if counts["undecided"]:
            line += f"; {counts['undecided']} values undecided (not graded)"
        return line


def system_key(settings: dict[str, Any]) -> str:
    """A system setting's name in a draft: the system and a digest of its options (the same system with
    other options is another voter)."""
    options = json.dumps(settings.get("options") or {}, sort_keys=True, default=str)
    return f"{settings.get('system')}:{hashlib.sha256(options.encode()).hexdigest()[:8]}"


def table(values: Sequence[Derived]) -> pa.Table:
    return pa.Table.from_pylist(
        [
            {
                "doc_id": v.doc_id,
                "address": v.address,
                "value": None if v.value is None else json.dumps(v.value, ensure_ascii=False),
                "systems": list(v.systems),
                "k": v.k,
                "n": v.n,
                "status": v.status,
                "reviewer": v.reviewer,
                "date": v.date,
                "readings": json.dumps(dict(v.readings), ensure_ascii=False),
            }
            for v in values
        ],
        schema=SCHEMA,
    )


def parquet_bytes(values: Sequence[Derived]) -> bytes:
    out = io.BytesIO()
    pq.write_table(table(values), out)
    return out.getvalue()


def from_table(read: pa.Table) -> tuple[Derived, ...]:
    return tuple(
        Derived(
            doc_id=r["doc_id"],
            address=r["address"],
            value=None if r["value"] is None else json.loads(r["value"]),
            systems=tuple(r["systems"] or ()),
            k=int(r["k"]),
            n=int(r["n"]),
            status=r["status"],
            reviewer=r["reviewer"],
            date=r["date"],
            readings=tuple(json.loads(r["readings"] or "{}").items()),
        )
        for r in read.to_pylist()
    )


def version(golds: Iterable[tuple[str, dict[str, Any]]]) -> str:
    """The gold's version: a digest of every document's gold (id and canonical JSON)."""
    digest = hashlib.sha256()
    for doc_id, gold in sorted(golds, key=lambda pair: pair[0]):
        digest.update(json.dumps([doc_id, gold], sort_keys=True, ensure_ascii=False).encode())
    return digest.hexdigest()[:16]


def read_draft(dataset: Dataset) -> Draft | None:
    """The dataset's draft record, or None for a dataset whose gold was not drafted."""
    contents = dataset.contents([DRAFTED, DERIVATION])
    meta, derivation = contents.get(DRAFTED), contents.get(DERIVATION)
    if not isinstance(meta, bytes):
        return None
    if not isinstance(derivation, bytes):
        raise AdjudicationError(f"{dataset.url} has {DRAFTED} but no {DERIVATION}; draft it again (oeb gold draft)")
    try:
        tree = json.loads(meta)
        values = from_table(pq.read_table(io.BytesIO(derivation)))
        return Draft(tuple(tree["systems"]), int(tree["k"]), dict(tree["source"]), str(tree["version"]), values)
    except (ValueError, KeyError, TypeError, OebError, pa.ArrowException) as error:
        raise AdjudicationError(
            f"{dataset.url}: {DRAFTED} or {DERIVATION} cannot be read ({error}); draft again"
        ) from None


def excluded(draft: Draft, system: str | None, reviewed: frozenset[tuple[str, str]] = frozenset()) -> list[Entry]:
    """The values `system` is graded without (accepted `remove` entries): undecided values for every
    system, and drafted values `system` helped decide that lack K agreeing systems without it and no
    person reviewed (`reviewed`: addresses an accepted adjudication entry settles). A system that drafted
    nothing is graded on every decided value."""
    entries = []
    for value in draft.values:
        if (value.doc_id, value.address) in reviewed:
            continue
        if value.status == "undecided":
            prefix, why = UNDECIDED, "undecided in the draft: not graded until a person decides it"
        elif value.status == "drafted" and system in value.systems and len(value.systems) - 1 < draft.k:
            prefix, why = EXCLUDED, f"{system} helped decide it: fewer than {draft.k} other systems agree"
        else:
            continue
        digest = hashlib.sha256(f"{value.doc_id}\0{value.address}".encode()).hexdigest()[:12]
        entries.append(
            Entry(
                id=prefix + digest,
                doc_id=value.doc_id,
                address=value.address,
                action="remove",
                status="accepted",
                reason=why,
                by="oeb gold draft",
            )
        )
    return entries


def for_system(
    adjudications: Adjudications | None, draft: Draft | None, settings: dict[str, Any]
) -> Adjudications | None:
    """The entries one run is graded under on a drafted dataset: the file's, then the values it is
    graded without (`excluded`); the file itself elsewhere."""
    if draft is None:
        return adjudications
    file = adjudications if adjudications is not None else Adjudications((), url="")
    reviewed = frozenset((entry.doc_id, entry.address) for entry in file.accepted)
    system = system_key(settings) if settings.get("system") else None
    return dataclasses.replace(file, entries=(*file.entries, *excluded(draft, system, reviewed)))


def generated(entry_id: str) -> bool:
    """Whether an entry id is one of a draft's own (exclusions, undecided values), not a person's."""
    return entry_id.startswith((EXCLUDED, UNDECIDED))


def summary(draft: Draft, lines: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The `draft` block of a graded run's summary and report json."""
    counts = draft.counts()
    return {
        "caption": draft.caption(),
        "systems": draft.n,
        "k": draft.k,
        "version": draft.version,
        "values": counts["values"],
        "reviewed": counts["reviewed"] + counts["corrected"],
        "undecided": counts["undecided"],
        "excluded_values": sum(int(line.get("excluded_values", 0)) for line in lines),
    }
