"""What a system costs: its published list price (`Price`, for the estimate before a run) and what
one call cost (`Cost`, read from each answer). Plain values at the bottom of `oeb.systems`: the
adapter contract (`base`), its errors and the provider batches all use them.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Price:
    """A system's published list price, per page or per document, in dollars or the vendor's credits,
    for estimating a run's cost before it starts. `source` says where the figure was published (or
    why it is an approximation); what a document really cost is read from each answer."""

    usd_per_page: float | None = None
    usd_per_document: float | None = None
    credits_per_page: float | None = None
    credits_per_document: float | None = None
    source: str = ""


@dataclass(frozen=True)
class Cost:
    """What one call cost, in the vendor's own units: dollars only when the vendor states a price,
    credits never converted. `source` names the response field a figure came from."""

    usd: float | None = None
    credits: float | None = None
    source: str | None = None
    tokens_in: int | None = None
    tokens_out: int | None = None

    def __add__(self, other: Cost) -> Cost:
        """Sum field by field; a field stays None when no part reported it."""

        def add[T: (int, float)](a: T | None, b: T | None) -> T | None:
            return b if a is None else a if b is None else a + b

        sources = sorted({s for s in (self.source, other.source) for s in (s or "").split(" + ") if s})
        usd = add(self.usd, other.usd)
        return Cost(
            usd=None if usd is None else round(usd, 6),
            credits=add(self.credits, other.credits),
            source=" + ".join(sources) or None,
            tokens_in=add(self.tokens_in, other.tokens_in),
            tokens_out=add(self.tokens_out, other.tokens_out),
        )

    @property
    def priced(self) -> bool:
        return self.usd is not None or self.credits is not None
