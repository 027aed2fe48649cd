"""The gold audit: where several independent systems agree against the gold, where the gold breaks its
own schema, where one system answers far fewer rows than its peers, and text that looks like mojibake.

Each graded run's `field_matching/verdicts.parquet` gives, per document and gold address (the
address `oeb.show_address` prints, in the gold's own row numbering), the gold's and the prediction's
canonical keys. A gold value is suspect when at least `min_agree` systems give one same other value:
independent systems rarely make one same mistake, while a gold error makes them all "wrong" alike.
The findings are proposals for a human, who decides with the PDF open; nothing is changed in place
(`write_fixes` writes proposed gold files to another folder).
"""

from __future__ import annotations

import copy
import json
import statistics
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass
from typing import Any, NamedTuple

import ftfy
import pyarrow as pa  # type: ignore[import-untyped]
import pyarrow.compute as pc  # type: ignore[import-untyped]

from oeb import _json, storage
from oeb.dataset import DEFAULT_MANIFEST, Dataset, Row, named_by_folder, open_dataset
from oeb.errors import ReportError, ReportMismatch, UsageError
from oeb.gold.validate import schema_errors
from oeb.report.runs import Run
from oeb.scoring import canonical_key, show_address

KINDS = ("gold_disagrees", "gold_missing", "gold_invalid", "short_answer", "mojibake")
FIXABLE = ("gold_disagrees", "gold_missing", "mojibake")
"""Kinds with a value to propose for the gold."""
SHORT_SHARE = 0.5
SHORT_MIN_ROWS = 4
"""A system answers short when its rows are at most half the median of its peers', who give at least 4."""
_VOTED = ["misread", "fabricated"]
"""The verdicts where a system gives a value other than the gold's (the gold's, or none: fabricated)."""

Address = tuple[tuple[str, Any], ...]


class Vote(NamedTuple):
    """One system's value at a gold address where it differs from the gold (raw values as JSON text)."""

    gold_raw: str
    gold_canon: str | None
    pred_raw: str
    pred_canon: str


@dataclass(frozen=True)
class Finding:
    """One suspect place: `gold` is the gold's value there (None: states nothing), `consensus` what the
    agreeing systems give (or what to put instead), `agree` of `of` systems (those that scored the
    document) and which; `note` says why in words."""

    doc_id: str
    address: str
    kind: str
    gold: Any
    consensus: Any
    agree: int
    of: int
    systems: list[str]
    note: str = ""


