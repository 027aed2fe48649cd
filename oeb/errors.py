"""The one hierarchy of errors oeb reports to its users, and the exit code of each.

Every class says when it is raised. The message of an `OebError` is the single line a user sees:
it names what is wrong and how to fix it. The CLI prints it as `oeb <command>: <message>` and
exits with the class's `exit_code`; anything that is not an `OebError` is a bug and keeps its
traceback. The exit codes are documented for users in docs/exit-codes.md.

    OebError                            exit 1: a user error (input, environment), never a bug
    ├── UsageError                      exit 2: the command line itself is wrong
    ├── InputFileError                  a file named on the command line
    ├── ScoreArgumentError (TypeError)  score() refusals, typed as the reference raises them
    ├── ScoreOptionError (ValueError)
    ├── SchemaError (ValueError)
    ├── DocumentTooDeep (ValueError)
    ├── StorageError                    oeb.storage: a URL that cannot be read, written or listed
    │   ├── StorageURLError (ValueError)
    │   ├── StorageNotFoundError (FileNotFoundError)
    │   ├── StorageAccessError
    │   │   └── StorageOutage               going on cannot help until storage is back
    │   │       ├── StorageDown             transient faults past storage.retry_s (oeb._retry)
    │   │       ├── LockExpired             an s3:// lock not renewed for its stale limit
    │   │       └── DiskFull                a local disk full or read-only
    │   └── StorageFormatError (ValueError)
    ├── DatasetError                    oeb.dataset: a dataset that cannot be run or checked
    │   ├── DatasetRefused              exit 2: a run folder's dataset URL, not opened on its word
    │   ├── DatasetNotFoundError
    │   ├── HubError
    │   ├── ManifestError
    │   ├── DocumentMissingError
    │   ├── GoldError
    │   └── NoGold                      exit 2: a gold-less dataset graded or reported (no gold yet)
    ├── ConfigError                     a run config or a --set
    ├── SelectionError                  the config's rows
    ├── PlanDeclined                    the user said no to the plan; nothing written
    ├── RunFolderError                  a folder a command cannot use
    │   ├── RunLocked                   another live command writes it
    │   ├── LockLost                    this command lost its s3:// lock
    │   ├── ResumeMismatch              a resume would ask another question
    │   └── UnfinishedRun               grading without --partial
    ├── GradingError                    the scorer refused a gold or schema
    ├── RayUnavailable
    ├── RunStopped                      exit 1: going on cannot help; saved, `oeb resume` once fixed
    │   ├── AccountFailure (PermissionError)     ┐
    │   ├── ConnectionRefused (ConnectionError)  │ oeb.systems.errors: a system stops
    │   ├── MissingKey                           │
    │   ├── ReadCrashed                          ┘
    │   └── StorageStopped          exit 75: storage down or disk full; answers spilled, `oeb resume`
    ├── QualityGateFailed               exit 3: oeb compare --fail-if-worse, oeb report --fail-under
    │   └── NotReproduced               oeb reproduce: the published score did not hold
    ├── BudgetReached                   exit 4: the run stopped starting documents at its budget
    ├── NothingAnswered                 exit 5: every document failed: a broken set-up
    ├── Interrupted                     exit 130: Ctrl-C
    │   └── Terminated                  exit 143: SIGTERM (ray job stop, a pod's deletion, timeout)
    ├── ReportError                     a folder report, compare or audit cannot read
    │   ├── ReportMismatch              runs whose numbers are not comparable
    │   └── ViewNotFound                oeb view: a run, document or page it does not hold (HTTP 404)
    │       └── PageTooLarge            a page whose bitmap would be too large to render
    ├── AdjudicationError               exit 2: an adjudication file or decision that cannot be used
    │   ├── StaleDecision               oeb view --review: the entry changed since the page loaded it
    │   └── WriteRefused                oeb view --review: a write without the token or from another origin
    ├── PublishError                    oeb publish: a destination it cannot write, runs it cannot add
    │   └── SecretFound                 a secret or local path in a file to publish; nothing uploaded
    ├── UnknownSystem (ValueError)      ┐ oeb.systems.errors: refused before any call
    ├── OptionError (ValueError)        │
    ├── PluginError                     ┘
    ├── NotStarted                      oeb.systems.errors: its system stopped before its paid request
    └── SystemFailed                    oeb.systems.errors: one document's failure, kept in its record
        │                               (retried inside its time limit when its status is transient)
        ├── SystemTimeout               ┐
        ├── SystemUnreachable           │ never retried
        ├── Unreadable                  │
        ├── DialectError                │
        ├── JobLost                     ┘ submitted again at once, recorded as `resubmitted`
        └── Unusable                    oeb.systems.errors: an LLM answer that is no JSON object (asked again)

A run of several systems exits with the highest-priority code among them: 1, then 75, then 5, then 4, then 0.
"""

