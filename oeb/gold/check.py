"""`oeb adjudicate check`: does every entry name what exists, with a value its schema allows?

Checked against the dataset (its gold and each row's schema): the document exists; the address holds a
gold value (for `add`: the gold states nothing there, the object holding it exists and the schema
declares the address); each value the entry puts is valid against the schema where it goes (type,
enum, const, format, pattern, as `oeb audit` checks gold); no two accepted entries share an address;
the file names the dataset's own commit. Each problem is one line starting with the entry's id.
"""

from __future__ import annotations

import copy
import functools
import json
from collections.abc import Iterator, Sequence
from typing import Any

from oeb.dataset import Dataset, Row
from oeb.errors import AdjudicationError
from oeb.gold import sound
from oeb.gold.apply import parse_address
from oeb.gold.entries import Adjudications, Entry
from oeb.scoring import show_address
from oeb.scoring.schema import resolve_schema


def leaves(value: Any, path: tuple[tuple[str, Any], ...] = ()) -> Iterator[tuple[str, Any]]:
    """Every non-null scalar of a gold by printed address (the gold's own row numbers)."""
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else None
    if items is None:
        if value is not None and path:
            yield show_address(path), value
        return
    for key, item in items:
        yield from leaves(item, (*path, ("k" if isinstance(value, dict) else "i", key)))


def _holds(node: Any, kind: str, name: Any) -> bool:
    """Whether `node` is an object (for a key) or an array holding index `name`."""
    if kind == "k":
        return isinstance(node, dict)
    return isinstance(node, list) and 0 <= name < len(node)


def _container(gold: Any, steps: list[list[Any]]) -> Any:
    node = gold
    for kind, name in steps:
        if _holds(node, kind, name) and (kind == "i" or name in node):
            node = node[name]
        else:
            return None
    return node


def _put_into(gold: dict[str, Any], address: str, value: Any) -> bool:
    """Put `value` at the address in place; False when the object holding it is missing."""
    steps = parse_address(address)
    holder = _container(gold, steps[:-1])
    kind, name = steps[-1]
    if not _holds(holder, kind, name):
        return False
    holder[name] = value
    return True


@functools.cache
def _slots(schema_text: str) -> frozenset[Any]:
    return resolve_schema(json.loads(schema_text)).slots


def declared(schema: dict[str, Any], address: str) -> bool:
    """Whether the schema declares the address (indices as any item), as the scorer reads slots."""
    steps = parse_address(address)
    slot = tuple(("i", None) if kind == "i" else ("k", name) for kind, name in steps)
    return slot in _slots(json.dumps(schema, sort_keys=True))


def _shape_problem(entry: Entry, row: Row, present: dict[str, Any]) -> str | None:
    """What is wrong with where the entry points (None: nothing)."""
    try:
        steps = parse_address(entry.address)
    except ValueError as error:
        return f"{entry.id}: the address {entry.address!r} cannot be read ({error})"
    printed = show_address(tuple((kind, name) for kind, name in steps))
    if printed != entry.address:  # `orders[01]`: the same place as `orders[1]`, which the verdicts print
        return f"{entry.id}: write the address {entry.address!r} as verdicts print it: {printed!r}"
    if entry.action == "add":
        if entry.address in present:
            return f"{entry.id}: {entry.doc_id} already has gold at {entry.address}; use replace"
        if not declared(dict(row.schema), entry.address):
            return f"{entry.id}: the schema of {entry.doc_id} does not declare {entry.address}"
    elif entry.address not in present:
        return f"{entry.id}: {entry.doc_id} has no gold value at {entry.address}"
    return None


def _put_values(entry: Entry) -> list[Any]:
    if entry.action == "accept":
        return list(entry.values)
    return [entry.value] if entry.has_value and entry.value is not None else []  # a verify's null: none there


def document_problems(entries: Sequence[Entry], row: Row | None, gold: dict[str, Any] | None) -> dict[str, list[str]]:
    """What is wrong with each of a document's entries, by id (an empty list: nothing). The gold is
    walked once and validated once per round of values (an accept entry's second reading is in the
    second round), so a thousand entries cost a few validations, not a thousand."""
    from oeb.gold.validate import schema_errors  # jsonschema: loaded when a file is checked, not by the engine

    if row is None or gold is None:
        return {entry.id: [f"{entry.id}: no document {entry.doc_id!r} in the dataset"] for entry in entries}
    present = dict(leaves(gold))
    found: dict[str, list[str]] = {entry.id: [] for entry in entries}
    sound = []
    for entry in entries:
        problem = _shape_problem(entry, row, present)
        if problem:
            found[entry.id].append(problem)
        else:
            sound.append(entry)
    rounds = max((len(_put_values(entry)) for entry in sound), default=0)
    for number in range(rounds):
        fixed: dict[str, Any] | None = copy.deepcopy(gold)
        placed: dict[str, tuple[Entry, Any]] = {}
        for entry in sound:
            values = _put_values(entry)
            if number < len(values) and fixed is not None:
                changed = _put_into(fixed, entry.address, values[number])
                if changed:
                    placed[entry.address] = (entry, values[number])
                else:
                    found[entry.id].append(
                        f"{entry.id}: the object holding {entry.address} is not in the gold of {entry.doc_id}"
                    )
        for address, _, message in schema_errors(dict(row.schema), fixed or {}):
            if address in placed:
                entry, value = placed[address]
                found[entry.id].append(
                    f"{entry.id}: the value {value!r} is refused by the schema at {entry.address}: {message}"
                )
    return found


