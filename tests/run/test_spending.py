"""The estimate a plan shows against the budget (from a published price and the sample's real page
counts), and the run's accounting: a document never starts when it could pass the budget, the
overshoot is bounded by the documents in flight, dollars and credits never mix."""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import ClassVar

from hypothesis import given, settings
from hypothesis import strategies as st

from oeb.dataset import SAMPLE_DATASET, open_dataset
from oeb.run.plan.config import SpendLimit
from oeb.run.plan.spending import Estimate, Spending, estimate
from oeb.systems import Price
from oeb.systems.mock import Mock


@dataclass(frozen=True)
class PerPage(Mock):
    """mock with a per-page dollar price and a per-document credit price."""

    def published_price(self) -> Price | None:
        return Price(usd_per_page=0.01, credits_per_document=3.0, source="https://vendor.example/pricing")


@dataclass(frozen=True)
class Unpriced(Mock):
    name: ClassVar[str] = "unpriced"

    def published_price(self) -> Price | None:
        return None


SAMPLE = open_dataset(SAMPLE_DATASET)
PAGES = 16
"""The sample's 12 documents hold 16 pages (one of 3, two of 2, nine of 1)."""


def test_the_estimate_is_the_price_times_the_pages_per_unit() -> None:
    found = estimate(PerPage(), SAMPLE, SAMPLE.rows)
    assert found.total("usd") == PAGES * 0.01 and found.total("credits") == 12 * 3.0
    lines = found.lines(SpendLimit(usd=1.0))
    assert lines[0] == "estimate: about $0.16 for 12 documents, at https://vendor.example/pricing"
    assert lines[1] == "estimate: about 36 credits for 12 documents, at https://vendor.example/pricing"
    assert lines[2] == "budget $1.00: covers every selected document"


def test_a_budget_that_covers_part_says_about_how_many_and_that_the_run_stops_there() -> None:
    found = estimate(PerPage(), SAMPLE, SAMPLE.rows)
    assert found.lines(SpendLimit(credits=20.0))[-1] == (
        "budget 20 credits: covers about 6 of 12 documents; the run will stop there"
    )
    assert found.lines(SpendLimit(credits=20.0), spent={"usd": 1.0, "credits": 11.0})[-1] == (
        "budget 20 credits (11 credits spent already): covers about 3 of 12 documents; the run will stop there"
    )
    pages = [SAMPLE.page_counts(SAMPLE.rows)[row.doc_id] for row in SAMPLE.rows]
    covered = found.covers("usd", 0.07)
    assert sum(pages[:covered]) * 0.01 <= 0.07 < sum(pages[: covered + 1]) * 0.01


def test_mock_is_priced_by_its_usd_option_per_document() -> None:
    found = estimate(Mock(usd=0.5), SAMPLE, SAMPLE.rows[:4])
    assert found.lines(SpendLimit(usd=1.0)) == [
        "estimate: about $2.00 for 4 documents, at mock's usd option",
        "budget $1.00: covers about 2 of 4 documents; the run will stop there",
    ]


def test_without_a_price_or_a_page_count_the_estimate_says_unknown() -> None:
    assert estimate(Unpriced(), SAMPLE, SAMPLE.rows).lines(SpendLimit(usd=5.0)) == [
        "estimate: unknown (unpriced has no published price in oeb)",
        "budget $5.00: the cost is unknown until answers come back; at most the documents in flight are "
        "started before the first cost is known, and the run stops starting documents at the budget",
    ]
    partial = Estimate("x", 3, {"usd": (1.0, None, 1.0)}, "note")
    assert partial.lines(SpendLimit())[0] == (
        "estimate: about $2.00 for 2 of 3 documents, 1 of unknown cost (pages not countable), at note"
    )
    assert partial.covers("usd", 2.5) == 2  # the unknown one counted at the mean


def _record(usd: float | None = None, credits: float | None = None) -> dict:
    return {"error": None, "cost": {"usd": usd, "credits": credits, "wall_s": 1.0, "attempts": 1}}


