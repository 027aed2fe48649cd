"""`oeb gold draft`: a gold drafted from the agreement of several systems' runs (docs/own-documents.md).

Per document the systems' answers are aligned with the scorer's own pairing: the fullest answer is the
frame (the pivot), every other answer is scored against it (`oeb.scoring.score`), so array rows pair by
content and each reading lands on the pivot's address; a key the pivot lacks keeps its own address.
A leaf is drafted when K of the N systems give the same canonical key (the scorer's equivalences);
when K systems state nothing there, it stays absent; anything else is `undecided`, with every reading,
for a person (`oeb view --review`). Rows the pivot lacks (the scorer's invented items) are not drafted.
"""

from __future__ import annotations

import hashlib
import itertools
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa  # type: ignore[import-untyped]  # pyarrow ships no type information

from oeb import _json, storage
from oeb.dataset import DEFAULT_MANIFEST, Dataset, named_by_folder, open_dataset
from oeb.errors import AdjudicationError, StorageError, UsageError
from oeb.gold import entries
from oeb.gold.apply import parse_address
from oeb.gold.check import leaves
from oeb.gold.derivation import DERIVATION, DRAFTED, PROPOSED, Derived, parquet_bytes, system_key, version
from oeb.gold.entries import Adjudications, Entry
from oeb.scoring import canonical_key, show_address

_READ_BATCH = 64


@dataclass(frozen=True)
class Voter:
    """One run: its folder, its system setting's key (`system_key`)."""

    url: str
    key: str


def voters(runs: Sequence[str]) -> tuple[list[Voter], Dataset]:
    """The runs, checked: each a run folder of a gold-less dataset, all of one dataset, no system
    setting twice; with the dataset they answer."""
    found, named = [], set()
    for url in runs:
        url = url.rstrip("/")
        try:
            settings = storage.read_json(storage.join(url, "settings.json"))
        except StorageError:
            raise UsageError(f"{url} is not a run folder (no readable settings.json); give runs of `oeb run`") from None
        if not isinstance(settings, dict) or not settings.get("system"):
            raise UsageError(f"{url} is not a run of a system (its settings.json names none); give runs of `oeb run`")
        named.add((settings.get("dataset"), settings.get("manifest") or DEFAULT_MANIFEST))
        found.append((Voter(url, system_key(settings)), settings))
    if len(named) > 1:
        shown = ", ".join(sorted(str(dataset) for dataset, _ in named))
        raise UsageError(f"the runs answer different datasets ({shown}); draft from runs over one gold-less dataset")
    keys = [voter.key for voter, _ in found]
    for voter, _ in found:
        if keys.count(voter.key) > 1:
            twins = [v.url for v, _ in found if v.key == voter.key]
            raise UsageError(
                f"{twins[0]} and {twins[1]} are the same system setting ({voter.key}); a draft needs independent "
                "systems, so give each once"
            )
    ((dataset_url, manifest),) = named
    dataset = open_dataset(
        named_by_folder(dataset_url, found[0][0].url, "a run of a local, s3:// or hf:// dataset"), manifest
    )
    if not dataset.goldless:
        raise UsageError(
            f"the runs answer {dataset.url}, which has gold; oeb gold draft drafts the gold of a gold-less dataset "
            "(oeb dataset init)"
        )
    return [voter for voter, _ in found], dataset


def check_k(k: int | None, n: int) -> int:
    """K, the agreeing systems a value needs: a majority by default; 1..N."""
    if n < 2:
        raise UsageError(f"a draft needs the runs of two or more systems; {n} given")
    k = n // 2 + 1 if k is None else k
    if not 1 <= k <= n:
        raise UsageError(f"--min-agree {k} is not between 1 and the {n} systems given")
    return k


def _readings(prediction: Any, pivot: Any, schema: dict[str, Any]) -> dict[str, tuple[Any, str]]:
    """One system's readings on the pivot's frame: printed address -> (value, canonical key)."""
    import oeb.scoring

    found: dict[str, tuple[Any, str]] = {}
    result = oeb.scoring.score(prediction, pivot, schema, verdicts=True)
    for verdict in result.get("verdicts") or ():
        if verdict.result in ("matched", "misread", "fabricated", "invented_field") and verdict.pred_canon is not None:
            found[show_address(verdict.address)] = (verdict.pred_raw, verdict.pred_canon)
    return found


