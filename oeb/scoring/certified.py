"""A maximum-weight pairing of two huge flat row sets, without an n × m weight matrix.

Above 64 million cells the reference prices every pair with a positive weight into one sparse
matrix, which for a 27,000-row table needs more memory than the machine has. Here the pairing is
found on candidate pairs only and then proved optimal over all pairs with linear-programming
duals: `u[i] + v[j] >= weight(i, j)` for every pair, with equality on the pairs chosen. Pairs are
never enumerated in full: rows that share a rare value are joined, and every other pair shares
only values of a few frequent columns, so a pair can beat the duals only if it shares enough of
them, which a join on those columns finds.

When every pair not chosen is *strictly* below its duals, the optimum is unique, so any exact
solver, the reference's included, returns these very pairs: the result is `certified`. Otherwise
the pairing is still optimal (the same totals of equal and shared values) but ties may be broken
differently from the reference's solver.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from itertools import combinations

import numpy as np
from scipy import sparse
from scipy.sparse.csgraph import min_weight_full_bipartite_matching

from oeb.scoring.weights import Columns

# A column is joined pair by pair when it pairs at most this many rows per row of the block.
JOIN_PAIRS_PER_ROW = 4
# Candidate pairs added per round, rounds of (solve, prove) before giving up.
MAX_NEW_PAIRS = 2_000_000
MAX_ROUNDS = 8
# Pairs one proof step may enumerate; rows scanned against every gold row when a join is larger.
MAX_JOIN_PAIRS = 20_000_000
MAX_SUSPECTS = 200_000_000
MAX_SCAN_CELLS = 400_000_000
SCAN_CHUNK_CELLS = 8_000_000
MAX_FREQUENT_COLUMNS = 8
MAX_RELAXATIONS = 5_000
WEIGHT_CHUNK = 2_000_000


@dataclass(frozen=True)
class Pairing:
    """Pairs (pred index, gold index), whether they are proved optimal, and proved the only optimum."""

    pairs: list[tuple[int, int]]
    optimal: bool
    certified: bool


class _Block:
    """A flat block as integer codes, pricing any list of pairs exactly."""

    def __init__(self, columns: Columns, scale: int) -> None:
        self.columns = columns
        self.scale = scale
        self.n, self.m = columns.n, columns.m
        codes = [columns.codes(c) for c in range(len(columns.columns))]
        self.p_codes = np.array([p for p, _ in codes], dtype=np.int32).reshape(len(codes), self.n)
        self.g_codes = np.array([g for _, g in codes], dtype=np.int32).reshape(len(codes), self.m)
        self.most_shared = len(codes)
        limit = JOIN_PAIRS_PER_ROW * (self.n + self.m)
        self.rare = [c for c, pairs in enumerate(columns.pairs) if 0 < pairs <= limit]
        self.frequent = [c for c, pairs in enumerate(columns.pairs) if pairs > limit]

    def weights(self, i: np.ndarray, j: np.ndarray) -> np.ndarray:
        """The exact weight of each pair (i[k], j[k]), in chunks to bound memory."""
        out = np.empty(len(i), dtype=np.int64)
        for start in range(0, len(i), WEIGHT_CHUNK):
            a, b = i[start : start + WEIGHT_CHUNK], j[start : start + WEIGHT_CHUNK]
            p, g = self.p_codes[:, a], self.g_codes[:, b]
            matched = (p == g).sum(axis=0, dtype=np.int64)
            shared = ((p >= 0) & (g >= 0)).sum(axis=0, dtype=np.int64)
            out[start : start + len(a)] = np.where(matched >= 1, matched * self.scale + shared, 0)
        return out

    @cached_property
    def rare_pairs(self) -> tuple[np.ndarray, np.ndarray]:
        """Every pair sharing a value of a rare column."""
        everyone = np.arange(self.n)
        found = [_join(self.p_codes[[c]], everyone, self.g_codes[[c]], None) for c in self.rare]
        return _unique_pairs([pair for pair in found if pair is not None], self.m)


def certified_pairing(columns: Columns, scale: int) -> Pairing:
    """A maximum-weight pairing proved optimal over all pairs where a proof is found.

    Without a proof (a block shaped so that the proof would enumerate too many pairs) the pairing
    is the best on the candidate pairs, which need not be optimal: `optimal` is then False.
    """
    block = _Block(columns, scale)
    i, j = block.rare_pairs
    w = block.weights(i, j)
    i, j, w = _with_leftovers(block, i, j, w)
    for _ in range(MAX_ROUNDS):
        partner = _solve(block.n, block.m, i, j, w)
        pairs = [(r, int(c)) for r, c in enumerate(partner.tolist()) if c >= 0]
        duals = _duals(block, partner, i, j, w)
        suspects = None if duals is None else _suspects(block, *duals)
        if duals is None or suspects is None:
            return Pairing(pairs, optimal=False, certified=False)
        u, v = duals
        violated_i, violated_j, tied = _against_duals(block, suspects, u, v, partner)
        if not len(violated_i):
            tied = tied or bool(((u[i] + v[j] == w) & (partner[i] != j)).any())
            return Pairing(pairs, optimal=True, certified=not tied)
        i, j = _unique_pairs([(i, j), (violated_i[:MAX_NEW_PAIRS], violated_j[:MAX_NEW_PAIRS])], block.m)
        w = block.weights(i, j)
        keep = w > 0
        i, j, w = i[keep], j[keep], w[keep]
    return Pairing(pairs, optimal=False, certified=False)


def _with_leftovers(
    block: _Block, i: np.ndarray, j: np.ndarray, w: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Add every pair of rows left unpaired by the candidates so far: they compete for each other."""
    keep = w > 0
    i, j, w = i[keep], j[keep], w[keep]
    partner = _solve(block.n, block.m, i, j, w)
    free_p = np.nonzero(partner < 0)[0]
    taken = np.zeros(block.m, dtype=bool)
    taken[partner[partner >= 0]] = True
    free_g = np.nonzero(~taken)[0]
    if not len(free_p) or not len(free_g) or len(free_p) * len(free_g) > MAX_NEW_PAIRS:
        return i, j, w
    i, j = _unique_pairs([(i, j), (np.repeat(free_p, len(free_g)), np.tile(free_g, len(free_p)))], block.m)
    w = block.weights(i, j)
    keep = w > 0
    return i[keep], j[keep], w[keep]


