"""What a run will cost and what it has spent, against its budget (docs/money.md).

The plan shows `estimate`: the system's published price (per page or per document, kept on its
adapter: `Adapter.published_price`) times the selected documents' page counts, per unit; "unknown" where the
system publishes no price or a document's pages cannot be counted. During the run `Spending` keeps
the budget: a document starts only when what the records cost so far, plus every document in flight
and this one at the mean cost so far (before any answer: the estimate's mean, and with no estimate
at most `max_in_flight` documents of unknown cost), stays within the budget. Dollars and credits are
kept apart, never converted. The overshoot is bounded by the documents in flight when the budget was
reached: each of them may cost more than the mean.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from oeb.dataset import Dataset, Row
from oeb.run.plan.config import BUDGET_KEYS, SpendLimit
from oeb.systems import Adapter, Price

UNITS = BUDGET_KEYS
"""`usd` and `credits`: the units of a budget, of a price and of a record's `cost`."""


def _money(unit: str, amount: float) -> str:
    return f"${amount:,.2f}" if unit == "usd" else f"{amount:,.6g} credits"


def _limit(limit: SpendLimit, unit: str) -> float | None:
    return limit.usd if unit == "usd" else limit.credits


@dataclass(frozen=True)
class Estimate:
    """The estimated cost of each selected document, in run order, per unit: a unit the price does
    not give is absent from `costs`; a document whose cost in a priced unit cannot be known (pages
    not countable) is None there."""

    system: str
    documents: int
    costs: dict[str, tuple[float | None, ...]] = field(default_factory=dict)
    source: str | None = None

    def total(self, unit: str) -> float | None:
        """The sum over the documents whose cost is known (None: the unit is not priced)."""
        if unit not in self.costs:
            return None
        return math.fsum(cost for cost in self.costs[unit] if cost is not None)

    def priced(self, unit: str) -> int:
        """How many documents have a known cost in `unit`."""
        return sum(cost is not None for cost in self.costs.get(unit, ()))

    def mean(self, unit: str) -> float | None:
        """The mean cost of a document whose cost is known (None when none is)."""
        total, priced = self.total(unit), self.priced(unit)
        return None if total is None or not priced else total / priced

    def covers(self, unit: str, budget: float) -> int | None:
        """How many documents, taken in run order, the budget pays for (a document of unknown cost
        counted at the mean); None when nothing in `unit` is priced."""
        mean = self.mean(unit)
        if mean is None:
            return None
        spent = 0.0
        for count, cost in enumerate(self.costs[unit]):
            spent += mean if cost is None else cost
            if _over(spent, budget):
                return count
        return self.documents

    def lines(self, limit: SpendLimit, spent: dict[str, float | None] | None = None) -> list[str]:
        """The plan's lines: the estimate per unit, and what each budget covers (on a resume, what is
        left of it once the records already saved, `spent` per unit, are paid)."""
        lines = []
        for unit in UNITS:
            total = self.total(unit)
            if total is None:
                continue
            unknown = self.documents - self.priced(unit)
            some = f"{self.priced(unit)} of {self.documents} documents, {unknown} of unknown cost (pages not countable)"
            counted = some if unknown else f"{self.documents} documents"
            lines.append(f"estimate: about {_money(unit, total)} for {counted}, at {self.source}")
        if not lines:
            lines.append(f"estimate: unknown ({self.system} has no published price in oeb)")
        for unit in UNITS:
            budget = _limit(limit, unit)
            if budget is not None:
                lines.append(self._budget_line(unit, budget, (spent or {}).get(unit) or 0.0))
        return lines

    def _budget_line(self, unit: str, budget: float, spent: float) -> str:
        said = f"budget {_money(unit, budget)}" + (f" ({_money(unit, spent)} spent already)" if spent else "")
        covered = self.covers(unit, budget - spent)
        if covered is None:
            return (
                f"{said}: the cost is unknown until answers come back; at most the documents in flight are "
                "started before the first cost is known, and the run stops starting documents at the budget"
            )
        if covered >= self.documents:
            return f"{said}: covers every selected document"
        return f"{said}: covers about {covered} of {self.documents} documents; the run will stop there"


