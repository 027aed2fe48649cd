"""`oeb adjudicate check`: does every entry name what exists, with a value its schema allows?

Checked against the dataset (its gold and each row's schema): the document exists; the address holds a
gold value (for `add`: the gold states nothing there, the object holding it exists and the schema
declares the address); each value the entry puts is valid against the schema where it goes (type,
enum, const, format, pattern, as `oeb audit` checks gold); no two accepted entries share an address;
the file names the dataset's own commit. Each problem is one line starting with the entry's id.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

from oeb.dataset import Dataset, Row
from oeb.errors import AdjudicationError
from oeb.gold.apply import parse_address
from oeb.gold.entries import Adjudications, Entry
from oeb.gold.validate import schema_errors
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


def put(gold: dict[str, Any], address: str, value: Any) -> dict[str, Any] | None:
    """A copy of the gold with `value` at the address (None: the address's object is missing)."""
    steps = parse_address(address)
    fixed = copy.deepcopy(gold)
    holder = _container(fixed, steps[:-1])
    kind, name = steps[-1]
    if _holds(holder, kind, name):
        holder[name] = value
    else:
        return None
    return fixed


def declared(schema: dict[str, Any], address: str) -> bool:
    """Whether the schema declares the address (indices as any item), as the scorer reads slots."""
    steps = parse_address(address)
    slot = tuple(("i", None) if kind == "i" else ("k", name) for kind, name in steps)
    return slot in resolve_schema(schema).slots


def _value_problems(row: Row, gold: dict[str, Any], entry: Entry, value: Any) -> Iterator[str]:
    fixed = put(gold, entry.address, value)
    if fixed is None:
        yield f"the object holding {entry.address} is not in the gold of {entry.doc_id}"
        return
    for address, _, message in schema_errors(dict(row.schema), fixed):
        if address == entry.address:
            yield f"the value {value!r} is refused by the schema at {entry.address}: {message}"


def entry_problems(entry: Entry, row: Row | None, gold: dict[str, Any] | None) -> list[str]:
    """What is wrong with one entry against its document (empty: nothing)."""
    if row is None or gold is None:
        return [f"{entry.id}: no document {entry.doc_id!r} in the dataset"]
    try:
        parse_address(entry.address)
    except ValueError as error:
        return [f"{entry.id}: the address {entry.address!r} cannot be read ({error})"]
    present = dict(leaves(gold))
    problems: list[str] = []
    if entry.action == "add":
        if entry.address in present:
            problems.append(f"{entry.id}: {entry.doc_id} already has gold at {entry.address}; use replace")
        elif not declared(dict(row.schema), entry.address):
            problems.append(f"{entry.id}: the schema of {entry.doc_id} does not declare {entry.address}")
    elif entry.address not in present:
        problems.append(f"{entry.id}: {entry.doc_id} has no gold value at {entry.address}")
    if problems:
        return problems
    values = list(entry.values) if entry.action == "accept" else [entry.value] if entry.has_value else []
    for value in values:
        problems += [f"{entry.id}: {problem}" for problem in _value_problems(row, gold, entry, value)]
    return problems


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


def problems(adjudications: Adjudications, dataset: Dataset, only_accepted: bool = False) -> list[str]:
    """Every problem of the file against the dataset, one line each, in file order."""
    found = [p for p in [commit_problem(adjudications, dataset)] if p is not None]
    found += conflicts(adjudications)
    entries = [e for e in adjudications.entries if not only_accepted or e.effect is not None]
    rows = {row.doc_id: row for row in dataset.rows}
    wanted = [rows[doc_id] for doc_id in dict.fromkeys(e.doc_id for e in entries) if doc_id in rows]
    golds = dict(((row.doc_id, gold) for row, gold in dataset.golds(wanted)))
    for entry in entries:
        found += entry_problems(entry, rows.get(entry.doc_id), golds.get(entry.doc_id))
    return found


def checked(adjudications: Adjudications, dataset: Dataset) -> Adjudications:
    """The file, when every accepted entry can be applied to this dataset; else one line naming the
    first problem (and how many there are), before anything is graded."""
    found = problems(adjudications, dataset, only_accepted=True)
    if found:
        more = f" (and {len(found) - 1} more: oeb adjudicate check lists them)" if len(found) > 1 else ""
        raise AdjudicationError(f"{adjudications.url}: {found[0]}{more}")
    return adjudications


def applying(given: str | None, dataset: Dataset) -> Adjudications | None:
    """The adjudication file grading applies, checked against the dataset: `given` (an fsspec URL),
    none for `none`, else the dataset's own `adjudications.yaml` when it has one."""
    from oeb import storage
    from oeb.errors import StorageError
    from oeb.gold.entries import FILE_NAME, NONE, load

    if given is not None and given.strip().lower() == NONE:
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
    return checked(load(url), dataset)