def _against_duals(
    block: _Block, suspects: list[tuple[np.ndarray, np.ndarray]], u: np.ndarray, v: np.ndarray, partner: np.ndarray
) -> tuple[np.ndarray, np.ndarray, bool]:
    """The suspects above their duals (violations), and whether any other than a chosen pair meets them."""
    violated: list[tuple[np.ndarray, np.ndarray]] = []
    tied = False
    for s_i, s_j in suspects:
        for start in range(0, len(s_i), WEIGHT_CHUNK):
            a, b = s_i[start : start + WEIGHT_CHUNK], s_j[start : start + WEIGHT_CHUNK]
            w = block.weights(a, b)
            slack = u[a] + v[b] - w
            over = (w > 0) & (slack < 0)
            violated.append((a[over], b[over]))
            tied = tied or bool(((w > 0) & (slack == 0) & (partner[a] != b)).any())
    found_i, found_j = _unique_pairs(violated, block.m)
    return found_i, found_j, tied


def _solve(n: int, m: int, i: np.ndarray, j: np.ndarray, w: np.ndarray) -> np.ndarray:
    """An exact maximum-weight pairing on the candidate pairs: each pred row's gold partner, or -1.

    Costs are made positive integers (`top - w` for a pair, `top` for staying unpaired, through a
    private column per row) so that sums stay exact in float64.
    """
    top = int(w.max(initial=0)) + 1
    rows = np.concatenate([i, np.arange(n)])
    cols = np.concatenate([j, m + np.arange(n)])
    cost = np.concatenate([top - w, np.full(n, top)]).astype(np.float64)
    graph = sparse.csr_array((cost, (rows, cols)), shape=(n, m + n))
    matched = min_weight_full_bipartite_matching(graph)[1]
    return np.where(matched < m, matched, -1).astype(np.int64)