def estimate(adapter: Adapter, dataset: Dataset, rows: Sequence[Row]) -> Estimate:
    """The cost of asking `adapter` about `rows`, from its published price (None: unknown). Pages are
    counted only when the price is per page."""
    price: Price | None = adapter.published_price()
    if price is None:
        return Estimate(adapter.name, len(rows))
    per_page = any(getattr(price, f"{unit}_per_page") is not None for unit in UNITS)
    pages = dataset.page_counts(rows) if per_page else {}
    costs = {}
    for unit in UNITS:
        page, document = getattr(price, f"{unit}_per_page"), getattr(price, f"{unit}_per_document")
        if page is None and document is None:
            continue
        costs[unit] = tuple(_document_cost(page, document, pages.get(row.doc_id)) for row in rows)
    return Estimate(adapter.name, len(rows), costs, price.source)


def _over(amount: float, budget: float) -> bool:
    """Whether `amount` passes `budget` by more than a sum's rounding (ten documents of $0.10 fit $1)."""
    return amount > budget and not math.isclose(amount, budget, rel_tol=1e-9)


def _document_cost(page: float | None, document: float | None, pages: int | None) -> float | None:
    if page is not None and pages is None:
        return None
    return (document or 0.0) + (page or 0.0) * (pages or 0)


class Spending:
    """The run's spend against its budget, fed every saved record (`add`), asked before every start
    (`may_start`). Reused answers are not added: they cost nothing now."""

    def __init__(self, limit: SpendLimit, estimate: Estimate, max_in_flight: int) -> None:
        self.limit = limit
        self.estimate = estimate
        self.max_in_flight = max(1, max_in_flight)
        self.recorded = dict.fromkeys(UNITS, 0.0)
        self.costed = dict.fromkeys(UNITS, 0)
        """Records that gave a figure in the unit (the mean is over them)."""
        self.records = 0

    def add(self, record: dict[str, Any]) -> None:
        """Count a saved record's cost (a failure's too: failed attempts may be billed)."""
        self.records += 1
        cost = record.get("cost") or {}
        for unit in UNITS:
            amount = cost.get(unit)
            if isinstance(amount, int | float) and not isinstance(amount, bool):
                self.recorded[unit] += amount
                self.costed[unit] += 1

    @property
    def spent(self) -> dict[str, float | None]:
        """What the records cost so far, per unit (None: no record gave a figure in it)."""
        return {unit: self.recorded[unit] if self.costed[unit] else None for unit in UNITS}

    def mean(self, unit: str) -> float | None:
        """The mean cost of a document so far; before any figure, the estimate's (None: unknown)."""
        if self.costed[unit]:
            return self.recorded[unit] / self.costed[unit]
        return self.estimate.mean(unit)

    def may_start(self, in_flight: int) -> bool:
        """Whether one more document may start with `in_flight` documents unanswered: in every unit with
        a budget, the records' cost plus all of them at the mean stays within it; of unknown cost, at
        most `max_in_flight` documents are started before a figure comes back."""
        for unit in UNITS:
            budget = _limit(self.limit, unit)
            if budget is None:
                continue
            mean = self.mean(unit)
            if mean is None:
                if self.records + in_flight >= self.max_in_flight:
                    return False
            elif _over(self.recorded[unit] + (in_flight + 1) * mean, budget):
                return False
        return True

    @property
    def reached(self) -> bool:
        """Whether no further document may start even once every one in flight has answered."""
        return bool(self.limit) and not self.may_start(0)

    def line(self, in_flight: int = 0) -> str:
        """Spend against the budget, per unit, for the live view and the end of the run."""
        parts = []
        for unit in UNITS:
            budget, spent, mean = _limit(self.limit, unit), self.spent[unit], self.mean(unit)
            if budget is None and spent is None:
                continue
            said = "spent " + ("an unknown amount" if spent is None else _money(unit, spent))
            if in_flight and mean is not None:
                said += f" (+ about {_money(unit, in_flight * mean)} in flight)"
            if budget is not None:
                said += f" of the {_money(unit, budget)} budget"
            if spent is None and self.records:
                said += f" ({self.records} answers gave no cost in {unit})"
            parts.append(said)
        return "; ".join(parts) or "spent: no cost recorded"
