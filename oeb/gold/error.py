"""How wrong is the gold still? The share of sampled gold values a person found wrong, with an exact
(Clopper-Pearson) 95% interval, overall and per suite (docs/adjudication.md).

A `verify` entry accepted without a value confirms the gold; accepted with a value it corrects it (a
wrong gold value), and with `value: null` the page states no value there (a wrong gold value too).
Proposed and rejected verify entries (a value that could not be checked) count for nothing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from oeb.gold.entries import Entry
from oeb.gold.sample import BY_SUITE, PREFIX

LEVEL = 0.95


def clopper_pearson(wrong: int, checked: int, level: float = LEVEL) -> tuple[float, float]:
    """The exact binomial interval of a proportion: the beta quantiles of the Clopper-Pearson method."""
    from scipy.stats import beta  # type: ignore[import-untyped]

    if checked <= 0 or not 0 <= wrong <= checked:
        raise ValueError(f"{wrong} wrong of {checked} checked is no proportion")
    alpha = 1 - level
    low = 0.0 if wrong == 0 else float(beta.ppf(alpha / 2, wrong, checked - wrong + 1))
    high = 1.0 if wrong == checked else float(beta.ppf(1 - alpha / 2, wrong + 1, checked - wrong))
    return low, high


def _block(entries: Sequence[Entry]) -> dict[str, Any]:
    checked = len(entries)
    wrong = sum(1 for entry in entries if entry.has_value)
    low, high = clopper_pearson(wrong, checked)
    return {"checked": checked, "wrong": wrong, "rate": wrong / checked, "ci": [low, high]}


def gold_error(entries: Sequence[Entry], suites: Mapping[str, str]) -> dict[str, Any] | None:
    """`{checked, wrong, rate, ci, per_suite?}` over the decided verify entries (None: unmeasured);
    `per_suite` when every checked value was sampled by suite (`suites`: document -> suite)."""
    checked = [entry for entry in entries if entry.action == "verify" and entry.status == "accepted"]
    if not checked:
        return None
    block = _block(checked)
    if all(entry.id.startswith(BY_SUITE) for entry in checked):
        per: dict[str, list[Entry]] = {}
        for entry in checked:
            per.setdefault(suites.get(entry.doc_id, "other"), []).append(entry)
        block["per_suite"] = {suite: _block(members) for suite, members in sorted(per.items())}
    return block


def _rate(what: str, block: Mapping[str, Any]) -> str:
    """`<what> 2.5% (95% CI 0.8-5.7%) from 200 checked values`: a rate with its interval."""
    low, high = block["ci"]
    return (
        f"{what} {100 * block['rate']:.1f}% (95% CI {100 * low:.1f}-{100 * high:.1f}%) "
        f"from {block['checked']} checked value{'s' if block['checked'] != 1 else ''}"
    )


def shown(block: Mapping[str, Any] | None) -> str:
    """`gold error: 2.5% (95% CI 0.8-5.7%) from 200 checked values`, or that it is unmeasured."""
    if block is None:
        return "gold error: unmeasured (no sampled gold value checked yet: oeb adjudicate sample)"
    return _rate("gold error:", block)


def within_noise(headlines: Sequence[float], block: Mapping[str, Any] | None) -> list[bool]:
    """Per rank from the second: whether its score differs from the one above by less than the gold
    error's upper bound (its order could be the gold's doing)."""
    if block is None:
        return [False] * max(0, len(headlines) - 1)
    bound = block["ci"][1]
    return [abs(headlines[i] - headlines[i + 1]) < bound for i in range(len(headlines) - 1)]


def accuracy(entries: Sequence[Entry]) -> dict[str, Any] | None:
    """A drafted gold's accuracy, `{checked, right, rate, ci}`: the complement of its error over the
    decided verify entries of the uniform sample (`oeb gold sample`, ids `verify-...`; a value checked
    for another reason would bias it); None when no sampled value was checked yet."""
    error = gold_error([entry for entry in entries if entry.id.startswith(PREFIX)], {})  # the random sample only
    if error is None:
        return None
    low, high = error["ci"]
    right = error["checked"] - error["wrong"]
    return {"checked": error["checked"], "right": right, "rate": right / error["checked"], "ci": [1 - high, 1 - low]}


def accuracy_shown(block: Mapping[str, Any] | None) -> str:
    """`draft accuracy 97.5% (95% CI 94.3-99.2%) from 200 checked values`, or that it is unmeasured."""
    if block is None:
        return "draft accuracy: unmeasured (check a random sample: oeb gold sample DATASET --n 200)"
    return _rate("draft accuracy", block)