def _duals(
    block: _Block, partner: np.ndarray, i: np.ndarray, j: np.ndarray, w: np.ndarray
) -> tuple[np.ndarray, np.ndarray] | None:
    """Duals proving the pairing optimal on the candidates, as shortest distances of its constraints.

    With `v[j] = weight(r, j) - u[r]` for the pred row `r` paired with `j` (0 for an unpaired gold
    row) and `u = 0` for an unpaired pred row, every constraint is a difference constraint between
    two `u`s or between a `u` and zero, so `u` is the shortest distance to each row from a node `z`
    standing for zero.
    """
    n, m = block.n, block.m
    row_of = np.full(m, -1, dtype=np.int64)
    paired = np.nonzero(partner >= 0)[0]
    row_of[partner[paired]] = paired
    own = np.zeros(n, dtype=np.int64)
    own[paired] = block.weights(paired, partner[paired])
    z = n
    other = partner[i] != j
    ci, cj, cw = i[other], j[other], w[other]
    rival = row_of[cj]
    to_rival = rival >= 0
    # u[i] + v[j] >= w(i, j): through the gold row's partner r, or directly when j is unpaired.
    src = [ci[to_rival], ci[~to_rival], np.arange(n)]
    dst = [rival[to_rival], np.full(int((~to_rival).sum()), z), np.full(n, z)]
    length = [own[rival[to_rival]] - cw[to_rival], -cw[~to_rival], np.zeros(n, dtype=np.int64)]
    # u[i] <= its pair's weight (so v >= 0); an unpaired row has u = 0.
    src.append(np.full(n, z))
    dst.append(np.arange(n))
    length.append(np.where(partner >= 0, own, 0))
    distance = _shortest_from(z, n + 1, np.concatenate(src), np.concatenate(dst), np.concatenate(length))
    if distance is None or distance[z] != 0:
        return None
    u = distance[:n]
    v = np.zeros(m, dtype=np.int64)
    v[partner[paired]] = own[paired] - u[paired]
    return u, v


def _shortest_from(source: int, nodes: int, src: np.ndarray, dst: np.ndarray, length: np.ndarray) -> np.ndarray | None:
    """Bellman-Ford in rounds of vectorised relaxation; None on a negative cycle or too many rounds."""
    order = np.lexsort((length, dst))
    src, dst, length = src[order], dst[order], length[order]
    starts = np.concatenate([[0], np.nonzero(np.diff(dst))[0] + 1])
    targets = dst[starts]
    unreachable = np.iinfo(np.int64).max // 4
    distance = np.full(nodes, unreachable, dtype=np.int64)
    distance[source] = 0
    for _ in range(MAX_RELAXATIONS):
        through = np.where(distance[src] < unreachable, distance[src] + length, unreachable)
        best = np.minimum.reduceat(through, starts)
        improved = best < distance[targets]
        if not improved.any():
            return distance
        distance[targets[improved]] = best[improved]
    return None