def _size(prediction: Any) -> int:
    return sum(1 for _ in leaves(prediction)) if isinstance(prediction, dict | list) else 0


def draft_document(
    doc_id: str, predictions: Sequence[Any], keys: Sequence[str], schema: dict[str, Any], k: int
) -> tuple[dict[str, Any], list[Derived]]:
    """One document's drafted gold and its derivation rows."""
    n = len(predictions)
    answers = [p if isinstance(p, dict) else None for p in predictions]
    pivot_at = max(range(n), key=lambda i: (_size(answers[i]), -i))
    pivot = answers[pivot_at]
    if pivot is None:
        return {}, []
    readings: list[dict[str, tuple[Any, str]]] = []
    for i, answer in enumerate(answers):
        if i == pivot_at:
            readings.append({address: (value, canonical_key(value)) for address, value in leaves(pivot)})
        else:
            readings.append(_readings(answer, pivot, schema) if answer is not None else {})
    addresses = list(dict.fromkeys(a for found in readings for a in found))
    gold = _blank(pivot)
    rows: list[Derived] = []
    for address in addresses:
        groups: dict[str, list[int]] = {}
        for i, found in enumerate(readings):
            if address in found:
                groups.setdefault(found[address][1], []).append(i)
        best = max(groups.values(), key=lambda members: (len(members), pivot_at in members, -members[0]))
        stated = {keys[i]: found[address][0] for i, found in enumerate(readings) if address in found}
        if len(best) >= k:
            value = readings[best[0]][address][0]
            _put(gold, address, value)
            rows.append(
                Derived(
                    doc_id,
                    address,
                    value,
                    tuple(keys[i] for i in best),
                    k,
                    n,
                    "drafted",
                    readings=tuple(stated.items()),
                )
            )
        elif n - len(stated) < k:  # neither a value nor its absence has K systems
            rows.append(Derived(doc_id, address, None, (), k, n, "undecided", readings=tuple(stated.items())))
    return gold, rows


def _blank(pivot: Any) -> Any:
    """The pivot's shape with every leaf null (drafted values are put in)."""
    if isinstance(pivot, dict):
        return {key: _blank(value) for key, value in pivot.items()}
    if isinstance(pivot, list):
        return [_blank(value) for value in pivot]
    return None


def _put(gold: dict[str, Any], address: str, value: Any) -> None:
    """Put a drafted value at its address, making the objects a key outside the pivot's frame needs."""
    node: Any = gold
    steps = parse_address(address)
    for (kind, name), (next_kind, _) in itertools.pairwise(steps):
        if kind == "k" and isinstance(node, dict):
            if not isinstance(node.get(name), dict | list):
                node[name] = [] if next_kind == "i" else {}
            node = node[name]
        elif kind == "i" and isinstance(node, list) and 0 <= name < len(node):
            node = node[name]
        else:
            return
    kind, name = steps[-1]
    if (kind == "k" and isinstance(node, dict)) or (kind == "i" and isinstance(node, list) and 0 <= name < len(node)):
        node[name] = value


def _predictions(url: str, doc_ids: Sequence[str]) -> dict[str, Any]:
    """A run's predictions by document (absent: not answered)."""
    found: dict[str, Any] = {}
    for start in range(0, len(doc_ids), _READ_BATCH):
        batch = doc_ids[start : start + _READ_BATCH]
        contents = storage.read_many(url, [f"predictions/{doc_id}.json" for doc_id in batch])
        for doc_id in batch:
            content = contents.get(f"predictions/{doc_id}.json")
            if isinstance(content, bytes):
                try:
                    found[doc_id] = _json.loads(content.decode("utf-8-sig"))
                except ValueError:
                    continue
    return found


@dataclass(frozen=True)
class Drafted:
    url: str
    k: int
    n: int
    version: str
    values: list[Derived]


