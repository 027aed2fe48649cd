"""Paired statistics of two runs over the same documents: is B better or worse than A, or is the
difference noise?

Both runs answered the same documents, so each document gives one difference (B's accuracy minus
A's, a failed document counting 0, as in the headline). Pairing removes what makes documents hard
for everyone, so a small real change stands out where two independent intervals would overlap.

- `mean_diff`: the mean of the differences (the difference of the headlines when both runs cover the
  same documents);
- `ci95`: a percentile bootstrap of that mean: `RESAMPLES` resamples of the documents with
  replacement (numpy's generator seeded with `SEED`), the 2.5th and 97.5th percentiles;
- `p_value`: the two-sided sign-flip permutation test of "A and B are exchangeable": under it each
  difference is as likely negated, so the share of sign flips whose mean is at least as far from 0 as
  the observed one is the p-value. Exact (every flip) up to `EXACT_UP_TO` documents, else
  `RESAMPLES` seeded random flips, counted as (1 + hits) / (1 + resamples) so it is never 0.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import numpy.typing as npt

SEED = 0
RESAMPLES = 10_000
EXACT_UP_TO = 16
"""2**16 sign patterns: enumerated exactly, as cheap as the random ones."""
_CELLS = 1 << 22
"""Resamples are drawn in blocks of about this many cells (32 MB of indices), whatever the documents."""
_TOLERANCE = 1e-12
"""Means equal but for float rounding count as "as far from 0": identical runs give p = 1."""

Floats = npt.NDArray[np.float64]


def _blocks(documents: int) -> Iterator[int]:
    """The sizes of the resample blocks: together RESAMPLES, each at most about _CELLS cells."""
    size = max(1, _CELLS // max(documents, 1))
    for start in range(0, RESAMPLES, size):
        yield min(size, RESAMPLES - start)


def bootstrap_means(diffs: Floats, seed: int = SEED) -> Floats:
    """RESAMPLES means of the differences, each over the documents drawn with replacement. A 2-D array
    (documents x columns) gives RESAMPLES x columns: each column's means over the same draws, so a
    column minus another is exactly the bootstrap of their paired difference (`oeb.report.slices`)."""
    rng = np.random.default_rng(seed)
    n = len(diffs)
    means = []
    for block in _blocks(n):
        picks = rng.integers(0, n, size=(block, n), dtype=np.int32)
        if diffs.ndim == 1:
            means.append(diffs[picks].mean(axis=1))
        else:
            means.append(np.stack([diffs[:, k][picks].mean(axis=1) for k in range(diffs.shape[1])], axis=1))
    return np.concatenate(means)


def _flipped_means(diffs: Floats, seed: int) -> Floats:
    """The mean of the differences under sign flips: every pattern when few, else seeded random ones."""
    n = len(diffs)
    if n <= EXACT_UP_TO:
        patterns = np.arange(1 << n)[:, None] >> np.arange(n) & 1
        return np.asarray(((1 - 2 * patterns) @ diffs) / n, dtype=np.float64)
    rng = np.random.default_rng(seed)
    total = diffs.sum()  # flipping the chosen differences takes twice their sum off the total
    means = [(total - 2 * (rng.random((block, n)) < 0.5) @ diffs) / n for block in _blocks(n)]
    return np.concatenate(means)


def sign_flip_p(diffs: Floats, seed: int = SEED) -> float:
    """Two-sided p-value of the paired sign-flip permutation test (1.0 for no documents)."""
    if not len(diffs):
        return 1.0
    observed = abs(float(diffs.mean()))
    extreme = np.abs(_flipped_means(diffs, seed)) >= observed - _TOLERANCE
    if len(diffs) <= EXACT_UP_TO:
        return float(extreme.mean())
    return float((1 + extreme.sum()) / (1 + len(extreme)))


def paired_stats(diffs: Floats, seed: int = SEED) -> dict[str, Any]:
    """`documents`, `mean_diff`, `ci95` and `p_value` of per-document differences (B minus A)."""
    if not len(diffs):
        return {"documents": 0, "mean_diff": None, "ci95": None, "p_value": None}
    low, high = np.percentile(bootstrap_means(diffs, seed), [2.5, 97.5])
    return {
        "documents": len(diffs),
        "mean_diff": float(diffs.mean()),
        "ci95": [float(low), float(high)],
        "p_value": sign_flip_p(diffs, seed),
    }


ALPHA = 0.05
"""A difference is called one when the interval excludes 0 and the sign-flip test agrees (p below this)."""
NO_DIFFERENCE = "no difference"


def _significant(stats: dict[str, Any]) -> bool:
    """Both tests agree: with few documents the bootstrap interval can exclude 0 while the sign-flip
    test cannot (two documents both worse: p = 0.5), and that is not evidence. Statistics without a
    p-value (the slices' pairs of systems, `oeb.report.slices`) go by the interval alone."""
    if stats["ci95"] is None:
        return False
    return "p_value" not in stats or (stats["p_value"] is not None and stats["p_value"] < ALPHA)


def verdict(stats: dict[str, Any]) -> str:
    """ "worse" or "better" when the whole interval lies on one side of 0 and p < `ALPHA`, else
    "no difference" (within noise)."""
    if not _significant(stats):
        return NO_DIFFERENCE
    low, high = stats["ci95"]
    return "worse" if high < 0 else "better" if low > 0 else NO_DIFFERENCE


def worse_beyond(stats: dict[str, Any], margin: float) -> bool:
    """The rule of `oeb compare --fail-if-worse MARGIN`: B is significantly worse than A by more than
    the margin (the upper end of the interval below -margin, and p < `ALPHA`)."""
    return _significant(stats) and stats["ci95"][1] < -margin


DESCRIPTION = {
    "difference": "per document, accuracy of B minus accuracy of A (a failed document counts 0)",
    "ci95": f"percentile bootstrap of the mean difference, {RESAMPLES} resamples, seed {SEED}",
    "p_value": "two-sided paired sign-flip permutation test (exact up to 16 documents)",
}


def document_draws(documents: int, resamples: int, per_block: int, seed: int = SEED) -> Iterator[npt.NDArray[np.int64]]:
    """The bootstrap's draws of documents with replacement for figures that are not means (a
    coverage, a precision): blocks of at most `per_block` draws, each row counting how often each
    document was drawn (numpy's generator seeded with `seed`, as `bootstrap_means`)."""
    rng = np.random.default_rng(seed)
    size = max(1, per_block)
    for start in range(0, resamples, size):
        block = min(size, resamples - start)
        drawn = rng.integers(0, documents, size=(block, documents), dtype=np.int64)
        drawn += np.arange(block, dtype=np.int64)[:, None] * documents
        yield np.bincount(drawn.ravel(), minlength=block * documents).reshape(block, documents)