def default_min_agree(runs: int) -> int:
    """A majority of the runs, at least 3: two systems agreeing by chance is not rare enough."""
    return max(3, runs // 2 + 1)


def dataset_of(runs: Sequence[Run], given: str | None) -> Dataset:
    """The dataset the runs were graded against (at the commit they name), or `given` (--dataset) when
    they do not name one; `given` naming another dataset than the runs' is refused."""
    named = next((run for run in runs if run.named("dataset") is not None), None)
    if named is None:
        if given is None:
            raise ReportError(
                f"{runs[0].name} does not name the dataset it was graded against (graded by an older oeb); "
                "give it with --dataset D"
            )
        return open_dataset(given)
    url, commit = named.named("dataset"), named.named("dataset_commit")
    if given is None or given != url:  # a URL to fetch only when the user names it
        url = named_by_folder(url, named.url)
    opened = open_dataset(f"{url}@{commit}" if commit else url, named.named("manifest") or DEFAULT_MANIFEST)
    if given is not None and open_dataset(given, opened.manifest).identity != opened.identity:
        raise ReportMismatch(
            f"--dataset {given} is not {url}, which {named.name} was graded against; leave --dataset out"
        )
    return opened


def votes(run: Run) -> dict[str, dict[str, Vote]]:
    """Per document and gold address, the run's value where it gives one other than the gold's."""
    url = storage.join(run.url, "field_matching", "verdicts.parquet")
    if not storage.exists(url):
        raise ReportError(f"{url} is missing (graded by an older oeb); grade the run again: oeb grade {run.url}")
    table = storage.read_parquet(url, columns=["id", "address", *Vote._fields, "result"])
    table = table.filter(pc.is_in(table["result"], value_set=pa.array(_VOTED)))
    found: dict[str, dict[str, Vote]] = {}
    columns = table.to_pydict()
    for i, doc_id in enumerate(columns["id"]):
        if columns["pred_canon"][i] is not None:
            found.setdefault(doc_id, {})[columns["address"][i]] = Vote(*(columns[f][i] for f in Vote._fields))
    return found


def _consensus(doc_id: str, by_run: dict[str, dict[str, Vote]], scored: list[str], min_agree: int) -> Iterator[Finding]:
    """gold_disagrees and gold_missing: addresses where at least `min_agree` systems give one value."""
    addresses = sorted({address for run_votes in by_run.values() for address in run_votes})
    for address in addresses:
        ballots = {label: run_votes[address] for label, run_votes in by_run.items() if address in run_votes}
        canon, agree = Counter(vote.pred_canon for vote in ballots.values()).most_common(1)[0]
        if agree < min_agree:
            continue
        systems = [label for label, vote in ballots.items() if vote.pred_canon == canon]
        raw = Counter(ballots[label].pred_raw for label in systems).most_common(1)[0][0]
        first = ballots[systems[0]]
        missing = first.gold_canon is None
        yield Finding(
            doc_id,
            address,
            "gold_missing" if missing else "gold_disagrees",
            None if missing else _json.loads(first.gold_raw),
            _json.loads(raw),
            agree,
            len(scored),
            systems,
            f"{agree} of {len(scored)} systems give this value; the gold "
            + ("states nothing here" if missing else "differs"),
        )


def invalid(row: Row, gold: dict[str, Any], of: int) -> Iterator[Finding]:
    """gold_invalid: gold values of the wrong type, outside the enum or const, or not of the format or
    pattern the row's schema says (a null is the gold stating nothing, never an error)."""
    for address, value, message in schema_errors(dict(row.schema), gold):
        yield Finding(row.doc_id, address, "gold_invalid", value, None, 0, of, [], message)


def _walk(value: Any, path: Address = ()) -> Iterator[tuple[Address, Any, Any, Any]]:
    """Every value inside a document, depth first: its address (the document's own row numbers), the
    value, its container and its key or index there."""
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, item in items:
        step: Address = (*path, ("k" if isinstance(value, dict) else "i", key))
        yield step, item, value, key
        yield from _walk(item, step)


def mojibake(doc_id: str, gold: dict[str, Any], by_run: dict[str, dict[str, Vote]], of: int) -> Iterator[Finding]:
    """Gold text that looks like mojibake (UTF-8 read as another encoding), with ftfy's repair as the
    proposed value and the systems that read the repaired text."""
    for path, text, _, _ in _walk(gold):
        if not isinstance(text, str) or not ftfy.badness.is_bad(text):
            continue
        fixed = ftfy.fix_text(text)
        address = show_address(path)
        key = canonical_key(fixed)
        systems = [
            label for label, run_votes in by_run.items() if (vote := run_votes.get(address)) and vote.pred_canon == key
        ]
        note = f"looks like mojibake; ftfy reads it as {fixed!r}"
        yield Finding(doc_id, address, "mojibake", text, fixed, len(systems), of, systems, note)


def _arrays(document: Any) -> dict[str, int]:
    """Every array in a document by printed address, and its length."""
    return {show_address(path): len(value) for path, value, _, _ in _walk(document) if isinstance(value, list)}


def short_answers(doc_id: str, gold: dict[str, Any], predictions: dict[str, Any], of: int) -> Iterator[Finding]:
    """short_answer: arrays where one system returns at most SHORT_SHARE of the median of its peers'
    rows (peers giving at least SHORT_MIN_ROWS): a truncated or paged-off answer, not a gold error."""
    counts = {label: _arrays(prediction) for label, prediction in predictions.items()}
    gold_rows = _arrays(gold)
    for address in sorted({address for found in counts.values() for address in found}):
        for label, found in counts.items():
            rows = found.get(address, 0)
            peers = [other.get(address, 0) for name, other in counts.items() if name != label]
            if len(peers) < 2:
                continue
            median = statistics.median(peers)
            if median >= SHORT_MIN_ROWS and rows <= SHORT_SHARE * median:
                more = sum(1 for n in peers if n > rows / SHORT_SHARE)
                note = f"{label} returns {rows} rows where its peers' median is {median:g}"
                yield Finding(doc_id, address, "short_answer", gold_rows.get(address), median, more, of, [label], note)


def _predictions(run: Run, doc_ids: Sequence[str]) -> dict[str, Any]:
    """The run's predictions of the documents it answered (unreadable ones left out)."""
    folder = storage.join(run.url, "predictions")
    found = {}
    for path, data in storage.read_many(folder, [f"{doc_id}.json" for doc_id in doc_ids]).items():
        if isinstance(data, bytes):
            try:
                found[path.removesuffix(".json")] = _json.loads(data)
            except ValueError:
                continue
    return found


_BATCH = 64
"""Documents whose golds and predictions are read at once (concurrently, in one request each)."""


def audit(runs: Sequence[Run], dataset: Dataset, min_agree: int) -> list[Finding]:
    """Every finding over the documents the runs graded (every row of the dataset without runs), in
    the dataset's order, each document's by address then kind. With fewer systems scoring a document
    than `min_agree`, its agreement kinds are not looked for."""
    wanted = set(runs[0].doc_ids) if runs else None
    rows = [row for row in dataset.rows if wanted is None or row.doc_id in wanted]
    cast = [(run.label or run.name, run) for run in runs]
    voted = {label: votes(run) for label, run in cast}
    scored_by = {label: {line["id"] for line in run.lines if line["status"] == "scored"} for label, run in cast}
    findings: list[Finding] = []
    for start in range(0, len(rows), _BATCH):
        batch = rows[start : start + _BATCH]
        answers = {label: _predictions(run, [row.doc_id for row in batch]) for label, run in cast}
        for row, gold in dataset.golds(batch):
            scored = [label for label, _ in cast if row.doc_id in scored_by[label]]
            by_run = {label: voted[label].get(row.doc_id, {}) for label in scored}
            found = list(invalid(row, gold, len(scored)))
            repaired = {f.address: f for f in mojibake(row.doc_id, gold, by_run, len(scored))}
            found += repaired.values()
            if len(scored) >= min_agree:
                # mojibake the systems read repaired is one finding, of the more telling kind
                found += [f for f in _consensus(row.doc_id, by_run, scored, min_agree) if f.address not in repaired]
            predictions = {label: answers[label][row.doc_id] for label in scored if row.doc_id in answers[label]}
            if len(predictions) >= 3:
                found += short_answers(row.doc_id, gold, predictions, len(scored))
            findings += sorted(found, key=lambda f: (f.address, KINDS.index(f.kind)))
    return findings


def findings_json(findings: Sequence[Finding]) -> list[dict[str, Any]]:
    """The findings as `{"doc_id", "address", "kind", "gold", "consensus", "agree", "of", "systems", "note"}`."""
    return [asdict(finding) for finding in findings]


def propose(gold: dict[str, Any], findings: Sequence[Finding]) -> tuple[dict[str, Any], list[Finding]]:
    """A copy of the gold with each fixable finding's value put at its address, and the findings put;
    a value the gold does not state goes into the object that holds the address (an address whose
    object the gold lacks is left for the human)."""
    fixed = copy.deepcopy(gold)
    places = {show_address(path): (container, key) for path, _, container, key in _walk(fixed)}
    applied = []
    for finding in findings:
        if finding.kind not in FIXABLE:
            continue
        if finding.address in places:
            container, key = places[finding.address]
            container[key] = finding.consensus
        else:
            head, dot, name = finding.address.rpartition(".")
            target = fixed if not dot else places[head][0][places[head][1]] if head in places else None
            if not isinstance(target, dict) or "[" in name:
                continue
            target[name] = finding.consensus
        applied.append(finding)
    return fixed, applied


def write_fixes(dataset: Dataset, findings: Sequence[Finding], folder: str) -> tuple[int, int]:
    """Proposed gold files under `folder` at each gold's own path (gold/<id>.json), and findings.json
    listing what was put where; returns (files, values put). The dataset is never written."""
    local = storage.is_local(folder) and storage.is_local(dataset.location)
    root = storage.local_path(folder).resolve().as_posix() if local else folder.rstrip("/")
    location = storage.local_path(dataset.location).resolve().as_posix() if local else dataset.location.rstrip("/")
    if root == location or root.startswith(location + "/"):
        raise UsageError(
            f"--write-fixes {folder} is inside the dataset ({dataset.location}); give a folder outside it: "
            "the proposals are for a human to review, nothing is changed in place"
        )
    by_doc: dict[str, list[Finding]] = {}
    for finding in findings:
        by_doc.setdefault(finding.doc_id, []).append(finding)
    rows = [row for row in dataset.rows if row.doc_id in by_doc]
    files, put = 0, []
    for row, gold in dataset.golds(rows):
        fixed, applied = propose(gold, by_doc[row.doc_id])
        if applied:
            storage.write_text(
                storage.join(folder, row.gt_path), json.dumps(fixed, indent=2, ensure_ascii=False) + "\n"
            )
            files += 1
            put += applied
    storage.write_json(storage.join(folder, "findings.json"), {"findings": findings_json(put)})
    return files, len(put)


COLUMNS = ("document", "address", "kind", "gold", "consensus", "agree", "systems", "note")


def _shown(value: Any) -> str:
    return "–" if value is None else json.dumps(value, ensure_ascii=False)


def rows(findings: Sequence[Finding]) -> list[list[str]]:
    """The findings as table rows (values as JSON text, agreement as "agree/of")."""
    return [
        [
            f.doc_id,
            f.address,
            f.kind,
            _shown(f.gold),
            _shown(f.consensus),
            f"{f.agree}/{f.of}",
            ", ".join(f.systems),
            f.note,
        ]
        for f in findings
    ]


def summary_line(findings: Sequence[Finding], documents: int, min_agree: int | None) -> str:
    """How many findings of each kind, over how many documents, at which agreement (None: no runs)."""
    counts = Counter(f.kind for f in findings)
    kinds = ", ".join(f"{counts[kind]} {kind}" for kind in KINDS if counts[kind]) or "nothing found"
    agreement = "the gold alone (no runs)" if min_agree is None else f"agreement needed: {min_agree} systems"
    plural = "" if len(findings) == 1 else "s"
    return f"{len(findings)} finding{plural} over {documents} documents ({kinds}); {agreement}"
