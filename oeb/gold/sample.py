"""`oeb adjudicate sample`: a seeded random sample of gold values, as `verify` entries for a person.

The population is every gold value of the dataset grading counts (each non-null, non-blank leaf, by
its printed address), in manifest order. `--by suite` allocates the sample to the suites in
proportion to their gold values (largest remainders), then draws within each suite, so every
suite's own error can be measured. The same dataset, size and seed give the same sample.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Sequence
from typing import Any

from oeb.dataset import Dataset
from oeb.errors import AdjudicationError
from oeb.gold.check import leaves
from oeb.gold.entries import Entry
from oeb.scoring import states_nothing

PREFIX = "verify-"
BY_SUITE = "verify-suite-"
"""Ids of entries drawn by suite start with this, so the report can give each suite its own rate."""

Value = tuple[str, str, str, Any]
"""A gold value: suite, document, address, value."""


def population(dataset: Dataset) -> list[Value]:
    """Every gold value grading counts, in manifest order, then address order within a document: an
    empty or blank string states nothing to the scorer (`states_nothing`), so it is never sampled."""
    found: list[Value] = []
    for row, gold in dataset.golds():
        found += [(row.suite, row.doc_id, a, value) for a, value in leaves(gold) if not states_nothing(value)]
    return found


def allocate(sizes: dict[str, int], n: int) -> dict[str, int]:
    """`n` shared in proportion to `sizes` by largest remainders (ties by name), never above a size."""
    total = sum(sizes.values())
    quotas = {name: n * size / total for name, size in sizes.items()} if total else {}
    shares = {name: min(int(quota), sizes[name]) for name, quota in quotas.items()}
    left = n - sum(shares.values())
    for name in sorted(quotas, key=lambda name: (-(quotas[name] - int(quotas[name])), name)):
        if left <= 0:
            break
        if shares[name] < sizes[name]:
            shares[name] += 1
            left -= 1
    return shares


def draw(values: Sequence[Value], n: int, seed: int, by_suite: bool) -> list[Value]:
    """The sample: uniform without replacement, or stratified by suite; in population order."""
    if n < 1:
        raise AdjudicationError(f"--n {n}: give a sample size of 1 or more")
    if n > len(values):
        raise AdjudicationError(f"--n {n} is more than the {len(values)} gold values of the dataset; give at most that")
    rng = random.Random(seed)
    if not by_suite:
        picked = set(rng.sample(range(len(values)), n))
    else:
        members: dict[str, list[int]] = {}
        for index, value in enumerate(values):
            members.setdefault(value[0], []).append(index)
        shares = allocate({suite: len(indices) for suite, indices in members.items()}, n)
        picked = set()
        for suite in sorted(members):
            picked |= set(rng.sample(members[suite], shares[suite]))
    return [values[index] for index in sorted(picked)]


def entry_id(doc_id: str, address: str, by_suite: bool) -> str:
    """A stable id of one sampled value: the same value sampled again gets the same id."""
    digest = hashlib.sha256(f"{doc_id}\0{address}".encode()).hexdigest()[:12]
    return (BY_SUITE if by_suite else PREFIX) + digest


def entries(values: Sequence[Value], seed: int, by_suite: bool) -> list[Entry]:
    """The sample as proposed `verify` entries (the gold's value shown in the reason)."""
    design = f"by suite, seed {seed}" if by_suite else f"seed {seed}"
    return [
        Entry(
            id=entry_id(doc_id, address, by_suite),
            doc_id=doc_id,
            address=address,
            action="verify",
            reason=f"random sample ({design}): is the gold {value!r} right on the page?",
        )
        for _, doc_id, address, value in values
    ]