from __future__ import annotations


class OebError(Exception):
    """Base class: a problem with the user's input or environment, not a bug in oeb."""

    exit_code: int = 1


class UsageError(OebError):
    """The command line itself is wrong (a missing or conflicting flag)."""

    exit_code = 2


class InputFileError(OebError):
    """A file named by the user is missing, unreadable, not JSON or not the JSON it should be."""


class ScoreArgumentError(OebError, TypeError):
    """`score()` got an argument of the wrong type (a prediction that is a list, no schema, ...).

    It is a `TypeError` because the reference scorer raises `TypeError` for these inputs.
    """


class ScoreOptionError(OebError, ValueError):
    """`score()` got an option value that cannot apply (an unknown `order_matters` array name)."""


class DocumentTooDeep(OebError, ValueError):
    """A prediction, gold or schema nests deeper than Python's recursion allows oeb to walk."""


class SchemaError(OebError, ValueError):
    """A JSON Schema cannot be used for scoring (an unresolvable or external `$ref`)."""


class StorageError(OebError):
    """Base of the errors of `oeb.storage`: a URL could not be read, written or listed."""


class StorageURLError(StorageError, ValueError):
    """A URL names no storage oeb can use: an unknown protocol, or a write to a read-only one (`hf://`)."""


class StorageNotFoundError(StorageError, FileNotFoundError):
    """A URL names a file or folder that does not exist."""


class StorageAccessError(StorageError):
    """The storage behind a URL refused or could not be reached (credentials, permissions, endpoint)."""


class StorageOutage(StorageAccessError):
    """Storage cannot be used now, and trying again at once cannot help: a run stops as on Ctrl-C,
    keeping in a spill folder what it could not save (docs/storage.md)."""


class StorageDown(StorageOutage):
    """A storage call kept meeting transient faults (throttling, 5xx, resets, timeouts) for longer
    than `storage.retry_s` (`oeb._retry`)."""


class LockExpired(StorageOutage):
    """The process could not renew its s3:// run folder lock for the lock's staleness limit (storage
    unreachable): another process may have taken the folder over, so this one stops saving as on a
    storage outage (exit 75, unsaved answers in the spill folder, `oeb resume` later)."""


class DiskFull(StorageOutage):
    """A local disk is full (ENOSPC, a quota) or read-only (EROFS): waiting frees no space."""


class StorageFormatError(StorageError, ValueError):
    """A file exists but is not the JSON, JSONL or parquet it should be."""


class DatasetError(OebError):
    """Base of the errors of `oeb.dataset`: a dataset cannot be used for a run or a check."""


class DatasetNotFoundError(DatasetError):
    """The dataset URL names no folder, or the Hub shows no such dataset (docs/datasets.md, checks 2 and 3)."""


class HubError(DatasetError):
    """An `hf://` address is malformed, or the Hub cannot give the revision or file a run needs (docs/datasets.md)."""


class ManifestError(DatasetError):
    """The manifest cannot be used: its path, file, columns or one of its rows (docs/datasets.md, checks 1 and 4-9)."""


class DatasetRefused(DatasetError):
    """A run folder names a dataset oeb will not open on its word: a URL to fetch (http, https, any
    scheme but s3:// and hf://), which only the user may name (`--dataset`). A folder is data from
    strangers: it must not choose what oeb fetches."""

    exit_code = 2


class DocumentMissingError(DatasetError):
    """Manifest rows name document files that do not exist (docs/datasets.md, check 10)."""


class GoldError(DatasetError):
    """A row's gold file is missing, not JSON, or not a JSON object (docs/datasets.md, check 11)."""


class NoGold(DatasetError):
    """A gold-less dataset (`oeb dataset init`) is asked for gold: grading and reports wait for a
    drafted gold (`oeb gold draft`, docs/own-documents.md)."""

    exit_code = 2


class ConfigError(OebError):
    """A run config cannot be used: no file, not YAML, a missing, unknown or ill-typed key, or a
    `--set` that names no key of the config (docs/running.md)."""


class SelectionError(OebError):
    """The config's `rows` select nothing, name ids the dataset lacks, or mix `sample` and `limit` (docs/running.md)."""


class PlanDeclined(OebError):
    """The user answered no (or nothing) to the plan's question; nothing was written."""


class RunFolderError(OebError):
    """A folder is not a run folder the command can use: no config.yaml or settings.json, no
    `predictions/`, a corrupt settings.json, or a run made with another dataset."""


