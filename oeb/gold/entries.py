"""The adjudication file (`adjudications.yaml`, docs/adjudication.md): entries, read and written.

A file is either a bare YAML list of entries or a mapping `{dataset, commit, entries}`; the mapping
names the dataset (and Hub commit) its addresses were read against, so a file is never applied to
another commit by mistake. Every problem is one `AdjudicationError` line naming the entry (its id, or
its place and line in the file) and the fix. Writes are whole-file and atomic (`oeb.storage`), and a
decision is refused when its entry changed since it was read (`revision`).
"""

from __future__ import annotations

import dataclasses
import datetime
import enum
import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import yaml

from oeb import storage
from oeb._yaml import load_yaml
from oeb.errors import AdjudicationError, StorageError, StorageNotFoundError

ACTIONS = ("accept", "replace", "remove", "add", "verify")
STATUSES = ("proposed", "accepted", "rejected")
FILE_NAME = "adjudications.yaml"
"""The file beside a dataset's manifest that grading applies unless told otherwise."""
NONE = "none"
"""`--adjudications none`: grade against the raw gold."""

_KEYS = ("id", "doc_id", "address", "action", "status", "values", "value", "reason", "by", "date", "evidence")


class _Missing(enum.Enum):
    """An entry without `value`: an enum member, so it is still itself once an entry is pickled to a
    Ray worker (a bare `object()` came back as another object: `has_value` was then true there)."""

    MISSING = "missing"


_MISSING: Any = _Missing.MISSING


@dataclass(frozen=True)
class Entry:
    """One adjudication. `value` is `MISSING` when the entry has none (`has_value`)."""

    id: str
    doc_id: str
    address: str
    action: str
    status: str = "proposed"
    values: tuple[Any, ...] = ()
    value: Any = field(default=_MISSING)
    reason: str | None = None
    by: str | None = None
    date: str | None = None
    evidence: dict[str, Any] | None = None

    @property
    def has_value(self) -> bool:
        return self.value is not _MISSING

    @property
    def effect(self) -> str | None:
        """What the entry does to grading: the action (`verify` with a value acts as `replace`, without
        one it confirms the gold and changes nothing); None when it is not accepted."""
        if self.status != "accepted":
            return None
        if self.action == "verify":  # `value: null`: the page states nothing there, the gold's is dropped
            return None if not self.has_value else "remove" if self.value is None else "replace"
        return self.action

    @property
    def revision(self) -> str:
        """A digest of the entry as written: a reviewer's decision names the revision it saw."""
        return hashlib.sha256(json.dumps(to_json(self), sort_keys=True, default=str).encode()).hexdigest()[:16]


MISSING = _MISSING


def to_json(entry: Entry) -> dict[str, Any]:
    """The entry as the file holds it: keys in a fixed order, empty ones left out."""
    out: dict[str, Any] = {"id": entry.id, "doc_id": entry.doc_id, "address": entry.address}
    out |= {"action": entry.action, "status": entry.status}
    if entry.action == "accept":
        out["values"] = list(entry.values)
    if entry.has_value:
        out["value"] = entry.value
    for key in ("reason", "by", "date", "evidence"):
        if getattr(entry, key) is not None:
            out[key] = getattr(entry, key)
    return out