def _suspects(block: _Block, u: np.ndarray, v: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]] | None:
    """Every pair that could reach its duals: all candidates for violations and ties.

    A pair that shares no rare value weighs at most `k * scale + most_shared` when it shares `k`
    frequent values, so row `i` needs checking only against pairs sharing at least
    `ceil((u[i] + min(v) - most_shared) / scale)` of them.
    """
    found = [block.rare_pairs]
    if not block.frequent:
        return found
    if len(block.frequent) > MAX_FREQUENT_COLUMNS:
        return None
    floor = u + int(v.min(initial=0)) - block.most_shared
    needed = np.maximum(1, -(-floor // block.scale))
    scan_rows: list[np.ndarray] = []
    for k in range(1, len(block.frequent) + 1):
        rows = np.nonzero(needed == k)[0]
        if not len(rows):
            continue
        joined = []
        for subset in combinations(block.frequent, k):
            pairs = _join(block.p_codes[list(subset)], rows, block.g_codes[list(subset)], MAX_JOIN_PAIRS)
            if pairs is None:
                break
            joined.append(pairs)
        else:
            found.extend(joined)
            continue
        scan_rows.append(rows)
    if scan_rows:
        rows = np.concatenate(scan_rows)
        if len(rows) * block.m > MAX_SCAN_CELLS:
            return None
        found.append(_scan(block, rows, u, v))
    if sum(len(i) for i, _ in found) > MAX_SUSPECTS:
        return None
    return found


def _scan(block: _Block, rows: np.ndarray, u: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Pairs of these rows, priced against every gold row in chunks, that reach their duals."""
    chunk = max(1, SCAN_CHUNK_CELLS // max(block.m, 1))
    hits_i, hits_j = [], []
    every = np.arange(block.m)
    for start in range(0, len(rows), chunk):
        part = rows[start : start + chunk]
        i = np.repeat(part, block.m)
        j = np.tile(every, len(part))
        w = block.weights(i, j)
        reach = (w > 0) & (u[i] + v[j] <= w)
        hits_i.append(i[reach])
        hits_j.append(j[reach])
    return np.concatenate(hits_i), np.concatenate(hits_j)


def _join(
    p_codes: np.ndarray, rows: np.ndarray, g_codes: np.ndarray, limit: int | None
) -> tuple[np.ndarray, np.ndarray] | None:
    """Pairs of `rows` and gold rows equal on every given column (None: more than `limit` pairs)."""
    p_codes = p_codes[:, rows]
    valid_p = (p_codes >= 0).all(axis=0)
    valid_g = (g_codes >= 0).all(axis=0)
    rows, p_codes = rows[valid_p], p_codes[:, valid_p]
    g_index = np.nonzero(valid_g)[0]
    keys = _row_keys(np.concatenate([p_codes, g_codes[:, g_index]], axis=1))
    p_keys, g_keys = keys[: len(rows)], keys[len(rows) :]
    order = np.argsort(g_keys, kind="stable")
    g_order, sorted_keys = g_index[order], g_keys[order]
    lo = np.searchsorted(sorted_keys, p_keys, side="left")
    hi = np.searchsorted(sorted_keys, p_keys, side="right")
    counts = hi - lo
    total = int(counts.sum())
    if limit is not None and total > limit:
        return None
    i = np.repeat(rows, counts)
    offsets = np.repeat(lo - np.concatenate([[0], np.cumsum(counts)[:-1]]), counts)
    j = g_order[np.arange(total) + offsets]
    return i.astype(np.int64), j.astype(np.int64)


def _row_keys(codes: np.ndarray) -> np.ndarray:
    """One integer per column of `codes` (non-negative), equal exactly when the columns are equal."""
    radices = codes.max(axis=1, initial=0).astype(np.int64) + 1
    if np.prod(radices.astype(np.float64)) >= 2.0**62:
        return np.unique(codes, axis=1, return_inverse=True)[1].reshape(-1)
    keys = np.zeros(codes.shape[1], dtype=np.int64)
    for row, radix in zip(codes, radices.tolist(), strict=True):
        keys *= radix
        keys += row
    return keys


def _unique_pairs(found: list[tuple[np.ndarray, np.ndarray]], m: int) -> tuple[np.ndarray, np.ndarray]:
    if not found:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    flat = np.concatenate([i.astype(np.int64) * m + j for i, j in found])
    flat.sort()  # then drop repeats: several times faster than np.unique's hashing on these sizes
    if len(flat):
        flat = flat[np.concatenate([[True], flat[1:] != flat[:-1]])]
    return flat // m, flat % m