class RunLocked(RunFolderError):
    """Another live process (`oeb run`, `oeb resume`, `oeb grade`) holds the run folder's lock: two
    writers would ask and pay for documents twice and interleave their files."""


class LockLost(RunFolderError):
    """The process held an s3:// run folder's lock but stalled past its staleness limit and another
    process took the lock over: it stops writing."""


class ResumeMismatch(RunFolderError):
    """A resume would ask another question than the run did (system, options, dataset, its commit,
    manifest or rows), which would mix two runs in one folder."""


class UnfinishedRun(RunFolderError):
    """Grading was asked for a run with documents never predicted, without `--partial`."""


class GradingError(OebError):
    """The scorer refused a document's gold or schema (a gold that contradicts its schema)."""


class RunStopped(OebError):
    """Going on with the run cannot help (account, refused connection, missing key, a crashed reader,
    a bug): what was paid for is saved, and the run continues with `oeb resume` once the cause is
    fixed. Systems raise its subclasses (`oeb.systems.errors`); the engine raises it with the count."""


class StorageStopped(RunStopped):
    """A run stopped because its storage was down past `storage.retry_s`, or its disk full or
    read-only: what was saved is kept, answers that could not be saved are in the spill folder the
    message names, and `oeb resume` imports them once storage is back (docs/storage.md). Its own
    exit code (EX_TEMPFAIL of sysexits.h) tells a script that waiting and resuming is the fix."""

    exit_code = 75


class BudgetReached(OebError):
    """A run reached its budget (`budget.usd` or `budget.credits`): it stopped starting documents and
    collected those in flight; `oeb resume` with a larger budget asks the rest."""

    exit_code = 4


class NothingAnswered(OebError):
    """A run ended with every document failed: a broken set-up (a key, an endpoint, an option), not a
    result. Raised after grading, naming the most common error and its count."""

    exit_code = 5


class RayUnavailable(OebError):
    """Ray could not be started, or the cluster named by `ray.address` could not be reached."""


class Interrupted(OebError):
    """The user pressed Ctrl-C during a run: documents already answered are saved, the rest are
    left for `oeb resume`."""

    exit_code = 130


class Terminated(Interrupted):
    """The process was sent SIGTERM during a run (`ray job stop`, a pod deleted, `timeout`, a CI job
    cancelled): it stops as on Ctrl-C, with the exit code a shell gives a process SIGTERM stopped."""

    exit_code = 143


class ReportError(OebError):
    """A folder given to `oeb report`, `oeb compare` or `oeb audit` is not a graded folder (no
    field_matching/scores.jsonl), or the same system setting is given twice."""


class ReportMismatch(ReportError):
    """Runs given to one report were made on different datasets, manifests, dataset commits or
    document sets, or graded by different scorers: their numbers are not comparable, so they are never
    put in one table (scorers: unless `--mixed-scorers`)."""


class ViewNotFound(ReportError):
    """`oeb view` was asked for a run label, document or page its runs do not hold; its server answers
    404 with this one line (a command line never sees it)."""


class PageTooLarge(ViewNotFound):
    """A document page `oeb view` will not render: its bitmap would take more memory than any real
    page does (a hostile page size)."""


class QualityGateFailed(OebError):
    """A CI gate failed after its output was written: `oeb compare --fail-if-worse` found B significantly
    worse than A, or `oeb report --fail-under` found a headline below the bar."""

    exit_code = 3


class NotReproduced(QualityGateFailed):
    """`oeb reproduce` ran a published row again and the 95% interval of the paired difference excludes
    0 (or leaves `--margin`): the published score did not hold. Raised after the comparison is printed."""


class PublishError(OebError):
    """`oeb publish` cannot publish: a destination that is not an `hf://datasets/...` or writable URL,
    a Hub dataset that does not exist or refuses the token, or runs of another dataset than the ones
    already published there."""


class SecretFound(PublishError):
    """A file `oeb publish` would upload holds a key's value, a key-shaped string or a local path:
    refused before anything is uploaded."""


class AdjudicationError(OebError):
    """An adjudication file (docs/adjudication.md) that cannot be used: a YAML error, an entry naming an
    unknown document or address, a value its schema refuses, two accepted entries on one address, a
    file of another dataset commit, a decision without its reason, an unknown id. Nothing is graded
    and nothing saved is changed."""

    exit_code = 2


class StaleDecision(AdjudicationError):
    """A decision on an entry that changed in the file since the reviewer's page loaded it: refused so
    that two reviewers never overwrite each other."""


class WriteRefused(AdjudicationError):
    """A write to `oeb view`'s review page without the server's token, or from another origin (HTTP
    403): nothing is written."""
