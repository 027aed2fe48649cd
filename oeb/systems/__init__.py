"""Systems: the adapter contract, the vendors, the offline `mock` and `replay`, and the registry.

The run engine needs only this front door:

    adapter = oeb.systems.get("datalab", {"mode": "accurate"})
    question = Question(Path("doc.pdf"), question_schema(stored_schema))
    record = oeb.systems.predict(adapter, question, timeout=1800.0)

`predict` returns the document's record (docs/running.md) and raises a `RunStopped` when the whole
run must stop; `predict_attempt` makes one step and hands a transient failure back as a `Retry` and a
job vendor's submitted job as `Submitted` (its handle, to write down and collect later), for a caller
that schedules retries and collects jobs itself. Nothing here knows how or where it is scheduled.
"""

from oeb.errors import RunStopped
from oeb.systems.asking import (
    Asking,
    Retry,
    Submitted,
    predict,
    predict_attempt,
    settle,
    stop_if_fatal,
)
from oeb.systems.base import Adapter, Call, Cost, Deadline, Price, Question, RetryPolicy
from oeb.systems.errors import (
    TRANSIENT_STATUSES,
    AccountFailure,
    ConnectionRefused,
    DialectError,
    JobLost,
    MissingKey,
    NotStarted,
    OptionError,
    PluginError,
    ReadCrashed,
    SystemFailed,
    SystemTimeout,
    SystemUnreachable,
    UnknownSystem,
    Unreadable,
)
from oeb.systems.records import question_identity, reread
from oeb.systems.registry import ENTRY_POINT_GROUP, adapter_class, get, names
from oeb.systems.schema import question_schema

__all__ = [
    "ENTRY_POINT_GROUP",
    "TRANSIENT_STATUSES",
    "AccountFailure",
    "Adapter",
    "Asking",
    "Call",
    "ConnectionRefused",
    "Cost",
    "Deadline",
    "DialectError",
    "JobLost",
    "MissingKey",
    "NotStarted",
    "OptionError",
    "PluginError",
    "Price",
    "Question",
    "ReadCrashed",
    "Retry",
    "RetryPolicy",
    "RunStopped",
    "Submitted",
    "SystemFailed",
    "SystemTimeout",
    "SystemUnreachable",
    "UnknownSystem",
    "Unreadable",
    "adapter_class",
    "get",
    "names",
    "predict",
    "predict_attempt",
    "question_identity",
    "question_schema",
    "reread",
    "settle",
    "stop_if_fatal",
]
