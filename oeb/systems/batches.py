"""What a system that sells batches offers the run engine (`Adapter.batching`): send many documents
as one batch, poll it, read its answers back by custom id. Plain calls with no scheduling in them;
the engine decides when to send, what fits the budget and what to write down (`oeb.batch`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

from oeb.systems.calls import Call, Deadline
from oeb.systems.errors import SystemFailed
from oeb.systems.providers import BatchLimits, BatchStatus


class Batches(Protocol):
    """A system's batch endpoint. Handles are plain JSON holding the provider's batch id under
    `batch_id`; a failure in `results` with a transient status (429, 5xx: expired, cancelled,
    overloaded) means the document is to be sent again in a later batch."""

    @property
    def provider(self) -> str: ...

    @property
    def limits(self) -> BatchLimits: ...

    @property
    def discount(self) -> float: ...

    @property
    def priced(self) -> bool:
        """Whether a request's worst case can be priced (`worst_usd` is not None)."""
        ...

    def custom_id(self, doc_id: str) -> str | None:
        """The document id itself when the provider's rules allow it as a custom id, else None."""
        ...

    def entry(self, custom_id: str, document: Path, schema: dict[str, Any]) -> dict[str, Any]: ...

    def worst_usd(self, pages: int | None, document: Path, schema: dict[str, Any]) -> float | None:
        """The most one request may cost at the batch price: its input tokens from the PDF's pages
        (from the file's size when they cannot be counted) and the prompt, and its full output cap;
        None when the price is unknown."""
        ...

    def create(self, entries: list[dict[str, Any]], tag: str, deadline: Deadline) -> dict[str, Any]:
        """Send a batch marked with `tag` (unique) where the provider keeps a mark; its handle."""
        ...

    def find(
        self, tag: str, requests: int, since: float, known: frozenset[str], deadline: Deadline
    ) -> dict[str, Any] | None:
        """The handle of the batch sent with `tag` (`requests` requests, sent from `since` on) whose
        create answer was lost, or None when the provider holds none (batches of `known` ids, the run's
        others, excluded); `SystemFailed` when it cannot say."""
        ...

    def status(self, handle: dict[str, Any], deadline: Deadline) -> BatchStatus: ...

    def results(self, handle: dict[str, Any], deadline: Deadline) -> dict[str, Call | SystemFailed]:
        """Each answered request as the synchronous path returns it (priced at the batch rate), or
        its failure."""
        ...