def test_before_any_answer_the_estimate_decides_and_then_the_mean_so_far() -> None:
    spending = Spending(SpendLimit(usd=1.0), Estimate("x", 10, {"usd": (0.25,) * 10}), max_in_flight=8)
    assert spending.may_start(3) and not spending.may_start(4)  # 5 x 0.25 would pass 1.00
    spending.add(_record(usd=0.1))
    assert spending.may_start(8) and not spending.may_start(9)  # 0.1 + 10 x 0.1 would pass it
    assert spending.spent == {"usd": 0.1, "credits": None}
    assert spending.line(in_flight=2) == "spent $0.10 (+ about $0.20 in flight) of the $1.00 budget"


def test_of_unknown_cost_at_most_max_in_flight_documents_start() -> None:
    spending = Spending(SpendLimit(credits=100.0), Estimate("x", 10), max_in_flight=3)
    assert spending.may_start(2) and not spending.may_start(3)
    for _ in range(3):
        spending.add(_record(usd=1.0))  # dollars say nothing of credits
    assert spending.reached
    assert spending.line() == (
        "spent $3.00; spent an unknown amount of the 100 credits budget (3 answers gave no cost in credits)"
    )


def test_dollars_and_credits_are_kept_apart() -> None:
    spending = Spending(SpendLimit(usd=10.0), Estimate("x", 10), max_in_flight=2)
    spending.add(_record(usd=1.0, credits=500.0))
    assert spending.spent == {"usd": 1.0, "credits": 500.0} and spending.may_start(8) and not spending.may_start(9)
    assert not Spending(SpendLimit(), Estimate("x", 1), 1).reached


def _run(costs: list[float], limit: SpendLimit, estimated: Estimate, in_flight: int, seed: int) -> tuple:
    """A driver: start documents while allowed, answer a random one in flight, until done or reached.
    Returns the spend, the documents answered, and the most unanswered cost when the budget was reached."""
    spending = Spending(limit, estimated, in_flight)
    order = random.Random(seed)
    waiting, flying, answered = list(costs), [], 0
    while waiting or flying:
        while waiting and len(flying) < in_flight and spending.may_start(len(flying)):
            flying.append(waiting.pop(0))
        if not flying:
            assert spending.reached  # the run stops only at the budget
            break
        spending.add(_record(usd=flying.pop(order.randrange(len(flying)))))
        answered += 1
    return spending.recorded["usd"], answered


@settings(max_examples=300, deadline=None)
@given(
    cost=st.floats(0.01, 5.0),
    documents=st.integers(1, 60),
    budget=st.floats(0.0, 100.0),
    in_flight=st.integers(1, 10),
    seed=st.integers(0, 1000),
)
def test_with_the_cost_the_estimate_says_the_budget_is_never_passed(cost, documents, budget, in_flight, seed) -> None:
    estimated = Estimate("x", documents, {"usd": (cost,) * documents})
    spent, answered = _run([cost] * documents, SpendLimit(usd=budget), estimated, in_flight, seed)
    assert spent <= budget + 1e-9
    assert answered == min(documents, int(budget / cost + 1e-9))  # and it stops no sooner than it must


@settings(max_examples=300, deadline=None)
@given(
    costs=st.lists(st.floats(0.0, 5.0), min_size=1, max_size=60),
    budget=st.floats(0.0, 100.0),
    in_flight=st.integers(1, 10),
    priced=st.booleans(),
    seed=st.integers(0, 1000),
)
def test_the_overshoot_is_bounded_by_the_documents_in_flight(costs, budget, in_flight, priced, seed) -> None:
    guess = Estimate("x", len(costs), {"usd": (1.0,) * len(costs)} if priced else {})
    spent, answered = _run(costs, SpendLimit(usd=budget), guess, in_flight, seed)
    assert spent <= budget + in_flight * max(costs) + 1e-9
    if not priced:
        assert answered >= min(len(costs), in_flight)  # the first wave of unknown cost runs
