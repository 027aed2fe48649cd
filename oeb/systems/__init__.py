"""Systems: the adapter contract, the vendors, the offline `mock` and `replay`, and the registry.

The run engine needs only this front door:

    adapter = oeb.systems.get("datalab", {"mode": "accurate"})
    question = Question(Path("doc.pdf"), question_schema(stored_schema))
    record = oeb.systems.predict(adapter, question, timeout=1800.0)

`predict` returns the document's record (HARNESS.md 3.5) and raises a `RunStopped` when the whole run
must stop; `predict_attempt` makes one attempt and hands a transient failure back as a `Retry`, for
a caller that schedules retries itself. Nothing here knows how or where it is scheduled.
"""

from oeb.systems.asking import Asking, Retry, predict, predict_attempt, reread
from oeb.systems.base import Adapter, Budget, Call, Cost, Question, RetryPolicy
from oeb.systems.errors import (
    TRANSIENT_STATUSES,
    AccountFailure,
    ConnectionRefused,
    DialectError,
    MissingKey,
    OptionError,
    PluginError,
    ReadCrashed,
    RunStopped,
    SystemFailed,
    SystemTimeout,
    SystemUnreachable,
    UnknownSystem,
    Unreadable,
)
from oeb.systems.registry import ENTRY_POINT_GROUP, adapter_class, get, names
from oeb.systems.schema import question_schema

__all__ = [
    "ENTRY_POINT_GROUP",
    "TRANSIENT_STATUSES",
    "AccountFailure",
    "Adapter",
    "Asking",
    "Budget",
    "Call",
    "ConnectionRefused",
    "Cost",
    "DialectError",
    "MissingKey",
    "OptionError",
    "PluginError",
    "Question",
    "ReadCrashed",
    "Retry",
    "RetryPolicy",
    "RunStopped",
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
    "question_schema",
    "reread",
]
