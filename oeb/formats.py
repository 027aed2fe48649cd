"""The files of a run folder, as types: what the engine writes and the reports read.

A run folder is oeb's only interface between its layers and across time: a run written by one version
is resumed, graded and reported by another, on another machine. Declaring each file's shape once, here,
lets mypy hold both sides (`oeb.run` writes, `oeb.report` reads) to the same keys. These are
`TypedDict`s, not classes with behaviour: the files stay plain JSON, and a value read from disk is
checked by its reader before it is treated as one of these.

    <run>/settings.json              Settings
    <run>/records/<id>.json          Record
    <run>/jobs/<id>.json             JobFile (a job vendor's submitted job, until its record is saved)
    <run>/batches/<name>.json        oeb.batch.files.BatchFile (a provider batch, until its records are saved)
    <run>/field_matching/
        scores.jsonl                 ScoreLine, one per selected document
        summary.json                 Summary (with Provenance)
        details/<id>.jsonl           VerdictLine, one per address
        documents.json               dict[doc_id, DocumentEntry]

The docs page docs/architecture.md draws the whole folder.
"""

from __future__ import annotations

from typing import Any, Literal, NotRequired, TypedDict

JSON = Any
"""Any JSON value (what `json.loads` returns)."""


class Settings(TypedDict):
    """`settings.json`: what the run asked, written once before anything is asked. A resume compares
    its identity (`system`, `options`, `dataset`, `manifest`, `task`, `rows`) with the new plan."""

    run: str
    """The folder's name: `<system label>-<UTC date>-<time>-<4 hex>`."""
    system: str
    options: dict[str, JSON]
    """The system's options, location options (base URLs) left out: they are in `located`."""
    dataset: str
    manifest: str
    task: str
    rows: dict[str, JSON]
    """The row selection as the config gave it (`sample`, `limit`, `only`)."""
    dataset_commit: NotRequired[str]
    """The Hub commit the revision named when the run started (`hf://` datasets only)."""
    timeout_s: float
    located: NotRequired[dict[str, JSON]]
    started: str
    launch: dict[str, JSON]


class ErrorInfo(TypedDict):
    """A failed record's `error`: what went wrong, and whether asking again could help."""

    type: str
    """The failure's class name: `SystemFailed`, `SystemTimeout`, `SystemUnreachable`, `Unreadable`, ..."""
    status: int | None
    transient: bool
    message: str
    traceback: str


class CostInfo(TypedDict):
    """What one attempt or one document cost, in the vendor's own units (never converted)."""

    usd: float | None
    credits: float | None
    source: str | None
    """The answer's field the figure was read from."""
    tokens_in: int | None
    tokens_out: int | None


class RecordCost(CostInfo):
    """A record's `cost`: the attempts' summed cost, with the document's wall time and attempts."""

    wall_s: float
    attempts: int


class QuestionIdentity(TypedDict):
    """What makes two askings the same question, for reusing an earlier answer."""

    pdf_sha256: str
    schema_sha256: str
    """Of the schema after the conventions, as canonical JSON."""
    adapter: str | None
    """The adapter's package and version."""


class Record(TypedDict):
    """`records/<id>.json`: every outcome of asking one document; its presence marks the document done."""

    system: str
    options: dict[str, JSON]
    package: str | None
    question: QuestionIdentity
    output: dict[str, JSON] | None
    """The extraction read from `raw` (also saved alone as `predictions/<id>.json`); None if failed."""
    raw: JSON
    """The vendor's answer as received, or its error body: kept so a fixed reader can read it again."""
    sent: JSON
    """The schema as sent, in the vendor's dialect."""
    error: ErrorInfo | None
    cost: RecordCost
    job_id: str | None
    timeout_s: float
    captured_at: str
    resubmitted: NotRequired[str]
    """Why the document's job was submitted again (the vendor lost it, its handle was unreadable)."""
    reused_from: NotRequired[str]
    """The run folder this answer was taken from instead of asking the vendor (`oeb run --reuse`)."""
    batch_id: NotRequired[str]
    """The provider batch that answered (a system run with `batch: true`); `cost` is then at the batch price."""
    unread: NotRequired[bool]
    """The reader crashed on this answer; a resume reads it again with no call."""


class SavedFailure(TypedDict):
    """The last failure of a document still being asked, as a job file keeps it."""

    type: str
    message: str
    status: int | None
    body: JSON
    sent: JSON
    job_id: str | None
    retry_after: float | None