@dataclass(frozen=True)
class Adjudications:
    """A whole file: the dataset and commit it names (None: unnamed), its entries in file order, its
    sha256 (of the bytes read; "" for a file not yet written) and where it lives."""

    entries: tuple[Entry, ...]
    dataset: str | None = None
    commit: str | None = None
    sha256: str = ""
    url: str = ""

    def by_id(self, entry_id: str) -> Entry:
        for entry in self.entries:
            if entry.id == entry_id:
                return entry
        raise AdjudicationError(
            f"{self.url or 'the file'}: no entry with id {entry_id!r}; `oeb adjudicate check` lists them"
        )

    @property
    def accepted(self) -> tuple[Entry, ...]:
        """The entries that change grading, checked for two on one address."""
        active = tuple(entry for entry in self.entries if entry.effect is not None)
        seen: dict[tuple[str, str], str] = {}
        for entry in active:
            other = seen.setdefault((entry.doc_id, entry.address), entry.id)
            if other != entry.id:
                raise AdjudicationError(
                    f"{self.url or 'the file'}: entries {other} and {entry.id} are both accepted on "
                    f"{entry.doc_id} {entry.address}; reject one of them"
                )
        return active

    def by_document(self) -> dict[str, list[Entry]]:
        """The accepted entries that change grading, per document."""
        found: dict[str, list[Entry]] = {}
        for entry in self.accepted:
            found.setdefault(entry.doc_id, []).append(entry)
        return found

    @property
    def short(self) -> str:
        return self.sha256[:12]

    def replaced(self, entries: Iterable[Entry]) -> Adjudications:
        """The file with these entries put in place of those of their ids (new ids appended)."""
        new = {entry.id: entry for entry in entries}
        kept = [new.pop(entry.id, entry) for entry in self.entries]
        return dataclasses.replace(self, entries=(*kept, *new.values()))


def _where(url: str, index: int, line: int | None) -> str:
    return f"{url}: entry {index + 1}" + (f" (line {line})" if line else "")


def _text(raw: dict[str, Any], key: str, where: str, required: bool = True) -> str | None:
    value = raw.get(key)
    if value is None and not required:
        return None
    if not isinstance(value, str) or not value.strip():
        raise AdjudicationError(f"{where}: `{key}` must be a non-empty string; write `{key}: ...`")
    return value


def _evidence(raw: Any, where: str) -> dict[str, Any] | None:
    if raw is None:
        return None
    if not isinstance(raw, dict) or set(raw) - {"page", "bbox"}:
        raise AdjudicationError(f"{where}: `evidence` takes `page` (from 1) and `bbox` [x0, y0, x1, y1] only")
    page, bbox = raw.get("page"), raw.get("bbox")
    if page is not None and (not isinstance(page, int) or isinstance(page, bool) or page < 1):
        raise AdjudicationError(f"{where}: evidence `page` must be a whole number from 1, not {page!r}")
    if bbox is not None and (
        not isinstance(bbox, list)
        or len(bbox) != 4
        or not all(isinstance(v, int | float) and not isinstance(v, bool) for v in bbox)
    ):
        raise AdjudicationError(f"{where}: evidence `bbox` must be four numbers in PDF points [x0, y0, x1, y1]")
    return dict(raw)


def parse_entry(raw: Any, where: str) -> Entry:
    """One entry from its YAML mapping, checked for shape (what it names is checked by `check`)."""
    if not isinstance(raw, dict):
        raise AdjudicationError(f"{where}: an entry must be a mapping of id, doc_id, address, action, status, ...")
    unknown = sorted(str(key) for key in raw if key not in _KEYS)
    if unknown:
        raise AdjudicationError(f"{where}: unknown key {unknown[0]!r}; the keys are {', '.join(_KEYS)}")
    entry_id = _text(raw, "id", where)
    where = f"{where} ({entry_id})"
    action, status = raw.get("action"), raw.get("status", "proposed")
    if action not in ACTIONS:
        raise AdjudicationError(f"{where}: action {action!r} is not one of {', '.join(ACTIONS)}")
    if status not in STATUSES:
        raise AdjudicationError(f"{where}: status {status!r} is not one of {', '.join(STATUSES)}")
    values = raw.get("values")
    if action == "accept":
        if not isinstance(values, list) or not values or any(v is None for v in values):
            raise AdjudicationError(f"{where}: an accept entry needs `values: [...]`, the readings that also count")
    elif values is not None:
        raise AdjudicationError(f"{where}: `values` belongs to accept entries; a {action} entry takes `value`")
    has_value = "value" in raw
    if action in ("replace", "add") and not has_value:
        raise AdjudicationError(f"{where}: a {action} entry needs `value:`, the new gold value")
    if action in ("remove", "accept") and has_value:
        raise AdjudicationError(f"{where}: a {action} entry takes no `value`")
    if has_value and ((raw["value"] is None and action != "verify") or isinstance(raw["value"], dict | list)):
        raise AdjudicationError(f"{where}: `value` must be one value (text, number, true/false); use remove to drop it")
    reason = _text(raw, "reason", where, required=False)
    by = _text(raw, "by", where, required=False)
    if status != "proposed" and (reason is None or by is None):
        missing = "reason" if reason is None else "by"
        raise AdjudicationError(f"{where}: an {status} entry needs `{missing}:` (who decided, and why)")
    date = raw.get("date")
    return Entry(
        id=str(entry_id),
        doc_id=str(_text(raw, "doc_id", where)),
        address=str(_text(raw, "address", where)),
        action=action,
        status=status,
        values=tuple(values or ()),
        value=raw["value"] if has_value else MISSING,
        reason=reason,
        by=by,
        date=None if date is None else str(date),
        evidence=_evidence(raw.get("evidence"), where),
    )


