"""A batch before its create is answered: the intent written first (`new`), and the lookup of a
batch whose create answer was lost (`look_up`) in the provider's list, by the intent's tag."""

from __future__ import annotations

import math
import time
from typing import Any

from oeb.batch import files
from oeb.errors import RunStopped
from oeb.systems import Adapter, Asking, Deadline, SystemFailed, stop_if_fatal
from oeb.systems.batches import Batches


def new(provider: str, size: int, requests: list[tuple[str, str, Asking, float | None]]) -> files.BatchFile:
    """The intent of a batch of (custom id, document, asking, worst case) requests: its file with no
    handle, its tag its name (unique), its worst case counted against the budget from now on."""
    worsts = [worst for *_, worst in requests]
    name = files.new_name()
    return {
        "name": name,
        "provider": provider,
        "handle": {},
        "tag": name,
        "sent": time.time(),
        "requests": len(requests),
        "bytes": size,
        "worst_usd": None if None in worsts else round(math.fsum(w or 0.0 for w in worsts), 6),
        "documents": {cid: {"doc_id": doc_id, "asking": asking.to_json()} for cid, doc_id, asking, _ in requests},
    }


def look_up(
    adapter: Adapter,
    batches: Batches,
    sent: files.BatchFile,
    lost: SystemFailed | None,
    known: frozenset[str],
    deadline: Deadline,
) -> dict[str, Any] | None:
    """The handle of the batch an unanswered create may have made (none of the run's `known` ones), or
    None when the provider holds none; a lookup that fails stops the system with the intent kept (a
    resume looks again)."""
    try:
        return batches.find(sent["tag"], sent["requests"], sent["sent"], known, deadline)
    except SystemFailed as failure:
        stop_if_fatal(adapter, failure)
        why = f"the answer to its create was lost ({lost.message[:200]}); " if lost is not None else ""
        raise RunStopped(
            f"{adapter.label}: batch {sent['tag']} of {sent['requests']} requests may have been accepted: "
            f"{why}the provider's batch list could not be read ({failure.message[:300]}). It is kept in the run "
            "folder, its worst case counted against the budget; resume once the provider answers, and it is "
            "looked up before anything is sent again"
        ) from None