def draft(runs: Sequence[str], k: int | None, out: str) -> Drafted:
    """Draft the runs' dataset's gold into a new dataset at `out` (its files, the drafted gold, the
    derivation); every check comes before the first write, and the manifest is written last."""
    found, dataset = voters(runs)
    k = check_k(k, len(found))
    out = out.rstrip("/")
    if storage.exists(storage.join(out, DEFAULT_MANIFEST)):
        raise UsageError(f"{out} already holds a dataset ({DEFAULT_MANIFEST}); give a new --out")
    doc_ids = [row.doc_id for row in dataset.rows]
    answers = [_predictions(voter.url, doc_ids) for voter in found]
    keys = [voter.key for voter in found]
    golds: dict[str, dict[str, Any]] = {}
    values: list[Derived] = []
    for row in dataset.rows:
        gold, rows = draft_document(row.doc_id, [a.get(row.doc_id) for a in answers], keys, dict(row.schema), k)
        golds[row.doc_id], values = gold, values + rows
    write(dataset, out, golds, values, found_keys(found), k)
    entries.save(Adjudications(tuple(proposals(values))), storage.join(out, entries.FILE_NAME))
    return Drafted(out, k, len(found), version(golds.items()), values)


def found_keys(found: Sequence[Voter]) -> list[dict[str, str]]:
    return [{"key": voter.key, "run": voter.url} for voter in found]


def write(
    dataset: Dataset, out: str, golds: dict[str, dict[str, Any]], values: Sequence[Derived], systems: Any, k: int
) -> None:
    """The drafted dataset: the gold-less dataset's files, gold/<id>.json, the derivation, drafted.json
    and the manifest (last)."""
    listing = storage.list_files(dataset.location)
    for path in sorted(listing):
        if path != dataset.manifest and not path.startswith("gold/") and path not in (DRAFTED, DERIVATION):
            storage.write_bytes(storage.join(out, path), storage.read_bytes(storage.join(dataset.location, path)))
    for doc_id, gold in golds.items():
        storage.write_bytes(
            storage.join(out, "gold", f"{doc_id}.json"), json.dumps(gold, indent=2, ensure_ascii=False).encode()
        )
    storage.write_bytes(storage.join(out, DERIVATION), parquet_bytes(values))
    meta = {
        "version": version(golds.items()),
        "k": k,
        "systems": systems,
        "source": {"dataset": dataset.identity, "manifest": dataset.manifest},
    }
    storage.write_json(storage.join(out, DRAFTED), meta)
    manifest = storage.read_parquet(storage.join(dataset.location, dataset.manifest))
    paths = pa.array([f"gold/{doc_id}.json" for doc_id in manifest.column("doc_id").to_pylist()], pa.string())
    manifest = manifest.set_column(manifest.column_names.index("gt_path"), "gt_path", paths)
    storage.write_parquet(storage.join(out, DEFAULT_MANIFEST), manifest)


def rewrite(dataset: Dataset, golds: dict[str, dict[str, Any]], values: Sequence[Derived]) -> str:
    """A drafted dataset's gold and derivation written again in place (freeze): the new version."""
    for doc_id, gold in golds.items():
        storage.write_bytes(
            storage.join(dataset.location, "gold", f"{doc_id}.json"),
            json.dumps(gold, indent=2, ensure_ascii=False).encode(),
        )
    storage.write_bytes(storage.join(dataset.location, DERIVATION), parquet_bytes(values))
    meta = storage.read_json(storage.join(dataset.location, DRAFTED))
    if not isinstance(meta, dict):
        raise AdjudicationError(f"{dataset.url}: {DRAFTED} is not a JSON object; draft again")
    meta["version"] = version(golds.items())
    storage.write_json(storage.join(dataset.location, DRAFTED), meta)
    return str(meta["version"])


def proposals(values: Sequence[Derived]) -> list[Entry]:
    """The review queue of a new draft: each undecided value as a proposed `add` of its most common
    reading (a person picks another reading, types a value, or marks it absent: `oeb view --review`)."""
    found = []
    for value in values:
        if value.status != "undecided" or not value.readings:
            continue
        counts: dict[str, list[Any]] = {}
        for _, reading in value.readings:
            counts.setdefault(canonical_key(reading), []).append(reading)
        common = max(counts.values(), key=len)[0]
        shown = "; ".join(f"{system}: {json.dumps(reading, ensure_ascii=False)}" for system, reading in value.readings)
        found.append(
            Entry(
                id=PROPOSED + hashlib.sha256(f"{value.doc_id}\0{value.address}".encode()).hexdigest()[:12],
                doc_id=value.doc_id,
                address=value.address,
                action="add",
                value=common,
                reason=f"undecided in the draft (fewer than {value.k} of {value.n} agree): {shown}"[:2000],
            )
        )
    return found
