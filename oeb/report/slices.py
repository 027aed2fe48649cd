"""Runs sliced by document traits (`oeb report --by TRAIT`, docs/slices.md): per slice and system the
documents, the score and its 95 % interval, per pair of systems the paired difference, and the flips.

- a slice is the documents sharing one value of each trait asked for (`--by pages --by language`
  crosses them);
- `score`: the headline over the slice's documents alone (accuracy, a failed document counting 0),
  exactly what the leaderboard gives for a run of those documents; `ci95`: the leaderboard's
  bootstrap (`oeb.report.leaderboard.bootstrap_ci`) of those per-document scores, the leaderboard's
  own interval whenever every document was scored;
- `pairs`: for every two systems (A above B in the pooled leaderboard), B - A with the paired
  bootstrap of `oeb.report.paired` (one draw of the slice's documents for all systems, in id order,
  as `oeb compare` draws them) and its verdict;
- a slice of fewer than `min_docs` documents is `small`: shown, never ranked, never a flip;
- a **flip**: a slice (not small) where another system beats the pooled leader with a paired
  interval above 0. Flips are listed first.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

import numpy as np

from oeb.report.compare import document_score
from oeb.report.leaderboard import bootstrap_ci, metrics
from oeb.report.paired import DESCRIPTION, bootstrap_means, paired_stats, verdict
from oeb.report.runs import Run
from oeb.traits import Traits

MIN_DOCS = 10


def slice_name(key: dict[str, str]) -> str:
    """`pages=1 · language=de`."""
    return " · ".join(f"{trait}={value}" for trait, value in key.items())


def groups(traits: Traits, by: Sequence[str], doc_ids: Sequence[str]) -> list[tuple[dict[str, str], list[str]]]:
    """The slices holding documents, in the traits' value order, each with its documents in id order;
    every document lands in exactly one slice (a trait it has no value for is `unknown`)."""
    for trait in by:
        traits.check(trait)
    found: dict[tuple[str, ...], list[str]] = {}
    for doc_id in doc_ids:
        labels = traits.values.get(doc_id, {})
        found.setdefault(tuple(labels.get(trait, "unknown") for trait in by), []).append(doc_id)
    orders = [{label: n for n, label in enumerate(traits.labels(trait))} for trait in by]
    keys = sorted(
        found, key=lambda key: [order.get(value, len(order)) for order, value in zip(orders, key, strict=True)]
    )
    return [(dict(zip(by, key, strict=True)), sorted(found[key])) for key in keys]


def pooled_order(runs: Sequence[Run]) -> list[Run]:
    """The runs in the leaderboard's order: best headline first, ties as given."""
    return sorted(runs, key=lambda run: -sum(document_score(line) for line in run.lines) / max(len(run.lines), 1))


def _scores(run: Run, ids: Sequence[str]) -> list[float]:
    lines = {line["id"]: line for line in run.lines}
    return [document_score(lines[doc_id]) for doc_id in ids]


def _row(run: Run, ids: Sequence[str]) -> dict[str, Any]:
    chosen = set(ids)
    row = metrics([line for line in run.lines if line["id"] in chosen], run.costs, run.documents)
    return {
        "system": run.label,
        "run": run.name,
        "documents": row["documents"],
        "scored": row["scored"],
        "score": row["headline"],
        "accuracy": row["accuracy"],
        "coverage": row["coverage"],
        "ci95": _pair(bootstrap_ci(_scores(run, ids))),
        "rank": None,
    }


def _pair(interval: tuple[float, float] | None) -> list[float] | None:
    return None if interval is None else [interval[0], interval[1]]


def _paired(values: np.ndarray[Any, Any], means: np.ndarray[Any, Any], a: int, b: int) -> dict[str, Any]:
    """B - A from the slice's per-document scores and the bootstrap means of every system."""
    low, high = np.percentile(means[:, b] - means[:, a], [2.5, 97.5])
    stats = {"mean_diff": float(values[:, b].mean() - values[:, a].mean()), "ci95": [float(low), float(high)]}
    return {**stats, "verdict": verdict(stats)}


def slice_report(runs: Sequence[Run], traits: Traits, by: Sequence[str], min_docs: int = MIN_DOCS) -> dict[str, Any]:
    """The slices of `runs` (in the pooled leaderboard's order, the leader first) by the traits `by`."""
    runs = pooled_order(runs)
    leader = runs[0].label
    slices, flips = [], []
    for key, ids in groups(traits, by, runs[0].doc_ids):
        rows = [_row(run, ids) for run in runs]
        values = np.array([_scores(run, ids) for run in runs], dtype=np.float64).T  # documents x systems
        means = bootstrap_means(values)
        small = len(ids) < min_docs
        pairs = [
            {"a": runs[a].label, "b": runs[b].label, **_paired(values, means, a, b)}
            for a, b in itertools.combinations(range(len(runs)), 2)
        ]
        if not small:
            for rank, row in enumerate(sorted(rows, key=lambda row: -row["score"]), start=1):
                row["rank"] = rank
            beaten = [
                {"system": runs[k].label, "score": rows[k]["score"], **_paired(values, means, 0, k)}
                for k in range(1, len(runs))
            ]
            winners = [entry for entry in beaten if entry["ci95"][0] > 0]
            if winners:
                flips.append(
                    {
                        "slice": key,
                        "name": slice_name(key),
                        "documents": len(ids),
                        "leader": leader,
                        "leader_score": rows[0]["score"],
                        "winners": sorted(winners, key=lambda entry: -entry["mean_diff"]),
                    }
                )
        slices.append(
            {
                "slice": key,
                "name": slice_name(key),
                "documents": len(ids),
                "small": small,
                "doc_ids": ids,
                "systems": rows,
                "pairs": pairs,
            }
        )
    return {
        "by": list(by),
        "min_docs": min_docs,
        "leader": leader,
        "edges": {trait: list(traits.edges[trait]) for trait in by if trait in traits.edges},
        "flips": flips,
        "slices": slices,
        "warnings": traits.warnings(),
        "method": {
            "score": "headline over the slice's documents: accuracy, a failed document counting 0",
            "ci95": "percentile bootstrap of the mean per-document score, 2000 resamples, seed 0 (the leaderboard's)",
            "pairs": DESCRIPTION["ci95"] + "; B - A, A above B in the pooled leaderboard",
            "flip": "a slice of at least min_docs documents where a system beats the pooled leader, its paired "
            "interval above 0",
        },
    }


def compare_slices(a: Run, b: Run, traits: Traits, by: Sequence[str], min_docs: int = MIN_DOCS) -> dict[str, Any]:
    """`oeb compare A B --by TRAIT`: the paired statistics of B - A (`oeb.report.paired`, with the
    p-value) over each slice's documents."""
    result = []
    for key, ids in groups(traits, by, a.doc_ids):
        diffs = np.array(_scores(b, ids), dtype=np.float64) - np.array(_scores(a, ids), dtype=np.float64)
        stats = paired_stats(diffs)
        result.append(
            {
                "slice": key,
                "name": slice_name(key),
                "small": len(ids) < min_docs,
                "doc_ids": ids,
                **stats,
                "verdict": verdict(stats),
            }
        )
    return {"by": list(by), "min_docs": min_docs, "slices": result, "warnings": traits.warnings()}