class JobFile(TypedDict):
    """`jobs/<id>.json`: a job vendor's submitted job, written before its first poll and removed once
    the record is saved, so a resume collects the job instead of buying it again
    (`oeb.systems.Asking.to_json` writes it, `Asking.from_json` reads it)."""

    started: float
    """When the document was first asked (wall clock): its time limit counts from here."""
    attempts: int
    cost: CostInfo
    failure: SavedFailure | None
    handle: dict[str, JSON] | None
    """The vendor's job id and whatever collecting needs; never a key."""
    resubmitted: str | None
    submitted: NotRequired[float | None]
    """When the vendor took the job (wall clock): its first poll waits one poll interval from here.
    Absent in files written before it was kept: the job is then polled at once."""


Status = Literal["scored", "failed"]


class ScoreLine(TypedDict):
    """A line of `scores.jsonl` (one per selected document, in manifest order) and a row of
    `scores.parquet`. A scored line holds `oeb.score`'s metrics and counts; a failed one, `error`."""

    id: str
    status: Status
    row: dict[str, str | None]
    """The manifest row's `suite`."""
    scorer: NotRequired[str]
    """The digest of the scorer's code that graded the line (what the grading cache keys on)."""
    error: NotRequired[str]
    accuracy: NotRequired[float]
    precision: NotRequired[float]
    recall: NotRequired[float]
    f1: NotRequired[float]
    total: NotRequired[int]
    matched: NotRequired[int]
    misread: NotRequired[int]
    unfound: NotRequired[int]
    fabricated: NotRequired[int]
    invented_item: NotRequired[int]
    invented_field: NotRequired[int]
    asserted: NotRequired[int]
    addresses_found: NotRequired[float]
    addresses_read_right: NotRequired[float]
    gold_rows: NotRequired[int]
    pred_rows: NotRequired[int]
    matched_rows: NotRequired[int]
    matching_exact: NotRequired[bool]
    approximated: NotRequired[list[JSON]]
    skipped_open_maps: NotRequired[list[JSON]]


class Means(TypedDict):
    """Per-document means over the scored documents of a run or of one suite."""

    rows: int
    accuracy: float
    precision: float
    recall: float
    misread_rate: float
    unfound_rate: float
    fabricated_rate: float
    invented_item_rate: float
    invented_field_rate: float


class Scored(Means):
    """`summary.json`'s `scored` block: the means over scored documents, overall and per suite."""

    headline: float
    headline_is: str
    per_suite: dict[str, Means]


class GitState(TypedDict):
    """The oeb checkout a grading ran from."""

    commit: str
    dirty: bool


class Provenance(TypedDict):
    """What stands behind a grading's numbers: which oeb and scorer, on what, from which data."""

    oeb: str
    scorer: str
    """The scorer digest, as on every score line."""
    git: GitState | None
    """None when oeb was installed from a wheel rather than run from a checkout."""
    python: str
    packages: dict[str, str]
    platform: str
    dataset: str
    dataset_commit: str | None
    manifest: str
    manifest_sha256: str | None
    graded_at: str


class Summary(TypedDict):
    """`field_matching/summary.json`: the run's headline (mean accuracy of the scored documents times
    coverage; a failed document counts 0), the means behind it, and its provenance."""

    scorer: str
    options: dict[str, JSON]
    run: str
    headline: float
    headline_is: str
    rows: int
    failed: int
    coverage: float
    scored: Scored | None
    """None when no document was scored."""
    partial: NotRequired[dict[str, JSON]]
    """Graded with `--partial`: how many documents had no answer or were not scored."""
    provenance: NotRequired[Provenance]


class VerdictLine(TypedDict):
    """A line of `details/<id>.jsonl`: one address's verdict (`oeb.Verdict` as JSON)."""

    address: list[list[JSON]]
    """The address as `[kind, name]` steps: `["k", "lines"]`, `["i", 2]`, `["i", "p1"]`."""
    gold_raw: JSON
    pred_raw: JSON
    gold_canon: str | None
    pred_canon: str | None
    result: str


class DocumentEntry(TypedDict):
    """An entry of `field_matching/documents.json`: where the document is in the dataset, its size, and
    (for a priced run) its page count; `pages` null when the PDF could not be read."""

    doc_path: str
    bytes: int | None
    pages: NotRequired[int | None]


__all__ = [
    "JSON",
    "CostInfo",
    "DocumentEntry",
    "ErrorInfo",
    "GitState",
    "JobFile",
    "Means",
    "Provenance",
    "QuestionIdentity",
    "Record",
    "RecordCost",
    "SavedFailure",
    "ScoreLine",
    "Scored",
    "Settings",
    "Status",
    "Summary",
    "VerdictLine",
]
