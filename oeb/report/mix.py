"""A score for one's own mix of documents (`oeb report --mix MIX.yaml` or `--mix-from DATASET`,
docs/slices.md): the benchmark's documents post-stratified to the mix's shares.

A mix gives shares to strata, each stratum a value of every trait it names: `{text_layer: {scanned:
0.7, digital: 0.3}}` (several traits in this form are crossed as independent shares), or
`strata: [{text_layer: scanned, pages: "1", share: 0.7}, ...]` for crossed strata of one's own.

Per system:

- `score`: the sum over strata of share x the mean per-document score of the stratum's documents
  (accuracy, a failed document counting 0). With the benchmark's own shares it is the pooled headline;
- `ci95`: each stratum's documents resampled with replacement within it (`oeb.report.paired`'s
  bootstrap, one draw for all systems), the weighted sums' 2.5th and 97.5th percentiles;
- `usd_per_1k_pages`: 1000 x (share-weighted mean cost of a priced document with a known page count)
  / (share-weighted mean pages of those documents);
- `latency_p95_s`: the 95th percentile of the documents' wall time, each document weighing its
  stratum's share over the stratum's documents (numpy's linear interpolation when weights are equal).

A stratum of the mix that the benchmark holds no document for is named, and the score is over the
strata it holds, their shares scaled to sum to 1, marked `partial`.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from oeb.errors import UsageError
from oeb.report.compare import document_score
from oeb.report.leaderboard import _pages
from oeb.report.paired import SEED, bootstrap_means
from oeb.report.runs import Run
from oeb.report.slices import pooled_order, slice_name
from oeb.traits import Traits
from oeb.traits.language import UNKNOWN, known_languages

TOLERANCE = 1e-6
_OPEN = ("text_layer", "language")
"""Traits whose every possible value is known whatever the documents; the others' are those seen."""


@dataclass(frozen=True)
class Mix:
    """The traits a mix names and its strata: each a value per trait, with its share."""

    traits: tuple[str, ...]
    strata: tuple[tuple[tuple[str, ...], float], ...]


def _possible(traits: Traits, trait: str) -> set[str]:
    if trait == "text_layer":
        return {"digital", "scanned", "mixed", UNKNOWN}
    if trait == "language":
        return set(known_languages())
    return {*traits.labels(trait), UNKNOWN}