def _lines(text: str) -> list[int | None]:
    """The line of each entry in the file (for messages), best effort."""
    try:
        node = yaml.compose(text)
    except yaml.YAMLError:
        return []
    if isinstance(node, yaml.MappingNode):
        node = next((value for key, value in node.value if getattr(key, "value", None) == "entries"), None)
    if not isinstance(node, yaml.SequenceNode):
        return []
    return [item.start_mark.line + 1 for item in node.value]


def parse(text: str, url: str = "adjudications.yaml") -> Adjudications:
    """A file's entries from its text; any problem is one line (a YAML error with its line)."""
    try:
        tree = load_yaml(text, unique_keys=True)  # an entry's second `status:` is refused, not the last kept
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        line = f" at line {mark.line + 1}" if mark is not None else ""
        problem = getattr(error, "problem", None) or str(error).splitlines()[0]
        raise AdjudicationError(f"{url} is not valid YAML{line}: {problem}; fix the file") from None
    dataset = commit = None
    if tree is None:
        tree = []
    if isinstance(tree, dict):
        unknown = sorted(str(key) for key in tree if key not in ("dataset", "commit", "entries"))
        if unknown:
            raise AdjudicationError(
                f"{url}: unknown top-level key {unknown[0]!r}; the keys are dataset, commit, entries"
            )
        dataset, commit, tree = tree.get("dataset"), tree.get("commit"), tree.get("entries") or []
    if not isinstance(tree, list):
        raise AdjudicationError(f"{url}: the file must be a list of entries (or dataset, commit and entries)")
    try:
        entries = [parse_entry(raw, _where(url, i, None)) for i, raw in enumerate(tree)]
    except AdjudicationError:  # again, naming the entry's line (composing the file again costs a parse)
        lines = _lines(text)
        entries = [parse_entry(raw, _where(url, i, lines[i] if i < len(lines) else None)) for i, raw in enumerate(tree)]
    seen: set[str] = set()
    for entry in entries:
        if entry.id in seen:
            raise AdjudicationError(f"{url}: the id {entry.id!r} is used twice; give each entry its own id")
        seen.add(entry.id)
    digest = hashlib.sha256(text.encode()).hexdigest()
    return Adjudications(
        tuple(entries), None if dataset is None else str(dataset), None if commit is None else str(commit), digest, url
    )


def load(url: str) -> Adjudications:
    """The file at `url` (local, s3://, hf://)."""
    try:
        data = storage.read_bytes(url)
    except StorageNotFoundError:
        raise AdjudicationError(
            f"no adjudication file at {url}; check the URL (or give --adjudications none)"
        ) from None
    key = (url, hashlib.sha256(data).hexdigest())
    if key in _LOADED:  # a regrade of ten runs reads one file ten times: parsed once
        return _LOADED[key]
    read = from_bytes(data, url)
    if len(_LOADED) >= _LOADED_MAX:
        del _LOADED[next(iter(_LOADED))]
    _LOADED[key] = read
    return read


