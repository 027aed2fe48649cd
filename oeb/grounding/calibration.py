"""Confidence you can automate on: how much of a system's output can be accepted unreviewed above a
threshold while the accepted values stay that precise, and whether its confidences mean what they say.

Every predicted value counts: a matched value is right, anything else (misread, fabricated, invented)
is an error its confidence should have flagged. A value given no confidence is never accepted, so it
stays in the denominator of coverage; it has no place in the calibration error or the AUROC.

- coverage at precision P: the largest share of predicted values whose confidence is at least some
  threshold t while the values accepted at t are at least P right; t is the lowest such confidence
  (ties are accepted together: a threshold cannot split equal confidences);
- expected calibration error: over 10 equal-width bins of confidence, the mean gap between each
  bin's confidence and its share right, weighted by the bin's values;
- AUROC: the chance that a right value's confidence is above a wrong one's (ties count half).

Weights (a document drawn twice by a bootstrap counts twice) come as a matrix, one row per draw.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import numpy.typing as npt

Floats = npt.NDArray[np.float64]
Bools = npt.NDArray[np.bool_]
BINS = 10


class Ranked(NamedTuple):
    """Values with a confidence, most confident first: where each run of equal confidences ends,
    and those confidences."""

    order: npt.NDArray[np.intp]
    ends: npt.NDArray[np.intp]
    thresholds: Floats


def rank(confidence: Floats) -> Ranked:
    """The order and tie ends of the values with a (non-NaN) confidence."""
    given = np.flatnonzero(~np.isnan(confidence))
    order = given[np.argsort(-confidence[given], kind="stable")]
    ranked = confidence[order]
    ends = np.flatnonzero(np.append(ranked[1:] != ranked[:-1], True)) if len(order) else np.zeros(0, np.intp)
    return Ranked(order, ends, ranked[ends])


def coverage_at(ranked: Ranked, right: Bools, precisions: tuple[float, ...], weights: Floats) -> tuple[Floats, Floats]:
    """For each row of `weights` (one weight per value) and each precision asked: the coverage and
    its threshold (NaN when no threshold is that precise), as arrays of shape (draws, precisions)."""
    draws = weights.shape[0]
    coverage = np.zeros((draws, len(precisions)))
    threshold = np.full((draws, len(precisions)), np.nan)
    if not len(ranked.order):
        return coverage, threshold
    sorted_weights = weights[:, ranked.order]
    accepted = np.cumsum(sorted_weights, axis=1)[:, ranked.ends]
    accepted_right = np.cumsum(sorted_weights * right[ranked.order], axis=1)[:, ranked.ends]
    total = weights.sum(axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        precision = accepted_right / accepted
        share = accepted / total
    for column, asked in enumerate(precisions):
        ok = precision >= asked - 1e-12
        last = np.where(ok.any(axis=1), ok.shape[1] - 1 - np.argmax(ok[:, ::-1], axis=1), -1)
        found = last >= 0
        rows = np.flatnonzero(found)
        coverage[rows, column] = share[rows, last[found]]
        threshold[rows, column] = ranked.thresholds[last[found]]
    return coverage, threshold


def expected_calibration_error(confidence: Floats, right: Bools, bins: int = BINS) -> float | None:
    """The weighted mean gap between confidence and accuracy over equal-width bins (None: no confidence)."""
    given = ~np.isnan(confidence)
    conf, hit = confidence[given], right[given].astype(np.float64)
    if not len(conf):
        return None
    index = np.minimum((conf * bins).astype(np.intp), bins - 1)
    counts = np.bincount(index, minlength=bins)
    gaps = np.abs(np.bincount(index, conf, bins) - np.bincount(index, hit, bins))
    return float(gaps.sum() / counts.sum())


def auroc(confidence: Floats, right: Bools) -> float | None:
    """Mann-Whitney's chance that a right value is more confident than a wrong one (None: one class only)."""
    given = ~np.isnan(confidence)
    conf, hit = confidence[given], right[given]
    positives, negatives = int(hit.sum()), int((~hit).sum())
    if not positives or not negatives:
        return None
    _, inverse, counts = np.unique(conf, return_inverse=True, return_counts=True)
    mid_ranks = (np.cumsum(counts) - (counts - 1) / 2.0)[inverse]  # ties share their mean rank
    return float((mid_ranks[hit].sum() - positives * (positives + 1) / 2.0) / (positives * negatives))


def straight_through(
    document: npt.NDArray[np.intp], confidence: Floats, documents: int, threshold: float, failed: int = 0
) -> float:
    """The share of `documents` and `failed` ones together whose every predicted value has a
    confidence of at least `threshold` (a value without one holds its document back; a document with
    no predicted value goes through; a failed document, with no answer to accept, never does)."""
    if not documents + failed:
        return 0.0
    held = np.zeros(documents, dtype=bool)
    below = np.isnan(confidence) | (confidence < threshold) if not np.isnan(threshold) else np.ones_like(held[document])
    held[document[below]] = True
    return float((documents - held.sum()) / (documents + failed))


CURVE_POINTS = 200
"""At most this many points of a risk-coverage curve (evenly spaced over its thresholds)."""


def curves(confidence: Floats, right: Bools, bins: int = BINS) -> dict[str, list[list[float]]]:
    """The risk-coverage curve ([coverage, risk, threshold] per threshold, most confident first) and
    the reliability diagram ([bin low, bin high, mean confidence, share right, values] per non-empty
    bin) of some values, for drawing."""
    ranked = rank(confidence)
    curve: list[list[float]] = []
    if len(ranked.order):
        hits = np.cumsum(right[ranked.order])[ranked.ends]
        accepted = ranked.ends + 1.0
        picks = np.unique(np.linspace(0, len(ranked.ends) - 1, min(CURVE_POINTS, len(ranked.ends))).astype(np.intp))
        for i in picks:
            curve.append(
                [float(accepted[i] / len(confidence)), float(1 - hits[i] / accepted[i]), float(ranked.thresholds[i])]
            )
    given = ~np.isnan(confidence)
    conf, hit = confidence[given], right[given].astype(np.float64)
    index = np.minimum((conf * bins).astype(np.intp), bins - 1)
    counts = np.bincount(index, minlength=bins)
    sums, rights = np.bincount(index, conf, bins), np.bincount(index, hit, bins)
    reliability = [
        [b / bins, (b + 1) / bins, float(sums[b] / counts[b]), float(rights[b] / counts[b]), float(counts[b])]
        for b in range(bins)
        if counts[b]
    ]
    return {"risk_coverage": curve, "reliability": reliability}