def _share(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or math.isnan(value):
        raise UsageError(f"{where}: the share {value!r} is not a number; give shares such as 0.7")
    if value < 0:
        raise UsageError(f"{where}: the share {value} is negative; shares are between 0 and 1")
    return float(value)


def _sums_to_one(shares: Sequence[float], where: str) -> None:
    if abs(sum(shares) - 1) > TOLERANCE:
        raise UsageError(f"{where}: the shares sum to {sum(shares):.6g}, not 1; make them sum to 1")


def _value(traits: Traits, trait: str, value: Any, where: str) -> str:
    text = str(value)
    if text not in _possible(traits, trait):
        known = ", ".join(sorted(_possible(traits, trait) - {UNKNOWN})) if trait != "language" else "ISO 639-1 codes"
        raise UsageError(f"{where}: {trait} has no value {text!r}; its values are {known}")
    return text


def parse_mix(tree: Any, traits: Traits, where: str) -> Mix:
    """A mix file's YAML as a `Mix`; a one-line UsageError for an unknown trait or value, a negative
    share or shares that do not sum to 1 (within 1e-6)."""
    if not isinstance(tree, dict) or not tree:
        raise UsageError(f"{where}: a mix is a mapping of trait -> value -> share, or strata: [...]")
    if "strata" in tree:
        return _strata(tree, traits, where)
    names = [str(trait) for trait in tree]
    marginals = []
    for trait in names:
        traits.check(trait)
        shares = tree[trait]
        if not isinstance(shares, dict) or not shares:
            raise UsageError(f"{where}: {trait} must map its values to shares, e.g. {{scanned: 0.7, digital: 0.3}}")
        values = {
            _value(traits, trait, value, where): _share(share, f"{where} {trait}.{value}")
            for value, share in shares.items()
        }
        _sums_to_one(list(values.values()), f"{where} {trait}")
        marginals.append(list(values.items()))
    strata = tuple(
        (tuple(value for value, _ in combo), math.prod(share for _, share in combo))
        for combo in itertools.product(*marginals)
    )
    return Mix(tuple(names), strata)


def _strata(tree: dict[str, Any], traits: Traits, where: str) -> Mix:
    given = tree["strata"]
    if len(tree) > 1 or not isinstance(given, list) or not given or not all(isinstance(s, dict) for s in given):
        raise UsageError(
            f"{where}: strata is a list of mappings such as {{text_layer: scanned, pages: '1', share: 0.7}}"
        )
    names = tuple(str(key) for key in given[0] if key != "share")
    for trait in names:
        traits.check(trait)
    strata: dict[tuple[str, ...], float] = {}
    for number, stratum in enumerate(given, start=1):
        at = f"{where} strata[{number}]"
        if set(stratum) != {*names, "share"}:
            raise UsageError(f"{at}: every stratum names the same traits ({', '.join(names)}) and a share")
        key = tuple(_value(traits, trait, stratum[trait], at) for trait in names)
        if key in strata:
            raise UsageError(f"{at}: the stratum {slice_name(dict(zip(names, key, strict=True)))} is given twice")
        strata[key] = _share(stratum["share"], at)
    _sums_to_one(list(strata.values()), where)
    return Mix(names, tuple(strata.items()))


def mix_from(dataset_traits: Traits, names: Sequence[str]) -> Mix:
    """The mix of another dataset's documents over the traits `names`: each stratum's share of them."""
    for trait in names:
        dataset_traits.check(trait)
    counts: dict[tuple[str, ...], int] = {}
    for values in dataset_traits.values.values():
        key = tuple(values[trait] for trait in names)
        counts[key] = counts.get(key, 0) + 1
    total = sum(counts.values())
    return Mix(tuple(names), tuple((key, count / total) for key, count in counts.items()))


def _weighted_quantile(values: Sequence[float], weights: Sequence[float], q: float) -> float | None:
    """The q-quantile with linear interpolation between weighted positions (numpy's for equal weights)."""
    if not values:
        return None
    order = np.argsort(values)
    data, weight = np.asarray(values, dtype=float)[order], np.asarray(weights, dtype=float)[order]
    cumulative = np.cumsum(weight)
    span = cumulative[-1] - weight[-1] if len(data) > 1 else 0.0
    if span <= 0:
        return float(data[-1])
    positions = (cumulative - weight) / span
    return float(np.interp(q, positions, data))


def mix_report(runs: Sequence[Run], traits: Traits, mix: Mix) -> dict[str, Any]:
    """Per system the score, interval, cost and latency at the mix, ranked, beside the pooled ranking."""
    runs = pooled_order(runs)
    members: dict[tuple[str, ...], list[str]] = {key: [] for key, _ in mix.strata}
    for doc_id in sorted(runs[0].doc_ids):
        key = tuple(traits.values.get(doc_id, {}).get(trait, UNKNOWN) for trait in mix.traits)
        if key in members:
            members[key].append(doc_id)
    held = [(key, share) for key, share in mix.strata if members[key] and share > 0]
    missing = [
        slice_name(dict(zip(mix.traits, key, strict=True)))
        for key, share in mix.strata
        if not members[key] and share > 0
    ]
    covered = sum(share for _, share in held)
    weights = {key: share / covered for key, share in held} if covered else {}
    lines = [{line["id"]: line for line in run.lines} for run in runs]
    total = np.zeros(len(runs))
    draws = np.zeros((0, len(runs)))
    for number, (key, weight) in enumerate(weights.items()):
        values = np.array([[document_score(by_id[d]) for by_id in lines] for d in members[key]], dtype=np.float64)
        total += weight * values.mean(axis=0)
        means = weight * bootstrap_means(values, seed=SEED + number)
        draws = means if not len(draws) else draws + means
    rows: list[dict[str, Any]] = []
    for k, run in enumerate(runs):
        interval = np.percentile(draws[:, k], [2.5, 97.5]) if len(draws) else None
        rows.append(
            {
                "system": run.label,
                "run": run.name,
                "score": float(total[k]) if weights else None,
                "ci": None if interval is None else [float(interval[0]), float(interval[1])],
                "usd_per_1k_pages": _cost(run, members, weights),
                "latency_p95_s": _latency(run, members, weights),
                "pooled_rank": k + 1,
                "rank": None,
            }
        )
    for rank, row in enumerate(sorted(rows, key=lambda row: -(row["score"] or 0.0)), start=1):
        row["rank"] = rank
    strata = [
        {
            "stratum": dict(zip(mix.traits, key, strict=True)),
            "name": slice_name(dict(zip(mix.traits, key, strict=True))),
            "share": share,
            "documents": len(members[key]),
        }
        for key, share in mix.strata
    ]
    return {
        "mix": {
            "traits": list(mix.traits),
            "strata": strata,
            "partial": bool(missing),
            "missing": missing,
            "covered_share": covered,
        },
        "systems": sorted(rows, key=lambda row: row["rank"]),
        "warnings": traits.warnings(),
    }


def _cost(
    run: Run, members: Mapping[tuple[str, ...], list[str]], weights: Mapping[tuple[str, ...], float]
) -> float | None:
    usd = run.costs.get("usd", {})
    cost = pages = 0.0
    for key, weight in weights.items():
        priced = [(usd[d], n) for d in members[key] if d in usd and (n := _pages(run.documents.get(d))) is not None]
        if priced:
            cost += weight * sum(c for c, _ in priced) / len(priced)
            pages += weight * sum(n for _, n in priced) / len(priced)
    return 1000 * cost / pages if pages else None


def _latency(
    run: Run, members: Mapping[tuple[str, ...], list[str]], weights: Mapping[tuple[str, ...], float]
) -> float | None:
    values: list[float] = []
    shares: list[float] = []
    for key, weight in weights.items():
        walls = [run.wall_s[d] for d in members[key] if d in run.wall_s]
        values += walls
        shares += [weight / len(walls)] * len(walls) if walls else []
    return _weighted_quantile(values, shares, 0.95)