def from_bytes(data: bytes, url: str) -> Adjudications:
    """The file whose bytes are `data`; its sha256 is of those bytes, a byte-order mark included, so
    it is the digest `sha256sum` gives and the one publish and reproduce check the file against."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise AdjudicationError(f"{url} is not UTF-8 text; save it as UTF-8") from None
    return dataclasses.replace(parse(text, url), sha256=hashlib.sha256(data).hexdigest())


_LOADED: dict[tuple[str, str], Adjudications] = {}
"""The files read, by URL and the sha256 of their bytes (a file changed on disk is parsed again)."""
_LOADED_MAX = 4


def load_or_empty(url: str) -> Adjudications:
    """The file at `url`, or an empty one to be written there."""
    try:
        if not storage.exists(url):
            return Adjudications((), url=url)
    except StorageError:
        return Adjudications((), url=url)
    return load(url)


def dump(adjudications: Adjudications) -> str:
    """The file's text: the mapping form, entries in order."""
    tree: dict[str, Any] = {}
    if adjudications.dataset is not None:
        tree["dataset"] = adjudications.dataset
    if adjudications.commit is not None:
        tree["commit"] = adjudications.commit
    tree["entries"] = [to_json(entry) for entry in adjudications.entries]
    text: str = yaml.safe_dump(tree, sort_keys=False, allow_unicode=True, default_flow_style=False, width=120)
    return text


def relaid(read: Adjudications) -> bool:
    """Whether writing a file read from disk back changes more than its entries: oeb writes its own
    layout, so a hand-edited file's comments, anchors (`&name`, `<<: *name`) and flow lists go."""
    return bool(read.sha256) and hashlib.sha256(dump(read).encode()).hexdigest() != read.sha256


def save(adjudications: Adjudications, url: str) -> Adjudications:
    """Write the file atomically (checked by reading it back first); returns it as written."""
    text = dump(adjudications)
    written = parse(text, url)  # never write what could not be read back
    storage.write_text(url, text)
    return written


def today() -> str:
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d")


def decide(
    entry: Entry,
    status: str,
    by: str,
    reason: str | None,
    value: Any = MISSING,
) -> Entry:
    """The entry decided: `accepted` or `rejected` by `by`, with a reason (its own one kept when none is
    given for an acceptance; a rejection always needs one) and, for a verify entry, a corrected value
    (one already in the entry is kept when none is given; None: the page states no value there)."""
    if not by.strip():
        raise AdjudicationError("--by NAME is empty; give the name of who decides")
    reason = reason if reason is not None and reason.strip() else None
    if status == "rejected" and reason is None:
        raise AdjudicationError(f"{entry.id}: a rejection needs --reason TEXT saying why")
    if reason is None:
        reason = entry.reason
    if reason is None:
        raise AdjudicationError(f"{entry.id}: a decision needs a reason and the entry has none; give --reason TEXT")
    if value is not MISSING:
        if entry.action not in ("verify", "replace", "add"):
            raise AdjudicationError(f"{entry.id}: --value is for verify entries (a correction), not {entry.action}")
        if (value is None and entry.action != "verify") or isinstance(value, dict | list):
            raise AdjudicationError(
                f"{entry.id}: --value must be one JSON value (text, number, true/false; null only for a verify "
                "entry whose value the page does not state)"
            )
    return dataclasses.replace(
        entry,
        status=status,
        by=by,
        reason=reason,
        date=today(),
        value=entry.value if value is MISSING else value,
    )


def ids_unknown(adjudications: Adjudications, ids: Sequence[str]) -> list[str]:
    known = {entry.id for entry in adjudications.entries}
    return [entry_id for entry_id in ids if entry_id not in known]