def entry_problems(entry: Entry, row: Row | None, gold: dict[str, Any] | None) -> list[str]:
    """What is wrong with one entry against its document (empty: nothing)."""
    return document_problems([entry], row, gold)[entry.id]


def conflicts(adjudications: Adjudications) -> list[str]:
    """Two accepted entries changing one address."""
    seen: dict[tuple[str, str], str] = {}
    found = []
    for entry in adjudications.entries:
        if entry.effect is None:
            continue
        first = seen.setdefault((entry.doc_id, entry.address), entry.id)
        if first != entry.id:
            found.append(f"{entry.id}: accepted on {entry.doc_id} {entry.address}, as {first} is; reject one")
    return found


def commit_problem(adjudications: Adjudications, dataset: Dataset) -> str | None:
    """The file names another dataset commit than the one graded."""
    if adjudications.commit is not None and dataset.commit is not None and adjudications.commit != dataset.commit:
        return (
            f"{adjudications.url} was written for commit {adjudications.commit[:12]} of the dataset, not "
            f"{dataset.commit[:12]}; review it against this commit or pin the dataset to its commit"
        )
    return None


def problems(
    adjudications: Adjudications, dataset: Dataset, only_accepted: bool = False, remembered: bool = False
) -> list[str]:
    """Every problem of the file against the dataset, one line each, in file order; `remembered`: a
    document found sound by an earlier check of the same entries, schema and gold is not checked
    again (`oeb.gold.sound`)."""
    found = [p for p in [commit_problem(adjudications, dataset)] if p is not None]
    found += conflicts(adjudications)
    entries = [e for e in adjudications.entries if not only_accepted or e.effect is not None]
    rows = {row.doc_id: row for row in dataset.rows}
    wanted = [rows[doc_id] for doc_id in dict.fromkeys(e.doc_id for e in entries) if doc_id in rows]
    golds = dict(((row.doc_id, gold) for row, gold in dataset.golds(wanted)))
    by_doc: dict[str, list[Entry]] = {}
    for entry in entries:
        by_doc.setdefault(entry.doc_id, []).append(entry)
    said: dict[str, list[str]] = {}
    before = sound.known() if remembered else {}
    fine: list[str] = []
    for doc_id, members in by_doc.items():
        row, gold = rows.get(doc_id), golds.get(doc_id)
        key = sound.digest(members, row, gold) if remembered and row is not None and gold is not None else None
        if key is not None and key in before:
            said |= {entry.id: [] for entry in members}
            continue
        document = document_problems(members, row, gold)
        said |= document
        if key is not None and not any(document.values()):
            fine.append(key)
    if remembered:
        sound.remember(before, fine)
    return found + [line for entry in entries for line in said[entry.id]]


def decisions_refused(adjudications: Adjudications, decided: Sequence[Entry], dataset: Dataset) -> None:
    """Refuse, in one line before anything is written, decisions that would make the file unusable
    by grading: an entry accepted with a value its schema refuses (a typed `4,24` for a whole number)
    or at an address the gold lacks. (Two accepted on one address: `Adjudications.accepted`.)"""
    import dataclasses

    changing = [entry for entry in decided if entry.effect is not None]
    if not changing:
        return
    found = problems(dataclasses.replace(adjudications, entries=tuple(changing)), dataset)
    if found:
        more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
        raise AdjudicationError(f"{adjudications.url}: {found[0]}{more}; nothing was changed")


def checked(adjudications: Adjudications, dataset: Dataset) -> Adjudications:
    """The file, when every accepted entry can be applied to this dataset; else one line naming the
    first problem (and how many there are), before anything is graded."""
    found = problems(adjudications, dataset, only_accepted=True, remembered=True)
    if found:
        more = f" (and {len(found) - 1} more: oeb adjudicate check lists them)" if len(found) > 1 else ""
        raise AdjudicationError(f"{adjudications.url}: {found[0]}{more}")
    return adjudications


def applying(given: str | None, dataset: Dataset) -> Adjudications | None:
    """The adjudication file grading applies, checked against the dataset: `given` (an fsspec URL),
    none for `none`, else the dataset's own `adjudications.yaml` when it has one."""
    from oeb import storage
    from oeb.errors import StorageError
    from oeb.gold.entries import FILE_NAME, load
    from oeb.gold.where import is_none

    if given is not None and is_none(given):
        return None
    url = given
    if url is None:
        beside = storage.join(dataset.location, FILE_NAME)
        try:
            url = beside if storage.exists(beside) else None
        except StorageError:
            url = None
    if url is None:
        return None
    read = load(url)
    key = (dataset.identity, dataset.commit or "", read.url, read.sha256)
    if key not in _CHECKED:  # a regrade of ten runs of one dataset checks its file once
        _CHECKED[key] = checked(read, dataset)
    return _CHECKED[key]


_CHECKED: dict[tuple[str, str, str, str], Adjudications] = {}
